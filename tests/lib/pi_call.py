#!/usr/bin/env python3
"""Appends pi v3 lines with chosen figures, for tests that need exact costs
at the current time (budgets, top):

  pi_call.py header FILE [--cwd P]                       a session header
  pi_call.py call FILE --cost USD [--tokens N] [--model M] [--ago SECONDS]
                                                          one assistant call
Each call gets a fresh id, so appending the same figures twice is two calls."""
import argparse, datetime, json, os, time, uuid


def iso(ms):
    d = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["header", "call"])
    ap.add_argument("path")
    ap.add_argument("--cwd", default="/home/u/proj")
    ap.add_argument("--cost", type=float, default=0.0)
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--model", default="model-a")
    ap.add_argument("--ago", type=float, default=0.0)
    a = ap.parse_args()
    ms = int((time.time() - a.ago) * 1000)
    if a.mode == "header":
        os.makedirs(os.path.dirname(a.path) or ".", exist_ok=True)
        line = {"type": "session", "version": 3, "id": str(uuid.uuid4()), "timestamp": iso(ms),
                "cwd": a.cwd}
    else:
        inp = a.tokens // 2
        u = {"input": inp, "output": a.tokens - inp, "cacheRead": 0, "cacheWrite": 0,
             "totalTokens": a.tokens,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": a.cost}}
        msg = {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
               "api": "openai-completions", "provider": "prov", "model": a.model, "usage": u,
               "stopReason": "stop", "timestamp": ms, "responseId": "resp-" + uuid.uuid4().hex}
        line = {"type": "message", "id": uuid.uuid4().hex[:8], "parentId": None,
                "timestamp": iso(ms), "message": msg}
    with open(a.path, "a") as f:
        f.write(json.dumps(line, separators=(",", ":")) + "\n")


main()
