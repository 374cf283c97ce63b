"""Reductions over axes (int, tuple, None, negative; keepdims), sort, argsort, take, put and
random numbers, against NumPy."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import clarray as cl
from conftest import assert_same, random_array


@st.composite
def shape_and_axis(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    nd = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return shape, None
    if kind == "int":
        return shape, draw(st.integers(-nd, nd - 1))
    axes = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    return shape, tuple(a - nd if draw(st.booleans()) else a for a in axes)


@given(sa=shape_and_axis(), keepdims=st.booleans(),
       name=st.sampled_from(["sum", "prod", "min", "max", "mean", "any", "all"]),
       dt=st.sampled_from(["int16", "uint8", "int64", "float32", "float64", "bool"]),
       seed=st.integers(0, 2**32 - 1))
def test_reductions_match_numpy(sa, keepdims, name, dt, seed):
    shape, axis = sa
    x = random_array(np.random.default_rng(seed), shape, dt)
    if name == "prod" and dt != "bool":
        x = (np.abs(x) % 3 + (0 if np.dtype(dt).kind == "f" else 1)).astype(dt)
    a = cl.asarray(x)
    got = getattr(a, name)(axis=axis, keepdims=keepdims)
    assert_same(got, getattr(np, name)(x, axis=axis, keepdims=keepdims))


@given(sa=shape_and_axis(), ddof=st.integers(0, 1), dt=st.sampled_from(["float32", "float64", "int32"]),
       seed=st.integers(0, 2**32 - 1))
def test_var_std_match_numpy(sa, ddof, dt, seed):
    shape, axis = sa
    x = random_array(np.random.default_rng(seed), shape, dt)
    n = x.size if axis is None else int(np.prod([shape[k] for k in np.atleast_1d(axis)]))
    if n <= ddof:
        return
    a = cl.asarray(x)
    assert_same(a.var(axis=axis, ddof=ddof), np.var(x, axis=axis, ddof=ddof))
    assert_same(a.std(axis=axis, ddof=ddof), np.std(x, axis=axis, ddof=ddof))


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), data=st.data(),
       dt=st.sampled_from(["float32", "int32", "uint8"]), seed=st.integers(0, 2**32 - 1))
def test_argmin_argmax_match_numpy(shape, data, dt, seed):
    x = random_array(np.random.default_rng(seed), shape, dt)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    a = cl.asarray(x)
    assert_same(a.argmin(axis=axis), np.argmin(x, axis=axis))
    assert_same(a.argmax(axis=axis), np.argmax(x, axis=axis))


def test_reduction_axis_errors():
    a = cl.zeros((2, 3))
    with pytest.raises(np.exceptions.AxisError.__mro__[1]) as e:  # ValueError, as NumPy's
        a.sum(axis=2)
    assert isinstance(e.value, cl.AxisError) and isinstance(e.value, IndexError)
    assert e.value.axis == 2 and e.value.ndim == 2
    with pytest.raises(cl.AxisError, match="more than once|twice|repeated|once"):
        a.sum(axis=(0, -2))
    with pytest.raises(TypeError, match="axis must be None or an int"):
        a.argmax(axis=(0, 1))
    with pytest.raises(ValueError, match="empty"):
        cl.zeros((0, 3)).max(axis=0)


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), data=st.data(),
       dt=st.sampled_from(["float32", "int64", "uint16", "float64"]), seed=st.integers(0, 2**32 - 1))
def test_sort_argsort_match_numpy(shape, data, dt, seed):
    x = random_array(np.random.default_rng(seed), shape, dt)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = cl.asarray(x)
    assert_same(a.sort(axis=axis), np.sort(x, axis=axis))
    assert_same(a.argsort(axis=axis), np.argsort(x, axis=axis, kind="stable"))
    assert_same(cl.sort(a, axis=None), np.sort(x, axis=None))


def test_cumsum_cumprod_match_numpy():
    x = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    a = cl.asarray(x)
    assert_same(a.cumsum(axis=1), np.cumsum(x, axis=1))
    assert_same(a.cumsum(), np.cumsum(x))
    assert_same(a.cumprod(axis=0), np.cumprod(x, axis=0))


def test_take_and_put_match_numpy():
    x = np.arange(12.0).reshape(3, 4)
    a = cl.asarray(x)
    idx = np.array([3, -1, 0])
    assert_same(a.take(idx, axis=1), np.take(x, idx, axis=1))
    assert_same(cl.take(a, idx), np.take(x, idx))
    b = a.copy()
    want = x.copy()
    np.put(want, [0, 5, -1], [7.0, 8.0])
    b.put([0, 5, -1], [7.0, 8.0])
    assert_same(b, want)
    with pytest.raises(IndexError, match="out of bounds|outside"):
        a.take([12])


def test_random_generators_are_reproducible_and_in_range():
    g1, g2 = cl.random.default_rng(7), cl.random.default_rng(7)
    u1 = g1.uniform(size=(1000,), dtype="float32").get()
    u2 = g2.uniform(size=(1000,), dtype="float32").get()
    np.testing.assert_array_equal(u1, u2)
    assert u1.dtype == np.float32 and (u1 >= 0).all() and (u1 < 1).all()
    n = cl.random.Generator(3).normal(2.0, 0.5, (20000,)).get()
    assert abs(n.mean() - 2.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    k = cl.random.Generator(1).integers(-3, 4, (5000,), dtype="int32").get()
    assert k.dtype == np.int32 and k.min() == -3 and k.max() == 3
    with pytest.raises(ValueError, match="lo < hi"):
        cl.random.Generator(1).integers(4, 4, (3,))
    with pytest.raises(TypeError, match="float32 or float64"):
        cl.random.Generator(1).uniform(size=(3,), dtype="int32")
