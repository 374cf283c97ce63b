"""Operators and elementwise functions: NumPy broadcasting, NumPy 2 promotion (Python
scalars weak, NumPy scalars strong), values against NumPy's."""

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import clarray as cl
from conftest import DTYPES, assert_same, random_array

REAL = [d for d in DTYPES if d.kind != "c"]


def numpy_result(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


@given(da=st.sampled_from(DTYPES), db=st.sampled_from(DTYPES),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       op=st.sampled_from([operator.add, operator.sub, operator.mul, operator.eq, operator.ne]),
       seed=st.integers(0, 2**32 - 1), transpose=st.booleans())
def test_binary_operators_broadcast_and_promote_as_numpy(da, db, shapes, op, seed, transpose):
    if op in (operator.add, operator.sub, operator.mul) and da == db == np.bool_:
        op = operator.eq  # NumPy's + on bool is `or`; the library refuses bool arithmetic
    if op is operator.sub and np.bool_ in (da, db):
        op = operator.add
    rng = np.random.default_rng(seed)
    x = random_array(rng, shapes.input_shapes[0][::-1], da)
    y = random_array(rng, shapes.input_shapes[1], db)
    x = x.T if transpose else np.ascontiguousarray(x.T)
    want = numpy_result(op, x, y)
    assert_same(op(cl.asarray(x), cl.asarray(y)), want)


@given(dt=st.sampled_from(REAL), seed=st.integers(0, 2**32 - 1),
       op=st.sampled_from([operator.lt, operator.le, operator.gt, operator.ge, operator.truediv,
                           operator.floordiv, operator.mod, operator.pow]))
def test_ordering_and_division_match_numpy(dt, seed, op):
    rng = np.random.default_rng(seed)
    x = random_array(rng, (3, 4), dt)
    y = random_array(rng, (4,), dt)
    if dt == np.bool_ and op in (operator.floordiv, operator.mod, operator.pow, operator.truediv):
        dt, x, y = np.dtype(np.int8), x.astype(np.int8), y.astype(np.int8)
    if op in (operator.floordiv, operator.mod, operator.truediv):
        y = np.where(y == 0, np.ones_like(y), y)
    if op is operator.pow:
        y = np.abs(y) % 4 if dt.kind in "iu" else y
        x = np.abs(x) if dt.kind == "f" else x
    assert_same(op(cl.asarray(x), cl.asarray(y)), numpy_result(op, x, y))


@pytest.mark.parametrize("dt", ["bool", "int8", "uint16", "int64", "float16", "float32"])
@pytest.mark.parametrize("scalar", [True, 3, 2.5, 1 + 1j, np.float32(2), np.int16(3)])
def test_scalars_promote_as_numpy_2(dt, scalar):
    dt = np.dtype(dt)
    if dt == np.bool_ and isinstance(scalar, bool):
        scalar = 3
    x = np.arange(1, 5).astype(dt)
    a = cl.asarray(x)
    for f in (lambda p, q: p * q, lambda p, q: q * p):
        assert_same(f(a, scalar), numpy_result(f, x, scalar))


def test_python_int_out_of_bounds_is_overflow_error():
    a = cl.asarray(np.arange(3, dtype=np.uint8))
    with pytest.raises(OverflowError, match="out of bounds for uint8") as e:
        a + 300
    assert isinstance(e.value, cl.ScalarOverflowError) and not isinstance(e.value, TypeError)
    assert (e.value.kind, e.value.error_kind, e.value.value, e.value.dtype) == (
        "ScalarOverflow", "Overflow", 300, "uint8")
    assert_same(a < 300, np.ones(3, dtype=bool))  # comparisons are answered from the value


INTS = [np.dtype(d) for d in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]


@given(dt=st.sampled_from(INTS), above=st.booleans(), delta=st.integers(1, 2**70),
       op=st.sampled_from([operator.add, operator.mul, operator.sub, operator.floordiv]),
       scalar_first=st.booleans())
def test_integer_scalar_out_of_range_raises_overflow_error_as_numpy(dt, above, delta, op, scalar_first):
    info = np.iinfo(dt)
    v = info.max + delta if above else info.min - delta
    x = np.arange(1, 4).astype(dt)
    f = (lambda p, q: op(q, p)) if scalar_first else op
    with pytest.raises(OverflowError):  # NumPy 2's own rule: the reference
        numpy_result(f, x, v)
    with pytest.raises(OverflowError) as e:
        f(cl.asarray(x), v)
    assert isinstance(e.value, cl.ScalarOverflowError)
    assert e.value.value == v and e.value.dtype == (dt.name if abs(v) < 2**127 else None)
    assert str(v) in str(e.value)
    # The bounds themselves are in range: as NumPy computes them (wrapping).
    for edge in (info.min, info.max):
        assert_same(f(cl.asarray(x), edge), numpy_result(f, x, edge))


def test_out_of_range_assignment_and_fill_raise_overflow_error():
    a = cl.asarray(np.arange(4, dtype=np.int16))
    with pytest.raises(OverflowError) as e:
        a[...] = 40000
    assert (e.value.value, e.value.dtype) == (40000, "int16")
    np.testing.assert_array_equal(a.get(), np.arange(4, dtype=np.int16))  # untouched
    with pytest.raises(OverflowError):
        np.full(3, -1, dtype=np.uint32)  # NumPy 2 refuses too
    with pytest.raises(cl.ScalarOverflowError, match="-1 is out of bounds for uint32"):
        cl.full(3, -1, dtype=np.uint32)


def test_invalid_combinations_raise_type_errors():
    f = cl.asarray(np.ones(3, dtype=np.float32))
    with pytest.raises(TypeError, match="not defined for float32"):
        f & f
    c = cl.asarray(np.ones(3, dtype=np.complex64))
    with pytest.raises(TypeError):
        cl.floor(c)  # NumPy refuses it too (complex values are ordered, but not rounded down)


def test_shapes_that_do_not_broadcast_raise_value_errors():
    a, b = cl.zeros((2, 3)), cl.zeros((4,))
    with pytest.raises(ValueError) as e:
        a + b
    assert isinstance(e.value, cl.ShapeError)


UNARY = ["sqrt", "exp", "log", "sin", "cos", "tanh", "arctan", "floor", "ceil", "rint", "trunc",
         "abs", "negative", "sign", "isnan", "isfinite", "log1p", "expm1"]


@given(name=st.sampled_from(UNARY), dt=st.sampled_from(["float32", "float64", "int16", "uint8"]),
       seed=st.integers(0, 2**32 - 1))
def test_unary_functions_match_numpy(name, dt, seed):
    x = random_array(np.random.default_rng(seed), (2, 5), dt)
    if name in ("sqrt", "log", "log1p"):
        x = np.abs(x) + (1 if np.dtype(dt).kind in "iu" else 0.25)
        x = x.astype(dt)
    want = numpy_result(getattr(np, name), x)
    assert_same(getattr(cl, name)(cl.asarray(x)[:, ::-1]), numpy_result(getattr(np, name), x[:, ::-1]))
    assert want.shape == x.shape


@given(name=st.sampled_from(["minimum", "maximum", "arctan2", "hypot", "logical_and", "logical_xor", "power"]),
       dt=st.sampled_from(["float32", "float64", "int32"]), seed=st.integers(0, 2**32 - 1))
def test_binary_functions_match_numpy(name, dt, seed):
    rng = np.random.default_rng(seed)
    x, y = random_array(rng, (3, 1), dt), random_array(rng, (4,), dt)
    if name == "power":
        x, y = np.abs(x), np.abs(y) % 3
    assert_same(getattr(cl, name)(cl.asarray(x), cl.asarray(y)), numpy_result(getattr(np, name), x, y))


def test_where_and_unary_operators():
    h = np.linspace(-2, 2, 7)
    a = cl.asarray(h)
    assert_same(cl.where(a > 0, a, 0.0), np.where(h > 0, h, 0.0))
    assert_same(cl.where(a > 0, 1, a.astype(np.float32)), np.where(h > 0, 1, h.astype(np.float32)))
    assert_same(-a, -h)
    assert_same(abs(a), abs(h))
    i = np.arange(-3, 4, dtype=np.int8)
    assert_same(~cl.asarray(i), ~i)
    assert_same(2 ** cl.asarray(np.arange(4.0)), 2 ** np.arange(4.0))


def test_result_type_is_numpys():
    for x in DTYPES:
        for y in DTYPES:
            assert cl.result_type(x, y) == np.result_type(x, y), (x, y)


COMPLEX = [np.dtype("complex64"), np.dtype("complex128")]
# NumPy's special cases of complex `**` (npy_cpow): z**0 = 1 whatever z (0**0 and nan**0 too);
# 0**b = 0 where Re b > 0, else nan+nanj (Re b ≤ 0, b ≠ 0); real integer exponents in (-100, 100)
# multiply (negative ones take the reciprocal); any other exponent is exp(b·log a).
SPECIAL_BASES = [0j, 1 + 0j, -1 + 0j, 1j, -1j, -2 + 0j, 0.5 - 0.25j, 3 + 4j, complex("nan"),
                 complex(0, float("nan")), -0.0 + 0j]
SPECIAL_EXPONENTS = [0j, -0.0 + 0j, 1 + 0j, 2 + 0j, 3 + 0j, -1 + 0j, -2 + 0j, 7 + 0j, -13 + 0j,
                     99 + 0j, 100 + 0j, -100 + 0j, 0.5 + 0j, 1j, -1 + 1j, 2 + 1j, 2.5 - 0.5j,
                     complex("nan"), 1e-300 + 0j]


def assert_parts_match(got, want, rtol):
    """Real and imaginary parts apart: NaN where NumPy has NaN, inf where it has inf."""
    for part in (np.real, np.imag):
        np.testing.assert_allclose(part(got), part(want), rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("dt", COMPLEX)
def test_complex_power_special_values_as_numpy(dt):
    a = np.array([b for b in SPECIAL_BASES for _ in SPECIAL_EXPONENTS], dtype=dt)
    b = np.array([e for _ in SPECIAL_BASES for e in SPECIAL_EXPONENTS], dtype=dt)
    want = numpy_result(np.power, a, b)
    got = cl.asarray(a) ** cl.asarray(b)
    assert got.dtype == want.dtype
    assert_parts_match(got.get(), want, rtol=1e-5 if dt == np.complex64 else 1e-13)


def complex_operand(rng, shape, dtype, exponent):
    """Random complex values with a share of zeros, real integers and pure imaginaries."""
    v = random_array(rng, shape, dtype) * (0.8 if exponent else 1)
    pick = rng.integers(0, 6, size=shape)
    ints = rng.integers(-5, 6, size=shape).astype(dtype)
    v = np.where(pick == 0, ints, v)
    v = np.where(pick == 1, (1j * v.imag).astype(dtype), v)
    if not exponent:
        v = np.where(rng.integers(0, 8, size=shape) == 0, np.zeros_like(v), v)
    return v.astype(dtype)


@given(da=st.sampled_from(COMPLEX + [np.dtype("float32"), np.dtype("int16")]),
       db=st.sampled_from(COMPLEX + [np.dtype("float64"), np.dtype("int8")]),
       seed=st.integers(0, 2**32 - 1), swap=st.booleans())
def test_complex_power_matches_numpy(da, db, seed, swap):
    if da.kind != "c" and db.kind != "c":
        db = np.dtype("complex64")
    if swap:
        da, db = db, da
    rng = np.random.default_rng(seed)
    x = complex_operand(rng, (3, 4), da, False) if da.kind == "c" else random_array(rng, (3, 4), da)
    y = complex_operand(rng, (4,), db, True) if db.kind == "c" else rng.integers(-3, 4, size=(4,)).astype(db)
    want = numpy_result(np.power, x, y)
    got = cl.asarray(x) ** cl.asarray(y)
    assert got.dtype == want.dtype
    # Relative to |result|, as the parts of exp(b·log a) share one rounding of the angle.
    rtol = 2e-5 if want.dtype == np.complex64 else 1e-12
    np.testing.assert_allclose(got.get(), want, rtol=rtol, atol=1e-30, equal_nan=True)
    assert_same(cl.power(cl.asarray(x), cl.asarray(y)), want)


@pytest.mark.parametrize("dt", ["complex64", "complex128", "float32"])
@pytest.mark.parametrize("scalar", [2, -3, 0, 0.5, 1 + 1j, -2j, np.complex64(1 - 1j), np.complex128(0.5j)])
def test_complex_power_with_scalars_promotes_as_numpy_2(dt, scalar):
    if dt == "float32" and not np.iscomplexobj(scalar):
        scalar = scalar * 1j if scalar else 1j
    x = (np.arange(1, 6) * (0.5 - 0.75j)).astype(dt) if dt != "float32" else np.linspace(0.5, 3, 5, dtype=dt)
    a = cl.asarray(x)
    for f in (lambda p, q: p ** q, lambda p, q: q ** p):
        want = numpy_result(f, x, scalar)
        got = f(a, scalar)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        rtol = 2e-5 if want.dtype == np.complex64 else 1e-12
        np.testing.assert_allclose(got.get(), want, rtol=rtol, atol=1e-30, equal_nan=True)
