#!/usr/bin/env python3
"""Checks on what headless Chromium made of an HTML report (tests/system/html.t):

  html_check.py colors PNG RRGGBB...   pixels of each colour (each channel within 8),
                                       then the colour of the pixel at (3, 3)
  html_check.py netlog NETLOG.json     requests the page made (network isolation
                                       key of a file:// page), one URL a line
  html_check.py table DOM.html         the page's table, a row a line, cells by tabs
  html_check.py text DOM.html          the page's visible text, one text node a line
  html_check.py count DOM.html TAG     how many TAG elements the DOM holds
  html_check.py terminal TABLE.txt     the rows of `agentmeterctl report`'s table,
                                       cells by tabs (columns are 2+ blanks apart)
Only the standard library: PNG decoding is done here (8-bit RGB/RGBA)."""
import collections, html.parser, json, re, struct, sys, zlib


def png_pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "unsupported PNG"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    lo7 = int.from_bytes(b"\x7f" * stride, "big")
    hi1 = int.from_bytes(b"\x80" * stride, "big")
    prev = bytes(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        if f == 2:  # Up: a bytewise sum mod 256 of two rows, as whole numbers
            a, b = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            line = (((a & lo7) + (b & lo7)) ^ ((a ^ b) & hi1)).to_bytes(stride, "big")
        elif f:
            line = bytearray(line)
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                if f == 1:
                    line[i] = (line[i] + a) & 255
                elif f == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = bytes(line)
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def colors(path, wanted):
    w, h, bpp, rows = png_pixels(path)
    seen = collections.Counter()
    for row in rows:
        seen.update(zip(row[0::bpp], row[1::bpp], row[2::bpp]))
    for c in wanted:
        t = tuple(int(c[i:i + 2], 16) for i in (0, 2, 4))
        print(c, sum(n for px, n in seen.items() if all(abs(px[k] - t[k]) <= 8 for k in range(3))))
    x = 3 * bpp
    print("corner %02x%02x%02x" % (rows[3][x], rows[3][x + 1], rows[3][x + 2]))


def netlog(path):
    d = json.load(open(path))
    names = {v: k for k, v in d["constants"]["logEventTypes"].items()}
    for e in d["events"]:
        p = e.get("params") or {}
        if names.get(e["type"]) == "URL_REQUEST_START_JOB" and "file://" in p.get("network_isolation_key", ""):
            print(p.get("url"))


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.row, self.cell, self.text, self.tags, self.skip = [], None, None, [], {}, 0

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag in ("style", "script", "title"):
            self.skip += 1
        if tag == "tr":
            self.row = []
        if tag in ("td", "th") and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("style", "script", "title"):
            self.skip -= 1
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        if tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if not self.skip and data.strip():
            self.text.append(data.strip())


def dom(path):
    p = Dom()
    p.feed(open(path, encoding="utf-8").read())
    return p


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "colors":
        colors(path, sys.argv[3:])
    elif cmd == "netlog":
        netlog(path)
    elif cmd == "table":
        for row in dom(path).rows:
            print("\t".join(c for c in row if c))
    elif cmd == "text":
        print("\n".join(dom(path).text))
    elif cmd == "count":
        print(dom(path).tags.get(sys.argv[3], 0))
    elif cmd == "terminal":
        lines = open(path, encoding="utf-8").read().splitlines()
        for line in lines[1:]:  # after the caption
            if line.startswith("cost: "):
                break
            if re.fullmatch(r"[- ]+", line):
                continue
            print("\t".join(c for c in re.split(r" {2,}", line.strip()) if c))


main()
