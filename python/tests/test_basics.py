"""Transfers, properties, creation functions, conversions and repr against NumPy."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import clarray as cl
from conftest import DTYPES, assert_same, random_array


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
       seed=st.integers(0, 2**32 - 1))
def test_asarray_get_round_trip(dtype, shape, seed):
    h = random_array(np.random.default_rng(seed), shape, dtype)
    a = cl.asarray(h)
    assert a.shape == h.shape and a.dtype == h.dtype and a.ndim == h.ndim and a.size == h.size
    assert (a.strides == h.strides or h.size == 0) and a.itemsize == h.itemsize and a.nbytes == h.nbytes
    g = a.get()
    assert g.dtype == h.dtype and g.shape == h.shape
    np.testing.assert_array_equal(g, h)
    np.testing.assert_array_equal(np.asarray(a), h)


def test_asarray_takes_views_lists_and_other_byte_orders():
    h = np.arange(24, dtype=np.int32).reshape(4, 6)[::-1, ::2]
    np.testing.assert_array_equal(cl.asarray(h).get(), h)
    np.testing.assert_array_equal(cl.asarray([[1, 2], [3, 4]]).get(), np.asarray([[1, 2], [3, 4]]))
    big = np.arange(5, dtype=">f8")
    a = cl.asarray(big)
    assert a.dtype == np.float64
    np.testing.assert_array_equal(a.get(), big)


def test_asarray_refuses_unsupported_dtypes():
    with pytest.raises(TypeError, match="no arrays of dtype"):
        cl.asarray(np.array(["a", "b"]))


@given(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
def test_creation_functions_match_numpy(dtype, shape):
    assert_same(cl.zeros(shape, dtype=dtype), np.zeros(shape, dtype=dtype))
    assert_same(cl.ones(shape, dtype=dtype), np.ones(shape, dtype=dtype))
    assert_same(cl.full(shape, 3, dtype=dtype), np.full(shape, 3, dtype=dtype))
    e = cl.empty(shape, dtype=dtype)
    assert e.shape == shape and e.dtype == dtype


def test_full_without_dtype_takes_numpys_default():
    for v in (True, 3, 2.5, 1 + 2j, np.float32(1.5), np.int8(3)):
        assert_same(cl.full((2, 3), v), np.full((2, 3), v))


def test_full_refuses_an_integer_out_of_range():
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        cl.full(3, 300, dtype=np.uint8)


@pytest.mark.parametrize("args,dtype", [
    ((5,), None), ((2, 11, 3), None), ((10, 2, -3), None), ((0.5, 4.0, 0.25), None),
    ((1, 7, 2), "float32"), ((-3, 3), "int8"), ((0, 1, 0.1), None), ((5, 1), None),
])
def test_arange_matches_numpy(args, dtype):
    assert_same(cl.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype))


def test_arange_refuses_a_zero_step():
    with pytest.raises(ValueError, match="nonzero"):
        cl.arange(0, 5, 0)


@pytest.mark.parametrize("start,stop,num,dtype", [(0, 1, 5, None), (-2.5, 7, 50, "float32"), (3, 3, 1, None), (0, 1, 0, None)])
def test_linspace_matches_numpy(start, stop, num, dtype):
    assert_same(cl.linspace(start, stop, num, dtype=dtype), np.linspace(start, stop, num, dtype=dtype))


@given(src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_astype_matches_numpy(src, dst, seed):
    h = random_array(np.random.default_rng(seed), (3, 4), src)
    if src.kind == "c" and dst.kind != "c":
        h = h.real.astype(src)  # NumPy warns when it drops an imaginary part
    if src.kind == "f" and dst.kind in "iu":
        h = np.abs(h) if dst.kind == "u" else h  # negative float -> unsigned is undefined in C
    a = cl.asarray(h)
    assert_same(a.T.astype(dst), h.T.astype(dst))


def test_copy_is_independent():
    a = cl.asarray(np.arange(6.0))
    b = a.copy()
    a[0] = 100
    assert b.get()[0] == 0 and a.get()[0] == 100


def test_repr_str_and_scalars():
    a = cl.asarray(np.arange(3, dtype=np.float32))
    assert repr(a) == "clarray." + repr(np.arange(3, dtype=np.float32))
    assert str(a) == str(np.arange(3, dtype=np.float32))
    assert a[1].item() == 1.0 and float(a[2]) == 2.0 and int(a[2]) == 2
    assert bool(cl.asarray([1])) and not bool(cl.asarray([0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a)
    assert len(a) == 3


def test_data_is_the_buffer_and_offset_in_bytes():
    a = cl.asarray(np.arange(10, dtype=np.int32))
    v = a[3:]
    assert isinstance(v.data, cl.Buffer) and v.data.size >= 40 and v.offset == 12


def test_context_and_docstrings():
    c = cl.default_context()
    assert isinstance(c.device_name, str) and c.device_name
    c.finish()
    assert "sum over" in cl.Array.sum.__doc__
    assert "Square root" in cl.sqrt.__doc__
    assert cl.asarray.__doc__ and cl.zeros.__doc__ and cl.enqueue_copy.__doc__


def test_functions_of_scalars_give_0d_arrays():
    for got, want in ((cl.sqrt(4.0), np.sqrt(4.0)), (cl.add(1, 2), np.add(1, 2)), (cl.where(True, 1, 2.0), np.where(True, 1, 2.0))):
        assert got.shape == () and got.dtype == np.asarray(want).dtype, (got, want)
        assert got.get() == want


def test_misaligned_numpy_input_is_copied():
    raw = np.arange(9, dtype=np.uint8).tobytes()
    h = np.frombuffer(raw, "<f8", offset=1)
    assert not h.flags.aligned
    assert_same(cl.asarray(h), h)


def test_0d_integer_arrays_are_indices():
    import operator
    i = cl.asarray(np.int64(3))
    assert operator.index(i) == 3 and [10, 11, 12, 13][i] == 13
    for bad in (cl.asarray(np.float64(3)), cl.asarray(np.array([3]))):
        with pytest.raises(TypeError, match="integer scalar arrays"):
            operator.index(bad)
