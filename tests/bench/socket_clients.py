#!/usr/bin/env python3
"""The daemon's own answer times under concurrent clients, without a new
agentmeterctl process per query (clients.py's figure includes starting one,
which on a 2-core machine with 50 at once is most of it): C threads, each
Q requests on a new connection to the control socket, alternating report
daily and model (the same requests agentmeterctl sends), optionally with
`session` ones among them; timed from connect to the answer's last byte.
Prints p50/p99/max in ms and the daemon's CPU time over the run.

  socket_clients.py SOCKET [--clients C] [--each Q] [--session-every K] [--pid PID]
"""
import argparse, os, socket, threading, time

from bench_clients import percentile, run_clients

ap = argparse.ArgumentParser()
ap.add_argument("sock")
ap.add_argument("--clients", type=int, default=50)
ap.add_argument("--each", type=int, default=4)
ap.add_argument("--session-every", type=int, default=0,
                help="every Kth request is `report session` (the default limit, as agentmeterctl asks)")
ap.add_argument("--pid", type=int, default=0, help="the daemon's pid: its CPU time is printed")
a = ap.parse_args()


def request(kind):
    extra = ',"limit":50' if kind == "session" else ""
    return ('{"v":1,"cmd":"report","report":"%s","tz":"UTC"%s}\n' % (kind, extra)).encode()


def ask(req):
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX)
    s.connect(a.sock)
    s.sendall(req)
    buf = bytearray()
    while not buf.endswith(b"\n"):
        d = s.recv(1 << 20)
        if not d:
            break
        buf += d
    s.close()
    return (time.monotonic() - t0) * 1000, buf.startswith(b'{"v":1,"ok":true')


def cpu(pid):
    if not pid:
        return 0
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


res, lock = [], threading.Lock()


def client(k):
    for j in range(a.each):
        n = k * a.each + j
        kind = "session" if a.session_every and n % a.session_every == 0 else ("daily" if (k + j) % 2 == 0 else "model")
        r = ask(request(kind))
        with lock:
            res.append(r)


c0 = cpu(a.pid)
el = run_clients(a.clients, client)
lat = sorted(r[0] for r in res)
print("   %d socket clients x %d reports: p50 %.2f ms  p99 %.2f ms  max %.2f ms  (%d answers, %d not ok, %.2f s%s)"
      % (a.clients, a.each, percentile(lat, 0.5), percentile(lat, 0.99), lat[-1], len(res), sum(1 for r in res if not r[1]), el,
         ", daemon CPU %.2f s" % (cpu(a.pid) - c0) if a.pid else ""))
