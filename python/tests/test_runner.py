"""run_kernel: NumPy arguments copied in and (when written) back, device arrays resident,
kernel and copy times apart."""

import numpy as np
import pytest

import clarray as cl

SRC = """
kernel void add(global const float* a, global float* b) { size_t i = get_global_id(0); b[i] += a[i]; }
kernel void twice(global const float* a, global float* b) { b[get_global_id(0)] *= 2; }
kernel void scale(global float* x, float s) { x[get_global_id(0)] *= s; }
"""


def test_numpy_arguments_copied_in_and_out(ctx):
    rng = np.random.default_rng(4)
    a = rng.uniform(-4, 4, 512).astype(np.float32)
    b = rng.uniform(-4, 4, 512).astype(np.float32)
    a0, b0 = a.copy(), b.copy()
    a.setflags(write=False)  # const in every kernel: read only, never copied back
    r = cl.run_kernel(SRC, ["add", "twice"], 512, a, b)
    np.testing.assert_allclose(b, 2 * (a0 + b0), rtol=1e-6)
    np.testing.assert_array_equal(a, a0)
    assert isinstance(r, cl.RunReport)
    assert r.bytes_in == a.nbytes + b.nbytes and r.bytes_out == b.nbytes
    assert [k for k, _ in r.kernels] == ["add", "twice"]
    assert r.kernel_seconds > 0 and r.copy_seconds == pytest.approx(r.copy_in_seconds + r.copy_out_seconds)
    assert r.wall_seconds >= r.kernel_seconds


def test_device_arrays_stay_resident(ctx):
    prg = cl.Program(SRC, ctx)
    x = np.arange(64, dtype=np.float32)
    d = cl.asarray(x)
    r = cl.run_kernel(prg, "scale", 64, d, 3)
    assert r.bytes_in == 0 and r.bytes_out == 0
    np.testing.assert_array_equal(d.get(), 3 * x)
    h = x.copy()
    r = cl.run_kernel(prg, "scale", (64,), h, np.float32(0.5), local_size=16)
    np.testing.assert_array_equal(h, 0.5 * x)
    assert r.bytes_in == r.bytes_out == h.nbytes


def test_run_kernel_refuses_bad_arguments(ctx):
    ro = np.zeros(8, np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        cl.run_kernel(SRC, "scale", 8, ro, 1.0)
    with pytest.raises(ValueError, match="C-contiguous"):
        cl.run_kernel(SRC, "scale", 8, np.zeros(16, np.float32)[::2], 1.0)
    with pytest.raises(cl.KernelArgsError, match="fraction|arguments were given"):
        cl.run_kernel(SRC, "scale", 8, np.zeros(8, np.float32))
    with pytest.raises(cl.KernelArgsError, match="float64|double|8 bytes"):
        cl.run_kernel(SRC, "scale", 8, np.zeros(8, np.float32), np.float64(2))
    # Arrays of another element type than the kernel's pointer (host or device), before
    # anything runs: f64 data for float* ran on garbage.
    wide = np.full(8, 5.0)
    with pytest.raises(cl.KernelArgsError, match="an array of f64"):
        cl.run_kernel(SRC, "scale", 8, wide, 1.0)
    np.testing.assert_array_equal(wide, 5.0)
    with pytest.raises(cl.KernelArgsError, match="an array of f64"):
        cl.run_kernel(SRC, "scale", 8, cl.asarray(wide), 1.0)
    with pytest.raises(cl.KernelArgsError, match="an array of i32"):
        cl.Program(SRC, ctx).scale(ctx, 8, None, cl.zeros(8, np.int32), np.float32(1))
    with pytest.raises(cl.InvalidArgumentError, match="no kernel `missing`"):
        cl.run_kernel(SRC, "missing", 8, np.zeros(8, np.float32), 1.0)
    with pytest.raises(TypeError, match="name"):
        cl.run_kernel(SRC, 3, 8)
