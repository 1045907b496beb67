#!/usr/bin/env python3
"""Cline CLI 3.x session files, shaped as Cline 3.0.65 writes them
(../shared/formats.md, Cline CLI): <sessions>/<id>/<id>.messages.json (the
usage source, pretty-printed with two spaces as JSON.stringify(x, null, 2)
writes it) and the manifest <id>.json with its session totals.

  gen_cline.py fixtures DIR      the project's fixture tree (fixtures/cline/data)
  gen_cline.py doc PATH ID CWD N [--torn-pause S]
                                 session ID's document with the first N calls
                                 of a scripted conversation, rewritten IN PLACE
                                 (same inode: truncate, write), as the hub does;
                                 with --torn-pause the first half is written,
                                 flushed, and the rest after S seconds
  gen_cline.py manifest PATH ID CWD N
                                 the manifest beside it, totals of N calls

Every figure a test expects is in fixtures/cline/expected.json, counted by
hand (fixtures/cline/README.md), not by this script."""
import json
import os
import sys
import time

UUIDS = [
    "0b6f8e1c-3c2d-4b8e-9a51-6d1f0e2a7c11",
    "5a2e9c44-8d0b-4f3e-a6c7-2b9d1e8f4a22",
    "c3d4e5f6-0718-4a29-b3c4-d5e6f7a8b933",
]


def user(mid, ts, text):
    return {"id": mid, "role": "user",
            "content": [{"type": "text", "text": '<user_input mode="act">%s</user_input>' % text}], "ts": ts}


def tool_result(mid, ts, tool_id, name, result):
    return {"id": mid, "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_id, "name": name,
                         "content": [{"query": "echo x", "result": result, "success": True}]}], "ts": ts}


def assistant(mid, ts, model, provider, metrics, text="Done.", tools=(), thinking=None, family=None):
    content = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking})
    content.append({"type": "text", "text": text})
    for tid, name in tools:
        content.append({"type": "tool_use", "id": tid, "name": name, "input": {"commands": ["ls -1"]}})
    m = {"id": mid, "role": "assistant", "content": content, "ts": ts}
    if model:
        m["modelInfo"] = {"id": model, "provider": provider}
        if family:
            m["modelInfo"]["family"] = family
    if metrics is not None:
        m["metrics"] = metrics
    return m


def failed(mid, ts, text):
    return {"id": mid, "role": "assistant", "content": [{"type": "text", "text": text}], "ts": ts}


def document(session, messages, updated_at, agent="lead", origin_session=None):
    d = {"version": 1, "updated_at": updated_at, "agent": agent, "sessionId": session}
    if agent != "lead":
        d["taskType"] = "subagent_task"
    d["origin"] = {"source": "cli", "mode": "user", "sessionId": origin_session or session, "version": "3.0.65"}
    d["messages"] = messages
    d["system_prompt"] = "You are Cline, an AI coding agent. (fixture)"
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"


def usage_of(messages):
    u = {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0, "totalCost": 0}
    for m in messages:
        mt = m.get("metrics")
        if m.get("role") != "assistant" or not mt:
            continue
        for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"):
            u[k] += mt.get(k, 0)
        u["totalCost"] += mt.get("cost", 0)
    return u


def manifest(session, cwd, provider, model, messages, status="completed", extra=None):
    u = usage_of(messages)
    md = {"source": "cli", "provider": provider, "model": model, "prompt": "fixture", "mode": "act",
          "title": "fixture", "totalCost": u["totalCost"], "aggregatedAgentsCost": u["totalCost"],
          "usage": u, "aggregateUsage": u}
    if extra:
        md.update(extra)
    m = {"version": 1, "session_id": session, "source": "cli", "pid": 4242,
         "started_at": "2027-01-15T08:00:00.000Z", "ended_at": "2027-01-15T08:05:00.000Z",
         "exit_code": 0 if status == "completed" else 1, "status": status, "interactive": False,
         "provider": provider, "model": model, "cwd": cwd, "workspace_root": cwd,
         "team_name": "team-fixt1", "enable_tools": True, "enable_spawn": True, "enable_teams": True,
         "prompt": '<user_input mode="act">fixture</user_input>', "metadata": md,
         "messages_path": "/home/u/.cline/data/sessions/%s/%s.messages.json" % (session, session)}
    return json.dumps(m, indent=2) + "\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# ---- the fixture tree -----------------------------------------------------------------

A = "1800000000000_alpha"
B = "1800000100000_forkb"
C = "1800000200000_faild"
D = "1800000300000_plain"
E = "1800000400000_brokn"


def alpha_messages():
    return [
        user(UUIDS[0], 1800000000100, "THINK then CALLBASH"),
        assistant("msg_A1aaaaaa", 1800000001000, "claude-sonnet-4-5", "anthropic",
                  {"inputTokens": 5000, "outputTokens": 40, "cacheReadTokens": 0, "cacheWriteTokens": 100,
                   "cost": 0.015675},
                  text="Calling run_commands.", tools=[("toolu_a1", "run_commands")],
                  thinking="a plan with \"quotes\", ]} brackets and a \\ backslash", family="claude-sonnet"),
        tool_result("msg_A1tool01", 1800000001500, "toolu_a1", "run_commands",
                    "README.md\n{\"not\": [\"a message\"]}\n" + "x" * 300),
        assistant("msg_A2bbbbbb", 1800000002000, "claude-sonnet-4-5", "anthropic",
                  {"inputTokens": 5200, "outputTokens": 60, "cacheReadTokens": 4900, "cacheWriteTokens": 200,
                   "cost": 0.00342},
                  text="Tool result received. Done.", family="claude-sonnet"),
        user(UUIDS[1], 1800000003000, "FAIL then give up"),
        failed("error_9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a", 1800000003100, "Error: 400 Bad Request"),
    ]


def fixtures(root):
    sessions = os.path.join(root, "sessions")
    a = alpha_messages()
    write(os.path.join(sessions, A, A + ".messages.json"), document(A, a, "2027-01-15T08:00:03.200Z"))
    write(os.path.join(sessions, A, A + ".json"), manifest(A, "/home/u/proj-alpha", "anthropic", "claude-sonnet-4-5", a))
    # a sub-agent of A: its own document beside A's, the file named by the agent
    sub = [
        user(UUIDS[2], 1800000001200, "look at the tests"),
        assistant("msg_S1cccccc", 1800000001400, "claude-haiku-4-5", "anthropic",
                  {"inputTokens": 1000, "outputTokens": 20, "cacheReadTokens": 0, "cacheWriteTokens": 0}),
    ]
    write(os.path.join(sessions, A, "agent_sub1.messages.json"),
          document(A + "__agent_sub1", sub, "2027-01-15T08:00:01.450Z", agent="subagent", origin_session=A))
    # B: a fork of A, seeded with A's first four messages as they are (same
    # ids, same ts, same metrics), then one call of its own
    b = a[:4] + [
        user("msg_B0user01", 1800000100100, "now the docs"),
        assistant("msg_B1dddddd", 1800000100500, "claude-sonnet-4-5", "anthropic",
                  {"inputTokens": 6000, "outputTokens": 30, "cacheReadTokens": 5000, "cacheWriteTokens": 0,
                   "cost": 0.00495},
                  text="Reading and listing.", tools=[("toolu_b1", "read_files"), ("toolu_b2", "run_commands")]),
    ]
    write(os.path.join(sessions, B, B + ".messages.json"), document(B, b, "2027-01-15T08:01:40.600Z"))
    write(os.path.join(sessions, B, B + ".json"),
          manifest(B, "/home/u/proj-alpha", "anthropic", "claude-sonnet-4-5", b,
                   extra={"fork": {"forkedFromSessionId": A, "forkedAt": "2027-01-15T08:01:40.000Z",
                                   "source": "cli"}}))
    # C: a failed run: the error turn only
    c = [user(UUIDS[0].replace("0b6f", "1c7f"), 1800000200100, "FAIL400"),
         failed("error_1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", 1800000200200, "Error: 400 invalid request")]
    write(os.path.join(sessions, C, C + ".messages.json"), document(C, c, "2027-01-15T08:03:20.300Z"))
    write(os.path.join(sessions, C, C + ".json"),
          manifest(C, "/home/u/proj-beta", "openai-compatible", "fake-gpt", c, status="failed"))
    # D: no cost written: a model no table knows (unpriced), one the table
    # prices, and a message without modelInfo (the manifest's model)
    d = [
        user("msg_D0user01", 1800000300100, "hello"),
        assistant("msg_D1eeeeee", 1800000300200, "fake-gpt", "openai-compatible",
                  {"inputTokens": 3000, "outputTokens": 10, "cacheReadTokens": 1024, "cacheWriteTokens": 0}),
        assistant("msg_D2ffffff", 1800000300300, "gpt-4.1", "openai-native",
                  {"inputTokens": 2000, "outputTokens": 8, "cacheReadTokens": 0, "cacheWriteTokens": 0}),
        assistant("msg_D3gggggg", 1800000300400, None, None,
                  {"inputTokens": 500, "outputTokens": 5, "cacheReadTokens": 0, "cacheWriteTokens": 0}),
    ]
    write(os.path.join(sessions, D, D + ".messages.json"), document(D, d, "2027-01-15T08:05:00.500Z"))
    write(os.path.join(sessions, D, D + ".json"),
          manifest(D, "/home/u/proj-beta", "openai-compatible", "fake-gpt", d))
    # E: a document its writer left half-written (the test ages it)
    full = document(E, [user("msg_E0user01", 1800000400100, "cut"),
                        assistant("msg_E1hhhhhh", 1800000400200, "gpt-4.1", "openai-native",
                                  {"inputTokens": 77, "outputTokens": 7, "cacheReadTokens": 0,
                                   "cacheWriteTokens": 0, "cost": 0.0002})], "2027-01-15T08:06:40.300Z")
    write(os.path.join(sessions, E, E + ".messages.json"), full[: len(full) // 2])
    # files beside the documents that are not usage
    write(os.path.join(sessions, A, A + ".log"), "fixture transcript log\n")
    write(os.path.join(sessions, A, A + ".hooks.jsonl"), '{"hook":"x"}\n')


# ---- the live test's documents --------------------------------------------------------

def live_messages(n):
    """The first n calls of a scripted conversation: call i has input
    1000 + 10 i (cache read 500 from the second on), output 10 + i, cost
    (1 + i) / 1000 USD."""
    msgs = []
    base = 1800001000000
    for i in range(n):
        msgs.append(user("u%04d" % i, base + 1000 * i, "step %d" % i))
        msgs.append(assistant("msg_L%07d" % i, base + 1000 * i + 500, "claude-sonnet-4-5", "anthropic",
                              {"inputTokens": 1000 + 10 * i, "outputTokens": 10 + i,
                               "cacheReadTokens": 500 if i else 0, "cacheWriteTokens": 0,
                               "cost": (1 + i) / 1000},
                              text="step %d: " % i + "y" * 2000, tools=[("toolu_L%d" % i, "run_commands")]))
        msgs.append(tool_result("t%04d" % i, base + 1000 * i + 700, "toolu_L%d" % i, "run_commands", "z" * 3000))
    return msgs


def rewrite_in_place(path, text, torn_pause=0.0):
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if torn_pause > 0:
            half = len(data) // 2
            os.write(fd, data[:half])
            os.fsync(fd)
            time.sleep(torn_pause)
            os.write(fd, data[half:])
        else:
            os.write(fd, data)
    finally:
        os.close(fd)


def main(argv):
    if len(argv) >= 2 and argv[1] == "fixtures":
        fixtures(argv[2])
        return 0
    if len(argv) >= 6 and argv[1] in ("doc", "manifest"):
        path, session, cwd, n = argv[2], argv[3], argv[4], int(argv[5])
        pause = float(argv[7]) if len(argv) >= 8 and argv[6] == "--torn-pause" else 0.0
        msgs = live_messages(n)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if argv[1] == "doc":
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".%03dZ" % (int(time.time() * 1000) % 1000)
            rewrite_in_place(path, document(session, msgs, stamp), pause)
        else:
            rewrite_in_place(path, manifest(session, cwd, "anthropic", "claude-sonnet-4-5", msgs))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
