#!/usr/bin/env python3
# Builds OpenClaw 2026.9-style archives for openclaw-archives.t, the way
# formats.md describes OpenClaw writing them (deleted sessions as
# session_transcript_archives blobs and published .jsonl.deleted.*.zst files,
# cold windows as sessions/cold/<sha256>.jsonl.zst restore records or blobs),
# and counts fixture sessions independently of agentmeterd.
#
#   db DB                         create DB from fixtures/openclaw/schema.sql
#   events DB JSONL               the session's lines as transcript_events rows
#   delete DB JSONL SESSDIR ENC [publish] [bad-sha]
#                                 archive the session (ENC zstd|identity),
#                                 remove its rows from transcript_events
#   cold DB JSONL SESSDIR STORAGE [keep-rows] [truncate]
#                                 move the session to cold storage (file|sqlite);
#                                 keep-rows: a restored window (its cold file stays)
#   prune DB SESSDIR              delete every archive row and archive file
#   count JSONL...                [calls, input, output, cacheRead, cacheWrite, total, cost_nano]
import hashlib
import json
import os
import sqlite3
import subprocess
import sys

NAV = None


def lines_of(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def sid_of(path):
    return json.loads(lines_of(path)[0])["id"]


def connect(db):
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    return c


def zstd(data):
    return subprocess.run(["zstd", "-q", "-c", "-19"], input=data, stdout=subprocess.PIPE, check=True).stdout


def events_of(c, path):
    """The session's event_json values in seq order: from the database when
    it holds them, else from the fixture file."""
    sid = sid_of(path)
    rows = c.execute("SELECT seq, event_json FROM transcript_events WHERE session_id=? ORDER BY seq", (sid,)).fetchall()
    if rows:
        return sid, [(s, e) for s, e in rows]
    return sid, list(enumerate(lines_of(path)))


def cmd_db(db):
    src = os.path.join(os.environ["AM_SRCDIR"], "fixtures/openclaw/schema.sql")
    os.makedirs(os.path.dirname(db), exist_ok=True)
    c = connect(db)
    c.executescript(open(src).read())
    c.close()


def cmd_events(db, path):
    c = connect(db)
    sid = sid_of(path)
    c.execute("BEGIN")
    c.execute("INSERT OR IGNORE INTO session_windows(session_id, session_key, created_at, updated_at) "
              "VALUES (?, 'agent:main:' || ?, 1, 1)", (sid, sid))
    for seq, ev in enumerate(lines_of(path)):
        c.execute("INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)",
                  (sid, seq, ev, 1796000000000 + seq))
    c.execute("COMMIT")
    c.close()


def cmd_delete(db, path, sessdir, enc, *flags):
    c = connect(db)
    sid, evs = events_of(c, path)
    raw = "".join(e + "\n" for _, e in evs).encode()
    blob = zstd(raw) if enc == "zstd" else raw
    sha = hashlib.sha256(blob).hexdigest()
    if "bad-sha" in flags:
        sha = hashlib.sha256(b"not the blob").hexdigest()
    gen = "g1"
    name = f"{sid}.jsonl.deleted.2026-11-20T08-00-00.000Z.{gen}.zst"
    c.execute("BEGIN")
    c.execute("INSERT INTO session_transcript_archives(session_id, generation, session_key, reason, encoding, "
              "archive_blob, archive_sha256, archive_name, created_at, published_at) "
              "VALUES (?, ?, 'agent:main:' || ?, 'deleted', ?, ?, ?, ?, 1796100000000, ?)",
              (sid, gen, sid, enc, blob, sha, name, 1796100000001 if "publish" in flags else None))
    c.execute("DELETE FROM transcript_events WHERE session_id=?", (sid,))
    c.execute("COMMIT")
    c.close()
    if "publish" in flags:
        os.makedirs(sessdir, exist_ok=True)
        tmp = os.path.join(sessdir, "." + name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(blob)
        os.rename(tmp, os.path.join(sessdir, name))


def cold_records(sid, evs):
    out = [{"kind": "header", "version": 1, "session_id": sid, "generation": "c1", "event_count": len(evs)}]
    for seq, ev in evs:
        out.append({"kind": "event", "row": {"session_id": sid, "seq": seq, "event_json": ev,
                                             "created_at": 1796000000000 + seq, "navigation_json": None}})
    out.append({"kind": "identity", "row": {"session_id": sid, "event_id": "x", "seq": 0}})
    out.append({"kind": "active", "row": {"session_id": sid, "seq": evs[-1][0]}})
    out.append({"kind": "index", "row": {"session_id": sid, "state": "indexed"}})
    out.append({"kind": "fts", "row": {"session_id": sid, "text": "usage cost input output"}})
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in out).encode()


def cmd_cold(db, path, sessdir, storage, *flags):
    c = connect(db)
    sid, evs = events_of(c, path)
    raw = cold_records(sid, evs)
    blob = zstd(raw)
    sha = hashlib.sha256(blob).hexdigest()
    name = f"{sha}.jsonl.zst"
    if storage == "file":
        d = os.path.join(sessdir, "cold")
        os.makedirs(d, exist_ok=True)
        data = blob[: len(blob) // 2] if "truncate" in flags else blob
        tmp = os.path.join(d, "." + name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, os.path.join(d, name))
    c.execute("BEGIN")
    c.execute("INSERT OR IGNORE INTO session_windows(session_id, session_key, created_at, updated_at) "
              "VALUES (?, 'agent:main:' || ?, 1, 1)", (sid, sid))
    if "keep-rows" not in flags:
        c.execute("INSERT INTO session_transcript_cold_archives(session_id, generation, archive_name, "
                  "archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage, "
                  "archive_blob) VALUES (?, 'c1', ?, ?, ?, ?, ?, ?, 1796200000000, ?, ?)",
                  (sid, name, sha, len(evs), len(raw), len(blob), evs[-1][0], storage,
                   blob if storage == "sqlite" else None))
        c.execute("DELETE FROM transcript_events WHERE session_id=?", (sid,))
    c.execute("COMMIT")
    c.close()
    print(name)


def cmd_prune(db, sessdir):
    c = connect(db)
    c.execute("DELETE FROM session_transcript_archives")
    c.execute("DELETE FROM session_transcript_cold_archives")
    c.close()
    for root, _, files in os.walk(sessdir):
        for f in files:
            if f.endswith(".zst"):
                os.unlink(os.path.join(root, f))


def cmd_count(*paths):
    t = [0] * 7
    for p in paths:
        for l in lines_of(p):
            e = json.loads(l)
            m = e.get("message") or {}
            u = m.get("usage")
            if e.get("type") != "message" or m.get("role") != "assistant" or not u or m.get("provider") == "openclaw":
                continue
            if u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"] == 0:
                continue
            t[0] += 1
            t[1] += u["input"]
            t[2] += u["output"]
            t[3] += u["cacheRead"]
            t[4] += u["cacheWrite"]
            t[5] += u["totalTokens"]
            t[6] += round(u["cost"]["total"] * 1e9)
    print(json.dumps(t))


if __name__ == "__main__":
    cmd = {"db": cmd_db, "events": cmd_events, "delete": cmd_delete, "cold": cmd_cold, "prune": cmd_prune,
           "count": cmd_count}[sys.argv[1]]
    cmd(*sys.argv[2:])
