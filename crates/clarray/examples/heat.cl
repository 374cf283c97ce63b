// The heat-equation loop of examples/02_resident_vs_copy.rs, also timed by `clarray bench`
// (crates/clarray-cli/src/bench/kernels.rs). R (the diffusion number) comes as a define.
// Every kernel takes the same arguments: the runner passes one list to all of them.
#define ARGS global float* u, global float* v, global float* cols, global float* res, int n

// One explicit step from a to b; the boundary is held (copied).
inline void heat(global const float* a, global float* b, int n) {
    int x = get_global_id(0), y = get_global_id(1), i = y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { b[i] = a[i]; return; }
    b[i] = a[i] + R * (a[i - 1] + a[i + 1] + a[i - n] + a[i + n] - 4.0f * a[i]);
}
kernel void step_uv(ARGS) { heat(u, v, n); }
kernel void step_vu(ARGS) { heat(v, u, n); }
// Sum over each column of the squared change of the last step (one work-item per column, so
// neighbouring work-items read neighbouring addresses).
kernel void change_cols(ARGS) {
    int x = get_global_id(0);
    float s = 0.0f;
    for (int y = 0; y < n; ++y) { float d = u[y * n + x] - v[y * n + x]; s += d * d; }
    cols[x] = s;
}
kernel void change_norm(ARGS) {
    float s = 0.0f;
    for (int x = 0; x < n; ++x) s += cols[x];
    res[0] = sqrt(s);
}
// Used by the resident run only, to put the initial grid in place.
kernel void load(global const float* src, global float* u) { int i = get_global_id(0); u[i] = src[i]; }
