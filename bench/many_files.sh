#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/many_files.sh: peak RSS (/usr/bin/time %M) and wall time of
# `trainimg import` and `trainimg inspect` on images of many small files, the
# case where memory grows (issue 11: peak RSS <= 256 MB up to 500,000 files,
# growing with the file count, never with the bytes).
#
# Generates two docker archives of N files (500 a directory): one layer (the
# import writes it in one pass) and the same plus a second layer that replaces
# one file (two passes: a merge walk, then a data walk). When the local test
# registry of .ci/start-registry.sh answers on 127.0.0.1:5500, the two-layer
# image is also pushed there (skopeo) and imported from docker:// with a cold
# cache; when dockerd runs, the one-layer image is loaded and imported from
# dockerd://. Prints one line a case.
#
# usage: bench/many_files.sh [--files N] [--bin PATH]
# Needs python3, GNU time; skopeo and dockerd optional. Uses $TMPDIR.
set -euo pipefail
files=500000 bin="$(dirname "$0")/../build/trainimg"
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    *) echo "usage: $0 [--files N] [--bin PATH]" >&2; exit 2 ;;
  esac
done
bin="$(readlink -f "$bin")"
work="$(mktemp -d "${TMPDIR:-/tmp}/trainimg-bench-many-XXXXXX")"
tag="trainimg-bench-many:$files"
cleanup() {
  rm -rf "$work"
  if [ -n "${loaded:-}" ]; then docker rmi -f "$tag" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# Docker archives (docker save's layout) of $files files, 1 or 2 layers.
python3 - "$files" "$work" <<'EOF'
import hashlib, io, json, os, sys, tarfile
n, work = int(sys.argv[1]), sys.argv[2]

def layer(path, members):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1700000000
            if data is None:
                ti.type, ti.mode = tarfile.DIRTYPE, 0o755
                t.addfile(ti)
            else:
                ti.size, ti.mode = len(data), 0o644
                t.addfile(ti, io.BytesIO(data))
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()

def many():
    for d in ("usr", "usr/lib", "usr/lib/python3"):
        yield d, None
    for i in range(n):
        if i % 500 == 0:
            yield "usr/lib/python3/pkg%04d" % (i // 500), None
        yield "usr/lib/python3/pkg%04d/module_%05d.py" % (i // 500, i % 500), b"x = %d\n" % i

def archive(out, layers):
    diff_ids = [layer(os.path.join(work, "l%d.tar" % k), m) for k, m in enumerate(layers)]
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/usr/bin"]},
                         "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
    cid = hashlib.sha256(config).hexdigest()
    with tarfile.open(out, "w") as t:
        ti = tarfile.TarInfo(cid + ".json"); ti.size = len(config); t.addfile(ti, io.BytesIO(config))
        names = []
        for k in range(len(layers)):
            names.append("layer%d/layer.tar" % k)
            t.add(os.path.join(work, "l%d.tar" % k), arcname=names[-1])
            os.unlink(os.path.join(work, "l%d.tar" % k))
        m = json.dumps([{"Config": cid + ".json", "RepoTags": ["trainimg-bench-many:%d" % n],
                         "Layers": names}]).encode()
        ti = tarfile.TarInfo("manifest.json"); ti.size = len(m); t.addfile(ti, io.BytesIO(m))

archive(os.path.join(work, "one.tar"), [list(many())])
archive(os.path.join(work, "two.tar"),
        [list(many()), [("usr/lib/python3/pkg0000/module_00001.py", b"changed\n")]])
EOF

# Runs "$@" once; prints "wall_s peak_MiB".
measure() {
  rm -rf "$work/cache" "$work/x.sqsh"*
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
    echo "failed: $*" >&2
    cat "$work/err" >&2
    return 1
  }
  read -r wall kib <"$work/time"
  echo "$wall $((kib / 1024))"
}
row() { printf '%-52s %8s s %6s MiB\n' "$1" $2; }
echo "$files files; peak RSS (MiB) and wall time of one run each"
row "import docker-archive: (1 layer, one pass)" \
  "$(measure "$bin" import "docker-archive:$work/one.tar" -o "$work/x.sqsh" --progress none --no-inspect)"
row "import docker-archive: (2 layers, two passes)" \
  "$(measure "$bin" import "docker-archive:$work/two.tar" -o "$work/x.sqsh" --progress none --no-inspect)"
row "inspect docker-archive: (2 layers)" "$(measure "$bin" inspect "docker-archive:$work/two.tar" --fail-on never)"
if curl -s -o /dev/null http://127.0.0.1:5500/v2/ && command -v skopeo >/dev/null; then
  ref="127.0.0.1:5500/bench/many:$files"
  skopeo copy --quiet --dest-tls-verify=false "docker-archive:$work/two.tar" "docker://$ref"
  export TRAINIMG_ALLOW_HTTP=1 no_proxy=127.0.0.1
  row "import docker:// (2 layers, cold cache)" \
    "$(measure "$bin" import "docker://$ref" --cache "$work/cache" -o "$work/x.sqsh" --progress none --no-inspect)"
else
  echo "import docker://: skipped (no registry on 127.0.0.1:5500 or no skopeo)"
fi
if curl -fsS --unix-socket /var/run/docker.sock http://localhost/_ping >/dev/null 2>&1; then
  docker load -q -i "$work/one.tar" >/dev/null
  loaded=1
  row "import dockerd:// (the daemon's export, one pass)" \
    "$(measure "$bin" import "dockerd://$tag" -o "$work/x.sqsh" --progress none --no-inspect)"
else
  echo "import dockerd://: skipped (no dockerd)"
fi
