"""min, max, argmin, argmax, sort and argsort of complex arrays against NumPy itself: values
with NaN in either part, zeros of both signs, infinities and many ties (the Rust suite
``tests/complex_order.rs`` checks views and every path against rules written out)."""

import numpy as np
import pytest

import clarray as cl


def parts(rng, n, dtype, nan_rate):
    pool = np.array([0.0, -0.0, np.inf, -np.inf, 0.5, -0.5, 1.0, 2.0], dtype=dtype)
    p = pool[rng.integers(0, len(pool), n)]
    p[rng.random(n) < nan_rate] = np.nan
    return p


def complex_array(seed, shape, dtype, nan_rate):
    rng = np.random.default_rng(seed)
    real = np.dtype(dtype).char.lower()  # F -> f, D -> d
    n = int(np.prod(shape))
    x = np.empty(n, dtype=dtype)
    x.real = parts(rng, n, real, nan_rate)
    x.imag = parts(rng, n, real, nan_rate)
    return x.reshape(shape)


def same_bits(got, want):
    want = np.asarray(want)
    h = got.get()
    assert h.shape == want.shape and h.dtype == want.dtype, (h.shape, h.dtype, want.shape, want.dtype)
    assert h.tobytes() == want.tobytes(), (h, want)


CASES = [(seed, dt, rate) for seed in range(4) for dt in ("complex64", "complex128") for rate in (0.0, 0.05, 0.3)]


@pytest.mark.parametrize("seed,dt,rate", CASES)
def test_extremes_match_numpy(seed, dt, rate):
    x = complex_array(seed, (5, 7), dt, rate)
    a = cl.asarray(x)
    for axis in (None, 0, 1, -1):
        for name in ("argmin", "argmax"):
            got = getattr(a, name)(axis=axis).get()
            np.testing.assert_array_equal(got, getattr(np, name)(x, axis=axis))
        for name in ("min", "max"):
            # NumPy takes the first NaN-holding, else the first extreme element: bit for bit.
            same_bits(getattr(a, name)(axis=axis), getattr(np, name)(x, axis=axis))


@pytest.mark.parametrize("seed,dt,rate", CASES)
def test_sorts_match_numpy(seed, dt, rate):
    x = complex_array(seed + 100, (4, 300), dt, rate)
    a = cl.asarray(x)
    for axis in (0, 1, -1, None):
        want = np.argsort(x, axis=axis, kind="stable")
        np.testing.assert_array_equal(a.argsort(axis=axis).get(), want)
        flat = x.ravel() if axis is None else x
        got = a.sort(axis=axis)
        # NumPy's sort orders as its stable argsort; among tied values (zeros of both signs,
        # NaNs of one class) clarray keeps their order, NumPy's default sort may not.
        same_bits(got, np.take_along_axis(flat, want, axis=0 if axis is None else axis))
        np.testing.assert_array_equal(
            np.isnan(got.get()), np.isnan(np.sort(x, axis=axis))
        )


def test_numpy_probe_order():
    nan, inf = np.nan, np.inf
    x = np.array([1 + 2j, complex(nan, 0), 3, complex(0, nan), complex(nan, nan), complex(1, -inf),
                  complex(-inf, 5), 1 + 1j, complex(nan, -1), complex(2, nan), complex(nan, 3)])
    a = cl.asarray(x)
    np.testing.assert_array_equal(a.argsort().get(), [6, 5, 7, 0, 2, 3, 9, 8, 1, 10, 4])
    np.testing.assert_array_equal(a.argsort().get(), np.argsort(x, kind="stable"))
    assert a.argmax().get() == np.argmax(x) == 1
    same_bits(a.max(), np.max(x))
    with pytest.raises(ValueError):
        np.max(np.zeros((0, 2), complex), axis=0)
    with pytest.raises(ValueError):
        cl.asarray(np.zeros((0, 2), complex)).max(axis=0)
