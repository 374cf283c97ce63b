"""Random numbers made on the device (Philox4x32-10: the same seed gives the same numbers on
every device).

The methods take NumPy's arguments in NumPy's order (``size`` after the distribution's
parameters; before this version it came first):

    >>> g = clarray.random.default_rng(42)
    >>> x = g.normal(0.0, 1.0, size=1000, dtype="float32")
    >>> u = g.uniform(size=(4, 4))        # in [0, 1), float64

``size=None`` gives a 0-d device array (NumPy gives a Python float).
"""

from ._clarray import Generator

__all__ = ["Generator", "default_rng"]


def default_rng(seed=None):
    """A :class:`Generator` seeded with ``seed`` (an int in 0..2**64); ``None`` (the default,
    as NumPy's) takes a fresh seed from the operating system (``os.urandom``)."""
    return Generator(seed)
