"""Random numbers made on the device (Philox4x32-10: the same seed gives the same numbers on
every device).

    >>> g = clarray.random.default_rng(42)
    >>> x = g.normal((1000,), dtype="float32")
"""

from ._clarray import Generator

__all__ = ["Generator", "default_rng"]


def default_rng(seed=0):
    """A :class:`Generator` seeded with ``seed`` (an int in 0..2**64)."""
    return Generator(seed)
