#!/usr/bin/env bash
# A real Slurm cluster on this one machine for the fleet tests (issue 12):
# munged with a key made on the spot, one slurmctld and three slurmd
# (`slurmd -N nodeN`, one Port each), everything under a temporary
# directory, loopback only, ports 6900-6904 and 20000-20999 (srun), never /etc/slurm or the
# system munge. Writes the state file the tests read:
#   ${TRAINIMG_SLURM_STATE:-/tmp/trainimg-ci-slurm.env}  (SLURM_CONF=…, TRAINIMG_SLURM_DIR=…)
# Usage: .ci/start-slurm.sh [start|stop]   (stop: by the recorded pids)
set -euo pipefail
state=${TRAINIMG_SLURM_STATE:-/tmp/trainimg-ci-slurm.env}
. "$(dirname "$0")/slurm-lib.sh"

stop() {
  [[ -f $state ]] || return 0
  dir=$(sed -n 's/^TRAINIMG_SLURM_DIR=//p' "$state")
  stop_daemons "$dir" "munged .*$dir|slurmctld|slurmd -N" "$dir"/slurmd.node*.pid "$dir"/slurmctld.pid "$dir"/munged.pid
  rm -f "$state"
  rm -rf "$dir"
  echo "slurm: stopped"
}

if [[ ${1:-start} == stop ]]; then stop; exit 0; fi
for t in munged slurmctld slurmd sinfo srun scontrol; do
  command -v "$t" >/dev/null || [[ -x /usr/sbin/$t ]] || { echo "slurm: $t missing (.ci/install-deps.sh)" >&2; exit 1; }
done
if [[ -f $state ]]; then
  export SLURM_CONF=$(sed -n 's/^SLURM_CONF=//p' "$state")
  if sinfo -h >/dev/null 2>&1; then echo "slurm: already running ($state)"; exit 0; fi
  stop
fi

dir=$(mktemp -d /tmp/trainimg-slurm.XXXXXX)
chmod 0755 "$dir"
mkdir -p "$dir/ctld" "$dir/spool" "$dir/prolog.d"
start_munge "$dir" "$dir"

# The prolog slurmd runs at job start: whatever executable the tests put
# in prolog.d/gate (nothing there: exit 0).
cat >"$dir/prolog.sh" <<P
#!/bin/sh
[ -x "$dir/prolog.d/gate" ] || exit 0
exec "$dir/prolog.d/gate"
P
chmod 0755 "$dir/prolog.sh"

host=$(hostname -s)
conf=$dir/slurm.conf
{
  slurm_conf_common "$dir" trainimg 6900 "$dir" 5 20000-20999
  cat <<C
Prolog=$dir/prolog.sh
NodeName=node1 NodeHostname=$host NodeAddr=127.0.0.1 Port=6902 CPUs=2 RealMemory=100 State=UNKNOWN
NodeName=node2 NodeHostname=$host NodeAddr=127.0.0.1 Port=6903 CPUs=2 RealMemory=100 State=UNKNOWN
NodeName=node3 NodeHostname=$host NodeAddr=127.0.0.1 Port=6904 CPUs=2 RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=node[1-3] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
C
} >"$conf"
export SLURM_CONF=$conf
printf 'SLURM_CONF=%s\nTRAINIMG_SLURM_DIR=%s\n' "$conf" "$dir" >"$state"
/usr/sbin/slurmctld -c
for n in node1 node2 node3; do
  mkdir -p "$dir/spool/$n"
  /usr/sbin/slurmd -N "$n"
done
for _ in $(seq 1 60); do
  if [[ $(sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$') == 3 ]]; then
    echo "slurm: 3 nodes idle (SLURM_CONF=$conf; state: $state)"
    exit 0
  fi
  sleep 0.5
done
echo "slurm: nodes not idle within 30 s:" >&2
sinfo -N >&2 || true
tail -5 "$dir"/slurmctld.log "$dir"/slurmd.node1.log >&2 || true
exit 1
