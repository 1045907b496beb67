#!/usr/bin/env python3
"""Append-to-visible latency: subscribe to the daemon's tail stream, append
one assistant line at a time to a pi session, and time until its row
arrives. Prints p50/p99/max in ms."""
import json, os, socket, sys, time, importlib.util

sock_path, session, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
gen_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "gen_pi.py")
spec = importlib.util.spec_from_file_location("gen", gen_path)
g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)
import random
rng = random.Random(time.time_ns())  # fresh calls on every run
tot = g.Totals()
os.makedirs(os.path.dirname(session), exist_ok=True)
with open(session, "w") as f:
    f.write(json.dumps(g.header("bench-0001", "/bench", g.BASE_MS), separators=(",", ":")) + "\n")
time.sleep(0.5)
s = socket.socket(socket.AF_UNIX)
s.connect(sock_path)
s.sendall(b'{"v":1,"cmd":"tail"}\n')
buf = b""
def read_line(deadline):
    global buf
    while b"\n" not in buf:
        s.settimeout(max(0.001, deadline - time.monotonic()))
        d = s.recv(65536)
        if not d:
            raise SystemExit("daemon closed the stream")
        buf += d
    line, buf = buf.split(b"\n", 1)
    return json.loads(line)
read_line(time.monotonic() + 5)  # the ok reply
lat = []
# dated now, as a harness writes them: a line dated months away changes a
# rollup outside the report cache's window (report/cache-view.c), so every
# metrics render after it would walk every rollup, which no real append does
now_ms = int(time.time() * 1000)
with open(session, "a") as f:
    for i in range(n):
        line = json.dumps(g.assistant(rng, 900000 + i, now_ms + i * 1000, tot, ncalls=0), separators=(",", ":")) + "\n"
        t0 = time.monotonic()
        f.write(line); f.flush()
        while True:
            ev = read_line(t0 + 5)
            if ev.get("event") == "row":
                break
        lat.append((time.monotonic() - t0) * 1000)
        time.sleep(0.005)
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
print("   p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d appends" % (p(0.50), p(0.99), lat[-1], len(lat)))
