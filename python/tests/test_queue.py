"""Queues, Context.finish, and enqueue_copy with PyOpenCL's queue-first signature (the
queue-less form is in test_buffers.py)."""

import numpy as np
import pytest

import clarray as cl


def test_queue_objects(ctx):
    q = cl.Queue(ctx)
    assert not q.profiling and cl.Queue(ctx, profiling=True).profiling
    assert isinstance(ctx.queue, cl.Queue)
    assert q.context.device_name == ctx.device_name
    a = cl.zeros(8, ctx=q.context)  # array work sent to q
    a += 1
    q.flush()
    q.finish()
    ctx.finish()
    np.testing.assert_array_equal(a.get(), np.ones(8))


def test_enqueue_copy_with_a_queue_first(ctx):
    q = cl.Queue(ctx)
    h = np.arange(32, dtype=np.int32)
    b = cl.Buffer(h.nbytes, ctx=ctx)
    assert isinstance(cl.enqueue_copy(q, b, h), cl.Event)  # complete: it blocked
    out = np.full(8, -1, dtype=np.int32)
    cl.enqueue_copy(q, out, b, device_offset=4 * 10)
    np.testing.assert_array_equal(out, h[10:18])
    c = cl.Buffer(h.nbytes, ctx=ctx)
    cl.enqueue_copy(ctx, c, b, byte_count=16, dst_offset=8)  # a Context works as the queue
    back = np.full(6, -1, dtype=np.int32)
    cl.enqueue_copy(q, back, c)
    np.testing.assert_array_equal(back[2:6], h[:4])
    ev = cl.enqueue_copy(q, b, np.zeros(32, np.int32), device_offset=0, is_blocking=False)
    out2 = np.full(32, -1, dtype=np.int32)
    ev2 = cl.enqueue_copy(q, out2, b, is_blocking=False, wait_for=[ev])
    ev2.wait()
    np.testing.assert_array_equal(out2, 0)


def test_enqueue_copy_waits_for_kernel_events(ctx):
    prg = cl.Source("kernel void fill7(global int* o) { o[get_global_id(0)] = 7; }").build(ctx)
    b = cl.Buffer(4 * 64, ctx=ctx)
    ev = prg.fill7(ctx.queue, 64, None, b)
    out = np.zeros(64, np.int32)
    cl.enqueue_copy(ctx.queue, out, b, wait_for=[ev])
    np.testing.assert_array_equal(out, 7)


def test_enqueue_copy_refuses_ambiguous_calls(ctx):
    b = cl.Buffer(16, ctx=ctx)
    h = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="both a queue and ctx"):
        cl.enqueue_copy(ctx.queue, b, h, ctx=ctx)
    with pytest.raises(TypeError, match="both"):
        cl.enqueue_copy(b, h, dest_offset=0, device_offset=0)
    with pytest.raises(TypeError, match="positional"):
        cl.enqueue_copy(ctx.queue, b, h, h)
    with pytest.raises(TypeError, match="Queue or clarray.Context"):
        cl.enqueue_copy("q", b, h)
    with pytest.raises(IndexError):
        cl.enqueue_copy(ctx.queue, b, np.zeros(8, np.float32), device_offset=4)


def test_enqueue_copy_on_a_queue_of_another_context(ctx):
    other = cl.Context()
    with pytest.raises(cl.ContextMismatchError, match="context mismatch"):
        cl.enqueue_copy(other.queue, cl.Buffer(16, ctx=ctx), np.zeros(4, np.float32))
