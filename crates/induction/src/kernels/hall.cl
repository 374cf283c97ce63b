// The Hall term, compiled where HALL is 1 (Config::hall). Defined by the host (solver.rs,
// `source`): HALL_RHO, the case's density ρ (constant in every case that has one).
//
// B moves with u − J, J = curl B/ρ. The part of the right-hand side that J adds,
// −curl(J × B)_i = Σ_j ∂_j(J_j B_i − J_i B_j), is taken in conservative central form,
// Σ_j D_j(J_j B_i − J_i B_j); the forms of Config::forms apply to u's part only. J is stored in
// components 3–5 of the field U (components 0–2 hold u): `hall_prepare` computes it, and u at
// the stage's time, from the stage's input field before every stage. On bounded domains the
// outflow penalties of `hall_sat` replace the inflow ones of `sat` on every face.

#if VX != 1 || U_ANALYTIC
#error "the Hall term needs one node per work-item and u read from U"
#endif

#ifndef CASE_VELOCITY_T
#if VARIABLE_U
// A velocity of the linear cases that depends on time (`alfven_periodic_2d`).
void case_velocity_t(const REAL x[3], REAL t, REAL u[3]) { case_velocity_at(x, t, u); }
#else
// A steady velocity.
void case_velocity_t(const REAL x[3], REAL t, REAL u[3]) {
    (void)t;
    case_velocity(x, u);
}
#endif
#endif

// Component c of J.
#define HALL_J(U, c) ((U) + (3 + (c)) * NP)

// U = (u(t), curl B/ρ): u at every node held, halo layers included (launched like `NODE_HELD`
// kernels, solver.rs `launch_held`; a halo node's coordinate is that of the node it copies), J at
// the nodes owned only, D_a B_c with the SBP operator (its boundary rows at the whole grid's
// bounded faces) from B's refreshed halo. On a split grid the host then refreshes J's halo
// layers from the neighbours, since the stage differentiates J × B there. B is read at
// neighbours, U written.
__kernel void hall_prepare(const __global REAL* restrict B, __global REAL* restrict U, REAL t) {
    const int i = I0 + (int)get_global_id(0), j = J0 + (int)get_global_id(1), k = K0 + (int)get_global_id(2);
    const idx_t idx = IDX(i, j, k);
    const REAL x[3] = {coord(GRID_INDEX(i, NX), XMIN, DX), coord(GRID_INDEX(j, NY), YMIN, DY),
                       coord(GRID_INDEX(k, NZ), ZMIN, DZ)};
    REAL u[3];
    case_velocity_t(x, t, u);
    for (int c = 0; c < 3; ++c) U[c * NP + idx] = u[c];
    if (i < IS || i >= IE || j < JS || j >= JE || k < KS || k >= KE) return;  // a halo node
    REAL d[3][3];  // d[a][c] = D_a B_c
    for (int a = 0; a < 3; ++a) {
        for (int c = 0; c < 3; ++c) {
            d[a][c] = c == a ? (REAL)0 : AXIS_IH(a) * d1(B + c * NP, idx, AXIS_P(a), AXIS_N(a), AXIS_S(a));
        }
    }
    const REAL curl[3] = {d[1][2] - d[2][1], d[2][0] - d[0][2], d[0][1] - d[1][0]};
    for (int c = 0; c < 3; ++c) HALL_J(U, c)[idx] = curl[c] / (REAL)HALL_RHO;
}

// Adds Σ_a D_a(J_a B_c − J_c B_a) to out[c] at node (i, j, k) (the term a = c vanishes).
void hall_rhs(const __global REAL* B, const __global REAL* U, int i, int j, int k, REAL out[3]) {
    const idx_t idx = IDX(i, j, k);
    for (int a = 0; a < 3; ++a) {
        const int p = AXIS_P(a), n = AXIS_N(a), s = AXIS_S(a);
        for (int c = 0; c < 3; ++c) {
            if (c == a) continue;
            out[c] += AXIS_IH(a) * (d1p(HALL_J(U, a), B + c * NP, idx, p, n, s) -
                                    d1p(HALL_J(U, c), B + a * NP, idx, p, n, s));
        }
    }
}

#if !PERIODIC
// The outflow ("directional do-nothing") penalty at node (i, j, k), on every face it lies on:
// with the test velocity v = ½u − J and the outward normal component v_n = ±v_a,
// (min(v_n, 0)·B + (B·n)·J)/(h_a H_00). It imposes no boundary data.
void hall_sat(int i, int j, int k, const __global REAL* U, const REAL u[3], const REAL b[3], REAL out[3]) {
    const idx_t idx = IDX(i, j, k);
    const int pos[3] = {i, j, k}, len[3] = {NX, NY, NZ};
    const REAL ih[3] = {(REAL)1 / DX, (REAL)1 / DY, (REAL)1 / DZ};
    REAL J[3];
    for (int c = 0; c < 3; ++c) J[c] = HALL_J(U, c)[idx];
    for (int a = 0; a < 3; ++a) {
        for (int side = 0; side < 2; ++side) {
            if (pos[a] != (side == 0 ? 0 : len[a] - 1)) continue;
            const REAL sn = side == 0 ? (REAL)-1 : (REAL)1;
            const REAL vn = sn * ((REAL)0.5 * u[a] - J[a]);
            const REAL sigma = ih[a] / HW[0];
            for (int c = 0; c < 3; ++c) out[c] += sigma * ((vn < (REAL)0 ? vn : (REAL)0) * b[c] + sn * b[a] * J[c]);
        }
    }
}
#endif
