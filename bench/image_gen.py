#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench/image_gen.py: writes a training-image-shaped OCI layout (gzip
layers) without Docker, deterministically from its parameters, and
optionally a "rebuilt" version of it: the same layers plus a new top layer
that adds files and changes some files of the previous top layer (what a CI
rebuilding the top of an image on every commit publishes).

The file mix follows a PyTorch container: most files are small .py/.pyc/.h
(hundreds of bytes to tens of KiB, compressible text), some .so of 100 KiB to
a few MiB (half compressible), and a few very large libraries (libcudnn-,
libcublasLt-like, mostly incompressible).

usage: bench/image_gen.py OUT_DIR --files N --mb M --layers L [--big-mb B]
                          [--rebuild OUT2_DIR --add-files F --add-mb A --change C]
                          [--jobs J] [--tag TAG]
"""
import argparse
import gzip
import hashlib
import io
import json
import multiprocessing
import os
import random
import shutil
import tarfile
import tempfile

TEXT = None


def text_pool():
    global TEXT
    if TEXT is None:
        r = random.Random(7)
        words = [bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz_") for _ in range(r.randint(2, 10))) for _ in range(4000)]
        out = io.BytesIO()
        while out.tell() < (4 << 20):
            line = b" ".join(r.choice(words) for _ in range(r.randint(3, 12)))
            out.write(b"    " * r.randint(0, 3) + line + b"\n")
        TEXT = out.getvalue()
    return TEXT


def content(r, size, compressible):
    """`size` bytes: text slices where compressible, else random bytes."""
    if size == 0:
        return b""
    t = text_pool()
    if compressible >= 1.0:
        out = bytearray()
        while len(out) < size:
            off = r.randrange(0, len(t) - 65536)
            out += t[off:off + min(65536, size - len(out))]
        return bytes(out)
    n_rand = int(size * (1 - compressible))
    head = r.randbytes(n_rand)
    return head + content(r, size - n_rand, 1.0) if size > n_rand else head


def layer_files(spec):
    """[(path, size, compressible, seed)] of one layer."""
    r = random.Random(spec["seed"])
    files = []
    idx = spec["index"]
    small_bytes = 0
    for i in range(spec["files"]):
        kind = r.random()
        d = "/usr/lib/python3/dist-packages/pkg%d_%d/sub%d" % (idx, i // 400, (i // 40) % 10)
        if kind < 0.70:
            size, comp, ext = int(r.lognormvariate(8.0, 1.2)) % (256 << 10), 1.0, ".py"
        elif kind < 0.85:
            size, comp, ext = int(r.lognormvariate(7.0, 1.0)) % (64 << 10), 1.0, ".h"
        else:
            size, comp, ext = int(r.lognormvariate(10.0, 1.2)) % (8 << 20), 0.5, ".so"
        small_bytes += size
        files.append((d + "/f%d%s" % (i, ext), size, comp, r.randrange(1 << 30)))
    # The layer's big libraries make up the rest of its bytes.
    rest = spec["bytes"] - small_bytes
    j = 0
    while rest > 0:
        size = min(rest, spec["big"])
        files.append(("/usr/local/lib/libbig%d_%d.so" % (idx, j), size, 0.2, r.randrange(1 << 30)))
        rest -= size
        j += 1
    for path, size, seed in spec.get("changed", []):
        files.append((path, size, 1.0, seed))
    return files


def write_layer(args):
    spec, blobs = args
    files = layer_files(spec)
    dirs = set()
    for p, *_ in files:
        d = os.path.dirname(p)
        while d not in ("/", "") and d not in dirs:
            dirs.add(d)
            d = os.path.dirname(d)
    tmp = tempfile.NamedTemporaryFile(dir=blobs, delete=False)
    diff = hashlib.sha256()
    comp = hashlib.sha256()

    class Out:  # gzip stream into the blob, hashing both sides
        def __init__(self):
            self.gz = gzip.GzipFile(fileobj=self, mode="wb", compresslevel=1, mtime=0)

        def write(self, b):  # from GzipFile: compressed bytes
            comp.update(b)
            tmp.write(b)
            return len(b)

        def flush(self):
            pass

    out = Out()

    class Tee:
        def write(self, b):
            diff.update(b)
            out.gz.write(b)
            return len(b)

        def flush(self):
            pass

    with tarfile.open(fileobj=Tee(), mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for d in sorted(dirs):
            ti = tarfile.TarInfo("." + d)
            ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, 1700000000
            tar.addfile(ti)
        for path, size, compressible, seed in files:
            ti = tarfile.TarInfo("." + path)
            ti.size, ti.mode, ti.mtime = size, 0o644, 1700000000
            tar.addfile(ti, io.BytesIO(content(random.Random(seed), size, compressible)))
    out.gz.close()
    tmp.close()
    size = os.path.getsize(tmp.name)
    digest = comp.hexdigest()
    os.replace(tmp.name, os.path.join(blobs, digest))
    return {"digest": "sha256:" + digest, "size": size, "diff_id": "sha256:" + diff.hexdigest(), "files": len(files)}


def write_blob(blobs, data):
    h = hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, h), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + h, "size": len(data)}


def write_layout(out, layers, tag):
    blobs = os.path.join(out, "blobs", "sha256")
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
        "rootfs": {"type": "layers", "diff_ids": [l["diff_id"] for l in layers]},
    }, sort_keys=True).encode()
    cd = write_blob(blobs, config)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **cd},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": l["digest"],
                    "size": l["size"]} for l in layers],
    }, sort_keys=True).encode()
    md = write_blob(blobs, manifest)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        f.write('{"imageLayoutVersion":"1.0.0"}')
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json", **md,
            "annotations": {"org.opencontainers.image.ref.name": tag}}]}, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=68000)
    ap.add_argument("--mb", type=int, default=1200)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--big-mb", type=int, default=256, help="size of the largest libraries")
    ap.add_argument("--rebuild")
    ap.add_argument("--add-files", type=int, default=2000)
    ap.add_argument("--add-mb", type=int, default=50)
    ap.add_argument("--change", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--tag", default="1")
    a = ap.parse_args()
    specs = []
    for i in range(a.layers):
        specs.append({"index": i, "seed": 1000 + i, "files": a.files // a.layers,
                      "bytes": (a.mb << 20) // a.layers, "big": a.big_mb << 20})
    for d in [a.out] + ([a.rebuild] if a.rebuild else []):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "blobs", "sha256"))
    blobs = os.path.join(a.out, "blobs", "sha256")
    with multiprocessing.Pool(a.jobs) as pool:
        layers = pool.map(write_layer, [(s, blobs) for s in specs])
    write_layout(a.out, layers, a.tag)
    print("%s: %d layers, %d files, %.0f MiB compressed" % (
        a.out, len(layers), sum(l["files"] for l in layers), sum(l["size"] for l in layers) / 2**20))
    if a.rebuild:
        # The rebuilt image: the same layers (hard-linked blobs) plus a new
        # top one with new files and `change` files of the previous top
        # layer rewritten.
        top = layer_files(specs[-1])
        r = random.Random(99)
        changed = [(p, s + 17, r.randrange(1 << 30)) for p, s, c, _ in r.sample(top, a.change)]
        spec = {"index": a.layers, "seed": 5000, "files": a.add_files, "bytes": a.add_mb << 20,
                "big": a.big_mb << 20, "changed": changed}
        blobs2 = os.path.join(a.rebuild, "blobs", "sha256")
        for l in layers:
            os.link(os.path.join(blobs, l["digest"][7:]), os.path.join(blobs2, l["digest"][7:]))
        new = write_layer((spec, blobs2))
        write_layout(a.rebuild, layers + [new], a.tag)
        print("%s: new top layer of %d files, %.1f MiB compressed" % (a.rebuild, new["files"], new["size"] / 2**20))


if __name__ == "__main__":
    main()
