#!/usr/bin/env python3
"""Differential fuzzer: clarray (Python bindings) against NumPy 2. Run by hand (not in CI):
build the bindings into a venv (README, Python section), then run this with that venv's
python. It found the differences fixed on 2026-12-05 and those listed in
docs/numpy-semantics.md ("Found by the differential fuzzer").

Usage:
    python fuzz.py                      # driver: runs cases 0..N-1 in worker subprocesses,
                                        # restarting after a crash; writes /tmp/fuzz/results.jsonl
    python fuzz.py --n 4000 --start 0
    python fuzz.py --case 123           # run one case in this process, print details
    python fuzz.py --worker --start S --end E   (internal)

Each case i is generated from random.Random(SEED + i) / np.random.default_rng(SEED + i),
so any case can be replayed alone with --case i.

Comparison rules (docs/numpy-semantics.md): dtype and shape exact; integer/bool exact;
+ - * / sqrt, comparisons, casts, views, take/put, sort exact on real floats (NaN == NaN;
signed zero compared except min/max/minimum/maximum and sort); transcendental functions within
(OpenCL bound + 1) ulp (1 ulp for float16), plus NumPy's own error (a few ulp); complex * /
within 4 eps|a||b| / 8 eps|a|/|b|; reductions within the documented (n+2) eps sum|x| bounds
against an exact (float64 / longdouble) reference. Float->int casts of NaN/inf/out-of-range
values are undefined and masked.
"""
import json
import math
import os
import random
import subprocess
import sys
import traceback
import warnings

import numpy as np

SEED = 20261205
OUT = "/tmp/fuzz/results.jsonl"
PROGRESS = "/tmp/fuzz/progress"

DTYPES = [np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")]

UNARY = ["negative", "invert", "logical_not", "abs", "absolute", "sqrt", "cbrt", "exp", "exp2",
         "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "arcsin", "arccos",
         "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil",
         "rint", "trunc", "sign", "isnan", "isinf", "isfinite", "conjugate", "conj", "real",
         "imag", "round"]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
          "mod", "power", "minimum", "maximum", "arctan2", "hypot", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
OPS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod",
       "**": "pow", "&": "and", "|": "or", "^": "xor", "<<": "lshift", ">>": "rshift",
       "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
INPLACE = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"]
REDUCTIONS = ["sum", "prod", "min", "max", "argmin", "argmax", "mean", "var", "std", "any", "all"]

# OpenCL full-profile ulp bounds (single; double is the same or smaller) + 1 (docs)
ULP = {"cbrt": 2, "exp": 3, "exp2": 3, "log": 3, "log2": 3, "log10": 3, "log1p": 2, "expm1": 3,
       "sin": 4, "cos": 4, "tan": 5, "arcsin": 4, "arccos": 4, "arctan": 5, "sinh": 4, "cosh": 4,
       "tanh": 5, "arcsinh": 4, "arccosh": 4, "arctanh": 5, "power": 16, "arctan2": 6,
       "hypot": 4, "sqrt": 0}
TRANSC = set(ULP) - {"sqrt"}

# ---------------------------------------------------------------------------------------------
# value generation


def edge_values(dt):
    if dt.kind == "b":
        return [False, True]
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        v = [0, 1, 2, 3, 7, ii.max, ii.max - 1, ii.min, ii.min + 1, ii.max // 2, (ii.bits - 1), ii.bits]
        if dt.kind == "i":
            v += [-1, -2, -3, -7, -(ii.bits)]
        return v
    ft = np.dtype(dt.char.lower() if dt.kind == "f" else ("f" if dt.itemsize == 8 else "d"))
    fi = np.finfo(ft)
    v = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, np.inf, -np.inf, np.nan,
         float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
         -float(fi.smallest_subnormal), float(fi.eps), 1e-3, 100.0, -7.0, 0.1]
    return v


def rand_values(rng, dt, n, mode):
    """n values of dtype dt. mode: 'small' (exactly computable), 'edge' (edge values mixed in),
    'wide' (full range)."""
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        if mode == "small":
            lo = 0 if dt.kind == "u" else -20
            out = rng.integers(lo, 20, n)
            return out.astype(dt)
        out = rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)
        if mode == "edge":
            ev = np.array(edge_values(dt), dtype=object)
            m = rng.random(n) < 0.4
            for k in np.nonzero(m)[0]:
                out[k] = ev[rng.integers(len(ev))]
        return out
    if dt.kind == "c":
        ft = np.dtype("f4" if dt.itemsize == 8 else "f8")
        re = rand_values(rng, ft, n, mode)
        im = rand_values(rng, ft, n, mode)
        out = np.empty(n, dt)
        out.real = re
        out.imag = im
        return out
    if mode == "small":
        return (rng.integers(-40, 40, n) / 4.0).astype(dt)
    if mode == "wide":
        with np.errstate(all="ignore"):
            return (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)).astype(dt)
    with np.errstate(all="ignore"):
        out = (rng.standard_normal(n) * 4).astype(dt)
        ev = edge_values(dt)
        m = rng.random(n) < 0.4
        for k in np.nonzero(m)[0]:
            out[k] = ev[rng.integers(len(ev))]
    return out


def rand_shape(rng, max_dims=4, max_side=5, allow_empty=True):
    nd = int(rng.integers(0, max_dims + 1))
    shape = []
    for _ in range(nd):
        if allow_empty and rng.random() < 0.07:
            shape.append(0)
        else:
            shape.append(int(rng.integers(1, max_side + 1)))
    return tuple(shape)


def rand_slice(rng, n):
    r = rng.random()
    if r < 0.25:
        return slice(None)
    step = int(rng.choice([1, 2, 3, -1, -2, -3]))
    start = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
    stop = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
    return slice(start, stop, step)


def rand_basic_key(rng, shape, allow_int=True, allow_none=True):
    key = []
    nd = len(shape)
    i = 0
    used_ellipsis = False
    while i < nd:
        r = rng.random()
        if r < 0.15 and allow_int and shape[i] > 0:
            key.append(int(rng.integers(-shape[i], shape[i])))
            i += 1
        elif r < 0.22 and allow_none:
            key.append(None)
        elif r < 0.28 and not used_ellipsis:
            key.append(Ellipsis)
            used_ellipsis = True
            # consume a random number of dims
            i += int(rng.integers(0, nd - i + 1))
        else:
            key.append(rand_slice(rng, shape[i]))
            i += 1
        if rng.random() < 0.15:
            break
    if len(key) == 1 and rng.random() < 0.5:
        return key[0]
    return tuple(key)


class Operand:
    def __init__(self, h, d, desc):
        self.h, self.d, self.desc = h, d, desc


def make_array(rng, cl, dt=None, shape=None, mode=None, views=True, max_dims=4):
    if dt is None:
        dt = DTYPES[int(rng.integers(len(DTYPES)))]
    if mode is None:
        mode = ["small", "edge", "wide"][int(rng.integers(3))]
    fixed = shape is not None
    if shape is None:
        shape = rand_shape(rng, max_dims=max_dims)
    if fixed and views and len(shape) > 0:
        return make_fixed_view(rng, cl, dt, shape, mode)
    base_shape = shape
    # make it bigger so that views have something to cut
    grow = views and rng.random() < 0.5 and len(shape) > 0
    if grow:
        base_shape = tuple(s + int(rng.integers(0, 3)) for s in shape)
    n = int(np.prod(base_shape)) if base_shape else 1
    h = rand_values(rng, dt, n, mode).reshape(base_shape)
    d = cl.asarray(h)
    desc = [f"asarray({dt.name}{list(base_shape)},{mode})"]
    if views:
        for _ in range(int(rng.integers(0, 3))):
            r = rng.random()
            if r < 0.45 and h.ndim > 0:
                key = rand_basic_key(rng, h.shape, allow_int=rng.random() < 0.3)
                hv = h[key]
                dv = d[key]
                desc.append(f"[{key!r}]")
            elif r < 0.75 and h.ndim > 1:
                perm = tuple(int(p) for p in rng.permutation(h.ndim))
                hv = h.transpose(perm)
                dv = d.transpose(perm)
                desc.append(f".transpose{perm}")
            elif r < 0.85 and h.ndim > 0:
                hv = h.T
                dv = d.T
                desc.append(".T")
            else:
                continue
            h, d = hv, dv
    return Operand(h, d, "".join(desc))


def make_fixed_view(rng, cl, dt, shape, mode):
    """an operand of exactly `shape`, possibly a strided / reversed / transposed view."""
    nd = len(shape)
    r = rng.random()
    if r < 0.35:
        perm = [int(p) for p in rng.permutation(nd)]
        inv = np.argsort(perm)
        base_shape = tuple(shape[p] for p in inv)
        h = rand_values(rng, dt, int(np.prod(base_shape)), mode).reshape(base_shape)
        d = cl.asarray(h)
        perm = tuple(int(p) for p in perm)
        # base.transpose(perm).shape == shape  requires base_shape[perm[k]] == shape[k]
        base_shape = [0] * nd
        for k in range(nd):
            base_shape[perm[k]] = shape[k]
        h = rand_values(rng, dt, int(np.prod(base_shape)), mode).reshape(base_shape)
        d = cl.asarray(h)
        return Operand(h.transpose(perm), d.transpose(perm), f"asarray({dt.name}{base_shape},{mode}).transpose{perm}")
    if r < 0.75:
        key = []
        base_shape = []
        for s in shape:
            step = int(rng.choice([1, 2, -1, -2, 3]))
            extra = int(rng.integers(0, 3))
            n = s * abs(step) + extra
            base_shape.append(n)
            if s == 0:
                key.append(slice(0, 0, step))
            elif step > 0:
                st = int(rng.integers(0, extra + 1))
                key.append(slice(st, st + (s - 1) * step + 1 if s else st, step))
            else:
                st = n - 1 - int(rng.integers(0, extra + 1))
                stop = st + (s - 1) * step - 1 if s else st
                key.append(slice(st, stop if stop >= 0 else None, step))
        key = tuple(key)
        h = rand_values(rng, dt, int(np.prod(base_shape)), mode).reshape(base_shape)
        d = cl.asarray(h)
        hv, dv = h[key], d[key]
        assert hv.shape == tuple(shape), (hv.shape, shape, key, base_shape)
        return Operand(hv, dv, f"asarray({dt.name}{base_shape},{mode})[{key!r}]")
    h = rand_values(rng, dt, int(np.prod(shape)), mode).reshape(shape)
    return Operand(h, cl.asarray(h), f"asarray({dt.name}{list(shape)},{mode})")


def rand_pyscalar(rng, dt_hint=None):
    r = rng.random()
    if r < 0.15:
        return bool(rng.integers(2))
    if r < 0.55:
        choices = [0, 1, 2, 3, -1, -3, 7, 127, 128, 255, 256, -128, -129, 300, 32767, 32768,
                   65535, 65536, -32769, 2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**63 - 1, 2**63,
                   2**64 - 1, 2**64, -2**63, -2**63 - 1, 5, 8, 31, 63, 64]
        return int(choices[int(rng.integers(len(choices)))])
    if r < 0.85:
        choices = [0.0, -0.0, 0.5, 1.5, -2.5, 3.0, 1e10, -1e-10, float("inf"), float("-inf"),
                   float("nan"), 65504.0, 70000.0, 1e39, 1e-40, 5e-324, 2.0, 0.1]
        return float(choices[int(rng.integers(len(choices)))])
    choices = [1j, 1 + 2j, -0.5 + 0j, complex(float("inf"), 0), complex(0, float("nan")), 2.5 - 1j]
    return complex(choices[int(rng.integers(len(choices)))])


def rand_npscalar(rng):
    dt = DTYPES[int(rng.integers(len(DTYPES)))]
    v = rand_values(rng, dt, 1, ["small", "edge"][int(rng.integers(2))])[0]
    return v


# ---------------------------------------------------------------------------------------------
# comparison

class Mismatch(Exception):
    pass


def spacing_of(x, dt):
    """ulp at |x| in dtype dt (real float dtype)."""
    with np.errstate(all="ignore"):
        a = np.abs(np.asarray(x, dtype=dt))
        s = np.spacing(a)
        s = np.where(np.isfinite(s), s, 0)
        tiny = np.finfo(dt).smallest_subnormal
        return np.maximum(s, tiny).astype(np.float64)


def check_float_close(got, want, tol_abs, what, zero_sign=False):
    """Real float arrays (same dtype & shape). tol_abs: array/scalar absolute tolerance."""
    g = got.astype(np.float64) if got.dtype != np.float64 else got
    w = want.astype(np.float64) if want.dtype != np.float64 else want
    gn, wn = np.isnan(g), np.isnan(w)
    bad = gn != wn
    gi, wi = np.isinf(g), np.isinf(w)
    fin = ~gn & ~wn
    with np.errstate(all="ignore"):
        diff = np.abs(g - w)
        both_inf = gi & wi
        bad |= both_inf & (np.sign(g) != np.sign(w))
        one_inf = (gi ^ wi) & fin
        # inf vs finite: allowed only if the finite one is within tol of overflow (judged by caller
        # passing inf tolerance); treat as bad unless tol is inf
        tol = np.broadcast_to(np.asarray(tol_abs, dtype=np.float64), g.shape)
        bad |= one_inf & ~np.isinf(tol)
        fine = fin & ~gi & ~wi
        bad |= fine & (diff > tol)
        if zero_sign:
            bad |= fine & (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w))
    if bad.any():
        idx = np.argwhere(bad)[0] if bad.ndim else ()
        idx = tuple(int(i) for i in idx)
        raise Mismatch(f"{what}: at {idx} got {got[idx]!r} want {want[idx]!r} "
                       f"({int(bad.sum())} of {bad.size} differ)")


def compare_exact(got, want, what="value", zero_sign=True):
    if want.dtype.kind == "c":
        check_float_close(got.real, want.real, 0, what + ".real", zero_sign)
        check_float_close(got.imag, want.imag, 0, what + ".imag", zero_sign)
    elif want.dtype.kind == "f":
        check_float_close(got, want, 0, what, zero_sign)
    else:
        if not np.array_equal(got, want):
            bad = got != want
            idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
            raise Mismatch(f"{what}: at {idx} got {got[idx]!r} want {want[idx]!r} "
                           f"({int(bad.sum())} of {bad.size} differ)")


def compare_ulps(got, want, ulps, what):
    if want.dtype.kind == "c":
        ft = want.real.dtype
        mag = np.abs(want.astype(np.complex128))
        tol = spacing_of(mag, ft) * (ulps + 4) + 0
        check_float_close(got.real, want.real, tol, what + ".real")
        check_float_close(got.imag, want.imag, tol, what + ".imag")
        return
    tol = spacing_of(want, want.dtype) * ulps
    check_float_close(got, want, tol, what)


def to_host(x):
    import clarray as cl
    if isinstance(x, cl.Array):
        return x.get()
    if isinstance(x, cl.Expr):
        return x.get()
    return x


def check_result(got_obj, want, mode, what="result", **kw):
    """mode: 'exact', 'exact_nozero' (signed zero ignored), ('ulp', n), ('abs', tol array)."""
    import clarray as cl
    if not isinstance(got_obj, (cl.Array,)):
        raise Mismatch(f"{what}: clarray returned {type(got_obj).__name__}, not Array")
    got = got_obj.get()
    want = np.asarray(want)
    if got.dtype != want.dtype:
        raise Mismatch(f"{what}: dtype {got.dtype} want {want.dtype}")
    if got.shape != want.shape:
        raise Mismatch(f"{what}: shape {got.shape} want {want.shape}")
    if got_obj.shape != want.shape or np.dtype(got_obj.dtype) != want.dtype:
        raise Mismatch(f"{what}: Array.shape/dtype attrs {got_obj.shape}/{got_obj.dtype} "
                       f"vs get() {got.shape}/{got.dtype}")
    if mode == "exact":
        compare_exact(got, want, what, True)
    elif mode == "exact_nozero":
        compare_exact(got, want, what, False)
    elif mode[0] == "ulp":
        compare_ulps(got, want, mode[1], what)
    elif mode[0] == "abs":
        tol = mode[1]
        if want.dtype.kind == "c":
            check_float_close(got.real, want.real, tol, what + ".real")
            check_float_close(got.imag, want.imag, tol, what + ".imag")
        elif want.dtype.kind == "f":
            check_float_close(got, want, tol, what)
        else:
            compare_exact(got, want, what)
    return got


# ---------------------------------------------------------------------------------------------
# running one comparison


class Result:
    def __init__(self):
        self.records = []


def np_call(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return f(), None
            except Exception as e:  # noqa
                return None, e


def cl_call(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(), None
        except BaseException as e:  # noqa  PanicException is a BaseException
            if isinstance(e, KeyboardInterrupt):
                raise
            return None, e


ERR_FAMILY = [OverflowError, IndexError, TypeError, ValueError, ZeroDivisionError,
              NotImplementedError, MemoryError]


def compare_errors(ne, ce):
    """Both raised. Returns None if acceptable, else a message."""
    if type(ce).__name__ == "PanicException" or not isinstance(ce, Exception):
        return f"PANIC/non-Exception {type(ce).__name__}: {ce}"
    for fam in ERR_FAMILY:
        if isinstance(ne, fam):
            if isinstance(ce, fam):
                return None
            # numpy AxisError is ValueError+IndexError; accept either
            return f"error type: numpy {type(ne).__name__}({ne}) vs clarray {type(ce).__name__}({ce})"
    return None


def run_pair(kind, desc, npf, clf, checker, documented=None):
    """Runs npf and clf; returns a record dict or None if they agree."""
    nres, ne = np_call(npf)
    cres, ce = cl_call(clf)
    rec = {"kind": kind, "desc": desc}
    if ce is not None and (type(ce).__name__ == "PanicException" or not isinstance(ce, Exception)):
        rec.update(cat="PANIC", msg=f"{type(ce).__name__}: {ce}", numpy=repr(ne) if ne else "ok")
        return rec
    if ne is not None and ce is not None:
        m = compare_errors(ne, ce)
        if m:
            rec.update(cat="ERRTYPE", msg=m)
            return rec
        return None
    if ne is not None and ce is None:
        rec.update(cat="NO_ERROR", msg=f"numpy raised {type(ne).__name__}: {ne}; clarray returned "
                   f"{summ(cres)}")
        return rec
    if ne is None and ce is not None:
        if documented and documented(ce):
            return None
        rec.update(cat="REFUSED", msg=f"numpy returned {summ(nres)}; clarray raised "
                   f"{type(ce).__name__}: {ce}")
        return rec
    try:
        checker(cres, nres)
    except Mismatch as e:
        rec.update(cat="WRONG", msg=str(e))
        return rec
    except BaseException as e:  # noqa
        rec.update(cat="CHECKER_EXC", msg=f"{type(e).__name__}: {e}",
                   tb=traceback.format_exc()[-800:])
        return rec
    return None


def summ(x):
    try:
        import clarray as cl
        if isinstance(x, cl.Array):
            h = x.get()
            return f"Array({h.dtype}{list(h.shape)} {np.array2string(h.ravel()[:6])})"
        if isinstance(x, np.ndarray):
            return f"ndarray({x.dtype}{list(x.shape)} {np.array2string(x.ravel()[:6])})"
        return repr(x)[:200]
    except BaseException as e:  # noqa
        return f"<{type(x).__name__}; summ failed {e}>"


# ---------------------------------------------------------------------------------------------
# case generators

def mode_for_binary(name, dt):
    """comparison mode for a binary op result dtype dt."""
    if dt.kind in "biu":
        return "exact"
    if name in ("minimum", "maximum"):
        return "exact_nozero"
    if name in ("power", "arctan2", "hypot"):
        return ("ulp", ULP[name] + 1 + (3 if dt.itemsize <= 4 else 2) if dt.kind != "f" or dt.itemsize > 2 else 1 + 2)
    if dt.kind == "c" and name in ("multiply", "divide", "true_divide", "floor_divide", "remainder"):
        return "complex_md"
    return "exact"


def complex_md_check(name, xa, ya):
    def chk(cres, nres):
        want = np.asarray(nres)
        eps = np.finfo(want.real.dtype).eps
        with np.errstate(all="ignore"):
            a = np.abs(np.asarray(xa).astype(np.complex128))
            b = np.abs(np.asarray(ya).astype(np.complex128))
            if name == "multiply":
                tol = 4 * eps * a * b
            else:
                tol = 8 * eps * a / b
            tol = np.where(np.isfinite(tol), tol, np.inf)
            tol = np.broadcast_to(tol, want.shape)
        got = check_result(cres, want, ("abs", 0), what="shape/dtype") if False else None
        check_result(cres, want, ("abs", tol))
    return chk


def unary_mode(name, want_dt):
    if want_dt.kind in "biu":
        return "exact"
    if name in TRANSC:
        if want_dt.kind == "f" and want_dt.itemsize == 2:
            return ("ulp", 1 + 1)
        return ("ulp", ULP[name] + 1 + 4)
    if name in ("abs", "absolute") and want_dt.kind == "f":
        return ("ulp", 5)
    if want_dt.kind == "c" and name in ("sqrt",):
        return ("ulp", 4)
    return "exact"


def operand_or_scalar(rng, cl, dt=None, shape=None):
    r = rng.random()
    if r < 0.6:
        o = make_array(rng, cl, dt=dt, shape=shape)
        return o.h, o.d, o.desc
    if r < 0.85:
        s = rand_pyscalar(rng)
        return s, s, repr(s)
    s = rand_npscalar(rng)
    return s, s, f"np.{s.dtype.name}({s!r})"


def broadcast_shape_for(rng, shape):
    """a shape broadcastable with `shape`."""
    s = list(shape)
    out = []
    for d in s[int(rng.integers(0, len(s) + 1)):] if s else []:
        out.append(1 if rng.random() < 0.3 else d)
    if rng.random() < 0.2:
        out = [int(rng.integers(1, 3))] + out if not out else [1] + out
    return tuple(out)


def gen_binary(rng, cl, i):
    use_fn = rng.random() < 0.4
    if use_fn:
        name = BINARY[int(rng.integers(len(BINARY)))]
    else:
        sym = list(OPS)[int(rng.integers(len(OPS)))]
    x = make_array(rng, cl)
    if rng.random() < 0.6:
        shape2 = broadcast_shape_for(rng, x.h.shape) if rng.random() < 0.5 else x.h.shape
        y = make_array(rng, cl, shape=shape2)
        yh, yd, ydesc = y.h, y.d, y.desc
    else:
        if rng.random() < 0.75:
            yh = yd = rand_pyscalar(rng)
            ydesc = repr(yh)
        else:
            yh = yd = rand_npscalar(rng)
            ydesc = f"np.{yh.dtype.name}({yh!r})"
    swap = rng.random() < 0.3
    xh, xd, xdesc = x.h, x.d, x.desc
    if swap:
        xh, yh = yh, xh
        xd, yd = yd, xd
        xdesc, ydesc = ydesc, xdesc
    if use_fn:
        npf = lambda: getattr(np, name)(xh, yh)
        clf = lambda: getattr(cl, name)(xd, yd)
        desc = f"cl.{name}({xdesc}, {ydesc})"
        opname = name
    else:
        import operator
        op = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
              "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
              "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
              "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
              ">": operator.gt, ">=": operator.ge}[sym]
        npf = lambda: op(xh, yh)
        clf = lambda: op(xd, yd)
        desc = f"({xdesc}) {sym} ({ydesc})"
        opname = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide",
                  "%": "remainder", "**": "power"}.get(sym, "cmp_or_bit")

    def checker(cres, nres):
        want = np.asarray(nres)
        m = mode_for_binary(opname, want.dtype)
        if m == "complex_md":
            if opname in ("floor_divide", "remainder"):
                check_result(cres, want, "exact")
            else:
                complex_md_check(opname, xh, yh)(cres, nres)
            return
        if opname == "power" and want.dtype.kind == "c":
            m = ("ulp", 64)
        check_result(cres, want, m)
    return "binary:" + (name if use_fn else sym), desc, npf, clf, checker, (x.h.dtype, )


def gen_inplace(rng, cl, i):
    sym = INPLACE[int(rng.integers(len(INPLACE)))]
    x = make_array(rng, cl, views=True)
    # base kept to check writes through views
    if rng.random() < 0.6:
        shape2 = broadcast_shape_for(rng, x.h.shape)
        y = make_array(rng, cl, shape=shape2)
        yh, yd, ydesc = y.h, y.d, y.desc
    else:
        yh = yd = rand_pyscalar(rng)
        ydesc = repr(yh)
    import operator
    op = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
          "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "&": operator.iand,
          "|": operator.ior, "^": operator.ixor, "<<": operator.ilshift, ">>": operator.irshift}[sym]
    if not isinstance(x.h, np.ndarray):
        # an integer index of a 1-d NumPy array gives a NumPy scalar, whose `op=` rebinds
        # instead of writing: take the 0-d view instead (h[..., k] stays an array)
        x = Operand(np.asarray(x.h)[()] if False else np.array(x.h), x.d, x.desc)
    xh = x.h.copy() if not x.h.flags.writeable else x.h
    hcopy = np.array(x.h, copy=True)

    def npf():
        r = op(xh, yh)
        return np.array(xh, copy=True)

    def clf():
        r = op(x.d, yd)
        if r is not x.d:
            return ("not_same_object", r)
        return x.d

    opname = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide",
              "%": "remainder", "**": "power"}.get(sym, "bit")

    def checker(cres, nres):
        if isinstance(cres, tuple):
            raise Mismatch("in-place op returned a new object")
        want = np.asarray(nres)
        m = mode_for_binary(opname, want.dtype)
        if m == "complex_md":
            if opname in ("floor_divide", "remainder"):
                m = "exact"
            else:
                with np.errstate(all="ignore"):
                    ya = np.abs(np.asarray(yh).astype(np.complex128))
                    xa = np.abs(hcopy.astype(np.complex128))
                    eps = np.finfo(want.real.dtype).eps
                    t = 4 * eps * xa * ya if opname == "multiply" else 8 * eps * xa / ya
                    t = np.broadcast_to(np.where(np.isfinite(t), t, np.inf), want.shape)
                    # result rounded to a smaller complex type: add an ulp
                    t = t + spacing_of(np.abs(want), want.real.dtype) * 2
                m = ("abs", t)
        elif opname == "power" and want.dtype.kind == "c":
            m = ("ulp", 64)
        elif want.dtype.kind == "f" and m == "exact" and opname in ("add", "subtract", "multiply", "divide"):
            # x op= y with a wider intermediate (int16 += float32 -> no: same_kind) : NumPy computes
            # in the promoted type and casts once; clarray must do the same -> exact
            m = "exact"
        # float -> int cast of the result is UB for nan/inf/out of range values: can't happen
        check_result(cres, want, m, what="after in-place")
    return "inplace:" + sym, f"a = {x.desc}; a {sym}= ({ydesc})", npf, clf, checker, (x.h.dtype,)


def gen_unary(rng, cl, i):
    name = UNARY[int(rng.integers(len(UNARY)))]
    x = make_array(rng, cl, mode=["small", "edge", "wide"][int(rng.integers(3))])
    as_op = name in ("negative", "invert", "abs") and rng.random() < 0.5
    if as_op:
        import operator
        op = {"negative": operator.neg, "invert": operator.invert, "abs": operator.abs}[name]
        npf = lambda: op(x.h)
        clf = lambda: op(x.d)
        desc = f"{name}-operator({x.desc})"
    else:
        npf = lambda: getattr(np, name)(x.h)
        clf = lambda: getattr(cl, name)(x.d)
        desc = f"cl.{name}({x.desc})"

    def checker(cres, nres):
        want = np.asarray(nres)
        m = unary_mode(name, want.dtype)
        if name in ("abs", "absolute") and x.h.dtype.kind != "c" and m != "exact":
            m = "exact"
        if want.dtype.kind == "c" and name in TRANSC:
            m = ("ulp", 64)
        check_result(cres, want, m)
    return "unary:" + name, desc, npf, clf, checker, (x.h.dtype,)


def exact_ref(h):
    """as longdouble/clongdouble"""
    if h.dtype.kind == "c":
        return h.astype(np.clongdouble)
    return h.astype(np.longdouble)


def norm_axis(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(a % nd for a in axis)


def gen_reduction(rng, cl, i):
    name = REDUCTIONS[int(rng.integers(len(REDUCTIONS)))]
    x = make_array(rng, cl)
    nd = x.h.ndim
    r = rng.random()
    if name in ("argmin", "argmax"):
        axis = None if (r < 0.3 or nd == 0) else int(rng.integers(-nd, nd)) if nd else None
        if rng.random() < 0.05:
            axis = nd + 1  # bad axis
    else:
        if r < 0.3 or nd == 0:
            axis = None
        elif r < 0.7:
            axis = int(rng.integers(-nd, nd))
        else:
            k = int(rng.integers(0, nd + 1))
            axis = tuple(int(a) for a in rng.permutation(nd)[:k])
            if axis and rng.random() < 0.3:
                axis = tuple(a - nd if rng.random() < 0.5 else a for a in axis)
        if rng.random() < 0.04 and nd:
            axis = (0, -nd)  # duplicate
        if rng.random() < 0.03:
            axis = nd  # out of range
    keepdims = bool(rng.random() < 0.3)
    kw = {}
    if axis is not None or rng.random() < 0.5:
        kw["axis"] = axis
    if keepdims:
        kw["keepdims"] = True
    if name in ("var", "std") and rng.random() < 0.5:
        kw["ddof"] = int(rng.integers(0, 3))
    via_fn = rng.random() < 0.3
    npf = lambda: getattr(np, name)(x.h, **kw)
    clf = (lambda: getattr(cl, name)(x.d, **kw)) if via_fn else (lambda: getattr(x.d, name)(**kw))
    desc = f"{'cl.' + name + '(a' if via_fn else 'a.' + name + '('}{', ' if via_fn and kw else ''}{', '.join(f'{k}={v!r}' for k, v in kw.items())}) with a = {x.desc}"

    def checker(cres, nres):
        want = np.asarray(nres)
        h = x.h
        if name in ("argmin", "argmax", "any", "all") or want.dtype.kind in "biu":
            if name in ("argmin", "argmax") and h.dtype.kind in "fc":
                # -0/+0 tie: the first extreme; exact
                pass
            check_result(cres, want, "exact")
            return
        if name in ("min", "max"):
            check_result(cres, want, "exact_nozero")
            return
        ax = norm_axis(kw.get("axis"), h.ndim) if h.ndim else ()
        n = int(np.prod([h.shape[a] for a in ax])) if ax else 1
        acc = want.real.dtype if want.dtype.kind in "fc" else np.dtype("f8")
        if h.dtype == np.float16 and name in ("sum", "mean"):
            acc = np.dtype("f4")
        eps = float(np.finfo(acc).eps)
        ax_arg = ax if h.ndim else None
        with np.errstate(all="ignore"):
            E = exact_ref(h)
            if name in ("sum", "mean"):
                exact = np.sum(E, axis=ax_arg, keepdims=keepdims)
                sabs = np.sum(np.abs(E), axis=ax_arg, keepdims=keepdims).astype(np.float64)
                tol = (n + 2) * eps * sabs
                if name == "mean":
                    exact = exact / max(n, 1) if n else exact / 0
                    tol = tol / max(n, 1)
            elif name == "prod":
                exact = np.prod(E, axis=ax_arg, keepdims=keepdims)
                tol = (n + 2) * eps * np.abs(exact).astype(np.float64)
            else:  # var, std
                ddof = kw.get("ddof", 0)
                m = np.mean(E, axis=ax_arg, keepdims=True)
                sq = np.abs(E - m) ** 2
                s2 = np.sum(sq, axis=ax_arg, keepdims=keepdims)
                sabs2 = np.sum(np.abs(E) ** 2, axis=ax_arg, keepdims=keepdims).astype(np.float64)
                den = n - ddof
                exact = s2 / den if den > 0 else s2 / 0
                tol = 8 * (n + 2) * eps * sabs2 / max(den, 1)
                if h.dtype == np.float16:
                    tol = tol * 8 + 0  # float16 intermediates
                if name == "std":
                    exact = np.sqrt(exact)
                    tol = np.sqrt(tol)
                if den <= 0:
                    exact = np.asarray(want)  # inf/nan per docs; compare with numpy
                    tol = np.zeros_like(tol)
            exact = np.asarray(exact)
            tol = np.asarray(tol, dtype=np.float64) + spacing_of(np.abs(exact).astype(np.float64), want.real.dtype if want.dtype.kind in "fc" else np.dtype("f8")) * 2
            # overflow: within tol of max -> inf allowed
            fmax = float(np.finfo(want.real.dtype if want.dtype.kind in "fc" else np.float64).max)
            near = np.abs(exact.astype(np.complex128 if exact.dtype.kind == "c" else np.float64)) + tol >= fmax
            tol = np.where(near | ~np.isfinite(tol), np.inf, tol)
        # Use numpy's own result's NaN/inf pattern when the exact one has inf/nan inputs
        got = cres.get() if isinstance(cres, cl.Array) else None
        if got is None:
            raise Mismatch(f"returned {type(cres).__name__}")
        if got.dtype != want.dtype or got.shape != want.shape:
            raise Mismatch(f"dtype/shape {got.dtype}{got.shape} want {want.dtype}{want.shape}")
        ref = np.asarray(exact).astype(want.dtype) if np.isfinite(np.asarray(exact, dtype=np.complex256 if exact.dtype.kind == 'c' else np.longdouble)).all() else want
        nonfinite_in = not np.isfinite(h.astype(np.complex128 if h.dtype.kind == "c" else np.float64)).all()
        if nonfinite_in:
            ref = want
        with np.errstate(all="ignore"):
            ref = np.where(np.isfinite(want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)), ref, want) if ref.shape == want.shape else want
        check_result(cres, ref, ("abs", np.broadcast_to(tol, want.shape)))
    return "reduce:" + name, desc, npf, clf, checker, (x.h.dtype,)


def gen_scan(rng, cl, i):
    name = ["cumsum", "cumprod"][int(rng.integers(2))]
    x = make_array(rng, cl, mode=["small", "edge", "wide"][int(rng.integers(3))], max_dims=3)
    nd = x.h.ndim
    kw = {}
    if nd and rng.random() < 0.7:
        kw["axis"] = int(rng.integers(-nd, nd))
    npf = lambda: getattr(np, name)(x.h, **kw)
    clf = lambda: getattr(x.d, name)(**kw)
    desc = f"a.{name}({', '.join(f'{k}={v!r}' for k, v in kw.items())}) with a = {x.desc}"

    def checker(cres, nres):
        want = np.asarray(nres)
        if want.dtype.kind in "biu":
            check_result(cres, want, "exact")
            return
        h = x.h
        E = exact_ref(h)
        axis = kw.get("axis")
        with np.errstate(all="ignore"):
            if axis is None:
                E = E.ravel()
                axis = 0
            eps = float(np.finfo(want.real.dtype).eps)
            if h.dtype == np.float16:
                eps = float(np.finfo(np.float32).eps)
            if name == "cumsum":
                exact = np.cumsum(E, axis=axis)
                n = np.arange(1, E.shape[axis] + 1).reshape([-1 if k == axis % E.ndim else 1 for k in range(E.ndim)])
                tol = (n + 2) * eps * np.cumsum(np.abs(E), axis=axis).astype(np.float64)
            else:
                exact = np.cumprod(E, axis=axis)
                n = np.arange(1, E.shape[axis] + 1).reshape([-1 if k == axis % E.ndim else 1 for k in range(E.ndim)])
                tol = (n + 2) * eps * np.abs(exact).astype(np.float64)
            tol = tol + spacing_of(np.abs(exact).astype(np.float64), want.real.dtype) * 2
            fmax = float(np.finfo(want.real.dtype).max)
            tol = np.where((np.abs(exact).astype(np.float64) + tol >= fmax) | ~np.isfinite(tol), np.inf, tol)
            ref = exact.astype(want.dtype).reshape(want.shape)
            wf = np.isfinite(want.astype(np.complex128 if want.dtype.kind == 'c' else np.float64))
            if not np.isfinite(h.astype(np.complex128 if h.dtype.kind == 'c' else np.float64)).all():
                ref = want
            ref = np.where(wf, ref, want)
        check_result(cres, ref, ("abs", np.broadcast_to(tol.reshape(want.shape), want.shape)))
    return "scan:" + name, desc, npf, clf, checker, (x.h.dtype,)


def gen_sort(rng, cl, i):
    name = ["sort", "argsort"][int(rng.integers(2))]
    x = make_array(rng, cl, max_dims=3)
    nd = x.h.ndim
    kw = {}
    r = rng.random()
    if r < 0.2:
        kw["axis"] = None
    elif r < 0.6 and nd:
        kw["axis"] = int(rng.integers(-nd, nd))
    if name == "sort":
        npf = lambda: np.sort(x.h, kind="stable", **kw)  # NumPy 2.4.6 default float16 sort is wrong on AVX512_ICL (unsorted output)
    else:
        npf = lambda: np.argsort(x.h, kind="stable", **kw)
    clf = lambda: getattr(x.d, name)(**kw)
    desc = f"a.{name}({', '.join(f'{k}={v!r}' for k, v in kw.items())}) with a = {x.desc}"

    def checker(cres, nres):
        check_result(cres, nres, "exact_nozero" if name == "sort" else "exact")
    return "sort:" + name, desc, npf, clf, checker, (x.h.dtype,)


def gen_astype(rng, cl, i):
    x = make_array(rng, cl)
    dt = DTYPES[int(rng.integers(len(DTYPES)))]
    xh = x.h
    npf = lambda: xh.astype(dt)
    clf = lambda: x.d.astype(dt)
    desc = f"a.astype({dt.name}) with a = {x.desc}"

    def checker(cres, nres):
        want = np.asarray(nres)
        got = cres.get()
        if got.dtype != want.dtype or got.shape != want.shape:
            raise Mismatch(f"dtype/shape {got.dtype}{got.shape} want {want.dtype}{want.shape}")
        if xh.dtype.kind in "fc" and dt.kind in "iu":
            src = xh.real if xh.dtype.kind == "c" else xh
            with np.errstate(all="ignore"):
                s64 = src.astype(np.float64)
                ii = np.iinfo(dt)
                ok = np.isfinite(s64) & (np.trunc(s64) >= ii.min) & (np.trunc(s64) <= ii.max)
            got = np.where(ok, got, 0)
            want = np.where(ok, want, 0)
        compare_exact(got, want, "astype")
    return "astype", desc, npf, clf, checker, (x.h.dtype, dt)


def gen_getitem(rng, cl, i):
    x = make_array(rng, cl)
    h = x.h
    r = rng.random()
    if r < 0.4 or h.ndim == 0:
        key = rand_basic_key(rng, h.shape) if h.ndim else (Ellipsis if rng.random() < 0.5 else None)
        kd = key
        kdesc = repr(key)
    elif r < 0.6:
        # boolean mask of full shape or first axis
        if rng.random() < 0.7:
            m = rng.random(h.shape) < 0.5
        else:
            m = rng.random(h.shape[:1]) < 0.5
        use_cl = rng.random() < 0.5
        key = m
        kd = cl.asarray(m) if use_cl else m
        kdesc = f"mask{list(m.shape)}{'(cl)' if use_cl else ''}={m.astype(int).ravel().tolist()}"
    elif r < 0.85:
        n = h.shape[0]
        k = int(rng.integers(0, 5))
        lo, hi = (-n, n) if n else (0, 1)
        if rng.random() < 0.1:
            lo, hi = -n - 2, n + 2
        idx = rng.integers(lo, hi, k) if hi > lo else np.zeros(0, np.int64)
        dt = [np.int64, np.int32, np.int8, np.uint8, np.intp][int(rng.integers(5))]
        if dt in (np.uint8,):
            idx = np.abs(idx)
        idx = idx.astype(dt)
        form = int(rng.integers(3))
        key = idx
        if form == 0:
            kd = idx.tolist()
            key = idx.tolist() if len(idx) else np.zeros(0, np.intp)
            if not len(idx):
                kd = key
        elif form == 1:
            kd = idx
        else:
            kd = cl.asarray(idx)
        kdesc = f"{['list', 'np', 'cl'][form]}({idx.tolist()},{np.dtype(dt).name})"
    else:
        # scalar int incl. out of range / numpy int scalar
        n = h.shape[0]
        v = int(rng.integers(-n - 2, n + 2))
        key = v if rng.random() < 0.5 else np.int32(v)
        kd = key
        kdesc = repr(key)
    npf = lambda: h[key]
    clf = lambda: x.d[kd]
    desc = f"a[{kdesc}] with a = {x.desc}"

    def checker(cres, nres):
        check_result(cres, nres, "exact")
    return "getitem", desc, npf, clf, checker, (h.dtype,)


def gen_setitem(rng, cl, i):
    x = make_array(rng, cl, views=rng.random() < 0.5)
    # make sure the numpy side is writable
    h = np.array(x.h, copy=True)
    d = cl.asarray(h) if rng.random() < 0.5 else x.d
    if d is x.d:
        h = np.array(x.h, copy=True)
    r = rng.random()
    if r < 0.4 or h.ndim == 0:
        key = rand_basic_key(rng, h.shape, allow_none=False) if h.ndim else Ellipsis
        kd = key
        kdesc = repr(key)
    elif r < 0.65:
        m = rng.random(h.shape) < 0.5
        key = m
        kd = cl.asarray(m) if rng.random() < 0.5 else m
        kdesc = f"mask={m.astype(int).ravel().tolist()}"
    else:
        n = h.shape[0]
        k = int(rng.integers(0, 4))
        idx = rng.integers(-n, n, k) if n else np.zeros(0, np.int64)
        if rng.random() < 0.1 and n:
            idx = np.append(idx, n)
        key = idx
        kd = idx.tolist() if (rng.random() < 0.5 and len(idx)) else idx
        kdesc = f"{idx.tolist()}"
    # value
    with np.errstate(all="ignore"):
        try:
            tshape = h[key].shape
        except Exception:
            tshape = ()
    r = rng.random()
    if r < 0.5:
        vh = vd = rand_pyscalar(rng)
        vdesc = repr(vh)
    elif r < 0.6:
        vh = vd = rand_npscalar(rng)
        vdesc = f"np.{vh.dtype.name}({vh!r})"
    else:
        vdt = DTYPES[int(rng.integers(len(DTYPES)))] if rng.random() < 0.5 else h.dtype
        vshape = broadcast_shape_for(rng, tshape) if rng.random() < 0.5 else tshape
        if rng.random() < 0.05:
            vshape = tuple(s + 1 for s in vshape) or (2,)
        vh = rand_values(rng, vdt, int(np.prod(vshape)) if vshape else 1, "small").reshape(vshape)
        vd = cl.asarray(vh) if rng.random() < 0.5 else vh
        vdesc = f"{'cl' if vd is not vh else 'np'}({vh.dtype.name}{list(vshape)})"
    hh = h.copy()
    d0 = d

    def npf():
        hh[key] = vh
        return hh

    def clf():
        d0[kd] = vd
        return d0

    desc = f"a[{kdesc}] = {vdesc} with a = {x.desc if d is x.d else 'asarray(' + h.dtype.name + str(list(h.shape)) + ')'}"

    def checker(cres, nres):
        want = np.asarray(nres)
        got = cres.get()
        if got.dtype != want.dtype or got.shape != want.shape:
            raise Mismatch(f"dtype/shape {got.dtype}{got.shape} want {want.dtype}{want.shape}")
        vv = np.asarray(vh)
        if vv.dtype.kind in "fc" and h.dtype.kind in "iu":
            # float->int of out-of-range values is UB: mask the places whose value differs from before
            with np.errstate(all="ignore"):
                src = vv.real.astype(np.float64) if vv.dtype.kind == "c" else vv.astype(np.float64)
                ii = np.iinfo(h.dtype)
                if not (np.isfinite(src) & (np.trunc(src) >= ii.min) & (np.trunc(src) <= ii.max)).all():
                    changed = np.ones(want.shape, bool)
                    changed[...] = True
                    sel = np.zeros(want.shape, bool)
                    sel[key] = True
                    got = np.where(sel, 0, got)
                    want = np.where(sel, 0, want)
        compare_exact(got, want, "after setitem")
    return "setitem", desc, npf, clf, checker, (h.dtype,)


def gen_take_put(rng, cl, i):
    x = make_array(rng, cl, max_dims=3)
    h = x.h
    if rng.random() < 0.6:
        axis = None if (rng.random() < 0.4 or h.ndim == 0) else int(rng.integers(-h.ndim, h.ndim))
        n = h.size if axis is None else h.shape[axis]
        k = int(rng.integers(0, 6))
        lo, hi = -n, n
        if rng.random() < 0.1:
            hi = n + 2
        idx = rng.integers(lo, hi, k) if hi > lo else np.zeros(0, np.int64)
        if rng.random() < 0.2 and k:
            idx = idx.reshape(-1, 1) if k > 1 else idx
        form = int(rng.integers(3))
        if form == 0 and idx.size == 0 and idx.ndim > 1:
            form = 1  # [] would lose the (0, 1) shape
        kd = idx.tolist() if form == 0 else (idx if form == 1 else cl.asarray(idx))
        kw = {} if (axis is None and rng.random() < 0.5) else {"axis": axis}
        npf = lambda: np.take(h, idx, **kw)
        clf = lambda: x.d.take(kd, **kw)
        desc = f"a.take({['list', 'np', 'cl'][form]}({idx.tolist()}), {kw}) with a = {x.desc}"

        def checker(cres, nres):
            check_result(cres, nres, "exact")
        return "take", desc, npf, clf, checker, (h.dtype,)
    hh = np.array(h, copy=True)
    d = cl.asarray(hh)
    n = hh.size
    k = int(rng.integers(0, 6))
    hi = n + (2 if rng.random() < 0.1 else 0)
    idx = rng.integers(-n, hi, k) if hi > -n else np.zeros(0, np.int64)
    vdt = hh.dtype if rng.random() < 0.6 else DTYPES[int(rng.integers(len(DTYPES)))]
    nv = int(rng.integers(0, 4))
    vals = rand_values(rng, vdt, nv, "small")
    if rng.random() < 0.2:
        vals = rand_pyscalar(rng)
    vform = int(rng.integers(2))
    vd = vals if vform == 0 or not isinstance(vals, np.ndarray) else cl.asarray(vals)
    hw = hh.copy()

    def npf():
        np.put(hw, idx, vals)
        return hw

    def clf():
        d.put(idx, vd)
        return d
    desc = f"a.put({idx.tolist()}, {vals!r}) with a = asarray({hh.dtype.name}{list(hh.shape)})"

    def checker(cres, nres):
        want = np.asarray(nres)
        got = cres.get()
        vv = np.asarray(vals)
        if vv.dtype.kind in "fc" and hh.dtype.kind in "iu":
            pass
        check_result(cres, want, "exact")
    return "put", desc, npf, clf, checker, (hh.dtype,)


def gen_where(rng, cl, i):
    c = make_array(rng, cl, dt=np.dtype(bool) if rng.random() < 0.8 else None)
    xh, xd, xdesc = operand_or_scalar(rng, cl, shape=broadcast_shape_for(rng, c.h.shape))
    yh, yd, ydesc = operand_or_scalar(rng, cl, shape=broadcast_shape_for(rng, c.h.shape))
    npf = lambda: np.where(c.h, xh, yh)
    clf = lambda: cl.where(c.d, xd, yd)
    desc = f"cl.where({c.desc}, {xdesc}, {ydesc})"

    def checker(cres, nres):
        check_result(cres, nres, "exact")
    return "where", desc, npf, clf, checker, (c.h.dtype,)


def gen_reshape(rng, cl, i):
    x = make_array(rng, cl)
    h = x.h
    n = h.size
    # pick a random factorisation
    r = rng.random()
    if r < 0.7:
        dims = []
        m = n
        for _ in range(int(rng.integers(0, 4))):
            divs = [d for d in range(1, max(m, 1) + 1) if m % d == 0] if m else [0, 1, 2]
            dsel = int(divs[int(rng.integers(len(divs)))])
            dims.append(dsel)
            m = m // dsel if dsel else m
        dims.append(m if n else 0 if not dims or 0 not in dims else 3)
        if rng.random() < 0.3 and dims:
            dims[int(rng.integers(len(dims)))] = -1
        shape = tuple(dims)
    else:
        shape = (n + 1,) if rng.random() < 0.5 else (-1, -1)
    as_tuple = rng.random() < 0.5
    npf = lambda: h.reshape(shape)
    clf = (lambda: x.d.reshape(shape)) if as_tuple else (lambda: x.d.reshape(*shape))
    desc = f"a.reshape({shape}) with a = {x.desc}"

    def checker(cres, nres):
        check_result(cres, nres, "exact")
    return "reshape", desc, npf, clf, checker, (h.dtype,)


def gen_transpose(rng, cl, i):
    x = make_array(rng, cl)
    h = x.h
    nd = h.ndim
    r = rng.random()
    if r < 0.3:
        args = ()
    elif r < 0.9:
        args = tuple(int(p) for p in rng.permutation(nd))
        if rng.random() < 0.3:
            args = tuple(a - nd for a in args)
        if rng.random() < 0.1 and nd:
            args = args[:-1]
    else:
        args = (0, 0) if nd >= 2 else (nd,)
    as_tuple = rng.random() < 0.5
    npf = lambda: h.transpose(*args)
    clf = (lambda: x.d.transpose(args)) if (as_tuple and args) else (lambda: x.d.transpose(*args))
    desc = f"a.transpose{args} with a = {x.desc}"

    def checker(cres, nres):
        check_result(cres, nres, "exact")
    return "transpose", desc, npf, clf, checker, (h.dtype,)


def gen_roundtrip(rng, cl, i):
    x = make_array(rng, cl)
    h = x.h
    r = int(rng.integers(6))
    if r == 0:
        npf = lambda: np.array(h, copy=True)
        clf = lambda: np.asarray(x.d)
        what = "np.asarray(a)"
    elif r == 1:
        dt = DTYPES[int(rng.integers(len(DTYPES)))]
        npf = lambda: h.astype(dt)
        clf = lambda: np.asarray(x.d, dtype=dt) if h.dtype.kind not in "fc" else np.asarray(x.d, dtype=dt)
        what = f"np.asarray(a, dtype={dt.name})"
        if h.dtype.kind in "fc" and dt.kind in "iu":
            npf = lambda: h.astype(np.float64 if h.dtype.kind == 'f' else np.complex128)
            clf = lambda: np.asarray(x.d).astype(np.float64 if h.dtype.kind == 'f' else np.complex128)
    elif r == 2:
        npf = lambda: np.ravel(h)
        clf = lambda: x.d.ravel()
        what = "a.ravel()"
    elif r == 3:
        npf = lambda: h.copy()
        clf = lambda: x.d.copy()
        what = "a.copy()"
    elif r == 4:
        npf = lambda: h.item() if h.size == 1 else h.item(int(rng.integers(-h.size, h.size + 1)) if h.size else 0)
        k = None
        if h.size == 1:
            clf = lambda: x.d.item()
        else:
            kk = int(np.random.default_rng(i).integers(-h.size, h.size + 1)) if h.size else 0
            npf = lambda: h.item(kk)
            clf = lambda: x.d.item(kk)
        what = "a.item(...)"
    else:
        npf = lambda: cl_asarray_roundtrip_np(h)
        clf = lambda: cl.asarray(h).get()
        what = "asarray(h).get()"
    desc = f"{what} with a = {x.desc}"

    def checker(cres, nres):
        if isinstance(nres, np.ndarray):
            if isinstance(cres, cl.Array):
                check_result(cres, nres, "exact")
                return
            if not isinstance(cres, np.ndarray):
                raise Mismatch(f"type {type(cres)}")
            if cres.dtype != nres.dtype or cres.shape != nres.shape:
                raise Mismatch(f"dtype/shape {cres.dtype}{cres.shape} want {nres.dtype}{nres.shape}")
            compare_exact(cres, nres, what)
            return
        if type(cres) is not type(nres):
            raise Mismatch(f"item type {type(cres).__name__} want {type(nres).__name__} ({cres!r} vs {nres!r})")
        if not (cres == nres or (cres != cres and nres != nres)):
            raise Mismatch(f"item {cres!r} want {nres!r}")
        if isinstance(nres, float) and nres == 0 and math.copysign(1, cres) != math.copysign(1, nres):
            raise Mismatch(f"item {cres!r} want {nres!r}")
    return "roundtrip", desc, npf, clf, checker, (h.dtype,)


def cl_asarray_roundtrip_np(h):
    return np.array(h, copy=True)


def gen_creation(rng, cl, i):
    dt = DTYPES[int(rng.integers(len(DTYPES)))]
    r = int(rng.integers(5))
    shape = rand_shape(rng, max_dims=3)
    if r == 0:
        f = ["zeros", "ones", "empty"][int(rng.integers(3))]
        npf = lambda: getattr(np, f)(shape, dtype=dt) if f != "empty" else np.zeros(shape, dtype=dt)
        clf = lambda: getattr(cl, f)(shape, dtype=dt) if f != "empty" else cl.empty(shape, dtype=dt) * 0 if False else getattr(cl, f)(shape, dtype=dt)
        desc = f"cl.{f}({shape}, dtype={dt.name})"
        if f == "empty":
            def checker(cres, nres):
                g = cres.get()
                if g.dtype != dt or g.shape != shape:
                    raise Mismatch(f"{g.dtype}{g.shape}")
            return "create:empty", desc, npf, clf, checker, (dt,)
    elif r == 1:
        v = rand_pyscalar(rng)
        npf = lambda: np.full(shape, v, dtype=dt)
        clf = lambda: cl.full(shape, v, dtype=dt)
        desc = f"cl.full({shape}, {v!r}, dtype={dt.name})"
        if isinstance(v, (float, complex)) and dt.kind in "iu" or (isinstance(v, complex) and dt.kind == "f"):
            pass
    elif r == 2:
        start = float(rng.integers(-10, 10)) if rng.random() < 0.5 else int(rng.integers(-10, 10))
        stop = start + int(rng.integers(-3, 20))
        step = [1, 2, -1, 0.5, 3, 0.25, -2][int(rng.integers(7))]
        dtk = {} if rng.random() < 0.3 else {"dtype": dt}
        npf = lambda: np.arange(start, stop, step, **dtk)
        clf = lambda: cl.arange(start, stop, step, **dtk)
        desc = f"cl.arange({start!r}, {stop!r}, {step!r}, {dtk})"
    elif r == 3:
        start = float(rng.integers(-10, 10))
        stop = float(rng.integers(-10, 10))
        num = int(rng.integers(0, 12))
        dtk = {} if rng.random() < 0.4 else {"dtype": dt}
        npf = lambda: np.linspace(start, stop, num, **dtk)
        clf = lambda: cl.linspace(start, stop, num, **dtk)
        desc = f"cl.linspace({start}, {stop}, {num}, {dtk})"

        def checker(cres, nres):
            want = np.asarray(nres)
            if want.dtype.kind in "fc":
                eps = float(np.finfo(want.real.dtype).eps)
                check_result(cres, want, ("abs", 4 * eps * (abs(start) + abs(stop)) + 0))
            else:
                # integer linspace: floor of float values; may differ by 1 at exact points
                check_result(cres, want, "exact")
        return "create:linspace", desc, npf, clf, checker, (dt,)
    else:
        dt2 = DTYPES[int(rng.integers(len(DTYPES)))]
        npf = lambda: np.result_type(dt, dt2)
        clf = lambda: cl.result_type(dt, dt2)
        desc = f"cl.result_type({dt.name}, {dt2.name})"

        def checker(cres, nres):
            if np.dtype(cres) != nres:
                raise Mismatch(f"{cres} want {nres}")
        return "result_type", desc, npf, clf, checker, (dt,)

    def checker(cres, nres):
        check_result(cres, nres, "exact")
    return "create", desc, npf, clf, checker, (dt,)


def gen_fuse(rng, cl, i):
    """lazy/fuse chains vs eager numpy."""
    dt = [np.dtype(d) for d in ("int32", "float32", "float64", "int64", "uint8", "complex64", "bool", "int16")][int(rng.integers(8))]
    x = make_array(rng, cl, dt=dt, mode="small")
    y = make_array(rng, cl, shape=broadcast_shape_for(rng, x.h.shape), mode="small")
    k = [2, 3, 0.5, -1][int(rng.integers(4))]
    form = int(rng.integers(5))
    import operator as O
    chains = [
        ("a*k+b", lambda a, b: a * k + b),
        ("(a-b)*(a+b)", lambda a, b: (a - b) * (a + b) if a.dtype != np.bool_ and b.dtype != np.bool_ else (a == b)),
        ("where(a>b,a,b)", None),
        ("(a+k).sum()", None),
        ("abs(a-k).max(axis0)", None),
    ]
    name, fn = chains[form]
    if form == 2:
        npf = lambda: np.where(x.h > y.h, x.h, y.h)
        clf = lambda: cl.fuse(lambda a, b: cl.where(a > b, a, b))(x.d, y.d)
    elif form == 3:
        npf = lambda: np.asarray((x.h + k).sum())
        clf = lambda: (cl.lazy(x.d) + k).sum()
    elif form == 4:
        ax = 0 if x.h.ndim else None
        npf = lambda: np.abs(x.h - k).max(axis=ax)
        clf = lambda: abs(cl.lazy(x.d) - k).max(axis=ax)
    else:
        npf = lambda: fn(x.h, y.h)
        clf = lambda: cl.fuse(fn)(x.d, y.d) if rng.random() < 2 else None
    desc = f"fused {name} (k={k}) with a = {x.desc}, b = {y.desc}"

    def checker(cres, nres):
        want = np.asarray(nres)
        if want.dtype.kind in "fc":
            eps = float(np.finfo(want.real.dtype).eps)
            with np.errstate(all="ignore"):
                n = max(x.h.size, 1)
                tol = (n + 4) * eps * (np.abs(want).astype(np.float64) + np.abs(x.h).astype(np.float64).sum() + 4) * (1 if form in (3,) else 0) + spacing_of(np.abs(want), want.real.dtype) * (2 if form != 3 else 1)
            check_result(cres, want, ("abs", np.broadcast_to(tol, want.shape)))
        else:
            check_result(cres, want, "exact")
    return "fuse:" + name, desc, npf, clf, checker, (dt,)


GENERATORS = [
    (gen_binary, 30), (gen_inplace, 12), (gen_unary, 16), (gen_reduction, 14), (gen_scan, 5),
    (gen_sort, 5), (gen_astype, 6), (gen_getitem, 8), (gen_setitem, 8), (gen_take_put, 6),
    (gen_where, 4), (gen_reshape, 3), (gen_transpose, 3), (gen_roundtrip, 4), (gen_creation, 5),
    (gen_fuse, 3),
]


def pick_generator(rng):
    tot = sum(w for _, w in GENERATORS)
    r = rng.random() * tot
    for g, w in GENERATORS:
        if r < w:
            return g
        r -= w
    return GENERATORS[-1][0]


COMPLEX_MATH_OK = {"exp", "sqrt", "abs", "absolute", "negative", "conjugate", "conj", "real", "imag",
                   "isnan", "isinf", "isfinite", "logical_not"}


def documented(rec, kind, desc):
    """Why a difference is documented (docs/numpy-semantics.md, clarray::array / reduce docs),
    or None."""
    msg = rec.get("msg", "")
    if rec["cat"] == "REFUSED" and "complex numbers are not ordered" in msg:
        return "complex not ordered (Known::DocComplexOrderAndMath)"
    if rec["cat"] == "REFUSED" and kind.startswith("unary:") and "complex" in msg and \
            kind.split(":")[-1] not in COMPLEX_MATH_OK:
        return "complex math functions other than exp/sqrt/abs/pow (DocComplexOrderAndMath)"
    if rec["cat"] == "REFUSED" and kind.split(":")[-1] in ("arctan2", "hypot", "minimum", "maximum") \
            and "complex" in msg:
        return "complex atan2/hypot/min/max (array module docs)"
    if rec["cat"] == "NO_ERROR" and "negative integer powers" in msg:
        return "int ** array with a negative exponent gives 0 (DocIntNegativePower)"
    if rec["cat"] == "WRONG" and kind == "create" and "full(" in desc:
        return "maybe float->int out-of-range cast (undefined) -- check"
    return None


def run_case(i, verbose=False):
    import clarray as cl
    rng = np.random.default_rng(SEED + i)
    gen = pick_generator(rng)
    try:
        kind, desc, npf, clf, checker, dts = gen(rng, cl, i)
    except BaseException as e:  # noqa
        if type(e).__name__ == "PanicException" or not isinstance(e, Exception):
            return {"case": i, "kind": gen.__name__, "cat": "PANIC_SETUP", "msg": f"{type(e).__name__}: {e}",
                    "tb": traceback.format_exc()[-1500:]}
        return {"case": i, "kind": gen.__name__, "cat": "SETUP_ERR", "msg": f"{type(e).__name__}: {e}",
                "tb": traceback.format_exc()[-1500:]}
    rec = run_pair(kind, desc, npf, clf, checker)
    if rec:
        doc = documented(rec, kind, desc)
        if doc:
            rec["documented"] = doc
    meta = {"case": i, "kind": kind, "dtypes": [np.dtype(d).name for d in dts]}
    if rec:
        rec.update(meta)
        return rec
    return dict(meta, cat="OK")


def worker(start, end, out):
    os.environ.setdefault("POCL_EXTRA_BUILD_FLAGS", "-cl-opt-disable")
    with open(out, "a") as f:
        for i in range(start, end):
            with open(PROGRESS + f".{start}", "w") as p:
                p.write(str(i))
            rec = run_case(i)
            f.write(json.dumps(rec, default=str) + "\n")
            f.flush()


def driver(start, n, out, nproc):
    import concurrent.futures as cf
    chunks = []
    per = (n + nproc - 1) // nproc
    for k in range(nproc):
        s, e = start + k * per, min(start + (k + 1) * per, start + n)
        if s < e:
            chunks.append((s, e))

    def run_chunk(s, e):
        cur = s
        while cur < e:
            p = subprocess.run([sys.executable, __file__, "--worker", "--start", str(cur), "--end", str(e),
                                "--out", out], capture_output=True, text=True)
            if p.returncode == 0:
                return
            try:
                crashed = int(open(PROGRESS + f".{cur}").read())
            except Exception:
                crashed = cur
            with open(out, "a") as f:
                f.write(json.dumps({"case": crashed, "cat": "CRASH", "rc": p.returncode,
                                    "stderr": p.stderr[-2000:]}) + "\n")
            cur = crashed + 1

    with cf.ThreadPoolExecutor(len(chunks)) as ex:
        list(ex.map(lambda c: run_chunk(*c), chunks))


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--end", type=int, default=0)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--case", type=int, default=None)
    a = ap.parse_args()
    os.makedirs(os.path.dirname(PROGRESS), exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    if a.case is not None:
        rec = run_case(a.case, verbose=True)
        rng = np.random.default_rng(SEED + a.case)
        print(json.dumps(rec, indent=1, default=str))
        return
    if a.worker:
        worker(a.start, a.end, a.out)
        return
    driver(a.start, a.n, a.out, a.nproc)


if __name__ == "__main__":
    main()
