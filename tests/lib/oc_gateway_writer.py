#!/usr/bin/env python3
"""A writer that behaves like the OpenClaw gateway: one connection to a
per-agent database, kept open, one committed INSERT per assistant message.
Reads a sequence number per line on stdin, inserts that message, answers
"ok N" once committed. Usage: oc_gateway_writer.py DB SESSION_ID"""
import json
import sqlite3
import sys

db, sid = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA synchronous=FULL")
con.execute("INSERT OR IGNORE INTO session_windows(session_id, session_key, created_at, updated_at) "
            "VALUES (?, 'agent:main:' || ?, 1, 1)", (sid, sid))
head = {"type": "session", "version": 4, "id": sid, "timestamp": "2026-11-30T12:00:00.000Z", "cwd": "/w"}
con.execute("INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES (?, 0, ?, 1796040000000)",
            (sid, json.dumps(head)))
for line in sys.stdin:
    n = int(line)
    ev = {"type": "message", "id": "gw%06d" % n, "parentId": None, "timestamp": "2026-11-30T12:00:00.000Z",
          "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}], "api": "openai-responses",
                      "provider": "openai", "model": "gpt-5.1",
                      "usage": {"input": 1000, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1010,
                                "cost": {"total": 0.002}},
                      "stopReason": "stop", "timestamp": 1796040000000 + n}}
    con.execute("INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES (?, ?, ?, 1796040000000)",
                (sid, n, json.dumps(ev)))
    print("ok", n, flush=True)
