#!/usr/bin/env python3
"""statusline latency: runs `agentmeterctl statusline` N times with a Claude
Code-style JSON on stdin against the running daemon (whatever history it
holds) and prints p50/p99/max wall time in ms, process start included.
Usage: statusline.py AGENTMETERCTL N [ENV=VALUE ...]"""
import json, os, subprocess, sys, time

ctl, n = sys.argv[1], int(sys.argv[2])
env = dict(os.environ)
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    env[k] = v
inp = json.dumps({"session_id": "bench-0001", "model": {"id": "m", "display_name": "Bench"},
                  "cwd": "/bench", "rate_limits": {"five_hour": {"used_percentage": 10, "resets_at": 4102444800}}}).encode()
times, fallbacks = [], 0
for i in range(n):
    t0 = time.perf_counter()
    out = subprocess.run([ctl, "statusline", "--harness", "pi"], input=inp, capture_output=True, env=env).stdout
    times.append((time.perf_counter() - t0) * 1000)
    if b"agentmeter:" in out:
        fallbacks += 1
times.sort()
print("   statusline over %d runs: p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d fallback lines"
      % (n, times[n // 2], times[min(n - 1, int(n * 0.99))], times[-1], fallbacks))
