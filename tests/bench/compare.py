#!/usr/bin/env python3
"""A peer's token totals against the generator's (which are ours when our
totals check passed): equal, or how far off and whether the difference is
exactly the fork copies counted a second time.
  compare.py EXPECTED.json '[input,output,cache_read,cache_write,total]'"""
import json, sys

exp = json.load(open(sys.argv[1]))
got = json.loads(sys.argv[2])
if not isinstance(got, list) or len(got) != 5 or any(not isinstance(x, (int, float)) for x in got):
    print("no totals (the peer failed or printed no JSON)")
    sys.exit(0)
names = ["input", "output", "cache_read", "cache_write", "total"]
want = [exp[k] for k in names]
cp = exp.get("copied", {})
copied = [cp.get(k, 0) for k in names]
diff = [g - w for g, w in zip(got, want)]
if diff == [0] * 5:
    print("equal to ours")
elif diff == copied:
    print("over ours by the fork copies: +%d input tokens (+%.1f%%), +%d total tokens, %d records counted twice"
          % (diff[0], 100.0 * diff[0] / max(want[0], 1), diff[4], cp.get("events", 0)))
else:
    print("differ: %s (ours %s; fork copies %s)" % (got, want, copied))
