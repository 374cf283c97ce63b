"""Buffers and enqueue_copy: blocking and non-blocking, with offsets, and the checks."""

import numpy as np
import pytest

import clarray as cl


def test_enqueue_copy_round_trip_with_offsets():
    h = np.arange(64, dtype=np.float32)
    b = cl.Buffer(h.nbytes)
    assert b.size == h.nbytes
    cl.enqueue_copy(b, h)
    out = np.full(16, -1, dtype=np.float32)
    cl.enqueue_copy(out, b, src_offset=4 * 8)
    np.testing.assert_array_equal(out, h[8:24])
    c = cl.Buffer(h.nbytes)
    cl.enqueue_copy(c, b, byte_count=32, dest_offset=16)
    back = np.zeros(12, dtype=np.float32)
    cl.enqueue_copy(back, c)
    np.testing.assert_array_equal(back[4:12], h[:8])


def test_non_blocking_copies_return_events():
    h = np.arange(1000, dtype=np.int64)
    b = cl.Buffer(h.nbytes)
    ev = cl.enqueue_copy(b, h, is_blocking=False)
    assert isinstance(ev, cl.Event)
    ev.wait()
    assert ev.is_complete
    out = np.zeros_like(h)
    ev2 = cl.enqueue_copy(out, b, is_blocking=False)
    del b  # the copy keeps what it needs alive
    ev2.wait()
    np.testing.assert_array_equal(out, h)


def test_array_data_is_copyable():
    a = cl.asarray(np.arange(10, dtype=np.int32))
    out = np.zeros(10, dtype=np.int32)
    cl.enqueue_copy(out, a.data, src_offset=a.offset)
    np.testing.assert_array_equal(out, np.arange(10))


def test_copies_out_of_bounds_raise_index_errors():
    b = cl.Buffer(16)
    with pytest.raises(IndexError) as e:
        cl.enqueue_copy(b, np.zeros(8, dtype=np.float32))
    assert isinstance(e.value, cl.OutOfBoundsError)
    with pytest.raises(ValueError, match="byte_count"):
        cl.enqueue_copy(np.zeros(2, dtype=np.float32), b, byte_count=16)
    with pytest.raises(ValueError, match="C-contiguous"):
        cl.enqueue_copy(b, np.zeros((4, 4), dtype=np.float32)[:, ::2])
    with pytest.raises(TypeError):
        cl.enqueue_copy(np.zeros(2), np.zeros(2))


def test_a_buffer_above_the_device_limit_is_too_large():
    with pytest.raises(ValueError, match="at most") as e:
        cl.Buffer(1 << 62)
    assert isinstance(e.value, cl.TooLargeError) and e.value.kind == "TooLarge"
