#!/usr/bin/env python3
"""One team machine's year of pi sessions for the team-scale bench
(tests/bench/team-scale.sh): FILES sessions spread evenly over 2026, each
a run of small calls 1-60 s apart, four models, tool calls on some. The
lines are the shape gen_pi.py writes (pi v3, an assistant message with
usage and its cost), written with string formatting rather than json.dumps
so that 4 million calls take minutes, not a quarter of an hour. Prints
the exact totals (JSON) the daemon must meter.

  gen_team.py DIR --calls N --files F --seed S
"""
import argparse, json, os, random

YEAR_MS = 1767225600000          # 2026-01-01T00:00:00Z
SPAN_MS = 365 * 86400 * 1000
MODELS = ("model-a", "model-b", "model-c", "model-d")
TOOLS = ("bash", "read", "edit")


def iso(ms):
    import time
    s = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000))
    return "%s.%03dZ" % (s, ms % 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--calls", type=int, required=True)
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    t = dict(events=0, input=0, output=0, cache_read=0, cache_write=0, total=0, cost_nano=0, calls=0, bytes=0)
    per, extra = divmod(a.calls, a.files)
    for n in range(a.files):
        k = per + (1 if n < extra else 0)
        d = os.path.join(a.path, "--home-u-proj%d--" % (n % 12))
        os.makedirs(d, exist_ok=True)
        sid = "%08x-%04x-4%03x-8%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
                                               rng.getrandbits(12), rng.getrandbits(48))
        ts = YEAR_MS + n * (SPAN_MS // a.files) + rng.randint(0, 3600 * 1000)
        out = ['{"type":"session","version":3,"id":"%s","timestamp":"%s","cwd":"/home/u/proj%d"}\n'
               % (sid, iso(ts), n % 12)]
        for i in range(k):
            ts += rng.randint(1000, 60000)
            inp, outp = rng.randint(10, 5000), rng.randint(1, 2000)
            cr = rng.choice((0, rng.randint(0, 20000)))
            cw = rng.choice((0, 0, rng.randint(0, 512)))
            cost_micro = rng.randint(100, 50000)         # $0.0001 .. $0.05, exact in nano
            ncalls = rng.choice((0, 0, 1, 2))
            tools = "".join(',{"type":"toolCall","id":"c%d_%d_%d","name":"%s","arguments":{}}'
                            % (n, i, j, rng.choice(TOOLS)) for j in range(ncalls))
            out.append('{"type":"message","id":"u%07x%d","parentId":null,"timestamp":"%s","message":{"role":"user",'
                       '"content":[{"type":"text","text":"q"}],"timestamp":%d}}\n' % (n, i, iso(ts), ts))
            out.append('{"type":"message","id":"a%07x%d","parentId":null,"timestamp":"%s","message":{"role":"assistant",'
                       '"content":[{"type":"text","text":"r"}%s],"api":"openai-completions","provider":"prov",'
                       '"model":"%s","usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d,"totalTokens":%d,'
                       '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":%d.%06d}},'
                       '"stopReason":"stop","timestamp":%d,"responseId":"r-%d-%s-%d"}}\n'
                       % (n, i, iso(ts + 100), tools, rng.choice(MODELS), inp, outp, cr, cw, inp + outp + cr + cw,
                          cost_micro // 1000000, cost_micro % 1000000, ts + 100, a.seed, sid, i))
            t["events"] += 1; t["input"] += inp; t["output"] += outp; t["cache_read"] += cr
            t["cache_write"] += cw; t["total"] += inp + outp + cr + cw; t["cost_nano"] += cost_micro * 1000
            t["calls"] += ncalls
        text = "".join(out)
        with open(os.path.join(d, "%d_%s.jsonl" % (n, sid)), "w") as f:
            f.write(text)
        t["bytes"] += len(text)
    json.dump(t, __import__("sys").stdout)
    print()


if __name__ == "__main__":
    main()
