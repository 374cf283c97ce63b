"""clarray.induction.run against references computed here in NumPy: the cases' exact solutions
written out from their definitions, the SBP norm and difference operators of order 2 written out
from the textbook (H = h·diag(1/2, 1, …, 1, 1/2); D = H⁻¹Q with rows (−1, 1)/h at the ends and
(−1/2, 0, 1/2)/h inside), and the convergence between two grids. Tiny grids: each new
configuration builds the solver's program (a few seconds on PoCL)."""

import numpy as np
import pytest

import clarray as cl
from clarray import induction


def sbp2_norm(n, h):
    """The order-2 SBP norm's diagonal (trapezoidal weights)."""
    w = np.full(n, h)
    w[0] = w[-1] = h / 2
    return w


def sbp2_derivative(n, h):
    """The order-2 SBP first derivative as a dense matrix."""
    d = np.zeros((n, n))
    d[0, :2] = [-1, 1]
    d[-1, -2:] = [-1, 1]
    for i in range(1, n - 1):
        d[i, i - 1], d[i, i + 1] = -0.5, 0.5
    return d / h


def weights(nx, ny, nz, h):
    return np.einsum("i,j,k->ijk", sbp2_norm(nx, h[0]), sbp2_norm(ny, h[1]), sbp2_norm(nz, h[2]))


def bounded_grid(lo, hi, shape):
    """The nodes of a bounded case: both ends included."""
    axes = [np.linspace(a, b, n) for a, b, n in zip(lo, hi, shape)]
    h = [(b - a) / (n - 1) for a, b, n in zip(lo, hi, shape)]
    return axes, h


def confined_exact(x, y, z):
    """confined_domain: the steady B = u = (sin πx cos πy cos πz, cos πx sin πy cos πz,
    −2 cos πx cos πy sin πz) on [0, 1]³."""
    p = np.pi
    return (np.sin(p * x) * np.cos(p * y) * np.cos(p * z),
            np.cos(p * x) * np.sin(p * y) * np.cos(p * z),
            -2 * np.cos(p * x) * np.cos(p * y) * np.sin(p * z))


def rotation_2d_exact(x, y, z, t):
    """rotation_2d: u = (−y, x, 0) rotates B₀ = 4ψ e_z × (x − c), ψ = exp(−20|(x − c)_xy|²),
    c = (1/2, 0, 0), rigidly: B(t, x) = R(t) B₀(R(−t) x), R(t) the rotation by t about z."""
    c, s = np.cos(t), np.sin(t)
    x0, y0 = c * x + s * y, -s * x + c * y  # R(−t) x
    psi = 4 * np.exp(-20 * ((x0 - 0.5) ** 2 + y0 ** 2))
    b0x, b0y = -psi * y0, psi * (x0 - 0.5)  # e_z × (x0 − c)
    return c * b0x - s * b0y, s * b0x + c * b0y, np.zeros_like(z)


def norm(w, *fields):
    return np.sqrt(sum((w * f ** 2).sum() for f in fields))


def divergence(bx, by, bz, h):
    nx, ny, nz = bx.shape
    return (np.einsum("ai,ijk->ajk", sbp2_derivative(nx, h[0]), bx)
            + np.einsum("aj,ijk->iak", sbp2_derivative(ny, h[1]), by)
            + np.einsum("ak,ijk->ija", sbp2_derivative(nz, h[2]), bz))


@pytest.fixture(scope="module")
def confined8():
    return induction.run(case="confined_domain", order=2, n=8, final_time=0.1)


def test_confined_domain_norms_are_those_of_the_returned_field(confined8):
    r = confined8
    (x, y, z), h = bounded_grid([0, 0, 0], [1, 1, 1], (8, 8, 8))
    for got, want in zip((r.x, r.y, r.z), (x, y, z)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    for b in (r.Bx, r.By, r.Bz):
        assert b.shape == (8, 8, 8) and b.dtype == np.float64
    X, Y, Z = np.meshgrid(x, y, z, indexing="ij")
    ex = confined_exact(X, Y, Z)
    w = weights(8, 8, 8, h)
    err = norm(w, r.Bx - ex[0], r.By - ex[1], r.Bz - ex[2])
    # The solver reports its error against the exact solution it evaluates on the device; the
    # same number from the returned field and the formula above: the field is the solver's, laid
    # out as [i, j, k] = (x_i, y_j, z_k), and the formula is the case's.
    assert r.last["error"] == pytest.approx(err, rel=1e-10)
    assert 1e-4 < err < 0.2  # a numerical solution, not the exact one copied
    assert r.last["energy"] == pytest.approx(norm(w, r.Bx, r.By, r.Bz) ** 2, rel=1e-12)
    assert r.last["relative_error"] == pytest.approx(err / norm(w, *ex), rel=1e-10)
    div = divergence(r.Bx, r.By, r.Bz, h)
    assert r.last["divergence"] == pytest.approx(norm(w, div), rel=1e-10)
    # Off the boundary faces.
    inner = np.zeros_like(w)
    inner[1:-1, 1:-1, 1:-1] = w[1:-1, 1:-1, 1:-1]
    assert r.last["divergence_interior"] == pytest.approx(norm(inner, div), rel=1e-10)


def test_history_and_summary(confined8):
    r = confined8
    hist = r.history
    assert r.steps >= 1 and r.time == pytest.approx(0.1, rel=1e-14)
    np.testing.assert_array_equal(hist["step"], np.arange(r.steps + 1))
    np.testing.assert_allclose(hist["time"], np.arange(r.steps + 1) * r.dt, rtol=1e-12)
    assert r.dt * r.steps == pytest.approx(0.1, rel=1e-12)
    # InductionEq's step: dt ≤ cfl·h/max|u| on the nodes (|u| ≤ 2 here, reached at corners).
    assert r.dt <= 0.5 * (1 / 7) / 2 * (1 + 1e-12)
    for key in ("energy", "error", "relative_error", "divergence", "divergence_interior"):
        assert hist[key].shape == (r.steps + 1,)
        assert hist[key][0] == pytest.approx(r.initial[key], rel=1e-14)
        assert hist[key][-1] == pytest.approx(r.last[key], rel=1e-14)
    # The initial field is the exact solution at t = 0 (error 0); its energy is its H-norm².
    (x, y, z), h = bounded_grid([0, 0, 0], [1, 1, 1], (8, 8, 8))
    ex = confined_exact(*np.meshgrid(x, y, z, indexing="ij"))
    assert hist["error"][0] == pytest.approx(0, abs=1e-14)
    assert hist["energy"][0] == pytest.approx(norm(weights(8, 8, 8, h), *ex) ** 2, rel=1e-12)
    assert r.config["case"] == "confined_domain" and r.config["n"] == (8, 8, 8)
    assert r.timing["launches"] > 0 and r.device
    assert "error=" in repr(r)


def test_confined_domain_converges(confined8):
    """The error (computed here from the returned fields) falls with the grid spacing at the
    rate of the order-2 SBP scheme with its first-order boundary closure (between 1 and 2;
    1.46 measured from n 8 to 16)."""
    errs = []
    for r, n in ((confined8, 8), (induction.run(case="confined_domain", order=2, n=16, final_time=0.1), 16)):
        (x, y, z), h = bounded_grid([0, 0, 0], [1, 1, 1], (n, n, n))
        ex = confined_exact(*np.meshgrid(x, y, z, indexing="ij"))
        errs.append(norm(weights(n, n, n, h), r.Bx - ex[0], r.By - ex[1], r.Bz - ex[2]))
    rate = np.log(errs[0] / errs[1]) / np.log(15 / 7)
    assert 1.2 < rate < 2.5, (errs, rate)


def test_rotation_2d_error_against_the_rotated_field():
    r = induction.run(case="rotation_2d", order=2, n=16, final_time=0.5)
    nx, ny, nz = r.Bx.shape
    assert (nx, ny) == (16, 16) and nz < 16  # planar: the fewest z points the operator takes
    (x, y, z), h = bounded_grid([-1, -1, -1], [1, 1, 1], (nx, ny, nz))
    ex = rotation_2d_exact(*np.meshgrid(x, y, z, indexing="ij"), 0.5)
    w = weights(nx, ny, nz, h)
    err = norm(w, r.Bx - ex[0], r.By - ex[1], r.Bz - ex[2])
    assert r.last["error"] == pytest.approx(err, rel=1e-10)
    assert err < 0.5 * norm(w, *ex)
    # The field has moved with the flow: much closer to the rotated field than to the initial.
    ex0 = rotation_2d_exact(*np.meshgrid(x, y, z, indexing="ij"), 0.0)
    assert norm(w, r.Bx - ex0[0], r.By - ex0[1], r.Bz - ex0[2]) > 2 * err


def test_div_clean_removes_the_divergence(confined8):
    r = induction.run(case="confined_domain", order=2, n=8, final_time=0.1, div_clean=True)
    (x, y, z), h = bounded_grid([0, 0, 0], [1, 1, 1], (8, 8, 8))
    div = norm(weights(8, 8, 8, h), divergence(r.Bx, r.By, r.Bz, h))
    assert r.last["divergence"] == pytest.approx(div, rel=1e-6, abs=1e-12)
    # Cleaned to the CG tolerance (relative 1e-8 by default) of a divergence of order 0.5.
    assert div < 1e-7 < confined8.last["divergence"]
    assert r.cg_iterations > 0 and r.cg_iterations == r.history["cg_iterations"].sum()
    assert np.isnan(r.history["cg_residual"][0])


def test_dirichlet_cleaning_forms_lower_the_interior_divergence(confined8):
    # InductionEq's Dirichlet forms impose psi = 0 on the boundary and clean the interior nodes:
    # the interior divergence computed here in NumPy (interior nodes only) drops.
    (x, y, z), h = bounded_grid([0, 0, 0], [1, 1, 1], (8, 8, 8))
    inner = np.zeros((8, 8, 8))
    inner[1:-1, 1:-1, 1:-1] = weights(8, 8, 8, h)[1:-1, 1:-1, 1:-1]
    before = norm(inner, divergence(confined8.Bx, confined8.By, confined8.Bz, h))
    for laplacian in ("wide", "narrow"):
        r = induction.run(case="confined_domain", order=2, n=8, final_time=0.1, div_clean=True,
                          laplacian=laplacian, potential_bc="dirichlet")
        after = norm(inner, divergence(r.Bx, r.By, r.Bz, h))
        assert after < before / 2, (laplacian, after, before)
    with pytest.raises(ValueError, match="potential_bc"):
        induction.run(case="confined_domain", order=2, n=8, potential_bc="dirichlet")


def test_f32_run_returns_float64_fields_close_to_f64(confined8):
    r = induction.run(case="confined_domain", order=2, n=8, final_time=0.1, precision="f32")
    assert r.Bx.dtype == np.float64 and r.config["precision"] == "f32"
    for a, b in ((r.Bx, confined8.Bx), (r.By, confined8.By), (r.Bz, confined8.Bz)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


@pytest.mark.parametrize("kwargs, words", [
    (dict(case="nope"), ["case", "nope", "confined_domain", "rotation_2d"]),
    (dict(order=3), ["order 3", "2, 4 and 6"]),
    (dict(case="confined_domain", order=2, n=2), ["nx = 2", "too small", "3"]),
    (dict(cg_tol=1e-3), ["cg_tol", "div_clean"]),
    (dict(cfl=3.0), ["cfl 3", "(0, 2]"]),
    (dict(precision="f16"), ["f16", "f32, f64"]),
    (dict(box=[0, 1, 0, 1, 0]), ["box", "6 numbers", "not 5"]),
    (dict(case="confined_domain", box=[0, 1.5, 0, 1, 0, 1]), ["whole numbers", "1.5"]),
    (dict(final_time=1e300), ["final_time", "steps", "force"]),
    (dict(integrator="euler"), ["integrator", "euler", "lsrk4"]),
])
def test_bad_options_raise_value_error(kwargs, words):
    with pytest.raises(ValueError) as e:
        induction.run(history=False, **kwargs)
    assert isinstance(e.value, cl.InvalidArgumentError)
    assert e.value.error_kind == "InvalidValue"
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    assert "--" not in str(e.value)  # the keywords' names, not the command line's flags


def test_module_exports():
    assert cl.induction is induction
    assert issubclass(induction.SolverUnstableError, ArithmeticError)
    assert "RunResult" in induction.run.__doc__ and "div_clean" in induction.__doc__
