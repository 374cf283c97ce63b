"""User kernels: Source/Program/Kernel launches with checked arguments, ElementwiseKernel and
ReductionKernel, against NumPy; bad arguments raise the library's typed errors."""

import numpy as np
import pytest

import clarray as cl

AXPY = """
typedef float real_t;
kernel void axpy(float a, global const float* x, global const float* y, global float* z) {
    size_t i = get_global_id(0);
    z[i] = a * x[i] + y[i];
}
kernel void scale_t(real_t a, global float* z) { z[get_global_id(0)] *= a; }
kernel void shift(int k, global int* v) { v[get_global_id(0)] += k; }
kernel void wg_sum(global const float* x, local float* tmp, global float* out) {
    size_t l = get_local_id(0), n = get_local_size(0);
    tmp[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) { float s = 0; for (size_t j = 0; j < n; j++) s += tmp[j]; out[get_group_id(0)] = s; }
}
"""


@pytest.fixture(scope="module")
def prg(ctx):
    return cl.Source(AXPY).build(ctx)


def test_kernel_launch_matches_numpy(ctx, prg):
    rng = np.random.default_rng(1)
    x, y = (rng.uniform(-4, 4, 256).astype(np.float32) for _ in range(2))
    dx, dy = cl.asarray(x), cl.asarray(y)
    z = cl.full(256, np.nan, dtype=np.float32)  # poisoned
    ev = prg.axpy(ctx, 256, None, 2.5, dx, dy, z)
    assert isinstance(ev, cl.Event)
    ev.wait()
    np.testing.assert_allclose(z.get(), np.float32(2.5) * x + y, rtol=1e-6, atol=1e-5)
    # A NumPy scalar of the parameter's dtype, a queue, an explicit local size, wait_for.
    q = cl.Queue(ctx)
    ev2 = prg.scale_t(q, (256,), (64,), np.float32(-2), z, wait_for=[ev])
    ev2.wait()
    np.testing.assert_allclose(z.get(), -2 * (np.float32(2.5) * x + y), rtol=1e-6, atol=1e-5)
    assert set(prg.kernel_names) == {"axpy", "scale_t", "shift", "wg_sum"}
    assert prg.kernel("axpy").name == "axpy"


def test_local_memory_and_buffers(ctx, prg):
    x = np.arange(128, dtype=np.float32)
    out = cl.Buffer(4 * 4)
    prg.wg_sum(ctx, 128, 32, cl.asarray(x), cl.LocalMemory(32 * 4), out).wait()
    h = np.full(4, -1, dtype=np.float32)
    cl.enqueue_copy(h, out)
    np.testing.assert_allclose(h, x.reshape(4, 32).sum(axis=1))


def test_defines_includes_and_options(ctx, tmp_path):
    (tmp_path / "k.h").write_text("#define TWICE(v) (2 * (v))\n")
    src = cl.Source(
        '#include "k.h"\nkernel void f(global long* o) { size_t i = get_global_id(0);\n'
        "#ifdef USE_OFF\n o[i] = TWICE(N) + (long)i + (long)(SCALE * 4);\n#endif\n}",
        defines={"N": 21, "SCALE": np.float32(0.5), "USE_OFF": None},
        includes=[str(tmp_path)], options="-cl-mad-enable")
    assert "-DN=21" in src.build_options and "-cl-mad-enable" in src.build_options
    o = cl.full(8, -7, dtype=np.int64)
    cl.Program(src, ctx).f(ctx, 8, None, o).wait()
    np.testing.assert_array_equal(o.get(), 42 + np.arange(8) + 2)


def test_kernel_arguments_are_checked(ctx, prg):
    z = cl.zeros(16, dtype=np.float32)
    x = cl.zeros(16, dtype=np.float32)
    with pytest.raises(cl.KernelArgsError, match="arguments were given"):
        prg.axpy(ctx, 16, None, 1.0, x, z)
    with pytest.raises(cl.KernelArgsError, match="axpy"):
        prg.axpy(ctx, 16, None, np.float64(1.0), x, x, z)  # a double for a float
    with pytest.raises(cl.KernelArgsError, match="fraction"):
        prg.shift(ctx, 16, None, 1.5, cl.zeros(16, dtype=np.int32))  # a float for an int
    with pytest.raises(cl.KernelArgsError, match="does not know"):
        prg.scale_t(ctx, 16, None, 2.0, z)  # a typedef: give a NumPy scalar
    with pytest.raises(cl.InvalidArgumentError, match="only its buffer"):
        prg.scale_t(ctx, 8, None, np.float32(2), z[::2])
    with pytest.raises(TypeError, match="asarray"):
        prg.scale_t(ctx, 16, None, np.float32(2), np.zeros(16, np.float32))
    with pytest.raises(cl.KernelArgsError, match="1 to 3"):
        prg.scale_t(ctx, (2, 2, 2, 2), None, np.float32(2), z)
    with pytest.raises(AttributeError, match="no kernel `nope`"):
        prg.nope
    with pytest.raises(cl.BuildError):
        cl.Source("kernel void broken(global int* o) { o[0] = undeclared; }").build(ctx)
    with pytest.raises(TypeError, match="define"):
        cl.Source("", defines={"X": [1]})


def test_python_int_out_of_a_parameters_range_is_overflow_error(ctx, prg):
    v = cl.asarray(np.arange(4, dtype=np.int32))
    for k in (2**40, 2**31, -(2**31) - 1):
        with pytest.raises(OverflowError) as e:
            np.int32(k)  # NumPy 2 refuses the conversion too
        with pytest.raises(OverflowError) as e:
            prg.shift(ctx, 4, None, k, v)
        assert isinstance(e.value, cl.ScalarOverflowError) and not isinstance(e.value, TypeError)
        assert (e.value.value, e.value.dtype, e.value.error_kind) == (k, "int32", "Overflow")
        for part in ("kernel `shift`", "argument 0", "`int`", str(k), "int32"):
            assert part in str(e.value), (part, str(e.value))
    with pytest.raises(cl.ScalarOverflowError) as e:
        prg.shift(ctx, 4, None, 2**200, v)  # beyond every integer type
    assert e.value.value == 2**200 and e.value.dtype is None
    np.testing.assert_array_equal(v.get(), np.arange(4))  # nothing ran
    # The bounds themselves are passed as they are.
    prg.shift(ctx, 4, None, 2**31 - 1, v).wait()
    prg.shift(ctx, 4, None, -(2**31), v).wait()
    np.testing.assert_array_equal(v.get(), np.arange(4) - 1)
    k = cl.ElementwiseKernel("unsigned char c, unsigned char *x", "x[i] += c", "add_u8")
    x = cl.zeros(4, dtype=np.uint8)
    with pytest.raises(cl.ScalarOverflowError, match="256") as e:
        k(256, x)
    assert e.value.dtype == "uint8" and "add_u8" in str(e.value)
    k(255, x)
    np.testing.assert_array_equal(x.get(), np.full(4, 255, np.uint8))


def test_shift_with_python_int(ctx, prg):
    v = cl.asarray(np.arange(10, dtype=np.int32))
    prg.shift(ctx, 10, None, -3, v).wait()
    np.testing.assert_array_equal(v.get(), np.arange(10) - 3)


def test_elementwise_kernel(ctx):
    k = cl.ElementwiseKernel("float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]", "lin")
    rng = np.random.default_rng(2)
    x, y = (rng.uniform(-4, 4, 1000).astype(np.float32) for _ in range(2))
    z = cl.full(1000, np.nan, dtype=np.float32)
    k(3, cl.asarray(x), cl.asarray(y), z)
    np.testing.assert_allclose(z.get(), np.float32(3) * x + y, rtol=1e-6, atol=1e-5)
    with pytest.raises(cl.KernelArgsError, match="elements"):
        k(1.0, cl.asarray(x), cl.asarray(y[:10]), z)
    with pytest.raises(cl.KernelArgsError, match="float64"):
        k(1.0, cl.asarray(x.astype(np.float64)), cl.asarray(y), z)
    with pytest.raises(cl.KernelArgsError, match="arguments were given"):
        k(1.0, z)
    with pytest.raises(TypeError, match="asarray"):
        k(1.0, x, cl.asarray(y), z)


def test_reduction_kernel(ctx):
    dot = cl.ReductionKernel(np.float64, 0, "a+b", "x[i]*y[i]", "double *x, double *y", name="dot")
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-1, 1, (2, 6, 7))
    r = dot(cl.asarray(x), cl.asarray(y))
    assert r.shape == () and r.dtype == np.float64
    np.testing.assert_allclose(r.item(), np.sum(x * y), rtol=1e-12)
    np.testing.assert_allclose(dot(cl.asarray(x), cl.asarray(y), axis=0).get(), np.sum(x * y, axis=0),
                               rtol=1e-12)
    mx = cl.ReductionKernel(np.int32, "-2147483647-1", "max(a,b)", "v[i] * k", "int *v, int k")
    vi = rng.integers(-50, 50, 33).astype(np.int32)
    assert mx(cl.asarray(vi), 2).item() == 2 * vi.max()
    bad = cl.ReductionKernel(np.float64, 0, "a+b", "x[i]", "double *x")
    with pytest.raises(cl.KernelArgsError, match="arguments were given"):
        bad(cl.asarray(x), cl.asarray(y))
    with pytest.raises(cl.KernelArgsError, match=r"x\[i\]"):
        cl.ReductionKernel(np.float64, 0, "a+b", "x[i+1]", "double *x")
