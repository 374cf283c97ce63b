"""The exceptions clarray raises: one class per kind of error of the Rust library.

Each is a subclass of :class:`ClarrayError` and of the built-in exception Python code already
catches for that kind (``ValueError``, ``TypeError``, ``IndexError``, ``MemoryError``, ...).
Every instance carries ``kind`` (the Rust variant's name), ``error_kind`` (the library's
coarse, stable ``ErrorKind``: ``InvalidValue``, ``Type``, ``Index``, ``OutOfMemory``, ...) and the
variant's fields as attributes (for example ``requested`` and ``limit`` on :class:`OutOfDeviceMemoryError`).
"""


class ClarrayError(Exception):
    """Base class of every error raised by clarray; ``kind`` names the library's variant."""

    kind = "Error"

    def __init__(self, message, **fields):
        super().__init__(message)
        self.message = message
        for name, value in fields.items():
            setattr(self, name, value)


class ShapeError(ClarrayError, ValueError):
    """Shapes that do not match or do not broadcast."""


class AxisError(ClarrayError, ValueError, IndexError):
    """An axis outside ``-ndim..ndim`` or named twice; fields ``axis`` and ``ndim``."""


class DTypeError(ClarrayError, TypeError):
    """Element types that do not fit the operation."""


class ScalarOverflowError(ClarrayError, OverflowError):
    """A Python integer out of the bounds of the integer type it is to take: ``uint8_array +
    300``, ``a[...] = 300``, ``full(3, 300, dtype=uint8)``, ``2**40`` for a kernel's ``int``
    parameter (NumPy 2 raises ``OverflowError`` too); fields ``value`` (the int) and ``dtype``
    (NumPy's name of the type, ``None`` where the value fits no integer type at all)."""


class OutOfBoundsError(ClarrayError, IndexError):
    """A copy, view or index outside the memory it refers to."""


class CopyRangeError(OutOfBoundsError, ValueError):
    """A copy whose offset and byte count reach past a buffer's end (``enqueue_copy``); fields
    ``name`` (the offset's keyword), ``offset``, ``byte_count`` and ``size`` (the buffer's
    bytes). Raised before anything is copied."""


class TooLargeError(ClarrayError, ValueError):
    """A size above what the device or the host can address."""


class InvalidArgumentError(ClarrayError, ValueError):
    """An argument that is invalid whatever the bounds."""


class ContextMismatchError(ClarrayError, ValueError):
    """Objects of two different contexts used together."""


class UnsupportedError(ClarrayError, NotImplementedError):
    """The device lacks a capability the call needs (fp64, images, ...)."""


class OutOfDeviceMemoryError(ClarrayError, MemoryError):
    """The device memory limit would be exceeded; fields ``requested``, ``in_use``, ``held``,
    ``limit`` (bytes)."""


class KernelArgsError(ClarrayError, TypeError):
    """Kernel arguments that do not match the kernel's signature; field ``kernel``."""


class BuildError(ClarrayError, RuntimeError):
    """A program did not build; the message holds the device's build log."""


class OpenCLError(ClarrayError, RuntimeError):
    """An OpenCL call failed; fields ``op``, ``code``, ``name``."""


class KernelFailedError(ClarrayError, RuntimeError):
    """A kernel failed while it ran; fields ``kernel``, ``global_size``."""


class SolverUnstableError(ClarrayError, ArithmeticError):
    """The induction solver's solution stopped being finite (lower ``cfl`` or change the
    forms)."""


class NoDeviceError(ClarrayError, RuntimeError):
    """No OpenCL runtime or no device matching the request."""


class ClarrayIOError(ClarrayError, OSError):
    """An I/O error (program cache files)."""
