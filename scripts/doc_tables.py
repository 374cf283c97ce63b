#!/usr/bin/env python3
"""Regenerates every measured table of docs/induction.md.

    scripts/doc_tables.py                  # build `induction` (release), run everything, rewrite the doc
    scripts/doc_tables.py --only energy    # only the tables whose id contains "energy" (a,b: either)
    scripts/doc_tables.py --reuse          # take saved outputs of runs at this commit where there are
    scripts/doc_tables.py --logs-only      # only the tables made from bench-results/ (no device)
    scripts/doc_tables.py --list           # the table ids and what produces them

Each table sits in the doc between `<!-- table:ID begin -->` and `<!-- table:ID end -->`; the
script replaces what is between them and stamps it with the device, the date and the commit.
Device tables come from runs of the release binary on the default OpenCL device (CLARRAY_DEVICE
or `--device` picks another); the GPU tables come from the logs in bench-results/. Every marker
in the doc must have a producer here and every producer a marker, and any run that fails stops
the script with its command and output before the doc is touched.

To add a table: add a producer to TABLES (a run or a list of runs and the function that turns
their output into Markdown) and its two markers where the table belongs in the doc.
"""
import argparse
import datetime
import hashlib
import os
import re
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "induction.md"
LOGS = ROOT / "bench-results"
SCRIPT = "scripts/doc_tables.py"

# The cases with boundaries (the energy estimate's setting: zero inflow data); periodic_advection
# has none.
BOUNDED = ["rotation_2d", "rotation_3d", "rotation_3d_ez", "confined_domain"]
FORMS = ["central", "split", "product"]
SOURCES = ["central", "split", "zero"]


class Failure(Exception):
    pass


class Runner:
    """Runs the release binary, memoised by arguments, and records what ran."""

    def __init__(self, binary, device, saved=None, reuse=False):
        self.binary = binary
        self.saved, self.reuse = saved, reuse
        self.device_args = ["--device", device] if device else []
        self.cache = {}
        self.seconds = {}
        self.cpu = 0.0
        self.concurrent = False

    def prefetch(self, runs, jobs):
        """Runs `runs` (argument lists), `jobs` at a time, so that the tables find them done. On
        a machine with cores and a device to spare (the GPU machine) this divides the wall time;
        the times in the tables' stamps are then those of runs that shared the device."""
        if jobs <= 1 or not runs:
            return
        from concurrent.futures import ThreadPoolExecutor

        cpu, self.concurrent = cpu_seconds(), True
        try:
            with ThreadPoolExecutor(jobs) as pool:
                list(pool.map(lambda args: self(*args), runs))
        finally:
            self.concurrent = False
            self.cpu += cpu_seconds() - cpu

    def key(self, args):
        args = [str(a) for a in args]
        return tuple(args + (self.device_args if args[0] != "bench" else []))

    def time(self, args):
        """Seconds the run of `args` took."""
        return self.seconds[self.key(args)]

    def __call__(self, *args):
        key = self.key(args)
        args = list(key)
        if key in self.cache:
            return self.cache[key]
        cmd = [str(self.binary)] + args
        print(f"$ induction {shlex.join(args)}", file=sys.stderr, flush=True)
        # Each output is saved (under the target folder, named by the commit and the arguments)
        # so that `--reuse` can rebuild the doc without running again, e.g. after a parse fix.
        path = None
        if self.saved:
            name = hashlib.sha1(" ".join([STAMP["commit"]] + args).encode()).hexdigest()[:16]
            path = self.saved / f"{name}.txt"
            if self.reuse and path.exists():
                took, out = path.read_text().split("\n", 1)
                print(f"  reused {path} (it took {float(took):.1f} s)", file=sys.stderr, flush=True)
                self.cache[key], self.seconds[key] = out, float(took)
                return out
        start, cpu = time.monotonic(), cpu_seconds()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        took = time.monotonic() - start
        if not self.concurrent:
            self.cpu += cpu_seconds() - cpu
        if p.returncode != 0:
            tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-40:])
            raise Failure(f"`induction {shlex.join(args)}` failed with status {p.returncode} after {took:.0f} s:\n{tail}")
        print(f"  {took:.1f} s", file=sys.stderr, flush=True)
        self.cache[key] = p.stdout
        self.seconds[key] = took
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{took}\n{p.stdout}")
        return p.stdout


def cpu_seconds():
    """User and system CPU seconds of the finished child processes (on a busy machine the wall
    time says little; the CPU time over the cores is about the wall time on an idle one)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def device_of(out):
    """The device name a command's first line gives (`… on DEVICE: …` or `… on DEVICE, order …`)."""
    m = re.search(r" on (.+?)(?:: |, order )", out.splitlines()[0])
    if not m:
        raise Failure(f"no device name in the output's first line: {out.splitlines()[0]!r}")
    return m.group(1)


def table_lines(out):
    """The Markdown table rows of a command's output (header, rule and rows)."""
    rows = [l for l in out.splitlines() if l.startswith("|")]
    if len(rows) < 3:
        raise Failure(f"expected a Markdown table in the output, got:\n{out}")
    return rows


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def command(args):
    return "`induction " + " ".join(map(str, args)) + "`"


def stamp(device, commands, seconds):
    return (
        f"<sub>Generated by `{SCRIPT}` on {device}, {STAMP['date']}, commit {STAMP['commit']}: "
        + "; ".join(commands)
        + f" ({seconds:.0f} s).</sub>"
    )


# ---- device tables ---------------------------------------------------------------------------


def convergence_args(case, orders, ns, final_time=None):
    args = ["convergence", "--case", case, "--orders", orders, "--n", ns]
    return args + (["--final-time", final_time] if final_time is not None else [])


def convergence(id):
    def produce(run):
        args = convergence_args(*CONVERGENCE[id])
        out = run(*args)
        body = "\n".join(table_lines(out))
        return f"{out.splitlines()[0]}:\n\n{body}\n\n" + stamp(device_of(out), [command(args)], run.time(args))

    return produce


def convergence_rows(run, id):
    """The rows of a convergence study: dicts of order, n, error, eoc (None on the coarsest grid)."""
    rows = []
    for line in table_lines(run(*convergence_args(*CONVERGENCE[id])))[2:]:
        c = cells(line)
        rows.append({"order": int(c[0]), "n": int(c[1]), "error": float(c[3]), "eoc": None if c[5] == "–" else float(c[5])})
    return rows


def acceptance(run):
    """The acceptance criteria, checked against the convergence runs above."""
    s = "| criterion | measured | |\n|---|---|---|\n"
    for what, id, order, least in ACCEPTANCE:
        rows = [r for r in convergence_rows(run, id) if r["order"] == order]
        last = rows[-1]
        ok = last["eoc"] is not None and last["eoc"] >= least
        s += f"| {what}: order {order}, EOC between the two finest grids ≥ {least} | {last['eoc']:.2f} ({rows[-2]['n']} → {last['n']}) | {'met' if ok else '**not met**'} |\n"
    worse = []
    for id in CONVERGENCE:
        by = {}
        for r in convergence_rows(run, id):
            by.setdefault(r["n"], []).append((r["order"], r["error"]))
        for n, v in by.items():
            v.sort()
            worse += [f"{id.replace('convergence-', '')} n {n}: order {b[0]} {b[1]:.3e} ≥ order {a[0]} {a[1]:.3e}" for a, b in zip(v, v[1:]) if b[1] >= a[1]]
    s += f"| higher order, smaller error on the same grid | {'; '.join(worse) if worse else 'every grid of every table below'} | {'**not met**' if worse else 'met'} |\n"
    return s + "\n" + f"<sub>Generated by `{SCRIPT}` from the convergence tables below, {STAMP['date']}, commit {STAMP['commit']}.</sub>"


def energy_args(case, order, n, final_time, source):
    a = ["energy", "--case", case, "--order", order, "--n", n]
    if final_time is not None:
        a += ["--final-time", final_time]
    # `energy` runs every form of the two product terms; the source form is the one given.
    return a + ["--forms", f"product,{source},split"]


def energy_rows(run, case, order, n, final_time):
    """All 27 combinations for one case: (forms A/S/B, E0, E(T), E(T)/E0 − 1, max rise, max step rise)."""
    rows, device, seconds, header = [], None, 0.0, None
    for source in SOURCES:
        args = energy_args(case, order, n, final_time, source)
        out = run(*args)
        device = device_of(out)
        header = out.splitlines()[0]
        seconds += run.time(args)
        for line in table_lines(out)[2:]:
            c = cells(line)
            if len(c) != 7:
                raise Failure(f"energy row with {len(c)} cells: {line}")
            rows.append((f"{c[0]}/{source}/{c[1]}", *map(float, c[2:])))
    if len(rows) != len(FORMS) * len(FORMS) * len(SOURCES):
        raise Failure(f"{case}: {len(rows)} energy rows, expected 27")
    return rows, device, seconds, header


def energy_case(case, order, n, final_time=None):
    def produce(run):
        rows, device, seconds, header = energy_rows(run, case, order, n, final_time)
        s = "| forms ∂ⱼ(uᵢBⱼ)/uᵢ∂ⱼBⱼ/∂ⱼ(uⱼBᵢ) | E(0) | E(T) | E(T)/E(0) − 1 | max (E(t) − E(0))/E(0) | max one-step rise / E(0) |\n"
        s += "|---|---:|---:|---:|---:|---:|\n"
        for f, e0, et, final, rise, step in rows:
            s += f"| {f} | {e0:.6e} | {et:.6e} | {final:.3e} | {rise:.3e} | {step:.3e} |\n"
        header = header.replace(", n ", ", N = ").rstrip(":")
        cmds = [command(energy_args(case, order, n, final_time, "S")) + " for S = " + ", ".join(SOURCES)]
        return f"{header}:\n\n{s}\n" + stamp(device, cmds, seconds)

    return produce


def percent(x):
    p = 100.0 * x
    if abs(p) >= 10:
        return f"{p:+.0f}%"
    return f"{p:+.2g}%" if abs(p) >= 1e-3 else f"{p:+.1e}%"


def energy_summary(runs):
    """One row per form combination, one column per case: the largest rise of the energy above E(0)."""

    def produce(run):
        table, devices, seconds, heads = {}, set(), 0.0, []
        for case, order, n, final_time in runs:
            rows, device, sec, _ = energy_rows(run, case, order, n, final_time)
            devices.add(device)
            seconds += sec
            for f, _, _, final, rise, step in rows:
                table.setdefault(f, {})[case] = (rise, step)
            t = f", T = {final_time}" if final_time is not None else ""
            heads.append(f"{case} (order {order}, N = {n}{t})")
        s = "| forms ∂ⱼ(uᵢBⱼ)/uᵢ∂ⱼBⱼ/∂ⱼ(uⱼBᵢ) | " + " | ".join(heads) + " |\n"
        s += "|---|" + "---:|" * len(heads) + "\n"
        for f in sorted(table, key=lambda f: [FORMS.index(f.split("/")[0]), SOURCES.index(f.split("/")[1]), FORMS.index(f.split("/")[2])]):
            s += f"| {f} | " + " | ".join(
                percent(table[f][case][0]) + ("" if table[f][case][1] <= 0 else " ↑")
                for case, *_ in runs
            ) + " |\n"
        return s + "\n" + stamp(", ".join(sorted(devices)), ["the runs of the per-case tables below"], seconds)

    return produce


def run_summary(out):
    """(error, relative error, steps, device) from the summary `induction run` prints."""
    err = re.search(r"^error\s+\S+\s+(\S+)$", out, re.M)
    rel = re.search(r"^relative error\s+\S+\s+(\S+)$", out, re.M)
    steps = re.search(r"^(\d+) steps of dt", out, re.M)
    if not (err and rel and steps):
        raise Failure(f"cannot read the summary of `induction run`:\n{out}")
    return float(err.group(1)), float(rel.group(1)), int(steps.group(1)), device_of(out)


def induction_eq_reference():
    """InductionEq's figures, from the one place the tests hold them (tests/reference.rs)."""
    src = (ROOT / "crates/induction/tests/reference.rs").read_text()
    block = re.search(r"const REFERENCE[^=]*=\s*\[(.*?)\];", src, re.S)
    if not block:
        raise Failure("no REFERENCE table in crates/induction/tests/reference.rs")
    refs = re.findall(r'\((\d+),\s*"([a-z/]+)",\s*([0-9.e+-]+)\)', block.group(1))
    absolute = re.search(r"InductionEq's absolute error ([0-9.e+-]+)", src)
    return [(int(o), f, float(r)) for o, f, r in refs], float(absolute.group(1)) if absolute else None


def agreement(run):
    refs, absolute = induction_eq_reference()
    s = "| order | forms ∂ⱼ(uᵢBⱼ)/uᵢ∂ⱼBⱼ/∂ⱼ(uⱼBᵢ) | steps | error | relative error | InductionEq's relative error | ratio |\n"
    s += "|---:|---|---:|---:|---:|---:|---:|\n"
    devices, seconds = set(), 0.0
    for i, (order, forms, ref) in enumerate(refs):
        args = ["run", "--case", "rotation_2d", "--n", "40", "--cfl", "0.95", "--order", order, "--forms", forms, "--quiet"]
        out = run(*args)
        seconds += run.time(args)
        err, rel, steps, device = run_summary(out)
        devices.add(device)
        ref_text = f"{ref:.6e}" + (f" (error {absolute:.6e})" if i == 0 and absolute else "")
        s += f"| {order} | {forms} | {steps} | {err:.6e} | {rel:.6e} | {ref_text} | {rel / ref:.7f} |\n"
    cmd = "`induction run --case rotation_2d --n 40 --cfl 0.95 --order O --forms F`"
    return s + "\n" + stamp(", ".join(sorted(devices)), [cmd + " for each row"], seconds)


def modes(run):
    s = "| mode | steps | kernel s | transfer s | moved MiB | wall s |\n|---|---:|---:|---:|---:|---:|\n"
    devices, seconds = set(), 0.0
    for mode in ["resident", "copy"]:
        args = ["run", "--case", "rotation_3d", "--order", "4", "--n", "32", "--final-time", "0.25", "--mode", mode, "--quiet"]
        out = run(*args)
        seconds += run.time(args)
        _, _, steps, device = run_summary(out)
        devices.add(device)
        t = re.search(r"time: kernels (\S+) s, transfers (\S+) s \((\S+) MiB\), wall (\S+) s", out)
        if not t:
            raise Failure(f"no timing line in:\n{out}")
        s += f"| {mode} | {steps} | {t.group(1)} | {t.group(2)} | {t.group(3)} | {t.group(4)} |\n"
    cmd = "`induction run --case rotation_3d --order 4 --n 32 --final-time 0.25 --mode M`"
    return s + "\n" + stamp(", ".join(sorted(devices)), [cmd + " for M = resident, copy"], seconds)


def bench_quick(run):
    args = ["bench", "--quick", "--steps", "10"]
    out = run(*args)
    info = re.search(r"induction bench on (.+?): ", out)
    body = "```\n" + out.strip() + "\n```"
    return body + "\n\n" + stamp(info.group(1) if info else "?", [command(args)], run.time(args))


# ---- tables from bench-results/ ------------------------------------------------------------


def bench_blocks(path):
    """The `induction bench` outputs in a log: (case, step rows, mode rows, run label)."""
    blocks, label = [], None
    for line in path.read_text().splitlines():
        m = re.match(r"^=== ([^:]+): (.*)$", line)
        if m:
            label = (m.group(1), m.group(2))
            continue
        m = re.match(r"^induction bench on [^:]+: (?:(\w+), )?copy ceiling", line)
        if m:
            blocks.append({"case": m.group(1), "steps": [], "modes": [], "label": label, "ratio": None})
            continue
        if line.startswith("| f32 ") or line.startswith("| f64 "):
            if not blocks or (label and blocks[-1]["label"] != label):
                blocks.append({"case": None, "steps": [], "modes": [], "label": label, "ratio": None})
            blocks[-1]["steps"].append(cells(line))
        elif line.startswith("| resident ") or line.startswith("| copy "):
            blocks[-1]["modes"].append(cells(line))
        elif line.startswith("copy mode / resident mode, wall time:"):
            blocks[-1]["ratio"] = line.split(":", 1)[1].strip()
    return blocks


def step_row(c):
    """A step row of either layout (with or without the `x nodes per work-item` column)."""
    if len(c) == 9:
        return {"precision": c[0], "grid": c[1], "order": c[2], "vx": c[3], "ms": c[4], "roof_ms": c[7], "of": c[8]}
    if len(c) == 8:
        return {"precision": c[0], "grid": c[1], "order": c[2], "vx": "1", "ms": c[3], "roof_ms": c[6], "of": c[7]}
    raise Failure(f"unknown bench row: {c}")


def log_stamp(files):
    return f"<sub>Generated by `{SCRIPT}` from {', '.join('`bench-results/' + f + '`' for f in files)}, {STAMP['date']}, commit {STAMP['commit']}.</sub>"


def sweep_run(file, label, precision):
    for b in bench_blocks(LOGS / file):
        if b["label"] and b["label"][0] == label:
            for c in b["steps"]:
                r = step_row(c)
                if r["precision"] == precision:
                    return r
    raise Failure(f"no {precision} row of run `{label}` in bench-results/{file}")


SWEEP = "induction-sweep-h200-2026-11-30-sweep{}.txt"
# The stage kernel's history on the H200 (256³, order 4): one row per change, each figure taken
# from the run of a sweep log that measured it.
GPU_CHANGES = [
    ("the version above (16 planes, scalar loads)", (SWEEP.format(2), "lin-verbose"), (SWEEP.format(2), "lin-verbose")),
    ("K (B⁰ for SSPRK33) of the next plane loaded while the plane computes (`PREFETCH_K`)", (SWEEP.format(3), "pk1"), (SWEEP.format(3), "pk1")),
    ("two x-nodes per work-item in one vector (`VX` 2, f32 only; f32 registers capped at 128)", (SWEEP.format(6), "f32-vx2-r128"), None),
    ("8 planes per work-item instead of 16 (more work-groups in flight)", (SWEEP.format(7), "f32-vx2-r128-z8"), (SWEEP.format(7), "f64-z8")),
]


def gpu_changes(_run):
    s = "| change | f32 | f64 | runs (log, run label) |\n|---|---:|---:|---|\n"
    files = set()
    for what, f32, f64 in GPU_CHANGES:
        cols, srcs = [], []
        for p, src in (("f32", f32), ("f64", f64)):
            if src is None:
                cols.append("—")
                continue
            cols.append(sweep_run(src[0], src[1], p)["of"])
            files.add(src[0])
            n = re.search(r"sweep(\d+)", src[0]).group(1)
            srcs.append(f"sweep{n} `{src[1]}` ({p})")
        s += f"| {what} | {cols[0]} | {cols[1]} | {', '.join(srcs)} |\n"
    return s + "\n" + log_stamp(sorted(files))


def bench_logs():
    return sorted(LOGS.glob("induction-h200-*.txt"))


def gpu_bench(_run):
    """Every step row of the `induction bench` logs of the H200, and resident against copy."""
    s = "| log | case | order | precision | x nodes per work-item | ms/step | roofline ms | of roofline |\n"
    s += "|---|---|---:|---|---|---:|---:|---:|\n"
    m = "| log | grid | precision | resident wall ms/step | copy wall ms/step | copy / resident |\n|---|---|---|---:|---:|---:|\n"
    names = []
    for path in bench_logs():
        tag = path.stem.replace("induction-h200-", "")
        names.append(path.name)
        for b in bench_blocks(path):
            for c in b["steps"]:
                r = step_row(c)
                s += f"| {tag} | {b['case'] or '(not printed)'} | {r['order']} | {r['precision']} | {r['vx']} | {r['ms']} | {r['roof_ms']} | {r['of']} |\n"
            if b["modes"]:
                res = {c[0]: c for c in b["modes"]}
                if "resident" in res and "copy" in res:
                    rw, cw = float(res["resident"][3]), float(res["copy"][3])
                    ratio = b["ratio"] or f"{cw / rw:.2f}×"
                    m += f"| {tag} | {res['resident'][1]} | {res['resident'][2]} | {rw:.3f} | {cw:.3f} | {ratio} |\n"
    return s + "\n" + m + "\n" + log_stamp(names)


def gpu_sweeps(_run):
    """Every run of the tuning sweeps: options and the ratio to the roofline per precision."""
    s = "| log | run | options | f32 | f64 |\n|---|---|---|---:|---:|\n"
    names = []
    for path in sorted(LOGS.glob("induction-sweep-h200-*.txt"), key=lambda p: int(re.search(r"sweep(\d+)", p.name).group(1))):
        names.append(path.name)
        n = re.search(r"sweep(\d+)", path.name).group(1)
        for b in bench_blocks(path):
            if not b["label"] or not b["steps"]:
                continue
            by = {step_row(c)["precision"]: step_row(c) for c in b["steps"]}
            opts = b["label"][1].replace("|", "\\|")
            order = {step_row(c)["order"] for c in b["steps"]}
            s += f"| sweep{n} | `{b['label'][0]}` | `{opts}` (order {'/'.join(sorted(order))}) | " + " | ".join(
                by[p]["of"] if p in by else "—" for p in ("f32", "f64")
            ) + " |\n"
    return s + "\n" + log_stamp(names)


# ---- what the doc holds ----------------------------------------------------------------------

# The runs, chosen so that the whole list takes about 15 minutes on PoCL with two idle cores.
# id: (case, orders, grid sizes, final time or None for the case's default).
CONVERGENCE = {
    "convergence-periodic_advection": ("periodic_advection", "2,4,6", "16,32,48", 0.25),
    "convergence-rotation_2d": ("rotation_2d", "2,4,6", "21,41,81", None),
    "convergence-rotation_2d-short": ("rotation_2d", "2,4,6", "21,41,81", 0.5),
    "convergence-rotation_3d": ("rotation_3d", "2,4,6", "16,24,32", 0.5),
    "convergence-rotation_3d_ez": ("rotation_3d_ez", "2,4,6", "16,24,32", 0.5),
    "convergence-confined_domain-short": ("confined_domain", "2,4,6", "16,24,32", 0.25),
    "convergence-confined_domain": ("confined_domain", "2,4,6", "16,24,32", None),
}
# (what, convergence table, order, least EOC between its two finest grids).
ACCEPTANCE = [
    ("periodic_advection", "convergence-periodic_advection", 2, 1.9),
    ("periodic_advection", "convergence-periodic_advection", 4, 3.8),
    ("rotation_2d, one revolution", "convergence-rotation_2d", 2, 1.8),
    ("rotation_2d, one revolution", "convergence-rotation_2d", 4, 2.8),
    ("rotation_2d, t = 0.5", "convergence-rotation_2d-short", 2, 1.8),
    ("rotation_2d, t = 0.5", "convergence-rotation_2d-short", 4, 2.8),
]
# (case, order, N, final time or None for the case's default) of the energy tables.
ENERGY_RUNS = [
    ("rotation_2d", 4, 32, None),
    ("rotation_3d", 4, 16, 1),
    ("rotation_3d_ez", 4, 16, 1),
    ("confined_domain", 4, 24, 2),
]
# (id, needs the device, producer).
TABLES = [
    ("agreement", True, agreement),
    ("acceptance", True, acceptance),
] + [(id, True, convergence(id)) for id in CONVERGENCE] + [
    ("energy-summary", True, energy_summary(ENERGY_RUNS)),
] + [(f"energy-{c}", True, energy_case(c, o, n, t)) for c, o, n, t in ENERGY_RUNS] + [
    ("modes", True, modes),
    ("bench-quick", True, bench_quick),
    ("gpu-changes", False, gpu_changes),
    ("gpu-bench", False, gpu_bench),
    ("gpu-sweeps", False, gpu_sweeps),
]

STAMP = {}
MARKER = re.compile(r"<!-- table:([\w.-]+) (begin|end) -->")


def replace_blocks(text, produced):
    """The doc with each produced table put between its markers; errors on unpaired markers."""
    marks = [(m.group(1), m.group(2), m) for m in MARKER.finditer(text)]
    ids = [i for i, kind, _ in marks if kind == "begin"]
    known = {t[0] for t in TABLES}
    for i in ids:
        if i not in known:
            raise Failure(f"{DOC.name} has a table marker `{i}` that no producer in {SCRIPT} fills")
    for i in known:
        if i not in ids:
            raise Failure(f"{DOC.name} has no `<!-- table:{i} begin -->` marker")
    out, pos = [], 0
    for k in range(0, len(marks), 2):
        (i, kind, b), (j, kind2, e) = marks[k], marks[k + 1] if k + 1 < len(marks) else (None, None, None)
        if kind != "begin" or kind2 != "end" or i != j:
            raise Failure(f"{DOC.name}: marker `{i} {kind}` is not followed by its end")
        out.append(text[pos : b.end()])
        out.append("\n" + produced[i].rstrip() + "\n" if i in produced else text[b.end() : e.start()])
        pos = e.start()
    out.append(text[pos:])
    return "".join(out)


def planned_runs(ids):
    """The long runs the tables `ids` need (convergence and energy studies), for --jobs."""
    runs = []
    for i in ids:
        if i == "acceptance":
            runs += [convergence_args(*CONVERGENCE[c]) for c in CONVERGENCE]
        elif i in CONVERGENCE:
            runs.append(convergence_args(*CONVERGENCE[i]))
        for case, order, n, t in ENERGY_RUNS:
            if i in ("energy-summary", f"energy-{case}"):
                runs += [energy_args(case, order, n, t, source) for source in SOURCES]
    unique = []
    for r in runs:
        if r not in unique:
            unique.append(r)
    return unique


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="only the tables whose id contains this text (or one of these, comma-separated)")
    ap.add_argument("--logs-only", action="store_true", help="only the tables made from bench-results/")
    ap.add_argument("--list", action="store_true", help="list the table ids")
    ap.add_argument("--no-build", action="store_true", help="use the release binary as it is")
    ap.add_argument("--device", help="device selector passed to induction (default: its default)")
    ap.add_argument("--binary", help="the induction binary to run (default: the release build of this checkout; implies --no-build)")
    ap.add_argument("--jobs", type=int, default=1, help="run the convergence and energy studies this many at a time first (for a machine with cores to spare)")
    ap.add_argument("--commit", help="the commit to stamp (default: git's HEAD; for a copy without .git, e.g. the GPU machine)")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="take the output of a run from an earlier invocation at the same commit where one was saved",
    )
    a = ap.parse_args()
    if a.list:
        for i, dev, _ in TABLES:
            print(f"{i}{'' if dev else '  (from bench-results/)'}")
        return
    ids = [t[0] for t in TABLES]
    # An item that is an id selects that table; any other item every id that contains it.
    only = a.only.split(",") if a.only else None
    picked = lambda i: any(o == i if o in ids else o in i for o in only)
    chosen = [t for t in TABLES if (not only or picked(t[0])) and (not a.logs_only or not t[1])]
    if not chosen:
        raise Failure(f"no table id contains `{a.only}` (see --list)")
    if a.commit:
        STAMP["commit"] = a.commit
    else:
        head = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "crates", "Cargo.lock"], cwd=ROOT).returncode != 0
        STAMP["commit"] = head + (" with local changes to crates/" if dirty else "")
    STAMP["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = Path(a.binary) if a.binary else target / "release" / "induction"
    if any(dev for _, dev, _ in chosen) and not a.no_build and not a.binary:
        print("$ cargo build --release -p induction", file=sys.stderr, flush=True)
        subprocess.run(["cargo", "build", "--release", "-p", "induction"], cwd=ROOT, check=True)
    run = Runner(binary, a.device, target / "doc-tables", a.reuse)
    start = time.monotonic()
    run.prefetch(planned_runs([i for i, _, _ in chosen]), a.jobs)
    produced = {}
    for i, _, produce in chosen:
        print(f"== {i}", file=sys.stderr, flush=True)
        produced[i] = produce(run)
    DOC.write_text(replace_blocks(DOC.read_text(), produced))
    print(
        f"rewrote {len(produced)} tables of {DOC.relative_to(ROOT)} in {time.monotonic() - start:.0f} s "
        f"(the runs took {run.cpu:.0f} CPU seconds)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    try:
        main()
    except (Failure, subprocess.CalledProcessError) as e:
        print(f"doc_tables: {e}", file=sys.stderr)
        sys.exit(1)
