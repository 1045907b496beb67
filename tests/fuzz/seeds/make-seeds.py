#!/usr/bin/env python3
"""Writes the seeds of the zstream, archive and decode fuzz targets from the
fixtures (run from the checkout: python3 tests/fuzz/seeds/make-seeds.py).
zstream/: compressed sources as the daemon meets them (a Codex rollout,
frames one after another, a skippable frame, a cut frame, an empty frame).
archive/: a control byte (bit 0 cold, bit 1 zstd, bits 2-5 a row budget)
and an OpenClaw archive: deleted-session lines or cold restore records.
decode/: ledger row values of versions 2 and 3 (common/row.c), whole and
with a varint too long or too large."""
import json, os, subprocess

here = os.path.dirname(os.path.abspath(__file__))
fx = os.path.join(here, "..", "..", "..", "fixtures")


def zstd(data, *opts):
    return subprocess.run(["zstd", "-q", "-c", *opts], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def read(*p):
    with open(os.path.join(fx, *p), "rb") as f:
        return f.read()


def put(target, name, data):
    d = os.path.join(here, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def cold(lines):
    recs = [{"kind": "header", "version": 1}]
    for i, l in enumerate(lines.splitlines()):
        recs.append({"kind": "event", "row": {"seq": i, "event_json": l.decode()}})
    recs.append({"kind": "event", "row": {"seq": 99, "event_json": json.loads(lines.splitlines()[-1])}})
    recs.append({"kind": "fts", "row": {"text": "usage"}})
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in recs)


rollout = read("codex", "home", "sessions", "2026", "11", "30",
               "rollout-2026-11-30T13-00-00-0000000d-0000-7000-8000-00000000both.jsonl")
other = read("codex", "home", "sessions", "2026", "11", "30",
             "rollout-2026-11-30T11-00-00-0000000b-0000-7000-8000-00000000fork.jsonl")
z = zstd(rollout, "-3")
put("zstream", "rollout.jsonl.zst", z)
put("zstream", "two-frames.zst", z + zstd(other, "-1"))
put("zstream", "skippable.zst", b"\x50\x2a\x4d\x18" + (8).to_bytes(4, "little") + b"metadata" + z)
put("zstream", "cut.zst", z[: len(z) * 2 // 3])
put("zstream", "empty-frame.zst", zstd(b""))
put("zstream", "no-checksum-blocks.zst", zstd(rollout * 40, "-19", "--no-check"))

deleted = read("openclaw", "archives", "deleted-zstd.jsonl")
cold_text = cold(read("openclaw", "archives", "cold-file.jsonl"))
put("archive", "deleted-identity", b"\x00" + deleted)
put("archive", "deleted-zstd", b"\x02" + zstd(deleted))
put("archive", "deleted-zstd-budget1", bytes([2 | 1 << 2]) + zstd(deleted))
put("archive", "cold-identity", b"\x01" + cold_text)
put("archive", "cold-zstd-budget2", bytes([3 | 2 << 2]) + zstd(cold_text))
put("archive", "cold-cut", b"\x03" + zstd(cold_text)[:-7])
put("archive", "deleted-no-newline", bytes([0 | 3 << 2]) + deleted.rstrip(b"\n"))


def var(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def u(n, width):
    return n.to_bytes(width, "little")


strs = [b"pi", b"sess-1", b"/home/u/proj", b"anthropic", b"claude-sonnet-4-5", b"", b"priority", b"table-2026-12-01"]
counts = [1796000000000, 1200, 340, 50000, 800, 30, 12, 52370, 1234567]  # time, input .. cost (v3 order)
v2 = (b"\x02" + u(1, 4) + b"\x01\x01" + u(counts[0], 8) + b"".join(u(c, 8) for c in (1200, 340, 50000, 800, 12, 52370, 1234567))
      + u(0x0102030405060708, 8) + u(2, 4) + b"".join(u(len(x), 2) + x for x in strs[:6]) + u(30, 8)
      + b"".join(u(len(x), 2) + x for x in strs[6:]))
v3 = (b"\x03" + var(1) + b"\x01\x01" + b"".join(var(c) for c in counts) + u(0x0102030405060708, 8) + var(2)
      + b"".join(var(len(x)) + x for x in strs))
put("decode", "row-v2", v2)
put("decode", "row-v3", v3)
put("decode", "row-v3-overlong-varint", b"\x03" + b"\x80" * 10 + b"\x00" + v3[2:])
put("decode", "row-v3-flags-past-32-bits", b"\x03" + b"\x80\x80\x80\x80\x10" + v3[2:])
put("decode", "row-v3-cut", v3[:-5])
