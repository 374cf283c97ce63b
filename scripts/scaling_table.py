#!/usr/bin/env python3
"""Markdown tables of `induction bench --scaling` logs, for docs/scaling.md and BENCHMARKS.md.

    python3 scripts/scaling_table.py runs LOG       # every run of a log: ranks, overlap, run, strong and weak
    python3 scripts/scaling_table.py summary LOG    # efficiencies per rank count, the runs side by side
    python3 scripts/scaling_table.py shared LOG     # one table row per run and scaling (one-rank row once)

A LOG holds the outputs of `induction bench --scaling` (the heading line `induction bench
--scaling on DEVICE, P ranks: …, overlap on|off` and its Markdown table). In `runs` and
`summary` each output sits under a heading `### rR-pP-on` or `### rR-pP-off` (run R on P ranks;
other headings, such as `### before-p2`, are left out); `shared` takes every output of the log in
order, whatever its heading.
"""

import re
import sys

HEAD = re.compile(r"^induction bench --scaling on .*?, (\d+) ranks: .*, overlap (on|off)$")
SECTION = re.compile(r"^### r(\d+)-p(\d+)-(on|off)$")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def outputs(path):
    """The outputs in a log: dicts of ranks, overlap, section (run, P, overlap) or None, and rows
    (scaling, ranks, grid, process grid, ms/step, Mnodes/s, efficiency, halo, exposed, hidden)."""
    found, section = [], None
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if line.startswith("### "):
                m = SECTION.match(line)
                section = (int(m[1]), int(m[2]), m[3]) if m else "other"
                continue
            m = HEAD.match(line)
            if m:
                found.append({"ranks": int(m[1]), "overlap": m[2], "section": section, "rows": []})
                continue
            if found and line.startswith("| ") and cells(line)[0] in ("strong", "weak"):
                c = cells(line)
                found[-1]["rows"].append(
                    {
                        "scaling": c[0], "ranks": int(c[1]), "grid": c[2], "pgrid": c[3], "ms": c[4],
                        "mnodes": c[5], "eff": c[6], "halo": c[7], "exposed": c[8], "hidden": c[9],
                    }
                )
    if not found:
        raise SystemExit(f"{path}: no output of `induction bench --scaling`")
    return found


def runs_of(path):
    """{(run, ranks, overlap): output} of the `### rR-pP-X` sections."""
    got = {}
    for o in outputs(path):
        s = o["section"]
        if isinstance(s, tuple):
            if s[1] != o["ranks"] or s[2] != o["overlap"]:
                raise SystemExit(f"{path}: section r{s[0]}-p{s[1]}-{s[2]} holds a run on {o['ranks']} ranks, overlap {o['overlap']}")
            got[s] = o
    if not got:
        raise SystemExit(f"{path}: no `### rR-pP-on|off` section")
    return got


def row(o, scaling, ranks):
    r = [x for x in o["rows"] if x["scaling"] == scaling and x["ranks"] == ranks]
    if len(r) != 1:
        raise SystemExit(f"expected one {scaling} row on {ranks} ranks, found {len(r)}")
    return r[0]


def shares(r):
    return f"{r['halo']} / {r['exposed']} / {r['hidden']}"


def pct(text):
    """`41.4%` -> `41%`."""
    return f"{float(text.rstrip('%')):.0f}%"


def table_runs(path):
    got = runs_of(path)
    out = [
        "| ranks | overlap | run | strong: ms/step (1 rank → P) | Mnodes/s at P | efficiency | halo / exposed / hidden "
        "| weak: ms/step (1 → P) | efficiency | halo / exposed / hidden |",
        "|---:|---|---:|---|---:|---:|---|---|---:|---|",
    ]
    order = {"on": 0, "off": 1}
    for run, p, ov in sorted(got, key=lambda k: (k[1], order[k[2]], k[0])):
        o = got[(run, p, ov)]
        s1, w1 = row(o, "strong", 1), row(o, "weak", 1)
        if p == 1:
            out.append(f"| 1 | — | {run} | {s1['ms']} | {s1['mnodes']} | {s1['eff']} | — | {w1['ms']} | {w1['eff']} | — |")
            continue
        s, w = row(o, "strong", p), row(o, "weak", p)
        out.append(
            f"| {p} | {ov} | {run} | {s1['ms']} → {s['ms']} | {s['mnodes']} | {s['eff']} | {shares(s)} "
            f"| {w1['ms']} → {w['ms']} | {w['eff']} | {shares(w)} |"
        )
    return out


def table_summary(path):
    got = runs_of(path)
    nruns = sorted({k[0] for k in got})
    ranks = sorted({k[1] for k in got if k[1] > 1})
    out = [
        f"| ranks | strong efficiency, overlap on ({len(nruns)} runs) | off | strong, on: share of the step "
        "hidden behind the interior | weak efficiency, on | off |",
        "|---:|---|---|---|---|---|",
    ]

    def col(p, ov, scaling, key):
        return ", ".join(pct(row(got[(r, p, ov)], scaling, p)[key]) for r in nruns)

    for p in ranks:
        out.append(
            f"| {p} | {col(p, 'on', 'strong', 'eff')} | {col(p, 'off', 'strong', 'eff')} | "
            f"{col(p, 'on', 'strong', 'hidden')} | {col(p, 'on', 'weak', 'eff')} | {col(p, 'off', 'weak', 'eff')} |"
        )
    return out


def table_shared(path):
    out = [
        "| overlap | scaling | ranks | grid (process grid) | ms/step | Mnodes/s | efficiency | halo / exposed / hidden |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    found = outputs(path)
    one = next((o for o in found if o["ranks"] == 1), None)
    if one:
        r = row(one, "strong", 1)
        out.append(f"| — | strong | 1 | {r['grid']} | {r['ms']} | {float(r['mnodes']):.0f} | {r['eff']} | — |")
    for scaling in ("strong", "weak"):
        for o in found:
            if o["ranks"] == 1:
                continue
            r = row(o, scaling, o["ranks"])
            out.append(
                f"| {o['overlap']} | {scaling} | {o['ranks']} | {r['grid']} ({r['pgrid']}) | {r['ms']} | "
                f"{float(r['mnodes']):.0f} | {r['eff']} | {shares(r)} |"
            )
    return out


def main(args):
    kinds = {"runs": table_runs, "summary": table_summary, "shared": table_shared}
    if len(args) != 2 or args[0] not in kinds:
        raise SystemExit(__doc__)
    print("\n".join(kinds[args[0]](args[1])))


if __name__ == "__main__":
    main(sys.argv[1:])
