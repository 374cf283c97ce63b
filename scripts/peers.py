#!/usr/bin/env python3
"""The rows of `clarray bench`, run through CuPy and PyOpenCL on the same GPU.

Each figure is printed as bytes moved per second and as a ratio to the device-to-device copy
ceiling measured by the same library in the same run, so the three libraries can be compared
side by side in BENCHMARKS.md. Prints a table, and JSON with --json.

    python3 scripts/peers.py [--quick] [--json] [--only cupy|pyopencl|clarray-py] [--sweep]

Rows named as `clarray bench` names them (`array: z*w (c64 2^26)`, `random: uniform f32 2^28
(write only)`, ...) measure the same operation at the same size, so `scripts/bench_table.py`
joins them by name; an operation a peer lacks is reported on stderr and left out.

--sweep measures instead `a + 2`, `sum` and `cumsum` of f32 arrays of 2^10 ... 2^30 elements
(2^20 with --quick) through CuPy and clarray's Python package, with the row names of
`clarray bench --sweep`, whose `--peers FILE` draws them beside its own curves.

Each peer is given its best: CuPy also through `cupy.fuse` (one kernel for a chain), PyOpenCL
also with its memory pool (results allocated from the pool, not by clCreateBuffer per op).
`clarray-py` is this project's Python package (the wheel of crates/clarray-py), so its
per-call overhead from Python shows beside the peers' and beside `clarray bench`'s Rust rows.

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
    # Named functions: cupy.fuse names its kernel after the function (a lambda's name is not
    # an identifier).
    def axpy(x, y):
        return 2 * x + y

    def axpypz(x, y, z, w):
        return 2 * x + y * z - w

    fused2, fused4 = cp.fuse(axpy), cp.fuse(axpypz)
    row("2*a + b (cupy.fuse)", 3 * nb, lambda: fused2(a, b))
    row("2*a + b*c - d (cupy.fuse)", 5 * nb, lambda: fused4(a, b, c, d))
    # c = a + b; d = c * a: two operations into existing arrays (6 arrays moved), and CuPy's
    # one-kernel forms with two outputs (4 arrays): an ElementwiseKernel, and cupy.fuse
    # returning both (it allocates them).
    o2 = cp.empty_like(a)

    def two_ops():
        cp.add(a, b, out=o)
        cp.multiply(o, a, out=o2)

    two_out = cp.ElementwiseKernel("float32 x, float32 y", "float32 s, float32 p", "s = x + y; p = s * x", "two_out")

    def sum_and_product(x, y):
        s = x + y
        return s, s * x

    fused_two = cp.fuse(sum_and_product)
    row("c = a + b; d = c * a (two operations, out=)", 6 * nb, two_ops)
    row("c = a + b; d = c * a (ElementwiseKernel, two outputs)", 4 * nb, lambda: two_out(a, b, o, o2))
    row("c = a + b; d = c * a (cupy.fuse, two outputs)", 4 * nb, lambda: fused_two(a, b))
    s16 = cp.random.random(16, dtype=f)
    o16, p16 = cp.empty_like(s16), cp.empty_like(s16)

    def two_ops16():
        cp.add(s16, s16, out=o16)
        cp.multiply(o16, s16, out=p16)

    row("16 elements: c = a + b; d = c * a (two operations, out=)", 0, two_ops16, reps=2000)
    row("16 elements: c = a + b; d = c * a (ElementwiseKernel, two outputs)", 0, lambda: two_out(s16, s16, o16, p16), reps=2000)
    del o2
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
    row("var", nb, lambda: cp.var(a))
    row("cumsum", 2 * nb, lambda: cp.cumsum(a))
    # Sorts: bytes of reading the keys and writing the result once (as clarray bench counts).
    ns = 1 << (18 if quick else 24)
    k = cp.random.random(ns, dtype=f)
    row("sort f32 2^24", 8 * ns, lambda: cp.sort(k))
    row("argsort f32 2^24", 12 * ns, lambda: cp.argsort(k))
    s = cp.random.random(16, dtype=f)
    row("16 elements: a + 2 (per op)", 128, lambda: s + 2, reps=2000)
    del a, b, c, d, o, m, t, k
    rows_cupy_dtypes(cp, quick, row)
    return rows, cp.cuda.runtime.getDeviceProperties(0)["name"].decode()


def sizes(quick):
    """log2 sizes of the rows named as `clarray bench` names them (its --quick sizes too)."""
    return {
        "c64": 18 if quick else 26,
        "f16": 20 if quick else 28,
        "take": 18 if quick else 26,
        "f32": 20 if quick else 28,
        "f64": 19 if quick else 27,
    }


def tried(fn):
    """Runs one row; an operation a peer lacks is reported, not fatal for its other rows."""
    try:
        fn()
    except Exception as e:
        print(f"{getattr(fn, '__name__', 'row')}: not run: {e}", file=sys.stderr)


def rows_cupy_dtypes(cp, quick, row):
    """complex64, float16, float64, argmax, take and Philox rows, with `clarray bench`'s names."""
    lg = sizes(quick)

    def complex_row():
        n = 1 << lg["c64"]
        z = cp.random.random(2 * n, dtype=cp.float32).view(cp.complex64)
        w = cp.random.random(2 * n, dtype=cp.float32).view(cp.complex64)
        zo = cp.empty_like(z)
        row(f"array: z*w (c64 2^{lg['c64']})", 24 * n, lambda: cp.multiply(z, w, out=zo))

    def half_row():
        n = 1 << lg["f16"]
        h = cp.random.random(n, dtype=cp.float32).astype(cp.float16)
        ho = cp.empty_like(h)
        row(f"array: a + 2 (f16 2^{lg['f16']})", 4 * n, lambda: cp.add(h, 2, out=ho))

    def take_row():
        n = 1 << lg["take"]
        src = cp.random.random(n, dtype=cp.float32)
        idx = cp.random.randint(0, n, n, dtype=cp.int64)
        row(f"array: take 2^{lg['take']} random indices (f32 2^{lg['take']})", 16 * n, lambda: cp.take(src, idx))

    def argmax_row():
        n = 1 << lg["f32"]
        a = cp.random.random(n, dtype=cp.float32)
        row(f"reduce: argmax f32 2^{lg['f32']}", 4 * n, lambda: a.argmax())

    def sum_f64_row():
        n = 1 << lg["f64"]
        x = cp.random.random(n, dtype=cp.float64)
        row(f"reduce: sum f64 2^{lg['f64']}", 8 * n, lambda: x.sum())

    for fn in (complex_row, half_row, take_row, argmax_row, sum_f64_row):
        tried(fn)
    n = 1 << lg["f32"]
    out = cp.empty(n, dtype=cp.float32)
    uni, nor = f"random: uniform f32 2^{lg['f32']} (write only)", f"random: normal f32 2^{lg['f32']} (write only)"

    def generator_rows():
        g = cp.random.Generator(cp.random.Philox4x3210(2026))
        tried(lambda: row(uni, 4 * n, lambda: g.random(n, dtype=cp.float32, out=out)))
        tried(lambda: row(nor, 4 * n, lambda: g.standard_normal(n, dtype=cp.float32, out=out)))

    tried(generator_rows)

    def curand_rows():
        # cuRAND's own Philox4x32-10 through its host API, into the same array.
        from cupy.cuda import curand

        gen = curand.createGenerator(curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
        curand.setPseudoRandomGeneratorSeed(gen, 2026)
        ptr = out.data.ptr
        tried(lambda: row(uni + " (cuRAND)", 4 * n, lambda: curand.generateUniform(gen, ptr, n)))
        tried(lambda: row(nor + " (cuRAND)", 4 * n, lambda: curand.generateNormal(gen, ptr, n, 0.0, 1.0)))

    tried(curand_rows)


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
    # The same rows with results from PyOpenCL's memory pool (its documented fast path).
    try:
        import pyopencl.tools as clt

        pool = clt.MemoryPool(clt.ImmediateAllocator(q))
        pa, pb = a.with_queue(q), b.with_queue(q)
        pa.allocator = pool.allocate
        pb.allocator = pool.allocate
        ps = s.with_queue(q)
        ps.allocator = pool.allocate
        row("a + 2 (memory pool)", 2 * nb, lambda: pa + 2)
        row("2*a + b (memory pool)", 3 * nb, lambda: 2 * pa + pb)
        row("sum (memory pool)", nb, lambda: cla.sum(pa))
        row("16 elements: a + 2 (per op, memory pool)", 128, lambda: ps + 2, reps=2000)
    except Exception as e:  # the plain rows stand; say why the pool rows are missing
        print(f"pyopencl: memory-pool rows not run: {e}", file=sys.stderr)
    knl = cl.Program(ctx, "__kernel void k(__global float *x) { }").build().k
    row("trivial kernel launch", 0, lambda: knl(q, (1,), None, a.data), reps=5000)
    del a, b, o
    rows_pyopencl_dtypes(cl, cla, clr, ctx, q, quick, row)
    return rows, dev.name + " (driver " + dev.driver_version + ")"


def rows_pyopencl_dtypes(cl, cla, clr, ctx, q, quick, row):
    """The rows of `rows_cupy_dtypes` that PyOpenCL has (no argmax; float16 needs cl_khr_fp16)."""
    lg = sizes(quick)

    def complex_row():
        n = 1 << lg["c64"]
        z = cla.to_device(q, np.random.random(2 * n).astype(np.float32).view(np.complex64))
        w = cla.to_device(q, np.random.random(2 * n).astype(np.float32).view(np.complex64))
        row(f"array: z*w (c64 2^{lg['c64']})", 24 * n, lambda: z * w)

    def half_row():
        n = 1 << lg["f16"]
        h = cla.to_device(q, np.random.random(n).astype(np.float16))
        row(f"array: a + 2 (f16 2^{lg['f16']})", 4 * n, lambda: h + np.float16(2))

    def take_row():
        n = 1 << lg["take"]
        src = clr.rand(q, n, np.float32)
        idx = cla.to_device(q, np.random.randint(0, n, n).astype(np.int64))
        row(f"array: take 2^{lg['take']} random indices (f32 2^{lg['take']})", 16 * n, lambda: cla.take(src, idx))

    def sum_f64_row():
        n = 1 << lg["f64"]
        x = clr.rand(q, n, np.float64)
        row(f"reduce: sum f64 2^{lg['f64']}", 8 * n, lambda: cla.sum(x))

    for fn in (complex_row, half_row, take_row, sum_f64_row):
        tried(fn)
    n = 1 << lg["f32"]
    out = cla.empty(q, n, np.float32)

    def philox_rows():
        g = clr.PhiloxGenerator(ctx, seed=2026)
        tried(lambda: row(f"random: uniform f32 2^{lg['f32']} (write only)", 4 * n, lambda: g.fill_uniform(out)))
        tried(lambda: row(f"random: normal f32 2^{lg['f32']} (write only)", 4 * n, lambda: g.fill_normal(out)))

    tried(philox_rows)


def rows_clarray_py(quick):
    import clarray as ca

    ctx = ca.default_context()
    sync = ctx.finish
    q = ctx.queue
    n = 1 << (20 if quick else 28)
    nb = n * 4
    rng = ca.random.default_rng(1)
    a = rng.uniform(size=n, dtype=np.float32)
    b = rng.uniform(size=n, dtype=np.float32)
    c = rng.uniform(size=n, dtype=np.float32)
    d = rng.uniform(size=n, dtype=np.float32)
    o = ca.empty(n, dtype=np.float32)
    rows = []

    def row(name, nbytes, fn, reps=20):
        rows.append({"name": name, "bytes": nbytes, "seconds": best_time(fn, sync, reps)})

    row("copy d2d (ceiling)", 2 * nb, lambda: ca.enqueue_copy(q, o.data, a.data, is_blocking=False))
    host = np.random.random(n).astype(np.float32)
    row("h2d pageable", nb, lambda: ca.asarray(host), reps=3)
    row("d2h pageable", nb, lambda: a.get(), reps=3)
    row("a + 2", 2 * nb, lambda: a + 2)
    row("2*a + b", 3 * nb, lambda: 2 * a + b)
    row("2*a + b*c - d", 5 * nb, lambda: 2 * a + b * c - d)
    fused4 = ca.fuse(lambda x, y, z, w: 2 * x + y * z - w)
    row("2*a + b*c - d (clarray.fuse)", 5 * nb, lambda: fused4(a, b, c, d))
    row("sum", nb, lambda: a.sum())
    row("max", nb, lambda: a.max())
    row("abs(a - b).max()", 2 * nb, lambda: ca.abs(a - b).max())
    row("var", nb, lambda: a.var())
    row("cumsum", 2 * nb, lambda: ca.cumsum(a))
    s = rng.uniform(size=16, dtype=np.float32)
    row("16 elements: a + 2 (per op)", 128, lambda: s + 2, reps=2000)
    return rows, ctx.device_name


def sweep_rows(lib, quick):
    """`a + 2` (into an existing array), `sum`, `cumsum` at every size, named as clarray's."""
    if lib == "cupy":
        import cupy as cp

        sync = cp.cuda.Device().synchronize
        full = lambda n: cp.full(n, 1.0, dtype=cp.float32)
        ops = (lambda a, o: cp.add(a, 2, out=o), lambda a, o: a.sum(), lambda a, o: cp.cumsum(a))
        device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        copy = lambda a, o: cp.copyto(o, a)
    else:
        import clarray as ca

        ctx = ca.default_context()
        sync = ctx.finish
        q = ctx.queue
        full = lambda n: ca.full(n, 1.0, dtype=np.float32)

        def add2(a, o):
            o[...] = a + 2

        ops = (add2, lambda a, o: a.sum(), lambda a, o: ca.cumsum(a))
        device = ctx.device_name
        copy = lambda a, o: ca.enqueue_copy(q, o.data, a.data, is_blocking=False)
    rows = []
    big = 1 << (20 if quick else 28)
    a, o = full(big), full(big)
    rows.append({"name": "copy d2d (ceiling)", "bytes": 8 * big, "seconds": best_time(lambda: copy(a, o), sync, 20)})
    del a, o
    for log2 in range(10, (20 if quick else 30) + 1):
        n = 1 << log2
        a, o = full(n), full(n)
        for name, nbytes, op in zip(("a + 2", "sum", "cumsum"), (8 * n, 4 * n, 8 * n), ops):
            reps = 200 if log2 < 20 else 20
            t = best_time(lambda: op(a, o), sync, reps)
            rows.append({"name": f"sweep: {name} f32 2^{log2}", "bytes": nbytes, "seconds": t})
        del a, o
    return rows, device


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=["cupy", "pyopencl", "clarray-py"])
    ap.add_argument("--sweep", action="store_true")
    args = ap.parse_args()
    out = {}
    libs = (("cupy", rows_cupy), ("pyopencl", rows_pyopencl), ("clarray-py", rows_clarray_py))
    if args.sweep:
        libs = tuple((lib, lambda quick, lib=lib: sweep_rows(lib, quick)) for lib in ("cupy", "clarray-py"))
    for lib, fn in libs:
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
