#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/registry.sh: docker:// against the local registry of
# .ci/start-registry.sh (127.0.0.1:5500, plain HTTP), side by side, medians of
# --runs runs (wall seconds):
#   skopeo copy docker://… oci:DIR (pull alone); that pull + trainimg inspect oci:DIR;
#   trainimg inspect docker://… (cold cache); trainimg import docker://… cold and warm;
#   trainimg import dockerd://… of the same image; docker export of it to
#   /dev/null (the daemon's own floor); enroot import docker://… (cold: its
#   cache emptied each run) when enroot is on PATH (else said to be skipped). Then the peak RSS (/usr/bin/time
#   %M) of one cold inspect docker:// and one cold import docker://, and the
#   ratios the issue sets targets for. The two sides of a ratio the issue sets
#   a target for (cold and warm; dockerd:// and docker export) run alternately.
# The image is a dockerd image (--image NAME, e.g. one bench/import.sh --image
# kept), pushed to the registry with skopeo (gzip layers, as skopeo pushes them).
# usage: bench/registry.sh --image NAME [--runs R] [--bin PATH]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
image_args bench/registry.sh "$@"
bin="$(readlink -f "$bin")"
curl -s -o /dev/null http://127.0.0.1:5500/v2/ || { echo "bench/registry.sh: run .ci/start-registry.sh first" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/trainimg-bench-registry-XXXXXX")"
trap 'rm -rf "$work"' EXIT
export TRAINIMG_ALLOW_HTTP=1 ENROOT_ALLOW_HTTP=1 no_proxy=127.0.0.1
ref="127.0.0.1:5500/bench/${image//[:\/]/-}:1"
skopeo copy --quiet --dest-tls-verify=false "docker-daemon:$image" "docker://$ref"

# median of the wall times of running "$@" $runs times; $before runs (untimed) first each time.
median() {
  local ts=() before="$1"; shift
  for _ in $(seq 1 "$runs"); do
    eval "$before"
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
    t1=$(date +%s.%N)
    ts+=("$(echo "$t1 - $t0" | bc)")
  done
  printf '%.2f\n' "$(printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")"
}
# "MEDIAN_A MEDIAN_B" of two commands run alternately, A B A B … ($runs each),
# so that a drift of this noisy machine during the runs moves both sides of a
# ratio alike. Arguments: BEFORE_A A BEFORE_B B, strings for eval; a BEFORE
# runs untimed right before its command.
alternate() {
  local ta=() tb=() t0 t1
  for _ in $(seq 1 "$runs"); do
    eval "$1"; t0=$(date +%s.%N); eval "$2" >/dev/null 2>&1 || { echo "failed: $2" >&2; return 1; }; t1=$(date +%s.%N)
    ta+=("$(echo "$t1 - $t0" | bc)")
    eval "$3"; t0=$(date +%s.%N); eval "$4" >/dev/null 2>&1 || { echo "failed: $4" >&2; return 1; }; t1=$(date +%s.%N)
    tb+=("$(echo "$t1 - $t0" | bc)")
  done
  local mid=$(( (runs + 1) / 2 ))
  printf '%.2f %.2f\n' "$(printf '%s\n' "${ta[@]}" | sort -n | sed -n "${mid}p")" \
    "$(printf '%s\n' "${tb[@]}" | sort -n | sed -n "${mid}p")"
}
pull() { rm -rf "$work/oci"; skopeo copy --quiet --src-tls-verify=false "docker://$ref" "oci:$work/oci:1"; }
pull_inspect() { pull && "$bin" inspect "oci:$work/oci:1" --fail-on never; }
cold='rm -rf "$work/cache" "$work/x.sqsh"*'
warm='rm -f "$work/x.sqsh"*'
t_pull=$(median "" pull)
t_pull_inspect=$(median "" pull_inspect)
t_inspect=$(median "$cold" "$bin" inspect "docker://$ref" --cache "$work/cache" --fail-on never)
# Cold then warm (the cold run fills the cache the warm one reads), alternately.
pair=$(alternate "$cold" '"$bin" import "docker://$ref" --cache "$work/cache" -o "$work/x.sqsh" --progress none' \
  "$warm" '"$bin" import "docker://$ref" --cache "$work/cache" -o "$work/x.sqsh" --progress none')
read -r t_cold t_warm <<<"$pair"
export_null() { local c; c=$(docker create "$image" true); docker export "$c" >/dev/null; docker rm "$c" >/dev/null; }
pair=$(alternate "$warm" '"$bin" import "dockerd://$image" -o "$work/x.sqsh" --progress none' "" export_null)
read -r t_dockerd t_export <<<"$pair"
# peak RSS (KiB) of one run of "$@" after $before
peak() {
  local before="$1"; shift
  eval "$before"
  /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
  cat "$work/rss"
}
rss_inspect=$(peak "$cold" "$bin" inspect "docker://$ref" --cache "$work/cache" --fail-on never)
rss_import=$(peak "$cold" "$bin" import "docker://$ref" --cache "$work/cache" -o "$work/x.sqsh" --progress none)
files=$(docker run --rm --network=host --entrypoint /bin/busybox "$image" find / -xdev 2>/dev/null | wc -l || echo "?")
if command -v enroot >/dev/null; then
  # Cold, like trainimg's cold import: enroot's own layer cache emptied each time.
  export ENROOT_CACHE_PATH="$work/enroot/cache" ENROOT_DATA_PATH="$work/enroot/data" \
    ENROOT_RUNTIME_PATH="$work/enroot/run" ENROOT_TEMP_PATH="$work/enroot/tmp"
  enroot_cold='rm -rf "$work/enroot" "$work/x.sqsh"*; mkdir -p "$work/enroot/cache" "$work/enroot/data" "$work/enroot/run" "$work/enroot/tmp"'
  t_enroot=$(median "$enroot_cold" enroot import -o "$work/x.sqsh" "docker://${ref/\//#}")
else
  t_enroot="skipped (enroot not installed)"
fi
printf '%-44s %s\n' "skopeo copy docker:// oci: (pull)" "$t_pull" \
  "pull + trainimg inspect oci:" "$t_pull_inspect" \
  "trainimg inspect docker:// (cold cache)" "$t_inspect" \
  "trainimg import docker:// (cold cache)" "$t_cold" \
  "trainimg import docker:// (warm cache)" "$t_warm" \
  "trainimg import dockerd://" "$t_dockerd" \
  "enroot import docker://" "$t_enroot" \
  "docker export > /dev/null" "$t_export"
ratio() { echo "scale=2; $1 / $2" | bc; }
printf '%-44s %s\n' "entries in the image (find / -xdev)" "$files" \
  "peak RSS inspect docker:// (MiB)" "$((rss_inspect / 1024))" \
  "peak RSS import docker:// (MiB)" "$((rss_import / 1024))" \
  "cold import / import dockerd://" "$(ratio "$t_cold" "$t_dockerd")" \
  "import dockerd:// / docker export" "$(ratio "$t_dockerd" "$t_export")" \
  "warm import / cold import" "$(ratio "$t_warm" "$t_cold")" \
  "inspect docker:// / pull + inspect oci:" "$(ratio "$t_inspect" "$t_pull_inspect")"
case "$t_enroot" in
  skipped*) ;;
  *) printf '%-44s %s\n' "cold import / enroot import docker://" "$(ratio "$t_cold" "$t_enroot")" ;;
esac
