#!/usr/bin/env python3
"""make bench: the daemon's CPU while a live OpenCode writes one small row
every 0.5 s into an opencode.db of 40,000 finished messages, with 7
assistant rows left unfinished before them (what an OpenCode killed
mid-step leaves) against the same database without them (issue 52, fault 1:
the cost of a pass must follow what changed, however many rows wait).
Paired rounds, medians of the daemon's user+sys CPU seconds per round.
Usage: opencode_waiting.py BUILD_DIR [ROUNDS] [SECONDS]"""
import json, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, time

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
SECS = float(sys.argv[3]) if len(sys.argv) > 3 else 20
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def step(i, now, done):
    t = {"created": now}
    if done:
        t["completed"] = now + 1
    return json.dumps({"role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
                       "path": {"cwd": "/w", "root": "/w"}, "cost": 0.001 if done else 0,
                       "tokens": {"input": 10 if done else 0, "output": 1, "reasoning": 0,
                                  "cache": {"read": 0, "write": 0}}, "time": t})


def build(path, waiting):
    db = sqlite3.connect(path)
    db.executescript(open(os.path.join(SRC, "fixtures/opencode/schema.sql")).read())
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
               "VALUES ('ses_B', 'p', 's', '/w', 't', '1.18.33', 1, 1)")
    now = int(time.time() * 1000) - 600000
    for i in range(waiting):
        db.execute("INSERT INTO message VALUES (?, 'ses_B', ?, ?, ?)", (f"msg_w{i}", now + i, now + i, step(i, now + i, False)))
    for i in range(40000):
        db.execute("INSERT INTO message VALUES (?, 'ses_B', ?, ?, ?)",
                   (f"msg_f{i:05d}", now + 100 + i, now + 100 + i, step(i, now + 100 + i, True)))
    db.commit()
    db.close()


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def one(waiting):
    t = tempfile.mkdtemp(prefix="amoc.")
    env = dict(os.environ, HOME=f"{t}/home", XDG_STATE_HOME=f"{t}/state", XDG_RUNTIME_DIR=f"{t}/run",
               XDG_DATA_HOME=f"{t}/data", AGENTMETER_LOG_CONSOLE="1")
    for d in ("home", "state", "run", "data/opencode"):
        os.makedirs(f"{t}/{d}", mode=0o700)
    path = f"{t}/data/opencode/opencode.db"
    build(path, waiting)
    d = subprocess.Popen([f"{B}/agentmeterd"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):  # the first scan done
            r = subprocess.run([f"{B}/agentmeterctl", "report", "model", "--json"], env=env, capture_output=True, text=True)
            if r.returncode == 0 and json.loads(r.stdout)["totals"]["events"] >= 40000:
                break
            time.sleep(0.1)
        c0 = cpu(d.pid)
        db = sqlite3.connect(path)
        end, i = time.time() + SECS, 0
        while time.time() < end:
            now = int(time.time() * 1000)
            db.execute("INSERT INTO message VALUES (?, 'ses_B', ?, ?, ?)", (f"msg_n{i}", now, now, step(i, now, True)))
            db.commit()
            i += 1
            time.sleep(0.5)
        time.sleep(1)
        db.close()
        return cpu(d.pid) - c0
    finally:
        d.terminate()
        d.wait()
        shutil.rmtree(t, ignore_errors=True)


with_w, without = [], []
for _ in range(ROUNDS):
    with_w.append(one(7))
    without.append(one(0))
mw, mo = statistics.median(with_w), statistics.median(without)
print(f"opencode waiting rows: daemon CPU per {SECS:.0f} s of one row every 0.5 s into 40,000 rows, "
      f"median of {ROUNDS} paired rounds: 7 waiting {mw:.2f} s, none {mo:.2f} s, ratio {mw / mo if mo else float('inf'):.2f}")
