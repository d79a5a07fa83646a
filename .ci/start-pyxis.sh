#!/usr/bin/env bash
# Real Pyxis + Enroot + Slurm on this one machine, with trainimg as Pyxis's
# importer= (issue 23; the recipe is ../shared/pyxis-slurm-enroot.md).
# Installs nothing (.ci/install-deps.sh does). Builds Pyxis and Enroot from
# the tarballs of shared/vendor (next to the repository root, or
# $TRAINIMG_SHARED_DIR/vendor) once: the build is kept under
# ${TRAINIMG_PYXIS_BUILD_CACHE:-/tmp/trainimg-pyxis-build}/SHA (the tarballs'
# sha256), so the second test pass and later runs reuse it. Then starts a
# cluster of its own, separate from .ci/start-slurm.sh's: its own munged,
# one slurmctld and `slurmd -N pyxis1|pyxis2` under mktemp -d
# /tmp/trainimg-pyxis.XXXXXX, loopback only, ports 6910-6913 and 22000-22999
# (srun). Pushes a small busybox image (FROM scratch) to the test registry
# (127.0.0.1:5500/trainimg-ci/bbox:1) and creates the test users
# trainimg-u1 and trainimg-u2. Writes the state file the tests read:
#   ${TRAINIMG_PYXIS_STATE:-/tmp/trainimg-ci-pyxis.env}
#   (SLURM_CONF, TRAINIMG_PYXIS_DIR, ENROOT_PREFIX, TRAINIMG_PYXIS_IMAGE, TRAINIMG_PYXIS_USERS)
# In TRAINIMG_PYXIS_DIR (DIR):
#   bin/trainimg      the importer's trainimg: tests copy their binary here
#                     (0755, through a rename), the build dir may not be
#                     readable by the job users
#   importer.sh       plugstack.conf's importer=: exports TRAINIMG_PYXIS_CACHE=DIR/cache
#                     and TRAINIMG_CACHE=DIR/blobcache (both root's, 1777: root's
#                     entries and blobs serve everyone, other users get their own
#                     DIR/user-UID areas), TRAINIMG_ALLOW_HTTP=1,
#                     drops every TRAINIMG_* the job brought, then takes
#                     TRAINIMG_HOST_PROFILE and TRAINIMG_PREFLIGHT from DIR/site.env
#                     (KEY=VALUE lines a test writes; nothing else is read)
#   plugstack.conf    the active Pyxis line; slurmstepd reads it at every step.
#                     `.ci/start-pyxis.sh mode importer|builtin|squashfuse`
#                     switches it (builtin: Pyxis's own `enroot import`)
# Usage: .ci/start-pyxis.sh [start|stop|mode MODE]   (stop: by the recorded pids)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
state=${TRAINIMG_PYXIS_STATE:-/tmp/trainimg-ci-pyxis.env}
SYS=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. "$here/.ci/slurm-lib.sh"

stop() {
  [[ -f $state ]] || return 0
  local dir
  dir=$(sed -n 's/^TRAINIMG_PYXIS_DIR=//p' "$state")
  stop_daemons "$dir" "munged .*$dir|slurmctld -c -f $dir|slurmd -N pyxis[0-9] -f $dir" \
    "$dir"/slurmd.pyxis*.pid "$dir"/slurmctld.pid "$dir"/munged.pid
  # Containers of killed steps may leave mounts under the Enroot dirs.
  { grep -o " $dir/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  rm -f "$state"
  rm -rf "$dir"
  echo "pyxis: stopped"
}

# The Pyxis line of plugstack.conf for MODE.
plugstack_line() {
  local dir=$1 mode=$2 so=$3
  case $mode in
    importer) echo "required $so runtime_path=$dir/run importer=$dir/importer.sh" ;;
    squashfuse) echo "required $so runtime_path=$dir/run importer=$dir/importer.sh use_squashfuse=1" ;;
    builtin) echo "required $so runtime_path=$dir/run" ;;
    *) echo "pyxis: mode: importer, builtin or squashfuse, not '$mode'" >&2; return 2 ;;
  esac
}

set_mode() {
  [[ -f $state ]] || { echo "pyxis: not running ($state)" >&2; exit 1; }
  local dir so
  dir=$(sed -n 's/^TRAINIMG_PYXIS_DIR=//p' "$state")
  so=$(sed -n 's/^PYXIS_SO=//p' "$state")
  plugstack_line "$dir" "$1" "$so" >"$dir/plugstack.conf.new"
  mv "$dir/plugstack.conf.new" "$dir/plugstack.conf"
  echo "pyxis: mode $1"
}

case ${1:-start} in
  stop) stop; exit 0 ;;
  mode) set_mode "${2:-}"; exit 0 ;;
  start) ;;
  *) echo "usage: $0 [start|stop|mode importer|builtin|squashfuse]" >&2; exit 2 ;;
esac

for t in munged slurmctld slurmd sinfo srun scontrol gcc make skopeo docker mksquashfs squashfuse; do
  command -v "$t" >/dev/null || [[ -x /usr/sbin/$t ]] || { echo "pyxis: $t missing (.ci/install-deps.sh)" >&2; exit 1; }
done
[[ -f /usr/include/slurm/spank.h ]] || { echo "pyxis: slurm/spank.h missing: libslurm-dev (.ci/install-deps.sh)" >&2; exit 1; }
if [[ -f $state ]]; then
  SLURM_CONF=$(sed -n 's/^SLURM_CONF=//p' "$state") sinfo -h >/dev/null 2>&1 && { echo "pyxis: already running ($state)"; exit 0; }
  stop
fi

# --- the build, once per tarball pair ---------------------------------------
shared=${TRAINIMG_SHARED_DIR:-$(dirname "$here")/shared}
vendor=$shared/vendor
pyxis_tgz=$vendor/pyxis-0.24.0.tar.gz
enroot_txz=$vendor/enroot-8ea147d-with-submodules.tar.xz
for f in "$pyxis_tgz" "$enroot_txz"; do
  [[ -f $f ]] || { echo "pyxis: $f missing: the vendor tarballs are looked for in shared/vendor next to the repository ($shared), or set TRAINIMG_SHARED_DIR" >&2; exit 1; }
done
key=$(cat "$pyxis_tgz" "$enroot_txz" | sha256sum | cut -c1-16)
builds=${TRAINIMG_PYXIS_BUILD_CACHE:-/tmp/trainimg-pyxis-build}
build=$builds/$key
mkdir -p "$builds"
chmod 0755 "$builds"
(
  flock 9
  [[ -f $build/.done ]] && exit 0
  rm -rf "$build"
  mkdir -p "$build/src"
  t0=$(date +%s)
  log=$build/build.log
  echo "pyxis: building Pyxis and Enroot in $build (log: $log)"
  {
    tar -C "$build/src" -xzf "$pyxis_tgz"
    make -C "$build/src/pyxis-0.24.0"
    install -m 0755 "$build/src/pyxis-0.24.0/spank_pyxis.so" "$build/spank_pyxis.so"
    tar -C "$build/src" -xJf "$enroot_txz"
    # musl alone in parallel (its own build is parallel-safe), then the rest
    # of `make deps` on its own: its sub-builds are not (vendor/README.md).
    make -C "$build/src/enroot-8ea147d/deps" -j"$(nproc)" musl
    make -C "$build/src/enroot-8ea147d" deps
    make -C "$build/src/enroot-8ea147d" prefix="$build/enroot" install
    make -C "$build/src/enroot-8ea147d" prefix="$build/enroot" setcap
  } >"$log" 2>&1 || { echo "pyxis: the build failed; last lines of $log:" >&2; tail -20 "$log" >&2; exit 1; }
  rm -rf "$build/src"
  chmod -R go+rX "$build"
  touch "$build/.done"
  echo "pyxis: built in $(($(date +%s) - t0)) s"
) 9>"$builds/$key.lock"
so=$build/spank_pyxis.so
prefix=$build/enroot
"$prefix/bin/enroot" version >/dev/null

# --- the test users -----------------------------------------------------------
users="trainimg-u1 trainimg-u2"
for u in $users; do
  id "$u" >/dev/null 2>&1 || useradd -M -r -s /bin/sh -d /nonexistent "$u"
done

# --- the cluster --------------------------------------------------------------
dir=$(mktemp -d /tmp/trainimg-pyxis.XXXXXX)
chmod 0755 "$dir"
cd "$dir"
mkdir -p ctld log bin run spool/pyxis1 spool/pyxis2
mkdir -m 1777 cache blobcache
chmod 1777 cache blobcache
start_munge "$dir" "$dir/log"

# Enroot as Pyxis runs it: slurmstepd's PATH (Pyxis clears everything else)
# starts with node/NAME/bin, whose `enroot` links to bin/enroot; $0 names
# the node, so the two slurmd of this machine get their own Enroot dirs
# (one data dir would see `pyxis_JOB.STEP` twice) even in task cleanup,
# where SLURMD_NODENAME is not set.
cat >bin/enroot <<EOF
#!/bin/sh
case "\$0" in $dir/node/*/bin/enroot) node=\$(basename "\$(dirname "\$(dirname "\$0")")") ;; *) node=local ;; esac
E=$dir/enroot/\$node
export ENROOT_RUNTIME_PATH="\$E/runtime/user-\$(id -u)"
export ENROOT_DATA_PATH="\$E/data/user-\$(id -u)"
export ENROOT_CACHE_PATH="\$E/cache/user-\$(id -u)"
export ENROOT_CONFIG_PATH="\$E/config/user-\$(id -u)"
export ENROOT_TEMP_PATH="\$E/temp"
export ENROOT_ALLOW_HTTP=y
export PATH="$prefix/bin:\$PATH"
exec $prefix/bin/enroot "\$@"
EOF
chmod 0755 bin/enroot
for n in local pyxis1 pyxis2; do
  mkdir -p "enroot/$n"/{runtime,data,cache,config,temp}
  chmod 1777 "enroot/$n" "enroot/$n"/*
  [[ $n == local ]] && continue
  mkdir -p "node/$n/bin"
  ln -sfn "$dir/bin/enroot" "node/$n/bin/enroot"
done

cat >importer.sh <<EOF
#!/bin/sh
# Pyxis's importer= on the CI cluster. Pyxis hands the importer the job's
# environment: every TRAINIMG_* it brought is dropped, the site's values win.
for v in \$(env | sed -n 's/^\(TRAINIMG_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "\$v"; done
export PATH=$SYS
export TRAINIMG_PYXIS_CACHE=$dir/cache
export TRAINIMG_CACHE=$dir/blobcache
export TRAINIMG_ALLOW_HTTP=1
export TRAINIMG_HOST_PROFILE=$dir/host.json
# The site's gate settings: KEY=VALUE lines of the root-owned site.env; only these two keys.
if [ -f $dir/site.env ]; then
  while IFS='=' read -r k v; do
    case "\$k" in TRAINIMG_HOST_PROFILE|TRAINIMG_PREFLIGHT) export "\$k=\$v" ;; esac
  done <$dir/site.env
fi
exec $dir/bin/trainimg pyxis-importer "\$@"
EOF
chmod 0755 importer.sh
plugstack_line "$dir" importer "$so" >plugstack.conf

host=$(hostname -s)
conf=$dir/slurm.conf
{
  slurm_conf_common "$dir" trainimgpyxis 6910 "$dir/log" 10 22000-22999
  cat <<C
SlurmdDebug=debug
PlugStackConfig=$dir/plugstack.conf
NodeName=pyxis1 NodeHostname=$host NodeAddr=127.0.0.1 Port=6912 CPUs=2 RealMemory=100 State=UNKNOWN
NodeName=pyxis2 NodeHostname=$host NodeAddr=127.0.0.1 Port=6913 CPUs=2 RealMemory=100 State=UNKNOWN
PartitionName=pyxis Nodes=pyxis[1-2] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
C
} >"$conf"
image=127.0.0.1:5500/trainimg-ci/bbox:1
printf 'SLURM_CONF=%s\nTRAINIMG_PYXIS_DIR=%s\nENROOT_PREFIX=%s\nPYXIS_SO=%s\nTRAINIMG_PYXIS_IMAGE=%s\nTRAINIMG_PYXIS_USERS=%s\n' \
  "$conf" "$dir" "$prefix" "$so" "$image" "$users" >"$state"
env -i PATH=$SYS SLURM_CONF="$conf" HOME=/root /usr/sbin/slurmctld -c -f "$conf"
for n in pyxis1 pyxis2; do
  env -i PATH="$dir/node/$n/bin:$SYS" SLURM_CONF="$conf" HOME=/root /usr/sbin/slurmd -N "$n" -f "$conf"
done

# --- the busybox image (Docker Hub is out of reach: FROM scratch) --------------
if ! skopeo inspect --raw --tls-verify=false "docker://$image" >/dev/null 2>&1; then
  ctx=$dir/img
  mkdir -p "$ctx/bin" "$ctx/etc"
  cp /bin/busybox "$ctx/bin/busybox"
  printf 'PRETTY_NAME="trainimg CI BusyBox"\nNAME="trainimg-ci"\nID=trainimg-ci\nVERSION_ID="1"\n' >"$ctx/etc/os-release"
  printf 'FROM scratch\nCOPY bin/busybox /bin/busybox\nCOPY etc/os-release /etc/os-release\nRUN ["/bin/busybox","--install","-s","/bin"]\nENV PATH=/bin\nCMD ["/bin/sh"]\n' >"$ctx/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q --network=host -t trainimg-ci/bbox:1 "$ctx" >/dev/null 2>"$dir/log/docker-build.log"
  skopeo copy --quiet --dest-tls-verify=false docker-daemon:trainimg-ci/bbox:1 "docker://$image"
  rm -rf "$ctx"
fi

export SLURM_CONF=$conf
for _ in $(seq 1 60); do
  if [[ $(sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$') == 2 ]]; then
    echo "pyxis: 2 nodes idle (SLURM_CONF=$conf; state: $state; Enroot $prefix)"
    exit 0
  fi
  sleep 0.5
done
echo "pyxis: nodes not idle within 30 s:" >&2
sinfo -N >&2 || true
tail -5 "$dir"/log/slurmctld.log "$dir"/log/slurmd.pyxis1.log >&2 || true
exit 1
