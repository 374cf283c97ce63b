//! # clarray for PyOpenCL and NumPy users
//!
//! A documentation module (no code): each idiom of PyOpenCL and NumPy and what it is in clarray.
//! Read the [`array`](mod@crate::array) module docs next for the rules (promotion, defined results).
//!
//! ## Setting up
//!
//! | PyOpenCL | clarray |
//! |---|---|
//! | `ctx = cl.create_some_context()`; `queue = cl.CommandQueue(ctx)` | `let ctx = Context::new()?;` — a context *with* its queue (`CLARRAY_DEVICE=gpu`, `cpu`, `P:D` or a name picks the device) |
//! | `cl.CommandQueue(ctx, properties=PROFILING_ENABLE)` | `ctx.profiled()?` |
//! | `queue.finish()` | `ctx.queue().finish()?` |
//!
//! ## Buffers and arrays
//!
//! | PyOpenCL / NumPy | clarray |
//! |---|---|
//! | `cl.Buffer(ctx, flags, size)` | [`Buffer::uninit(&ctx, bytes)`](crate::Buffer::uninit) — bytes, no type |
//! | `cl_array.to_device(queue, a)` | [`Array::from_ndarray(&ctx, &a)`](crate::array::Array::from_ndarray) (any ndarray layout) or [`Array::from_slice(&ctx, &v, &shape)`](crate::array::Array::from_slice) |
//! | `cl_array.empty / zeros / arange`, `np.ones, full, linspace, eye, zeros_like` | [`Array::empty`](crate::array::Array::empty) (uninitialised), `zeros`, `ones`, `full`, `arange`, `linspace`, `eye`, `zeros_like`, … — computed on the device |
//! | `a.get()` | [`a.get()?`](crate::array::Array::get) — an `ndarray::ArrayD<T>` of the same shape; `to_vec()` for a flat `Vec` |
//! | `a.get(ary=out)`, `a.get_async()` | [`a.read_into(&mut out)?`](crate::array::Array::read_into) (any slice, e.g. [`Pinned`](crate::Pinned)); [`a.get_async()?`](crate::array::Array::get_async)`.wait()?`; [`a.read_into_async(scope, &mut out)`](crate::array::Array::read_into_async) inside `queue.scope(…)` |
//! | `a.set(host)` | [`a.set(&host)?`](crate::array::Array::set) (shape checked), `set_slice`, `set_async` |
//! | `a.data`, `a.offset` | [`a.buffer()`](crate::array::Array::buffer), [`a.offset_bytes()`](crate::array::Array::offset_bytes) |
//! | `a.shape, a.strides, a.dtype, a.size, a.ndim` | `a.shape()`, `a.strides()` (in **elements**, not bytes), `a.dtype()`, `a.len()`, `a.ndim()` |
//! | `a[0].get()` / `a.item()` | [`a.item()?`](crate::array::Array::item) on a one-element array |
//! | `cl.enqueue_copy(queue, host, buf)` | `ctx.queue().read_buffer(&buf, offset, &mut host)?` (blocking); non-blocking: [`Queue::scope`](crate::Queue::scope) and its [`Pending`](crate::runtime::Pending), which keeps the host memory borrowed until the copy is done |
//! | `cl.enqueue_copy(queue, buf, host)` | `ctx.queue().write_buffer(&buf, offset, &host)?` |
//! | `cl.enqueue_copy(queue, dst_buf, src_buf)` | `ctx.queue().copy_buffer(&src, soff, &dst, doff, bytes)?` |
//! | `cl.enqueue_fill_buffer` / `a.fill(v)` | `queue.fill_buffer(…)` / [`a.fill(v)?`](crate::array::Array::fill) (also on views) |
//! | `Array(queue, shape, dtype, data=buf, offset=o)` | [`Array::from_buffer(&buf, &shape, &strides, offset)`](crate::array::Array::from_buffer) (bounds checked) |
//!
//! ## Views
//!
//! | NumPy | clarray |
//! |---|---|
//! | `a[1:, ::2]`, `a[::-1]`, `a[3]`, `a[:, None]` | `a.slice(s![1.., ..;2])?`, `a.slice(s![..;-1])?`, `a.slice(s![3, ..])?` or `a.index_axis(0, 3)?`, `a.slice(s![.., NewAxis])?` — ndarray's [`s!`](ndarray::s) |
//! | `a[0:5:-2]` | **differs**: ndarray's `s![0..5;-2]` walks the range `0..5` backwards (4, 2, 0); NumPy's is empty. Write `s![..=4;-2]`-style ranges as *the elements you want*, then the step |
//! | `a.reshape(s)` | `a.reshape(&s)?` — a view, or an error saying a copy is needed; [`reshape_copy`](crate::array::Array::reshape_copy) copies |
//! | `a.T`, `a.transpose(axes)` | `a.t()`, `a.permute(&axes)?` |
//! | `np.broadcast_to(a, s)` | `a.broadcast_to(&s)?` |
//! | `a.squeeze()`, `np.expand_dims(a, k)`, `np.flip(a, k)` | `a.squeeze()`, `a.expand_dims(k)?`, `a.flip(k)?` |
//! | `a.copy()`, `np.ascontiguousarray(a)` | `a.copy()?` |
//! | `b = a` (same data) / `b = a.view()` | `let b = a.clone();` — arrays are handles, like PyOpenCL's; `copy()` copies |
//!
//! PyOpenCL computes only on contiguous arrays and silently mixes C- and F-ordered operands;
//! clarray computes on any view, with the right result for every layout.
//!
//! ## Computing
//!
//! | NumPy / PyOpenCL | clarray |
//! |---|---|
//! | `c = 2*a + b` (one kernel per operator, temporaries) | `let c = (2.0 * &a + &b).eval::<f32>()?;` — **one** kernel for the whole expression, cached by its structure |
//! | `c[...] = 2*a + b`, `out=` | `c.assign(2.0 * &a + &b)?` — into any array or view |
//! | `a += 1` | `a.assign(&a + 1.0)?` |
//! | `np.sqrt(a)`, `np.minimum(a, b)`, `np.where(c, a, b)`, `np.clip(a, lo, hi)` | `a.sqrt()`, `a.minimum(&b)`, [`where_(&c, &a, &b)`](crate::array::where_), `a.clip(lo, hi)` — all lazy [`Expr`](crate::array::Expr)s |
//! | `a < b`, `a == b` | `a.less(&b)`, `a.equal(&b)` (Rust's `<` must return `bool`) |
//! | `a // b`, `a % b`, `a ** b` | `a.floor_divide(&b)`, `&a % &b`, `a.pow(&b)` |
//! | `np.logical_and(a, b)`, `~a`, `a & b`, `a << 2` | `a.logical_and(&b)`, `!&a`, `&a & &b`, `&a << 2` |
//! | `a.astype(np.float64)` | `a.astype::<f64>()?` (a new array); in an expression `e.astype::<f64>()` (lazy) |
//! | `f32_array * 2.0` stays float32 (NumPy 2) | the same: Rust scalars are weak (see [promotion](mod@crate::array#type-promotion)); `2.0 * &a`, `2 * &a`, `true & &a` work with `f64`/`i64`/`bool` on the left (other types: `3u8.into_expr() * &a`), any scalar type on the right |
//! | `ElementwiseKernel("float *x, float *y", "y[i] = 2*x[i]")` | usually unnecessary: `y.assign(2.0 * &x)?` generates that kernel. For hand-written kernels: [`cached_kernel`](crate::program::cached_kernel) and `queue.launch` with arrays as arguments ([`KernelArg`](crate::program::KernelArg)) |
//!
//! ## Indexing with arrays
//!
//! | NumPy | clarray |
//! |---|---|
//! | `np.take(a, i, axis=k)` | `a.take(&i, k)?` — any index view; a bad index is an error naming it |
//! | `np.put(a, i, v)` | `a.put(&i, &v)?` — values repeat as in NumPy; with repeated indices which value lands is unspecified (NumPy: the last) |
//! | `a[m]` (`m` boolean, of `a`'s shape) | `a.mask(&m)?` — a new 1-D array |
//! | `a[m] = x` | `a.set_where(&m, x)?` — in place, any view |
//! | `np.nonzero(a)`, `np.argwhere(a)` | `a.nonzero()?` (a `Vec` of i64 arrays), `a.argwhere()?` (`(count, ndim)` i64) |
//!
//! Errors are values: a bad shape, type or context is an [`Error`](crate::Error) returned by
//! `eval`/`assign` (or by [`Expr::check`](crate::array::Expr::check) earlier), never a panic or a
//! silently wrong result.
