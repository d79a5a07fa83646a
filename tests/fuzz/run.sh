#!/usr/bin/env bash
# Runs every fuzz target for a fixed time, several processes per target,
# restarting a target after a crash until the time is up (so one crash does
# not end its run). Usage:
#   tests/fuzz/run.sh BINDIR SEEDDIR WORKDIR SECONDS [SLOTS]
# BINDIR holds fuzz_NAME (build-dir/tests/fuzz), SEEDDIR/NAME the seeds
# (make-seeds.sh). WORKDIR/corpus/NAME grows the corpus, WORKDIR/crashes/NAME
# keeps crash-*/leak-*/timeout-*/oom-* inputs, WORKDIR/logs the libFuzzer
# logs, WORKDIR/summary.txt one line per target. SLOTS ("name=N,...")
# sets processes per target (default 1 each). FUZZ_RUNNER may prefix each
# command (e.g. a dynamic loader). Exit status 1 when anything was found.
set -uo pipefail
bindir=$1 seeds=$2 work=$3 secs=$4 slots=${5:-}
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/corpus" "$work/crashes" "$work/logs"
deadline=$(($(date +%s) + secs))
declare -A n
for kv in ${slots//,/ }; do n[${kv%=*}]=${kv#*=}; done
one() {  # name slot
  local t=$1 i=$2 round=0
  local args=(-timeout=30 -rss_limit_mb=2560 -max_len=262144 -print_final_stats=1 -reload=1
    "-artifact_prefix=$work/crashes/$t/")
  [ -f "$src/$t.dict" ] && args+=("-dict=$src/$t.dict")
  while :; do
    local left=$((deadline - $(date +%s)))
    ((left > 2)) || break
    ${FUZZ_RUNNER:-} "$bindir/fuzz_$t" "${args[@]}" -max_total_time=$left -seed=$((i * 1000 + round + 1)) \
      "$work/corpus/$t" "$seeds/$t" >"$work/logs/$t-$i-$round.log" 2>&1
    round=$((round + 1))
  done
}
for b in "$bindir"/fuzz_*; do
  [ -f "$b" ] && [ -x "$b" ] || continue
  t=$(basename "$b"); t=${t#fuzz_}
  [ "$t" = "replay_tests" ] && continue
  mkdir -p "$work/corpus/$t" "$work/crashes/$t" "$seeds/$t"
  for ((i = 0; i < ${n[$t]:-1}; ++i)); do one "$t" "$i" & done
done
wait
found=0
{
  printf '%-16s %8s %12s %9s %8s %8s %6s %7s %s\n' target procs execs execs/s corpus cov ft crashes rounds
  for d in "$work"/corpus/*/; do
    t=$(basename "$d")
    execs=0 rate=0 cov=0 ft=0 procs=0 rounds=0
    for l in "$work"/logs/"$t"-*.log; do
      rounds=$((rounds + 1))
      e=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$l" | awk '{print $2}' | tail -1)
      # A run killed by a crash prints no final stats: take its last status line.
      [ -n "$e" ] || e=$(grep -oE '^#[0-9]+' "$l" | tail -1 | tr -d '#')
      execs=$((execs + ${e:-0}))
      c=$(grep -oE 'cov: [0-9]+' "$l" | tail -1 | awk '{print $2}'); ((${c:-0} > cov)) && cov=$c
      f=$(grep -oE 'ft: [0-9]+' "$l" | tail -1 | awk '{print $2}'); ((${f:-0} > ft)) && ft=$f
    done
    procs=$(ls "$work"/logs/"$t"-*-0.log 2>/dev/null | wc -l)
    crashes=$(ls "$work/crashes/$t" 2>/dev/null | wc -l)
    ((crashes > 0)) && found=1
    printf '%-16s %8s %12s %9s %8s %8s %6s %7s %s\n' "$t" "$procs" "$execs" "$((execs / (secs > 0 ? secs : 1)))" \
      "$(ls "$d" | wc -l)" "$cov" "$ft" "$crashes" "$rounds"
  done
} | tee "$work/summary.txt"
exit $found
