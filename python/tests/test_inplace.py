"""In-place operators (NumPy's 'same_kind' casting rule) and assignment through integer and
boolean array indices, against NumPy."""

import operator

import numpy as np
import pytest

import clarray as cl
from conftest import random_array, tolerance

OPS = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "&=": operator.iand,
    "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift,
}
TARGETS = ["int32", "uint8", "int64", "float32", "float64", "complex64"]
OTHERS = [3, 2.5, 1j, "int8", "uint16", "int64", "float32", "float64", "complex128"]


def cases():
    rng = np.random.default_rng(11)
    names = sorted(OPS)
    out = []
    while len(out) < 18:  # each new combination builds a kernel (about a second on PoCL)
        op = names[rng.integers(len(names))]
        t = TARGETS[rng.integers(len(TARGETS))]
        o = OTHERS[rng.integers(len(OTHERS))]
        out.append((op, t, o))
    # The refusals NumPy makes, always covered.
    out += [("+=", "int32", 2.5), ("*=", "float32", 1j), ("+=", "int64", "float32"),
            ("-=", "uint8", "int8"), ("/=", "int64", 3), ("+=", "uint8", "uint16")]
    return out


def operand(rng, o, shape):
    if not isinstance(o, str):
        return o, o
    h = rng.integers(1, 4, size=shape).astype(o)  # no zero divisors, small exponents and shifts
    return h, cl.asarray(h)


@pytest.mark.parametrize("op,target,other", cases())
def test_inplace_operator_matches_numpy(op, target, other):
    rng = np.random.default_rng(abs(hash((op, target, str(other)))) % 2**32)
    h = random_array(rng, (3, 5), target)
    if op in ("**=",):
        h = rng.integers(0, 3, size=(3, 5)).astype(target)
    ho, do = operand(rng, other, (5,))
    d = cl.asarray(h)
    want = h.copy()
    try:
        OPS[op](want, ho)
    except TypeError as e:  # NumPy refuses the cast (or has no such loop): so must clarray
        with pytest.raises(TypeError):
            OPS[op](d, do)
        np.testing.assert_array_equal(d.get(), h)  # untouched
        return
    got = OPS[op](d, do)
    assert got is d
    np.testing.assert_allclose(d.get(), want, equal_nan=True, **tolerance(want.dtype))


def test_inplace_refusal_names_the_rule():
    a = cl.zeros(4, dtype=np.int32)
    with pytest.raises(cl.DTypeError, match="same_kind"):
        a += 0.5


def test_inplace_on_views_overlap_and_broadcast():
    h = np.arange(12, dtype=np.float64).reshape(3, 4)
    d = cl.asarray(h)
    d[:, ::2] += 100
    h[:, ::2] += 100
    d += d[::-1]  # overlapping source: computed as if copied first
    h += h[::-1].copy()
    d *= cl.asarray(np.arange(4.0))
    h *= np.arange(4.0)
    np.testing.assert_array_equal(d.get(), h)
    with pytest.raises(ValueError):
        v = cl.zeros(4)
        v += cl.zeros((3, 4))


def test_setitem_integer_arrays():
    rng = np.random.default_rng(5)
    h = rng.uniform(-4, 4, 10)
    d = cl.asarray(h)
    d[[0, 3, -1]] = [7.0, 8.0, 9.0]
    h[[0, 3, -1]] = [7.0, 8.0, 9.0]
    d[np.array([2, 5])] = 1  # a weak scalar
    h[np.array([2, 5])] = 1
    np.testing.assert_array_equal(d.get(), h)
    m = rng.integers(-9, 9, (5, 3)).astype(np.int16)
    dm = cl.asarray(m)
    dm[cl.asarray(np.array([4, -5], dtype=np.int32))] = np.array([1, 2, 3], dtype=np.int16)  # row broadcast
    m[np.array([4, -5])] = np.array([1, 2, 3], dtype=np.int16)
    dm[[[1], [2]]] = 0  # a 2-d index array
    m[[[1], [2]]] = 0
    np.testing.assert_array_equal(dm.get(), m)
    with pytest.raises(IndexError, match="out of bounds"):
        dm[[5]] = 1
    with pytest.raises(IndexError, match="out of bounds"):
        dm[[-6]] = 1
    with pytest.raises(IndexError, match="integer or boolean"):
        dm[np.array([0.5])] = 1
    with pytest.raises(ValueError):
        dm[[0, 1]] = np.zeros((3, 3), dtype=np.int16)


def test_setitem_boolean_masks():
    rng = np.random.default_rng(6)
    h = rng.uniform(-4, 4, (4, 6)).astype(np.float32)
    d = cl.asarray(h)
    d[d < 0] = 0
    h[h < 0] = 0
    np.testing.assert_array_equal(d.get(), h)
    mask = rng.integers(0, 2, (4, 6)).astype(bool)
    vals = rng.uniform(10, 20, mask.sum()).astype(np.float32)
    d[mask] = vals
    h[mask] = vals
    np.testing.assert_array_equal(d.get(), h)
    with pytest.raises(ValueError, match="places"):
        d[mask] = np.ones(mask.sum() + 1, dtype=np.float32)
    with pytest.raises(IndexError, match="shape"):
        d[np.ones(6, dtype=bool)] = 1
