"""Third round of review fixes: a NumPy array another clarray call holds is an ordinary
exception (it was a PanicException), a non-blocking read honours a writeable flag cleared
before it lands and raises its error at every wait, run_kernel and byte-swapped arrays, bool
arrays holding bytes other than 0 and 1, Kernel wait_for on copy events, and np.matrix
destinations with byte_count."""

import gc
import sys

import numpy as np
import pytest

import clarray as cl

SRC = """
__kernel void inc(__global float *x) { int i = get_global_id(0); x[i] += 1.0f; }
__kernel void dbl(__global const float *x, __global float *y) {
    int i = get_global_id(0); y[i] = 2.0f * x[i]; }
__kernel void rd(__global const float *x) { }
__kernel void add(__global float *x, __global const float *y) {
    int i = get_global_id(0); x[i] += y[i]; }
"""


# 1 and 5. A NumPy array run_kernel holds (read-write, GIL released) met by another clarray
# call: an ordinary RuntimeError saying so, not pyo3's PanicException (a BaseException that
# `except Exception` misses), and from run_kernel not "shares memory with an earlier argument".

def test_array_held_by_run_kernel_is_an_ordinary_exception_naming_the_cause():
    x = np.zeros(4, np.float32)
    caught = {}

    class Probe(np.ndarray):
        # Python code run while run_kernel holds `x` (argument 0): the same state another
        # thread meets while a run_kernel is running (run_kernel reads argument 1's dtype).
        @property
        def dtype(self):
            if not caught:
                for name, call in [
                    ("asarray", lambda: cl.asarray(x)),
                    ("Array", lambda: cl.Array(x)),
                    ("operand", lambda: cl.zeros(4, np.float32) + x),
                    ("enqueue_copy", lambda: cl.enqueue_copy(cl.Buffer(16), x)),
                    ("run_kernel", lambda: cl.run_kernel(SRC, "inc", 4, x)),
                    ("run_kernel const", lambda: cl.run_kernel(SRC, "rd", 4, x)),
                ]:
                    try:
                        call()
                        caught[name] = None
                    except Exception as e:  # a PanicException is no Exception: it escapes
                        caught[name] = e
            return super().dtype

    y = np.ones(4, np.float32).view(Probe)
    cl.run_kernel(SRC, "add", 4, x, y)
    np.testing.assert_array_equal(x, np.ones(4, np.float32))
    assert set(caught) == {"asarray", "Array", "operand", "enqueue_copy", "run_kernel", "run_kernel const"}
    for name, e in caught.items():
        assert isinstance(e, RuntimeError), (name, e)
        assert "in use by another clarray call" in str(e), (name, e)
        assert "shares memory" not in str(e), (name, e)
    assert "argument 0" in str(caught["run_kernel"])
    # The array is free again once run_kernel has returned.
    np.testing.assert_array_equal(cl.asarray(x).get(), x)
    cl.run_kernel(SRC, "inc", 4, x)
    np.testing.assert_array_equal(x, np.full(4, 2, np.float32))


def test_one_array_for_two_parameters_still_names_the_earlier_argument():
    h = np.arange(8, dtype=np.float32)
    with pytest.raises(ValueError, match=r"argument 1 .*shares memory with an earlier argument \(0\)"):
        cl.run_kernel(SRC, "dbl", 8, h, h)


# 2 and 6b. A non-blocking read into an array made read-only after the enqueue: not written;
# the event raises ValueError at every wait (the error was taken by the first), and a dropped
# event whose error was raised reports nothing more.

def _read_event(n=4):
    buf = cl.Buffer(4 * n)
    cl.enqueue_copy(buf, np.arange(n, dtype=np.float32))
    a = np.zeros(n, np.float32)
    return a, cl.enqueue_copy(a, buf, is_blocking=False)


def test_nonblocking_read_into_an_array_made_read_only_is_not_written():
    a, ev = _read_event()
    a.flags.writeable = False
    for _ in range(2):
        with pytest.raises(ValueError, match="made read-only .* nothing was written"):
            ev.wait()
    np.testing.assert_array_equal(a, np.zeros(4, np.float32))
    reported = []
    old, sys.unraisablehook = sys.unraisablehook, reported.append
    try:
        del ev
        gc.collect()
        # An error never raised to anyone is still reported when its event is dropped.
        b, ev2 = _read_event()
        b.flags.writeable = False
        cl.default_context().finish()
        del ev2
        gc.collect()
    finally:
        sys.unraisablehook = old
    assert len(reported) == 1 and isinstance(reported[0].exc_value, ValueError), reported


def test_nonblocking_read_into_a_writable_array_still_lands():
    a, ev = _read_event()
    ev.wait()
    ev.wait()
    np.testing.assert_array_equal(a, np.arange(4, dtype=np.float32))


# 3. run_kernel and byte-swapped NumPy arrays: one the kernel may write is refused (its bytes
# would go to the device, and come back, in the wrong order); a const input is converted.

def test_run_kernel_refuses_a_written_byte_swapped_array():
    x = np.arange(4, dtype=">f4")
    with pytest.raises(ValueError, match=r"argument 0 .*non-native byte order.*newbyteorder\('='\)"):
        cl.run_kernel(SRC, "inc", 4, x)
    np.testing.assert_array_equal(x, np.arange(4))
    b = x.astype(x.dtype.newbyteorder("="))
    cl.run_kernel(SRC, "inc", 4, b)
    np.testing.assert_array_equal(b, np.arange(1, 5))


def test_run_kernel_converts_a_const_byte_swapped_input():
    y = np.zeros(4, np.float32)
    cl.run_kernel(SRC, "dbl", 4, np.arange(4, dtype=">f4"), y)
    np.testing.assert_array_equal(y, [0, 2, 4, 6])
    # Strided and byte-swapped at once.
    y[:] = 0
    cl.run_kernel(SRC, "dbl", 4, np.arange(8, dtype=">f4")[::-2], y)
    np.testing.assert_array_equal(y, [14, 10, 6, 2])


# 4. NumPy bool memory holding bytes other than 0 and 1 (a uint8 array viewed as bool): read
# as bytes (a Rust bool holding 2 is undefined behaviour) and stored canonically, nonzero as 1.

@pytest.mark.parametrize("shape", [(4,), (2, 2)])
def test_bool_array_with_noncanonical_bytes_is_stored_canonically(shape):
    raw = np.array([2, 0, 1, 255], np.uint8).reshape(shape).view(np.bool_)
    a = cl.asarray(raw)
    device = np.zeros(4, np.uint8)
    cl.enqueue_copy(device, a.data)
    np.testing.assert_array_equal(device, [1, 0, 1, 1])
    np.testing.assert_array_equal(a.get(), raw)
    np.testing.assert_array_equal((a == cl.asarray(np.ones(shape, bool))).get(), raw)
    # As an operand of arithmetic (uploaded the same way).
    np.testing.assert_array_equal((cl.zeros(shape, np.uint8) + raw).get(), raw.astype(np.uint8))


def test_zero_dim_bool_with_a_noncanonical_byte():
    raw = np.array(2, np.uint8).view(np.bool_)
    a = cl.asarray(raw)
    assert a.shape == () and a.get() == np.True_
    device = np.zeros(1, np.uint8)
    cl.enqueue_copy(device, a.data)
    assert device[0] == 1


# 6a. Kernel.__call__ waits for non-blocking copy events in wait_for, as enqueue_copy does
# (they were dropped: only kernel events were passed on).

def test_kernel_wait_for_a_nonblocking_read_lands_it_first(ctx):
    prg = cl.Program(SRC, ctx)
    buf = cl.Buffer(16)
    cl.enqueue_copy(buf, np.arange(4, dtype=np.float32))
    x = cl.zeros(4, np.float32)
    h = np.zeros(4, np.float32)
    rev = cl.enqueue_copy(h, buf, is_blocking=False)
    kev = prg.inc(ctx, 4, None, x, wait_for=[rev])
    # Landed by the launch itself (before the fix the launch ignored the read: only a wait,
    # a finish() or a later host copy landed it).
    np.testing.assert_array_equal(h, np.arange(4, dtype=np.float32))
    kev.wait()
    rev.wait()


# 6c. A np.matrix destination with byte_count: the byte view is a flat ndarray (a matrix's
# reshape(-1) stays 2-d, so the first byte_count bytes were taken as rows).

@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_matrix_destination_with_byte_count():
    buf = cl.Buffer(32)
    cl.enqueue_copy(buf, np.arange(8, dtype=np.float32))
    m = np.matrix(np.zeros((2, 4), np.float32))
    cl.enqueue_copy(m, buf, byte_count=16)
    np.testing.assert_array_equal(m, [[0, 1, 2, 3], [0, 0, 0, 0]])
    m = np.matrix(np.zeros((1, 8), np.float32))
    ev = cl.enqueue_copy(m, buf, byte_count=8, is_blocking=False)
    ev.wait()
    np.testing.assert_array_equal(m, [[0, 1, 0, 0, 0, 0, 0, 0]])
