#!/usr/bin/env python3
"""Runs commands as whole processes and reports wall, user and sys seconds,
peak RSS (the kernel's ru_maxrss) and peak private memory (RssAnon, sampled
every 2 ms from /proc), so file-backed ledger pages are reported apart.

  measure.py [-n RUNS] [--warmup N] [--setup CMD] [--before NAME=CMD] [--json] -- NAME=CMD ...

Each CMD is run through sh -c with output to /dev/null. With several
commands the runs are interleaved (A B A B ...) and each figure's median is
printed with, for every command after the first, the median of the
pair-by-pair ratios first/this (robust against machine speed drift).
--setup runs before every run of every command, --before NAME=CMD before
each run of that one (drop caches, remove a ledger), outside the timing."""
import argparse, json, os, statistics, subprocess, sys, tempfile, time


def anon_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def child_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
        return int(kids[0]) if kids else 0
    except OSError:
        return 0


def run_once(cmd, tmp):
    """GNU time runs the command (so the peak RSS is the command's, not that
    of a fork of this Python process); its child is sampled for RssAnon."""
    t0 = time.monotonic()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tmp, "sh", "-c", "exec " + cmd],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak, kid = 0, 0
    while p.poll() is None:
        kid = kid or child_of(p.pid)
        if kid:
            peak = max(peak, anon_kb(kid))
        time.sleep(0.002)
    wall = time.monotonic() - t0
    with open(tmp) as f:
        lines = f.read().split("\n")
    # "Command exited with non-zero status N" comes first when it failed
    fields = [l for l in lines if l and not l.startswith("Command")][-1].split()
    return {"wall": float(fields[0]) if wall < 0 else wall, "user": float(fields[1]),
            "sys": float(fields[2]), "rss_mb": int(fields[3]) / 1024.0, "anon_mb": peak / 1024.0,
            "rc": p.returncode}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--setup", default=None)
    ap.add_argument("--before", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    named = []
    for c in a.cmds:
        name, _, cmd = c.partition("=")
        named.append((name, cmd))
    runs = {n: [] for n, _ in named}
    before = dict(b.partition("=")[::2] for b in a.before)
    tmp = tempfile.mktemp(prefix="measure-")
    for i in range(a.warmup + a.n):
        for n, cmd in named:
            if a.setup:
                subprocess.run(["sh", "-c", a.setup], check=False)
            if n in before:
                subprocess.run(["sh", "-c", before[n]], check=False)
            r = run_once(cmd, tmp)
            if i >= a.warmup:
                runs[n].append(r)
    if os.path.exists(tmp):
        os.unlink(tmp)
    base = named[0][0]
    out = {}
    for n, _ in named:
        rs = runs[n]
        o = {k: statistics.median(r[k] for r in rs) for k in ("wall", "user", "sys", "rss_mb", "anon_mb")}
        o["rc"] = max(r["rc"] for r in rs)
        o["runs"] = len(rs)
        if n != base:
            o["ratio_wall"] = statistics.median(b["wall"] / max(r["wall"], 1e-6) for r, b in zip(rs, runs[base]))
        out[n] = o
    if a.json:
        json.dump(out, sys.stdout)
        print()
    else:
        for n, o in out.items():
            print("%-12s wall %.3f s  user %.3f  sys %.3f  peak RSS %.1f MB  anon %.1f MB%s%s" % (
                n, o["wall"], o["user"], o["sys"], o["rss_mb"], o["anon_mb"],
                "  ratio %.2f" % o["ratio_wall"] if "ratio_wall" in o else "",
                "  (exit %d)" % o["rc"] if o["rc"] else ""))


if __name__ == "__main__":
    main()
