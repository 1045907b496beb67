#!/usr/bin/env python3
"""Answer times of `agentmeterctl` as a user sees them (a new process per
query, so process start is included): N sequential runs of each report, then
C concurrent clients of Q reports each while a writer appends calls to a
session (so ingest runs meanwhile). Prints p50/p99/max in ms.

  clients.py CTL SESSION_FILE [--seq N] [--clients C] [--each Q]
The environment (HOME, XDG_RUNTIME_DIR ...) is passed to CTL as is."""
import argparse, json, os, subprocess, sys, threading, time, importlib.util, random

from bench_clients import percentile, run_clients

ap = argparse.ArgumentParser()
ap.add_argument("ctl")
ap.add_argument("session")
ap.add_argument("--seq", type=int, default=100)
ap.add_argument("--clients", type=int, default=50)
ap.add_argument("--each", type=int, default=4)
a = ap.parse_args()
gen_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "gen_pi.py")
spec = importlib.util.spec_from_file_location("gen", gen_path)
g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)


errors = {}


def one(args):
    t0 = time.monotonic()
    r = subprocess.run([a.ctl] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode:
        msg = r.stderr.decode(errors="replace").strip().splitlines()
        errors.setdefault((r.returncode, msg[-1][:200] if msg else ""), 0)
        errors[(r.returncode, msg[-1][:200] if msg else "")] += 1
    return (time.monotonic() - t0) * 1000, r.returncode


def summary(name, lat, bad):
    lat = sorted(lat)
    print("   %-34s p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  (%d runs%s)" % (
        name, percentile(lat, 0.5), percentile(lat, 0.99), lat[-1], len(lat), ", %d failed" % bad if bad else ""))


# report session: its default (the newest 50 sessions) and every session
for args, n in ((["report", "daily", "--json"], a.seq), (["report", "session", "--json"], max(10, a.seq // 5)),
                (["report", "session", "--all", "--json"], 5)):
    res = [one(args) for _ in range(n)]
    summary(" ".join(args), [r[0] for r in res], sum(1 for r in res if r[1]))

stop = threading.Event()


def writer():
    rng = random.Random(time.time_ns())
    tot = g.Totals()
    os.makedirs(os.path.dirname(a.session), exist_ok=True)
    with open(a.session, "a") as f:
        if f.tell() == 0:
            f.write(json.dumps(g.header("bench-clients", "/bench", g.BASE_MS), separators=(",", ":")) + "\n")
        i = 0
        while not stop.is_set():
            f.write(json.dumps(g.assistant(rng, 800000 + i, g.BASE_MS + 2 * 10**10 + i * 1000, tot, ncalls=1),
                               separators=(",", ":")) + "\n")
            f.flush()
            i += 1
            time.sleep(0.002)


results, lock = [], threading.Lock()


def client(k):
    for j in range(a.each):
        r = one(["report", "daily" if (k + j) % 2 == 0 else "model", "--json"])
        with lock:
            results.append(r)


w = threading.Thread(target=writer)
w.start()
time.sleep(0.2)
elapsed = run_clients(a.clients, client)
stop.set()
w.join()
summary("%d clients x %d reports, ingesting" % (a.clients, a.each), [r[0] for r in results],
        sum(1 for r in results if r[1]))
print("   (all %d answered in %.2f s)" % (len(results), elapsed))
for (rc, msg), k in errors.items():
    print("   %d failed with exit %d: %s" % (k, rc, msg))
