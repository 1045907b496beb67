#!/usr/bin/env python3
"""Generates pi v3 session files for system tests and benchmarks, with the
exact totals they hold (printed as JSON), so tests compare the daemon's
ledger against numbers computed here, independently of the C code.

  gen_pi.py corpus DIR --files N --mb M [--seed S]    many sessions, ~M MB total
  gen_pi.py corpus DIR --files N --pairs P --small     dense: P small calls per file
  ... corpus --forks K                                  every Kth file a fork of the one
      before it: its first half copied verbatim (same entries; counted once in the
      totals, and separately under "copied", what a tool without cross-file
      dedup counts a second time)
  gen_pi.py session FILE --calls K [--seed S] [--cwd P] header + K calls
  gen_pi.py append FILE --calls K [--seed S]          K more calls (no header)
Realistic shape: user and tool-result lines of 1-50 KB between assistant lines.
"""
import argparse, json, os, random, sys, time, uuid

BASE_MS = 1796000000000  # late 2026


class Totals:
    def __init__(self):
        self.t = dict(events=0, input=0, output=0, cache_read=0, cache_write=0, total=0,
                      cost_nano=0, calls=0, bytes=0)

    def add(self, u, cost_nano, calls):
        t = self.t
        t["events"] += 1
        t["input"] += u["input"]; t["output"] += u["output"]
        t["cache_read"] += u["cacheRead"]; t["cache_write"] += u["cacheWrite"]
        t["total"] += u["totalTokens"]; t["cost_nano"] += cost_nano; t["calls"] += calls


def header(sid, cwd, ts_ms):
    return {"type": "session", "version": 3, "id": sid, "timestamp": iso(ts_ms), "cwd": cwd}


def iso(ms):
    import datetime
    d = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def filler(rng, n):
    words = ["alpha", "beta", "gamma", "delta", "lorem", "ipsum", "usage-free", "text", "code", "{", "}", "\"q\""]
    out, size = [], 0
    while size < n:
        w = rng.choice(words)
        out.append(w); size += len(w) + 1
    return " ".join(out)


def assistant(rng, seq, ts_ms, tot, ncalls=None):
    inp, outp = rng.randint(10, 5000), rng.randint(1, 2000)
    cr, cw = rng.choice([0, rng.randint(0, 20000)]), rng.choice([0, 0, rng.randint(0, 512)])
    cost = round(rng.uniform(0.0001, 0.05), 6)
    u = {"input": inp, "output": outp, "cacheRead": cr, "cacheWrite": cw,
         "totalTokens": inp + outp + cr + cw,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}
    if ncalls is None:
        ncalls = rng.choice([0, 0, 1, 2])
    content = [{"type": "text", "text": "reply %d" % seq}]
    for i in range(ncalls):
        content.append({"type": "toolCall", "id": "call_%d_%d" % (seq, i), "name": rng.choice(["bash", "read", "edit"]),
                        "arguments": {"command": "echo %d" % i}})
    msg = {"role": "assistant", "content": content, "api": "openai-completions", "provider": "prov",
           "model": rng.choice(["model-a", "model-b"]), "usage": u, "stopReason": "stop",
           "timestamp": ts_ms, "responseId": "resp-%s" % uuid.UUID(int=rng.getrandbits(128))}
    tot.add(u, int(round(cost * 1e9)), ncalls)
    return {"type": "message", "id": "%08x" % rng.getrandbits(32), "parentId": None,
            "timestamp": iso(ts_ms + 5), "message": msg}


def user(rng, ts_ms, size):
    return {"type": "message", "id": "%08x" % rng.getrandbits(32), "parentId": None, "timestamp": iso(ts_ms),
            "message": {"role": "user", "content": [{"type": "text", "text": filler(rng, size)}], "timestamp": ts_ms}}


def write_calls(f, rng, k, tot, start_ms, fill_kb=(1, 50), seq0=0, keep=None):
    ts = start_ms
    for i in range(k):
        ts += rng.randint(1000, 60000)
        u = json.dumps(user(rng, ts, rng.randint(fill_kb[0], fill_kb[1]) * 1024), separators=(",", ":")) + "\n"
        one = Totals()
        a = assistant(rng, seq0 + i, ts + 100, one)
        for k2, v in one.t.items():
            tot.t[k2] += v
        line = json.dumps(a, separators=(",", ":")) + "\n"
        f.write(u)
        f.write(line)
        if keep is not None:
            keep.append((u + line, one))
    return ts


class SplitWriter:
    """Writes each line in two pieces, flushed apart, as a harness that is
    killed or slow mid-write leaves it (for live and crash tests)."""

    def __init__(self, f, rng, pause):
        self.f, self.rng, self.pause = f, rng, pause

    def write(self, s):
        k = self.rng.randint(1, max(1, len(s) - 1))
        self.f.write(s[:k]); self.f.flush()
        time.sleep(self.pause)
        self.f.write(s[k:]); self.f.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["corpus", "session", "append"])
    ap.add_argument("path")
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--calls", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=0, help="corpus: this many calls per file (instead of --mb)")
    ap.add_argument("--forks", type=int, default=0, help="corpus: every Kth file forks the one before")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cwd", default="/home/u/proj")
    ap.add_argument("--small", action="store_true", help="small filler lines (fast tests)")
    ap.add_argument("--split", type=float, default=None, metavar="SECONDS",
                    help="append: write each line in two flushed pieces, SECONDS apart")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tot = Totals()
    fill = (0, 1) if a.small else (1, 50)
    if a.mode == "corpus":
        per_file = int(a.mb * 1024 * 1024 / a.files)
        copied = Totals()
        prev, prev_sid = [], None
        for n in range(a.files):
            proj = "--home-u-proj%d--" % (n % 20)
            d = os.path.join(a.path, proj)
            os.makedirs(d, exist_ok=True)
            sid = str(uuid.UUID(int=rng.getrandbits(128)))
            start = BASE_MS + n * 3600 * 1000
            fork = a.forks and n % a.forks == a.forks - 1 and prev
            keep = [] if a.forks and n % a.forks == a.forks - 2 else None
            with open(os.path.join(d, "%d_%s.jsonl" % (n, sid)), "w") as f:
                h = header(sid, "/home/u/proj%d" % (n % 20), start)
                i = 0
                if fork:
                    h["parentSession"] = prev_sid
                f.write(json.dumps(h, separators=(",", ":")) + "\n")
                if fork:
                    for text, one in prev[:len(prev) // 2]:
                        f.write(text)
                        for k2, v in one.t.items():
                            copied.t[k2] += v
                        i += 1
                ts = start
                while (i < a.pairs) if a.pairs else (f.tell() < per_file):
                    ts = write_calls(f, rng, 1, tot, ts, fill, seq0=n * 100000 + i, keep=keep)
                    i += 1
                tot.t["bytes"] += f.tell()
            if keep is not None:
                prev, prev_sid = keep, sid
        if a.forks:
            tot.t["copied"] = copied.t
    elif a.mode == "session":
        os.makedirs(os.path.dirname(a.path) or ".", exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        with open(a.path, "w") as f:
            f.write(json.dumps(header(sid, a.cwd, BASE_MS), separators=(",", ":")) + "\n")
            write_calls(f, rng, a.calls, tot, BASE_MS + a.seed * 1000, fill, seq0=a.seed * 1000000)
    else:
        with open(a.path, "a") as f:
            w = SplitWriter(f, random.Random(a.seed + 1), a.split) if a.split is not None else f
            write_calls(w, rng, a.calls, tot, BASE_MS + a.seed * 7919000, fill, seq0=a.seed * 1000000)
    json.dump(tot.t, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
