#!/usr/bin/env python3
"""Markdown table of `clarray bench --json` runs side by side, with peers beside them.

Each bandwidth row is shown as its ratio to the copy ceiling of its own run (latency rows in
microseconds); the peers (`scripts/peers.py --json`: CuPy, PyOpenCL, clarray's Python package)
are matched to clarray's rows by the operation they measure (a map below for the older rows,
the identical row name for the others), each against its own ceiling.

    python3 scripts/bench_table.py LABEL=bench.json [LABEL=bench.json ...] [--peers peers.json]
"""
import argparse
import json
import sys

# clarray bench row (prefix) -> peers.py row name
PEER_ROW = {
    "transfer: host->device pageable 256 MiB": "h2d pageable",
    "transfer: device->host pageable 256 MiB": "d2h pageable",
    "transfer: host->device pinned 256 MiB": "h2d pinned",
    "transfer: device->host pinned 256 MiB": "d2h pinned",
    "array: a + 2 (f32 2^28)": "a + 2",
    "array: 2*a + b (f32 2^28)": "2*a + b",
    "array: 2*a + b*c - d (f32 2^28)": "2*a + b*c - d",
    "array: 2*a.t() + 1 (16384x16384 f32)": "transposed 2-D: a.T + 1",
    "array: a + 2, 16 elements, per op (pipelined)": "16 elements: a + 2 (per op)",
    "reduce: sum f32 2^28": "sum",
    "reduce: max f32 2^28": "max",
    "reduce: dot f32 2^28": "dot",
    "reduce: (a - b).abs().max() f32 2^28": "abs(a - b).max()",
    "reduce: var f32 2^28": "var",
    "reduce: cumsum f32 2^28": "cumsum",
    "reduce: sort f32 2^24": "sort f32 2^24",
    "reduce: argsort f32 2^24": "argsort f32 2^24",
    "reduce: sum axis 0 f32 1024x1024x256": "sum axis 0 (1024x1024x256)",
    "reduce: sum axis 2 f32 1024x1024x256": "sum axis 2 (1024x1024x256)",
    "fusion: c = a + b; d = c * a (f32 2^28), Fused: one kernel, 4 arrays moved":
        "c = a + b; d = c * a (ElementwiseKernel, two outputs)",
    "fusion: the same as two assignments (f32 2^28), 2 kernels, 6 arrays moved":
        "c = a + b; d = c * a (two operations, out=)",
    "fusion: c = a + b; d = c * a (16 elements), Fused: one kernel, 4 arrays moved":
        "16 elements: c = a + b; d = c * a (ElementwiseKernel, two outputs)",
    "fusion: the same as two assignments (16 elements), 2 kernels, 6 arrays moved":
        "16 elements: c = a + b; d = c * a (two operations, out=)",
}
# Peer rows that are a peer's best form of a row (shown with the plain one, "best of").
PEER_BEST = {
    "2*a + b": ["2*a + b (cupy.fuse)", "2*a + b (memory pool)"],
    "2*a + b*c - d": ["2*a + b*c - d (cupy.fuse)", "2*a + b*c - d (clarray.fuse)"],
    "a + 2": ["a + 2 (memory pool)"],
    "sum": ["sum (memory pool)"],
    "16 elements: a + 2 (per op)": ["16 elements: a + 2 (per op, memory pool)"],
    "c = a + b; d = c * a (ElementwiseKernel, two outputs)": ["c = a + b; d = c * a (cupy.fuse, two outputs)"],
}

# Philox fills: cuRAND's own generator beside CuPy's Generator (both sizes: full and --quick).
for _lg in (28, 20):
    for _kind in ("uniform", "normal"):
        _name = f"random: {_kind} f32 2^{_lg} (write only)"
        PEER_BEST[_name] = [_name + " (cuRAND)"]


def peer_name(name, peers):
    """The peers' row for clarray's row `name`: mapped above, or a row of the same name."""
    if name in PEER_ROW:
        return PEER_ROW[name]
    if any(name == r["name"] for lib in peers.values() for r in lib["rows"]):
        return name
    return None


def cell(row, ceiling):
    """A bandwidth row as % of the ceiling; a latency row (bytes 0) in microseconds."""
    if row is None:
        return "—"
    if row["bytes"] == 0 or row["name"].startswith(("16 elements", "trivial kernel")):
        return f"{row['seconds'] * 1e6:.1f} µs"
    return f"{100 * row['bytes'] / row['seconds'] / ceiling:.1f}%"


def peer_cell(lib, name):
    rows = {r["name"]: r for r in lib["rows"]}
    ceiling = lib["ceiling_gbps"] * 1e9
    best = None
    for n in [name] + PEER_BEST.get(name, []):
        r = rows.get(n)
        if r is None:
            continue
        if best is None or r["seconds"] / max(r["bytes"], 1) < best["seconds"] / max(best["bytes"], 1):
            best = r
    if best is None:
        return "—"
    c = cell(best, ceiling)
    return c + (" (" + best["name"].split("(")[-1] if best["name"] != name else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", help="LABEL=bench.json")
    ap.add_argument("--peers")
    a = ap.parse_args()
    runs = []
    for spec in a.runs:
        label, _, path = spec.partition("=")
        if not path:
            sys.exit(f"bench_table: {spec}: give LABEL=FILE")
        runs.append((label, json.load(open(path))))
    peers = json.load(open(a.peers)) if a.peers else {}
    libs = [k for k in ("cupy", "pyopencl", "clarray-py") if k in peers]
    head = ["row"] + [label for label, _ in runs] + libs
    print("| " + " | ".join(head) + " |")
    print("|---" + "|---:" * (len(head) - 1) + "|")
    names = []
    for _, r in runs:
        for row in r["rows"]:
            if row["name"] not in names:
                names.append(row["name"])
    for name in names:
        cells = [name]
        for _, r in runs:
            row = next((x for x in r["rows"] if x["name"] == name), None)
            cells.append(cell(row, r["ceiling_bytes_per_second"]))
        p = peer_name(name, peers)
        for lib in libs:
            cells.append(peer_cell(peers[lib], p) if p else "")
        print("| " + " | ".join(cells) + " |")
    print()
    for label, r in runs:
        print(f"- {label}: {r['device']} ({r['platform']}, driver {r['driver']}), {r['date']}, commit "
              f"{r['commit']}, copy ceiling {r['ceiling_bytes_per_second'] / 1e9:.0f} GB/s")
    for lib in libs:
        print(f"- {lib}: {peers[lib]['device']}, its own copy ceiling {peers[lib]['ceiling_gbps']:.0f} GB/s")


if __name__ == "__main__":
    main()
