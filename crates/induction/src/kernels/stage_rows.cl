// The Runge-Kutta stage kernels of the CPU layout (appended to the program only there; solver.rs
// `rows_source` defines XSEG). One work-item takes a segment of XSEG nodes of one x-row (j, k).
//
// Why a layout of its own: PoCL runs the work-items of a work-group as a loop, which LLVM
// vectorises only where the body has no calls left and no branches that differ between
// work-items. The one-node `stage` kernel has both (the boundary closures along x, the SAT at the
// faces) and ran as scalar code. Here each axis's derivatives are a loop over the segment's nodes
// with one stencil for all of them (along y and z the row's own, boundary closure or central;
// along x the central one away from the x-boundaries), contiguous in x, which LLVM vectorises;
// the closures along x, the dissipation and the SAT are taken node by node. The arithmetic of
// each node is that of `rhs` and `stage` (induction.cl), in the same order, so the fields are the
// same bit for bit as those of the one-node kernel in the CPU layout (u read, one node per item).

#if U_ANALYTIC || VX != 1 || HALL
#error "the row kernels read u, take one node at a time and have no Hall term"
#endif

// The most points of a stencil: a boundary-closure row or the central stencil.
#define RPTS (COLS > 2 * HALF ? COLS : 2 * HALF)

// The stencil at index p of an axis of n points (stride s), as `deriv_from_memory` takes it (the same points
// in the same order): offsets mo[q] (in points along the axis) and weights w[q]. Returns the count.
int row_stencil(int p, int n, int s, int mo[RPTS], REAL w[RPTS]) {
    (void)s;  // the axis's stride: which axis, for the periodic wrap
#if PERIODIC
    for (int q = 1; q <= HALF; ++q) {
        mo[2 * q - 2] = wrap_offset(p, q, n, s);
        w[2 * q - 2] = DI[q - 1];
        mo[2 * q - 1] = wrap_offset(p, -q, n, s);
        w[2 * q - 1] = -DI[q - 1];
    }
    return 2 * HALF;
#else
    if (p < ROWS) {
        for (int c = 0; c < COLS; ++c) {
            mo[c] = c - p;
            w[c] = DB[p * COLS + c];
        }
        return COLS;
    }
    if (p >= n - ROWS) {
        const int r = n - 1 - p;
        for (int c = 0; c < COLS; ++c) {
            mo[c] = r - c;
            w[c] = -DB[r * COLS + c];
        }
        return COLS;
    }
    for (int q = 1; q <= HALF; ++q) {
        mo[2 * q - 2] = q;
        w[2 * q - 2] = DI[q - 1];
        mo[2 * q - 1] = -q;
        w[2 * q - 1] = -DI[q - 1];
    }
    return 2 * HALF;
#endif
}

// `deriv_add` and `deriv_zero` for u read, with every loop over the components unrolled: PoCL's
// pipeline leaves those loops in place where they are not marked, and a loop over the nodes with
// loops inside is not vectorised.
void row_point_add(Deriv* d, int a, REAL w, const REAL b[3], const REAL u[3]) {
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        d->b[c] += w * b[c];
        d->u[c] += w * u[c];
#if FORM_UJBI != 2
        d->uab[c] += w * (u[a] * b[c]);
#endif
#if NEED_UCBA
        d->ucba[c] += w * (u[c] * b[a]);
#endif
    }
}

void row_deriv_zero(Deriv* d) {
#pragma unroll
    for (int c = 0; c < 3; ++c) d->b[c] = d->u[c] = d->uab[c] = d->ucba[c] = (REAL)0;
}

// Adds axis a's terms d_a(u_c B_a) − u_c d_a B_a − d_a(u_a B_c) at one node (u, b its values,
// d the sums along a) to out, as `rhs` does.
void row_axis_terms(const Deriv* d, int a, const REAL u[3], const REAL b[3], REAL out[3]) {
    const REAL ih[3] = {(REAL)1 / DX, (REAL)1 / DY, (REAL)1 / DZ};
    REAL dB[3], dU[3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        dB[c] = ih[a] * d->b[c];
        dU[c] = ih[a] * d->u[c];
    }
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        const REAL t1 = form(FORM_UIBJ, ih[a] * d->ucba[c], u[c], dB[a], b[a], dU[c]);
        const REAL t3 = form(FORM_UJBI, ih[a] * d->uab[c], u[a], dB[c], b[c], dU[a]);
#if FORM_SOURCE == 0
        out[c] += t1 - u[c] * dB[a] - t3;
#elif FORM_SOURCE == 2
        out[c] += t1 - t3;
#else
        const REAL src = (REAL)0.5 * (u[c] * dB[a] + ih[a] * d->ucba[c] - b[a] * dU[c]);
        out[c] += t1 - src - t3;
#endif
    }
}

// Adds axis a's terms at nodes lo ≤ i < hi of the segment to acc, with one stencil of NPTS
// points for all of them (offsets mo, weights w, s the axis's stride). A macro, so that NPTS is
// a constant and the stencil loop unrolls, which leaves a loop over i that LLVM vectorises.
#define ROW_AXIS(lo, hi, NPTS, mo, w, s, a)                                                       \
    for (int i = (lo); i < (hi); ++i) {                                                          \
        const idx_t m0 = row + i;                                                                 \
        Deriv d;                                                                                  \
        row_deriv_zero(&d);                                                                       \
        _Pragma("unroll") for (int q = 0; q < (NPTS); ++q) {                                      \
            const idx_t m = AXIS_AT(m0, (mo)[q], (s));                                            \
            REAL bp[3], up[3];                                                                    \
            _Pragma("unroll") for (int c = 0; c < 3; ++c) {                                       \
                bp[c] = Bs[c * NP + m];                                                           \
                up[c] = U[c * NP + m];                                                            \
            }                                                                                     \
            row_point_add(&d, (a), (w)[q], bp, up);                                               \
        }                                                                                         \
        REAL u0[3], b0[3], o[3];                                                                  \
        _Pragma("unroll") for (int c = 0; c < 3; ++c) {                                           \
            u0[c] = U[c * NP + m0];                                                               \
            b0[c] = Bs[c * NP + m0];                                                              \
            o[c] = acc[c][i - i0];                                                                \
        }                                                                                         \
        row_axis_terms(&d, (a), u0, b0, o);                                                       \
        _Pragma("unroll") for (int c = 0; c < 3; ++c) acc[c][i - i0] = o[c];                      \
    }

// Axis a (1 or 2: y or z; stride s) at the nodes i0 ≤ i < i1 of the row whose index on that axis
// is p, of n points.
#define ROW_AXIS_UNIFORM(p, n, s, a)                                                              \
    {                                                                                             \
        int mo[RPTS];                                                                             \
        REAL w[RPTS];                                                                             \
        if (row_stencil((p), (n), (s), mo, w) == 2 * HALF) {                                           \
            ROW_AXIS(i0, i1, 2 * HALF, mo, w, (s), (a))                                           \
        } else {                                                                                  \
            ROW_AXIS(i0, i1, COLS, mo, w, (s), (a))                                               \
        }                                                                                         \
    }

// One stage over the nodes i0 ≤ i < i1 of row (j, k); the stage's arguments (and the launch's
// box of nodes) as `stage` takes them.
void stage_row(const __global REAL* B0, const __global REAL* Bs, __global REAL* K, __global REAL* out,
               const __global REAL* U, REAL a, REAL b, REAL dt, REAL t, int lsrk, int bi0, int bi1,
               int bj0, int bj1, int bk0, int bk1) {
    const int i0 = bi0 + get_global_id(0) * XSEG, j = bj0 + get_global_id(1), k = bk0 + get_global_id(2);
    if (i0 >= bi1 || j >= bj1 || k >= bk1) return;
    const int i1 = min(i0 + XSEG, bi1);
    const idx_t row = IDX(0, j, k);
    REAL acc[3][XSEG];
    for (int c = 0; c < 3; ++c) {
        for (int i = 0; i < XSEG; ++i) acc[c][i] = (REAL)0;
    }
    // x: the central stencil where it applies (no wrap needed there, periodic or not), the
    // closures (or the wrapped stencil) node by node.
#if PERIODIC
    const int xlo = HALF, xhi = NX - HALF;
#else
    const int xlo = ROWS, xhi = NX - ROWS;
#endif
    const int clo = max(i0, xlo), chi = max(clo, min(i1, xhi));
    {
        int mo[2 * HALF];
        REAL w[2 * HALF];
        for (int q = 1; q <= HALF; ++q) {
            mo[2 * q - 2] = q;
            w[2 * q - 2] = DI[q - 1];
            mo[2 * q - 1] = -q;
            w[2 * q - 1] = -DI[q - 1];
        }
        ROW_AXIS(clo, chi, 2 * HALF, mo, w, 1, 0)
    }
    for (int i = i0; i < i1; ++i) {
        if (i >= clo && i < chi) continue;
        const idx_t m0 = row + i;
        Deriv d;
        deriv_from_memory(&d, Bs, U, m0, 0, i, NX, 1);
        REAL u0[3], b0[3], o[3];
        for (int c = 0; c < 3; ++c) {
            u0[c] = U[c * NP + m0];
            b0[c] = Bs[c * NP + m0];
            o[c] = acc[c][i - i0];
        }
        row_axis_terms(&d, 0, u0, b0, o);
        for (int c = 0; c < 3; ++c) acc[c][i - i0] = o[c];
    }
    ROW_AXIS_UNIFORM(j, NY, NXL, 1)
    ROW_AXIS_UNIFORM(k, NZ, NXL * NYL, 2)
#if DISSIPATION
    for (int i = i0; i < i1; ++i) {
        for (int c = 0; c < 3; ++c) acc[c][i - i0] += dissipation_at(Bs, U, c, i, j, k);
    }
#endif
#if !PERIODIC
    {
        const int face_row = j == 0 || j == NY - 1 || k == 0 || k == NZ - 1;
        for (int i = i0; i < i1; ++i) {
            if (!face_row && i != 0 && i != NX - 1) continue;
            const idx_t m0 = row + i;
            const REAL x[3] = {coord(i, XMIN, DX), coord(j, YMIN, DY), coord(k, ZMIN, DZ)};
            REAL u0[3], b0[3], o[3];
            for (int c = 0; c < 3; ++c) {
                u0[c] = U[c * NP + m0];
                b0[c] = Bs[c * NP + m0];
                o[c] = acc[c][i - i0];
            }
            sat(i, j, k, x, t, u0, b0, o);
            for (int c = 0; c < 3; ++c) acc[c][i - i0] = o[c];
        }
    }
#endif
    // The update, as `stage` makes it; P is read at the node only.
#if STAGE_2R
    const __global REAL* P = lsrk == 1 ? K : B0;
    if (lsrk == 2) {
        for (int c = 0; c < 3; ++c) {
            for (int i = i0; i < i1; ++i) {
                const idx_t m = c * NP + row + i;
                const REAL p = P[m], kk = dt * acc[c][i - i0];
                if (a != (REAL)0) K[m] = p + a * kk;
                out[m] = p + b * kk;
            }
        }
        return;
    }
#else
    const __global REAL* P = lsrk ? K : B0;
#endif
    if (lsrk) {
        for (int c = 0; c < 3; ++c) {
            for (int i = i0; i < i1; ++i) {
                const idx_t m = c * NP + row + i;
                const REAL kk = a * P[m] + dt * acc[c][i - i0];
                K[m] = kk;
                out[m] = Bs[m] + b * kk;
            }
        }
    } else {
        for (int c = 0; c < 3; ++c) {
            for (int i = i0; i < i1; ++i) {
                const idx_t m = c * NP + row + i;
                out[m] = a * P[m] + b * (Bs[m] + dt * acc[c][i - i0]);
            }
        }
    }
}

// The kernels of induction.cl's `stage_ssp`, `stage_2r` and `stage_lsrk`, with the same
// arguments, launched on ceil((IE − IS)/XSEG) × (JE − JS) × (KE − KS) work-items (those of the
// launch's box with STAGE_BOX).
__kernel void stage_ssp_rows(const __global REAL* B0, const __global REAL* restrict Bs, __global REAL* out,
                             const __global REAL* restrict U, REAL a, REAL b, REAL dt, REAL t
                             BOX_PARAMS) {
    stage_row(B0, Bs, out, out, U, a, b, dt, t, 0, BOX_ARGS);
}

#if STAGE_2R
__kernel void stage_2r_rows(const __global REAL* restrict X, const __global REAL* S, __global REAL* Xout,
                            __global REAL* Sout, const __global REAL* restrict U, REAL a, REAL b, REAL dt,
                            REAL t BOX_PARAMS) {
    stage_row(S, X, Xout, Sout, U, a, b, dt, t, 2, BOX_ARGS);
}
#endif

__kernel void stage_lsrk_rows(const __global REAL* restrict Bin, __global REAL* restrict K,
                              __global REAL* restrict Bout, const __global REAL* restrict U, REAL A,
                              REAL Bc, REAL dt, REAL t BOX_PARAMS) {
    stage_row(Bin, Bin, K, Bout, U, A, Bc, dt, t, 1, BOX_ARGS);
}
