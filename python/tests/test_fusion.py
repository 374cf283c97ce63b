"""Fusion: clarray.fuse and lazy Expr chains run as one kernel (counted by the library's
profiler), with NumPy's results and promotion; eager operators stay one kernel each."""

import numpy as np
import pytest

import clarray as cl


@pytest.fixture(scope="module")
def pctx(ctx):
    return ctx.profiled()


def data(pctx, seed=7, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x, y = (rng.uniform(-4, 4, (6, 33)).astype(dtype) for _ in range(2))
    return x, y, cl.asarray(x, ctx=pctx), cl.asarray(y, ctx=pctx)


def test_eager_chain_is_one_kernel_per_operator(pctx):
    x, y, dx, dy = data(pctx)
    p = cl.Profiler(pctx)
    r = dx * 2 + dy
    assert p.kernel_launches == 2  # the counter sees every launch
    np.testing.assert_allclose(r.get(), x * 2 + y, rtol=1e-6)


def test_fuse_makes_a_chain_one_kernel(pctx):
    x, y, dx, dy = data(pctx)

    @cl.fuse
    def f(a, b):
        return cl.sqrt(cl.abs(a)) * b - 3 + cl.where(a > 0, a, b) / 2

    p = cl.Profiler(pctx)
    r = f(dx, dy)
    assert isinstance(r, cl.Array)
    assert p.kernel_launches == 1
    want = np.sqrt(np.abs(x)) * y - 3 + np.where(x > 0, x, y) / 2
    assert r.dtype == want.dtype
    np.testing.assert_allclose(r.get(), want, rtol=1e-5, atol=1e-5)
    p.reset()
    two = cl.fuse()(lambda a, b: (a * 2 + b, a - b))(dx, dy)  # both results from one kernel
    assert p.kernel_launches == 1
    assert isinstance(two, tuple) and len(two) == 2
    np.testing.assert_allclose(two[0].get(), x * 2 + y, rtol=1e-6)
    np.testing.assert_allclose(two[1].get(), x - y, rtol=1e-6)


def test_fuse_results_of_several_shapes_and_dtypes(pctx):
    """A fused function's results: one kernel per distinct shape, each with NumPy's dtype and
    values, nested containers and non-Expr values kept where they were; a shared
    subexpression is computed once."""
    x, y, dx, dy = data(pctx, seed=9)
    xi = np.arange(33, dtype=np.int32)
    dxi = cl.asarray(xi, ctx=pctx)

    @cl.fuse
    def f(a, b, i):
        s = a + b
        return [s * a, (s > 0, i * 3 + 1)], "tag", s - i

    p = cl.Profiler(pctx)
    (prod, (pos, lin)), tag, diff = f(dx, dy, dxi)
    assert p.kernel_launches == 2  # the (6, 33) results together, the (33,) one alone
    assert tag == "tag"
    s = x + y
    for got, want in [(prod, s * x), (pos, s > 0), (lin, xi * 3 + 1), (diff, s - xi)]:
        assert isinstance(got, cl.Array)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.get(), want, rtol=1e-6)


def test_lazy_expressions(pctx):
    x, y, dx, dy = data(pctx, seed=8)
    p = cl.Profiler(pctx)
    e = cl.lazy(dx) * 2 + dy
    assert isinstance(e, cl.Expr)
    assert e.shape == x.shape and e.dtype == np.float32 and e.ndim == 2 and e.size == x.size
    assert p.kernel_launches == 0  # nothing has run yet
    np.testing.assert_allclose(e.get(), x * 2 + y, rtol=1e-6)
    assert p.kernel_launches == 1
    np.testing.assert_allclose(np.asarray(e[1:3, ::2]), (x * 2 + y)[1:3, ::2], rtol=1e-6)
    np.testing.assert_allclose(e.sum(axis=0).get(), (x * 2 + y).sum(axis=0), rtol=1e-4, atol=1e-4)
    p.reset()
    dz = dy.copy()
    dz += cl.lazy(dx) * dx - 1  # the whole right side is one kernel into dz
    assert p.kernel_launches == 1
    np.testing.assert_allclose(dz.get(), y + x * x - 1, rtol=1e-5, atol=1e-5)
    # Each evaluation reads the operands' values at that time.
    dx += 1
    np.testing.assert_allclose(e.eval().get(), (x + 1) * 2 + y, rtol=1e-6)


def test_reductions_of_expressions_are_fused(pctx):
    x, y, dx, dy = data(pctx, seed=9)
    prod = cl.asarray(x * y, ctx=pctx)
    p = cl.Profiler(pctx)
    plain = prod.sum(axis=1)
    alone = p.kernel_launches  # what the reduction of a stored array takes
    p.reset()
    fused = (cl.lazy(dx) * dy).sum(axis=1)
    assert p.kernel_launches == alone  # the map adds no kernel
    np.testing.assert_allclose(fused.get(), plain.get(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused.get(), (x * y).sum(axis=1), rtol=1e-4, atol=1e-4)
    e = cl.lazy(dx) - dy
    for name in ("sum", "prod", "min", "max", "mean", "any", "all"):
        got, want = getattr(e, name)(axis=0, keepdims=True), getattr(x - y, name)(axis=0, keepdims=True)
        assert got.dtype == want.dtype, name
        np.testing.assert_allclose(got.get(), want, rtol=1e-4, atol=1e-4, err_msg=name)
    i8 = cl.lazy(cl.asarray(np.arange(10, dtype=np.int8), ctx=pctx)) * 20
    assert i8.sum().dtype == np.int64 and i8.sum().item() == (np.arange(10, dtype=np.int8) * np.int8(20)).sum()
    assert i8.mean().dtype == np.float64


def test_lazy_promotion_matches_numpy(pctx):
    h = np.arange(5, dtype=np.int8)
    d = cl.asarray(h, ctx=pctx)
    for e, want in [(cl.lazy(d) + 1.5, h + 1.5), (cl.lazy(d) * np.float32(2), h * np.float32(2)),
                    (2 ** cl.lazy(d), 2 ** h), (cl.lazy(d).astype(np.uint16) - 1, h.astype(np.uint16) - 1)]:
        assert e.dtype == want.dtype, (e.dtype, want.dtype)
        np.testing.assert_array_equal(e.get(), want)


def test_lazy_refusals(pctx):
    with pytest.raises(TypeError, match="lazy"):
        cl.lazy(np.zeros(3))
    f = cl.lazy(cl.zeros(3, dtype=np.float32, ctx=pctx))
    with pytest.raises(cl.DTypeError):
        f & 1  # no bitwise and of floats, refused when built
    with pytest.raises(cl.ShapeError):
        f + cl.zeros(4, ctx=pctx)
