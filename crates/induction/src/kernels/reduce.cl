// Two-stage device reductions of SBP-weighted sums: stage one writes one partial sum per
// work-group, stage two sums the partials into one slot of a small result buffer that stays on
// the device (the CG scalars) or is read back (norms).
//
// The solver keeps its own because clarray's reductions take no SBP weights yet.
//
// Launch stage one with a 1-D range of whole work-groups of WG items (a power of two) and
// `scratch` of WG values; each work-item strides over the nodes owned (n counts them, x fastest;
// m is the node's index in the buffers).

REAL group_sum(REAL v, __local REAL* scratch) {
    const int l = get_local_id(0);
    scratch[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return scratch[0];
}

#define REDUCE_NODES(WEIGHT, EXPR)                                                                        \
    REAL acc = (REAL)0;                                                                           \
    for (idx_t n = get_global_id(0); n < OWNED_NODES; n += get_global_size(0)) {                  \
        const int i = IS + n % OWN_X, j = JS + (n / OWN_X) % OWN_Y, k = KS + n / ((idx_t)OWN_X * OWN_Y); \
        const idx_t m = IDX(i, j, k);                                                             \
        acc += (WEIGHT) * (EXPR);                                                                 \
    }                                                                                             \
    const REAL total = group_sum(acc, scratch);                                                   \
    if (get_local_id(0) == 0) partial[get_group_id(0)] = total;

REAL dot_at(const __global REAL* a, const __global REAL* b, int ncomp, idx_t m) {
    REAL s = (REAL)0;
    for (int c = 0; c < ncomp; ++c) s += a[c * NP + m] * b[c * NP + m];
    return s;
}

REAL err_at(const __global REAL* B, REAL t, int diff, int i, int j, int k, idx_t m) {
    const REAL x[3] = {coord(i, XMIN, DX), coord(j, YMIN, DY), coord(k, ZMIN, DZ)};
    REAL e[3];
    case_exact(x, t, e);
    REAL s = (REAL)0;
    for (int c = 0; c < 3; ++c) {
        const REAL d = diff ? B[c * NP + m] - e[c] : e[c];
        s += d * d;
    }
    return s;
}

// Σ w·(a·b) over ncomp components of NP values.
__kernel void wdot_partial(const __global REAL* a, const __global REAL* b, int ncomp,
                           __global REAL* partial, __local REAL* scratch) {
    REDUCE_NODES(weight(i, j, k), dot_at(a, b, ncomp, m))
}

// Σ a·b over the nodes owned, unweighted (the Euclidean inner product of InductionEq's CG).
__kernel void dot_partial(const __global REAL* a, const __global REAL* b, __global REAL* partial,
                          __local REAL* scratch) {
    REDUCE_NODES((REAL)1, a[m] * b[m])
}

// Σ w·|B − exact(t)|² (with `diff`) or Σ w·|exact(t)|² (without).
__kernel void werr_partial(const __global REAL* B, REAL t, int diff, __global REAL* partial,
                           __local REAL* scratch) {
    REDUCE_NODES(weight(i, j, k), err_at(B, t, diff, i, j, k, m))
}

// out[slot] = Σ partial[0..n), by one work-group.
__kernel void sum_partials(const __global REAL* partial, int n, __global REAL* out, int slot,
                           __local REAL* scratch) {
    REAL acc = (REAL)0;
    for (int m = get_local_id(0); m < n; m += get_local_size(0)) acc += partial[m];
    const REAL total = group_sum(acc, scratch);
    if (get_local_id(0) == 0) out[slot] = total;
}
