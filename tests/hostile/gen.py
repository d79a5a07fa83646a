#!/usr/bin/env python3
# Generates the hostile inputs of tests/hostile_bounds_test.cc (issue 15,
# "Bounded on hostile input"), streaming where they are large. Usage:
#   gen.py OUTDIR CASE
# Every image is a docker archive (Docker 25+ layout: blobs/sha256/...,
# manifest.json) whose digests are right, so that only the hostile part is.
import gzip, hashlib, io, json, os, subprocess, sys, tarfile, zlib

out, case = sys.argv[1], sys.argv[2]
BLOCK = 512


def header(name, size=0, typeflag=b"0", linkname=b"", mode=0o644):
    """A ustar header; long names go through a PAX record first."""
    pax = b""
    if len(name) > 100 or len(linkname) > 100:
        recs = b""
        for k, v in ((b"path", name), (b"linkpath", linkname)):
            if not v:
                continue
            body = b" " + k + b"=" + v + b"\n"
            n = len(body) + 1
            while len(str(n).encode()) + len(body) != n:
                n = len(str(n).encode()) + len(body)
            recs += str(n).encode() + body
        pax = header(b"././@PaxHeader", len(recs), b"x") + recs + b"\0" * (-len(recs) % BLOCK)
        name, linkname = name[:100], linkname[:100]
    h = bytearray(BLOCK)
    h[0:len(name)] = name
    h[100:108] = b"%07o\0" % mode
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[156:157] = typeflag
    h[157:157 + len(linkname)] = linkname
    h[257:265] = b"ustar\x0000"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return pax + bytes(h)


class Layer:
    """Streams a layer tar through an optional compressor, hashing both."""

    def __init__(self, path, comp):
        self.f = open(path, "wb")
        self.comp = comp
        self.diff = hashlib.sha256()
        self.blob = hashlib.sha256()
        self.size = 0
        if comp == "gzip":
            self.z = zlib.compressobj(6, zlib.DEFLATED, 31)
        elif comp == "zstd":
            self.p = subprocess.Popen(["zstd", "-q", "-c", "-3"], stdin=subprocess.PIPE, stdout=self.f)

    def write(self, b):
        self.diff.update(b)
        if self.comp == "gzip":
            self._out(self.z.compress(b))
        elif self.comp == "zstd":
            self.p.stdin.write(b)
        else:
            self._out(b)

    def _out(self, b):
        self.blob.update(b)
        self.size += len(b)
        self.f.write(b)

    def close(self):
        self.write(b"\0" * (2 * BLOCK))
        if self.comp == "gzip":
            self._out(self.z.flush())
        elif self.comp == "zstd":
            self.p.stdin.close()
            self.p.wait()
        self.f.close()
        if self.comp == "zstd":
            with open(self.f.name, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    self.blob.update(chunk)


def archive(layer_paths, layers, path):
    diff_ids = ["sha256:" + l.diff.hexdigest() for l in layers]
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/usr/bin"]},
                      "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
    cfg_name = "blobs/sha256/" + hashlib.sha256(cfg).hexdigest()
    names = ["blobs/sha256/" + l.blob.hexdigest() for l in layers]
    man = json.dumps([{"Config": cfg_name, "RepoTags": ["hostile:1"], "Layers": names}]).encode()
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        def add(name, data):
            i = tarfile.TarInfo(name)
            i.size = len(data)
            t.addfile(i, io.BytesIO(data))
        add(cfg_name, cfg)
        for n, p in zip(names, layer_paths):
            t.add(p, arcname=n)
        add("manifest.json", man)
    for p in layer_paths:
        os.unlink(p)


def image(name, comp, body):
    lp = os.path.join(out, name + ".layer")
    l = Layer(lp, comp)
    body(l)
    l.close()
    archive([lp], [l], os.path.join(out, name + ".tar"))


def zeros(l, name, size):
    l.write(header(name, size))
    chunk = b"\0" * (1 << 20)
    left = size
    while left:
        n = min(left, len(chunk))
        l.write(chunk[:n])
        left -= n
    l.write(b"\0" * (-size % BLOCK))


if case in ("gzip-bomb", "zstd-bomb"):
    # 1 GiB of zeros: about 1 MiB gzip (1000x), about 32 KiB zstd.
    image(case, case.split("-")[0], lambda l: (l.write(header(b"usr/", typeflag=b"5", mode=0o755)),
                                                 zeros(l, b"usr/zero.bin", 1 << 30)))
elif case == "deep-path":
    # One member whose path has 100,000 components (PAX path).
    image(case, "gzip", lambda l: l.write(header(b"/".join([b"d"] * 100000) + b"/f")))
elif case == "many-members":
    # MEMBERS empty files m/0000000, m/0000001, ... (10 million: 5 GiB of
    # tar headers, about 15 s here). Only the name and the checksum differ
    # between two headers, so each is the template with both patched in.
    n = int(os.environ.get("MEMBERS", "1000000"))
    assert n <= 16 ** 7
    def body(l):
        l.write(header(b"m/", typeflag=b"5", mode=0o755))
        t = bytearray(header(b""))
        t[148:156] = b" " * 8
        base, mid, tail = sum(t), bytes(t[9:148]), bytes(t[156:])
        probe = b"m/%07x" % 0xabc
        assert probe + mid + b"%06o\0 " % (base + sum(probe)) + tail == header(probe)
        batch = []
        for i in range(n):
            name = b"m/%07x" % i
            batch.append(name + mid + b"%06o\0 " % (base + sum(name)) + tail)
            if len(batch) == 8192:
                l.write(b"".join(batch))
                batch.clear()
        l.write(b"".join(batch))
    image(case, "zstd", body)
elif case == "odd-names":
    def body(l):
        l.write(header(b"bad\xff\xfe-utf8"))            # invalid UTF-8: Docker accepts it
        l.write(header(b"pax-nul", 0) )
        recs = b"28 path=with\0nul-inside\n"             # a NUL inside a PAX path
        l.write(header(b"././@PaxHeader", len(recs), b"x") + recs + b"\0" * (-len(recs) % BLOCK))
        l.write(header(b"after-pax"))
    image(case, None, body)
elif case == "symlink-chain":
    def body(l):
        l.write(header(b"real/", typeflag=b"5", mode=0o755))
        l.write(header(b"real/libnccl.so.2"))
        for i in range(1000):  # c0 -> c1 -> ... -> c999 -> real
            target = b"/c%d" % (i + 1) if i < 999 else b"/real"
            l.write(header(b"c%d" % i, typeflag=b"2", linkname=target))
        l.write(header(b"usr/", typeflag=b"5", mode=0o755))
        l.write(header(b"usr/lib", typeflag=b"2", linkname=b"/c0"))
        l.write(header(b"opt/", typeflag=b"5", mode=0o755))       # a loop
        l.write(header(b"opt/amazon", typeflag=b"2", linkname=b"/opt/loop"))
        l.write(header(b"opt/loop", typeflag=b"2", linkname=b"amazon/efa"))
    image(case, None, body)
elif case == "json-deep":
    # OCI layout whose index.json nests 100,000 arrays.
    d = os.path.join(out, case)
    os.makedirs(os.path.join(d, "blobs", "sha256"), exist_ok=True)
    open(os.path.join(d, "oci-layout"), "w").write('{"imageLayoutVersion": "1.0.0"}')
    open(os.path.join(d, "index.json"), "w").write("[" * 100000 + "]" * 100000)
elif case == "yaml-laughs":
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append("a%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * 9)))
    lines.append("base: nvcr.io/nvidia/pytorch:26.08-py3\nefa: {installer: 1.50.0}\nargs: *a9")
    open(os.path.join(out, case + ".yaml"), "w").write("\n".join(lines) + "\n")
elif case == "yaml-deep":
    open(os.path.join(out, case + ".yaml"), "w").write(
        "base: nvcr.io/nvidia/pytorch:26.08-py3\nsteps: " + "[" * 100000 + "]" * 100000 + "\n")
else:
    sys.exit("unknown case " + case)
