#!/usr/bin/env python3
"""OpenCode databases for tests/system/sqlite-faults.t: finished assistant
messages numbered A..B (message i: input i, output 1, cost $0.001, created
at $OC_T0 + i s, so the same i is the same call in any database), written
with the fixture schema (fixtures/opencode/schema.sql), WAL as OpenCode
opens it.

  make DB A B [rev] [events] [pad=N]   a new database (rev: the rows inserted
                                       in reverse order, so other rowids;
                                       events: a message.updated event per
                                       row; pad: N bytes more per row)
  grow DB A B                          rows A..B appended one commit each, the
                                       WAL never checkpointed (autocheckpoint
                                       off, and a second connection holding a
                                       read transaction open all along); then
                                       the reader gone, a checkpoint and five
                                       rows B+1..B+5 written from the WAL's
                                       start again (new salts, same file size)
  copy SRC DST A B                     a new database with SRC's messages in
                                       the reverse order of their rowids (other
                                       rowids, the same calls), then rows A..B
  hostile DB                           rows 3201..3209 whose token values are text,
                                       negative, fractional, 2^63-1 or null,
                                       and typed columns holding text
Prints what it did on stdout (grow: the -wal's largest size in bytes)."""
import json
import os
import sqlite3
import sys

SCHEMA = os.path.join(os.environ.get("AM_SRCDIR", "."), "fixtures/opencode/schema.sql")
T0 = int(os.environ["OC_T0"])


def message(i, pad=0, tokens=None, cost=0.001):
    t = T0 + i * 1000
    d = {"id": "msg_%06d" % i, "sessionID": "ses_f", "role": "assistant", "mode": "build", "agent": "build",
         "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
         "path": {"cwd": "/home/u/faults", "root": "/home/u/faults"}, "cost": cost,
         "tokens": tokens if tokens is not None else
         {"total": i + 1, "input": i, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}},
         "time": {"created": t, "completed": t + 500}, "finish": "stop"}
    if pad:
        d["pad"] = "p" * pad
    return d


def connect(db, new):
    if new and os.path.exists(db):
        os.unlink(db)
    con = sqlite3.connect(db, isolation_level=None)
    if new:
        con.executescript(open(SCHEMA).read())
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA busy_timeout=5000")
    return con


def insert(cur, d, events, created=None, updated=None):
    t = d["time"]["created"]
    cur.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                (d["id"], d["sessionID"], t if created is None else created,
                 t + 500 if updated is None else updated, json.dumps(d)))
    if events:
        cur.execute("INSERT INTO event VALUES (?, ?, (SELECT count(*) FROM event), 'message.updated.1', ?)",
                    ("evt_" + d["id"], d["sessionID"], json.dumps({"sessionID": d["sessionID"], "info": d})))


def copy(src, dst, a, b):
    old = sqlite3.connect(src).execute("SELECT id, session_id, time_created, time_updated, data FROM message "
                                       "ORDER BY rowid DESC").fetchall()
    con = connect(dst, True)
    con.execute("BEGIN")
    con.executemany("INSERT INTO message VALUES (?, ?, ?, ?, ?)", old)
    for i in range(a, b + 1):
        insert(con, message(i), False)
    con.execute("COMMIT")
    con.close()
    print("copied %d rows, added %d..%d" % (len(old), a, b))


def make(db, a, b, opts):
    con = connect(db, True)
    pad = next((int(o[4:]) for o in opts if o.startswith("pad=")), 0)
    ids = range(b, a - 1, -1) if "rev" in opts else range(a, b + 1)
    con.execute("BEGIN")
    for i in ids:
        insert(con, message(i, pad), "events" in opts)
    con.execute("COMMIT")
    con.close()  # the last connection: everything checkpointed, no -wal left
    print("made %s with rows %d..%d" % (db, a, b))


def grow(db, a, b):
    con = connect(db, False)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("PRAGMA synchronous=NORMAL")
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM message").fetchone()  # holds its snapshot: no checkpoint can end
    wal, biggest = db + "-wal", 0
    for i in range(a, b + 1):
        con.execute("BEGIN IMMEDIATE")
        insert(con, message(i), False)
        con.execute("COMMIT")
    biggest = max(biggest, os.path.getsize(wal))
    reader.execute("COMMIT")
    reader.close()
    con.execute("PRAGMA wal_checkpoint(RESTART)")  # the next write starts the WAL over
    for i in range(b + 1, b + 6):
        con.execute("BEGIN IMMEDIATE")
        insert(con, message(i), False)
        con.execute("COMMIT")
    print(biggest)
    con.close()


# (id, tokens object, cost, time_created column, time_updated column): what
# a hostile or broken writer could leave
HOSTILE = [
    (3201, {"input": "5000", "output": 1}, 0.001, None, None),             # text
    (3202, {"input": -5000, "output": 1}, 0.001, None, None),              # negative
    (3203, {"input": 9223372036854775807, "output": 1}, 0.001, None, None),  # 2^63-1
    (3204, {"input": None, "output": 1}, 0.001, None, None),               # null (NaN in JS)
    (3205, {"input": 10, "output": 1, "cache": {"read": -1}}, 0.001, None, None),
    (3206, {"input": 10, "output": 1}, -2.5, None, None),                  # negative cost
    (3207, {"input": 1e300, "output": 1}, 0.001, None, None),              # beyond int64
    (3208, {"input": 40.4, "output": 1}, 0.001, None, None),               # fractional: rounded (40)
    (3209, {"input": 7, "output": 1}, 0.001, "not a time", -1),            # typed columns holding junk
]


def hostile(db):
    con = connect(db, False)
    con.execute("BEGIN")
    for i, tokens, cost, created, updated in HOSTILE:
        insert(con, message(i, tokens=tokens, cost=cost), False, created, updated)
    # a data column that is NULL-ish JSON, a number, a blob: not a message
    con.execute("INSERT INTO message VALUES ('msg_num', 'ses_f', 1, 1, 12345)")
    con.execute("INSERT INTO message VALUES ('msg_blob', 'ses_f', 1, 1, x'00ff00')")
    con.execute("INSERT INTO message VALUES ('msg_null', 'ses_f', 1, 1, 'null')")
    con.execute("COMMIT")
    con.close()
    print("hostile rows written")


cmd, db = sys.argv[1], sys.argv[2]
if cmd == "make":
    make(db, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
elif cmd == "grow":
    grow(db, int(sys.argv[3]), int(sys.argv[4]))
elif cmd == "copy":
    copy(db, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
elif cmd == "hostile":
    hostile(db)
else:
    sys.exit("unknown command " + cmd)
