#!/usr/bin/env python3
"""The daemon's private (anonymous) memory as the number of tracked files
grows: issue 51 asks at most 32 MB throughout with a heavy user's 32,000
files, and whatever grows per file small and known.

  memory.py [--runs N] [--idle S] [--files N] [--json] CORPUS_HOME BUILD [BUILD ...]

CORPUS_HOME is a HOME whose .pi/agent/sessions holds the corpus (gen_pi.py
corpus; `--files N` makes one of N small sessions there when it is absent).
For each run and build (interleaved: A B A B ...), a fresh ledger: the
daemon is started on it, RssAnon (/proc/PID/status) sampled every 2 ms until
`status --json` says the first scan is done (the peak), then after S seconds
idle (the idle figure); then `agentmeterd --once` into another fresh ledger
(its peak). Medians over the runs; with two builds, the median of the
pair-by-pair differences too. The per-file figure is (idle - idle of an
empty HOME) / files."""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def status_kb(pid, key="RssAnon"):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def scan_done(env, build):
    r = subprocess.run([os.path.join(build, "agentmeterctl"), "status", "--json"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return False
    try:
        return bool(json.loads(r.stdout).get("ingest", {}).get("initial_scan_done"))
    except ValueError:
        return False


def env_for(home, tmp):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
           "XDG_STATE_HOME": os.path.join(tmp, "state"), "XDG_RUNTIME_DIR": os.path.join(tmp, "run"),
           "XDG_CONFIG_HOME": os.path.join(tmp, "config")}
    for k in ("XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"):
        os.makedirs(env[k], mode=0o700, exist_ok=True)
    return env


def daemon_run(build, home, idle):
    """Peak RssAnon during the first scan, RssAnon after `idle` seconds, scan seconds."""
    tmp = tempfile.mkdtemp(prefix="am-mem-")
    try:
        env = env_for(home, tmp)
        p = subprocess.Popen([os.path.join(build, "agentmeterd"), "--no-metrics-file", "-q"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0, peak, last_check = time.monotonic(), 0, 0.0
        while True:
            peak = max(peak, status_kb(p.pid))
            now = time.monotonic()
            if p.poll() is not None:
                raise SystemExit("memory.py: the daemon exited (%d)" % p.returncode)
            if now - last_check > 0.2:
                last_check = now
                if scan_done(env, build):
                    break
            if now - t0 > 1800:
                raise SystemExit("memory.py: the first scan did not end in 30 minutes")
            time.sleep(0.002)
        scan_s = time.monotonic() - t0
        end = time.monotonic() + idle
        while time.monotonic() < end:   # the peak goes on until the idle figure is taken
            peak = max(peak, status_kb(p.pid))
            time.sleep(0.01)
        idle_kb = status_kb(p.pid)
        p.terminate()
        p.wait(timeout=60)
        return peak, idle_kb, scan_s
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def once_run(build, home):
    tmp = tempfile.mkdtemp(prefix="am-mem-")
    try:
        env = env_for(home, tmp)
        p = subprocess.Popen([os.path.join(build, "agentmeterd"), "--once", "--no-metrics-file", "-q"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        peak = 0
        while p.poll() is None:
            peak = max(peak, status_kb(p.pid))
            time.sleep(0.002)
        if p.returncode != 0:
            raise SystemExit("memory.py: agentmeterd --once failed (%d)" % p.returncode)
        return peak
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--idle", type=float, default=5)
    ap.add_argument("--files", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("home")
    ap.add_argument("builds", nargs="+")
    a = ap.parse_args()
    sessions = os.path.join(a.home, ".pi", "agent", "sessions")
    if not os.path.isdir(sessions):
        if not a.files:
            raise SystemExit("memory.py: %s has no .pi/agent/sessions (give --files N to make one)" % a.home)
        os.makedirs(os.path.dirname(sessions), exist_ok=True)
        with open(os.path.join(a.home, "expected.json"), "w") as out:
            subprocess.run([sys.executable, os.path.join(SRC, "tests/lib/gen_pi.py"), "corpus", sessions,
                            "--files", str(a.files), "--pairs", "4", "--forks", "10", "--seed", "1", "--small"],
                           stdout=out, check=True)
    files = sum(1 for _, _, fs in os.walk(sessions) for f in fs if f.endswith(".jsonl"))
    empty = tempfile.mkdtemp(prefix="am-mem-home-")
    res = {b: {"peak": [], "idle": [], "scan": [], "once": [], "empty": []} for b in a.builds}
    try:
        for _ in range(a.runs):
            for b in a.builds:
                r = res[b]
                peak, idle_kb, scan_s = daemon_run(b, a.home, a.idle)
                r["peak"].append(peak / 1024)
                r["idle"].append(idle_kb / 1024)
                r["scan"].append(scan_s)
                r["once"].append(once_run(b, a.home) / 1024)
                r["empty"].append(daemon_run(b, empty, a.idle)[1] / 1024)
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    med = statistics.median
    out = {"files": files, "runs": a.runs, "builds": {}}
    for b in a.builds:
        r = res[b]
        per_file = [(i - e) * 1024 * 1024 / files for i, e in zip(r["idle"], r["empty"])] if files else [0]
        out["builds"][b] = {"daemon_scan_peak_mb": med(r["peak"]), "idle_mb": med(r["idle"]),
                            "once_peak_mb": med(r["once"]), "empty_idle_mb": med(r["empty"]),
                            "bytes_per_file": med(per_file), "scan_s": med(r["scan"]), "raw": r}
    if len(a.builds) == 2:
        x, y = (res[b] for b in a.builds)
        out["paired_diff_mb"] = {k: med([q - p for p, q in zip(x[k], y[k])]) for k in ("peak", "idle", "once")}
    if a.json:
        print(json.dumps(out, indent=1))
        return
    print("   %d files tracked, %d runs (medians); private memory = RssAnon" % (files, a.runs))
    print("   | build | daemon, first scan peak | daemon idle after %g s | --once peak | empty HOME idle | per tracked file |" % a.idle)
    print("   |---|---|---|---|---|---|")
    for b in a.builds:
        o = out["builds"][b]
        print("   | %s | %.1f MB | %.1f MB | %.1f MB | %.1f MB | %.0f bytes |" % (
            b, o["daemon_scan_peak_mb"], o["idle_mb"], o["once_peak_mb"], o["empty_idle_mb"], o["bytes_per_file"]))
    if "paired_diff_mb" in out:
        d = out["paired_diff_mb"]
        print("   second - first, median of pairs: peak %+.1f MB, idle %+.1f MB, --once peak %+.1f MB"
              % (d["peak"], d["idle"], d["once"]))


if __name__ == "__main__":
    main()
