"""Fixes from a review of the Python bindings, each checked against NumPy 2 (or PyOpenCL's
semantics for non-blocking copies): read-only copy targets, non-blocking reads that land in
the host array whatever the order of calls, ``in`` and iteration of lazy expressions,
comparison with None and strings, ``integers`` over the whole uint64 range, copy and pickle,
and the scalar conversions of NumPy 2.4."""

import copy
import gc
import pickle
import threading
import time

import numpy as np
import pytest

import clarray as cl

N = 16


def outcome(f):
    """The value of ``f()``, or the type of exception it raised."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return type(e)


def same(got, want):
    """``got`` (an exception type, a clarray or NumPy array, or a scalar) is NumPy's ``want``."""
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want), (got, want)
        return
    got = got.get() if isinstance(got, (cl.Array, cl.Expr)) else got
    np.testing.assert_array_equal(got, want, strict=True)


@pytest.fixture()
def src_buf(ctx):
    """A buffer holding 0, 1, ..., N-1 as float32."""
    buf = cl.Buffer(N * 4)
    cl.enqueue_copy(buf, np.arange(N, dtype=np.float32))
    return buf


EXPECTED = np.arange(N, dtype=np.float32)


# 1. A read-only destination is a ValueError before anything is enqueued.

@pytest.mark.parametrize("blocking", [True, False])
def test_read_into_readonly_array_is_value_error(ctx, src_buf, blocking):
    h = np.zeros(N, np.float32)
    h.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cl.enqueue_copy(h, src_buf, is_blocking=blocking)
    with pytest.raises(ValueError, match="read-only"):
        cl.enqueue_copy(ctx.queue, h, src_buf, is_blocking=blocking)
    assert not h.any()
    # Nothing was left in flight: later copies and finish() work as before.
    ctx.finish()
    w = np.zeros(N, np.float32)
    cl.enqueue_copy(w, src_buf)
    np.testing.assert_array_equal(w, EXPECTED)


# 2. A non-blocking read lands in the host array in every order of calls.

def _read(ctx, buf):
    h = np.zeros(N, np.float32)
    ev = cl.enqueue_copy(ctx.queue, h, buf, is_blocking=False)
    assert isinstance(ev, cl.Event)
    return h, ev


def test_nonblocking_read_then_context_finish(ctx, src_buf):
    h, ev = _read(ctx, src_buf)
    ctx.finish()
    np.testing.assert_array_equal(h, EXPECTED)
    assert ev.is_complete
    ev.wait()
    np.testing.assert_array_equal(h, EXPECTED)


def test_nonblocking_read_then_queue_finish(ctx, src_buf):
    h, ev = _read(ctx, src_buf)
    ctx.queue.finish()
    np.testing.assert_array_equal(h, EXPECTED)
    del ev


def test_nonblocking_read_is_complete_then_read(ctx, src_buf):
    h, ev = _read(ctx, src_buf)
    while not ev.is_complete:
        pass
    np.testing.assert_array_equal(h, EXPECTED)


def test_nonblocking_read_drop_event_then_finish(ctx, src_buf):
    h, ev = _read(ctx, src_buf)
    del ev
    gc.collect()
    ctx.finish()
    np.testing.assert_array_equal(h, EXPECTED)


def test_nonblocking_read_drop_event_alone(ctx, src_buf):
    h, ev = _read(ctx, src_buf)
    del ev
    np.testing.assert_array_equal(h, EXPECTED)


def test_nonblocking_read_wait_twice(ctx, src_buf):
    h, ev = _read(ctx, src_buf)
    ev.wait()
    np.testing.assert_array_equal(h, EXPECTED)
    ev.wait()
    assert ev.is_complete
    np.testing.assert_array_equal(h, EXPECTED)


def test_nonblocking_read_host_array_kept_alive(ctx, src_buf):
    h, ev = _read(ctx, src_buf)
    view = h[:4]
    del h
    gc.collect()
    ev.wait()
    np.testing.assert_array_equal(view, EXPECTED[:4])


def test_nonblocking_read_on_another_queue(ctx, src_buf):
    q = cl.Queue(ctx)
    h = np.zeros(N, np.float32)
    ev = cl.enqueue_copy(q, h, src_buf, is_blocking=False)
    q.finish()
    np.testing.assert_array_equal(h, EXPECTED)
    del ev


def test_nonblocking_reads_land_in_enqueue_order(ctx, src_buf):
    sevens = cl.Buffer(N * 4)
    cl.enqueue_copy(sevens, np.full(N, 7, np.float32))
    for finish_first in ("second", "first", "finish"):
        h = np.zeros(N, np.float32)
        e1 = cl.enqueue_copy(h, src_buf, is_blocking=False)
        e2 = cl.enqueue_copy(h, sevens, is_blocking=False)
        if finish_first == "second":
            e2.wait()
            e1.wait()
        elif finish_first == "first":
            e1.wait()
            e2.wait()
        else:
            ctx.finish()
        # An in-order queue wrote the second read last.
        np.testing.assert_array_equal(h, np.full(N, 7, np.float32))


def test_nonblocking_read_seen_by_later_host_reads(ctx, src_buf):
    # A later copy from the host array, an upload of it, or a blocking read on the same queue
    # sees the bytes of the read before it, as on PyOpenCL's in-order queue.
    h, ev1 = _read(ctx, src_buf)
    other = cl.Buffer(N * 4)
    cl.enqueue_copy(other, h)
    back = np.empty(N, np.float32)
    cl.enqueue_copy(back, other)
    np.testing.assert_array_equal(back, EXPECTED)
    h, ev2 = _read(ctx, src_buf)
    np.testing.assert_array_equal(cl.asarray(h).get(), EXPECTED)
    h, ev3 = _read(ctx, src_buf)
    ev4 = cl.enqueue_copy(other, h, is_blocking=False)
    ev4.wait()
    cl.enqueue_copy(back, other)
    np.testing.assert_array_equal(back, EXPECTED)


def test_nonblocking_read_from_threads(ctx, src_buf):
    hs, evs = zip(*[_read(ctx, src_buf) for _ in range(8)])
    ts = [threading.Thread(target=e.wait) for e in evs] + [threading.Thread(target=ctx.finish)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for h in hs:
        np.testing.assert_array_equal(h, EXPECTED)



def test_nonblocking_reads_land_in_order_while_another_thread_waits(ctx):
    # Every Event.wait() lands the reads the device has completed. A thread that keeps waiting
    # on a finished event must not land a later read before an earlier one that was still
    # running when it looked (the earlier one, landed later, would overwrite the later bytes).
    n = 1 << 18
    ones = cl.Buffer(n * 4)
    cl.enqueue_copy(ones, np.ones(n, np.float32))
    sevens = cl.Buffer(16)
    cl.enqueue_copy(sevens, np.full(4, 7, np.float32))
    done = cl.enqueue_copy(cl.Buffer(16), np.zeros(4, np.float32), is_blocking=False)
    done.wait()
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            done.wait()

    spinners = [threading.Thread(target=spin) for _ in range(2)]
    for t in spinners:
        t.start()
    bad = 0
    try:
        for _ in range(1000):
            h = np.zeros(n, np.float32)
            e1 = cl.enqueue_copy(h, ones, is_blocking=False)
            e2 = cl.enqueue_copy(h, sevens, is_blocking=False, byte_count=4)
            time.sleep(0.002)
            e1.wait()
            e2.wait()
            bad += h[0] != 7
    finally:
        stop.set()
        for t in spinners:
            t.join()
    assert bad == 0


class _Hooked(np.ndarray):
    """An array whose ``flags``, which the binding reads while a non-blocking read lands in it
    (the writeable check, before the bytes are written), first runs the hooks in ``HOOKS`` (as
    the cyclic GC could while a read is written into its host array). The bytes themselves are
    written through a plain uint8 view made at the enqueue, which runs no Python code."""

    @property
    def flags(self):
        while HOOKS:
            HOOKS.pop()()
        return super().flags


HOOKS = []


@pytest.mark.parametrize("nested", ["drop", "wait", "finish"])
def test_python_code_run_while_a_read_lands_can_finish_a_later_read(ctx, src_buf, nested):
    # Dropping (or waiting on) a later read's event, or finishing the context, from Python code
    # run while an earlier read is written into its array neither deadlocks nor lets the later
    # read land first: the landing in progress lands the later read too, after the earlier one.
    sevens = cl.Buffer(N * 4)
    cl.enqueue_copy(sevens, np.full(N, 7, np.float32))
    h = np.zeros(N, np.float32).view(_Hooked)
    e1 = cl.enqueue_copy(h, src_buf, is_blocking=False)
    later = [cl.enqueue_copy(h, sevens, is_blocking=False)]
    ran, errors = [], []
    action = {"drop": later.clear, "wait": lambda: later[0].wait(), "finish": ctx.finish}[nested]

    def hook():
        action()
        ran.append(nested)

    def wait_first():
        try:
            e1.wait()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    HOOKS.append(hook)
    t = threading.Thread(target=wait_first, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "deadlock"
    HOOKS.clear()
    assert not errors, errors
    # Without the hook run during the landing, nothing here would land the later read: e1.wait()
    # lands e1 and only the reads the device happens to have completed by then.
    assert ran == [nested], "the hook did not run while the read landed"
    np.testing.assert_array_equal(np.asarray(h), np.full(N, 7, np.float32))
    del later


# 5, 6. `in` and iteration of an Expr evaluate once and follow NumPy.

def test_expr_contains():
    x = np.arange(6.0).reshape(2, 3)
    e = cl.lazy(cl.asarray(x)) + 1
    for v in (3.0, 0.0, 6.0, 7.0, -1):
        assert (v in e) == (v in (x + 1))
    assert (1.0 in cl.lazy(cl.asarray(1.0))) == (1.0 in np.asarray(1.0))


def test_expr_iteration():
    x = np.arange(6.0).reshape(2, 3)
    rows = list(cl.lazy(cl.asarray(x)) * 2)
    assert len(rows) == 2
    for r, w in zip(rows, x * 2):
        np.testing.assert_array_equal(r.get(), w)
    assert [float(v) for v in cl.lazy(cl.arange(3.0)) + 1] == [1.0, 2.0, 3.0]
    same(outcome(lambda: list(cl.lazy(cl.asarray(1.0)) + 1)), outcome(lambda: list(np.asarray(1.0) + 1)))
    same(outcome(lambda: list(cl.lazy(cl.asarray(1.0)) + 1)), TypeError)


# 7. Comparison with None, strings and other objects: NumPy 2's all-False / all-True.

OTHERS = [None, "x", object(), [None] * 3, np.array(["a", "b", "c"])]


@pytest.mark.parametrize("other", OTHERS, ids=repr)
@pytest.mark.parametrize("lazy", [False, True])
def test_compare_with_non_arrays(other, lazy):
    x = np.arange(6.0).reshape(2, 3)
    a = cl.asarray(x)
    a = cl.lazy(a) if lazy else a
    for op in ("__eq__", "__ne__"):
        got = getattr(a, op)(other)
        assert isinstance(got, cl.Expr if lazy else cl.Array)
        same(got, getattr(x, op)(other))
    same(a == None, x == None)  # noqa: E711
    same(None != a, None != x)  # noqa: E711
    same(cl.asarray(1.0) == None, np.asarray(1.0) == None)  # noqa: E711


@pytest.mark.parametrize("lazy", [False, True])
def test_compare_with_non_arrays_of_wrong_shape_raises(lazy):
    x = np.arange(6.0)
    a = cl.lazy(cl.asarray(x)) if lazy else cl.asarray(x)
    for other in ([None] * 2, np.array(["a", "b"])):
        same(outcome(lambda: a == other), outcome(lambda: x == other))
        same(outcome(lambda: a != other), ValueError)
    # Other comparisons with None stay errors, as in NumPy.
    same(outcome(lambda: a < None), outcome(lambda: x < None))


# 9. integers over the whole range of the dtype, NumPy's ValueError beyond it.

@pytest.mark.parametrize("dtype,low,high", [
    (np.uint64, 0, 2**64 - 1), (np.uint64, 2**63, 2**64 - 1), (np.int64, -2**63, 2**63 - 1),
    (np.uint32, 0, 2**32 - 1), (np.int32, -2**31, 2**31 - 1)])
def test_integers_full_range(dtype, low, high):
    g = cl.random.Generator(7)
    a = g.integers(low, high, 64, dtype=dtype)
    assert a.dtype == np.dtype(dtype)
    v = a.get()
    assert ((v >= low) & (v < high)).all()
    # NumPy takes the same bounds.
    np.random.default_rng(0).integers(low, high, 4, dtype=dtype)


@pytest.mark.parametrize("dtype,low,high", [
    (np.uint64, 0, 2**64 + 1), (np.uint64, -1, 2), (np.uint32, 0, 2**32 + 1),
    (np.int64, 0, 2**63 + 1), (np.uint64, 0, 2**200), (np.int32, -2**200, 0)])
def test_integers_out_of_bounds_is_value_error(dtype, low, high):
    g = cl.random.Generator(7)
    with pytest.raises(ValueError, match="out of bounds"):
        g.integers(low, high, 4, dtype=dtype)
    with pytest.raises(ValueError, match="out of bounds"):
        np.random.default_rng(0).integers(low, high, 4, dtype=dtype)


# 10. copy, deepcopy and pickle.

@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "complex64", "float16"])
def test_copy_deepcopy_pickle_array(dtype):
    x = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    a = cl.asarray(x)
    for f in (copy.copy, copy.deepcopy, lambda v: pickle.loads(pickle.dumps(v))):
        b = f(a)
        assert isinstance(b, cl.Array)
        same(b, x)
        # A device copy: writing one leaves the other.
        b[0, 0] = 1
        same(a, x)
    view = a[1:, ::2]
    same(pickle.loads(pickle.dumps(view)), x[1:, ::2])
    same(copy.deepcopy([a, {"k": a}])[1]["k"], x)
    same(pickle.loads(pickle.dumps(cl.asarray(np.float64(2.5)))), np.asarray(2.5))


def test_copy_deepcopy_pickle_expr():
    x = np.arange(6.0)
    a = cl.asarray(x)
    e = cl.lazy(a) * 2
    c = copy.copy(e)
    assert isinstance(c, cl.Expr)
    same(c, x * 2)
    d = copy.deepcopy(e)
    p = pickle.loads(pickle.dumps(e))
    assert isinstance(d, cl.Expr) and isinstance(p, cl.Expr)
    a[0] = 100.0
    # The shallow copy reads the operands when evaluated; the deep copy and the pickle do not.
    same(c, np.where(np.arange(6) == 0, 200.0, x * 2))
    same(d, x * 2)
    same(p, x * 2)


# Small ones: float()/int()/complex() of size-1 arrays, item(i), zeros(True), format, round.

def test_scalar_conversions_need_0d():
    x = np.arange(4.0)
    a = cl.asarray(x)
    for f in (float, int, complex):
        for key in (slice(1, 2), slice(2, 3)):
            same(outcome(lambda: f(a[key])), outcome(lambda: f(x[key])))
        same(outcome(lambda: f(cl.asarray(x[1:2].reshape(1, 1)))), outcome(lambda: f(x[1:2].reshape(1, 1))))
        same(outcome(lambda: f(cl.lazy(a[1:2]))), outcome(lambda: f(x[1:2])))
        assert f(a[2]) == f(x[2])
    # bool() of a one-element array stays allowed, as in NumPy.
    assert bool(a[1:2]) == bool(x[1:2])


@pytest.mark.parametrize("shape", [(6,), (2, 3), (2, 1, 3), ()])
def test_item_with_indices(shape):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 3
    a = cl.asarray(x)
    keys = [(), (0,), (-1,), (1,), (5,), (6,), (-7,), (np.int64(2),), (1.0,), (True,), ((1,),)]
    keys += [(0, 0), (1, 2), (-1, -1), (1, 5), (0, 0, 0), (1, 0, 2), ((1, 2),), ((0, 0, 1),)]
    for k in keys:
        want = outcome(lambda: x.item(*k))
        got = outcome(lambda: a.item(*k))
        same(got, want)
        if not isinstance(want, type):
            assert type(got) is type(want)


def test_shape_bool_is_type_error():
    for f, g in ((cl.zeros, np.zeros), (cl.ones, np.ones), (cl.empty, np.empty)):
        for shape in (True, False, (True, 2), [2, False]):
            same(outcome(lambda: f(shape)), outcome(lambda: g(shape)))
            same(outcome(lambda: f(shape)), TypeError)
    same(cl.zeros(np.int64(2)), np.zeros(np.int64(2)))
    same(cl.zeros((2, 3)), np.zeros((2, 3)))


def test_format_and_round():
    for v in (1.5, 2.25, -3, 1 + 2j):
        x = np.asarray(v)
        for spec in (".2f", "", "8.3e", ">10"):
            if isinstance(v, complex) and spec == "8.3e":
                continue
            assert format(cl.asarray(v), spec) == format(x, spec)
            assert format(cl.lazy(cl.asarray(v)) + 0, spec) == format(x + 0, spec)
    x = np.arange(3.0)
    assert format(cl.asarray(x), "") == format(x, "") == str(x)
    same(outcome(lambda: format(cl.asarray(x), ".2f")), outcome(lambda: format(x, ".2f")))
    assert f"{cl.asarray(2.0):.1f}" == "2.0"
    # round() of an array: NumPy 2.4 defines no __round__ on ndarray (TypeError); clarray too.
    same(outcome(lambda: round(cl.asarray(1.5))), outcome(lambda: round(np.asarray(1.5))))
