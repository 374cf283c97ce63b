"""Buffers and enqueue_copy: blocking and non-blocking, with offsets, and the checks."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

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


@given(size=st.integers(1, 64), offset=st.integers(0, 80), count=st.integers(0, 40),
       direction=st.sampled_from(["to_device", "to_host", "device_to_device"]),
       keyword=st.sampled_from(["device_offset", "plain"]), blocking=st.booleans())
def test_device_offset_past_the_buffer_raises_value_error_before_any_copy(
        size, offset, count, direction, keyword, blocking):
    rng = np.random.default_rng(size * 1000 + offset * 10 + count)
    ctx = cl.default_context()
    init = rng.integers(0, 256, size, dtype=np.uint8)
    buf = cl.Buffer(size)
    cl.enqueue_copy(ctx.queue, buf, init)
    host = rng.integers(0, 256, 40, dtype=np.uint8)
    host_before = host.copy()
    fits = offset + count <= size  # the reference: a range inside the buffer
    if direction == "to_device":
        name = "device_offset" if keyword == "device_offset" else "dest_offset"
        call = lambda: cl.enqueue_copy(ctx.queue, buf, host, byte_count=count, is_blocking=blocking,
                                       **{name: offset})
    elif direction == "to_host":
        name = "device_offset" if keyword == "device_offset" else "src_offset"
        call = lambda: cl.enqueue_copy(ctx.queue, host, buf, byte_count=count, is_blocking=blocking,
                                       **{name: offset})
    else:
        name = "src_offset"
        other = cl.Buffer(64)
        call = lambda: cl.enqueue_copy(ctx.queue, other, buf, byte_count=count, src_offset=offset)
    if fits:
        ev = call()
        if ev is not None:
            ev.wait()
        want = init.copy()
        if direction == "to_device":
            want[offset:offset + count] = host_before[:count]
        elif direction == "to_host":
            np.testing.assert_array_equal(host[:count], init[offset:offset + count])
            np.testing.assert_array_equal(host[count:], host_before[count:])
        else:
            got = np.zeros(count, np.uint8)
            cl.enqueue_copy(ctx.queue, got, other, byte_count=count)
            np.testing.assert_array_equal(got, init[offset:offset + count])
    else:
        with pytest.raises(ValueError) as e:
            call()
        err = e.value
        assert isinstance(err, cl.CopyRangeError) and isinstance(err, cl.OutOfBoundsError)
        assert (err.name, err.offset, err.byte_count, err.size) == (name, offset, count, size)
        for part in (f"{name} {offset}", f"byte_count {count}", f"holds {size} bytes"):
            assert part in str(err), (part, str(err))
        want = init
        np.testing.assert_array_equal(host, host_before)  # nothing was read into the host
    back = np.zeros(size, np.uint8)
    cl.enqueue_copy(ctx.queue, back, buf)
    np.testing.assert_array_equal(back, want)  # nothing was written past the check


def test_destination_offset_past_the_buffer_names_it():
    a, b = cl.Buffer(32), cl.Buffer(16)
    with pytest.raises(cl.CopyRangeError, match=r"dst_offset 12 with byte_count 8 reaches byte 20.*16 bytes") as e:
        cl.enqueue_copy(b, a, dst_offset=12, byte_count=8)
    assert (e.value.name, e.value.offset, e.value.byte_count, e.value.size) == ("dst_offset", 12, 8, 16)
    # Without byte_count a buffer-to-buffer copy takes what fits in both (as PyOpenCL).
    with pytest.raises(cl.CopyRangeError, match="dest_offset 20 with byte_count 0|dest_offset 20"):
        cl.enqueue_copy(b, a, dest_offset=20)
