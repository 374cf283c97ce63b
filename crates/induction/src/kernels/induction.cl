// The induction equation's right-hand side, the Runge-Kutta stages, and the field operations of
// the divergence cleaning. Fields are 3 components of NP values each, component-major, x fastest.
// Also defined by the host: FORM_UIBJ, FORM_UJBI (0 central, 1 split, 2 product), FORM_SOURCE
// (the term u_i d_j B_j: 0 central, 1 split, 2 zero), INFLOW_ZERO.

#ifndef FORM_SOURCE
#define FORM_SOURCE 0
#endif
// D(u_c B_a) is gathered where the form of d_j(u_i B_j) or the split source term uses it.
#define NEED_UCBA (FORM_UIBJ != 2 || FORM_SOURCE == 1)

#define NODE NODE_AT(get_global_id(0), get_global_id(1), get_global_id(2))
// Launched on the nodes held, halo layers included (solver.rs, `launch_held`).
#define NODE_HELD NODE_AT(I0 + (int)get_global_id(0), J0 + (int)get_global_id(1), K0 + (int)get_global_id(2))
#define NODE_AT(gi, gj, gk)                                                                       \
    const int i = (gi), j = (gj), k = (gk);                                                       \
    const idx_t idx = IDX(i, j, k);                                                                 \
    const REAL x[3] = {coord(GRID_INDEX(i, NX), XMIN, DX), coord(GRID_INDEX(j, NY), YMIN, DY),                \
                       coord(GRID_INDEX(k, NZ), ZMIN, DZ)};

// ---- The Runge-Kutta stage: right-hand side, SAT and stage update in one pass ----------------
//
// Layout for a GPU: work-item (i, j) of a 2-D work-group tile in (x, y) walks ZCHUNK planes of
// its column in z (global size NX/VX × NY × ceil(NZ/ZCHUNK) over the nodes owned, each of the first two rounded up
// to whole work-groups of lx × ly × 1). With VX = 2 a work-item holds the pair of nodes
// i0 = 2i, i0 + 1 in one vector (REAL2), so that each load and store moves 8 (f32) or 16 bytes:
// what keeps enough bytes in flight to fill the memory bus. Adjacent work-items hold adjacent
// x, so every load and store of a warp is one contiguous row segment. B (and u, where it is
// read) on the planes k − HALF … k + HALF stays in registers (a queue shifted by one plane per
// step), so the z-derivatives read no memory but the new plane; the x- and y-neighbours are the
// neighbours' own loads of the same plane, served by the cache of the work-group's tile. Each
// stencil value of B is loaded once per axis and used for every derivative that needs it
// (D B_c, D u_c and the products D(u_a B_c), D(u_c B_a)); where the case allows (U_ANALYTIC),
// u is evaluated in registers, so U is never read. A node moves B and K in, K and B out: 12 values (15 when U is
// read). The host uses VX = 2 only with U_ANALYTIC and an even NX (solver.rs, `vector_width`).

#define ZQ (2 * HALF + 1)
// Fields in the register queue: B, and u where it is read (u_c in slot 3 + c).
#define NQ (U_ANALYTIC ? 3 : 6)

#if VX == 2
#define VREAL REAL2
#define VLOAD(p, m) (*(const __global VREAL*)((p) + (m)))
#define VSTORE(p, m, v) (*(__global VREAL*)((p) + (m)) = (v))
#define LANE(v, l) ((l) == 0 ? (v).s0 : (v).s1)
#else
#define VREAL REAL
#define VLOAD(p, m) ((p)[m])
#define VSTORE(p, m, v) ((p)[m] = (v))
#define LANE(v, l) (v)
#endif

// A derivative of the product a·b in one of the three forms, from D(ab), Db and Da.
VREAL form(int f, VREAL dab, VREAL a, VREAL db, VREAL b, VREAL da) {
    const VREAL prod = a * db + b * da;
    return f == 0 ? dab : (f == 2 ? prod : (REAL)0.5 * (dab + prod));
}

// Derivatives along one axis a of B_c, u_c, u_a B_c and u_c B_a (c = 0, 1, 2), without 1/h.
//
// Where u is linear (U_ANALYTIC), u at the stencil point at offset o along axis a is
// u + o·h_a·∂_a u, so D(u_a B_c) = u_a·D B_c + h_a ∂_a u_a·M B_c and D(u_c B_a) = u_c·D B_a +
// h_a ∂_a u_c·M B_a, with M f = Σ_o w_o·o·f_o: the same operator applied to the same products
// (equal up to round-off), from two weighted sums of B instead of four of products. M is
// only used (and so only computed) where a gradient term is nonzero for the forms in use
// (rotations: ∂_a u_a = 0, so the default forms need none); `deriv_finish` forms the products.
typedef struct {
    VREAL b[3], u[3], uab[3], ucba[3];
#if U_ANALYTIC
    VREAL m[3];
#endif
} Deriv;

void deriv_zero(Deriv* d) {
    for (int c = 0; c < 3; ++c) {
        d->b[c] = d->u[c] = d->uab[c] = d->ucba[c] = (REAL)0;
#if U_ANALYTIC
        d->m[c] = (REAL)0;
#endif
    }
}

// Adds w × (the values at the stencil point at offset o) to d; u is read only where it is not
// linear.
void deriv_add(Deriv* d, int a, REAL w, int o, const VREAL b[3], const VREAL u[3]) {
    for (int c = 0; c < 3; ++c) {
        d->b[c] += w * b[c];
#if U_ANALYTIC
        (void)a;
        (void)u;
        d->m[c] += (w * (REAL)o) * b[c];
#else
        (void)o;
        d->u[c] += w * u[c];
#if FORM_UJBI != 2
        d->uab[c] += w * (u[a] * b[c]);
#endif
#if NEED_UCBA
        d->ucba[c] += w * (u[c] * b[a]);
#endif
#endif
    }
}

// Completes d for linear u: the product derivatives from D B and M B (u0 = u at the node, h
// the spacing along a).
void deriv_finish(Deriv* d, int a, const VREAL u0[3], REAL h) {
#if U_ANALYTIC
    for (int c = 0; c < 3; ++c) {
#if FORM_UJBI != 2
        d->uab[c] = u0[a] * d->b[c];
        if (case_velocity_gradient(a, a) != (REAL)0) d->uab[c] += h * case_velocity_gradient(a, a) * d->m[c];
#endif
#if NEED_UCBA
        d->ucba[c] = u0[c] * d->b[a];
        if (case_velocity_gradient(a, c) != (REAL)0) d->ucba[c] += h * case_velocity_gradient(a, c) * d->m[a];
#endif
    }
#else
    (void)d;
    (void)a;
    (void)u0;
    (void)h;
#endif
}

// u at node m (read where it is not linear; unused where it is).
void velocity_at(const __global REAL* U, idx_t m, VREAL u[3]) {
#if U_ANALYTIC
    (void)U;
    (void)m;
    u[0] = u[1] = u[2] = (REAL)0;
#else
    for (int c = 0; c < 3; ++c) u[c] = VLOAD(U, c * NP + m);
#endif
}

// u at the node(s) with coordinates x, in registers.
void velocity_in_registers(const VREAL x[3], VREAL u[3]) {
#if VX == 2
    REAL x0[3] = {x[0].s0, x[1].s0, x[2].s0}, x1[3] = {x[0].s1, x[1].s1, x[2].s1}, u0[3], u1[3];
    case_velocity(x0, u0);
    case_velocity(x1, u1);
    for (int c = 0; c < 3; ++c) u[c] = (VREAL)(u0[c], u1[c]);
#else
    case_velocity(x, u);
#endif
}

// Adds the stencil point at offset o along axis a (stride s), read from memory, with weight w.
// The point's memory offset is mo (o wrapped, periodic; o otherwise). With VX = 2 only for the
// y and z axes, whose offsets keep the pair's alignment.
void point_from_memory(Deriv* d, const __global REAL* B, const __global REAL* U, idx_t idx, int a, int s,
                       int mo, int o, REAL w) {
    const idx_t m = AXIS_AT(idx, mo, s);
    VREAL b[3], u[3];
    for (int c = 0; c < 3; ++c) b[c] = VLOAD(B, c * NP + m);
    velocity_at(U, m, u);
    deriv_add(d, a, w, o, b, u);
}

// The derivatives along axis a at node idx (index p on an axis of n points, stride s), every
// stencil point read from memory (x and y; z on the boundary planes). Periodic: offsets wrap.
void deriv_from_memory(Deriv* d, const __global REAL* B, const __global REAL* U, idx_t idx, int a, int p,
                       int n, int s) {
    deriv_zero(d);
#if PERIODIC
    for (int q = 1; q <= HALF; ++q) {
        point_from_memory(d, B, U, idx, a, s, wrap_offset(p, q, n, s), q, DI[q - 1]);
        point_from_memory(d, B, U, idx, a, s, wrap_offset(p, -q, n, s), -q, -DI[q - 1]);
    }
#else
    if (p < ROWS) {
        for (int c = 0; c < COLS; ++c) point_from_memory(d, B, U, idx, a, s, c - p, c - p, DB[p * COLS + c]);
    } else if (p >= n - ROWS) {
        const int r = n - 1 - p;
        for (int c = 0; c < COLS; ++c) point_from_memory(d, B, U, idx, a, s, r - c, r - c, -DB[r * COLS + c]);
    } else {
        for (int q = 1; q <= HALF; ++q) {
            point_from_memory(d, B, U, idx, a, s, q, q, DI[q - 1]);
            point_from_memory(d, B, U, idx, a, s, -q, -q, -DI[q - 1]);
        }
    }
#endif
}

#if VX == 2
// Vectors loaded on each side of the pair for its x-stencil.
#define HV ((HALF + 1) / 2)

// The x-derivatives of the pair i0, i0 + 1 where both use the central stencil (or periodic):
// the pair of values at offset o is (B[i0 + o], B[i0 + 1 + o]); pairs at even offsets are
// aligned vectors, loaded once; those at odd offsets are formed from two of them. bq holds the
// pair's own values.
void deriv_x_pair(Deriv* d, const __global REAL* B, idx_t idx, int i0, VREAL bq[NQ][ZQ]) {
    deriv_zero(d);
    VREAL v[3][2 * HV + 1];
#pragma unroll
    for (int h = -HV; h <= HV; ++h) {
        const int mo = PERIODIC ? wrap_offset(i0, 2 * h, NX, 1) : 2 * h;
        for (int c = 0; c < 3; ++c) v[c][HV + h] = h == 0 ? bq[c][HALF] : VLOAD(B, c * NP + idx + mo);
    }
    const VREAL u[3] = {(REAL)0, (REAL)0, (REAL)0};  // unused: VX = 2 only with U_ANALYTIC
#pragma unroll
    for (int q = 1; q <= HALF; ++q) {
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            const int o = side == 0 ? q : -q;
            VREAL b[3];
            for (int c = 0; c < 3; ++c) {
                b[c] = (o % 2 == 0) ? v[c][HV + o / 2] : (VREAL)(v[c][HV + (o - 1) / 2].s1, v[c][HV + (o + 1) / 2].s0);
            }
            deriv_add(d, 0, side == 0 ? DI[q - 1] : -DI[q - 1], o, b, u);
        }
    }
}

// D B_c and M B_c along x at node i (index idx) with its SBP row (boundary or central), scalar,
// all three components in one pass over the row. (Six calls of common.cl's `d1` and an `M`
// twin instead made the f32 stage kernel several times slower on an NVIDIA GPU.)
void x_sums(const __global REAL* B, idx_t idx, int i, REAL db[3], REAL dm[3]) {
    for (int c = 0; c < 3; ++c) db[c] = dm[c] = (REAL)0;
#define X_POINT(o, w)                                                                             \
    for (int c = 0; c < 3; ++c) {                                                                 \
        const REAL v = B[c * NP + idx + (o)];                                                     \
        db[c] += (w) * v;                                                                         \
        dm[c] += ((w) * (REAL)(o)) * v;                                                           \
    }
    if (i < ROWS) {
        for (int cc = 0; cc < COLS; ++cc) { X_POINT(cc - i, DB[i * COLS + cc]) }
    } else if (i >= NX - ROWS) {
        const int r = NX - 1 - i;
        for (int cc = 0; cc < COLS; ++cc) { X_POINT(r - cc, -DB[r * COLS + cc]) }
    } else {
        for (int q = 1; q <= HALF; ++q) {
            X_POINT(q, DI[q - 1])
            X_POINT(-q, -DI[q - 1])
        }
    }
#undef X_POINT
}

// The x-derivatives of a pair near an x-boundary (bounded domains only): node by node.
void deriv_x_lanes(Deriv* d, const __global REAL* B, idx_t idx, int i0) {
    REAL db0[3], dm0[3], db1[3], dm1[3];
    x_sums(B, idx, i0, db0, dm0);
    x_sums(B, idx + 1, i0 + 1, db1, dm1);
    deriv_zero(d);
    for (int c = 0; c < 3; ++c) {
        d->b[c] = (VREAL)(db0[c], db1[c]);
        d->m[c] = (VREAL)(dm0[c], dm1[c]);
    }
}
#endif

// The z-derivatives at an interior plane (or any plane, periodic), B from the register queue
// bq[c][HALF + o] = B_c at offset o (and bq[3 + c][HALF + o] = u_c where u is read).
void deriv_z_from_queue(Deriv* d, VREAL bq[NQ][ZQ]) {
    deriv_zero(d);
#pragma unroll
    for (int q = 1; q <= HALF; ++q) {
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            const int o = side == 0 ? q : -q;
            VREAL b[3], u[3];
            for (int c = 0; c < 3; ++c) {
                b[c] = bq[c][HALF + o];
                u[c] = U_ANALYTIC ? (REAL)0 : bq[NQ - 3 + c][HALF + o];  // unused where u is linear
            }
            deriv_add(d, 2, side == 0 ? DI[q - 1] : -DI[q - 1], o, b, u);
        }
    }
}

#if !PERIODIC
// SAT at node (i, j, k), one node: at a face where u·n < 0, add (u·n)/(h·H_00)·(B − g).
void sat(int i, int j, int k, const REAL x[3], REAL t, const REAL u[3], const REAL b[3], REAL out[3]) {
    const int pos[3] = {i, j, k}, len[3] = {NX, NY, NZ};
    const REAL ih[3] = {(REAL)1 / DX, (REAL)1 / DY, (REAL)1 / DZ};
    const REAL ih00 = (REAL)1 / HW[0];
    REAL g[3];
    int have_g = 0;
#pragma unroll
    for (int a = 0; a < 3; ++a) {
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            if (pos[a] != (side == 0 ? 0 : len[a] - 1)) continue;
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
            const REAL sigma = un * ih[a] * ih00;
            for (int c = 0; c < 3; ++c) out[c] += sigma * (b[c] - g[c]);
        }
    }
}
#endif

// dB/dt at the node(s) (i0 … i0 + VX − 1, j, k) of B, with the SAT penalties of inflow faces,
// into out[3]; bq holds B (and u where it is read) on the planes k − HALF … k + HALF of this
// column.
void rhs(const __global REAL* B, const __global REAL* U, int i0, int j, int k, const VREAL x[3], REAL t,
         VREAL bq[NQ][ZQ], VREAL out[3]) {
    const idx_t idx = IDX(i0, j, k);
    const REAL ih[3] = {(REAL)1 / DX, (REAL)1 / DY, (REAL)1 / DZ};
    const VREAL b[3] = {bq[0][HALF], bq[1][HALF], bq[2][HALF]};
    VREAL u[3];
#if U_ANALYTIC
    velocity_in_registers(x, u);
#else
    for (int c = 0; c < 3; ++c) u[c] = bq[NQ - 3 + c][HALF];
#endif
    // Every term is a sum over the axes of derivatives along that axis, so the axes are taken
    // one at a time and only one axis's derivatives are live (fewer registers, more work-items
    // resident on a GPU): out_c = Σ_a [∂_a(u_c B_a) − u_c D_a B_a − ∂_a(u_a B_c)].
    for (int c = 0; c < 3; ++c) out[c] = (REAL)0;
    // Unrolled, so that every array here is indexed by constants and stays in registers.
#pragma unroll
    for (int a = 0; a < 3; ++a) {
        Deriv d;
        if (a == 0) {
#if VX == 2
            if (PERIODIC || (i0 >= ROWS && i0 + 1 < NX - ROWS)) {
                deriv_x_pair(&d, B, idx, i0, bq);
            } else {
#if !PERIODIC
                deriv_x_lanes(&d, B, idx, i0);
#endif
            }
#else
            deriv_from_memory(&d, B, U, idx, 0, i0, NX, 1);
#endif
        } else if (a == 1) {
            deriv_from_memory(&d, B, U, idx, 1, j, NY, NXL);
        } else {
#if PERIODIC
            deriv_z_from_queue(&d, bq);
#else
            if (k < ROWS || k >= NZ - ROWS) {
                deriv_from_memory(&d, B, U, idx, 2, k, NZ, NXL * NYL);
            } else {
                deriv_z_from_queue(&d, bq);
            }
#endif
        }
        deriv_finish(&d, a, u, a == 0 ? DX : (a == 1 ? DY : DZ));
        VREAL dB[3], dU[3];  // D_a B_c, D_a u_c
        for (int c = 0; c < 3; ++c) {
            dB[c] = ih[a] * d.b[c];
#if U_ANALYTIC
            dU[c] = case_velocity_gradient(a, c);
#else
            dU[c] = ih[a] * d.u[c];
#endif
        }
        for (int c = 0; c < 3; ++c) {
            // d_a(u_c B_a)
            const VREAL t1 = form(FORM_UIBJ, ih[a] * d.ucba[c], u[c], dB[a], b[a], dU[c]);
            // d_a(u_a B_c)
            const VREAL t3 = form(FORM_UJBI, ih[a] * d.uab[c], u[a], dB[c], b[c], dU[a]);
#if FORM_SOURCE == 0
            out[c] += t1 - u[c] * dB[a] - t3;
#elif FORM_SOURCE == 2
            out[c] += t1 - t3;
#else
            // u_c d_a B_a split: ½(u_c D_a B_a + D_a(u_c B_a) − B_a D_a u_c).
            const VREAL src = (REAL)0.5 * (u[c] * dB[a] + ih[a] * d.ucba[c] - b[a] * dU[c]);
            out[c] += t1 - src - t3;
#endif
        }
    }
#if DISSIPATION
    for (int c = 0; c < 3; ++c) {
#if VX == 2
        out[c] += (VREAL)(dissipation_at(B, U, c, i0, j, k), dissipation_at(B, U, c, i0 + 1, j, k));
#else
        out[c] += dissipation_at(B, U, c, i0, j, k);
#endif
    }
#endif
#if HALL
    hall_rhs(B, U, i0, j, k, out);
#endif
#if !PERIODIC
    if (i0 == 0 || i0 + VX - 1 == NX - 1 || j == 0 || j == NY - 1 || k == 0 || k == NZ - 1) {
#pragma unroll
        for (int l = 0; l < VX; ++l) {
            REAL xl[3], ul[3], bl[3], ol[3];
            for (int c = 0; c < 3; ++c) {
                xl[c] = LANE(x[c], l);
                ul[c] = LANE(u[c], l);
                bl[c] = LANE(b[c], l);
                ol[c] = LANE(out[c], l);
            }
#if HALL
            hall_sat(i0 + l, j, k, U, ul, bl, ol);
#else
            sat(i0 + l, j, k, xl, t, ul, bl, ol);
#endif
            for (int c = 0; c < 3; ++c) {
#if VX == 2
                if (l == 0) out[c].s0 = ol[c];
                else out[c].s1 = ol[c];
#else
                out[c] = ol[c];
#endif
            }
        }
    }
#endif
}

// Plane index of offset kk in the queue: wrapped (periodic) or clamped to the planes held
// (bounded: planes outside them are only ever loaded where the boundary rows or the last owned
// plane do not use the queue).
int queue_plane(int kk) {
#if PERIODIC && !SPLIT_Z
    return wrap(kk, NZ);
#else
    return min(max(kk, K0), K0 + NZL - 1);
#endif
}

// Planes of B loaded ahead of the one shifted into the queue, and whether the pointwise operand
// (K, or B⁰ for SSPRK33) of the next plane is loaded one plane ahead: the loads a work-item
// has in flight while it computes, which is what keeps device memory busy (the stage kernel
// is bound by the latency of its loads, not by arithmetic).
#ifndef AHEAD
#define AHEAD 1
#endif
#ifndef PREFETCH_K
#define PREFETCH_K 1
#endif

// One stage over this work-item's column segment. SSPRK33 (lsrk = 0):
// out = a·B0 + b·(Bs + dt·L(Bs, t)). Low-storage (lsrk = 1): K = a·K + dt·L(Bs, t),
// out = Bs + b·K. Two-register (lsrk = 2, with STAGE_2R): K = B0 + a·dt·L, out = B0 + b·dt·L. Bs is read at neighbours and never written; out may be B0.
// The nodes bi0 ≤ i < bi1, bj0 ≤ j < bj1, bk0 ≤ k < bk1 (of those owned) are this launch's.
void stage(const __global REAL* B0, const __global REAL* Bs, __global REAL* K, __global REAL* out,
           const __global REAL* U, REAL a, REAL b, REAL dt, REAL t, int lsrk, int bi0, int bi1, int bj0,
           int bj1, int bk0, int bk1) {
    const int i0 = bi0 + get_global_id(0) * VX, j = bj0 + get_global_id(1);
    if (i0 >= bi1 || j >= bj1) return;  // the range is rounded up to whole work-groups
    const int k0 = bk0 + get_global_id(2) * ZCHUNK;
    const idx_t col = IDX(i0, j, 0);
    // The pointwise operand: read at this node only (K, or B⁰).
#if STAGE_2R
    const __global REAL* P = lsrk == 1 ? K : B0;
#else
    const __global REAL* P = lsrk ? K : B0;
#endif
    VREAL bq[NQ][ZQ], ahead[NQ][AHEAD], pq[3];
    // Planes k0 − HALF … k0 + HALF − 1 into slots 1 … ZQ − 1, and the AHEAD planes after them
    // ahead; each step shifts a plane from ahead into the queue and loads the next one before
    // it computes, so that the loads' latency is hidden behind the arithmetic of the plane.
#pragma unroll
    for (int o = 1; o < ZQ + AHEAD; ++o) {
        const idx_t m = col + PLANE(queue_plane(k0 - HALF - 1 + o));
        for (int c = 0; c < NQ; ++c) {
            const VREAL v = c < 3 ? VLOAD(Bs, c * NP + m) : VLOAD(U, (c - 3) * NP + m);
            if (o < ZQ) bq[c][o] = v;
            else ahead[c][o - ZQ] = v;
        }
    }
    for (int c = 0; c < 3; ++c) pq[c] = VLOAD(P, c * NP + col + PLANE(min(k0, bk1 - 1)));
#if VX == 2
    VREAL x[3] = {(VREAL)(coord(i0, XMIN, DX), coord(i0 + 1, XMIN, DX)), coord(j, YMIN, DY), (REAL)0};
#else
    VREAL x[3] = {coord(i0, XMIN, DX), coord(j, YMIN, DY), (REAL)0};
#endif
    for (int dk = 0; dk < ZCHUNK; ++dk) {
        const int k = k0 + dk;
        if (k >= bk1) break;
        const idx_t idx = col + PLANE(k);
        const idx_t next = col + PLANE(queue_plane(k + HALF + AHEAD));
        // The next plane's pointwise operand (clamped to the launch's planes: loaded, maybe
        // unused).
        const idx_t pnext = col + PLANE(min(k + 1, bk1 - 1));
        VREAL p[3];
#pragma unroll
        for (int c = 0; c < NQ; ++c) {
#pragma unroll
            for (int o = 0; o + 1 < ZQ; ++o) bq[c][o] = bq[c][o + 1];
            bq[c][ZQ - 1] = ahead[c][0];
#pragma unroll
            for (int o = 0; o + 1 < AHEAD; ++o) ahead[c][o] = ahead[c][o + 1];
            ahead[c][AHEAD - 1] = c < 3 ? VLOAD(Bs, c * NP + next) : VLOAD(U, (c - 3) * NP + next);
        }
#if PREFETCH_K
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            p[c] = pq[c];
            pq[c] = VLOAD(P, c * NP + pnext);
        }
#endif
        x[2] = coord(k, ZMIN, DZ);
        VREAL l[3];
        rhs(Bs, U, i0, j, k, x, t, bq, l);
        for (int c = 0; c < 3; ++c) {
            const idx_t m = c * NP + idx;
#if !PREFETCH_K
            p[c] = VLOAD(P, m);
#endif
#if STAGE_2R
            if (lsrk == 2) {
                const VREAL kk = dt * l[c];
                if (a != (REAL)0) VSTORE(K, m, p[c] + a * kk);
                VSTORE(out, m, p[c] + b * kk);
            } else
#endif
            if (lsrk) {
                const VREAL kk = a * p[c] + dt * l[c];
                VSTORE(K, m, kk);
                VSTORE(out, m, bq[c][HALF] + b * kk);
            } else {
                VSTORE(out, m, a * p[c] + b * (bq[c][HALF] + dt * l[c]));
            }
        }
    }
}

// B = exact(t), U = u.
__kernel void init(__global REAL* B, __global REAL* U, REAL t) {
    NODE_HELD
    REAL b[3], u[3];
    case_exact(x, t, b);
    case_velocity(x, u);
    for (int c = 0; c < 3; ++c) {
        B[c * NP + idx] = b[c];
        U[c * NP + idx] = u[c];
    }
}

// B = exact(t) at every node held, into a scratch field (the exact solution's pictures).
__kernel void exact_field(__global REAL* B, REAL t) {
    NODE_HELD
    REAL b[3];
    case_exact(x, t, b);
    for (int c = 0; c < 3; ++c) B[c * NP + idx] = b[c];
}

#ifdef VARIABLE_U
// U = u(t): where the case's velocity depends on time, the host refreshes U at each stage time.
__kernel void velocity(__global REAL* U, REAL t) {
    NODE_HELD
    REAL u[3];
    case_velocity_at(x, t, u);
    for (int c = 0; c < 3; ++c) U[c * NP + idx] = u[c];
}
#endif

// The nodes a stage kernel takes: on a block of a grid split among ranks (STAGE_BOX, defined
// by solver/part.rs) a box of its own nodes given by six more arguments, so that the nodes
// whose stencils reach no halo layer can be updated while the halo is exchanged and the others
// after it (solver/overlap.rs); else every node owned.
#if STAGE_BOX
#define BOX_PARAMS , int bi0, int bi1, int bj0, int bj1, int bk0, int bk1
#define BOX_ARGS bi0, bi1, bj0, bj1, bk0, bk1
#else
#define BOX_PARAMS
#define BOX_ARGS IS, IE, JS, JE, KS, KE
#endif

// SSPRK33 stage: out = a*B0 + b*(Bs + dt*L(Bs, t)). out may be B0 (read and written pointwise),
// never Bs (read at neighbours). Launched on NX × NY × ceil(NZ/ZCHUNK) work-items.
__kernel void stage_ssp(const __global REAL* B0, const __global REAL* restrict Bs, __global REAL* out,
                        const __global REAL* restrict U, REAL a, REAL b, REAL dt, REAL t BOX_PARAMS) {
    stage(B0, Bs, out, out, U, a, b, dt, t, 0, BOX_ARGS);
}

#if STAGE_2R
// Two-register (2R) stage: with Kₛ = dt*L(X, t), Xout = S + a*Kₛ (not written where a = 0, the
// last stage) and Sout = S + b*Kₛ. X is read at neighbours and is neither Xout nor Sout; S is
// read pointwise and may be X (first stage) or Sout (in place). Launched like stage_lsrk.
__kernel void stage_2r(const __global REAL* restrict X, const __global REAL* S, __global REAL* Xout,
                       __global REAL* Sout, const __global REAL* restrict U, REAL a, REAL b, REAL dt, REAL t
                       BOX_PARAMS) {
    stage(S, X, Xout, Sout, U, a, b, dt, t, 2, BOX_ARGS);
}
#endif

// Low-storage stage: K = A*K + dt*L(Bin, t); Bout = Bin + Bc*K. The four buffers are distinct.
// Launched on NX × NY × ceil(NZ/ZCHUNK) work-items.
__kernel void stage_lsrk(const __global REAL* restrict Bin, __global REAL* restrict K,
                         __global REAL* restrict Bout, const __global REAL* restrict U, REAL A, REAL Bc,
                         REAL dt, REAL t BOX_PARAMS) {
    stage(Bin, Bin, K, Bout, U, A, Bc, dt, t, 1, BOX_ARGS);
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

#if CLEAN_DIRICHLET
// G = D f along each axis (the SBP first derivative, no boundary term): the gradient of the
// cleaning with a Dirichlet potential (f = 0 on the boundary nodes), B <- B + G.
__kernel void gradient_plain(const __global REAL* f, __global REAL* G) {
    NODE
    (void)x;
    for (int a = 0; a < 3; ++a) G[a * NP + idx] = AXIS_IH(a) * d1(f, idx, AXIS_P(a), AXIS_N(a), AXIS_S(a));
}
#endif

#ifdef D2ROWS
// h^2 (D2 f) at node idx along one axis (index p of n points, stride s): the narrow-stencil SBP
// second derivative, boundary rows D2B (D2ROWS x D2COLS, the right end the left one reversed,
// same sign), central stencil D2C[0] f_p + sum_q D2C[q] (f_{p+q} + f_{p-q}).
REAL d2(const __global REAL* f, idx_t idx, int p, int n, int s) {
    REAL acc = (REAL)0;
    if (p < D2ROWS) {
        for (int c = 0; c < D2COLS; ++c) acc += D2B[p * D2COLS + c] * f[idx + (c - p) * s];
    } else if (p >= n - D2ROWS) {
        const int r = n - 1 - p;
        for (int c = 0; c < D2COLS; ++c) acc += D2B[r * D2COLS + c] * f[idx + (r - c) * s];
    } else {
        acc = D2C[0] * f[idx];
        for (int q = 1; q <= HALF; ++q) acc += D2C[q] * (f[idx + q * s] + f[idx - q * s]);
    }
    return acc;
}

// out = sign * sum_a D2_a f at the interior nodes, 0 on the boundary nodes: the cleaning's
// narrow-stencil Laplacian (f = 0 on the boundary nodes, where the CG never changes it).
__kernel void laplace_narrow(const __global REAL* f, __global REAL* out, REAL sign) {
    NODE
    (void)x;
    REAL acc = (REAL)0;
    int boundary = 0;
    for (int a = 0; a < 3; ++a) {
        const int p = AXIS_P(a), n = AXIS_N(a);
        const REAL ih = AXIS_IH(a);
        acc += ih * ih * d2(f, idx, p, n, AXIS_S(a));
        boundary |= p == 0 || p == n - 1;
    }
    out[idx] = boundary ? (REAL)0 : sign * acc;
}
#endif

// y = a*x + b*y over n values; with b = 0, y is not read (it may hold anything, NaN included).
__kernel void axpby(__global REAL* y, const __global REAL* x, REAL a, REAL b, long n) {
    const idx_t m = get_global_id(0);
    if (m < n) y[m] = b == (REAL)0 ? a * x[m] : a * x[m] + b * y[m];
}

// y = v over n values.
__kernel void fill(__global REAL* y, REAL v, long n) {
    const idx_t m = get_global_id(0);
    if (m < n) y[m] = v;
}

// Conjugate gradients, their scalars kept on the device (0-d arrays of clarray's sums, each
// at element `*_at` of its buffer): alpha = rr/pq; x += alpha p; r -= alpha q.
__kernel void cg_xr(__global REAL* xv, __global REAL* r, const __global REAL* p, const __global REAL* q,
                    const __global REAL* rr, long rr_at, const __global REAL* pq, long pq_at) {
    const idx_t m = get_global_id(0);
    const REAL den = pq[pq_at];
    const REAL alpha = den != (REAL)0 ? rr[rr_at] / den : (REAL)0;
    xv[m] += alpha * p[m];
    r[m] -= alpha * q[m];
}

// beta = rr_new/rr_old; p = r + beta p.
__kernel void cg_p(__global REAL* p, const __global REAL* r, const __global REAL* rr_new, long new_at,
                   const __global REAL* rr_old, long old_at) {
    const idx_t m = get_global_id(0);
    const REAL den = rr_old[old_at];
    const REAL beta = den != (REAL)0 ? rr_new[new_at] / den : (REAL)0;
    p[m] = r[m] + beta * p[m];
}
