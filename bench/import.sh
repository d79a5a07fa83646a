#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/import.sh: `trainimg import dockerd://IMG` against enroot's pipeline
# reproduced by hand (docker create + docker export | tar -px into a temp dir
# + enroot's fixperms + mksquashfs TREE OUT -all-root -processors N) and
# against mksquashfs alone on the pre-extracted tree, with the same
# compressor settings on both sides: enroot's `-comp lzo -noD`, then zstd
# level 3 with 1 MiB blocks. Also `docker export > /dev/null` (the I/O limit).
# Prints medians of --runs runs, ratios, MB/s and trainimg's peak RSS.
#
# usage: bench/import.sh [--files N] [--mb M] [--runs R] [--bin PATH] [--image NAME] [--keep]
#   --files  small text files in deep trees (default 100000)
#   --mb     MiB of large files, half compressible text, half random (default 2048)
#   --image  use this image if it exists, else generate it under this name and
#            keep it (to run the bench again without generating; without it the
#            generated image is removed at the end; --runs 0 only makes it)
# Needs dockerd, mksquashfs, GNU time, root (tar -p). Uses $TMPDIR (default /tmp).
set -euo pipefail

files=100000 mb=2048 runs=3 keep=0 image=""
bin="$(dirname "$0")/../build/trainimg"
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files="$2"; shift 2 ;;
    --mb) mb="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --image) image="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--files N] [--mb M] [--runs R] [--bin PATH] [--image NAME] [--keep]" >&2; exit 2 ;;
  esac
done
bin="$(readlink -f "$bin")"
[ -x "$bin" ] || { echo "bench/import.sh: no trainimg binary at $bin (use --bin)" >&2; exit 2; }
procs="$(nproc)"
work="$(mktemp -d "${TMPDIR:-/tmp}/trainimg-bench-XXXXXX")"
keep_image=1
[ -n "$image" ] || { image="trainimg-bench:$$"; keep_image=0; }
cleanup() {
  [ "$keep_image" = 1 ] || docker rmi -f "$image" >/dev/null 2>&1 || :
  [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

generate() {
echo "== generating: $files small files, $mb MiB of large files (work dir $work)" >&2
root="$work/root"
mkdir -p "$root/small" "$root/big" "$root/bin"
cp /usr/bin/busybox "$root/bin/" 2>/dev/null || :
# Small text files in trees 8 levels deep, 100 files per leaf directory.
i=0
while [ "$i" -lt "$files" ]; do
  d="$root/small/$((i / 100000))/$((i / 10000 % 10))/$((i / 1000 % 10))/$((i / 100 % 10))/a/b/c/d"
  mkdir -p "$d"
  for j in $(seq 0 99); do printf 'file %d line of text %d\n' "$((i + j))" "$j" > "$d/f$j.txt"; done
  i=$((i + 100))
done
half=$((mb / 2))
# Compressible: repeated text; incompressible: random; in 64 MiB files.
n=0
while [ $((n * 64)) -lt "$half" ]; do
  { yes "compressible line $n of the bench image, the same words again and again" || :; } | head -c $((64 << 20)) > "$root/big/text$n" || :
  head -c $((64 << 20)) /dev/urandom > "$root/big/random$n"
  n=$((n + 1))
done
# Hard links: every text file once more under another name.
for f in "$root"/big/text*; do ln "$f" "$f.link"; done
tar -C "$root" -c . | docker import -c 'CMD ["/bin/busybox","sh"]' - "$image" >/dev/null
rm -rf "$root"
}
if docker image inspect "$image" >/dev/null 2>&1; then
  echo "== using the existing image $image" >&2
else
  generate
fi
[ "$runs" -gt 0 ] || exit 0  # --runs 0 --image NAME: only make the image

# time_cmd NAME CMD...: seconds (wall) and peak RSS (KiB) appended to $work/NAME.
time_cmd() {
  local name="$1"; shift
  /usr/bin/time -f '%e %M' -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/t" >> "$work/$name"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

pipeline() {  # enroot's dockerd import, by hand; $1.. = mksquashfs compressor flags
  local tree="$work/tree" out="$work/p.sqsh" cid
  rm -rf "$tree" "$out"; mkdir "$tree"
  cid=$(docker create "$image")
  docker export "$cid" | tar -C "$tree" --warning=no-timestamp --anchored --exclude='dev/*' --exclude='.dockerenv' -px
  docker rm "$cid" >/dev/null
  chmod -f -R u+rX "$tree" || :
  find "$tree" -maxdepth 15 -type d ! -perm -u=w -exec chmod -f u+w {} \+ || :
  mksquashfs "$tree" "$out" -all-root -processors "$procs" -noappend -no-progress "$@"
}
export -f pipeline
export work image procs

extract_tree() {
  local cid
  rm -rf "$work/pre"; mkdir "$work/pre"
  cid=$(docker create "$image")
  docker export "$cid" | tar -C "$work/pre" --warning=no-timestamp --anchored --exclude='dev/*' --exclude='.dockerenv' -px
  docker rm "$cid" >/dev/null
}
extract_tree
count=$(find "$work/pre" | wc -l)
bytes=$(du -sb "$work/pre" | cut -f1)
echo "== image: $count entries, $((bytes >> 20)) MiB (as extracted)" >&2

for r in $(seq 1 "$runs"); do
  echo "== run $r/$runs" >&2
  cid=$(docker create "$image")
  time_cmd export sh -c "docker export $cid > /dev/null"
  docker rm "$cid" >/dev/null
  rm -f "$work"/t*.sqsh*
  time_cmd ti_lzo "$bin" import "dockerd://$image" -o "$work/t1.sqsh" --enroot-defaults --progress none
  time_cmd pl_lzo bash -c 'pipeline -comp lzo -noD'
  time_cmd mk_lzo mksquashfs "$work/pre" "$work/m.sqsh" -all-root -processors "$procs" -noappend -no-progress -comp lzo -noD
  time_cmd ti_zstd "$bin" import "dockerd://$image" -o "$work/t2.sqsh" --compression zstd --level 3 --block-size 1M --progress none
  time_cmd pl_zstd bash -c 'pipeline -comp zstd -Xcompression-level 3 -b 1M'
  time_cmd mk_zstd mksquashfs "$work/pre" "$work/m.sqsh" -all-root -processors "$procs" -noappend -no-progress -comp zstd -Xcompression-level 3 -b 1M
done

mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / 1048576 / s }'; }
col() { cut -d' ' -f"$2" "$work/$1" | median; }
printf '%-34s %9s %8s %9s\n' "(medians of $runs; $procs cores)" "wall s" "MB/s" "peak RSS"
for row in export ti_lzo pl_lzo mk_lzo ti_zstd pl_zstd mk_zstd; do
  s=$(col "$row" 1); k=$(col "$row" 2)
  case "$row" in
    export) label="docker export > /dev/null" ;;
    ti_lzo) label="trainimg import --enroot-defaults" ;;
    pl_lzo) label="enroot pipeline (lzo -noD)" ;;
    mk_lzo) label="mksquashfs alone (lzo -noD)" ;;
    ti_zstd) label="trainimg import (zstd 3, 1M)" ;;
    pl_zstd) label="enroot pipeline (zstd 3, 1M)" ;;
    mk_zstd) label="mksquashfs alone (zstd 3, 1M)" ;;
  esac
  printf '%-34s %9s %8s %8s MiB\n' "$label" "$s" "$(mbps "$s")" "$((k / 1024))"
done
ratio() { awk -v a="$(col "$1" 1)" -v b="$(col "$2" 1)" 'BEGIN { printf "%.2f", a / b }'; }
echo "ratios: lzo  trainimg/pipeline $(ratio ti_lzo pl_lzo)  trainimg/mksquashfs $(ratio ti_lzo mk_lzo)"
echo "        zstd trainimg/pipeline $(ratio ti_zstd pl_zstd)  trainimg/mksquashfs $(ratio ti_zstd mk_zstd)"
echo "temporary disk: trainimg 0 bytes besides the output's partial file; pipeline $((bytes >> 20)) MiB (the tree)"
