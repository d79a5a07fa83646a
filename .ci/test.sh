#!/usr/bin/env bash
# The README's test command: configure, build and run every test.
# Usage: .ci/test.sh [BUILD_DIR] [extra cmake flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINIMG_WERROR=ON "$@"
cmake --build "$dir"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" --timeout 600
