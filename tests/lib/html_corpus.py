#!/usr/bin/env python3
"""Writes pi sessions for the HTML report tests (tests/system/html.t) under
DIR (a pi sessions directory): three days of calls with a vendor cost
("$"), with a cost from the price table ("~"), unpriced ("*"), tool calls,
two models on one day, and a project and a model named to break HTML:
  html_corpus.py DIR"""
import datetime, json, os, sys, time, uuid

HOSTILE_PROJECT = "/work/<script>alert(\"pwn\")</script>'q"
HOSTILE_MODEL = "m<b>\"x\"</b>"


def iso(ms):
    d = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def session(root, name, cwd, calls, now):
    d = os.path.join(root, "--" + name + "--")
    os.makedirs(d, exist_ok=True)
    t0 = max(c[0] for c in calls) + 30
    lines = [{"type": "session", "version": 3, "id": str(uuid.uuid4()), "timestamp": iso(now - t0 * 1000),
              "cwd": cwd}]
    for ago, prov, model, inp, out, cr, cw, cost, tools in calls:
        ms = now - ago * 1000
        u = {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw, "totalTokens": inp + out + cr + cw}
        if cost is not None:
            u["cost"] = {"total": cost}
        content = [{"type": "text", "text": "ok"}] + [
            {"type": "toolCall", "id": "call_" + uuid.uuid4().hex[:6], "name": t, "arguments": {}} for t in tools]
        lines.append({"type": "message", "id": uuid.uuid4().hex[:8], "parentId": None, "timestamp": iso(ms),
                      "message": {"role": "assistant", "content": content, "api": "openai-completions",
                                  "provider": prov, "model": model, "usage": u,
                                  "stopReason": "toolUse" if tools else "stop", "timestamp": ms,
                                  "responseId": "resp-" + uuid.uuid4().hex}})
    with open(os.path.join(d, name + ".jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def main():
    root = sys.argv[1]
    # the last noon UTC (never in the future), so that each call stays on
    # its day whatever the hour the test runs
    t = datetime.datetime.now(datetime.timezone.utc)
    noon = t.replace(hour=12, minute=0, second=0, microsecond=0)
    if noon > t:
        noon -= datetime.timedelta(days=1)
    now = int(noon.timestamp() * 1000)
    D = 86400
    session(root, "alpha", "/work/alpha", [
        (2 * D, "prov", "model-a", 1000, 200, 5000, 100, 3.0, ["bash", "read"]),
        (D, "prov", "model-a", 800, 100, 0, 0, 1.5, ["bash"])], now)
    session(root, "beta", "/work/beta", [
        (D - 60, "anthropic", "claude-sonnet-4-5", 20000, 1000, 40000, 2000, None, ["edit"]),
        (120, "anthropic", "claude-sonnet-4-5", 10000, 500, 0, 0, None, [])], now)
    session(root, "gamma", HOSTILE_PROJECT, [
        (90, "mystery", "mystery-model", 5000, 100, 0, 0, None, []),
        (60, "prov", HOSTILE_MODEL, 100, 100, 0, 0, 0.75, ["bash"])], now)


main()
