#!/usr/bin/env bash
# The README's test command: configure, build and run every test.
# Usage: .ci/test.sh [BUILD_DIR] [extra cmake flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
# ccache when the machine has it (a developer's clone; CI's fresh machine does not).
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINIMG_WERROR=ON "${launcher[@]}" "$@"
cmake --build "$dir"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" --timeout 600
