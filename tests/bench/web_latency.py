#!/usr/bin/env python3
"""make bench: how soon a call appended to a session file is on the page of
`agentmeterctl web` (issue 50 asks for one second): a pi session, the daemon
and `web --listen 127.0.0.1:0` in a fresh environment, the page's event
stream (/events) read here; each round appends one call with
tests/lib/pi_call.py and times from the append's return to the first
server-sent state whose today's calls grew. Min, median and max in ms.
Usage: web_latency.py BUILD_DIR [CALLS]"""
import json, os, shutil, statistics, subprocess, sys, tempfile, threading, time, urllib.request

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 20
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CALL = [sys.executable, os.path.join(SRC, "tests/lib/pi_call.py")]


def main():
    t = tempfile.mkdtemp(prefix="amweb.")
    env = dict(os.environ, HOME=f"{t}/home", XDG_STATE_HOME=f"{t}/state", XDG_RUNTIME_DIR=f"{t}/run",
               XDG_CONFIG_HOME=f"{t}/config", TZ="UTC")
    for d in ("home", "state", "run", "config"):
        os.makedirs(f"{t}/{d}", mode=0o700)
    s = f"{t}/home/.pi/agent/sessions/--w--/s.jsonl"
    subprocess.run(CALL + ["header", s, "--cwd", "/w"], check=True, env=env)
    subprocess.run(CALL + ["call", s, "--cost", "0.01", "--tokens", "10"], check=True, env=env)
    d = subprocess.Popen([f"{B}/agentmeterd", "--log-target=console"], env=env, stderr=subprocess.DEVNULL)
    w = None
    try:
        for _ in range(200):
            if subprocess.run([f"{B}/agentmeterctl", "version"], env=env, capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        w = subprocess.Popen([f"{B}/agentmeterctl", "web", "--listen", "127.0.0.1:0"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = w.stdout.readline().strip()
        base, token = url.split("/?token=")
        stream = urllib.request.urlopen(f"{base}/events?token={token}")
        seen = []  # (monotonic time, today's calls) per state event

        def read():
            for line in stream:
                if line.startswith(b"data: "):
                    today = json.loads(line[6:])["totals"]["today"] or {}
                    seen.append((time.monotonic(), today.get("events", 0)))
        threading.Thread(target=read, daemon=True).start()
        while not seen:
            time.sleep(0.01)
        lat = []
        for _ in range(N):
            n0 = seen[-1][1]
            subprocess.run(CALL + ["call", s, "--cost", "0.01", "--tokens", "10"], check=True, env=env)
            t1 = time.monotonic()
            end = t1 + 10
            while not (seen[-1][1] > n0) and time.monotonic() < end:
                time.sleep(0.001)
            hit = [at for at, n in seen if n > n0]
            lat.append((hit[0] - t1) * 1000 if hit else float("inf"))
            time.sleep(0.3)
        print(f"web: append -> page event over {N} calls: min {min(lat):.0f} ms, "
              f"median {statistics.median(lat):.0f} ms, max {max(lat):.0f} ms")
    finally:
        for p in (w, d):
            if p:
                p.terminate()
                p.wait()
        shutil.rmtree(t, ignore_errors=True)


main()
