// The test cases' velocity and exact solution (selected by CASE; see case.rs).
//   case_velocity(x, u): u(x);   case_exact(x, t, b): B(t, x).
//   U_ANALYTIC (set by the host, solver.rs `velocity_in_registers`): 1 where u is linear or
//   constant (`Case::velocity_is_linear`) and the device a GPU: the stage kernels then evaluate u
//   at each stencil point in registers instead of reading the field U, and take D_a u_c as the
//   constant case_velocity_gradient(a, c) (which the SBP operators reproduce exactly on linear
//   functions, up to round-off).

// Rotation of v by angle a about the unit axis k (Rodrigues).
void rotate(const REAL k[3], REAL a, const REAL v[3], REAL out[3]) {
    const REAL c = cos(a), s = sin(a);
    const REAL kv = k[0] * v[0] + k[1] * v[1] + k[2] * v[2];
    const REAL kxv[3] = {k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]};
    for (int d = 0; d < 3; ++d) out[d] = v[d] * c + kxv[d] * s + k[d] * kv * ((REAL)1 - c);
}

#if CASE == 1 || CASE == 2 || CASE == 5
// Rigid rotation u = k × x with unit angular speed about the axis k: a frozen-in field moves as
// B(t, x) = R(t) B0(R(-t) x).
#if CASE == 1
#define AXIS_K {(REAL)0, (REAL)0, (REAL)1}
#else
#define AXIS_K {(REAL)0.57735026918962576, (REAL)0.57735026918962576, (REAL)0.57735026918962576}
#endif

void case_velocity(const REAL x[3], REAL u[3]) {
    const REAL k[3] = AXIS_K;
    u[0] = k[1] * x[2] - k[2] * x[1];
    u[1] = k[2] * x[0] - k[0] * x[2];
    u[2] = k[0] * x[1] - k[1] * x[0];
}

// ∂_a u_c of the linear u = k × x (a constant); used where u is evaluated in registers.
REAL case_velocity_gradient(int a, int c) {
    const REAL k[3] = AXIS_K;
    // ∂_a (k × x)_c = ε_{c m a} k_m: nonzero where (c, a) are distinct.
    if (a == c) return (REAL)0;
    const int m = 3 - a - c;
    // ε_{c m a} = +1 for (c, m, a) cyclic.
    return ((m - c + 3) % 3 == 1) ? k[m] : -k[m];
}

// B0 = A ψ w × (x − c), ψ = exp(−20 |P(x − c)|²): divergence-free for any constant w, where
// the projection P drops the components along w (then ψ is constant along w and
// w · ∇ψ w × r = 0) or keeps them all (then ∇ψ ∥ r and (w × r) · r = 0).
// rotation_2d (InductionEq's rotation_2D): w = e_z, c = (½, 0, 0), A = 4, P drops z: the
//   field (−4y, 4x − 2, 0)·exp(−20((x − ½)² + y²)), independent of z.
// rotation_3d (InductionEq's rotation_3D): w = k = (1, 1, 1)/√3, A = ¼, P keeps all,
//   c = ((3 + √3)/12, −(3 − √3)/12, −√3/6) (|c| = ½, c ⊥ k).
// rotation_3d_ez: w = e_z, A = 4, P keeps all, c = (½, −½, 0)/√2.
void initial_field(const REAL x[3], REAL b[3]) {
#if CASE == 1
    const REAL w[3] = {(REAL)0, (REAL)0, (REAL)1}, c[3] = {(REAL)0.5, (REAL)0, (REAL)0}, amp = (REAL)4;
#elif CASE == 2
    const REAL w[3] = AXIS_K, amp = (REAL)0.25;
    const REAL c[3] = {(REAL)0.39433756729740644113, (REAL)-0.10566243270259355887, (REAL)-0.28867513459481288225};
#else
    const REAL w[3] = {(REAL)0, (REAL)0, (REAL)1}, amp = (REAL)4;
    const REAL c[3] = {(REAL)0.35355339059327376, (REAL)-0.35355339059327376, (REAL)0};
#endif
    const REAL r[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
#if CASE == 1
    const REAL r2 = r[0] * r[0] + r[1] * r[1];
#else
    const REAL r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
#endif
    const REAL psi = amp * exp((REAL)-20 * r2);
    b[0] = psi * (w[1] * r[2] - w[2] * r[1]);
    b[1] = psi * (w[2] * r[0] - w[0] * r[2]);
    b[2] = psi * (w[0] * r[1] - w[1] * r[0]);
}

void case_exact(const REAL x[3], REAL t, REAL b[3]) {
    const REAL k[3] = AXIS_K;
    REAL x0[3], b0[3];
    rotate(k, -t, x, x0);
    initial_field(x0, b0);
    rotate(k, t, b0, b);
}

#elif CASE == 3
// B = u, steady (u × B = 0), u·n = 0 on the boundary of [0, 1]³.
void case_velocity(const REAL x[3], REAL u[3]) {
    const REAL pi = (REAL)3.14159265358979323846;
    const REAL sx = sin(pi * x[0]), cx = cos(pi * x[0]);
    const REAL sy = sin(pi * x[1]), cy = cos(pi * x[1]);
    const REAL sz = sin(pi * x[2]), cz = cos(pi * x[2]);
    u[0] = sx * cy * cz;
    u[1] = cx * sy * cz;
    u[2] = (REAL)-2 * cx * cy * sz;
}

void case_exact(const REAL x[3], REAL t, REAL b[3]) {
    (void)t;
    case_velocity(x, b);
}

#elif CASE == 4
// Constant u = (1, 1, 1) on the periodic box of sides PERIOD_LX, PERIOD_LY, PERIOD_LZ (1 unless
// the host sets them); B(t, x) = B0(x − ut) with one period per side. Each component varies
// along the two other axes only, so B0 is divergence-free for any sides.
#ifndef PERIOD_LX
#define PERIOD_LX 1
#define PERIOD_LY 1
#define PERIOD_LZ 1
#endif
REAL case_velocity_gradient(int a, int c) {
    (void)a;
    (void)c;
    return (REAL)0;
}

void case_velocity(const REAL x[3], REAL u[3]) {
    (void)x;
    u[0] = (REAL)1;
    u[1] = (REAL)1;
    u[2] = (REAL)1;
}

void case_exact(const REAL x[3], REAL t, REAL b[3]) {
    const REAL tp = (REAL)6.28318530717958647692;
    const REAL y[3] = {tp * (x[0] - t) / (REAL)PERIOD_LX, tp * (x[1] - t) / (REAL)PERIOD_LY,
                       tp * (x[2] - t) / (REAL)PERIOD_LZ};
    b[0] = sin(y[1] + y[2]);
    b[1] = sin(y[0] + y[2]);
    b[2] = sin(y[0] + y[1]);
}

#elif CASE == 6
// Alfvén-type wave at 30° to the x axis: with e_par = (cos a, sin a, 0), e_perp = (−sin a,
// cos a, 0) and phase p = 2π(x·e_par + t), u = A(sin p e_perp + cos p e_z) and B = e_par + u.
// Both depend on x·e_par only, and u, B are divergence-free; u × B = u × e_par, whose curl is
// ∂t u, so ∂t B = ∇×(u × B). u changes with time: VARIABLE_U makes the solver refresh U at
// every stage time.
#define VARIABLE_U 1
#define ALFVEN_A ((REAL)0.1)
#define ALFVEN_COS ((REAL)0.86602540378443864676)
#define ALFVEN_SIN ((REAL)0.5)

void case_velocity_at(const REAL x[3], REAL t, REAL u[3]) {
    const REAL p = (REAL)6.28318530717958647692 * (x[0] * ALFVEN_COS + x[1] * ALFVEN_SIN + t);
    const REAL s = sin(p), c = cos(p);
    u[0] = -ALFVEN_A * ALFVEN_SIN * s;
    u[1] = ALFVEN_A * ALFVEN_COS * s;
    u[2] = ALFVEN_A * c;
}

void case_velocity(const REAL x[3], REAL u[3]) { case_velocity_at(x, (REAL)0, u); }

void case_exact(const REAL x[3], REAL t, REAL b[3]) {
    case_velocity_at(x, t, b);
    b[0] += ALFVEN_COS;
    b[1] += ALFVEN_SIN;
}
#else
#error "unknown CASE"
#endif
