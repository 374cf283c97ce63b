// The Hall cases (case.rs: Case::HallPeriodic, HallTravellingWave, HallOutflow): velocity and
// exact solution, compiled in place of cases.cl where one of them is the case. Their velocity
// depends on time, so they define case_velocity_t(x, t, u) too (CASE_VELOCITY_T), which the
// Hall term's preparation kernel (hall.cl) evaluates at every stage's time.
#define CASE_VELOCITY_T 1

#if CASE == 10 || CASE == 12
// u(t, x) = v(x + α t n), v = (cos ky + sin kz, cos kz + sin kx, cos kx + sin ky), a Beltrami
// field (curl v = k v) with α = ½, k = (1 − α²)/α, n = (1, 1, 1)/√3; B = α u + n. Then
// u − curl B = α² u and curl(α² u × n) = α² (n·∇) u = α ∂_t u, so B solves the equation
// with the Hall term (ρ = 1).
#define HALL_ALPHA ((REAL)0.5)
void case_velocity_t(const REAL x[3], REAL t, REAL u[3]) {
    const REAL k = ((REAL)1 - HALL_ALPHA * HALL_ALPHA) / HALL_ALPHA;
    const REAL shift = HALL_ALPHA * k * t * (REAL)0.57735026918962576;
    const REAL px = k * x[0] + shift, py = k * x[1] + shift, pz = k * x[2] + shift;
    u[0] = cos(py) + sin(pz);
    u[1] = cos(pz) + sin(px);
    u[2] = cos(px) + sin(py);
}

void case_exact(const REAL x[3], REAL t, REAL b[3]) {
    REAL u[3];
    case_velocity_t(x, t, u);
    for (int c = 0; c < 3; ++c) b[c] = HALL_ALPHA * u[c] + (REAL)0.57735026918962576;
}

#elif CASE == 11
// A circularly polarised wave along z: ξ = kz − ωt, s = k u_z − ω, Ω = (s² − k² B_z²)/(B_z s k²),
// B = (cos Ωξ, sin Ωξ, B_z), u = (f cos Ωξ + 1, f sin Ωξ + 1, u_z), f = k B_z/s; k = ω = B_z = 1,
// u_z = 0.1 (so Ω = 19/90).
void hall_wave(REAL z, REAL t, REAL* phase, REAL* f) {
    const REAL k = (REAL)1, omega = (REAL)1, bz = (REAL)1, uz = (REAL)0.1;
    const REAL s = k * uz - omega;
    *phase = (s * s - k * k * bz * bz) / (bz * s * k * k) * (k * z - omega * t);
    *f = k * bz / s;
}

void case_velocity_t(const REAL x[3], REAL t, REAL u[3]) {
    REAL phase, f;
    hall_wave(x[2], t, &phase, &f);
    u[0] = f * cos(phase) + (REAL)1;
    u[1] = f * sin(phase) + (REAL)1;
    u[2] = (REAL)0.1;
}

void case_exact(const REAL x[3], REAL t, REAL b[3]) {
    REAL phase, f;
    hall_wave(x[2], t, &phase, &f);
    b[0] = cos(phase);
    b[1] = sin(phase);
    b[2] = (REAL)1;
}
#else
#error "hall_cases.cl: not a Hall case"
#endif

void case_velocity(const REAL x[3], REAL u[3]) { case_velocity_t(x, (REAL)0, u); }
