"""The induction solver (the ``induction`` crate) from Python: the linear magnetic induction
equation ∂t B = ∇×(u×B) for a prescribed velocity u, with summation-by-parts finite differences,
SAT boundaries, explicit Runge–Kutta steps and optional divergence cleaning, its fields resident
on the OpenCL device from the first step to the last.

    >>> from clarray import induction
    >>> r = induction.run(case="confined_domain", order=4, n=16, final_time=0.1)
    >>> r.Bx.shape, r.last["error"], r.history["energy"][-1]

:func:`run` takes the options of the ``induction run`` command as keywords (``--cg-tol`` is
``cg_tol``), with the same defaults and the same checks; a bad option raises
:class:`~clarray.InvalidArgumentError` (a ``ValueError``) whose message says what to change.

Options (all keyword-only):

``case``
    ``rotation_2d`` (default), ``rotation_3d``, ``confined_domain``, ``periodic_advection``,
    ``rotation_3d_ez``, ``hall_periodic``, ``hall_travelling_wave``, ``hall_outflow``,
    ``alfven_periodic_2d``: test cases with exact solutions.
``order``
    Interior order of the SBP operators: 2, 4 (default) or 6.
``n``, ``nx``, ``ny``, ``nz``
    Grid points per axis (default 40; the planar cases get the fewest z points their stencil
    allows unless ``nz`` is given).
``final_time``, ``cfl``
    The final time (default: the case's own) and the CFL number (default 0.5; the Hall cases'
    own rule).
``precision``
    ``"f64"`` (default) or ``"f32"``.
``div_clean``, ``cg_norm``, ``cg_tol``, ``cg_max_iter``, ``cg_check_every``
    Divergence cleaning after every step by conjugate gradients, and its settings.
``laplacian``, ``potential_bc``
    The cleaning's form: ``"wide"`` (default) or ``"narrow"`` Laplacian, a ``"free"`` (default)
    or ``"dirichlet"`` potential (InductionEq's three forms; narrow needs dirichlet).
``integrator``, ``forms``, ``operator``, ``mode``, ``hall``
    Time integrator (``lsrk4`` default), forms of the product terms (``"product,central,split"``
    default), SBP family (``classical``/``extended``), ``resident``/``copy``, the Hall term.
``dissipation``, ``dissipation_form``, ``dissipation_rows``, ``mp2min``, ``mp2max``, ``cmin``, ``cmax``
    Artificial dissipation.
``length``, ``box``, ``local``, ``force``
    Periodic box side, the box ``(xmin, xmax, ymin, ymax, zmin, zmax)``, the work-group shape
    ``(x, y, z)``, run past 10^7 steps.
``history``
    Compute the norms after every step (default True; on the device, only the scalars come
    back).
``ctx``
    The :class:`~clarray.Context` to run on (default: the default context); the run uses its
    own profiling queue on that context.

The GIL is released while the solver runs; Ctrl-C stops it between steps
(``KeyboardInterrupt``). A run whose solution stops being finite raises
:class:`SolverUnstableError`.
"""

from ._clarray import induction as _native
from ._errors import SolverUnstableError

RunResult = _native.RunResult
run = _native.run

__all__ = ["run", "RunResult", "SolverUnstableError"]
