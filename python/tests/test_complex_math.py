"""Complex math functions and the ordering of complex values against NumPy itself (the Rust suite
``tests/complex_math.rs`` checks them against a host reference and rules written out).

- Values: normwise, ``|w - numpy| <= k * eps * |numpy|`` (k: the Rust suite's bounds plus NumPy's
  own error), on random values with parts of magnitude 1e-6 to 1e6, zeros of both signs and points
  on the branch cuts (the axes).
- Special values: every input with an infinite or NaN part from a grid, bit for bit (a zero's sign
  counts, NaN matches NaN; finite nonzero parts such as pi/4 within a few eps).
- Ordering: ``<``, ``<=``, ``>``, ``>=``, ``minimum``, ``maximum`` bit for bit, NaN parts included.
"""

import warnings

import numpy as np
import pytest

import clarray as cl

FUNCS = ["log", "log2", "log10", "log1p", "expm1", "exp2", "exp", "sqrt", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
         "sign", "rint"]
# The Rust suite's normwise bounds (tests/common/complex_ref.rs), plus 8 for NumPy's own error.
K = {"sign": 16, "rint": 0, "sqrt": 16, "exp": 16, "expm1": 20, "exp2": 20, "sin": 20, "cos": 20,
     "sinh": 20, "cosh": 20, "log": 24, "log2": 24, "log10": 24, "log1p": 24, "tan": 24,
     "tanh": 24, "arctan": 24, "arctanh": 24, "arcsin": 32, "arccos": 32, "arcsinh": 32,
     "arccosh": 32}
COMPLEX = ["complex64", "complex128"]


def numpy_result(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


def random_complex(rng, n, dtype):
    def parts():
        mag = 10.0 ** rng.uniform(-6, 6, n) * rng.choice([-1.0, 1.0], n)
        pool = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5])
        return np.where(rng.random(n) < 0.15, pool[rng.integers(0, len(pool), n)], mag)

    re, im = parts(), parts()
    axis = rng.random(n)
    re = np.where(axis < 0.15, np.copysign(0.0, rng.choice([-1.0, 1.0], n)), re)
    im = np.where((axis >= 0.15) & (axis < 0.3), np.copysign(0.0, rng.choice([-1.0, 1.0], n)), im)
    z = np.empty(n, dtype=dtype)
    z.real, z.imag = re, im
    return z


@pytest.mark.parametrize("dt", COMPLEX)
@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("seed", range(2))
def test_values_match_numpy(name, dt, seed):
    z = random_complex(np.random.default_rng(seed * 1000 + FUNCS.index(name)), 200, dt)
    got = getattr(cl, name)(cl.asarray(z)).get()
    want = numpy_result(getattr(np, name), z)
    assert got.dtype == want.dtype
    eps = np.finfo(want.real.dtype).eps
    ok = np.isfinite(want)
    # NumPy's results that overflow in an intermediate e^|x| are not compared (see the docs).
    if name in ("exp", "exp2", "expm1", "sinh", "cosh"):
        ok &= np.abs(z.real) < (80 if dt == "complex64" else 700)
    if name in ("sin", "cos"):
        ok &= np.abs(z.imag) < (80 if dt == "complex64" else 700)
    w, g = want[ok].astype(np.complex128), got[ok].astype(np.complex128)
    tol = K[name] * eps * np.abs(w) + 1e-300
    if name == "exp2":
        tol += 2 * eps * np.abs(z[ok]) * np.abs(w)
    if name == "log1p":
        # NumPy's log(hypot(1 + x, y)) loses the real part of small z: its error is eps absolute.
        tol += 2 * eps
    err = np.abs(g - w)
    bad = np.flatnonzero(err > tol)
    assert bad.size == 0, [(z[ok][i], got[ok][i], want[ok][i]) for i in bad[:5]]


def same_part(a, b, rtol):
    if np.isnan(a) or np.isnan(b):
        return np.isnan(a) and np.isnan(b)
    if a == 0 or b == 0 or np.isinf(a) or np.isinf(b):
        return a == b and np.signbit(a) == np.signbit(b)
    return abs(a - b) <= rtol * abs(b)


@pytest.mark.parametrize("dt", COMPLEX)
def test_special_values_match_numpy(dt):
    parts = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, np.inf, -np.inf, np.nan]
    zs = np.array([complex(x, y) for x in parts for y in parts], dtype=dt)
    a = cl.asarray(zs)
    eps = np.finfo(zs.real.dtype).eps
    for name in FUNCS:
        got = getattr(cl, name)(a).get()
        want = numpy_result(getattr(np, name), zs)
        for z, g, w in zip(zs, got, want):
            # Finite values: the special cases here are exact in NumPy (zeros, pi/2, ...) or
            # ordinary values, compared within the bound.
            rtol = K[name] * eps if np.isfinite(z) else 8 * eps
            assert same_part(g.real, w.real, rtol) and same_part(g.imag, w.imag, rtol), (name, z, g, w)


def test_refused_as_numpy():
    c = cl.asarray(np.ones(2, dtype=np.complex64))
    for name in ("floor", "ceil", "trunc", "cbrt"):
        with pytest.raises(TypeError):
            numpy_result(getattr(np, name), np.ones(2, dtype=np.complex64))
        with pytest.raises(TypeError, match="not defined for complex64"):
            getattr(cl, name)(c)


@pytest.mark.parametrize("dt", COMPLEX)
@pytest.mark.parametrize("seed", range(3))
def test_ordering_matches_numpy(dt, seed):
    rng = np.random.default_rng(seed)
    pool = np.array([-1.0, -0.0, 0.0, 1.0, 2.5, np.nan, np.inf, -np.inf])

    def values(n):
        z = np.empty(n, dtype=dt)
        z.real = pool[rng.integers(0, len(pool), n)]
        z.imag = pool[rng.integers(0, len(pool), n)]
        return z

    x, y = values(400), values(400)
    a, b = cl.asarray(x), cl.asarray(y)
    for name in ("less", "less_equal", "greater", "greater_equal"):
        np.testing.assert_array_equal(getattr(cl, name)(a, b).get(), numpy_result(getattr(np, name), x, y))
    np.testing.assert_array_equal((a < b).get(), numpy_result(np.less, x, y))
    np.testing.assert_array_equal((a >= b).get(), numpy_result(np.greater_equal, x, y))
    for name in ("minimum", "maximum"):
        got = getattr(cl, name)(a, b).get()
        want = numpy_result(getattr(np, name), x, y)
        # Bit for bit (the kept operand's zeros included), NaN parts in the same places.
        for part in ("real", "imag"):
            g, w = getattr(got, part), getattr(want, part)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            m = ~np.isnan(w)
            assert g[m].tobytes() == w[m].tobytes(), (name, part)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_power_of_infinite_and_subnormal_values(dtype):
    # Regressions (found by differential fuzzing): z ** 2.5 of an infinite z gave NaN (0·inf
    # in the exponent's cross terms), and z ** w of a subnormal z lost most of its angle (log|z|
    # taken of a subnormal |z|); NumPy gives inf / 0 and the accurate value.
    tiny = np.finfo(dtype).smallest_subnormal
    z = np.array([complex(np.inf, 0), complex(0.5, 0), complex(tiny, tiny), complex(3 * tiny, -tiny), 2 + 1j], dtype)
    for w in (2.5, -2.5, 1j, 0.5 + 0.25j):
        with np.errstate(all="ignore"):
            want = np.power(z, np.asarray(w, dtype))
            got = cl.power(cl.asarray(z), cl.asarray(np.asarray(w, dtype))).get()
        fin = np.isfinite(want)
        assert np.array_equal(np.isfinite(got), fin), (w, got, want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-4 if dtype == np.complex64 else 1e-10)
        both_inf = np.isinf(want.real) & ~np.isfinite(got.real)
        assert np.array_equal(got.real[both_inf], want.real[both_inf]), (w, got, want)


def test_tanh_near_its_large_argument_form():
    # complex64 tanh where it switches forms (review: the old switch at |x| = 9 rounded Re to
    # 1 from 8.8 on, 1 ulp off): within one float32 ulp of 1 of the float64 value, imaginary
    # parts within 4e-7 relative. (Re tanh(x+iy) exceeds 1 where cos 2y < 0: 1.0000002 for
    # 8+1.5j.) Measured on PoCL over 1.5 <= x <= 40: at most 3 ulp in either part.
    x = np.linspace(8.0, 12.0, 81)
    for y in (0.0, 0.5, 1.5):
        z = (x + 1j * y).astype(np.complex64)
        got = cl.tanh(cl.asarray(z)).get()
        want = np.tanh(z.astype(np.complex128))
        ulp = np.spacing(np.float32(1)) / 2
        assert np.all(np.abs(got.real - want.real) <= 2 * ulp), (y, np.abs(got.real - want.real).max())
        np.testing.assert_allclose(got.imag, want.imag, rtol=4e-7, atol=0)
