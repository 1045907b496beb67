#!/usr/bin/python3
"""One harness's result in tests/bench/harnesses.sh: the ledger's totals
against gen_harness.py's, ccusage's next to them with each difference
explained by exact arithmetic on the generator's figures (or reported as
unexplained), and the markdown table row.

  harness_report.py HARNESS BYTES:READ WARM.json EXPECTED.json OURS CCUSAGE MD_FILE

BYTES: the data directory's size; READ: the files with usage (what
agentmeterd and cat read).
OURS: '[events,input,output,cache_read,cache_write,total]' from agentmeterctl
report daily --json; CCUSAGE: '[input,output,cache_read,cache_write,total]'
from its .totals, or a word (missing, failed:N, none). Prints the text lines,
appends the row to MD_FILE; exits 1 when the ledger differs from the generator."""
import json, sys

FIELDS = ("input", "output", "cache_read", "cache_write", "total")


def vec(d, keys=FIELDS):
    return [d.get(k, 0) for k in keys]


def add(a, b, sign=1):
    return {k: a.get(k, 0) + sign * b.get(k, 0)
            for k in ("events", "input", "output", "cache_read", "cache_write", "total", "reasoning")}


def ccusage_model(h, exp):
    """What ccusage 20.0.24 totals on these corpora by its own rules, from the
    generator's figures: [input, output, cache_read, cache_write, total] and
    the reasons it differs from ours. Each rule was seen on the generated
    corpora and on the realgen samples (samples/realgen/*/peers)."""
    parts, cp = exp.get("parts", {}), exp.get("copied", {})
    why = []
    if h == "gemini":
        th = parts.get("thoughts", {}).get("output", 0)
        if th:
            why.append("its output leaves out the thoughts (%d), which its total keeps" % th)
        return [exp["input"], exp["output"] - th, exp["cache_read"], exp["cache_write"], exp["total"]], why
    if h == "qwen":
        side, cm = parts.get("side", {}), parts.get("copied_main", {})
        main = add(add(exp, side, -1), cm)
        if side.get("events"):
            why.append("reads assistant records only: the %d memory-extraction calls Qwen writes only as telemetry "
                       "are missing (%d tokens)" % (side["events"], side["total"]))
        if cm.get("events"):
            why.append("the %d calls the forks copy (same uuids) counted again (%d tokens)" % (cm["events"], cm["total"]))
        why.append("its input includes the cached tokens (%d), counted again as cache read" % main["cache_read"])
        if main.get("reasoning"):
            why.append("its total adds the reasoning (%d) again, though output includes it" % main["reasoning"])
        inp = main["input"] + main["cache_read"]
        return [inp, main["output"], main["cache_read"], main["cache_write"],
                inp + main["output"] + main["cache_read"] + main["reasoning"]], why
    if h == "opencode":
        a = add(exp, cp)
        if cp.get("events"):
            why.append("the %d calls the forks copy (new ids, same data) counted again (%d tokens)"
                       % (cp["events"], cp["total"]))
        if a.get("reasoning"):
            why.append("its output leaves out the reasoning (%d), which its total keeps" % a["reasoning"])
        return [a["input"], a["output"] - a["reasoning"], a["cache_read"], a["cache_write"], a["total"]], why
    if h == "droid":
        if exp.get("reasoning"):
            why.append("its total adds thinkingTokens (%d) again, though outputTokens includes them" % exp["reasoning"])
        return vec(exp)[:4] + [exp["total"] + exp.get("reasoning", 0)], why
    return vec(exp), why  # copilot: the same rules as ours


def ccusage_note(h, exp, got):
    if not isinstance(got, list):
        return {"missing": "not installed", "none": "printed no totals (found nothing it could read)"}.get(
            got, "failed (exit %s), no totals" % got.split(":")[-1])
    if got == [0] * 5:
        return "found nothing (all totals 0)"
    ours = vec(exp)
    if got == ours:
        return "equal to ours"
    model, why = ccusage_model(h, exp)
    deltas = ", ".join("%s %+d (%+.1f%%)" % (k, g - o, 100.0 * (g - o) / max(o, 1))
                       for k, g, o in zip(FIELDS, got, ours) if g != o)
    if got == model:
        return "%s; explained exactly: %s" % (deltas, "; ".join(why))
    return "differ, unexplained: ccusage %s, ours %s (its known rules would give %s)" % (got, ours, model)


def main():
    h, warm, exp = sys.argv[1], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
    nbytes, nread = (int(x) for x in sys.argv[2].split(":"))
    ours = json.loads(sys.argv[5]) if sys.argv[5].startswith("[") else None
    cc = json.loads(sys.argv[6]) if sys.argv[6].startswith("[") else sys.argv[6]
    md = sys.argv[7]
    want = [exp["events"]] + vec(exp)
    ok = ours == want
    ours_note = ("equal to the generator's" if ok else
                 "DIFFER: %s, generator %s (events, input, output, cache read, cache write, total)" % (ours, want))
    cc_note = ccusage_note(h, exp, cc)
    o, c, k = warm.get("ours"), warm.get("ccusage"), warm.get("cat")
    t = lambda x: "%.3f s" % x["wall"] if x else "-"
    mem = lambda x: "%.0f/%.0f MB" % (x["rss_mb"], x["anon_mb"]) if x else "-"
    exit_ = lambda x: " (exit %d)" % x["rc"] if x and x.get("rc") else ""
    print("   warm: agentmeterd %s%s (%.0f MB/s, user %.2f s, sys %.2f s), cat %s: agentmeterd/cat %.2f"
          % (t(o), exit_(o), nread / 1e6 / o["wall"], o["user"], o["sys"], t(k), k["ratio_wall"]))
    if c:
        print("   ccusage %s%s: agentmeterd/ccusage %.2f" % (t(c), exit_(c), c["ratio_wall"]))
    print("   peak RSS / private: agentmeterd %s, ccusage %s" % (mem(o), mem(c)))
    print("   agentmeterd totals (events, input, output, cache read, cache write, total): %s" % ours_note)
    print("   ccusage totals: %s" % cc_note)
    row = "| %s, %.0f MB (%s with usage), %d calls%s | %s%s (%.2fx cat) | %s | %s%s | %s, %s | ours %s; ccusage %s |" % (
        h, nbytes / 1e6, "%.0f MB" % (nread / 1e6) if nread >= 1e6 else "%.0f KB" % (nread / 1e3), exp["calls"], " (%d snapshot steps)" % exp["events"] if h == "droid" else "",
        t(o), exit_(o), k["ratio_wall"], t(k), t(c) if c else "not run", (exit_(c) + " (%.2f)" % c["ratio_wall"])
        if c else "", mem(o), mem(c), ours_note, cc_note)
    with open(md, "a") as f:
        f.write(row + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
