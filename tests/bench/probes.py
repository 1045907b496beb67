#!/usr/bin/env python3
"""What a change costs the live daemon, per kind of source (issue 29, item
4), measured on the real daemon with its CPU time read from /proc (every
thread) and each change timed until its row arrives on the tail stream:

  doc     a Gemini CLI 0.33 document (one JSON object, pretty-printed) of
          2,000 messages, rewritten in place after every new message: daemon
          CPU per rewrite against the CPU of `cat FILE > /dev/null`
  table   an OpenCode database (WAL, the writer keeps its connection) of
          5,000 and of 50,000 messages, one row inserted with zero tokens
          and updated in place with its final tokens every 50 ms: daemon
          CPU per update at each size, and update-to-visible latency p50/p99
  snap    a Droid snapshot (<id>.settings.json) replaced by rename after
          every call: daemon CPU per replacement

Usage: probes.py BUILD_DIR [--quick]   (--quick: fewer rounds, 5,000 rows only)
"""
import json, os, random, resource, shutil, socket, sqlite3, subprocess, sys, tempfile, time

BUILD = os.path.abspath(sys.argv[1])
QUICK = "--quick" in sys.argv
SRC = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def cpu_ns(pid):
    """CPU time of every thread of pid, in ns (schedstat: exact, not ticks)."""
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


class Daemon:
    def __init__(self, home, extra_env=None):
        self.work = tempfile.mkdtemp(prefix="amprobe.")
        self.run = os.path.join(self.work, "run")
        os.makedirs(self.run, mode=0o700)
        env = {"PATH": "/usr/bin:/bin", "HOME": home, "XDG_STATE_HOME": os.path.join(self.work, "state"),
               "XDG_RUNTIME_DIR": self.run, "XDG_CONFIG_HOME": os.path.join(self.work, "config")}
        env.update(extra_env or {})
        self.env = env
        self.log = open(os.path.join(self.work, "daemon.log"), "w")
        self.p = subprocess.Popen([os.path.join(BUILD, "agentmeterd"), "--log-target=console",
                                   "--no-metrics-file"], env=env, stdout=self.log, stderr=self.log)
        self.sock = os.path.join(self.run, "agentmeterd", "control.sock")
        for _ in range(600):
            if os.path.exists(self.sock) and self.status().get("ingest", {}).get("initial_scan_done"):
                break
            time.sleep(0.05)
        else:
            raise SystemExit("daemon did not finish its initial scan; log: " + self.work)

    def ctl(self, *args):
        out = subprocess.run([os.path.join(BUILD, "agentmeterctl")] + list(args), env=self.env,
                             capture_output=True, text=True)
        return out.stdout

    def status(self):
        try:
            return json.loads(self.ctl("status", "--json") or "{}")
        except ValueError:
            return {}

    def events(self):
        return json.loads(self.ctl("report", "daily", "--json"))["totals"]["events"]

    def tail(self):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.sock)
        s.sendall(b'{"v":1,"cmd":"tail"}\n')
        return Tail(s)

    def cpu(self):
        return cpu_ns(self.p.pid)

    def stop(self):
        self.p.terminate()
        self.p.wait()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


class Tail:
    def __init__(self, s):
        self.s, self.buf = s, b""
        self.line(time.monotonic() + 5)  # the ok reply

    def line(self, deadline):
        while b"\n" not in self.buf:
            self.s.settimeout(max(0.001, deadline - time.monotonic()))
            d = self.s.recv(65536)
            if not d:
                raise SystemExit("the daemon closed the tail stream")
            self.buf += d
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def row(self, t0, timeout=5.0):
        """Waits for the next row event; its latency in ms from t0."""
        while True:
            ev = self.line(t0 + timeout)
            if ev.get("event") == "row":
                return (time.monotonic() - t0) * 1000


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


# ---- doc: a Gemini 0.33 document rewritten after every message --------------

def gemini_doc(n_msgs, rng):
    msgs = []
    for i in range(n_msgs // 2):
        msgs.append({"id": "u-%06d" % i, "timestamp": "2026-10-01T09:%02d:%02d.000Z" % (i // 60 % 60, i % 60),
                     "type": "user", "content": [{"text": "x" * rng.randint(200, 1200)}]})
        msgs.append(gemini_call(i, rng))
    return msgs


def gemini_call(i, rng):
    inp = rng.randint(1000, 50000)
    return {"id": "g-%06d-0000-4000-8000-000000000000" % i,
            "timestamp": "2026-10-01T10:%02d:%02d.000Z" % (i // 60 % 60, i % 60), "type": "gemini",
            "content": "answer %d " % i + "y" * rng.randint(50, 400), "thoughts": [],
            "tokens": {"input": inp, "output": rng.randint(10, 900), "cached": inp // 2, "thoughts": 0,
                       "tool": 0, "total": inp + 100}, "model": "gemini-2.5-pro"}


def write_in_place(path, text):
    # as the 0.33 CLI does: the same inode, truncated and written
    with open(path, "r+" if os.path.exists(path) else "w") as f:
        f.seek(0)
        f.truncate()
        f.write(text)


def probe_doc():
    rng = random.Random(33)
    home = tempfile.mkdtemp(prefix="amprobe-home.")
    chats = os.path.join(home, ".gemini", "tmp", "a" * 64, "chats")
    os.makedirs(chats)
    path = os.path.join(chats, "session-2026-10-01T09-00-cccc0003.json")
    doc = {"sessionId": "cccc0003-0000-4000-8000-000000000003", "projectHash": "a" * 64,
           "startTime": "2026-10-01T09:00:00.000Z", "lastUpdated": "2026-10-01T09:00:00.000Z",
           "messages": gemini_doc(2000, rng), "kind": "main"}
    write_in_place(path, json.dumps(doc, indent=2))
    d = Daemon(home)
    rounds = 20 if QUICK else 100
    try:
        assert d.events() == 1000, "the document's 1,000 calls, read once"
        tail = d.tail()
        lat = []
        c0 = d.cpu()
        for i in range(rounds):
            doc["messages"].append({"id": "u2-%06d" % i, "timestamp": "2026-10-02T09:00:00.000Z", "type": "user",
                                    "content": [{"text": "more"}]})
            doc["messages"].append(gemini_call(100000 + i, rng))
            text = json.dumps(doc, indent=2)
            t0 = time.monotonic()
            write_in_place(path, text)
            lat.append(tail.row(t0))
            time.sleep(0.05)
        c1 = d.cpu()
        size = os.path.getsize(path)
        # cat's CPU for the same file, as many times
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(rounds):
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cat_ms = ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) * 1000 / rounds
        ours_ms = (c1 - c0) / 1e6 / rounds
        ok = d.events() == 1000 + rounds
        print("doc: Gemini 0.33 document of %d messages (%.1f MB), rewritten in place %d times: "
              "daemon CPU %.3f ms per rewrite, cat %.3f ms (%.2fx cat); visible p50 %.1f ms, p99 %.1f ms; "
              "every call once: %s" % (len(doc["messages"]), size / 1e6, rounds, ours_ms, cat_ms,
                                       ours_ms / cat_ms if cat_ms else float("nan"), pct(lat, 0.5), pct(lat, 0.99),
                                       "yes" if ok else "NO (%d events)" % d.events()))
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- table: an OpenCode database updated in place every 50 ms ---------------

def opencode_db(path, n):
    con = sqlite3.connect(path)
    con.executescript(open(os.path.join(SRC, "fixtures", "opencode", "schema.sql")).read())
    con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                "time_updated) VALUES ('ses_bench', 'prj', 'slug', '/home/u/live', 'bench', '1.18.33', 1, 1)")
    rows = []
    t = 1796000000000
    for i in range(n):
        t += 1000
        data = {"parentID": "msg_user", "role": "assistant", "mode": "build", "agent": "build",
                "path": {"cwd": "/home/u/live", "root": "/home/u/live"}, "cost": 0.001,
                "tokens": {"total": 1500 + i % 100, "input": 1000, "output": 200 + i % 100, "reasoning": 0,
                           "cache": {"read": 300, "write": 0}},
                "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
                "time": {"created": t, "completed": t + 700}, "finish": "stop"}
        rows.append(("msg_h%08d" % i, "ses_bench", t, t + 700, json.dumps(data)))
    con.executemany("INSERT INTO message VALUES (?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()


def probe_table(n):
    home = tempfile.mkdtemp(prefix="amprobe-home.")
    dbdir = os.path.join(home, ".local", "share", "opencode")
    os.makedirs(dbdir)
    db = os.path.join(dbdir, "opencode.db")
    opencode_db(db, n)
    d = Daemon(home)
    rounds = 40 if QUICK else 200
    try:
        assert d.events() == n, "the database's %d messages, read once" % n
        w = subprocess.Popen([PY, os.path.join(SRC, "tests", "lib", "opencode_writer.py"), db],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

        def cmd(c):
            w.stdin.write(c + "\n")
            w.stdin.flush()
            assert w.stdout.readline().strip() == "ok"
        tail = d.tail()
        lat = []
        t = 1797000000000
        c0 = d.cpu()
        for i in range(rounds):
            mid = "msg_live%06d" % i
            cmd("start %s ses_bench %d anthropic claude-sonnet-4-5" % (mid, t + i * 1000))
            time.sleep(0.025)
            t0 = time.monotonic()
            cmd("final %s %d 200 0 300 0 0.002" % (mid, 1000 + i))
            lat.append(tail.row(t0))
            time.sleep(0.025)
        c1 = d.cpu()
        w.stdin.close()
        w.wait()
        ok = d.events() == n + rounds
        return n, (c1 - c0) / 1e6 / rounds, pct(lat, 0.5), pct(lat, 0.99), max(lat), ok
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)


# ---- snap: a Droid snapshot replaced by rename ------------------------------

def probe_snap():
    home = tempfile.mkdtemp(prefix="amprobe-home.")
    sdir = os.path.join(home, ".factory", "sessions", "-work-bench")
    os.makedirs(sdir)
    sid = "77777777-0000-4000-8000-000000000007"
    path = os.path.join(sdir, sid + ".settings.json")
    with open(os.path.join(sdir, sid + ".jsonl"), "w") as f:
        f.write(json.dumps({"type": "session_start", "id": sid, "cwd": "/work/bench"}) + "\n")
    usage = {"inputTokens": 0, "outputTokens": 0, "cacheCreationTokens": 0, "cacheReadTokens": 0,
             "thinkingTokens": 0, "factoryCredits": 0}

    def replace(u):
        doc = {"assistantActiveTimeMs": 100, "model": "claude-sonnet-4-5-20250929", "tokenUsage": u,
               "inclusiveTokenUsage": u, "providerLock": "anthropic"}
        tmp = path + ".tmp"
        if os.path.exists(path):
            shutil.copyfile(path, path + ".bak")
        with open(tmp, "w") as f:
            f.write(json.dumps(doc, indent=2))
        os.rename(tmp, path)
    usage = dict(usage, inputTokens=1000, outputTokens=10)
    replace(dict(usage))
    d = Daemon(home)
    rounds = 50 if QUICK else 300
    try:
        tail = d.tail()
        lat = []
        c0 = d.cpu()
        for i in range(rounds):
            usage["inputTokens"] += 1000
            usage["outputTokens"] += 10
            t0 = time.monotonic()
            replace(dict(usage))
            lat.append(tail.row(t0))
            time.sleep(0.02)
        c1 = d.cpu()
        tot = json.loads(d.ctl("report", "daily", "--json"))["totals"]
        ok = tot["input_tokens"] == usage["inputTokens"] and tot["output_tokens"] == usage["outputTokens"]
        print("snap: a Droid snapshot replaced by rename %d times: daemon CPU %.3f ms per replacement; "
              "visible p50 %.1f ms, p99 %.1f ms; ends at the last snapshot: %s"
              % (rounds, (c1 - c0) / 1e6 / rounds, pct(lat, 0.5), pct(lat, 0.99),
                 "yes" if ok else "NO (%s)" % tot))
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)


which = [a for a in sys.argv[2:] if not a.startswith("--")] or ["doc", "table", "snap"]
if "doc" in which:
    probe_doc()
if "table" in which:
    res = [probe_table(n) for n in ([5000] if QUICK else [5000, 50000])]
    for n, ms, p50, p99, mx, ok in res:
        print("table: OpenCode database of %d messages, one row updated in place every 50 ms: daemon CPU "
              "%.3f ms per update; visible p50 %.1f ms, p99 %.1f ms, max %.1f ms; every call once: %s"
              % (n, ms, p50, p99, mx, "yes" if ok else "NO"))
    if len(res) == 2:
        print("table: CPU per update at 50,000 messages / at 5,000: %.2fx" % (res[1][1] / res[0][1]))
if "snap" in which:
    probe_snap()
