#!/usr/bin/env python3
"""Generates Codex CLI rollouts (the token_count-only form: cumulative
total_token_usage and the call's last_token_usage) with the exact totals
they hold in the ledger's terms, printed as JSON, for tests that need big
Codex sources (the torture suite compresses them to .jsonl.zst):

  gen_codex.py rollout DIR --calls N [--seed S] [--model M]
      one rollout-<ts>-<uuid>.jsonl in DIR (sessions/YYYY/MM/DD) with N calls,
      1-30 KB of assistant text and a function call between them
Totals: events, input (uncached), output, cache_read, cache_write (0),
total, cost_nano (0: the default model is in no price table, so the rows
are unpriced and add no cost)."""
import argparse, datetime, json, os, random, uuid

BASE_MS = 1796000000000  # late 2026, as gen_pi.py
WORDS = ("the", "file", "test", "\"quoted\"", "back\\slash", "token_count", "diff", "--", "{}", "ok",
         "compile", "error:", "line", "patch", "\u00e9t\u00e9", "run", "shell", "call")


def iso(ms):
    d = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def line(ms, typ, payload):
    return json.dumps({"timestamp": iso(ms), "type": typ, "payload": payload}, separators=(",", ":")) + "\n"


def usage(inp, cached, out, reasoning):
    return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
            "reasoning_output_tokens": reasoning, "total_tokens": inp + out}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["rollout"])
    ap.add_argument("dir")
    ap.add_argument("--calls", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", default="torture-codex-model")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    ms = BASE_MS + a.seed * 3600 * 1000
    sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    os.makedirs(a.dir, exist_ok=True)
    stamp = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H-%M-%S")
    path = os.path.join(a.dir, "rollout-%s-%s.jsonl" % (stamp, sid))
    tot = dict(events=0, input=0, output=0, cache_read=0, cache_write=0, total=0, cost_nano=0)
    cum = [0, 0, 0, 0]  # input, cached, output, reasoning
    with open(path, "w") as f:
        f.write(line(ms, "session_meta", {"id": sid, "timestamp": iso(ms), "cwd": "/home/u/torture",
                                          "originator": "codex_cli_rs", "cli_version": "0.104.0",
                                          "source": "cli", "model_provider": "openai"}))
        f.write(line(ms + 1, "turn_context", {"turn_id": "t-0", "cwd": "/home/u/torture", "model": a.model,
                                              "effort": "medium"}))
        for i in range(a.calls):
            ms += 1000 + rng.randrange(5000)
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(150, 5000)))
            f.write(line(ms, "response_item", {"type": "message", "role": "assistant",
                                               "content": [{"type": "output_text", "text": text}]}))
            f.write(line(ms + 1, "response_item", {"type": "function_call", "call_id": "call_%d" % i,
                                                   "name": "shell", "arguments": "{\"cmd\":\"ls\"}"}))
            inp = rng.randrange(1000, 60000)
            cached = rng.randrange(0, inp)
            out = rng.randrange(10, 3000)
            reasoning = rng.randrange(0, out)
            cum = [cum[0] + inp, cum[1] + cached, cum[2] + out, cum[3] + reasoning]
            info = {"total_token_usage": usage(*cum), "last_token_usage": usage(inp, cached, out, reasoning),
                    "model_context_window": 258400}
            f.write(line(ms + 2, "event_msg", {"type": "token_count", "info": info, "rate_limits": None}))
            tot["events"] += 1
            tot["input"] += inp - cached
            tot["cache_read"] += cached
            tot["output"] += out
            tot["total"] += inp + out
    print(json.dumps(tot))


if __name__ == "__main__":
    main()
