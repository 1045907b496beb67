#!/usr/bin/env python3
# An independent oracle for pi (and OpenClaw JSONL) session files: computes
# deduplicated usage totals by message identity, so system tests can check
# the daemon's ledger against a second implementation of formats.md.
"""usage: pi_oracle.py [--openclaw] [--rows] [--naive] PATH...

PATH is a session file, or a sessions root scanned like pi lists it
(ROOT/*.jsonl and ROOT/*/*.jsonl, without subagent-artifacts/).
Prints one JSON object with the deduplicated totals:
  files, not_source, rows, input, output, cache_read, cache_write,
  reasoning, total, cost_nano (sum of per-row whole nano-USD, as the
  ledger keeps them), cost_usd, cost_usd_exact (the written USD figures
  summed exactly, rounded once), priced_rows, calls, malformed (lines that
  were not wholly JSON)
(--naive adds "naive": the same sums without deduplication; --rows adds
"row_list": every counted row).  --openclaw skips the synthetic
provider "openclaw" rows and honours custom model-snapshot entries.
"""
import json
import os
import re
import sys
from decimal import Decimal, ROUND_HALF_UP

DECODER = json.JSONDecoder()
ISO = re.compile(r'^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?'
                 r'(Z|z|[+-]\d\d:\d\d)$')
SYNTHETIC = {"delivery-mirror", "gateway-injected"}


def days_from_civil(y, m, d):
    # proleptic Gregorian day count since 1970-01-01, by a different route
    # than the C code: count days through the years and months
    import datetime
    return (datetime.date(y, m, d) - datetime.date(1970, 1, 1)).days


def iso_ms(s):
    m = ISO.match(s) if isinstance(s, str) else None
    if not m:
        return None
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    frac = (m.group(7) or "0")[:3].ljust(3, "0")
    off = 0
    z = m.group(8)
    if z not in ("Z", "z"):
        sign = 1 if z[0] == "+" else -1
        off = sign * (int(z[1:3]) * 3600 + int(z[4:6]) * 60)
    try:
        days = days_from_civil(y, mo, d)
    except ValueError:
        return None
    secs = days * 86400 + h * 3600 + mi * 60 + min(sec, 59) - off
    return secs * 1000 + int(frac)


def num_ms(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v == v and abs(v) < 9.2e18:
        return int(Decimal(v).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    if isinstance(v, str):
        return iso_ms(v)
    return None


def tokens(u, key):
    v = u.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = num_ms(v)
    return v if v is not None and v > 0 else (0 if v is not None else None)


def nano(total):
    return int(Decimal(total * 1e9).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def read_usage(u):
    if not isinstance(u, dict):
        return None
    r = {k: tokens(u, src) or 0 for k, src in
         (("input", "input"), ("output", "output"), ("cache_read", "cacheRead"),
          ("cache_write", "cacheWrite"))}
    t = tokens(u, "totalTokens")
    r["total"] = t if t is not None else sum(r.values())
    rs = tokens(u, "reasoning")
    r["reasoning"] = rs if rs is not None else (tokens(u, "reasoningTokens") or 0)
    cost = u.get("cost")
    ct = cost.get("total") if isinstance(cost, dict) else None
    if isinstance(ct, (int, float)) and not isinstance(ct, bool) and ct == ct and ct != 0 \
            and abs(ct) < 9e12:
        r["cost_nano"], r["priced"] = nano(float(ct)), True
        r["cost_exact"] = Decimal(repr(float(ct)))
    else:
        r["cost_nano"], r["priced"] = 0, False
        r["cost_exact"] = Decimal(0)
    if not any(r[k] for k in ("input", "output", "cache_read", "cache_write", "total",
                              "reasoning")) and not r["priced"]:
        return None
    return r


def objects(line):
    """Every complete JSON value on a line, resyncing after a torn part.
    Returns (values, bad, first_ok): bad when some of the line was not JSON,
    first_ok when the line starts with a complete value."""
    out, bad, first_ok, i, n = [], False, None, 0, len(line)
    while True:
        while i < n and line[i] in " \t\r\n":
            i += 1
        if i >= n:
            return out, bad, bool(first_ok)
        try:
            obj, i = DECODER.raw_decode(line, i)
            out.append(obj)
            if first_ok is None:
                first_ok = True
        except ValueError:
            bad = True
            if first_ok is None:
                first_ok = False
            j = line.find('{"type":"', i + 1)
            if j < 0:
                return out, bad, bool(first_ok)
            i = j


class File:
    def __init__(self, openclaw):
        self.openclaw = openclaw
        self.provider = self.model = ""
        self.session = self.project = ""
        self.last_ms = 0
        self.header = False
        self.not_source = False
        self.malformed = 0

    def synthetic(self, p, m):
        return self.openclaw and p == "openclaw" and m in SYNTHETIC

    def carry(self, p, m):
        if isinstance(p, str):
            self.provider = p
        if isinstance(m, str):
            self.model = m

    def event(self, kind, p, m, own_ms, usage, rid=None, content=None):
        p = p if isinstance(p, str) else self.provider
        m = m if isinstance(m, str) else self.model
        if self.synthetic(p, m):
            return None
        u = read_usage(usage)
        if u is None:
            return None
        t = own_ms if own_ms is not None else self.last_ms
        calls = []
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "toolCall":
                    name = b.get("name") if isinstance(b.get("name"), str) else ""
                    ns = b.get("namespace")
                    calls.append(f"{ns}/{name}" if isinstance(ns, str) and ns else name)
        ident = (kind, p, m, t, rid if isinstance(rid, str) else "", u["input"], u["output"],
                 u["cache_read"], u["cache_write"], u["cost_nano"])
        row = dict(u, kind=kind, provider=p, model=m, time_ms=t, session=self.session,
                   project=self.project, calls=calls[:64])
        return ident, row

    def entry(self, e):
        if not self.header:
            self.header = True
            if not (isinstance(e, dict) and e.get("type") == "session"
                    and isinstance(e.get("id"), str)):
                self.not_source = True
                return []
            self.session, self.project = e["id"], e.get("cwd") if isinstance(e.get("cwd"), str) else ""
            self.carry(e.get("provider"), e.get("modelId"))
            t = num_ms(e.get("timestamp"))
            if t is not None:
                self.last_ms = t
            return []
        if not isinstance(e, dict):
            return []
        typ = e.get("type")
        ems = num_ms(e.get("timestamp"))
        out = []
        if typ == "message" and isinstance(e.get("message"), dict):
            msg = e["message"]
            mms = num_ms(msg.get("timestamp"))
            if mms is None:
                mms = ems
            role = msg.get("role")
            if role == "assistant":
                p, m = msg.get("provider"), msg.get("model")
                if not self.synthetic(p, m):
                    self.carry(p, m)
                    out.append(self.event("message", p, m, mms, msg.get("usage"),
                                          msg.get("responseId"), msg.get("content")))
            elif role == "toolResult" and "usage" in msg:
                out.append(self.event("tool_result", msg.get("provider"), msg.get("model"), mms,
                                      msg.get("usage")))
            if ems is None:
                ems = num_ms(msg.get("timestamp"))
        elif typ == "model_change":
            if not self.synthetic(e.get("provider"), e.get("modelId")):
                self.carry(e.get("provider"), e.get("modelId"))
        elif typ in ("compaction", "branch_summary"):
            out.append(self.event(typ, None, None, ems, e.get("usage")))
        elif typ == "usage":
            out.append(self.event("usage", e.get("provider"), e.get("model"), ems, e.get("usage")))
        elif typ == "custom" and self.openclaw and e.get("customType") == "model-snapshot":
            d = e.get("data")
            if isinstance(d, dict) and not self.synthetic(d.get("provider"), d.get("modelId")):
                self.carry(d.get("provider"), d.get("modelId"))
        if ems is not None:
            self.last_ms = ems
        return [x for x in out if x]


def parse_file(path, openclaw):
    with open(path, "rb") as f:
        data = f.read()
    st = File(openclaw)
    events = []
    parts = data.split(b"\n")
    tail = parts.pop()  # after the last newline: an unterminated line
    lines = [(p, True) for p in parts]
    if tail.strip():
        lines.append((tail, False))
    for raw, terminated in lines:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            continue
        objs, bad, first_ok = objects(line)
        if not terminated and (bad or not objs):
            break  # a partial last line: not counted (yet)
        if not st.header and not first_ok:
            st.header = st.not_source = True  # the first line is not even JSON
            break
        if bad or any(not isinstance(o, dict) for o in objs[1 if not st.header else 0:]):
            st.malformed += 1
        for o in objs:
            events.extend(st.entry(o))
            if st.not_source:
                break
        if st.not_source:
            break
    return st, events


def walk(root):
    if os.path.isfile(root):
        return [root]
    found = []
    for name in sorted(os.listdir(root)):
        p = os.path.join(root, name)
        if os.path.isfile(p) and name.endswith(".jsonl"):
            found.append(p)
        elif os.path.isdir(p) and name != "subagent-artifacts":
            for sub in sorted(os.listdir(p)):
                q = os.path.join(p, sub)
                if os.path.isfile(q) and sub.endswith(".jsonl"):
                    found.append(q)
    return found


KEYS = ("input", "output", "cache_read", "cache_write", "reasoning", "total", "cost_nano")


def sums(rows):
    s = {k: 0 for k in KEYS}
    s["rows"] = len(rows)
    s["priced_rows"] = sum(1 for r in rows if r["priced"])
    s["calls"] = sum(len(r["calls"]) for r in rows)
    for r in rows:
        for k in KEYS:
            s[k] += r[k]
    s["cost_usd"] = "%.6f" % (s["cost_nano"] / 1e9)
    # the written USD figures summed exactly, rounded once (rows keep whole
    # nano-USD each, so cost_nano may differ by up to rows/2 from this)
    exact = sum((r["cost_exact"] for r in rows), Decimal(0))
    s["cost_usd_exact"] = str(exact.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP))
    return s


def main(argv):
    openclaw = "--openclaw" in argv
    want_rows = "--rows" in argv
    naive = "--naive" in argv
    paths = [a for a in argv if not a.startswith("--")]
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    files = []
    for p in paths:
        files.extend(walk(p))
    seen, rows, all_rows = set(), [], []
    n_files = n_not = malformed = 0
    for f in files:
        st, events = parse_file(f, openclaw)
        malformed += st.malformed
        if st.not_source:
            n_not += 1
            continue
        n_files += 1
        for ident, row in events:
            all_rows.append(row)
            if ident in seen:
                continue
            seen.add(ident)
            rows.append(row)
    out = {"files": n_files, "not_source": n_not}
    out.update(sums(rows))
    out["malformed"] = malformed
    if naive:
        out["naive"] = sums(all_rows)
    if want_rows:
        out["row_list"] = [{k: v for k, v in r.items() if k != "cost_exact"} for r in rows]
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
