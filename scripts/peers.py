#!/usr/bin/env python3
"""The rows of `clarray bench`, run through CuPy and PyOpenCL on the same GPU.

Each figure is printed as bytes moved per second and as a ratio to the device-to-device copy
ceiling measured by the same library in the same run, so the three libraries can be compared
side by side in BENCHMARKS.md. Prints a table, and JSON with --json.

    python3 scripts/peers.py [--quick] [--json] [--only cupy|pyopencl]

PyOpenCL must see the GPU's OpenCL platform (OCL_ICD_VENDORS pointing at a directory with
nvidia.icd); CuPy uses CUDA directly.
"""
import argparse
import json
import sys
import time

import numpy as np


def best_time(fn, sync, reps, batches=3):
    """Best of `batches` of `reps` back-to-back calls, per call, wall clock around sync."""
    fn()
    sync()
    best = float("inf")
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def rows_cupy(quick):
    import cupy as cp

    n = 1 << (20 if quick else 28)
    sync = cp.cuda.Device().synchronize
    f = cp.float32
    a = cp.random.random(n, dtype=f)
    b = cp.random.random(n, dtype=f)
    c = cp.random.random(n, dtype=f)
    d = cp.random.random(n, dtype=f)
    o = cp.empty_like(a)
    nb = n * 4
    rows = []

    def row(name, nbytes, fn, reps=20):
        rows.append({"name": name, "bytes": nbytes, "seconds": best_time(fn, sync, reps)})

    row("copy d2d (ceiling)", 2 * nb, lambda: cp.copyto(o, a))
    host = np.random.random(n).astype(np.float32)
    row("h2d pageable", nb, lambda: a.set(host), reps=3)
    row("d2h pageable", nb, lambda: a.get(out=host), reps=3)
    pinned_mem = cp.cuda.alloc_pinned_memory(nb)
    pinned = np.frombuffer(pinned_mem, np.float32, n)
    pinned[:] = host
    row("h2d pinned", nb, lambda: a.set(pinned), reps=3)
    row("d2h pinned", nb, lambda: a.get(out=pinned), reps=3)
    row("a + 2", 2 * nb, lambda: a + 2)
    row("2*a + b", 3 * nb, lambda: 2 * a + b)
    row("2*a + b*c - d", 5 * nb, lambda: 2 * a + b * c - d)
    side = 1 << (10 if quick else 14)
    m = cp.random.random((side, side), dtype=f)
    row("transposed 2-D: a.T + 1", 2 * side * side * 4, lambda: m.T + 1)
    row("sum", nb, lambda: a.sum())
    row("max", nb, lambda: a.max())
    row("dot", 2 * nb, lambda: cp.dot(a, b))
    shape = (64, 64, 32) if quick else (1024, 1024, 256)
    t = cp.random.random(shape, dtype=f)
    tb = t.size * 4
    row("sum axis 0 (1024x1024x256)", tb, lambda: t.sum(axis=0))
    row("sum axis 2 (1024x1024x256)", tb, lambda: t.sum(axis=2))
    row("abs(a - b).max()", 2 * nb, lambda: cp.abs(a - b).max())
    row("cumsum", 2 * nb, lambda: cp.cumsum(a))
    # Sorts: bytes of reading the keys and writing the result once (as clarray bench counts).
    ns = 1 << (18 if quick else 24)
    k = cp.random.random(ns, dtype=f)
    row("sort f32 2^24", 8 * ns, lambda: cp.sort(k))
    row("argsort f32 2^24", 12 * ns, lambda: cp.argsort(k))
    s = cp.random.random(16, dtype=f)
    row("16 elements: a + 2 (per op)", 128, lambda: s + 2, reps=2000)
    return rows, cp.cuda.runtime.getDeviceProperties(0)["name"].decode()


def rows_pyopencl(quick):
    import pyopencl as cl
    import pyopencl.array as cla
    import pyopencl.clrandom as clr

    plat = [p for p in cl.get_platforms() if "NVIDIA" in p.name or "CUDA" in p.name]
    dev = (plat[0] if plat else cl.get_platforms()[0]).get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    sync = q.finish
    n = 1 << (20 if quick else 28)
    nb = n * 4
    a = clr.rand(q, n, np.float32)
    b = clr.rand(q, n, np.float32)
    o = cla.empty_like(a)
    rows = []

    def row(name, nbytes, fn, reps=20):
        rows.append({"name": name, "bytes": nbytes, "seconds": best_time(fn, sync, reps)})

    row("copy d2d (ceiling)", 2 * nb, lambda: cl.enqueue_copy(q, o.data, a.data))
    host = np.random.random(n).astype(np.float32)
    row("h2d pageable", nb, lambda: a.set(host), reps=3)
    row("d2h pageable", nb, lambda: a.get(ary=host), reps=3)
    row("a + 2", 2 * nb, lambda: a + 2)
    row("2*a + b", 3 * nb, lambda: 2 * a + b)
    row("sum", nb, lambda: cla.sum(a))
    row("max", nb, lambda: cla.max(a))
    row("dot", 2 * nb, lambda: cla.dot(a, b))
    s = clr.rand(q, 16, np.float32)
    row("16 elements: a + 2 (per op)", 128, lambda: s + 2, reps=2000)
    knl = cl.Program(ctx, "__kernel void k(__global float *x) { }").build().k
    row("trivial kernel launch", 0, lambda: knl(q, (1,), None, a.data), reps=5000)
    return rows, dev.name + " (driver " + dev.driver_version + ")"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=["cupy", "pyopencl"])
    args = ap.parse_args()
    out = {}
    for lib, fn in (("cupy", rows_cupy), ("pyopencl", rows_pyopencl)):
        if args.only and args.only != lib:
            continue
        try:
            rows, device = fn(args.quick)
        except Exception as e:  # a missing library is reported, not fatal
            print(f"{lib}: not run: {e}", file=sys.stderr)
            continue
        ceiling = rows[0]["bytes"] / rows[0]["seconds"]
        for r in rows:
            r["gbps"] = r["bytes"] / r["seconds"] / 1e9
            r["ratio"] = r["bytes"] / r["seconds"] / ceiling
        out[lib] = {"device": device, "ceiling_gbps": ceiling / 1e9, "rows": rows}
        if not args.json:
            print(f"\n{lib} on {device}: copy ceiling {ceiling / 1e9:.1f} GB/s")
            print(f"{'row':40} {'time':>12} {'GB/s':>10} {'of ceiling':>11}")
            for r in rows:
                print(f"{r['name']:40} {r['seconds'] * 1e6:10.2f}us {r['gbps']:10.1f} {100 * r['ratio']:10.1f}%")
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
