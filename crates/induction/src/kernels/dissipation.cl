// Artificial dissipation, added to the right-hand side where DISSIPATION is 1 (this file is
// compiled only then). Defined by the host (dissipation.rs, `header`): DISS_EPS (the strength ε
// of the high-order part), DISS_FORM (0 or undefined: high order, 1: first order, 2: adaptive)
// and the tables of the form:
// - high order: DQ (half the interior order), DROWS, DCOLS, the boundary block DSB[DROWS*DCOLS]
//   (the right end is the same block reversed in both indices) and the central stencil
//   DSI[2*DQ+1] at offsets −DQ … DQ;
// - first order: the SBP operator's own DB, DI (common.cl), in absolute value;
// - adaptive: DQ, the difference weights DWR[DWROWS*(DQ+1)] of the first nodes and DWI[DQ+1] of
//   the interior, the difference stencil DWC[DQ+1], DWSIGN = (−1)^DQ (the right end's weights are
//   the left ones reversed, times DWSIGN), and the switch's thresholds DISS_LO = MP2MIN·CMIN and
//   DISS_HI = MP2MAX·CMAX.
// The definitions are written out in dissipation.rs.

#ifndef DISS_FORM
#define DISS_FORM 0
#endif

#if DISS_FORM == 0
// (−H̃⁻¹ D̃ᵀ D̃ f) at node idx along one axis: p its index on the axis of n points, s the stride.
REAL diss1(const __global REAL* f, idx_t idx, int p, int n, int s) {
    REAL acc = (REAL)0;
#if PERIODIC
    for (int o = -DQ; o <= DQ; ++o) acc += DSI[o + DQ] * f[idx + (idx_t)wrap_offset(p, o, n, s) * s];
#else
    if (p < DROWS) {
        for (int c = 0; c < DCOLS; ++c) acc += DSB[p * DCOLS + c] * f[idx + (idx_t)(c - p) * s];
    } else if (p >= n - DROWS) {
        const int r = n - 1 - p;
        for (int c = 0; c < DCOLS; ++c) acc += DSB[r * DCOLS + c] * f[idx + (idx_t)(r - c) * s];
    } else {
        for (int o = -DQ; o <= DQ; ++o) acc += DSI[o + DQ] * f[idx + (idx_t)o * s];
    }
#endif
    return acc;
}
#else

#if DISS_FORM == 2
// The switch κ_k of the pair (b1, u1), (b2, u2) on an axis of spacing h: 0 where B is smooth
// there, 1 where it jumps, the square root of the linear ramp between.
REAL diss_kappa(int k, REAL h, REAL b1, REAL b2, REAL u1, REAL u2) {
    const REAL s = fmax(fabs(u1), fabs(u2)) * (b1 - b2) * (b1 - b2);
    const REAL kh = (REAL)(k * k) * h;
    const REAL lo = kh * (REAL)DISS_LO, hi = kh * (REAL)DISS_HI;
    if (s >= hi) return (REAL)1;
    if (s <= lo) return (REAL)0;
    return sqrt((s - lo) / (hi - lo));
}
#endif

// One first-order term: |w| times the weight of the pair (p, p + o) times (f(p+o) − f(p)); k is
// the distance of the two nodes (|o| unless o wraps round a periodic axis).
REAL diss_fo_term(const __global REAL* f, const __global REAL* u, idx_t idx, int o, int k, int s, REAL w, REAL h) {
    const idx_t at = idx + (idx_t)o * s;
    const REAL df = f[at] - f[idx];
    REAL weight = fmax(fabs(u[at]), fabs(u[idx]));
#if DISS_FORM == 2
    weight *= diss_kappa(k, h, f[at], f[idx], u[at], u[idx]);
#endif
    return fabs(w) * weight * df;
}

// The first-order dissipation (times κ where adaptive) at node idx along one axis: the SBP row
// of node p in absolute value, u the same component's velocity, h the spacing.
REAL diss_fo1(const __global REAL* f, const __global REAL* u, idx_t idx, int p, int n, int s, REAL h) {
    REAL acc = (REAL)0;
#if PERIODIC
    for (int q = 1; q <= HALF; ++q) {
        acc += diss_fo_term(f, u, idx, wrap_offset(p, q, n, s), q, s, DI[q - 1], h);
        acc += diss_fo_term(f, u, idx, wrap_offset(p, -q, n, s), q, s, DI[q - 1], h);
    }
#else
    if (p < ROWS) {
        for (int c = 0; c < COLS; ++c) acc += diss_fo_term(f, u, idx, c - p, abs(c - p), s, DB[p * COLS + c], h);
    } else if (p >= n - ROWS) {
        const int r = n - 1 - p;
        for (int c = 0; c < COLS; ++c) acc += diss_fo_term(f, u, idx, r - c, abs(r - c), s, DB[r * COLS + c], h);
    } else {
        for (int q = 1; q <= HALF; ++q) {
            acc += diss_fo_term(f, u, idx, q, q, s, DI[q - 1], h);
            acc += diss_fo_term(f, u, idx, -q, q, s, DI[q - 1], h);
        }
    }
#endif
    return acc / h;
}

#if DISS_FORM == 2
// Offset of the node p + o as InductionEq reads it: wrapped (periodic), or the node p itself
// where p + o is off the grid.
int diss_at(int p, int o, int n, int s) {
#if PERIODIC
    return wrap_offset(p, o, n, s);
#else
    (void)s;
    return (p + o < 0 || p + o >= n) ? 0 : o;
#endif
}

// Weight of the difference starting at p − DQ + j at node p.
REAL diss_w(int p, int n, int j) {
#if PERIODIC
    return DWI[j];
#else
    if (p < DWROWS) return DWR[p * (DQ + 1) + j];
    if (p >= n - DWROWS) return (REAL)DWSIGN * DWR[(n - 1 - p) * (DQ + 1) + DQ - j];
    return DWI[j];
#endif
}

// The high-order dissipation with each difference (starting at m) weighted by 1 − κ₁ of the
// pair (m + DQ, m + DQ − 1), at node idx along one axis.
REAL diss_ho1_adaptive(const __global REAL* f, const __global REAL* u, idx_t idx, int p, int n, int s, REAL h) {
    REAL acc = (REAL)0;
    for (int j = 0; j <= DQ; ++j) {
        const REAL w = diss_w(p, n, j);
        if (w == (REAL)0) continue;
        REAL delta = (REAL)0;
        for (int i = 0; i <= DQ; ++i) delta += DWC[i] * f[idx + (idx_t)diss_at(p, j - DQ + i, n, s) * s];
        const idx_t a = idx + (idx_t)diss_at(p, j, n, s) * s;
        const idx_t b = idx + (idx_t)diss_at(p, j - 1, n, s) * s;
        acc += ((REAL)1 - diss_kappa(1, h, f[a], f[b], u[a], u[b])) * w * delta;
    }
    return (REAL)DISS_EPS * acc;
}
#endif
#endif

// The dissipation of component c at node (i, j, k); U the velocity (first-order weights).
REAL dissipation_at(const __global REAL* B, const __global REAL* U, int c, int i, int j, int k) {
    const __global REAL* f = B + c * NP;
    const idx_t idx = IDX(i, j, k);
#if DISS_FORM == 0
    return (REAL)DISS_EPS * (diss1(f, idx, i, NX, 1) + diss1(f, idx, j, NY, NXL) + diss1(f, idx, k, NZ, NXL * NYL));
#else
    const __global REAL* u = U + c * NP;
    REAL acc = diss_fo1(f, u, idx, i, NX, 1, DX) + diss_fo1(f, u, idx, j, NY, NXL, DY) +
               diss_fo1(f, u, idx, k, NZ, NXL * NYL, DZ);
#if DISS_FORM == 2
    acc += diss_ho1_adaptive(f, u, idx, i, NX, 1, DX) + diss_ho1_adaptive(f, u, idx, j, NY, NXL, DY) +
           diss_ho1_adaptive(f, u, idx, k, NZ, NXL * NYL, DZ);
#endif
    return acc;
#endif
}
