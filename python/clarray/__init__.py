"""clarray: OpenCL device arrays whose data stays on the device, with NumPy's semantics.

    >>> import numpy as np, clarray as cl
    >>> a = cl.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> b = cl.sqrt(2 * a + 1)          # computed on the device
    >>> b.sum(axis=1).get()             # numpy.ndarray([...], dtype=float32)

Arrays (:class:`Array`) have NumPy's views (slicing with negative steps, ``None``, ``...``),
broadcasting, NumPy 2 type promotion (Python scalars are weak, NEP 50; NumPy scalars are
strong), reductions over any axes, sorting, ``take``/``put`` and random numbers. Results stay
on the device until ``get()`` (or ``numpy.asarray``) brings them back.

In-place operators (``a += b``, ...) write into ``a`` with one kernel and refuse, as NumPy
does, a result whose dtype cannot be cast to ``a``'s under the 'same_kind' rule (``int_array +=
0.5`` is a ``DTypeError``). ``a[idx] = v`` takes an integer array ``idx`` (first axis; ``v``
broadcasts to the selection) or a boolean mask of ``a``'s shape (one value, or one per selected
place in C order).

Operators on arrays are eager, as NumPy's and CuPy's: each runs one generated kernel at once, and
a result never depends on what happens to its operands later. To run a whole chain as one kernel,
opt in: decorate a function with :func:`fuse` (CuPy's name) — ``fuse(lambda a, b: a * 2 + b)(x,
y)`` is one kernel — or build a lazy :class:`Expr` with :func:`lazy` (``lazy(x) * 2 + y``), which
runs when evaluated (``eval()``, ``get()``, ``numpy.asarray``, printing, indexing, reductions and
every other array method; each evaluation reads the operands' values at that time); its
``sum``, ``prod``, ``min``, ``max``, ``mean``, ``any`` and ``all`` are fused with it (the values
are never stored). Reductions return device arrays (0-d for a reduction over all axes;
``.item()`` gives the Python number).

User kernels: ``Source(text, defines=..., includes=..., options=...).build(ctx)`` gives a
:class:`Program` (built once through the library's program cache); its kernels are attributes,
launched as ``prg.name(queue_or_ctx, global_size, local_size, *args)`` with every argument
checked against the kernel's signature. :class:`ElementwiseKernel` and :class:`ReductionKernel`
are PyOpenCL's. :func:`run_kernel` is MatCL's one call: NumPy arguments are copied in and back
out once, device arrays stay resident, and the report keeps kernel and copy time apart.

Queues: every :class:`Context` has one in-order queue (``ctx.queue``; ``ctx.finish()`` waits
for it); :class:`Queue` makes more. ``enqueue_copy(queue, dest, src, ...)`` takes the queue
first as PyOpenCL's does (``enqueue_copy(dest, src, ...)`` uses the buffer's context's queue).

Errors are subclasses of :class:`ClarrayError` and of the built-in exception for their kind
(``ValueError``, ``TypeError``, ``IndexError``, ``MemoryError``, ...).
"""

import functools

from . import _errors
from ._errors import (
    AxisError,
    BuildError,
    ClarrayError,
    ClarrayIOError,
    ContextMismatchError,
    CopyRangeError,
    DTypeError,
    InvalidArgumentError,
    KernelArgsError,
    KernelFailedError,
    NoDeviceError,
    OpenCLError,
    OutOfBoundsError,
    OutOfDeviceMemoryError,
    ScalarOverflowError,
    ShapeError,
    SolverUnstableError,
    TooLargeError,
    UnsupportedError,
)
from ._clarray import (
    Array,
    Buffer,
    Context,
    ElementwiseKernel,
    Event,
    Expr,
    Kernel,
    LocalMemory,
    Profiler,
    Program,
    Queue,
    ReductionKernel,
    RunReport,
    Source,
    arange,
    asarray,
    default_context,
    empty,
    enqueue_copy,
    full,
    lazy,
    linspace,
    ones,
    result_type,
    run_kernel,
    zeros,
)
from ._clarray import where as _where
from . import _clarray, induction, random

__all__ = [
    "Array", "Buffer", "Context", "Queue", "Event", "Source", "Program", "Kernel", "LocalMemory",
    "ElementwiseKernel", "ReductionKernel", "run_kernel", "RunReport",
    "Expr", "lazy", "fuse", "Profiler", "asarray", "array", "zeros", "ones", "empty", "full",
    "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace", "where",
    "result_type", "default_context", "enqueue_copy", "random", "induction",
    "sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all",
    "cumsum", "cumprod", "sort", "argsort", "take", "put",
    "ClarrayError", "ShapeError", "AxisError", "CopyRangeError", "DTypeError", "ScalarOverflowError",
    "OutOfBoundsError", "TooLargeError", "InvalidArgumentError", "ContextMismatchError",
    "UnsupportedError", "OutOfDeviceMemoryError", "KernelArgsError", "BuildError",
    "OpenCLError", "KernelFailedError", "NoDeviceError", "ClarrayIOError", "SolverUnstableError",
]


def array(obj, dtype=None, ctx=None):
    """A device copy of ``obj`` (anything ``numpy.asarray`` takes, or a clarray array)."""
    if isinstance(obj, Array):
        return obj.astype(dtype) if dtype is not None else obj.copy()
    return asarray(obj, dtype=dtype, ctx=ctx)


def _materialise(out):
    """``out`` with every :class:`Expr` in it (alone, or in nested tuples and lists) evaluated
    into a new array: all of them together, one kernel for those of one shape."""
    exprs = []

    def collect(o):
        if isinstance(o, Expr):
            exprs.append(o)
        elif isinstance(o, (tuple, list)):
            for x in o:
                collect(x)

    collect(out)
    if not exprs:
        return out
    arrays = iter(_clarray._eval_all(exprs))

    def rebuild(o):
        if isinstance(o, Expr):
            return next(arrays)
        if isinstance(o, tuple):
            return tuple(rebuild(x) for x in o)
        if isinstance(o, list):
            return [rebuild(x) for x in o]
        return o

    return rebuild(out)


def fuse(func=None):
    """Fuses the elementwise work of ``func`` into one kernel per result (CuPy's ``fuse``).

    The wrapped function is called with its clarray array arguments as lazy :class:`Expr`
    objects; operators and clarray's elementwise functions (``sqrt``, ``where``, ...) on them
    build one expression, and each :class:`Expr` it returns (alone, or in a tuple or list) is
    evaluated into a new :class:`Array`: the results of one shape by one kernel together, their
    shared subexpressions computed once. NumPy's promotion rules hold as
    without fusion. The methods ``sum``, ``prod``, ``min``, ``max``, ``mean``, ``any`` and
    ``all`` of an expression run fused with it (map-reduce); indexing or any other method
    evaluates the expression built so far first. Usable as ``@fuse`` or ``@fuse()``::

        @cl.fuse
        def axpb(a, x, b):
            return a * x + b          # one kernel, whatever the number of operators

        @cl.fuse
        def sum_and_product(a, b):
            s = a + b
            return s, s * a           # both results from one kernel
    """
    def wrap(f):
        @functools.wraps(f)
        def fused(*args, **kwargs):
            args = [lazy(a) if isinstance(a, Array) else a for a in args]
            kwargs = {k: lazy(v) if isinstance(v, Array) else v for k, v in kwargs.items()}
            return _materialise(f(*args, **kwargs))

        return fused

    return wrap(func) if func is not None else wrap


def zeros_like(a, dtype=None):
    """Zeros with ``a``'s shape (and dtype, unless ``dtype`` is given)."""
    return zeros(a.shape, dtype=dtype or a.dtype, ctx=a.context)


def ones_like(a, dtype=None):
    """Ones with ``a``'s shape (and dtype, unless ``dtype`` is given)."""
    return ones(a.shape, dtype=dtype or a.dtype, ctx=a.context)


def empty_like(a, dtype=None):
    """An uninitialised array with ``a``'s shape (and dtype, unless ``dtype`` is given)."""
    return empty(a.shape, dtype=dtype or a.dtype, ctx=a.context)


def full_like(a, fill_value, dtype=None):
    """``fill_value`` everywhere, with ``a``'s shape (and dtype, unless ``dtype`` is given)."""
    return full(a.shape, fill_value, dtype=dtype or a.dtype, ctx=a.context)


def where(condition, x, y):
    """``x`` where ``condition`` is true, else ``y``; all three broadcast, ``x`` and ``y``
    promote as NumPy's (Python scalars are weak)."""
    return _where(condition, x, y)


def _unary(name, doc):
    def f(x):
        return _clarray._unary(name, x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc}, elementwise (NumPy's ``{name}``), computed on the device.\n\n" \
        "``x`` is a clarray array, a NumPy array or a scalar; the result is a clarray array."
    return f


def _binary(name, doc):
    def f(x, y):
        return _clarray._binary(name, x, y)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc}, elementwise with broadcasting (NumPy's ``{name}``), on the device.\n\n" \
        "Python scalars are weak (they take the array's dtype where their kind allows)."
    return f


_UNARY = {
    "negative": "Numerical negative", "invert": "Bitwise (bool: logical) not",
    "logical_not": "Logical not", "abs": "Absolute value", "absolute": "Absolute value",
    "sqrt": "Square root", "cbrt": "Cube root", "exp": "e to the power x",
    "exp2": "2 to the power x", "log": "Natural logarithm", "log2": "Base-2 logarithm",
    "log10": "Base-10 logarithm", "log1p": "log(1 + x), accurate near 0",
    "expm1": "exp(x) - 1, accurate near 0", "sin": "Sine", "cos": "Cosine", "tan": "Tangent",
    "arcsin": "Inverse sine", "arccos": "Inverse cosine", "arctan": "Inverse tangent",
    "sinh": "Hyperbolic sine", "cosh": "Hyperbolic cosine", "tanh": "Hyperbolic tangent",
    "arcsinh": "Inverse hyperbolic sine", "arccosh": "Inverse hyperbolic cosine",
    "arctanh": "Inverse hyperbolic tangent", "floor": "Round down", "ceil": "Round up",
    "rint": "Round to the nearest integer, halves to even", "trunc": "Round toward zero",
    "sign": "Sign (-1, 0, 1; NaN for NaN; z/|z| for complex)", "isnan": "Whether NaN",
    "isinf": "Whether infinite", "isfinite": "Whether finite",
    "conjugate": "Complex conjugate", "conj": "Complex conjugate", "real": "Real part",
    "imag": "Imaginary part",
}
_BINARY = {
    "add": "Sum", "subtract": "Difference", "multiply": "Product",
    "divide": "True quotient", "true_divide": "True quotient",
    "floor_divide": "Quotient rounded down", "remainder": "Remainder with the divisor's sign",
    "mod": "Remainder with the divisor's sign", "power": "x to the power y",
    "minimum": "Minimum (NaN propagates)", "maximum": "Maximum (NaN propagates)",
    "arctan2": "Angle of the point (y, x) = arctan2(x1, x2)", "hypot": "sqrt(x*x + y*y)",
    "equal": "x == y", "not_equal": "x != y", "less": "x < y", "less_equal": "x <= y",
    "greater": "x > y", "greater_equal": "x >= y", "logical_and": "Logical and",
    "logical_or": "Logical or", "logical_xor": "Logical exclusive or",
    "bitwise_and": "Bitwise and", "bitwise_or": "Bitwise or", "bitwise_xor": "Bitwise xor",
    "left_shift": "x shifted left by y bits", "right_shift": "x shifted right by y bits",
}
for _n, _d in _UNARY.items():
    globals()[_n] = _unary(_n, _d)
    __all__.append(_n)
for _n, _d in _BINARY.items():
    globals()[_n] = _binary(_n, _d)
    __all__.append(_n)
# NumPy's name for rounding halves to even; integers stay as they are (np.round keeps their
# dtype, where np.rint gives a float).
round = globals()["rint"]  # noqa: A001
del _n, _d


def rint(x):
    import numpy as np

    dt = x.dtype if isinstance(x, (Array, Expr)) else np.asarray(x).dtype
    dt = np.dtype(dt)
    if dt.kind in "biu":
        # NumPy's rint of an integer or bool is a float: float16 for 8 bits, float32 for 16,
        # float64 wider.
        ft = np.rint(np.zeros(0, dt)).dtype
        x = x.astype(ft) if isinstance(x, (Array, Expr)) else np.asarray(x).astype(ft)
    return round(x)


rint.__doc__ = round.__doc__


def _method(name, doc):
    def f(a, *args, **kwargs):
        return getattr(asarray(a), name)(*args, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + f"\n\nThe same as ``asarray(a).{name}(...)``; see :meth:`Array.{name}`."
    return f


sum = _method("sum", "The sum over ``axis`` (None, an int or a tuple), ``keepdims``.")  # noqa: A001
prod = _method("prod", "The product over ``axis``, ``keepdims``.")
min = _method("min", "The smallest element over ``axis``, ``keepdims``.")  # noqa: A001
max = _method("max", "The largest element over ``axis``, ``keepdims``.")  # noqa: A001
mean = _method("mean", "The mean over ``axis``, ``keepdims``.")
var = _method("var", "The variance over ``axis`` with ``ddof``, ``keepdims``.")
std = _method("std", "The standard deviation over ``axis`` with ``ddof``, ``keepdims``.")
argmin = _method("argmin", "The index of the first smallest element (``axis``: None or int).")
argmax = _method("argmax", "The index of the first largest element (``axis``: None or int).")
any = _method("any", "Whether any element over ``axis`` is nonzero.")  # noqa: A001
all = _method("all", "Whether every element over ``axis`` is nonzero.")  # noqa: A001
cumsum = _method("cumsum", "The running sums along ``axis`` (None: flattened).")
cumprod = _method("cumprod", "The running products along ``axis`` (None: flattened).")
sort = _method("sort", "A sorted copy along ``axis`` (default -1; None: flattened).")
argsort = _method("argsort", "The positions that sort along ``axis`` (stable).")
take = _method("take", "The elements at ``indices`` along ``axis`` (None: flattened).")


def put(a, indices, values):
    """Writes ``values`` (cycled) at the flat positions ``indices`` of the clarray array ``a``."""
    a.put(indices, values)
