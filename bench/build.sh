#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/build.sh: `trainimg build` against `docker build` (the docker CLI)
# on the same context and Dockerfile, both --no-cache and on the host
# network, offline: the base image is the fake test base
# (tests/fixtures/fake-efa-installer/make_base_image.sh, busybox + dash,
# `docker import`ed, nothing pulled). The two sides alternate within each
# run; the images are removed between runs (not timed). Prints medians of
# --runs runs and the ratio trainimg/docker (target <= 1.05).
#
# usage: bench/build.sh [--runs R] [--bin PATH] [--context-mb M] [--files N] [--keep]
#   --context-mb  MiB of random data in the build context, COPYed (default 32)
#   --files       small files written by a RUN step (default 2000)
# Needs dockerd, the docker CLI, GNU time, busybox (for the base image).
set -euo pipefail

runs=3 ctx_mb=32 files=2000 keep=0
here="$(cd "$(dirname "$0")" && pwd)"
bin="$here/../build/trainimg"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --context-mb) ctx_mb="$2"; shift 2 ;;
    --files) files="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--runs R] [--bin PATH] [--context-mb M] [--files N] [--keep]" >&2; exit 2 ;;
  esac
done
bin="$(readlink -f "$bin")"
[ -x "$bin" ] || { echo "bench/build.sh: no trainimg binary at $bin (use --bin)" >&2; exit 2; }
base="$("$here/../tests/fixtures/fake-efa-installer/make_base_image.sh")"
work="$(mktemp -d "${TMPDIR:-/tmp}/trainimg-bench-build-XXXXXX")"
tag_ti="trainimg-bench-build:ti-$$" tag_dk="trainimg-bench-build:docker-$$"
cleanup() {
  docker rmi -f "$tag_ti" "$tag_dk" >/dev/null 2>&1 || :
  [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

ctx="$work/ctx"
mkdir -p "$ctx/data/src"
head -c $((ctx_mb << 20)) /dev/urandom > "$ctx/data/blob"
for i in $(seq 1 200); do printf 'source file %d\n' "$i" > "$ctx/data/src/f$i.txt"; done
printf 'build-output\n' > "$ctx/.dockerignore"
mkdir -p "$ctx/build-output" && head -c 1048576 /dev/zero > "$ctx/build-output/ignored"
# A few RUN steps with real work (files, bytes, checksums), a COPY of the
# context, metadata-only steps; busybox sh semantics (the base's /bin/sh is dash).
cat > "$ctx/Dockerfile" <<EOF
FROM $base
COPY data /opt/data
RUN i=0; mkdir -p /opt/small; while [ \$i -lt $files ]; do echo "file \$i" > /opt/small/f\$i; i=\$((i + 1)); done
RUN dd if=/dev/zero of=/opt/zeros bs=1048576 count=64 2>/dev/null && sha256sum /opt/zeros /opt/data/blob > /opt/sums
RUN tar -C /opt -cf /opt/small.tar small && gzip -1 /opt/small.tar && ls -l /opt > /opt/listing
ENV BENCH=1 PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /opt
RUN wc -l /opt/listing /opt/sums
CMD ["/bin/sh"]
EOF

# time_cmd NAME CMD...: wall seconds appended to $work/NAME.
time_cmd() {
  local name="$1"; shift
  /usr/bin/time -f '%e' -o "$work/t" "$@" >"$work/out" 2>"$work/err" || {
    cat "$work/out" "$work/err" >&2
    exit 1
  }
  cat "$work/t" >> "$work/$name"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

for r in $(seq 1 "$runs"); do
  echo "== run $r/$runs" >&2
  docker rmi -f "$tag_ti" "$tag_dk" >/dev/null 2>&1 || :
  # Alternate which side goes first, so that neither always finds warm caches.
  if [ $((r % 2)) = 1 ]; then order="ti dk"; else order="dk ti"; fi
  for side in $order; do
    case "$side" in
      ti) time_cmd ti "$bin" build "$ctx/Dockerfile" --context "$ctx" -t "$tag_ti" --no-cache --progress none ;;
      dk) time_cmd dk docker build --network=host --no-cache -t "$tag_dk" -f "$ctx/Dockerfile" "$ctx" ;;
    esac
  done
done

# The same tree on both sides: type, mode, owner and path of every file (sizes
# differ: the Dockerfile's gzip and ls -l outputs embed build times).
for t in "$tag_ti" "$tag_dk"; do
  cid=$(docker create "$t")
  docker export "$cid" | tar -t -v --numeric-owner -f - | awk '{print $1, $2, $NF}' | sort | sha256sum | cut -c1-16 > "$work/sum.$t"
  docker rm "$cid" >/dev/null
done
same=different
cmp -s "$work/sum.$tag_ti" "$work/sum.$tag_dk" && same=same

ti=$(median < "$work/ti") dk=$(median < "$work/dk")
printf '%-44s %8s   %s\n' "(medians of $runs; $(nproc) cores)" "wall s" "all runs"
printf '%-44s %8s   %s\n' "trainimg build --no-cache" "$ti" "$(tr '\n' ' ' < "$work/ti")"
printf '%-44s %8s   %s\n' "docker build --network=host --no-cache" "$dk" "$(tr '\n' ' ' < "$work/dk")"
echo "ratio trainimg/docker: $(awk -v a="$ti" -v b="$dk" 'BEGIN { printf "%.3f", a / b }') (target <= 1.05);" \
  "file trees (type, mode, owner, path) of the two images: $same"
