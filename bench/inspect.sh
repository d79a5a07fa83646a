#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 4 benchmark: `trainimg inspect` of one large NGC-like image, as a
# .sqsh and as a docker archive, side by side with the tools that only list
# the same files: `unsquashfs -l X.sqsh` and `tar -tf` of every layer tar.
# Medians of 5 runs after one warm-up (wall, cpu = user + sys) and the
# largest peak RSS (GNU /usr/bin/time). Not a timed test: it prints figures.
#
#   bench/inspect.sh [FILES] [BYTES]    defaults: 220000 files, 4.5 GiB
#                                       (after whiteouts: >= 200k, >= 4 GiB)
#   bench/inspect.sh 20000 400000000    a quick check
#   BUILD=dir   build tree whose trainimg is timed (default: build, built if
#               missing); TMPDIR: where the image goes (about 3x BYTES);
#               FLATDIR: where the flattened tree is written for mksquashfs
#               (default /dev/shm, about BYTES, removed once squashed);
#               KEEP=dir: generate the image there once and reuse it;
#               GEN_ONLY=1: only generate (with KEEP, for a later run)
#
# The image: 5 layers (base OS, CUDA, Python packages, /opt, a cleanup layer
# with whiteouts and an opaque directory), deep trees under /usr/local/...
# and /opt/..., 30% of the bytes in small files and 70% in large libraries.
# Layers are written by bench/inspect_gen.py (pax format, as docker save's Go
# writer for long names) uncompressed into a docker archive by GNU tar
# (docker 25+ layout: manifest.json, blobs/sha256/…); the .sqsh is
# mksquashfs of the flattened tree with enroot's options (-comp lzo -noD).
# Removed at exit unless KEEP is set.
set -euo pipefail

files=${1:-220000}
bytes=${2:-4831838208}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
runs=5

work=$(mktemp -d "${TMPDIR:-/tmp}/inspect-bench.XXXXXX")
flat=
trap 'rm -rf "$work" ${flat:+"$flat"}' EXIT

# --- the image --------------------------------------------------------------
# $img/layers/*.tar, $img/image.tar, $img/image.sqsh, $img/stats
generate() {
  local img=$1
  flat=$(mktemp -d "${FLATDIR:-/dev/shm}/inspect-bench-flat.XXXXXX")
  mkdir -p "$img/layers" "$img/archive/blobs/sha256"
  python3 "$src/bench/inspect_gen.py" "$img/layers" "$flat" "$files" "$bytes" >"$img/gen.out"
  local diff_ids=() layers=()
  while read -r hex path; do
    [ -f "$path" ] || continue
    ln -s "$path" "$img/archive/blobs/sha256/$hex"
    diff_ids+=("\"sha256:$hex\"") layers+=("\"blobs/sha256/$hex\"")
  done <"$img/gen.out"
  join() { local IFS=,; echo "$*"; }
  printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/bin:/usr/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":[%s]}}' \
    "$(join "${diff_ids[@]}")" >"$img/config.json"
  local cfg
  cfg=$(sha256sum "$img/config.json" | cut -d' ' -f1)
  mv "$img/config.json" "$img/archive/blobs/sha256/$cfg"
  printf '[{"Config":"blobs/sha256/%s","RepoTags":["bench:latest"],"Layers":[%s]}]' "$cfg" "$(join "${layers[@]}")" \
    >"$img/archive/manifest.json"
  # -h: the layer blobs are symlinks to the layer files (kept for `tar -tf`).
  (cd "$img/archive" && tar --format=posix --owner=0 --group=0 --numeric-owner -hcf "$img/image.tar" manifest.json blobs)
  mksquashfs "$flat" "$img/image.sqsh" -comp lzo -noD -no-progress -quiet >/dev/null
  rm -rf "$flat"
  local entries=0
  for f in "$img"/layers/*.tar; do entries=$((entries + $(tar -tf "$f" | wc -l))); done
  echo "$(tail -1 "$img/gen.out") $entries" >"$img/stats"
}

if [ -n "${KEEP:-}" ]; then
  img=$KEEP # generated once, reused by later runs (never removed)
  mkdir -p "$img"
else
  img=$work/image
  mkdir -p "$img"
fi
if [ ! -s "$img/stats" ]; then
  t0=$(date +%s)
  generate "$img"
  echo "image generated in $(($(date +%s) - t0)) s" >&2
fi
read -r flat_files flat_bytes tar_entries <"$img/stats"
img_tar=$img/image.tar img_sqsh=$img/image.sqsh
layer_files=("$img"/layers/*.tar)
[ "${GEN_ONLY:-0}" = 1 ] && exit 0
bin=$build/trainimg
[ -x "$bin" ] || { cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$build" --target trainimg >/dev/null; }

# --- measuring --------------------------------------------------------------
. "$(dirname "$0")/lib.sh"  # measure
list_layers() { for f in "$@"; do tar -tf "$f"; done; }
export -f list_layers

measure_all() {
  read -r us_w us_c us_m < <(measure unsquashfs -l "$img_sqsh")
  read -r is_w is_c is_m < <(measure "$bin" inspect "$img_sqsh" --fail-on never)
  read -r tl_w tl_c tl_m < <(measure bash -c 'list_layers "$@"' _ "${layer_files[@]}")
  read -r to_w to_c to_m < <(measure tar -tf "$img_tar")
  read -r id_w id_c id_m < <(measure "$bin" inspect "docker-archive:$img_tar" --fail-on never)
  load=$(cut -d' ' -f1 /proc/loadavg)
}
# One benchmark at a time on the shared machine.
exec 9>"${BENCH_LOCK:-/work/bench.lock}"
flock 9
measure_all
flock -u 9

# --- the table --------------------------------------------------------------
printf '\nimage: %s layers, %s tar entries in the layers; flattened %s files, %s bytes of file data\n' \
  "${#layer_files[@]}" "$tar_entries" "$flat_files" "$flat_bytes"
printf 'docker archive %s bytes, .sqsh %s bytes; %s runs (median), load average at the end %s\n\n' \
  "$(stat -c %s "$img_tar")" "$(stat -c %s "$img_sqsh")" "$runs" "$load"
ratio() { echo "$1 / $2" | bc -l; }
printf '%-44s %8s %8s %9s %7s %7s\n' command wall_s cpu_s rss_MiB wall_x cpu_x
row() { printf '%-44s %8s %8s %9s %7.2f %7.2f\n' "$1" "$2" "$3" "$4" "$(ratio "$2" "$5")" "$(ratio "$3" "$6")"; }
row "unsquashfs -l X.sqsh" "$us_w" "$us_c" "$us_m" "$us_w" "$us_c"
row "trainimg inspect X.sqsh" "$is_w" "$is_c" "$is_m" "$us_w" "$us_c"
row "tar -tf each layer (${#layer_files[@]} files)" "$tl_w" "$tl_c" "$tl_m" "$tl_w" "$tl_c"
row "tar -tf X.tar (outer, layers seeked over)" "$to_w" "$to_c" "$to_m" "$tl_w" "$tl_c"
row "trainimg inspect docker-archive:X.tar" "$id_w" "$id_c" "$id_m" "$tl_w" "$tl_c"
verdict() { [ "$(echo "$1 <= $2" | bc -l)" = 1 ] && echo met || echo MISSED; }
printf '\nsqsh: wall %.2fx unsquashfs -l (target <= 1.5x): %s; peak RSS %s MiB (target <= 64 MB): %s\n' \
  "$(ratio "$is_w" "$us_w")" "$(verdict "$(ratio "$is_w" "$us_w")" 1.5)" "$is_m" "$(verdict "$is_m" 61)"
printf 'docker-archive: wall %.2fx tar -tf of all layers (target <= 1.2x): %s (cpu %.2fx)\n' \
  "$(ratio "$id_w" "$tl_w")" "$(verdict "$(ratio "$id_w" "$tl_w")" 1.2)" "$(ratio "$id_c" "$tl_c")"
