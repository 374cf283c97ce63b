#!/usr/bin/env python3
"""Runs `induction` for every row of an InductionEq reference file and writes the comparison page.

    python3 scripts/inductioneq_compare.py [--bin target/release/induction]
        [--data docs/data/inductioneq-<commit>.csv] [--notes docs/data/inductioneq-notes.txt]
        [--out docs/inductioneq-comparison.md] [--only ID[,ID...]] [--timeout SECONDS]

With --only, the other rows keep their lines of the existing page (rows new to it are listed with
InductionEq's figures alone).

The reference file holds numbers only: InductionEq's figures for each configuration, produced by
running its kernels outside this repository (its header lines, starting with '#', say how). The
notes file holds one explanation per row id (`id: text`, continued on lines that start with
whitespace); rows without a note show none. `induction` runs with the row's options and
`--history`, whose last line gives its figures at the final time in full precision. A row whose
options `induction` refuses (an unknown case or option) is listed with the message it printed.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

QUANTITIES = [
    ("error", "error"),
    ("relative_error", "relative error"),
    ("divergence", "divergence"),
    ("energy", "energy"),
]
# Case names of InductionEq's headers and the `induction --case` names.
CASES = {
    "rotation_2D": "rotation_2d",
    "rotation_3D": "rotation_3d",
    "confined_domain": "confined_domain",
    "hall_periodic": "hall_periodic",
    "hall_travelling_wave": "hall_travelling_wave",
    "alfven_periodic_2D": "alfven_periodic_2d",
}
# InductionEq's divergence cleaning forms and the options that select the same method here
# (None: not offered by `induction`).
CLEANING = {
    "": [],
    "USE_LAPLACE_WIDE_STENCIL_LNS": ["--div-clean", "--cg-norm", "euclidean"],
    "USE_LAPLACE_WIDE_STENCIL_DIRICHLET": [
        "--div-clean", "--cg-norm", "euclidean", "--laplacian", "wide", "--potential-bc", "dirichlet",
    ],
    "USE_LAPLACE_NARROW_STENCIL_DIRICHLET": [
        "--div-clean", "--cg-norm", "euclidean", "--laplacian", "narrow", "--potential-bc", "dirichlet",
    ],
}


def read_rows(path):
    header, rows = [], []
    with open(path, newline="") as fh:
        lines = []
        for line in fh:
            if line.startswith("#"):
                header.append(line[1:].strip())
            elif line.strip():
                lines.append(line)
    for r in csv.DictReader(lines):
        rows.append(r)
    return header, rows


def read_notes(path):
    notes, key = {}, None
    if not os.path.exists(path):
        return notes
    with open(path) as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:
                notes[key] += " " + line.strip()
            else:
                key, _, text = line.partition(":")
                key = key.strip()
                notes[key] = text.strip()
    return notes


def options(row):
    """The `induction run` options of a reference row, or a reason why there are none."""
    if row["case"] not in CASES:
        return None, f"case {row['case']} has no counterpart here"
    case = CASES[row["case"]]
    if row.get("periodic") == "NONE":
        # InductionEq's periodic = 'NONE' on hall_periodic: its outflow setting.
        if row["case"] != "hall_periodic":
            return None, f"{row['case']} with periodic = NONE has no counterpart here"
        case = "hall_outflow"
    clean = CLEANING.get(row["div_clean"])
    if clean is None:
        return None, f"cleaning form {row['div_clean']} is not offered by induction"
    args = [
        "--case", case, "--order", row["order"], "--n", row["n"], "--nz", row["nz"],
        "--forms", row["forms"], "--integrator", row["integrator"], "--cfl", row["cfl"],
        "--final-time", row["final_time"], "--precision", "f64",
    ]
    if row.get("ny"):
        args += ["--ny", row["ny"]]
    if float(row["dissipation"] or 0) != 0:
        args += ["--dissipation", row["dissipation"]]
    return args + clean, None


def run_induction(binary, args, timeout=None):
    with tempfile.TemporaryDirectory() as d:
        hist = os.path.join(d, "history.csv")
        t0 = time.time()
        try:
            p = subprocess.run([binary, "run", "--quiet", "--history", hist] + args,
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"did not finish within {timeout:g} s (--timeout)", time.time() - t0
        wall = time.time() - t0
        if p.returncode != 0:
            msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
            return None, (msg[-1] if msg else f"exit status {p.returncode}"), wall
        with open(hist, newline="") as fh:
            hrows = list(csv.DictReader(fh))
    last = hrows[-1]
    out = {k: float(last[k]) for k, _ in QUANTITIES}
    out["steps"] = int(float(last["step"]))
    cg = [float(r["cg_iterations"]) for r in hrows if r.get("cg_iterations")]
    out["cg_iterations"] = int(sum(cg)) if cg else None
    return out, None, wall


# Figures below this are round-off zeros (a steady state kept exactly, a field without
# divergence): their relative difference says nothing, so they are left out of the largest one.
ROUND_OFF_ZERO = 1e-11


def rel_diff(a, b):
    if a == b or max(abs(a), abs(b)) < ROUND_OFF_ZERO:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def existing_lines(path):
    """The rows of an existing page, by id, without their last cell (the note)."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as fh:
        for line in fh:
            if line.startswith("| `"):
                # 17 cells before the note: id … largest relative difference.
                cells = line.rstrip("\n")[2:].split(" | ", 18)
                rows[cells[0].strip("`")] = "| " + " | ".join(cells[:17]) + " | "
    return rows


def fmt(v):
    return f"{v:.9e}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target")), "release", "induction"))
    ap.add_argument("--data")
    ap.add_argument("--notes", default=os.path.join(root, "docs", "data", "inductioneq-notes.txt"))
    ap.add_argument("--out", default=os.path.join(root, "docs", "inductioneq-comparison.md"))
    ap.add_argument("--only")
    ap.add_argument("--timeout", type=float, help="seconds a row's run may take")
    a = ap.parse_args()
    if a.data is None:
        d = os.path.join(root, "docs", "data")
        found = sorted(f for f in os.listdir(d) if f.startswith("inductioneq-") and f.endswith(".csv"))
        if len(found) != 1:
            sys.exit(f"inductioneq_compare: expected one docs/data/inductioneq-*.csv, found {found}; pass --data")
        a.data = os.path.join(d, found[0])
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"inductioneq_compare: no induction binary at {a.bin}; build it with "
                 "`cargo build --release -p induction` or pass --bin")
    header, rows = read_rows(a.data)
    only = set(a.only.split(",")) if a.only else None
    kept = existing_lines(a.out) if only else {}

    lines = []
    total = time.time()
    for row in rows:
        args, why_not = options(row)
        if only and row["id"] not in only:
            if row["id"] in kept:
                lines.append((row["id"], kept[row["id"]]))
                continue
            args, why_not = None, "left out of this pass (--only)"
        ours, err, wall = (None, why_not, 0.0) if args is None else run_induction(a.bin, args, a.timeout)
        ref = {k: float(row[k]) for k, _ in QUANTITIES}
        cells = [f"`{row['id']}`", row["case"], row["order"], row["forms"], row["integrator"]]
        extra = []
        if float(row["dissipation"] or 0) != 0:
            extra.append(f"dissipation {row['dissipation']}")
        if row["div_clean"]:
            extra.append(f"cleaning {row['div_clean'].replace('USE_LAPLACE_', '')}")
        if row.get("periodic") == "NONE":
            extra.append("periodic NONE (hall_outflow)")
        if row.get("ny"):
            cells.append(f"{row['n']}×{row['ny']}×{row['nz']}")
        else:
            cells.append(f"{row['n']}²×{row['nz']}" if row["n"] != row["nz"] else f"{row['n']}³")
        cells.append(", ".join(extra) or "–")
        if ours is None:
            cells.append(f"– / {row['steps']}")
            for k, _ in QUANTITIES:
                cells += ["–", fmt(ref[k])]
            cells.append(f"not run: {err}")
            print(f"{row['id']}: not run ({err})", flush=True)
        else:
            cells.append(f"{ours['steps']} / {row['steps']}")
            worst = 0.0
            for k, _ in QUANTITIES:
                cells += [fmt(ours[k]), fmt(ref[k])]
                worst = max(worst, rel_diff(ours[k], ref[k]))
            cg = ""
            if row.get("cg_iterations") and ours["cg_iterations"] is not None:
                cg = f" (CG iterations {ours['cg_iterations']} / {row['cg_iterations']})"
            cells.append(f"{worst:.1e}{cg}")
            print(f"{row['id']}: largest relative difference {worst:.1e}{cg} ({wall:.1f} s)", flush=True)
        lines.append((row["id"], "| " + " | ".join(cells) + " | "))
    # Read at the end, so that notes written while the rows ran are in the page.
    notes = read_notes(a.notes)
    lines = [line + notes.get(rid, "") + " |" for rid, line in lines]

    out = [
        "# induction beside InductionEq",
        "",
        "Generated by `scripts/inductioneq-compare.sh` (do not edit by hand): every row of",
        f"`{os.path.relpath(a.data, root)}` run with `induction run` (release build, f64), its figures",
        "at the final time beside InductionEq's. The reference file's header:",
        "",
    ] + [f"> {h}" for h in header] + [
        "",
        "Figures: the error ‖B − B_exact‖, the relative error, the divergence ‖D·B‖ over all nodes and",
        "the energy ‖B‖², all in the SBP-weighted L2 norm, at the final time; each cell pair is",
        "induction, then InductionEq. Steps: induction / InductionEq. The last but one column is the",
        "largest relative difference |a − b|/max(|a|, |b|) of the four figures (figures below 1e-11 in",
        "both codes are round-off zeros and left out); the last says why rows",
        f"differ (`{os.path.relpath(a.notes, root)}`, written after reading both codes).",
        "",
        "| id | case | order | forms ∂ⱼ(uᵢBⱼ)/uᵢ∂ⱼBⱼ/∂ⱼ(uⱼBᵢ) | integrator | grid | options | steps |"
        " error | InductionEq | relative error | InductionEq | divergence | InductionEq |"
        " energy | InductionEq | largest relative difference | why |",
        "|---|---|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ] + lines + [
        "",
    ] + run_lines(a.out, only, device_line(a.bin), time.time() - total)
    # The table of InductionEq's options (written by hand, checked against the code).
    status = os.path.join(root, "docs", "data", "inductioneq-status.md")
    if os.path.exists(status):
        with open(status) as fh:
            out += [""] + fh.read().rstrip("\n").splitlines() + [""]
    with open(a.out, "w") as fh:
        fh.write("\n".join(out))
    print(f"wrote {os.path.relpath(a.out, root)}")


def run_lines(path, only, device, seconds):
    """Where and how long the rows ran: with --only, the existing page's lines and this pass."""
    now = f"on {device} in {seconds:.0f} s"
    if not only:
        return [f"Run {now}.", ""]
    old = []
    if os.path.exists(path):
        with open(path) as fh:
            old = [l.rstrip("\n") for l in fh if l.startswith("Run on ") or l.startswith("Rows ")]
    return old + [f"Rows {', '.join(sorted(only))} run (--only) {now}.", ""]


def device_line(binary):
    p = subprocess.run([binary, "run", "--case", "rotation_2d", "--n", "12", "--final-time", "0.01",
                        "--quiet"], capture_output=True, text=True)
    first = p.stdout.splitlines()[0] if p.returncode == 0 and p.stdout else ""
    dev = first.split(" on ", 1)[1].split(":", 1)[0] if " on " in first else "the default device"
    return dev


if __name__ == "__main__":
    main()
