#!/usr/bin/env python3
"""Formats one corpus's medians from measure.py --json (cold and warm runs)
as a markdown table row, or with --text as lines for the terminal.
  table.py [--text] NAME BYTES COLD.json WARM.json [NOTE]"""
import json, sys

text = sys.argv[1] == "--text"
args = sys.argv[2:] if text else sys.argv[1:]
name, nbytes = args[0], int(args[1])
cold, warm = json.load(open(args[2])), json.load(open(args[3]))
note = args[4] if len(args) > 4 else ""


def t(o):
    return "%.3f s" % o["wall"] if o else "-"


def mem(o):
    return "%.0f/%.0f MB" % (o["rss_mb"], o["anon_mb"]) if o else "-"


def ratio(o):
    return " (%.2f)" % o["ratio_wall"] if o and "ratio_wall" in o else ""


oc, cc = cold.get("ours"), cold.get("cat")
ow, cw = warm.get("ours"), warm.get("cat")
cu, tc, tw = warm.get("ccusage"), warm.get("tscold"), warm.get("tswarm")
mbs = lambda o: " %.0f MB/s" % (nbytes / 1e6 / o["wall"]) if o else ""
if text:
    if oc:
        print("   cold: agentmeterd %s (%s), cat %s: agentmeterd/cat %.2f" % (t(oc), mbs(oc).strip(), t(cc),
                                                                          cc["ratio_wall"]))
    print("   warm: agentmeterd %s (%s, user %.2f s, sys %.2f s), cat %s: agentmeterd/cat %.2f"
          % (t(ow), mbs(ow).strip(), ow["user"], ow["sys"], t(cw), cw["ratio_wall"]))
    if cu:
        print("   ccusage %s: agentmeterd/ccusage %.2f" % (t(cu), cu["ratio_wall"]))
    if tc:
        print("   tokscale cold cache %s (agentmeterd/it %.2f), warm cache %s (%.2f)"
              % (t(tc), tc["ratio_wall"], t(tw), tw["ratio_wall"]))
    print("   peak RSS / private: agentmeterd %s, ccusage %s, tokscale %s"
          % (mem(ow), mem(cu), mem(tc)))
else:
    cat = "%s / %s" % (t(cc), t(cw))
    print("| %s, %.0f MB | %s%s | %s%s | %s | %s%s | %s%s / %s%s | %s, %s, %s | %s |" % (
        name, nbytes / 1e6, t(oc), " (%.2fx cat)" % (cc["ratio_wall"]) if oc else "",
        t(ow), " (%.2fx cat)" % (cw["ratio_wall"]), cat, t(cu), ratio(cu), t(tc), ratio(tc), t(tw), ratio(tw),
        mem(ow), mem(cu), mem(tc), note))
