"""Shared settings: a bounded number of hypothesis examples (each new dtype or layout class
compiles a kernel, about a second on PoCL), no deadline (the first call of a kernel builds it).
CLARRAY_HYPOTHESIS_EXAMPLES raises or lowers the count."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "clarray",
    max_examples=int(os.environ.get("CLARRAY_HYPOTHESIS_EXAMPLES", "12")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("CLARRAY_HYPOTHESIS_RANDOM") is None,
)
settings.load_profile("clarray")

import clarray as cl  # noqa: E402

DTYPES = [np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")]


@pytest.fixture(scope="session")
def ctx():
    return cl.default_context()


def random_array(rng, shape, dtype):
    """Random values of ``dtype`` that NumPy and the device compute alike (small integers,
    floats in [-4, 4])."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -20
        return rng.integers(lo, 20, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-4, 4, size=shape) + 1j * rng.uniform(-4, 4, size=shape)).astype(dtype)
    return rng.uniform(-4, 4, size=shape).astype(dtype)


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return dict(rtol=0, atol=0)
    return {2: dict(rtol=2e-3, atol=2e-3), 4: dict(rtol=1e-5, atol=1e-5)}.get(
        dtype.itemsize if dtype.kind == "f" else dtype.itemsize // 2, dict(rtol=1e-12, atol=1e-12))


def assert_same(got, want):
    """``got`` (a clarray array) equals ``want`` (NumPy's result): shape, dtype and values."""
    want = np.asarray(want)
    assert isinstance(got, cl.Array), type(got)
    h = got.get()
    assert h.shape == want.shape, (h.shape, want.shape)
    assert h.dtype == want.dtype, (h.dtype, want.dtype)
    np.testing.assert_allclose(h, want, equal_nan=True, **tolerance(want.dtype))
