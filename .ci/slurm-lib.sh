#!/usr/bin/env bash
# Shared by .ci/start-slurm.sh and .ci/start-pyxis.sh (sourced): each runs a
# Slurm cluster of its own on this machine, loopback only, under a mktemp -d
# directory. What the two clusters have in common lives here once.

# stop_daemons DIR PATTERN PIDFILE...: kills each recorded pid whose command
# line matches the extended regex PATTERN (a stale pid file must never kill
# another process) and waits up to 5 s for it to go.
stop_daemons() {
  local dir=$1 pattern=$2 f pid
  shift 2
  for f in "$@"; do
    [[ -f $f ]] || continue
    pid=$(cat "$f")
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE "$pattern" || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}

# start_munge DIR LOGDIR: a munged with a key made on the spot, its socket
# at DIR/munge/munge.socket (0755: srun as a job user needs it).
start_munge() {
  local dir=$1 log=$2
  mkdir -p "$dir/munge"
  chmod 0700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  /usr/sbin/munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$log/munged.log" --seed-file="$dir/munge/munge.seed"
  chmod 0755 "$dir/munge"
}

# slurm_conf_common DIR NAME CTLD_PORT LOGDIR MESSAGE_TIMEOUT SRUN_PORTS:
# the slurm.conf lines both clusters share (root daemons, munge auth, state
# and pids under DIR, no accounting, cons_tres on CPUs, loopback only).
# The caller appends its own lines: nodes, partition, prolog, plugstack.
slurm_conf_common() {
  local dir=$1 name=$2 port=$3 log=$4 msg=$5 srun=$6
  cat <<C
ClusterName=$name
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$log/slurmctld.log
SlurmdLogFile=$log/slurmd.%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
MessageTimeout=$msg
CommunicationParameters=NoInAddrAny
SrunPortRange=$srun
InactiveLimit=0
KillWait=2
MinJobAge=5
C
}
