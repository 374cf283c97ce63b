// The induction equation's right-hand side, the Runge-Kutta stages, and the field operations of
// the divergence cleaning. Fields are 3 components of NP values each, component-major, x fastest.
// Also defined by the host: FORM_UIBJ, FORM_UJBI (0 central, 1 split, 2 product), INFLOW_ZERO.

#define NODE                                                                                      \
    const int i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);                  \
    const int idx = IDX(i, j, k);                                                                 \
    const REAL x[3] = {coord(i, XMIN, DX), coord(j, YMIN, DY), coord(k, ZMIN, DZ)};

// A derivative of the product a·b in one of the three forms, from D(ab), Db and Da.
REAL form(int f, REAL dab, REAL a, REAL db, REAL b, REAL da) {
    const REAL prod = a * db + b * da;
    return f == 0 ? dab : (f == 2 ? prod : (REAL)0.5 * (dab + prod));
}

// dB/dt at node (i, j, k), with the SAT penalties of inflow faces, into out[3].
void rhs(const __global REAL* B, const __global REAL* U, int i, int j, int k, const REAL x[3],
                REAL t, REAL out[3]) {
    const int idx = IDX(i, j, k);
    REAL dB[3][3], dU[3][3];  // dB[a][c] = D_a B_c
    for (int a = 0; a < 3; ++a) {
        const int p = AXIS_P(a), n = AXIS_N(a), s = AXIS_S(a);
        const REAL ih = AXIS_IH(a);
        for (int c = 0; c < 3; ++c) {
            dB[a][c] = ih * d1(B + c * NP, idx, p, n, s);
            dU[a][c] = ih * d1(U + c * NP, idx, p, n, s);
        }
    }
    const REAL divB = dB[0][0] + dB[1][1] + dB[2][2];
    REAL b[3], u[3];
    for (int c = 0; c < 3; ++c) {
        b[c] = B[c * NP + idx];
        u[c] = U[c * NP + idx];
    }
    for (int c = 0; c < 3; ++c) {
        REAL t1 = (REAL)0, t3 = (REAL)0;
        for (int a = 0; a < 3; ++a) {
            const int p = AXIS_P(a), n = AXIS_N(a), s = AXIS_S(a);
            const REAL ih = AXIS_IH(a);
            // d_a(u_c B_a)
            const REAL c1 = FORM_UIBJ == 2 ? (REAL)0 : ih * d1p(U + c * NP, B + a * NP, idx, p, n, s);
            t1 += form(FORM_UIBJ, c1, u[c], dB[a][a], b[a], dU[a][c]);
            // d_a(u_a B_c)
            const REAL c3 = FORM_UJBI == 2 ? (REAL)0 : ih * d1p(U + a * NP, B + c * NP, idx, p, n, s);
            t3 += form(FORM_UJBI, c3, u[a], dB[a][c], b[c], dU[a][a]);
        }
        out[c] = t1 - u[c] * divB - t3;
    }
#if !PERIODIC
    // SAT: at a face where u·n < 0, add (u·n)/(h·H_00)·(B − g).
    REAL g[3];
    int have_g = 0;
    for (int a = 0; a < 3; ++a) {
        const int p = AXIS_P(a), n = AXIS_N(a);
        for (int side = 0; side < 2; ++side) {
            if (p != (side == 0 ? 0 : n - 1)) continue;
            const REAL un = side == 0 ? -u[a] : u[a];
            if (un >= (REAL)0) continue;
            if (!have_g) {
#if INFLOW_ZERO
                g[0] = g[1] = g[2] = (REAL)0;
#else
                case_exact(x, t, g);
#endif
                have_g = 1;
            }
            const REAL sigma = un * AXIS_IH(a) / HW[0];
            for (int c = 0; c < 3; ++c) out[c] += sigma * (b[c] - g[c]);
        }
    }
#endif
}

// B = exact(t), U = u.
__kernel void init(__global REAL* B, __global REAL* U, REAL t) {
    NODE
    REAL b[3], u[3];
    case_exact(x, t, b);
    case_velocity(x, u);
    for (int c = 0; c < 3; ++c) {
        B[c * NP + idx] = b[c];
        U[c * NP + idx] = u[c];
    }
}

// SSPRK33 stage: out = a*B0 + b*(Bs + dt*L(Bs, t)). out may be B0 (read and written pointwise),
// never Bs (read at neighbours); Bs and U alias nothing written, so they are `restrict` and the
// compiler may keep their stencil values in registers across the derivatives.
__kernel void stage_ssp(const __global REAL* B0, const __global REAL* restrict Bs, __global REAL* out,
                        const __global REAL* restrict U, REAL a, REAL b, REAL dt, REAL t) {
    NODE
    REAL l[3];
    rhs(Bs, U, i, j, k, x, t, l);
    for (int c = 0; c < 3; ++c) {
        const int m = c * NP + idx;
        out[m] = a * B0[m] + b * (Bs[m] + dt * l[c]);
    }
}

// Low-storage stage: K = A*K + dt*L(Bin, t); Bout = Bin + Bc*K. The four buffers are distinct.
__kernel void stage_lsrk(const __global REAL* restrict Bin, __global REAL* restrict K,
                         __global REAL* restrict Bout, const __global REAL* restrict U, REAL A, REAL Bc,
                         REAL dt, REAL t) {
    NODE
    REAL l[3];
    rhs(Bin, U, i, j, k, x, t, l);
    for (int c = 0; c < 3; ++c) {
        const int m = c * NP + idx;
        const REAL kk = A * K[m] + dt * l[c];
        K[m] = kk;
        Bout[m] = Bin[m] + Bc * kk;
    }
}

// out = sign * (D_x F_0 + D_y F_1 + D_z F_2); with interior_only, 0 on boundary nodes.
__kernel void divergence(const __global REAL* F, __global REAL* out, REAL sign, int interior_only) {
    NODE
    (void)x;
    REAL acc = (REAL)0;
    int boundary = 0;
    for (int a = 0; a < 3; ++a) {
        const int p = AXIS_P(a), n = AXIS_N(a);
        acc += AXIS_IH(a) * d1(F + a * NP, idx, p, n, AXIS_S(a));
        boundary |= !PERIODIC && (p == 0 || p == n - 1);
    }
    out[idx] = (interior_only && boundary) ? (REAL)0 : sign * acc;
}

// G = −Div* f, the negative adjoint of the divergence in the H inner product: by the SBP property
// D_a* = −D_a + H_a⁻¹(e_last e_lastᵀ − e_first e_firstᵀ)/h_a, so G_a = D_a f except on the two
// boundary planes of axis a, where the boundary term f/(h_a H_00) is subtracted (last plane) or
// added (first plane). Periodic: G_a = D_a f. Then ⟨Div F, f⟩_H = −⟨F, G⟩_H for every F.
__kernel void gradient(const __global REAL* f, __global REAL* G) {
    NODE
    (void)x;
    for (int a = 0; a < 3; ++a) {
        const int p = AXIS_P(a), n = AXIS_N(a);
        REAL g = d1(f, idx, p, n, AXIS_S(a));
#if !PERIODIC
        if (p == 0) g += f[idx] / HW[0];
        if (p == n - 1) g -= f[idx] / HW[0];
#endif
        G[a * NP + idx] = AXIS_IH(a) * g;
    }
}

// y = a*x + b*y over n values; with b = 0, y is not read (it may hold anything, NaN included).
__kernel void axpby(__global REAL* y, const __global REAL* x, REAL a, REAL b, int n) {
    const int m = get_global_id(0);
    if (m < n) y[m] = b == (REAL)0 ? a * x[m] : a * x[m] + b * y[m];
}

// y = v over n values.
__kernel void fill(__global REAL* y, REAL v, int n) {
    const int m = get_global_id(0);
    if (m < n) y[m] = v;
}

// Conjugate gradients, scalars kept on the device in `scal`:
// alpha = scal[rr]/scal[pq]; x += alpha p; r -= alpha q.
__kernel void cg_xr(__global REAL* xv, __global REAL* r, const __global REAL* p, const __global REAL* q,
                    const __global REAL* scal, int rr, int pq) {
    const int m = get_global_id(0);
    const REAL den = scal[pq];
    const REAL alpha = den != (REAL)0 ? scal[rr] / den : (REAL)0;
    xv[m] += alpha * p[m];
    r[m] -= alpha * q[m];
}

// beta = scal[rr_new]/scal[rr_old]; p = r + beta p.
__kernel void cg_p(__global REAL* p, const __global REAL* r, const __global REAL* scal, int rr_new,
                   int rr_old) {
    const int m = get_global_id(0);
    const REAL den = scal[rr_old];
    const REAL beta = den != (REAL)0 ? scal[rr_new] / den : (REAL)0;
    p[m] = r[m] + beta * p[m];
}
