#!/usr/bin/env python3
"""Hostile and odd control-socket clients for tests/system/clients.t, each
printing one JSON line of what it saw:

  clients.py slow SOCK N INTERVAL    N clients trickling a request a byte per INTERVAL s
  clients.py pipeline SOCK N HOLD    N report requests in one write, unread for HOLD s
  clients.py halfclose SOCK REQUEST  send REQUEST, shut down writing, read the whole reply
  clients.py request SOCK REQUEST    one request, one reply line (5 s timeout)
  clients.py notify PATH OUT         a NOTIFY_SOCKET: appends "monotonic-time message" lines to OUT
"""
import json
import os
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def slow(path, n, interval):
    req = b'{"v":1,"cmd":"version"}\n'
    socks, closed_at = [], {}
    for _ in range(n):
        try:
            socks.append(connect(path))
        except OSError:
            break
    t0 = time.monotonic()
    for i in range(len(req)):
        for k, s in enumerate(socks):
            if k in closed_at:
                continue
            try:
                s.send(req[i:i + 1])
                s.setblocking(False)
                try:
                    d = s.recv(4096)
                    if d == b"":
                        closed_at[k] = time.monotonic() - t0
                except BlockingIOError:
                    pass
                s.setblocking(True)
            except OSError:
                closed_at[k] = time.monotonic() - t0
        if len(closed_at) == len(socks):
            break
        time.sleep(interval)
    # the ones that sent everything: did they get an answer?
    answered = 0
    for k, s in enumerate(socks):
        if k in closed_at:
            continue
        s.settimeout(2)
        try:
            if s.recv(4096):
                answered += 1
        except OSError:
            pass
    print(json.dumps({"connected": len(socks), "closed_while_sending": len(closed_at),
                      "answered": answered, "request_bytes": len(req),
                      "last_close_s": max(closed_at.values()) if closed_at else None}))


def pipeline(path, n, hold):
    s = connect(path)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reqs = b"".join(b'{"v":1,"cmd":"report","report":"daily","tz":"UTC"}\n' for _ in range(n))
    s.setblocking(False)
    sent = 0
    t0 = time.monotonic()
    while sent < len(reqs) and time.monotonic() - t0 < hold:
        try:
            sent += s.send(reqs[sent:])
        except BlockingIOError:
            time.sleep(0.05)
        except OSError:
            break
    while time.monotonic() - t0 < hold:
        time.sleep(0.05)
    # now read what the daemon left for us, until it closes
    s.setblocking(True)
    s.settimeout(5)
    data, closed = b"", False
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            data += d
    except OSError:
        closed = True
    print(json.dumps({"requests": n, "bytes_sent": sent, "bytes_of_requests": len(reqs),
                      "answers": data.count(b"\n"), "closed": closed}))


def halfclose(path, req):
    s = connect(path)
    t0 = time.monotonic()
    s.sendall(req.encode() + b"\n")
    s.shutdown(socket.SHUT_WR)
    s.settimeout(30)
    data = b""
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        data += d
    out = {"bytes": len(data), "lines": data.count(b"\n"), "seconds": round(time.monotonic() - t0, 3)}
    try:
        o = json.loads(data.split(b"\n")[0])
        out["ok"] = o.get("ok")
        res = o.get("result") or {}
        if "sources" in res:
            out["sources"] = len(res["sources"])
    except ValueError:
        out["ok"] = None
    print(json.dumps(out))


def request(path, req):
    s = connect(path)
    s.settimeout(5)
    t0 = time.monotonic()
    s.sendall(req.encode() + b"\n")
    f = s.makefile("rb")
    line = f.readline()
    print(json.dumps({"reply": json.loads(line) if line else None,
                      "seconds": round(time.monotonic() - t0, 3)}))


def notify(path, out):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    with open(out, "a", buffering=1) as f:
        while True:
            d = s.recv(65536).decode(errors="replace")
            for m in d.split("\n"):
                if m:
                    f.write("%.3f %s\n" % (time.monotonic(), m))


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "slow":
        slow(path, int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "pipeline":
        pipeline(path, int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "halfclose":
        halfclose(path, sys.argv[3])
    elif cmd == "request":
        request(path, sys.argv[3])
    elif cmd == "notify":
        notify(path, sys.argv[3])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
