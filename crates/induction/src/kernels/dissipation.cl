// High-order artificial dissipation, added to the right-hand side where DISSIPATION is 1 (this
// file is compiled only then). Defined by the host (solver.rs, `source`), from sbp.rs's
// `Sbp::dissipation`: DISS_EPS (the strength ε), DQ (half the interior order), DROWS, DCOLS, the
// boundary block DSB[DROWS*DCOLS] (the right end is the same block reversed in both indices)
// and the central stencil DSI[2*DQ+1] at offsets −DQ … DQ.

// (−H̃⁻¹ D̃ᵀ D̃ f) at node idx along one axis: p its index on the axis of n points, s the stride.
REAL diss1(const __global REAL* f, idx_t idx, int p, int n, int s) {
    REAL acc = (REAL)0;
#if PERIODIC
    for (int o = -DQ; o <= DQ; ++o) acc += DSI[o + DQ] * f[idx + (idx_t)(wrap(p + o, n) - p) * s];
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

// ε Σ_a (Diss_a B_c) at node (i, j, k).
REAL dissipation_at(const __global REAL* B, int c, int i, int j, int k) {
    const __global REAL* f = B + c * NP;
    const idx_t idx = IDX(i, j, k);
    return (REAL)DISS_EPS * (diss1(f, idx, i, NX, 1) + diss1(f, idx, j, NY, NX) + diss1(f, idx, k, NZ, NX * NY));
}
