#!/usr/bin/env bash
# Starts a Docker daemon for the tests that talk to a real dockerd. Never the
# default bridge network: --bridge=none --iptables=false, builds use
# network=host, and nothing but loopback is contacted.
set -euo pipefail
"$(dirname "$0")/start-slurm.sh" || echo "slurm: not started (the Slurm tests fail under TRAINIMG_CI)" >&2  # issue 12
bash "$(dirname "$0")/start-registry.sh"
bash "$(dirname "$0")/start-reflink.sh" || echo "reflink: no XFS mounted (FdFile.CopiesShareWholeBlocks... skips)" >&2
sock=/var/run/docker.sock
# Real Pyxis + Enroot (issue 23): after dockerd and the registry (it pushes
# its busybox image). If it fails, the Pyxis tests fail under TRAINIMG_CI.
pyxis() {
  "$(dirname "$0")/start-pyxis.sh" || echo "pyxis: not started (the Pyxis tests fail under TRAINIMG_CI)" >&2
}
if curl -fsS --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1; then
  echo "dockerd: already running"
  pyxis
  exit 0
fi
log=${TMPDIR:-/tmp}/trainimg-ci-dockerd.log
nohup dockerd --bridge=none --iptables=false --ip-masq=false >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if curl -fsS --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1; then
    echo "dockerd: started (log: $log)"
    pyxis
    exit 0
  fi
  sleep 1
done
echo "dockerd: did not start within 60 s; last log lines:" >&2
tail -20 "$log" >&2
exit 1
