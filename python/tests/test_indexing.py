"""Indexing with ints, slices (negative steps), None and ..., integer and boolean arrays, and
assignment through views, against NumPy."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import clarray as cl
from conftest import assert_same


@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6), data=st.data())
def test_basic_indexing_matches_numpy(shape, data):
    h = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    a = cl.asarray(h)
    assert_same(a[key], h[key])


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), data=st.data())
def test_setitem_through_views_matches_numpy(shape, data):
    h = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=False, allow_ellipsis=True))
    a = cl.asarray(h)
    want = h.copy()
    want[key] = -1.5
    a[key] = -1.5
    assert_same(a, want)
    view_shape = h[key].shape
    v = np.arange(int(np.prod(view_shape)), dtype=np.float32).reshape(view_shape) + 100
    want[key] = v
    a[key] = v
    assert_same(a, want)


def test_negative_steps_are_numpys():
    h = np.arange(10)
    a = cl.asarray(h)
    for key in (slice(None, None, -1), slice(0, 5, -2), slice(8, 1, -3), slice(-2, None, -4), slice(None, 3, -1)):
        assert_same(a[key], h[key])


def test_integer_and_boolean_array_indices():
    h = np.arange(12.0).reshape(3, 4)
    a = cl.asarray(h)
    assert_same(a[[2, 0, -1]], h[[2, 0, -1]])
    assert_same(a[np.array([1, 1])], h[np.array([1, 1])])
    m = h > 4.5
    assert_same(a[m], h[m])
    assert_same(a[a > 4.5], h[m])


def test_index_errors():
    a = cl.asarray(np.arange(6).reshape(2, 3))
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        a[2]
    with pytest.raises(IndexError, match="too many indices"):
        a[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        a[..., ...]
    with pytest.raises(IndexError, match="valid indices"):
        a["x"]
    with pytest.raises(IndexError):
        a[[0, 5]]  # found on the device
    with pytest.raises(IndexError, match="integer or boolean"):
        a[np.array([0.5])]


def test_setitem_refuses_a_shape_that_does_not_broadcast():
    a = cl.asarray(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="cannot be assigned"):
        a[:, :] = np.ones(4)


def test_reshape_transpose_ravel():
    h = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    a = cl.asarray(h)
    assert_same(a.reshape(4, -1), h.reshape(4, -1))
    assert_same(a.reshape((6, 4)), h.reshape((6, 4)))
    assert_same(a.T, h.T)
    assert_same(a.transpose(1, 0, 2), h.transpose(1, 0, 2))
    assert_same(a[:, ::-1].ravel(), h[:, ::-1].ravel())
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape(5, -1)


def test_mask_assignment_of_one_value_leaves_the_rest_exact():
    # The value was promoted with the whole array (int64 beside a float: float64) and every
    # element written back: unselected large integers were rounded or saturated.
    for h, v in ((np.array([2**53 + 1, 0], np.int64), 1.5),
                 (np.array([2**62 + 1, 0], np.int64), np.uint64(5)),
                 (np.array([2**64 - 3, 0], np.uint64), np.int64(5))):
        a, want = cl.asarray(h), h.copy()
        mask = np.array([False, True])
        want[mask] = v
        a[mask] = v
        assert_same(a, want)


def test_bool_scalar_index_is_refused_not_read_as_an_integer():
    a = cl.asarray(np.arange(8.0).reshape(2, 4))
    for key in (True, False, (slice(None), True)):
        with pytest.raises(IndexError, match="boolean scalar index"):
            a[key]


def test_empty_integer_indices_select_and_write_nothing():
    z = cl.zeros(0)
    z[np.array([], dtype=np.int64)] = 1
    assert z.shape == (0,)
    h = np.arange(6.0).reshape(3, 2)
    a = cl.asarray(h)
    assert_same(a[[]], h[[]])
    a[[]] = 7
    assert_same(a, h)


def test_take_and_put_take_narrow_integer_and_bool_indices():
    h = np.arange(10.0)
    for dt in (np.int8, np.uint8, np.int16, np.uint16):
        idx = np.array([1, 2, 9], dt)
        assert_same(cl.take(cl.asarray(h), idx), np.take(h, idx))
        assert_same(cl.take(cl.asarray(h), cl.asarray(idx)), np.take(h, idx))
    a, want = cl.asarray(h), h.copy()
    idx = np.array([0, 3], np.int8)
    np.put(want, idx, [-1.0, -2.0])
    a.put(idx, [-1.0, -2.0])
    assert_same(a, want)


def test_float_nan_and_inf_into_integers_raise_as_numpy():
    a = cl.asarray(np.arange(3))
    with pytest.raises(ValueError, match="NaN"):
        a[0] = float("nan")
    with pytest.raises(OverflowError, match="infinity"):
        a[np.array([True, False, False])] = float("inf")
    assert_same(a, np.arange(3))


def test_reshape_to_an_overflowing_shape_is_a_value_error():
    for shape in ((2**62, 8), (2**62, 8, -1), (-1, 2**40, 2**40)):
        with pytest.raises(ValueError, match="cannot reshape"):
            cl.zeros(4).reshape(*shape)


def test_mask_assignment_takes_a_one_element_list_and_empty_indices_check_the_value():
    h = np.arange(4.0)
    a, want = cl.asarray(h), h.copy()
    mask = np.array([True, False, True, False])
    want[mask] = [5.0]
    a[mask] = [5.0]
    assert_same(a, want)
    b = cl.asarray(np.arange(6.0).reshape(3, 2))
    with pytest.raises(Exception, match="broadcast|shape"):
        b[[]] = np.ones(5)
