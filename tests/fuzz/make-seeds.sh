#!/usr/bin/env bash
# Generates the seed corpora of the fuzz targets from the repository's own
# fixtures and from images built here (mksquashfs, a C compiler, python3's
# tarfile): no third-party files. Usage: tests/fuzz/make-seeds.sh OUTDIR
# (one folder per target, OUTDIR/NAME/). See docs/fuzzing.md.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: make-seeds.sh OUTDIR}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in dockerfile recipe elf engine_stream host sqsh docker_archive oci_layout registry reuse_index; do mkdir -p "$out/$t"; done

# Dockerfiles and recipes of the repository.
n=0
while IFS= read -r f; do cp "$f" "$out/dockerfile/df$((n++))"; done < <(find "$src/tests/fixtures" "$src/examples" -name '*Dockerfile*' -type f)
printf 'FROM nvcr.io/nvidia/pytorch:25.01-py3 AS base\nARG V=1.50.0\nENV A=1 B="x y"\nRUN <<EOF\nset -e\napt-get update && apt-get install -y curl\nEOF\nRUN sh -c "cd /tmp && curl -fsSL https://example.invalid/aws-efa-installer-${V}.tar.gz | tar xz" \\\n && ./efa_installer.sh -y --skip-kmod\nCOPY --from=base /a /b\nFROM base\nUSER 1000\nCMD ["python3", "train.py"]\n' >"$out/dockerfile/df-hand"
n=0
for f in "$src"/examples/*.yaml; do cp "$f" "$out/recipe/r$((n++))"; done

# ELF: a shared library with soname, needed and run paths, and a program.
if command -v cc >/dev/null; then
  printf 'const char v[] = "NCCL version 2.23.4+cuda12.6";\nint ncclCommInitRank(void) { return 0; }\n' >"$tmp/l.c"
  printf 'int main(void) { return 0; }\n' >"$tmp/m.c"
  cc -shared -fPIC -o "$tmp/libx.so.1" -Wl,-soname,libx.so.1 -Wl,-rpath,/opt/x/lib:\$ORIGIN "$tmp/l.c" -lm
  cc -o "$tmp/prog" "$tmp/m.c" -Wl,--enable-new-dtags,-rpath,/usr/local/lib
  for f in libx.so.1 prog; do { printf '\x10'; cat "$tmp/$f"; } >"$out/elf/$f"; done
fi

# Engine API jsonmessage stream of POST /build.
{
  printf '\x07'
  printf '{"stream":"Step 1/3 : FROM busybox"}\n{"stream":"\\n"}\n{"stream":" ---\\u003e 1f2e\\n"}\n'
  printf '{"stream":"Step 2/3 : RUN false\\n"}\n{"status":"Pulling fs layer","id":"abc"}\n'
  printf '{"errorDetail":{"code":1,"message":"The command returned a non-zero code: 1"},"error":"x"}\n'
  printf '{"aux":{"ID":"sha256:0123456789abcdef"}}\n{"stream":"Successfully built 0123"}'
} >"$out/engine_stream/build"

# Host outputs: the selector byte of fuzz_host.cc, then the fixture.
sel() {
  case "$1" in
    nvidia-smi.csv) echo 0 ;; nvidia-smi.txt) echo 1 ;; modinfo-efa.txt) echo 2 ;;
    efa_installed_packages) echo 3 ;; infiniband.txt) echo 4 ;; fi_info.txt) echo 5 ;;
    lsmod.txt) echo 6 ;; dev-gdrdrv.txt) echo 7 ;; ulimit-l.txt) echo 8 ;; df-nvme.txt) echo 9 ;;
    apt-mark-showhold.txt) echo 10 ;; lfs-version.txt) echo 11 ;; nvidia-fs-stats.txt | stats-*) echo 12 ;;
    lnetctl-efa.txt | lnet-*) echo 13 ;; *nccl*log* | *debug*) echo 14 ;; *nccl-tests* | *all_reduce*) echo 15 ;;
    gdscheck*) echo 16 ;; *) echo "" ;;
  esac
}
n=0
while IFS= read -r f; do
  s=$(sel "$(basename "$f")")
  [ -n "$s" ] || continue
  { printf "\\x$(printf %02x "$s")"; cat "$f"; } >"$out/host/h$((n++))"
done < <(find "$src/tests/fixtures/host" -type f ! -name '*.md')

# squashfs: a small tree with every compressor mksquashfs has, compressed
# and uncompressed meta data.
mkdir -p "$tmp/root/etc" "$tmp/root/usr/lib" "$tmp/root/d/e"
printf 'root:x:0:0::/root:/bin/sh\n' >"$tmp/root/etc/passwd"
head -c 5000 /dev/zero >"$tmp/root/usr/lib/zeros"
seq 1 3000 >"$tmp/root/usr/lib/numbers"
ln -s ../usr/lib "$tmp/root/d/lib"
ln "$tmp/root/etc/passwd" "$tmp/root/d/e/hard"
if command -v mksquashfs >/dev/null; then
  for c in gzip xz lzo lz4 zstd; do
    mksquashfs "$tmp/root" "$out/sqsh/$c.sqsh" -comp "$c" -noappend -quiet -b 4096 -no-progress >/dev/null 2>&1 || true
    mksquashfs "$tmp/root" "$out/sqsh/$c-noD.sqsh" -comp "$c" -noappend -quiet -b 4096 -noD -noI -no-progress \
      -xattrs >/dev/null 2>&1 || true
  done
fi

# docker-archive (selector byte 0: indexed file, 1: stream) and OCI layouts.
python3 - "$tmp/root" "$out" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
root, out = sys.argv[1], sys.argv[2]

def layer_tar(extra=()):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
        t.add(root, arcname=".", recursive=True)
        for name, data in extra:
            i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
        w = tarfile.TarInfo("etc/.wh.shadow"); t.addfile(w)
        s = tarfile.TarInfo("lib64"); s.type = tarfile.SYMTYPE; s.linkname = "usr/lib"; t.addfile(s)
    return b.getvalue()

def sha(b): return hashlib.sha256(b).hexdigest()

l1 = layer_tar()
l2 = layer_tar([("usr/lib/libnccl.so.2", b"\x7fELF\x02\x01\x01" + b"\0" * 57 + b"NCCL version 2.21.5")])
cfg = json.dumps({"architecture": "amd64", "os": "linux",
                  "config": {"Env": ["PATH=/usr/bin", "NCCL_DEBUG=INFO"], "Cmd": ["sh"], "WorkingDir": "/w",
                             "Labels": {"a": "b"}},
                  "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha(l1), "sha256:" + sha(l2)]}}).encode()

def archive(members):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w") as t:
        for name, data in members:
            i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
    return b.getvalue()

legacy = archive([(sha(cfg) + ".json", cfg), ("aa/layer.tar", l1), ("bb/layer.tar", l2),
                  ("manifest.json", json.dumps([{"Config": sha(cfg) + ".json", "RepoTags": ["x:1"],
                                                 "Layers": ["aa/layer.tar", "bb/layer.tar"]}]).encode())])
g2 = gzip.compress(l2, mtime=0)
ocis = archive([("blobs/sha256/" + sha(cfg), cfg), ("blobs/sha256/" + sha(l1), l1), ("blobs/sha256/" + sha(g2), g2),
                ("manifest.json", json.dumps([{"Config": "blobs/sha256/" + sha(cfg), "RepoTags": ["x:1"],
                                               "Layers": ["blobs/sha256/" + sha(l1), "blobs/sha256/" + sha(g2)]}]).encode())])
for name, data in (("legacy", legacy), ("oci-inside", ocis)):
    for sel in (0, 1):
        open(os.path.join(out, "docker_archive", f"{name}-{sel}"), "wb").write(bytes([sel]) + data)
open(os.path.join(out, "docker_archive", "legacy-gz"), "wb").write(b"\0" + gzip.compress(legacy, mtime=0))

# OCI layout in fuzz_oci_layout.cc's part format: index, manifest, config, layers.
sep = b"\n--part--\n"
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "@D2@", "size": 0},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "@D3@", "size": 0},
               {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": "@D4@", "size": 0}]})
manifest = manifest.replace('"@D2@", "size": 0', '"@D2@", "size": @S2@').replace('"@D3@", "size": 0', '"@D3@", "size": @S3@').replace('"@D4@", "size": 0', '"@D4@", "size": @S4@')
index = '{"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "@D1@", "size": @S1@, "annotations": {"org.opencontainers.image.ref.name": "1"}, "platform": {"architecture": "amd64", "os": "linux"}}]}'
open(os.path.join(out, "oci_layout", "plain"), "wb").write(sep.join([index.encode(), manifest.encode(), cfg, l1, g2]))
# An image index in between.
idx2 = '{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "@D2@", "size": @S2@, "platform": {"architecture": "arm64", "os": "linux"}}, {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "@D2@", "size": @S2@, "platform": {"architecture": "amd64", "os": "linux"}}]}'
index2 = index.replace("application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json")
m2 = manifest.replace("@D4@", "@D5@").replace("@S4@", "@S5@").replace("@D3@", "@D4@").replace("@S3@", "@S4@").replace("@D2@", "@D3@").replace("@S2@", "@S3@")
open(os.path.join(out, "oci_layout", "index"), "wb").write(sep.join([index2.encode(), idx2.encode(), m2.encode(), cfg, l1, g2]))
# Registry (fuzz_registry.cc): selector byte 0, then the pinned manifest or
# index and its blobs; 4-7 the header, token, error body and reference parsers.
reg = os.path.join(out, "registry")
def m_for(n, types):  # a manifest whose config is part n, layers parts n+1, n+2
    mt, ct, lt, gt = types
    return json.dumps({"schemaVersion": 2, "mediaType": mt,
        "config": {"mediaType": ct, "digest": f"@D{n}@", "size": 0},
        "layers": [{"mediaType": lt, "digest": f"@D{n+1}@", "size": 0},
                   {"mediaType": gt, "digest": f"@D{n+2}@", "size": 0}]}).replace(
        f'"@D{n}@", "size": 0', f'"@D{n}@", "size": @S{n}@').replace(
        f'"@D{n+1}@", "size": 0', f'"@D{n+1}@", "size": @S{n+1}@').replace(
        f'"@D{n+2}@", "size": 0', f'"@D{n+2}@", "size": @S{n+2}@')
oci_t = ("application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.config.v1+json",
         "application/vnd.oci.image.layer.v1.tar", "application/vnd.oci.image.layer.v1.tar+gzip")
dck_t = ("application/vnd.docker.distribution.manifest.v2+json", "application/vnd.docker.container.image.v1+json",
         "application/vnd.docker.image.rootfs.diff.tar", "application/vnd.docker.image.rootfs.diff.tar.gzip")
for name, t in (("oci", oci_t), ("docker", dck_t)):
    open(os.path.join(reg, name), "wb").write(b"\0" + sep.join([m_for(1, t).encode(), cfg, l1, g2]))
    lst = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json" if name == "oci"
           else "application/vnd.docker.distribution.manifest.list.v2+json",
           "manifests": [{"mediaType": t[0], "digest": "@D1@", "size": 0, "platform": {"architecture": "arm64", "os": "linux", "variant": "v8"}},
                         {"mediaType": t[0], "digest": "@D1@", "size": 0, "platform": {"architecture": "amd64", "os": "linux"}},
                         {"mediaType": t[0], "digest": "@D1@", "size": 0, "platform": {"architecture": "unknown", "os": "unknown"}}]}
    idx = json.dumps(lst).replace('"size": 0', '"size": @S1@')
    open(os.path.join(reg, name + "-index"), "wb").write(b"\1" + sep.join([idx.encode(), m_for(2, t).encode(), cfg, l1, g2]))
hexd = "0123456789abcdef" * 4
for i, v in enumerate([
        b'\4Bearer realm="https://auth.example.invalid/token",service="registry.example.invalid",scope="repository:a/b:pull"',
        b'\4Basic realm="Registry Realm", charset=UTF-8',
        b'\4Bearer realm="https://a.invalid/t?x=1" , service=reg, error="insufficient_scope", scope="a\\"b"',
        b'\5{"token":"abc.def","access_token":"abc.def","expires_in":300,"issued_at":"2026-01-01T00:00:00Z"}',
        b'\5{"access_token":"x"}',
        b'\6{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"x"}}]}',
        b'\6{"details":"quota exceeded"}',
        b'\6<html><body>502 Bad Gateway</body></html>',
        b'\7nvcr.io#nvidia/pytorch:25.01-py3',
        b'\7user@nvcr.io#nvidia/pytorch@sha256:' + hexd.encode(),
        b'\7localhost:5000/a/b:tag',
        b'\7[::1]:5000/ubuntu@sha256:' + hexd.encode(),
        b'\7ubuntu']):
    open(os.path.join(reg, f"parse{i}"), "wb").write(v)
PY
# Reuse index bodies (format 2; fuzz_reuse_index.cc frames them): a layer of
# three entries, one extent, and the binding to the harness's empty image; the
# same without the binding; nothing.
python3 - "$out/reuse_index" <<'PY'
import struct, hashlib, sys, os
def s(b): return struct.pack('<I', len(b)) + b
def entry(t, path, size, link=b''):
    return bytes([t]) + s(path) + struct.pack('<IIIQQII', 0o644, 0, 0, size, 1700000000, 0, 0) + s(link) + struct.pack('<I', 0)
body = b'L' + s(b'sha256:' + b'1'*64) + entry(1, b'/usr', 0) + entry(0, b'/usr/a', 5) + entry(2, b'/usr/b', 0, b'a') + b'\xff'
body += b'O' + struct.pack('<QQI', 1, 96, 1) + struct.pack('<I', 5) + struct.pack('<IIQQ', 0xFFFFFFFF, 0, 5, 0) + struct.pack('<Q', 2**64 - 1)
body += b'B' + struct.pack('<QQ', 0, 0) + s(b'sha256:' + hashlib.sha256(b'').hexdigest().encode()) + struct.pack('<II', 1, 0) + b'\1'
out = sys.argv[1]
open(os.path.join(out, 'bound'), 'wb').write(body)
open(os.path.join(out, 'empty'), 'wb').write(b'')
open(os.path.join(out, 'unbound'), 'wb').write(body[:body.index(b'B' + struct.pack('<QQ', 0, 0))])
PY
for t in "$out"/*/; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds"; done
