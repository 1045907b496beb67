#!/usr/bin/python3
"""Generates a home directory of one harness's session data for `make bench`
(tests/bench/harnesses.sh), shaped like the files the real CLIs wrote in
samples/realgen/ (the same record types and fields, user and tool text of
1-50 KB so the bytes are realistic), and prints the totals the ledger must
show, computed here from the documented token rules of each harness
(formats.md, README "What it reads"), independently of the C code.

  gen_harness.py HARNESS HOME (--mb N | --calls N) [--seed S] [--forks K]

HARNESS: gemini   HOME/.gemini/tmp/<project>/chats/session-*.jsonl (0.61 JSONL)
         qwen     HOME/.qwen/projects/<cwd slug>/chats/<session>.jsonl (0.24)
         opencode HOME/.local/share/opencode/opencode.db (1.18, SQLite, WAL left
                  as the CLI leaves it)
         copilot  HOME/.copilot/session-state/<id>/events.jsonl (1.0.102)
         droid    HOME/.factory/sessions/<cwd slug>/<id>.settings.json (+ .bak
                  and the .jsonl transcript) (0.225)
--mb N: sessions until the data holds N MB; --calls N: exactly N model calls.
--forks K: every Kth session is a fork of the one before (qwen: --fork-session,
the parent's records with the same uuids; opencode: run --fork, the parent's
messages under new ids; droid: the transcript copied, usage its own; gemini
and copilot have no fork and ignore it).

Prints one JSON object: events, input, output, cache_read, cache_write, total
(= the four added), reasoning: what `agentmeterctl report daily --json` must
total; "copied": the calls a fork copies (counted once in the totals; what a
reader without cross-file dedup adds a second time); "parts": per-harness
figures a peer may count otherwise (gemini thoughts and tool-use prompt
tokens, qwen calls seen only in telemetry, ...); bytes, files, sessions, calls.
Rules (each harness's own meaning of its numbers, made disjoint):
  gemini   input = input - cached + tool, output = output + thoughts,
           cache read = cached; one event per message id (a tool-call turn
           writes its message twice)
  qwen     input = prompt - cached, output = candidates (reasoning inside),
           cache read = cached; one event per api_response telemetry row (the
           assistant record of a main call is the same call)
  opencode input = tokens.input, output = output + reasoning, cache read and
           write apart; one event per assistant message with tokens
  copilot  input = inputTokens - cacheRead - cacheWrite, output = outputTokens;
           one event per session.usage_record
  droid    the final tokenUsage of each session: input = inputTokens, output,
           cache read, cache write = cacheCreationTokens; one event (snapshot
           step) per session with usage, read once"""
import argparse, datetime, hashlib, json, os, random, sqlite3, sys, uuid

BASE_MS = 1796000000000  # late November 2026, as gen_pi.py
SESSION_GAP_MS = 40 * 60 * 1000


def iso(ms):
    d = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def dumps(o):
    """As node's JSON.stringify writes a line: compact, UTF-8 kept."""
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


class Totals:
    KEYS = ("events", "input", "output", "cache_read", "cache_write", "total", "reasoning")

    def __init__(self):
        self.t = dict.fromkeys(self.KEYS, 0)

    def add(self, inp, out, cr, cw, reas, events=1):
        t = self.t
        t["events"] += events
        t["input"] += inp; t["output"] += out; t["cache_read"] += cr; t["cache_write"] += cw
        t["total"] += inp + out + cr + cw; t["reasoning"] += reas

    def merge(self, o):
        for k in self.KEYS:
            self.t[k] += o.t[k]


WORDS = ("the", "a", "function", "return", "const", "let", "value", "error", "file", "path", "test", "build",
         "alpha", "beta", "gamma", "delta", "lorem", "ipsum", "import", "from", "if", "else", "for", "while",
         "{", "}", "(", ")", "[", "]", ";", "=", "==", "=>", "\"q\"", "'s'", "\\n", "\n", "\n", "\t", "//",
         "#", "<div>", "</div>", "naïve", "café", "→", "└──", "日本", "0x1f", "42", "3.14", "TODO:", "fix")


class Gen:
    """What every harness shares: the random source, filler text, the token
    model, the budget (bytes or calls) and the totals."""

    def __init__(self, a):
        self.rng = random.Random(a.seed)
        self.home = a.home
        self.mb, self.max_calls, self.forks = a.mb, a.calls, a.forks
        self.target = int(a.mb * 1000 * 1000) if a.mb else 0
        self.tot, self.copied = Totals(), Totals()
        self.parts = {}
        self.bytes = self.files = self.sessions = self.calls = 0
        prng = random.Random(a.seed * 7 + 1)
        words, n = [], 0
        while n < 2 << 20:
            w = prng.choice(WORDS)
            words.append(w); n += len(w) + 1
        self.pool = " ".join(words)

    # ---- budget ----
    def want_call(self):
        if self.max_calls:
            return self.calls < self.max_calls
        return self.bytes < self.target

    def want_session(self):
        return self.want_call()

    def part(self, name, inp, out, cr, cw, reas, events=1):
        self.parts.setdefault(name, Totals()).add(inp, out, cr, cw, reas, events)

    # ---- random things ----
    def uid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hexid(self, n=32):
        return "%0*x" % (n, self.rng.getrandbits(4 * n))

    def text(self, n):
        o = self.rng.randrange(0, len(self.pool) - n)
        return self.pool[o:o + n]

    def big(self):
        """A user prompt or tool output: 1-50 KB."""
        return self.text(self.rng.randint(1, 50) * 1024)

    def small(self, lo=20, hi=300):
        return self.text(self.rng.randint(lo, hi))

    def usage(self, st, family):
        """One model call's tokens from the session's context: prompt (all
        input, cached included), cached, cw (cache write), uncached = prompt -
        cached - cw, out (visible output) and reas (reasoning). The context
        grows by what the session has said; the cache holds the last prompt."""
        r = self.rng
        prompt = st["ctx"] + r.randint(0, 200)
        cached = cw = 0
        if st["warm"] and r.random() < 0.9:
            cached = min(prompt - 1, int(st["last"] * r.uniform(0.8, 1.0)) // 64 * 64)
        if family == "anthropic":
            cw = int((prompt - cached) * r.uniform(0.5, 0.95))
        out = min(12000, int(r.expovariate(1 / 350.0)) + 8)
        reas = r.randint(5, 900) if st.get("thinks") and r.random() < 0.6 else 0
        st["last"], st["warm"] = prompt, True
        st["ctx"] = min(900000, prompt + out + reas)
        return dict(prompt=prompt, cached=cached, cw=cw, uncached=prompt - cached - cw, out=out, reas=reas)

    def grow(self, st, nbytes):
        st["ctx"] = min(900000, st["ctx"] + nbytes // 4)

    def new_ctx(self, thinks=None):
        return {"ctx": self.rng.randint(8000, 20000), "last": 0, "warm": False,
                "thinks": self.rng.random() < 0.5 if thinks is None else thinks}

    def result(self):
        o = dict(self.tot.t)
        o.update(bytes=self.bytes, files=self.files, sessions=self.sessions, calls=self.calls)
        if self.copied.t["events"]:
            o["copied"] = dict(self.copied.t)
        if self.parts:
            o["parts"] = {k: dict(v.t) for k, v in self.parts.items()}
        return o


def write_file(g, path, data, mtime_ms=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    b = data.encode() if isinstance(data, str) else data
    with open(path, "wb") as f:
        f.write(b)
    g.bytes += len(b); g.files += 1
    if mtime_ms:
        os.utime(path, ns=(mtime_ms * 1000000, mtime_ms * 1000000))


class Lines:
    """An append-only JSONL file."""

    def __init__(self, g, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.g, self.path, self.f = g, path, open(path, "w", encoding="utf-8")
        self.g.files += 1

    def put(self, o):
        s = dumps(o) + "\n"
        self.f.write(s)
        self.g.bytes += len(s.encode()) if not s.isascii() else len(s)

    def close(self, mtime_ms=None):
        self.f.close()
        if mtime_ms:
            os.utime(self.path, ns=(mtime_ms * 1000000, mtime_ms * 1000000))


def project(n):
    i = n % 20
    return i, "/home/u/work/proj%d" % i


# ============================================================================ gemini
GEMINI_SETTINGS = {"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "maxAttempts": 2,
                               "checkpointing": {"enabled": False}},
                   "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                   "ide": {"enabled": False, "hasSeenNudge": True},
                   "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
                   "model": {"name": "gemini-2.5-pro"}}


def gen_gemini(g):
    r = g.rng
    root = os.path.join(g.home, ".gemini")
    write_file(g, os.path.join(root, "settings.json"), json.dumps(GEMINI_SETTINGS, indent=2))
    write_file(g, os.path.join(root, "installation_id"), g.uid())
    write_file(g, os.path.join(root, "projects.json"),
               json.dumps({"projects": {project(i)[1]: "proj%d" % i for i in range(20)}}, indent=2))
    for i in range(20):
        write_file(g, os.path.join(root, "tmp", "proj%d" % i, ".project_root"), project(i)[1])
    n = 0
    while g.want_session():
        pi, cwd = project(n)
        short = "proj%d" % pi
        sid = g.uid()
        t = BASE_MS + n * SESSION_GAP_MS
        model = r.choice(["gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-flash"])
        st = g.new_ctx(thinks=True)
        minute = datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H-%M")
        f = Lines(g, os.path.join(root, "tmp", short, "chats", "session-%s-%s.jsonl" % (minute, sid[:8])))
        ctx_text = ("<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n"
                    "Today's date is %s.\nMy operating system is: linux\nThe project's temporary directory is: "
                    "/home/u/.gemini/tmp/%s\n- **Workspace Directories:**\n  - %s\n- **Directory Structure:**\n\n"
                    "Showing up to 200 items (files + folders).\n\n%s/\n└───README.md\n\n\n</session_context>"
                    % (iso(t)[:10], short, cwd, cwd))
        ctx_id = g.hexid()
        phash = hashlib.sha256(cwd.encode()).hexdigest()
        history = []
        for proc in range(r.choice([1, 1, 1, 2, 2, 3])):
            if proc and not g.want_call():
                break
            t += r.randint(1000, 600000) if proc else 0
            f.put({"sessionId": sid, "projectHash": phash, "startTime": iso(t), "lastUpdated": iso(t), "kind": "main"})
            ctx_msg = {"id": ctx_id, "timestamp": iso(t + 1), "type": "user", "content": [{"text": ctx_text}]}
            f.put({"$set": {"messages": [ctx_msg], "lastUpdated": iso(t + 1)}})
            if proc:
                f.put({"$set": {"sessionId": sid}})
                f.put({"$set": {"messages": [ctx_msg] + history, "lastUpdated": iso(t + 1)}})
            for turn in range(r.randint(2, 6)):
                if not g.want_call():
                    break
                t += r.randint(2000, 120000)
                um = {"id": g.uid(), "timestamp": iso(t), "type": "user", "content": [{"text": g.big()}]}
                f.put(um)
                f.put({"$set": {"lastUpdated": iso(t)}})
                history.append(um)
                g.grow(st, len(um["content"][0]["text"]))
                steps = r.choice([1, 1, 2, 2, 3, 4])
                for step in range(steps):
                    if not g.want_call():
                        break
                    t += r.randint(500, 30000)
                    u = g.usage(st, "google")
                    tool = r.random() < 0.1 and r.randint(1, 400) or 0
                    tok = {"input": u["prompt"], "output": u["out"], "cached": u["cached"], "thoughts": u["reas"],
                           "tool": tool, "total": u["prompt"] + u["out"] + u["reas"] + tool}
                    reply = g.small(40, 1500)
                    thoughts = ([{"subject": "Planning", "description": g.small(40, 600), "timestamp": iso(t)}]
                                if u["reas"] else [])
                    gm = {"id": g.uid(), "timestamp": iso(t), "type": "gemini", "content": reply, "thoughts": thoughts,
                          "tokens": tok, "model": model}
                    f.put(gm)
                    f.put({"$set": {"lastUpdated": iso(t)}})
                    g.calls += 1
                    g.tot.add(u["prompt"] - u["cached"] + tool, u["out"] + u["reas"], u["cached"], 0, u["reas"])
                    g.part("thoughts", 0, u["reas"], 0, 0, u["reas"], events=0)
                    g.part("tool_prompt", tool, 0, 0, 0, 0, events=0)
                    parts = ([{"text": "**Planning** " + thoughts[0]["description"], "thought": True}] if thoughts else [])
                    parts.append({"text": reply})
                    if step < steps - 1:
                        # a tool call: the same message again with toolCalls when the tool is done
                        name = r.choice(["run_shell_command", "read_file", "grep_search"])
                        cid = "%s__%s_%d_0" % (name, name, t)
                        args = ({"command": "npm test -- --grep %s" % g.small(5, 20), "description": "Run the tests"}
                                if name == "run_shell_command" else {"file_path": "%s/src/%s.ts" % (cwd, g.hexid(8))})
                        out = g.big()
                        resp = {"functionResponse": {"id": cid, "name": name, "response": {"output": out}}}
                        t2 = t + r.randint(100, 20000)
                        gm2 = dict(gm, toolCalls=[{"id": cid, "name": name, "args": args, "result": [resp],
                                                   "status": "success", "timestamp": iso(t2),
                                                   "resultDisplay": out if name == "run_shell_command" else "",
                                                   "description": args.get("command", args.get("file_path")),
                                                   "displayName": "Shell" if name == "run_shell_command" else "ReadFile",
                                                   "renderOutputAsMarkdown": name != "run_shell_command"}])
                        f.put(gm2)
                        tr = {"id": g.uid(), "timestamp": iso(t2 + 5), "type": "user", "content": [resp]}
                        f.put(tr)
                        f.put({"$set": {"lastUpdated": iso(t2 + 5)}})
                        parts.append({"functionCall": {"id": cid, "name": name, "args": args}})
                        history.append({"id": gm["id"], "timestamp": gm["timestamp"], "type": "gemini", "content": parts})
                        history.append({"id": gm["id"] + "_response", "timestamp": iso(t2), "type": "user",
                                        "content": [resp]})
                        history.append(tr)
                        g.grow(st, len(out))
                        t = t2 + 5
                    else:
                        history.append({"id": gm["id"], "timestamp": gm["timestamp"], "type": "gemini", "content": parts})
        f.close(t)
        g.sessions += 1
        n += 1


# ============================================================================ qwen
QWEN_SETTINGS = {"security": {"auth": {"selectedType": "openai"}}, "model": {"name": "qwen3-coder-plus"},
                 "general": {"checkpointing": {"enabled": False}}, "privacy": {"usageStatisticsEnabled": False}}


def gen_qwen(g):
    r = g.rng
    root = os.path.join(g.home, ".qwen")
    write_file(g, os.path.join(root, "settings.json"), json.dumps(QWEN_SETTINGS, indent=2))
    usage_lines = Lines(g, os.path.join(root, "usage_record.jsonl"))
    prev = None  # (records with their calls) of the session before, for a fork
    n = 0
    while g.want_session():
        fork = g.forks and n % g.forks == g.forks - 1 and prev
        pi, cwd = project(n - 1 if fork else n)
        slug = cwd.replace("/", "-").replace(".", "-")
        d = os.path.join(root, "projects", slug)
        sid = g.uid()
        t = BASE_MS + n * SESSION_GAP_MS
        model = r.choice(["qwen3-coder-plus", "qwen3-coder-plus", "qwen3-max"])
        st = g.new_ctx()
        if not os.path.exists(os.path.join(d, "meta.json")):
            write_file(g, os.path.join(d, "meta.json"),
                       json.dumps({"version": 1, "createdAt": iso(t), "updatedAt": iso(t)}, indent=2))
        f = Lines(g, os.path.join(d, "chats", sid + ".jsonl"))
        kept = []  # (record, call or None): what a fork of this session copies
        seen = set()
        last = [None]

        def rec(o, call=None):
            o = dict({"uuid": g.uid(), "parentUuid": last[0], "sessionId": sid, "timestamp": iso(t_[0])}, **o)
            o.setdefault("cwd", cwd); o.setdefault("version", "0.24.4")
            # keys in the order Qwen writes them
            order = ["uuid", "parentUuid", "sessionId", "timestamp", "type", "provenance", "cwd", "version"]
            o = {k: o[k] for k in order if k in o} | {k: v for k, v in o.items() if k not in order}
            f.put(o)
            last[0] = o["uuid"]
            kept.append((o, call))
            return o

        t_ = [t]
        if fork:
            for o, call in prev[:max(1, len(prev) // 2)]:
                o = dict(o, sessionId=sid)
                f.put(o)
                last[0] = o["uuid"]
                kept.append((o, call))
                if call:
                    g.copied.add(*call[:5])
                    g.part("copied_main" if call[5] else "copied_side", *call[:5])
        per_model = {}
        prompts = 0
        for proc in range(r.choice([1, 1, 2])):
            if proc and not g.want_call():
                break
            t_[0] += r.randint(1000, 600000) if proc else 0
            start = t_[0]
            for turn in range(r.randint(2, 6)):
                if not g.want_call():
                    break
                t_[0] += r.randint(2000, 120000)
                prompts += 1
                text = g.big()
                rec({"type": "user", "provenance": "real_user", "message": {"role": "user", "parts": [{"text": text}]}})
                g.grow(st, len(text))
                t_[0] += 5
                rec({"type": "system", "provenance": "system", "subtype": "attribution_snapshot",
                     "systemPayload": {"snapshot": {"type": "attribution-snapshot", "version": 1, "surface": "cli",
                                                    "fileStates": {}, "promptCount": prompts,
                                                    "promptCountAtLastCommit": 0}}})
                steps = r.choice([1, 1, 2, 2, 3, 4])
                prompt_id = "%s########%d" % (sid, prompts)
                for step in range(steps):
                    if not g.want_call():
                        break
                    u = g.usage(st, "openai")
                    while (u["prompt"], u["cached"], u["out"], u["reas"]) in seen:
                        u["out"] += 1
                    seen.add((u["prompt"], u["cached"], u["out"], u["reas"]))
                    cand = u["out"] + u["reas"]
                    t_[0] += r.randint(300, 30000)
                    rid = "chatcmpl-%s" % g.hexid(24)
                    reply = g.small(40, 1500)
                    tool = step < steps - 1
                    name = r.choice(["run_shell_command", "read_file", "grep_search"])
                    cid = "call_%s" % g.hexid(24)
                    args = ({"command": "npm test -- --grep %s" % g.small(5, 20), "description": "Run the tests"}
                            if name == "run_shell_command" else {"file_path": "%s/src/%s.ts" % (cwd, g.hexid(8))})
                    rec({"type": "system", "provenance": "system", "subtype": "ui_telemetry", "systemPayload": {"uiEvent": {
                        "event.name": "qwen-code.api_response", "event.timestamp": iso(t_[0]), "response_id": rid,
                        "model": model, "status_code": 200, "duration_ms": r.randint(200, 30000),
                        "input_token_count": u["prompt"], "output_token_count": cand,
                        "cached_content_token_count": u["cached"], "thoughts_token_count": u["reas"],
                        "total_token_count": u["prompt"] + cand, "response_text": reply[:200],
                        "prompt_id": prompt_id, "auth_type": "openai", "ttft_ms": r.randint(100, 3000)}}})
                    parts = ([{"text": g.small(40, 600), "thought": True}] if u["reas"] else []) + [{"text": reply}]
                    if tool:
                        parts.append({"functionCall": {"id": cid, "name": name, "args": args}})
                    t_[0] += 2
                    call = (u["prompt"] - u["cached"], cand, u["cached"], 0, u["reas"], True)
                    rec({"type": "assistant", "provenance": "assistant_output", "model": model,
                         "message": {"role": "model", "parts": parts},
                         "usageMetadata": {"promptTokenCount": u["prompt"], "candidatesTokenCount": cand,
                                           "thoughtsTokenCount": u["reas"], "totalTokenCount": u["prompt"] + cand,
                                           "cachedContentTokenCount": u["cached"]},
                         "contextWindowSize": 1000000}, call)
                    g.calls += 1
                    g.tot.add(*call[:5])
                    m = per_model.setdefault(model, [0, 0, 0, 0, 0, 0])
                    for i, v in enumerate((1, u["prompt"], cand, u["cached"], u["reas"], u["prompt"] + cand)):
                        m[i] += v
                    if tool:
                        out = g.big()
                        t_[0] += r.randint(50, 20000)
                        rec({"type": "system", "provenance": "system", "subtype": "ui_telemetry", "systemPayload": {"uiEvent": {
                            "event.name": "qwen-code.tool_call", "event.timestamp": iso(t_[0]), "call_id": cid,
                            "function_name": name, "function_args": args, "duration_ms": r.randint(1, 5000),
                            "status": "success", "execution_status": "success", "success": True,
                            "decision": "auto_accept", "prompt_id": prompt_id, "response_id": rid,
                            "tool_type": "native", "content_length": len(out)}}})
                        t_[0] += 3
                        disp = ({"type": "shell_result", "version": 1, "directory": cwd, "exitCode": 0, "signal": None,
                                 "pid": None, "outcome": "completed", "outputFiles": [], "output": out, "text": out,
                                 "error": None} if name == "run_shell_command" else "")
                        rec({"type": "tool_result", "provenance": "tool_result",
                             "message": {"role": "user", "parts": [{"functionResponse": {
                                 "id": cid, "name": name, "response": {"output": out}}}]},
                             "toolCallResult": {"callId": cid, "status": "success", "resultDisplay": disp}})
                        g.grow(st, len(out))
                # the memory-extraction side call after the turn: telemetry only
                if g.want_call():
                    t_[0] += r.randint(100, 3000)
                    p = r.randint(9000, 14000)
                    c = r.choice([0, p * 3 // 4 // 64 * 64])
                    o = r.randint(10, 300)
                    while (p, c, o, 0) in seen:
                        o += 1
                    seen.add((p, c, o, 0))
                    call = (p - c, o, c, 0, 0, False)
                    agent = "managed-auto-memory-extractor-%s" % g.hexid(8)
                    rec({"type": "system", "provenance": "system", "subtype": "ui_telemetry", "systemPayload": {"uiEvent": {
                        "event.name": "qwen-code.api_response", "event.timestamp": iso(t_[0]),
                        "response_id": "chatcmpl-%s" % g.hexid(24), "model": model, "status_code": 200,
                        "duration_ms": r.randint(50, 3000), "input_token_count": p, "output_token_count": o,
                        "cached_content_token_count": c, "thoughts_token_count": 0, "total_token_count": p + o,
                        "response_text": g.small(20, 200), "prompt_id": "%s#%s#0" % (sid, agent),
                        "auth_type": "openai", "ttft_ms": r.randint(20, 500),
                        "subagent_name": "managed-auto-memory-extractor", "subagent_id": agent,
                        "subagent_type": "managed-auto-memory-extractor"}}}, call)
                    g.calls += 1
                    g.tot.add(*call[:5])
                    g.part("side", *call[:5])
                    m = per_model.setdefault(model, [0, 0, 0, 0, 0, 0])
                    for i, v in enumerate((1, p, o, c, 0, p + o)):
                        m[i] += v
            usage_lines.put({"version": 1, "sessionId": sid, "timestamp": t_[0] + 500, "startTime": start,
                             "project": cwd, "durationMs": t_[0] + 500 - start, "totalLatencyMs": r.randint(100, 90000),
                             "models": {k: {"requests": v[0], "inputTokens": v[1], "outputTokens": v[2],
                                            "cachedTokens": v[3], "thoughtsTokens": v[4], "totalTokens": v[5],
                                            "totalLatencyMs": r.randint(100, 90000)} for k, v in per_model.items()},
                             "tools": {"totalCalls": 0, "totalSuccess": 0, "totalFail": 0, "byName": {}},
                             "files": {"linesAdded": 0, "linesRemoved": 0},
                             "skills": {"totalCalls": 0, "totalSuccess": 0, "totalFail": 0, "byName": {}}})
        f.close(t_[0])
        prev = None if fork else kept
        g.sessions += 1
        n += 1
    usage_lines.close()


# ============================================================================ opencode
# The tables and indexes the tests' OpenCode databases have (the columns
# OpenCode 1.18 creates, written for the project: fixtures/opencode/schema.sql)
OPENCODE_SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "fixtures", "opencode", "schema.sql")
# USD per million tokens: input, output (reasoning included), cache read, cache write
OPENCODE_MODELS = [("anthropic", "claude-sonnet-4-5", "anthropic", (3.0, 15.0, 0.30, 3.75)),
                   ("openai", "gpt-5-mini", "openai", (0.25, 2.0, 0.025, 0.0)),
                   ("openrouter", "qwen/qwen3-coder", "openai", (0.22, 0.95, 0.022, 0.0))]
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PERMISSION = [{"permission": "question", "pattern": "*", "action": "deny"},
              {"permission": "plan_enter", "pattern": "*", "action": "deny"},
              {"permission": "plan_exit", "pattern": "*", "action": "deny"}]


def gen_opencode(g):
    r = g.rng
    d = os.path.join(g.home, ".local", "share", "opencode")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "opencode.db")
    for sfx in ("", "-wal", "-shm"):
        if os.path.exists(path + sfx):
            os.unlink(path + sfx)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    # SQLite checkpoints after a commit that leaves 1000 pages in the -wal;
    # here that is done before a session's first write instead, so the last
    # sessions' rows are only in the -wal when the process ends, as OpenCode
    # leaves them (a reader must go through SQLite, never the file's bytes)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("PRAGMA foreign_keys=ON")
    with open(OPENCODE_SCHEMA_FILE) as f:
        con.executescript(f.read())
    con.execute("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES "
                "('global', '/', ?, ?, '[]')", (BASE_MS, BASE_MS))
    seq_ctr = [0]

    def oid(prefix, ms, desc=False):
        seq_ctr[0] += 1
        v = (ms * 0x1000 + (seq_ctr[0] & 0xfff)) & 0xffffffffffff
        if desc:
            v = 0xffffffffffff - v
        return "%s_%012x%s" % (prefix, v, "".join(r.choice(B62) for _ in range(14)))

    prev = None
    n = 0
    while g.want_session():
        fork = g.forks and n % g.forks == g.forks - 1 and prev
        pi, cwd = project(n - 1 if fork else n)
        t = BASE_MS + n * SESSION_GAP_MS
        sid = oid("ses", t, desc=True)
        provider, model, family, price = r.choice(OPENCODE_MODELS)
        if fork:
            provider, model, family, price = prev["provider"], prev["model"], prev["family"], prev["price"]
        st = g.new_ctx()
        if n % 4 == 0:
            con.execute("PRAGMA wal_checkpoint(PASSIVE)")
        cur = con.cursor()
        cur.execute("BEGIN")
        seq = [-1]
        sess = {"id": sid, "slug": "%s-%s" % (r.choice(["gentle", "tidy", "clever", "brave", "quiet", "swift"]),
                                              r.choice(["island", "knight", "engine", "river", "falcon", "garden"])),
                "projectID": "global", "directory": cwd, "path": cwd.lstrip("/"),
                "title": (prev["title"] + " (fork #1)") if fork else g.small(20, 60).replace("\n", " "),
                "version": "1.18.33"}
        totals = {"cost": 0.0, "input": 0, "output": 0, "reasoning": 0, "read": 0, "write": 0}

        def event(typ, data, ms):
            seq[0] += 1
            cur.execute("INSERT INTO event VALUES (?, ?, ?, ?, ?)",
                        (oid("evt", ms), sid, seq[0], typ, dumps(dict({"sessionID": sid}, **data))))

        def sess_info(ms):
            return dict(sess, cost=totals["cost"], tokens={"input": totals["input"], "output": totals["output"],
                                                          "reasoning": totals["reasoning"],
                                                          "cache": {"read": totals["read"], "write": totals["write"]}},
                        agent="build", model={"id": model, "providerID": provider, "variant": "default"},
                        time={"created": t0, "updated": ms}, permission=PERMISSION)

        t0 = t
        cur.execute("INSERT INTO event_sequence VALUES (?, 0, NULL)", (sid,))
        cur.execute("INSERT INTO session (id, project_id, slug, directory, path, title, version, "
                    "model, time_created, time_updated) VALUES (?, 'global', ?, ?, ?, ?, '1.18.33', ?, ?, ?)",
                    (sid, sess["slug"], cwd, sess["path"], sess["title"],
                     dumps({"id": model, "providerID": provider, "variant": "default"}), t, t))
        event("session.created.1", {"info": sess_info(t)}, t)
        msgs = []  # (id, created, data, parts[(id, created, data)]) for a fork of this session

        def put_msg(mid, created, updated, data, parts):
            cur.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, created, updated, dumps(data)))
            for pid, pc, pdata in parts:
                cur.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, sid, pc, updated, dumps(pdata)))
            msgs.append((mid, created, data, parts))

        if fork:
            remap = {}
            for mid, created, data, parts in prev["msgs"]:
                nid = oid("msg", t)
                remap[mid] = nid
                data = dict(data)
                if "parentID" in data:
                    data["parentID"] = remap.get(data["parentID"], data["parentID"])
                nparts = [(oid("prt", t), pc, pdata) for _, pc, pdata in parts]
                put_msg(nid, created, t + 5, data, nparts)
                event("message.updated.1", {"info": dict(data, id=nid, sessionID=sid)}, t)
                for pid, pc, pdata in nparts:
                    event("message.part.updated.1", {"part": dict(pdata, id=pid, sessionID=sid, messageID=nid),
                                                     "time": t}, t)
                tk = data.get("tokens")
                if data["role"] == "assistant" and tk and (data["cost"] or any(
                        (tk["input"], tk["output"], tk["reasoning"], tk["cache"]["read"], tk["cache"]["write"]))):
                    c = tk["cache"]
                    g.copied.add(tk["input"], tk["output"] + tk["reasoning"], c["read"], c["write"], tk["reasoning"])
                    for k, v in (("input", tk["input"]), ("output", tk["output"]), ("reasoning", tk["reasoning"]),
                                 ("read", c["read"]), ("write", c["write"])):
                        totals[k] += v
                    totals["cost"] += data["cost"]
        for turn in range(r.randint(3, 12)):
            if not g.want_call():
                break
            t += r.randint(2000, 120000)
            umid = oid("msg", t)
            text = g.big()
            udata = {"role": "user", "time": {"created": t}, "agent": "build",
                     "model": {"providerID": provider, "modelID": model}, "summary": {"diffs": []}}
            uparts = [(oid("prt", t + 10), t + 10, {"type": "text", "text": text})]
            put_msg(umid, t, t + 20, udata, uparts)
            event("message.updated.1", {"info": dict(udata, id=umid, sessionID=sid)}, t)
            event("message.part.updated.1", {"part": dict(uparts[0][2], id=uparts[0][0], sessionID=sid,
                                                          messageID=umid), "time": t + 10}, t + 10)
            g.grow(st, len(text))
            steps = r.choice([1, 1, 2, 2, 3, 4])
            for step in range(steps):
                if not g.want_call():
                    break
                t += r.randint(300, 30000)
                amid = oid("msg", t)
                base = {"parentID": umid, "role": "assistant", "mode": "build", "agent": "build",
                        "path": {"cwd": cwd, "root": "/"}, "cost": 0,
                        "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                        "modelID": model, "providerID": provider, "time": {"created": t}}
                event("message.updated.1", {"info": dict(base, id=amid, sessionID=sid)}, t)
                if r.random() < 0.01:
                    # a 4xx: the message with an error and every token 0 (not a call that counts)
                    data = dict(base, error={"name": "APIError", "data": {"message": "Bad Request", "statusCode": 400,
                                                                          "isRetryable": False}},
                                time={"created": t, "completed": t + 300})
                    put_msg(amid, t, t + 300, data, [])
                    event("message.updated.1", {"info": dict(data, id=amid, sessionID=sid)}, t + 300)
                    break
                u = g.usage(st, family)
                tool = step < steps - 1
                cost = (u["uncached"] * price[0] + (u["out"] + u["reas"]) * price[1] + u["cached"] * price[2] +
                        u["cw"] * price[3]) / 1e6
                tokens = {"total": u["prompt"] + u["out"] + u["reas"], "input": u["uncached"], "output": u["out"],
                          "reasoning": u["reas"], "cache": {"write": u["cw"], "read": u["cached"]}}
                te = t + r.randint(200, 30000)
                parts = [(oid("prt", t + 50), t + 50, {"type": "step-start"})]
                if u["reas"]:
                    parts.append((oid("prt", t + 60), t + 60, {"type": "reasoning", "text": g.small(40, 800),
                                                                "time": {"start": t + 60, "end": t + 70}}))
                parts.append((oid("prt", t + 80), t + 80, {"type": "text", "text": g.small(40, 1500),
                                                            "time": {"start": t + 80, "end": t + 90}}))
                if tool:
                    name = r.choice(["bash", "read", "grep", "edit"])
                    inp = ({"command": "npm test -- --grep %s" % g.small(5, 20)} if name == "bash"
                           else {"filePath": "%s/src/%s.ts" % (cwd, g.hexid(8))})
                    out = g.big()
                    parts.append((oid("prt", t + 100), t + 100, {
                        "type": "tool", "tool": name, "callID": "call_%s" % g.hexid(24),
                        "state": {"status": "completed", "input": inp, "output": out,
                                  "metadata": {"output": out[:2000], "exit": 0, "truncated": len(out) > 2000}
                                  if name == "bash" else {"preview": out[:500], "truncated": False},
                                  "title": inp.get("command", inp.get("filePath")),
                                  "time": {"start": t + 100, "end": te - 100}}}))
                    g.grow(st, len(out))
                parts.append((oid("prt", te - 10), te - 10, {"reason": "tool-calls" if tool else "stop",
                                                               "type": "step-finish", "tokens": tokens, "cost": cost}))
                data = dict(base, cost=cost, tokens=tokens, time={"created": t, "completed": te},
                            finish="tool-calls" if tool else "stop")
                put_msg(amid, t, te, data, parts)
                for pid, pc, pdata in parts:
                    event("message.part.updated.1", {"part": dict(pdata, id=pid, sessionID=sid, messageID=amid),
                                                     "time": pc}, pc)
                fin = dict(data, time={"created": t})
                event("message.updated.1", {"info": dict(fin, id=amid, sessionID=sid)}, te - 5)
                event("message.updated.1", {"info": dict(data, id=amid, sessionID=sid)}, te)
                for k, v in (("input", u["uncached"]), ("output", u["out"]), ("reasoning", u["reas"]),
                             ("read", u["cached"]), ("write", u["cw"])):
                    totals[k] += v
                totals["cost"] += cost
                event("session.updated.1", {"info": sess_info(te)}, te)
                g.calls += 1
                g.tot.add(u["uncached"], u["out"] + u["reas"], u["cached"], u["cw"], u["reas"])
                t = te
        cur.execute("UPDATE session SET cost = ?, tokens_input = ?, tokens_output = ?, tokens_reasoning = ?, "
                    "tokens_cache_read = ?, tokens_cache_write = ?, time_updated = ? WHERE id = ?",
                    (totals["cost"], totals["input"], totals["output"], totals["reasoning"], totals["read"],
                     totals["write"], t, sid))
        cur.execute("UPDATE event_sequence SET seq = ? WHERE aggregate_id = ?", (seq[0], sid))
        cur.execute("COMMIT")
        prev = None if fork else {"msgs": msgs, "provider": provider, "model": model, "family": family,
                                  "price": price, "title": sess["title"]}
        g.sessions += 1
        n += 1
        g.bytes = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
    g.files = sum(os.path.exists(path + s) for s in ("", "-wal"))
    return con  # left open: the caller exits without closing it, as OpenCode leaves its -wal


# ============================================================================ copilot
COPILOT_MODELS = [("gpt-4.1", "openai", "/chat/completions", "chatcmpl-", 64000, 16384),
                  ("claude-sonnet-4.5", "anthropic", "/v1/messages", "msg_", 168000, 32000),
                  ("gpt-5-mini", "openai", "/responses", "resp_", 128000, 64000)]


def gen_copilot(g):
    r = g.rng
    root = os.path.join(g.home, ".copilot")
    write_file(g, os.path.join(root, "config.json"), json.dumps({"firstLaunchAt": iso(BASE_MS)}, indent=2))
    sysprompt = ("You are the GitHub Copilot CLI, a terminal assistant built by GitHub. " +
                 g.text(22000))
    subprompt = "As a sub-agent, complete your parent's task yourself. " + g.text(20000)
    n = 0
    while g.want_session():
        pi, cwd = project(n)
        sid = g.uid()
        t = BASE_MS + n * SESSION_GAP_MS
        model, ptype, endpoint, idp, maxp, maxo = r.choice(COPILOT_MODELS)
        st = g.new_ctx(thinks=model == "gpt-5-mini" or r.random() < 0.3)
        d = os.path.join(root, "session-state", sid)
        f = Lines(g, os.path.join(d, "events.jsonl"))
        last = [None]
        tt = [t]
        metrics = {}   # model -> [count, in, out, cr, cw, reas], cumulative over the session
        agents = {}    # agent -> model -> same

        def ev(typ, data, agent=None):
            o = {"type": typ, "data": data}
            if agent:
                o["agentId"] = agent
            o.update(id=g.uid(), timestamp=iso(tt[0]), parentId=last[0])
            f.put(o)
            last[0] = o["id"]
            return o

        def call(interaction, turn, agent=None, parent_tool=None, tool_name=None):
            u = g.usage(st, "anthropic" if ptype == "anthropic" else "openai")
            tt[0] += r.randint(300, 30000)
            inp = u["uncached"] + u["cached"] + u["cw"]
            outp = u["out"] + u["reas"]
            api = idp + g.hexid(24)
            usage = {"model": model, "modelDisplayName": model, "inputTokens": inp, "outputTokens": outp,
                     "cacheReadTokens": u["cached"], "cacheWriteTokens": u["cw"]}
            if u["reas"] or ptype != "anthropic":
                usage["reasoningTokens"] = u["reas"]
            usage.update({"cost": 0.0, "duration": r.randint(200, 30000), "timeToFirstTokenMs": r.uniform(50, 3000),
                          "outputTtftMs": r.uniform(50, 3000), "interTokenLatencyMs": r.uniform(0.01, 1),
                          "initiator": "sub-agent" if agent else r.choice(["user", "agent"]),
                          "interactionType": "conversation-subagent" if agent else "conversation-agent",
                          "isByok": True, "byokKind": "local_user",
                          "modelProvider": "anthropic" if ptype == "anthropic" else "other", "providerType": ptype,
                          "isAuto": False, "maxPromptTokens": maxp, "maxOutputTokens": maxo, "transport": "http",
                          "requestBodyBytes": inp * 4, "requestBodyWireBytes": inp * 4,
                          "requestBodyEncoding": "identity", "apiCallId": api})
            if ptype == "anthropic":
                usage["providerCallId"] = "req_" + g.hexid(24)
            if parent_tool:
                usage["parentToolCallId"] = parent_tool
            usage.update({"rte": False, "apiEndpoint": endpoint,
                          "accounting": {"sourceSessionId": sid, "sequence": g.calls + 1, "usageId": api},
                          "aiCreditsStatus": "unavailable", "availableToolCount": 17, "toolTokenCount": 5748,
                          "customToolCallCount": 0, "unmatchedToolResultCount": 0, "orphanToolCallCount": 0,
                          "frontierSource": "reported_writes", "cacheDetailsReported": True,
                          "numToolCalls": 1 if tool_name else 0, "toolCounts": {tool_name: 1} if tool_name else {},
                          "finishReason": "tool_calls" if tool_name else "stop", "contentFilterTriggered": False})
            ev("session.usage_record", {"usage": usage}, agent)
            g.calls += 1
            g.tot.add(u["uncached"], outp, u["cached"], u["cw"], u["reas"])
            if agent:
                g.part("subagent", u["uncached"], outp, u["cached"], u["cw"], u["reas"])
            for m in [metrics.setdefault(model, [0] * 6), agents.setdefault(agent or "main", {}).setdefault(model, [0] * 6)]:
                for i, v in enumerate((1, inp, outp, u["cached"], u["cw"], u["reas"])):
                    m[i] += v
            return api

        def turn_loop(interaction, turn0, origin, agent=None, parent_tool=None, allow_task=True):
            steps = r.choice([1, 1, 2, 2, 3, 4])
            turn = turn0
            for step in range(steps):
                if not g.want_call():
                    break
                tool = step < steps - 1
                name = (r.choice(["bash", "view", "grep", "edit", "task"] if allow_task else ["bash", "view", "grep"])
                        if tool else None)
                td = {"turnId": str(turn), "interactionId": interaction}
                if parent_tool:
                    td["parentToolCallId"] = parent_tool
                ev("assistant.turn_start", td, agent)
                api = call(interaction, turn, agent, parent_tool, name)
                tcid = "call_%s" % g.hexid(24)
                args = ({"command": "npm test -- --grep %s" % g.small(5, 20), "description": "Run the tests"}
                        if name == "bash" else
                        {"description": "Sub-agent task", "prompt": g.small(100, 600), "agent_type": "general-purpose",
                         "name": "helper"} if name == "task" else {"path": "%s/src/%s.ts" % (cwd, g.hexid(8))})
                msg = {"messageId": g.uid(), "originatingMessageId": origin, "model": model,
                       "content": g.small(40, 1500),
                       "toolRequests": [{"toolCallId": tcid, "name": name, "arguments": args, "type": "function",
                                         "intentionSummary": args.get("description", "View file")}] if tool else [],
                       "interactionId": interaction, "turnId": str(turn)}
                if st["thinks"]:
                    msg["reasoningText"] = g.small(40, 600)
                msg.update(rte=False, apiCallId=api)
                if parent_tool:
                    msg["parentToolCallId"] = parent_tool
                ev("assistant.message", msg, agent)
                if tool:
                    ev("tool.execution_start", {"toolCallId": tcid, "toolName": name, "arguments": args,
                                                "turnId": str(turn), "model": model}, agent)
                    if name == "task" and g.want_call():
                        sub = g.uid()
                        tt[0] += 5
                        ev("subagent.started", {"toolCallId": tcid, "agentName": "general-purpose",
                                                "agentDisplayName": "helper", "agentDescription": "Sub-agent task",
                                                "model": model, "taskModelSource": "unset",
                                                "modelSelectionSource": "session_inheritance", "resumable": False,
                                                "agentType": "general-purpose", "executionMode": "sync"}, sub)
                        ev("subagent.configured", {"model": model, "multiTurn": True}, sub)
                        ev("session.model_change", {"source": "agent", "contextTier": None, "newModel": model,
                                                    "reasoningEffort": None}, sub)
                        sub_inter = g.uid()
                        ev("user.message", {"content": args["prompt"], "transformedContent": args["prompt"],
                                            "source": "agent-" + sid, "messageId": g.uid(),
                                            "interactionId": sub_inter, "turnId": "0"}, sub)
                        ev("system.message", {"role": "system", "content": subprompt}, sub)
                        before = sum(v[1] + v[2] for v in agents.get(sub, {}).values())
                        turn_loop(sub_inter, 0, g.uid(), sub, tcid, allow_task=False)
                        tot_sub = sum(v[1] + v[2] for v in agents.get(sub, {}).values()) - before
                        ev("subagent.completed", {"toolCallId": tcid, "agentName": "general-purpose",
                                                  "agentDisplayName": "helper", "model": model,
                                                  "firstDispatchedModel": model,
                                                  "modelSelectionSource": "session_inheritance", "totalToolCalls": 1,
                                                  "totalTokens": tot_sub, "durationMs": r.randint(1000, 90000)}, sub)
                        out = g.small(200, 2000)
                    else:
                        out = g.big()
                    tt[0] += r.randint(50, 20000)
                    done = {"toolCallId": tcid, "model": model, "interactionId": interaction, "turnId": str(turn),
                            "rte": False}
                    if name == "bash":
                        done["shellExecution"] = {"exitCode": 0}
                    done.update(success=True, result={"content": out},
                                toolTelemetry={"properties": {"executionMode": "sync"},
                                               "metrics": {"result_token_count": len(out) // 4}})
                    if parent_tool:
                        done["parentToolCallId"] = parent_tool
                    ev("tool.execution_complete", done, agent)
                    g.grow(st, len(out))
                td = {"turnId": str(turn)}
                if parent_tool:
                    td["parentToolCallId"] = parent_tool
                ev("assistant.turn_end", td, agent)
                turn += 1
            return turn

        for proc in range(r.choice([1, 1, 1, 2])):
            if proc and not g.want_call():
                break
            if proc:
                tt[0] += r.randint(60000, 3600000)
                ev("session.resume", {"resumeTime": iso(tt[0]), "eventCount": 0, "eventsFileSizeBytes": 0,
                                      "selectedModel": model, "contextTier": None, "sessionLimits": None,
                                      "context": {"cwd": cwd}, "alreadyInUse": False, "remoteSteerable": False,
                                      "sessionWasActive": False})
            else:
                ev("session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                     "copilotVersion": "1.0.102", "startTime": iso(t), "selectedModel": model,
                                     "contextTier": None, "context": {"cwd": cwd}, "alreadyInUse": False,
                                     "remoteSteerable": False})
            turn = 0
            for ut in range(r.randint(2, 6)):
                if not g.want_call():
                    break
                tt[0] += r.randint(2000, 120000)
                text = g.big()
                inter = g.uid()
                mid = g.uid()
                ev("user.message", {"content": text, "transformedContent": "<current_datetime>%s</current_datetime>\n\n%s"
                                    % (iso(tt[0]), text), "messageId": mid, "supportedNativeDocumentMimeTypes": [],
                                    "delivery": "idle", "interactionId": inter, "turnId": str(turn)})
                if ut == 0:
                    ev("system.message", {"role": "system", "content": sysprompt})
                g.grow(st, len(text))
                turn = turn_loop(inter, turn, mid)
            tt[0] += 100

            def mm(m):
                return {"requests": {"count": m[0], "cost": 0.0}, "usage": {
                    "inputTokens": m[1], "outputTokens": m[2], "cacheReadTokens": m[3], "cacheWriteTokens": m[4],
                    "reasoningTokens": m[5]}}
            model_metrics = {k: dict(mm(v), totalNanoAiu=0.0) for k, v in metrics.items()}
            agent_metrics = {a: {"totalApiDurationMs": 0, "totalNanoAiu": 0.0,
                                 "modelMetrics": {k: mm(v) for k, v in ms.items()}} for a, ms in agents.items()}
            ev("session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": 0, "totalNanoAiu": 0,
                                    "totalApiDurationMs": r.randint(100, 90000), "sessionStartTime": t,
                                    "codeChanges": {"linesAdded": 0, "linesRemoved": 0, "filesModified": []},
                                    "modelMetrics": model_metrics, "agentMetrics": agent_metrics,
                                    "currentModel": model, "currentTokens": st["ctx"]})
        f.close(tt[0])
        write_file(g, os.path.join(d, "workspace.yaml"),
                   "id: %s\ncwd: %s\nclient_name: github/cli\nname: session %d\nuser_named: false\nsummary_count: 0\n"
                   "fork_count: 0\ncreated_at: %s\nupdated_at: %s\n" % (sid, cwd, n, iso(t), iso(tt[0])), tt[0])
        g.sessions += 1
        n += 1


# ============================================================================ droid
DROID_MODELS = [{"model": "claude-sonnet-4-5", "displayName": "Claude Sonnet", "baseUrl": "https://api.anthropic.com",
                 "apiKey": "sk-ant-bench", "provider": "anthropic", "maxOutputTokens": 8192},
                {"model": "gpt-5-mini", "displayName": "GPT Five Mini", "baseUrl": "https://api.openai.com/v1",
                 "apiKey": "sk-bench", "provider": "openai", "maxOutputTokens": 8192},
                {"model": "glm-4.6", "displayName": "GLM", "baseUrl": "https://api.z.ai/api/paas/v4",
                 "apiKey": "sk-bench", "provider": "generic-chat-completion-api", "maxOutputTokens": 8192}]


def gen_droid(g):
    r = g.rng
    root = os.path.join(g.home, ".factory")
    write_file(g, os.path.join(root, "settings.json"),
               "{\n  \"customModels\": [\n" + ",\n".join("    " + json.dumps(m) for m in DROID_MODELS) + "\n  ]\n}\n")
    reminder = "<system-reminder>\nThe tools listed below are available in this environment. " + g.text(8000) + \
        "\n</system-reminder>"
    host = g.uid()
    prev = None
    n = 0
    while g.want_session():
        fork = g.forks and n % g.forks == g.forks - 1 and prev
        pi, cwd = project(n - 1 if fork else n)
        slug = cwd.replace("/", "-")
        d = os.path.join(root, "sessions", slug)
        sid = g.uid()
        t = BASE_MS + n * SESSION_GAP_MS
        mi = r.randrange(len(DROID_MODELS))
        if fork:
            mi = prev["mi"]
        cm = DROID_MODELS[mi]
        mid = "custom:%s-%d" % (cm["displayName"].replace(" ", "-"), mi)
        family = {"anthropic": "anthropic"}.get(cm["provider"], "openai")
        st = g.new_ctx()
        f = Lines(g, os.path.join(d, sid + ".jsonl"))
        start = {"type": "session_start", "id": sid, "title": g.small(20, 60).replace("\n", " "), "owner": "unknown",
                 "version": 2, "cwd": cwd, "hostId": host, "isSessionTitleManuallySet": False}
        msgs = []
        last = [None]
        tt = [t]

        def msg(role, content, extra=None, mid_=None):
            o = {"type": "message", "id": mid_ or g.uid()}
            if last[0]:
                o["parentId"] = last[0]
            o["timestamp"] = iso(tt[0])
            o["message"] = dict({"role": role, "content": content}, **(extra or {}))
            f.put(o)
            msgs.append(o)
            last[0] = o["id"]
            return o

        if fork:
            start.update(parent=prev["sid"], forkedAtMessageId=prev["msgs"][-1]["id"])
            f.put(start)
            for o in prev["msgs"]:
                f.put(o)
                msgs.append(o)
            last[0] = prev["msgs"][-1]["id"]
        else:
            f.put(start)
            first = g.uid()
            msg("user", [{"type": "text", "text": reminder}], mid_="context-" + first)
        usage = dict.fromkeys(("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens",
                               "thinkingTokens"), 0)
        before, last_call = dict(usage), None
        failed = r.random() < 0.03
        for turn in range(r.randint(2, 8)):
            if not g.want_call():
                break
            tt[0] += r.randint(2000, 120000)
            text = g.big()
            um = msg("user", [{"type": "text", "text": text}], {"interactionMode": "auto"})
            g.grow(st, len(text))
            if failed:
                break  # a 5xx: retried, then killed; the usage stays 0
            steps = r.choice([1, 1, 2, 2, 3, 4])
            for step in range(steps):
                if not g.want_call():
                    break
                tt[0] += r.randint(300, 30000)
                u = g.usage(st, family)
                tool = step < steps - 1
                content = []
                if u["reas"]:
                    content.append({"type": "thinking", "signature": "sig" + g.hexid(16), "signatureProvider": cm["provider"],
                                    "durationMs": r.randint(0, 3000), "thinking": g.small(40, 600)})
                content.append({"type": "text", "text": g.small(40, 1500)})
                name = r.choice(["Execute", "Read", "Grep", "Edit"])
                tid = "toolu_%s" % g.hexid(24)
                if tool:
                    content.append({"type": "tool_use", "id": tid, "name": name,
                                    "input": {"command": "npm test", "riskLevelReason": "runs the tests",
                                              "riskLevel": "low"} if name == "Execute"
                                    else {"file_path": "%s/src/%s.ts" % (cwd, g.hexid(8))}})
                extra = {"modelId": mid, "reasoningEffort": "off"}
                if family != "anthropic" and cm["provider"] == "generic-chat-completion-api":
                    extra = {"openaiMessageId": "chatcmpl-%s" % g.hexid(24), **extra}
                msg("assistant", content, extra)
                # inputTokens excludes the cache read; a chat-wire cache write stays inside it
                if cm["provider"] == "anthropic":
                    inp, cw = u["uncached"], u["cw"]
                else:
                    inp, cw = u["uncached"] + u["cw"], 0
                before = dict(usage)
                usage["inputTokens"] += inp; usage["outputTokens"] += u["out"] + u["reas"]
                usage["cacheCreationTokens"] += cw; usage["cacheReadTokens"] += u["cached"]
                usage["thinkingTokens"] += u["reas"]
                last_call = {"inputTokens": inp, "outputTokens": u["out"] + u["reas"], "cacheReadTokens": u["cached"]}
                g.calls += 1
                if tool:
                    tt[0] += r.randint(50, 20000)
                    out = g.big()
                    msg("user", [{"type": "tool_result", "tool_use_id": tid, "content": out}])
                    g.grow(st, len(out))
            f.put({"type": "agent_turn_outcome", "turnId": um["id"], "reason": "completed", "resultKind": "text"})
        f.close(tt[0])

        def snapshot(tu, lc):
            s = {"assistantActiveTimeMs": r.randint(100, 600000), "model": mid, "reasoningEffort": "off",
                 "interactionMode": "auto", "autonomyLevel": "high", "autonomyMode": "auto-high",
                 "compactionThresholdCheckEnabled": True, "toolExecutionMode": "direct_only",
                 "allowSubagentsInScripts": False, "tags": [{"name": "exec"}],
                 "providerLock": cm["provider"], "providerLockTimestamp": iso(t + 30),
                 "inclusiveTokenUsage": dict(tu, factoryCredits=0), "tokenUsage": dict(tu, factoryCredits=0),
                 "childInclusiveTokenUsageBySessionId": {}}
            if lc:
                s["lastCallTokenUsage"] = lc
            return json.dumps(s, indent=2)
        sp = os.path.join(d, sid + ".settings.json")
        write_file(g, sp + ".bak", snapshot(before, None), tt[0] - 50)
        write_file(g, sp, snapshot(usage, last_call), tt[0])
        if any(usage.values()):
            g.tot.add(usage["inputTokens"], usage["outputTokens"], usage["cacheReadTokens"],
                      usage["cacheCreationTokens"], min(usage["thinkingTokens"], usage["outputTokens"]))
        prev = None if fork else {"sid": sid, "msgs": msgs, "mi": mi}
        g.sessions += 1
        n += 1


def main():
    ap = argparse.ArgumentParser(description="a harness's home directory with known totals")
    ap.add_argument("harness", choices=["gemini", "qwen", "opencode", "copilot", "droid"])
    ap.add_argument("home")
    ap.add_argument("--mb", type=float, default=0)
    ap.add_argument("--calls", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--forks", type=int, default=10)
    a = ap.parse_args()
    if bool(a.mb) == bool(a.calls):
        ap.error("one of --mb and --calls")
    os.makedirs(a.home, exist_ok=True)
    g = Gen(a)
    keep = globals()["gen_" + a.harness](g)
    json.dump(g.result(), sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    if keep is not None:
        # OpenCode's process ends with its connection open: the last pages
        # stay in opencode.db-wal (read through SQLite, as a reader must)
        os._exit(0)


if __name__ == "__main__":
    main()
