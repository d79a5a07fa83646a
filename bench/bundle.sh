#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/bundle.sh BINARY OUT.tar.xz [EXTRA_PROGRAM...]: the binary (stripped),
# every shared library it and the extra programs load, and the loader, so
# that a benchmark can run on another x86-64 Linux that lacks the Debian
# packages (a lent machine without a package registry). Unpack and run with
#   tar -xJf OUT.tar.xz -C DIR && DIR/run trainimg ARGS…   (or DIR/run sqfsdiff …)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BINARY OUT.tar.xz [EXTRA_PROGRAM...]" >&2; exit 2; }
bin="$1" out="$2"; shift 2
d="$(mktemp -d)"; trap 'rm -rf "$d"' EXIT
mkdir -p "$d/lib" "$d/bin"
for p in "$bin" "$@"; do
  cp "$(readlink -f "$(command -v "$p")")" "$d/bin/$(basename "$p")"
  strip "$d/bin/$(basename "$p")" 2>/dev/null || :
  ldd "$(command -v "$p")" | awk '/=> \//{print $3} /^\s*\/lib64/{print $1}' | while read -r l; do
    cp -L "$l" "$d/lib/"
  done
done
cp -L /lib64/ld-linux-x86-64.so.2 "$d/lib/"
cat >"$d/run" <<'RUN'
#!/bin/sh
here="$(cd "$(dirname "$0")" && pwd)"
p="$1"; shift
exec "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib" "$here/bin/$p" "$@"
RUN
chmod +x "$d/run"
tar -C "$d" -cf - . | xz -T0 -6 >"$out"
echo "$out: $(du -h "$out" | cut -f1)"
