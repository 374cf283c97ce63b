"""Second round of review fixes: Ctrl-C during get(), Profiler lifetime, enqueue_copy's
keywords and return value, ReductionKernel's numeric neutral, argument messages, and the
NumPy-ordered random generator."""

import gc
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import clarray as cl


# 1. NumPy's C-API capsule is loaded when the module is, not lazily at the first get().

def test_numpy_capsule_is_loaded_at_import():
    # A fresh interpreter whose first device read runs with a KeyboardInterrupt pending:
    # before the fix rust-numpy loaded its capsule then and panicked (PanicException).
    script = textwrap.dedent("""
        import os, signal, threading, time
        import numpy as np, clarray as cl
        src = '''__kernel void spin(__global float *x, long n) {
            float a = x[get_global_id(0)];
            for (long i = 0; i < n; i++) a = a*1.0000001f + 1e-7f;
            x[get_global_id(0)] = a; }'''
        prg = cl.Program(src)
        x = cl.ones(4, np.float32)
        ctx = cl.default_context()
        # Calibrate: about 1.5 s of kernel, the signal after 0.3 s.
        t = time.time(); prg.spin(ctx, 4, None, x, np.int64(1 << 20)).wait(); dt = time.time() - t
        n = int(min(1.5 / max(dt, 1e-4), 4096) * (1 << 20))
        prg.spin(ctx, 4, None, x, np.int64(n))
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            x.get()
            time.sleep(2)  # the interrupt arrives here if get() finished first
            print("NO-INTERRUPT")
        except KeyboardInterrupt:
            print("INTERRUPTED")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "PanicException" not in r.stderr, r.stderr
    assert "INTERRUPTED" in r.stdout, (r.stdout, r.stderr)


# 2. Profiler: stop(), context manager, Drop, one per queue.


def test_profiler_stop_is_idempotent_and_keeps_the_final_report():
    ctx = cl.Context().profiled()
    a = cl.ones(16, np.float32, ctx=ctx)
    p = cl.Profiler(ctx)
    assert p.active
    a += 1
    r1 = p.stop()
    assert not p.active and p.kernel_launches >= 1
    a += 1  # not recorded any more
    assert p.stop() == r1 and p.report() == r1
    p.reset()  # nothing to do once stopped


def test_profiler_as_context_manager_stops_and_frees_the_queue():
    ctx = cl.Context().profiled()
    a = cl.ones(16, np.float32, ctx=ctx)
    with cl.Profiler(ctx) as p:
        a += 1
        assert p.active
    assert not p.active and p.kernel_launches >= 1
    with cl.Profiler(ctx) as q:  # the queue is free again
        a *= 2
    assert q.kernel_launches >= 1
    np.testing.assert_array_equal(a.get(), np.full(16, 4, np.float32))


def test_profilers_of_one_queue_each_see_every_command_from_their_start():
    # (A second profiler was refused while the library's profilers took each other's records.)
    ctx = cl.Context().profiled()
    a = cl.ones(16, np.float32, ctx=ctx)
    p = cl.Profiler(ctx)
    a += 1
    q = cl.Profiler(ctx)
    a += 1
    assert q.stop()["kernels"][0]["count"] == 1
    a += 1
    assert p.stop()["kernels"][0]["count"] == 3


def test_dropped_profiler_stops_recording():
    ctx = cl.Context().profiled()
    p = cl.Profiler(ctx)
    del p
    gc.collect()
    # The queue is free (the dropped profiler stopped) and no longer records: a new profiler
    # sees only its own commands.
    a = cl.ones(8, np.float32, ctx=ctx)
    for _ in range(3):
        a += 1
    with cl.Profiler(ctx) as p2:
        a += 1
    assert p2.kernel_launches == 1


# 3. enqueue_copy.

@pytest.mark.parametrize("kw", [{"device_offset": 4}])
def test_b2b_refuses_device_offset(kw):
    a, b = cl.Buffer(32), cl.Buffer(32)
    with pytest.raises(TypeError, match="device_offset= does not apply to a buffer-to-buffer copy"):
        cl.enqueue_copy(b, a, **kw)


def test_read_refuses_dest_offset():
    b = cl.Buffer(32)
    h = np.zeros(8, np.float32)
    for kw in ("dest_offset", "dst_offset"):
        with pytest.raises(TypeError, match=f"{kw}= does not apply to a copy from a buffer into a NumPy array"):
            cl.enqueue_copy(h, b, **{kw: 4})


def test_write_refuses_src_offset_and_two_names_for_one_offset():
    b = cl.Buffer(32)
    h = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="src_offset= does not apply to a copy from a NumPy array into a buffer"):
        cl.enqueue_copy(b, h, src_offset=4)
    with pytest.raises(TypeError, match="dest_offset= and dst_offset="):
        cl.enqueue_copy(b, h, dest_offset=0, dst_offset=0)
    with pytest.raises(TypeError, match="dst_offset= and device_offset="):
        cl.enqueue_copy(b, h[:4], dst_offset=0, device_offset=0)


def test_read_with_device_offset_and_write_with_dst_offset():
    b = cl.Buffer(32)
    cl.enqueue_copy(b, np.arange(4, dtype=np.float32), dst_offset=16)
    out = np.zeros(4, np.float32)
    cl.enqueue_copy(out, b, device_offset=16)
    np.testing.assert_array_equal(out, np.arange(4, dtype=np.float32))


def test_b2b_default_byte_count_is_what_fits_in_both():
    big, small = cl.Buffer(32), cl.Buffer(16)
    h = np.arange(8, dtype=np.int32)
    cl.enqueue_copy(big, h)
    cl.enqueue_copy(small, big)  # 16 bytes (PyOpenCL: min of both), not 32
    out = np.zeros(4, np.int32)
    cl.enqueue_copy(out, small)
    np.testing.assert_array_equal(out, h[:4])
    cl.enqueue_copy(small, big, src_offset=24)  # 8 bytes left in the source
    cl.enqueue_copy(out, small)
    np.testing.assert_array_equal(out, [6, 7, 2, 3])
    cl.enqueue_copy(big, small, dest_offset=8)  # 16 bytes: all of small
    out8 = np.zeros(8, np.int32)
    cl.enqueue_copy(out8, big)
    np.testing.assert_array_equal(out8, [0, 1, 6, 7, 2, 3, 6, 7])


@pytest.mark.parametrize("blocking", [True, False])
def test_every_copy_returns_an_event(blocking):
    b, c = cl.Buffer(16), cl.Buffer(16)
    h = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    evs = [cl.enqueue_copy(b, h, is_blocking=blocking),
           cl.enqueue_copy(c, b, is_blocking=blocking)]
    evs[-1].wait()
    evs.append(cl.enqueue_copy(out, c, is_blocking=blocking))
    for e in evs:
        assert isinstance(e, cl.Event)
        e.wait()
        assert e.is_complete
    np.testing.assert_array_equal(out, h)


def test_elementwise_kernel_returns_an_event():
    x = cl.asarray(np.arange(8, dtype=np.float32))
    y = cl.zeros(8, np.float32)
    ek = cl.ElementwiseKernel("float s, float *x, float *y", "y[i] = s*x[i]", "scale2")
    ev = ek(2.0, x, y)
    assert isinstance(ev, cl.Event)
    ev.wait()
    assert ev.is_complete
    np.testing.assert_array_equal(y.get(), 2 * np.arange(8, dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_zero_d_numpy_arrays_copy(dtype):
    h = np.array(7, dtype=dtype)
    b = cl.Buffer(h.nbytes)
    cl.enqueue_copy(b, h)
    out = np.zeros((), dtype=dtype)
    cl.enqueue_copy(out, b)
    assert out.shape == () and out == h


def test_non_numpy_host_side_is_a_type_error():
    b = cl.Buffer(16)
    a = cl.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"not Array.*a\.data"):
        cl.enqueue_copy(np.zeros(4, np.float32), a)
    with pytest.raises(TypeError, match=r"destination must be a clarray.Buffer or a NumPy array, not Array"):
        cl.enqueue_copy(a, np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="not list.*numpy.asarray"):
        cl.enqueue_copy(b, [1.0, 2.0, 3.0, 4.0])
    # a.data works.
    cl.enqueue_copy(a.data, np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(a.get(), np.arange(4, dtype=np.float32))


# 4. ReductionKernel's numeric neutral.

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduction_neutral_infinity_and_floats(dtype):
    if dtype == np.float64 and not cl.default_context().fp64:
        pytest.skip("no fp64")
    h = np.array([3.5, -2.25, 7.0, 1e-3], dtype=dtype)
    x = cl.asarray(h)
    rmin = cl.ReductionKernel(dtype, float("inf"), "fmin(a, b)", "x[i]", f"{np.dtype(dtype).name.replace('float32', 'float').replace('float64', 'double')} *x")
    assert rmin(x).get() == h.min()
    rmax = cl.ReductionKernel(dtype, -math.inf, "fmax(a, b)", "x[i]", f"{np.dtype(dtype).name.replace('float32', 'float').replace('float64', 'double')} *x")
    assert rmax(x).get() == h.max()
    # A non-integral float neutral with all its digits.
    rsum = cl.ReductionKernel(dtype, 0.1, "a+b", "x[i]", f"{np.dtype(dtype).name.replace('float32', 'float').replace('float64', 'double')} *x")
    np.testing.assert_allclose(rsum(x).get(), dtype(0.1) + h.sum(dtype=dtype), rtol=1e-6)
    # Empty input gives the neutral itself.
    e = cl.asarray(np.zeros(0, dtype=dtype))
    assert rmin(e).get() == np.inf and rmax(e).get() == -np.inf


def test_reduction_neutral_bool_and_int():
    h = np.array([1, 0, 1], dtype=np.int32)
    x = cl.asarray(h)
    r_all = cl.ReductionKernel(np.int32, True, "a && b", "x[i] != 0", "int *x")
    assert r_all(x).get() == 0
    assert r_all(cl.asarray(np.ones(3, np.int32))).get() == 1
    r_any = cl.ReductionKernel(np.int32, False, "a || b", "x[i] != 0", "int *x")
    assert r_any(x).get() == 1
    r = cl.ReductionKernel(np.int64, np.int64(5), "a+b", "x[i]", "int *x")
    assert r(x).get() == 7
    rn = cl.ReductionKernel(np.float32, float("nan"), "a+b", "x[i]", "int *x")
    assert np.isnan(rn(x).get())


# 5. Messages.

SRC = """
__kernel void k(__global float *x, float a) { x[get_global_id(0)] += a; }
__kernel void two(__global float *x, __global float *y) { y[get_global_id(0)] = x[get_global_id(0)]; }
"""


def test_extra_python_number_argument_is_a_count_error(ctx):
    prg = cl.Program(SRC, ctx)
    x = cl.zeros(8, np.float32)
    with pytest.raises(cl.KernelArgsError, match="3 arguments were given, but it takes 2"):
        prg.k(ctx, 8, None, x, 1.5, 5)
    with pytest.raises(cl.KernelArgsError, match="3 arguments were given, but it takes 2"):
        cl.run_kernel(SRC, "k", 8, np.zeros(8, np.float32), 1.5, 5)


def test_context_for_a_missing_device_names_the_request():
    with pytest.raises(cl.NoDeviceError) as e:
        cl.Context("nonexistent-device-xyz")
    assert "Context('nonexistent-device-xyz')" in str(e.value)
    assert "CLARRAY_DEVICE" not in str(e.value)


def test_bad_global_sizes(ctx):
    with pytest.raises(ValueError, match="global_size must not be negative: got -1"):
        cl.run_kernel(SRC, "k", -1, np.zeros(8, np.float32), 1.0)
    with pytest.raises(TypeError, match="global_size .*not the string '8'"):
        cl.run_kernel(SRC, "k", "8", np.zeros(8, np.float32), 1.0)
    prg = cl.Program(SRC, ctx)
    with pytest.raises(ValueError, match=r"global_size must not be negative: got \(8, -2\)"):
        prg.k(ctx, (8, -2), None, cl.zeros(16, np.float32), 1.0)


def test_one_numpy_array_for_two_parameters_is_a_clear_error():
    h = np.arange(8, dtype=np.float32)
    with pytest.raises(ValueError, match="shares memory with an earlier argument"):
        cl.run_kernel(SRC, "two", 8, h, h)


def test_out_of_range_int_for_a_float_parameter_names_kernel_and_argument(ctx):
    prg = cl.Program(SRC, ctx)
    with pytest.raises(OverflowError, match="kernel `k` argument 1: the Python integer"):
        prg.k(ctx, 8, None, cl.zeros(8, np.float32), 2**200)
    ek = cl.ElementwiseKernel("float m, float *y", "y[i] = m", "fill_m")
    with pytest.raises(OverflowError, match="kernel `fill_m` argument 0: the Python integer"):
        ek(2**200, cl.zeros(4, np.float32))


def test_induction_option_errors_use_python_keywords():
    with pytest.raises(cl.InvalidArgumentError) as e:
        cl.induction.run(dissipation_form="xx")
    assert "dissipation_form" in str(e.value) and "--" not in str(e.value)


# 6. random: NumPy's argument order.

def test_random_methods_take_numpy_argument_order():
    g = cl.random.default_rng(5)
    n = g.normal(5.0, 2.0, 20000).get()
    assert n.shape == (20000,) and abs(n.mean() - 5.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    u = g.uniform(-3.0, -1.0, (100, 10), dtype=np.float32).get()
    assert u.dtype == np.float32 and u.shape == (100, 10) and u.min() >= -3 and u.max() < -1
    u2 = g.uniform(size=7).get()
    assert u2.shape == (7,) and ((0 <= u2) & (u2 < 1)).all()
    # size=None: one value (a 0-d array; NumPy gives a float).
    s = g.normal(0, 1)
    assert s.shape == () and np.isfinite(float(s.get()))
    assert g.uniform().shape == () and g.integers(0, 10).shape == ()
    assert np.ndim(np.random.default_rng(0).normal(0, 1)) == s.ndim


def test_default_rng_none_gives_fresh_seeds():
    a = cl.random.default_rng().uniform(size=16).get()
    b = cl.random.default_rng(None).uniform(size=16).get()
    assert not np.array_equal(a, b)
    c = cl.random.default_rng(3).uniform(size=16).get()
    d = cl.random.Generator(3).uniform(size=16).get()
    np.testing.assert_array_equal(c, d)
