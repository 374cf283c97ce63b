// Grid indexing and SBP derivatives.
//
// Defined by the host (solver/program.rs, as build options): REAL, IDX_T (the type of linear
// indices: int where 3·NP fits in one, long otherwise), NX, NY, NZ, HELD_NODES (the nodes the
// buffers hold: NX*NY*NZ, or a block's with its halo), DX, DY, DZ, XMIN, YMIN, ZMIN, PERIODIC
// (0 or 1), ROWS, COLS, HALF; and in the generated header before this file the constant arrays
// DB[ROWS*COLS] (boundary block), DI[HALF] (central stencil a_1..a_r), HW[ROWS] (norm weights),
// all from the one host-side table in sbp.rs.
//
// Helper functions are plain (neither `inline` nor `static`): C99 `inline` without a non-inline
// definition leaves an undefined symbol where a compiler chooses not to inline (OpenCL C follows
// C99), and `static` functions are not OpenCL C 1.0/1.1. Compilers inline them anyway.

// A block of a grid split among ranks (solver/part.rs; defined only there): the buffers hold the
// nodes I0 … I0 + NXL − 1, J0 … J0 + NYL − 1, K0 … K0 + NZL − 1 of the whole grid's NX × NY × NZ,
// of which IS … IE − 1, JS … JE − 1, KS … KE − 1 are this rank's own and the others halo layers
// copied from its neighbours. Every (i, j, k) in the kernels is the node's index in the whole
// grid (so boundaries, closures and coordinates are those of the whole grid); only IDX and the
// strides map it into the buffer. Without a block the buffers hold the whole grid.
#ifndef K0
#define I0 0
#define J0 0
#define K0 0
#define NXL NX
#define NYL NY
#define NZL NZ
#define IS 0
#define IE NX
#define JS 0
#define JE NY
#define KS 0
#define KE NZ
#endif

typedef IDX_T idx_t;
// Values of one component of a field (an idx_t), and the offset of plane k of them.
#define NP ((idx_t)HELD_NODES)
#define PLANE(k) ((idx_t)(k) * NXL * NYL)

// Axes split among ranks (periodic cases: there the neighbours' halo layers hold the wrapped
// nodes, so offsets along the axis do not wrap inside the block).
#ifndef SPLIT_X
#define SPLIT_X 0
#define SPLIT_Y 0
#define SPLIT_Z 0
#endif

// Linear index of node (i, j, k); a plane (NXL·NYL values) and each stencil offset fit in an int.
#define IDX(i, j, k) ((idx_t)((i) - I0) + (idx_t)NXL * ((idx_t)((j) - J0) + (idx_t)NYL * ((idx_t)(k) - K0)))

// The index of the point o points from index idx along the axis of stride s. The product is
// formed in idx_t: a periodic offset wraps across the axis (up to NZ − 1 planes), which times a
// plane's stride passes 2^31 on large grids although o and s each fit in an int.
#define AXIS_AT(idx, o, s) ((idx) + (idx_t)(o) * (idx_t)(s))

REAL coord(int p, REAL lo, REAL h) { return lo + (REAL)p * h; }

// Index on an axis of n points, periodic wrap of p + o.
int wrap(int p, int n) { return p < 0 ? p + n : (p >= n ? p - n : p); }

// The offset in points of the stencil point at offset o from index p on the axis of n points
// and stride s (the axis known by its stride: 1, NXL or NXL·NYL): wrapped periodically inside
// the buffer, or o where the axis is split among ranks (the halo holds the wrapped nodes).
int wrap_offset(int p, int o, int n, int s) {
    const int split = s == 1 ? SPLIT_X : (s == NXL ? SPLIT_Y : SPLIT_Z);
    return split ? o : wrap(p + o, n) - p;
}

// Node index i on an axis of n points, wrapped into the grid where periodic: the coordinate of
// a halo node of a split periodic axis is that of the node it copies.
#if PERIODIC
#define GRID_INDEX(i, n) wrap((i), (n))
#else
#define GRID_INDEX(i, n) (i)
#endif

// h*(D f) at node idx along one axis: p its index on that axis, n the points on it, s the stride.
// V(o) is the value at offset o along the axis.
#if PERIODIC
#define D1_BODY(V)                                                                                \
    REAL acc = (REAL)0;                                                                           \
    for (int q = 1; q <= HALF; ++q) acc += DI[q - 1] * (V(wrap_offset(p, q, n, s)) - V(wrap_offset(p, -q, n, s))); \
    return acc;
#else
#define D1_BODY(V)                                                                                \
    REAL acc = (REAL)0;                                                                           \
    if (p < ROWS) {                                                                               \
        for (int c = 0; c < COLS; ++c) acc += DB[p * COLS + c] * V(c - p);                        \
    } else if (p >= n - ROWS) {                                                                   \
        const int r = n - 1 - p;                                                                  \
        for (int c = 0; c < COLS; ++c) acc -= DB[r * COLS + c] * V(r - c);                        \
    } else {                                                                                      \
        for (int q = 1; q <= HALF; ++q) acc += DI[q - 1] * (V(q) - V(-q));                       \
    }                                                                                             \
    return acc;
#endif

// D f (without 1/h).
REAL d1(const __global REAL* f, idx_t idx, int p, int n, int s) {
#define V1(o) f[AXIS_AT(idx, o, s)]
    D1_BODY(V1)
#undef V1
}

// D (f g) (without 1/h).
REAL d1p(const __global REAL* f, const __global REAL* g, idx_t idx, int p, int n, int s) {
#define V2(o) (f[AXIS_AT(idx, o, s)] * g[AXIS_AT(idx, o, s)])
    D1_BODY(V2)
#undef V2
}

// Axis data of node (i, j, k): position on the axis, points, stride, 1/h.
#define AXIS_P(a) ((a) == 0 ? i : ((a) == 1 ? j : k))
#define AXIS_N(a) ((a) == 0 ? NX : ((a) == 1 ? NY : NZ))
#define AXIS_S(a) ((a) == 0 ? 1 : ((a) == 1 ? NXL : NXL * NYL))
#define AXIS_IH(a) ((a) == 0 ? (REAL)1 / DX : ((a) == 1 ? (REAL)1 / DY : (REAL)1 / DZ))
