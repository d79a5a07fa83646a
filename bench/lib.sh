#!/usr/bin/env bash
# Sourced by the bench scripts: what several of them share.

# measure CMD...: one warm-up, then $runs runs (the caller's variable; $work
# is its scratch directory); prints "median_wall_s median_cpu_s max_rss_mib"
# (cpu = user + sys: the machines are shared, so wall time carries other
# people's load and cpu time less of it).
measure() {
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
  local walls=() cpus=() rss=0 e u s m
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>&1
    read -r e u s m <"$work/time"
    walls+=("$e")
    cpus+=("$(printf %.2f "$(echo "$u + $s" | bc -l)")")
    ((m > rss)) && rss=$m
  done
  local mid=$(((runs + 1) / 2))
  printf '%s %s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "${mid}p")" \
    "$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "${mid}p")" "$((rss / 1024))"
}

# image_args SCRIPT ARGS...: the flags of the benches that push a dockerd
# image (--image NAME, --runs N, --bin PATH); sets image, runs (default 3)
# and bin (default build/trainimg); exits 2 on anything else or without
# --image.
image_args() {
  local me=$1
  shift
  runs=3 image="" bin="$(dirname "$0")/../build/trainimg"
  while [ $# -gt 0 ]; do
    case "$1" in
      --image) image="$2"; shift 2 ;;
      --runs) runs="$2"; shift 2 ;;
      --bin) bin="$2"; shift 2 ;;
      *) echo "usage: $me --image NAME [--runs N] [--bin PATH]" >&2; exit 2 ;;
    esac
  done
  [ -n "$image" ] || { echo "$me: --image NAME (a dockerd image) is required" >&2; exit 2; }
}
