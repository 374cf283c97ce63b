#!/usr/bin/env python3
"""Markdown table of `clarray bench` text output kept in a log, rounds of one build side by side.

    python3 scripts/bench_log_table.py LOG --section NAME=LABEL [--section NAME=LABEL ...]
        [--rows TEXT] [--latency TEXT]

The LOG holds `clarray bench` rows as printed (`row  time  GB/s  ceiling  note`), grouped under
heading lines `-- bench NAME` (a section ends at the next line starting with `-- ` or `#`). Each
`--section NAME=LABEL` makes a column LABEL of every section whose heading is exactly
`-- bench NAME`; a build run in several rounds has one cell with each round's figure, in the log's
order, separated by commas. Cells are the row's ratio to the copy ceiling of its own run (the
`ceiling` column as printed); rows whose name contains a `--latency` text give their best time in
µs instead. `--rows` keeps only the rows whose name contains the text.
"""

import argparse
import re

ROW = re.compile(r"^(\S.*?)\s{2,}([\d.]+) (us|ms|s)\s+([\d.]+)\s+([\d.]+)%")
SCALE = {"us": 1.0, "ms": 1e3, "s": 1e6}


def sections(path):
    """[(name, {row: (microseconds, ceiling %)})] in the log's order."""
    found, current = [], None
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if line.startswith("-- bench "):
                current = (line[len("-- bench ") :].strip(), {})
                found.append(current)
                continue
            if line.startswith("-- ") or line.startswith("#"):
                current = None
                continue
            m = ROW.match(line)
            if m and current is not None:
                current[1][m[1].strip()] = (float(m[2]) * SCALE[m[3]], m[5])
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--section", action="append", required=True, help="NAME=LABEL")
    ap.add_argument("--rows", default="", help="only rows whose name contains this")
    ap.add_argument("--latency", action="append", default=[], help="rows whose name contains this: best time in µs")
    a = ap.parse_args()
    cols = [s.partition("=")[::2] for s in a.section]
    found = sections(a.log)
    names = []
    for name, _ in cols:
        if not any(n == name for n, _ in found):
            raise SystemExit(f"{a.log}: no section `-- bench {name}`")
    for n, rows in found:
        if any(n == name for name, _ in cols):
            names += [r for r in rows if a.rows in r and r not in names]
    if not names:
        raise SystemExit(f"{a.log}: no row containing `{a.rows}` in the sections asked for")
    print("| row | " + " | ".join(label for _, label in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for r in names:
        latency = any(t in r for t in a.latency)
        out = []
        for name, _ in cols:
            vals = [rows[r] for n, rows in found if n == name and r in rows]
            if not vals:
                out.append("—")
            elif latency:
                out.append(", ".join(f"{us:.1f}" for us, _ in vals) + " µs")
            else:
                out.append(", ".join(f"{p}%" for _, p in vals))
        print(f"| {r}{' (best time)' if latency else ''} | " + " | ".join(out) + " |")


if __name__ == "__main__":
    main()
