//! `clarray.Context` and the default context every function uses when given none.

use std::sync::OnceLock;

use clarray::Context;
use pyo3::prelude::*;

use crate::errors::IntoPy;

/// An OpenCL context on one device with its in-order queue: where arrays live and their work
/// runs. ``Context()`` picks the device named by ``CLARRAY_DEVICE``, else the GPU with the
/// most memory; ``Context("cpu")``, ``Context("0:1")`` or a part of the device's name picks
/// another.
#[derive(Debug)]
#[pyclass(name = "Context", module = "clarray", frozen)]
pub struct PyContext {
    pub inner: Context,
}

static DEFAULT: OnceLock<Context> = OnceLock::new();

impl PyContext {
    pub fn wrap(inner: Context) -> PyContext {
        PyContext { inner }
    }

    /// The default context, made on first use.
    pub fn default_ctx() -> PyResult<Context> {
        if let Some(c) = DEFAULT.get() {
            return Ok(c.clone());
        }
        let c = Context::new().py()?;
        Ok(DEFAULT.get_or_init(|| c).clone())
    }

    /// The given context, or the default one.
    pub fn or_default(ctx: Option<PyRef<'_, PyContext>>) -> PyResult<Context> {
        match ctx {
            Some(c) => Ok(c.inner.clone()),
            None => PyContext::default_ctx(),
        }
    }
}

#[pymethods]
impl PyContext {
    #[new]
    #[pyo3(signature = (device=None))]
    fn new(py: Python<'_>, device: Option<String>) -> PyResult<PyContext> {
        let b = Context::builder();
        let b = match &device {
            Some(d) => b.select(d),
            None => b,
        };
        let asked = match &device {
            Some(d) => Some(pyo3::types::PyString::new(py, d).repr()?.to_string()),
            None => None,
        };
        py.detach(|| b.build())
            .map_err(|e| match (e, asked) {
                // The library words it as the environment variable it usually reads.
                (clarray::Error::NoDevice { found, .. }, Some(d)) => {
                    clarray::Error::NoDevice { wanted: format!("Context({d})"), found }
                }
                (e, _) => e,
            })
            .py()
            .map(PyContext::wrap)
    }

    /// The device's name.
    #[getter]
    fn device_name(&self) -> String {
        self.inner.device().name().to_string()
    }

    /// Whether the device computes in double precision (float64, complex128).
    #[getter]
    fn fp64(&self) -> bool {
        self.inner.device().info().fp64
    }

    /// This context's work queue, as a :class:`Queue`.
    #[getter]
    fn queue(&self) -> PyQueue {
        PyQueue { ctx: self.inner.clone() }
    }

    /// The same context with a new profiling queue (for :class:`Profiler` and device times).
    fn profiled(&self, py: Python<'_>) -> PyResult<PyContext> {
        py.detach(|| self.inner.profiled()).py().map(PyContext::wrap)
    }

    /// Waits until every command enqueued in this context has completed; the host arrays of
    /// non-blocking reads on it then hold their bytes.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.queue().finish()).py()?;
        crate::buffer::settle_reads(py, Some(self.inner.queue().id()))
    }

    fn __repr__(&self) -> String {
        format!("clarray.Context({:?})", self.inner.device().name())
    }
}

/// ``Queue(ctx=None, profiling=False)``: another in-order command queue on ``ctx``'s device.
/// Kernels launched on it run in order with each other; work on two queues may overlap (the
/// library makes a command wait for what it needs from other queues, buffer by buffer).
/// ``queue.context`` is the same context with this queue as its work queue (pass it as
/// ``ctx=`` to send array work here).
#[derive(Debug)]
#[pyclass(name = "Queue", module = "clarray", frozen)]
pub struct PyQueue {
    /// The context whose queue this is.
    pub ctx: Context,
}

#[pymethods]
impl PyQueue {
    #[new]
    #[pyo3(signature = (ctx=None, profiling=false))]
    fn new(py: Python<'_>, ctx: Option<PyRef<'_, PyContext>>, profiling: bool) -> PyResult<PyQueue> {
        let ctx = PyContext::or_default(ctx)?;
        let q = py.detach(|| ctx.create_queue(profiling)).py()?;
        Ok(PyQueue { ctx: q.context_of() })
    }

    /// The context, with this queue as its work queue.
    #[getter]
    fn context(&self) -> PyContext {
        PyContext::wrap(self.ctx.clone())
    }

    /// Whether commands on this queue record device times.
    #[getter]
    fn profiling(&self) -> bool {
        self.ctx.queue().is_profiling()
    }

    /// Waits until every command enqueued on this queue has completed; the host arrays of
    /// non-blocking reads on it then hold their bytes.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.ctx.queue().finish()).py()?;
        crate::buffer::settle_reads(py, Some(self.ctx.queue().id()))
    }

    /// Sends the queued commands to the device without waiting.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.ctx.queue().flush()).py()
    }

    fn __repr__(&self) -> String {
        format!(
            "clarray.Queue({:?}, profiling={})",
            self.ctx.device().name(),
            self.ctx.queue().is_profiling()
        )
    }
}
