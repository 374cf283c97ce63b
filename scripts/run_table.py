#!/usr/bin/env python3
"""A markdown table of `induction run` summaries, for BENCHMARKS.md.

Usage: scripts/run_table.py LABEL=FILE[#SECTION] [LABEL=FILE[#SECTION] ...]

Each FILE holds the output of one `induction run` (its summary at the end); each becomes a row
with the wall and kernel seconds, the launches, the CG iterations and the final error and
divergence norms, so that two builds' runs of one configuration sit side by side. A log that
joins several runs in one file, each after a heading line `## NAME`, gives one of them with
FILE#NAME: the lines from that heading to the next line starting with `## ` (or the end).
"""

import re
import sys


def parse(text, path):
    row = {}
    m = re.search(r"time: kernels ([\d.]+) s, transfers [\d.]+ s .*?wall ([\d.]+) s; (\d+) kernel launches", text)
    if not m:
        raise SystemExit(f"{path}: no `time:` line (is it the output of `induction run`?)")
    row["kernel_s"], row["wall_s"], row["launches"] = float(m[1]), float(m[2]), int(m[3])
    m = re.search(r"CG iterations: (\d+)", text)
    row["cg"] = int(m[1]) if m else 0
    m = re.search(r"^(\d+) steps of dt", text, re.M)
    row["steps"] = int(m[1]) if m else 0
    for name, key in [("error", "error"), ("divergence", "divergence")]:
        m = re.search(rf"^{name}\s+\S+\s+(\S+)$", text, re.M)
        row[key] = m[1] if m else "?"
    return row


def section(text, path, name):
    """The lines of `text` under the heading `## name`, up to the next `## ` heading."""
    lines = text.splitlines()
    heads = [i for i, l in enumerate(lines) if l.startswith("## ")]
    start = next((i for i in heads if lines[i][3:].strip() == name), None)
    if start is None:
        have = ", ".join(lines[i][3:].strip() for i in heads) or "none"
        raise SystemExit(f"{path}: no section `## {name}` (sections: {have})")
    end = next((i for i in heads if i > start), len(lines))
    return "\n".join(lines[start + 1 : end])


def main(args):
    if not args:
        raise SystemExit(__doc__)
    print("| run | steps | CG iterations | wall s | kernel s | launches | error | divergence |")
    print("|---|---|---|---|---|---|---|---|")
    for arg in args:
        label, _, spec = arg.partition("=")
        path, _, name = spec.partition("#")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if name:
            text = section(text, path, name)
        r = parse(text, spec)
        print(
            f"| {label} | {r['steps']} | {r['cg']} | {r['wall_s']:.3f} | {r['kernel_s']:.3f} | "
            f"{r['launches']} | {r['error']} | {r['divergence']} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
