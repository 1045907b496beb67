#!/usr/bin/env python3
"""A writer that behaves like OpenCode 1.18 on its database: one connection,
kept open, journal_mode=WAL; each change of a message is an immediate
transaction that updates the row in place and appends its message.updated
event. Reads commands on stdin, answers "ok" once committed:

  session SID DIR              a session
  start MID SID T PROV MODEL   an assistant row inserted with every token 0
  final MID IN OUT REAS CR CW COST   its final tokens and cost (output
                               without reasoning, as the database era writes it)
  complete MID                 time.completed set
  fork SRC DST                 every message of SRC copied into DST under new ids

Usage: opencode_writer.py DB"""
import json
import sqlite3
import sys

con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA journal_mode=WAL")
con.execute("PRAGMA busy_timeout=5000")
msgs = {}  # id -> (session, data)
seq = {}
n_event = 0


def event(cur, sid, mid, data):
    global n_event
    n_event += 1
    s = seq.get(sid, -1) + 1
    seq[sid] = s
    info = dict(data, id=mid, sessionID=sid)
    cur.execute("INSERT INTO event VALUES (?, ?, ?, 'message.updated.1', ?)",
                ("evt_w%06d" % n_event, sid, s, json.dumps({"sessionID": sid, "info": info})))


def put(mid, insert, updated):
    sid, data = msgs[mid]
    cur = con.cursor()
    cur.execute("BEGIN IMMEDIATE")
    if insert:
        cur.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                    (mid, sid, data["time"]["created"], updated, json.dumps(data)))
    else:
        cur.execute("UPDATE message SET time_updated = ?, data = ? WHERE id = ?", (updated, json.dumps(data), mid))
    event(cur, sid, mid, data)
    cur.execute("COMMIT")


for line in sys.stdin:
    a = line.split()
    if not a:
        continue
    if a[0] == "session":
        con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                    "time_updated) VALUES (?, 'prj', 'slug', ?, 'live', '1.18.33', 1, 1)", (a[1], a[2]))
    elif a[0] == "start":
        mid, sid, t = a[1], a[2], int(a[3])
        msgs[mid] = (sid, {"parentID": "msg_user", "role": "assistant", "mode": "build", "agent": "build",
                           "path": {"cwd": "/home/u/live", "root": "/home/u/live"}, "cost": 0,
                           "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                           "modelID": a[5], "providerID": a[4], "time": {"created": t}})
        put(mid, True, t)
    elif a[0] == "final":
        mid = a[1]
        i, o, r, cr, cw = (int(x) for x in a[2:7])
        sid, d = msgs[mid]
        d["cost"] = float(a[7])
        d["tokens"] = {"total": i + o + r + cr + cw, "input": i, "output": o, "reasoning": r,
                       "cache": {"write": cw, "read": cr}}
        d["finish"] = "stop"
        put(mid, False, d["time"]["created"] + 600)
    elif a[0] == "complete":
        mid = a[1]
        msgs[mid][1]["time"]["completed"] = msgs[mid][1]["time"]["created"] + 700
        put(mid, False, msgs[mid][1]["time"]["created"] + 700)
    elif a[0] == "fork":
        src, dst = a[1], a[2]
        con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                    "time_updated) VALUES (?, 'prj', 'slug', '/home/u/live', 'live (fork #1)', '1.18.33', 1, 1)",
                    (dst,))
        for mid, (sid, d) in list(msgs.items()):
            if sid == src:
                msgs[mid + "c"] = (dst, json.loads(json.dumps(d)))
                put(mid + "c", True, d["time"]["created"] + 900)
    print("ok", flush=True)
