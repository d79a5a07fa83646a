#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/incremental.sh: block reuse (docs/import.md, "Block reuse"). Generates
# an image A (bench/image_gen.py: --files, --mb, --layers) and its rebuild B
# (A's layers plus a top layer of --add-files/--add-mb that also changes
# --change files of A's top layer), imports A once, then imports B cold and
# with `--reuse A.sqsh`, alternately, --runs times each (fresh blob cache and
# output every run), and prints the medians side by side with their ratio,
# the bytes B's reused import downloaded against B's new layer, and whether
# the two outputs are sqfsdiff-equal.
#   --source registry (default): docker:// from the local registry of
#     .ci/start-registry.sh (127.0.0.1:5500), both images pushed with skopeo;
#   --source oci: the OCI layouts themselves (a machine without a registry).
# --work DIR keeps the generated images and A.sqsh for the next run; --runs 0
# with --scale runs only the scale pair (SCALE_RUNS times, default 1).
# Also: --jobs N for every import (a cap of N threads at work; default 0: no
# cap, threads for every CPU the process may use) and, with --scale, B's cold
# import with --jobs 2 and with --jobs N (N = nproc for 0), alternately.
# usage: bench/incremental.sh [--files N] [--mb M] [--layers L] [--big-mb B] [--add-files F] [--add-mb A]
#          [--change C] [--runs R] [--jobs N] [--source registry|oci] [--scale] [--bin PATH] [--work DIR]
set -euo pipefail
files=68000 mb=1200 layers=4 big=256 add_files=2000 add_mb=50 change=100 runs=5 jobs=0 source=registry scale=0
bin="$(dirname "$0")/../build/trainimg" work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files="$2"; shift 2 ;;
    --mb) mb="$2"; shift 2 ;;
    --layers) layers="$2"; shift 2 ;;
    --big-mb) big="$2"; shift 2 ;;
    --add-files) add_files="$2"; shift 2 ;;
    --add-mb) add_mb="$2"; shift 2 ;;
    --change) change="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --source) source="$2"; shift 2 ;;
    --scale) scale=1; shift ;;
    --bin) bin="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) sed -n '3,21p' "$0" >&2; exit 2 ;;
  esac
done
bin="$(readlink -f "$bin")"
[ -x "$bin" ] || { echo "bench/incremental.sh: no trainimg binary at $bin (use --bin)" >&2; exit 2; }
if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/trainimg-bench-incr-XXXXXX")"
  trap 'rm -rf "$work"' EXIT
fi
here="$(cd "$(dirname "$0")" && pwd)"
# A --work DIR that already holds the images (an earlier run) keeps them.
made=0
if [ -f "$work/b/index.json" ] && [ -f "$work/a/index.json" ]; then
  echo "using the images in $work"
else
  made=1
  t0=$(date +%s)
  python3 "$here/image_gen.py" "$work/a" --files "$files" --mb "$mb" --layers "$layers" --big-mb "$big" \
    --rebuild "$work/b" --add-files "$add_files" --add-mb "$add_mb" --change "$change" --tag 1
  echo "generated in $(( $(date +%s) - t0 )) s"
  rm -f "$work/a.sqsh"*
fi
if [ "$source" = registry ]; then
  curl -s -o /dev/null http://127.0.0.1:5500/v2/ || { echo "bench/incremental.sh: run .ci/start-registry.sh first" >&2; exit 2; }
  export TRAINIMG_ALLOW_HTTP=1 no_proxy=127.0.0.1
  skopeo copy --quiet --dest-tls-verify=false "oci:$work/a:1" docker://127.0.0.1:5500/bench/incremental:a
  skopeo copy --quiet --dest-tls-verify=false "oci:$work/b:1" docker://127.0.0.1:5500/bench/incremental:b
  src_a="docker://127.0.0.1:5500#bench/incremental:a" src_b="docker://127.0.0.1:5500#bench/incremental:b"
else
  src_a="oci:$work/a:1" src_b="oci:$work/b:1"
fi
imp() { "$bin" import "$@" --no-inspect --progress json; }
fresh='rm -rf "$work/cache" "$work/out.sqsh"*'
if [ ! -f "$work/a.sqsh.index" ]; then
  t0=$(date +%s)
  imp "$src_a" -o "$work/a.sqsh" --cache "$work/cache-a" --jobs "$jobs" 2>/dev/null >/dev/null
  echo "imported A in $(( $(date +%s) - t0 )) s"
fi
rm -rf "$work/cache-a"

# "MEDIAN_A MEDIAN_B" of two commands run alternately (A B A B …), a fresh
# cache and output before each; each side's peak RSS (KiB, the largest of its
# runs) in $work/rss-a, $work/rss-b; the last outputs kept as side-a.sqsh and
# out.sqsh. bench/timed.py times (no GNU time or bc needed).
alternate() {
  local ta=() tb=() ra=0 rb=0 t r
  for _ in $(seq 1 "$runs"); do
    eval "$fresh"; rm -f "$work/side-a.sqsh"
    python3 "$here/timed.py" "$work/t" bash -c "$1" >/dev/null 2>"$work/err-a" || { cat "$work/err-a" >&2; return 1; }
    read -r t r <"$work/t"; ta+=("$t"); [ "$r" -gt "$ra" ] && ra=$r
    mv "$work/out.sqsh" "$work/side-a.sqsh"
    eval "$fresh"
    python3 "$here/timed.py" "$work/t" bash -c "$2" >/dev/null 2>"$work/err-b" || { cat "$work/err-b" >&2; return 1; }
    read -r t r <"$work/t"; tb+=("$t"); [ "$r" -gt "$rb" ] && rb=$r
  done
  echo "$ra" >"$work/rss-a"; echo "$rb" >"$work/rss-b"
  python3 -c 'import statistics,sys; n=int(sys.argv[1]); a=list(map(float,sys.argv[2:2+n])); b=list(map(float,sys.argv[2+n:]))
print("%.2f %.2f" % (statistics.median_low(a), statistics.median_low(b)))' "$runs" "${ta[@]}" "${tb[@]}"
}
calc() { python3 -c "print('%.3f' % ($1))"; }
export bin work src_b jobs
cold_cmd='"$bin" import "$src_b" -o "$work/out.sqsh" --cache "$work/cache" --jobs "$jobs" --no-inspect --progress json'
reuse_cmd='"$bin" import "$src_b" -o "$work/out.sqsh" --cache "$work/cache" --jobs "$jobs" --no-inspect --progress json --reuse "$work/a.sqsh"'
if [ "$runs" = 0 ]; then runs=${SCALE_RUNS:-1}; skip_pair=1; else skip_pair=0; fi
[ "$skip_pair" = 1 ] || read -r t_cold t_reuse <<<"$(alternate "$cold_cmd" "$reuse_cmd")"
if [ "$skip_pair" = 0 ]; then
rss_cold=$(cat "$work/rss-a") rss_reuse=$(cat "$work/rss-b")
same="not checked (no sqfsdiff)"
if command -v sqfsdiff >/dev/null; then
  same=no
  sqfsdiff --old "$work/side-a.sqsh" --new "$work/out.sqsh" >/dev/null 2>&1 && same=yes
fi
# What the reused import fetched: its download events' total (both passes'
# largest), against the compressed size of B's new top layer.
fetched=$( (grep '"phase":"download"' "$work/err-b" || :) | sed 's/.*"total_bytes":\([0-9]*\).*/\1/' | sort -n | tail -1)
fetched=${fetched:-0}
reuse_line=$( (grep '"phase":"reuse"' "$work/err-b" || :) | sed 's/.*"reuse"://; s/}$//')
new_layer=$(python3 -c '
import json,sys
d=sys.argv[1]; i=json.load(open(d+"/index.json"))
m=json.load(open(d+"/blobs/sha256/"+i["manifests"][0]["digest"][7:]))
print(m["layers"][-1]["size"])' "$work/b")
a_bytes=$(stat -c %s "$work/a.sqsh")
echo
if [ "$made" = 1 ]; then
  echo "image A: $files files, $mb MiB in $layers layers ($((a_bytes >> 20)) MiB as .sqsh); B adds $add_files files / $add_mb MiB and changes $change"
else
  echo "images A and B kept in $work (their sizes: the run that made them); A is $((a_bytes >> 20)) MiB as .sqsh"
fi
echo "source: $source; --jobs $jobs$([ "$jobs" != 0 ] || echo ' (no cap)'); medians of $runs, alternating; $(nproc) cores"
printf '%-34s %10s %12s\n' "" "seconds" "peak RSS MiB"
printf '%-34s %10s %12s\n' "import B cold" "$t_cold" "$((rss_cold / 1024))"
printf '%-34s %10s %12s\n' "import B --reuse A.sqsh" "$t_reuse" "$((rss_reuse / 1024))"
echo "ratio reuse/cold: $(calc "$t_reuse / $t_cold")"
if [ "$source" = registry ]; then
  echo "fetched by the reused import: $fetched bytes; B's new layer: $new_layer bytes; ratio $(calc "$fetched / $new_layer")"
fi
echo "reuse: $reuse_line"
echo "sqfsdiff-equal to the cold import: $same"
fi
if [ "$scale" = 1 ]; then
  jn=$jobs
  [ "$jn" != 0 ] || jn=$(nproc)
  export jn
  j2='"$bin" import "$src_b" -o "$work/out.sqsh" --cache "$work/cache" --jobs 2 --no-inspect --progress json'
  jn_cmd='"$bin" import "$src_b" -o "$work/out.sqsh" --cache "$work/cache" --jobs "$jn" --no-inspect --progress json'
  read -r t_j2 t_jn <<<"$(alternate "$j2" "$jn_cmd")"
  echo "cold import of B: --jobs 2 $t_j2 s, --jobs $jn $t_jn s, ratio $(calc "$t_jn / $t_j2")"
fi
