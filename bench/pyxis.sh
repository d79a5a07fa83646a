#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/pyxis.sh: a job's start on the real Slurm + Pyxis + Enroot stack of
# .ci/start-pyxis.sh, side by side: the time from `srun` to the task's first
# line of output (`srun -u -w pyxis1 --container-image=IMG echo up`), for
#   trainimg  importer=trainimg (the shared cache), cold (no .sqsh entry, no
#             blobs) and warm (the entry is there)
#   builtin   Pyxis without importer= (`enroot import` + `enroot create`),
#             cold (Enroot's layer cache emptied) and warm (layers cached)
#   sqsh      --container-image=/path/to/the/entry.sqsh (`enroot create` alone)
# Medians of --runs runs; the two sides of a ratio run alternately (A B A B)
# so that a drift of this noisy machine moves both alike. Ratios: cold
# trainimg / cold builtin (target <= 0.35) and warm trainimg / sqsh (<= 1.2).
# The image is a dockerd image (--image NAME, e.g. the one
# `bench/import.sh --files 65000 --mb 1100 --runs 0 --image trainimg-bench:reg`
# makes), pushed to the test registry with skopeo as bench/registry.sh does.
# The binary (--bin) is installed where the cluster's importer wrapper runs it.
# usage: bench/pyxis.sh --image NAME [--runs N] [--bin PATH]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
image_args bench/pyxis.sh "$@"
here=$(cd "$(dirname "$0")/.." && pwd)
state=${TRAINIMG_PYXIS_STATE:-/tmp/trainimg-ci-pyxis.env}
[ -f "$state" ] || { echo "bench/pyxis.sh: run .ci/start-pyxis.sh first (no $state)" >&2; exit 2; }
curl -s -o /dev/null http://127.0.0.1:5500/v2/ || { echo "bench/pyxis.sh: run .ci/start-registry.sh first" >&2; exit 2; }
SLURM_CONF=$(sed -n 's/^SLURM_CONF=//p' "$state")
dir=$(sed -n 's/^TRAINIMG_PYXIS_DIR=//p' "$state")
export SLURM_CONF
bin=$(readlink -f "$bin")
install -m 0755 "$bin" "$dir/bin/trainimg.new" && mv "$dir/bin/trainimg.new" "$dir/bin/trainimg"
mode() { "$here/.ci/start-pyxis.sh" mode "$1" >/dev/null; }
trap 'mode importer' EXIT

# Pyxis starts the container through /bin/sh (and the task through
# /etc/rc): bench/import.sh's image has only /bin/busybox, so one small layer
# adds busybox's links.
derived="trainimg-bench-pyxis:${image//[:\/]/-}"
if ! docker image inspect "$derived" >/dev/null 2>&1; then
  ctx=$(mktemp -d)
  printf 'FROM %s\nRUN ["/bin/busybox","--install","-s","/bin"]\n' "$image" >"$ctx/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q --network=host -t "$derived" "$ctx" >/dev/null 2>&1
  rm -rf "$ctx"
fi
repo="bench/pyxis-${image//[:\/]/-}:1"
echo "== pushing $derived to 127.0.0.1:5500/$repo" >&2
skopeo copy --quiet --dest-tls-verify=false "docker-daemon:$derived" "docker://127.0.0.1:5500/$repo"
digest=$(skopeo inspect --tls-verify=false --format '{{.Digest}}' "docker://127.0.0.1:5500/$repo")
ref="127.0.0.1:5500#$repo"
entry="$dir/cache/sha256-${digest#sha256:}-zstd3-1M.sqsh"

# Seconds from srun's start to the task's first line; the rest of srun
# (slurmd's ~3 s wait after the task, the cleanup) is waited for, untimed.
first_line() {
  local t0 t1 out
  t0=$(date +%s.%N)
  out=$(mktemp)
  srun -u -w pyxis1 -J trainimg-bench-pyxis -t 30 --container-image="$1" echo up 2>"$out.err" |
    { read -r line && [ "$line" = up ] && date +%s.%N >"$out"; cat >/dev/null; }
  t1=$(cat "$out")
  rm -f "$out"
  [ -n "$t1" ] || { echo "bench/pyxis.sh: no output from the job ($1):" >&2; cat "$out.err" >&2; rm -f "$out.err"; return 1; }
  rm -f "$out.err"
  echo "$t1 - $t0" | bc
}
median() { printf '%.2f' "$(printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p")"; }
cold_trainimg() { mode importer; rm -rf "$dir/cache"/*"${digest#sha256:}"* "$dir/blobcache"/*; }
cold_builtin() { mode builtin; rm -rf "$dir"/enroot/pyxis1/cache/user-0/*; }

declare -a tc bc tw bw sq
echo "== cold: trainimg and built-in alternately ($runs runs each)" >&2
for i in $(seq 1 "$runs"); do
  cold_trainimg; tc+=("$(first_line "$ref")")
  cold_builtin; bc+=("$(first_line "$ref")")
  echo "   run $i: trainimg ${tc[-1]} s, built-in ${bc[-1]} s" >&2
done
echo "== warm: trainimg and a plain .sqsh alternately; built-in warm ($runs runs each)" >&2
mode importer; first_line "$ref" >/dev/null  # the entry
cp "$entry" "$dir/bench-plain.sqsh"
for i in $(seq 1 "$runs"); do
  mode importer; tw+=("$(first_line "$ref")")
  sq+=("$(first_line "$dir/bench-plain.sqsh")")
  mode builtin; bw+=("$(first_line "$ref")")
  echo "   run $i: trainimg ${tw[-1]} s, .sqsh ${sq[-1]} s, built-in ${bw[-1]} s" >&2
done
rm -f "$dir/bench-plain.sqsh"
mode importer

files=$(unsquashfs -lls "$entry" 2>/dev/null | wc -l)
printf '\nimage %s: %s entries, %s MiB as .sqsh (zstd 3, 1 MiB); medians of %s runs, seconds from srun to the first line\n' \
  "$image" "$files" "$(( $(stat -c %s "$entry") >> 20 ))" "$runs"
printf '| %-34s | %7s | %7s |\n' "" cold warm
printf '| %-34s | %7s | %7s |\n' "----------------------------------" "------:" "------:"
printf '| %-34s | %7s | %7s |\n' "importer=trainimg (shared cache)" "$(median "${tc[@]}")" "$(median "${tw[@]}")"
printf '| %-34s | %7s | %7s |\n' "built-in enroot import" "$(median "${bc[@]}")" "$(median "${bw[@]}")"
printf '| %-34s | %7s | %7s |\n' "--container-image=PATH.sqsh" "" "$(median "${sq[@]}")"
printf '\ncold trainimg / cold built-in: %.2f (target <= 0.35)\n' "$(echo "$(median "${tc[@]}") / $(median "${bc[@]}")" | bc -l)"
printf 'warm trainimg / plain .sqsh:   %.2f (target <= 1.2)\n' "$(echo "$(median "${tw[@]}") / $(median "${sq[@]}")" | bc -l)"
