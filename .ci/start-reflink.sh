#!/usr/bin/env bash
# A small XFS with reflinks on a loop file, for the test that checks that
# block reuse shares extents (FdFile.CopiesShareWholeBlocks...): its mount
# point goes to /tmp/trainimg-ci-reflink. Needs root and loop devices; a
# machine without them skips that test (it says so).
set -euo pipefail
state=/tmp/trainimg-ci-reflink dir=/tmp/trainimg-reflink img=/tmp/trainimg-reflink.img
if mountpoint -q "$dir" 2>/dev/null; then
  echo "$dir" >"$state"
  echo "reflink: $dir already mounted"
  exit 0
fi
rm -f "$state"
command -v mkfs.xfs >/dev/null || { echo "reflink: no mkfs.xfs" >&2; exit 1; }
truncate -s 1G "$img"
mkfs.xfs -q -f -m reflink=1 "$img"
mkdir -p "$dir"
mount -o loop "$img" "$dir"
chmod 1777 "$dir"
echo "$dir" >"$state"
echo "reflink: XFS with reflinks on $dir"
