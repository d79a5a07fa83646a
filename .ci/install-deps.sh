#!/usr/bin/env bash
# Installs everything trainimg needs to build and test on Debian bookworm.
# Idempotent; run as root (or through sudo).
set -euo pipefail
pkgs=(
  # build
  cmake ninja-build g++ pkg-config git
  # libraries (see README "Dependencies")
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libcurl4-openssl-dev libssl-dev libarchive-dev libsquashfs-dev liblzo2-dev libzstd-dev zlib1g-dev libisal-dev
  libgtest-dev libgmock-dev
  # fuzz targets and the sanitizer pass (docs/fuzzing.md): clang 16 + libFuzzer
  clang-16 libclang-rt-16-dev
  # real tools the tests compare against
  squashfs-tools squashfs-tools-ng xfsprogs squashfuse fuse3 skopeo docker.io zstd python3 busybox-static
  gzip xz-utils tar file binutils curl dash ca-certificates
  # a real Slurm cluster on this machine (.ci/start-slurm.sh)
  slurmctld slurmd slurm-client munge
  # real Pyxis + Enroot built from ../shared/vendor (.ci/start-pyxis.sh; vendor/README.md):
  # slurm/spank.h, Enroot's build (its deps build musl) and its runtime tools
  libslurm-dev gcc make libtool autoconf automake libmd-dev gawk parallel pigz fuse-overlayfs
  jq bsdextrautils libcap2-bin
  # the registry tests: a real registry, htpasswd, the token server's JWTs
  docker-registry apache2-utils openssl python3-jwt python3-cryptography
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
