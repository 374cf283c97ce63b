"""A time-stepping driver in the style of InductionEq's MATLAB scripts, on clarray's runner.

InductionEq keeps its fields on the device and calls one kernel per Runge-Kutta stage through
MatCL. Here the same shape of program solves 2-D linear advection on a periodic square,
d(phi)/dt + c . grad(phi) = 0, with fourth-order central differences and the classical
four-stage Runge-Kutta method: the fields are device arrays (resident: `run_kernel` copies
nothing), the host only loops over steps, and the runner reports kernel time apart from
copies. The result is checked against the same scheme written with NumPy and against the exact
solution (the initial field shifted by c*T).

    python3 python/examples/resident_driver.py [n] [final_time]
"""
import sys

import numpy as np

import clarray as cl

SOURCE = """
// 4th-order central first derivative on a periodic n x n grid (row-major, x fastest).
inline float ddx(global const float* f, int i, int j, int n, float h) {
    int im2 = (i + n - 2) % n, im1 = (i + n - 1) % n, ip1 = (i + 1) % n, ip2 = (i + 2) % n;
    return (f[j * n + im2] - 8.0f * f[j * n + im1] + 8.0f * f[j * n + ip1] - f[j * n + ip2]) / (12.0f * h);
}
inline float ddy(global const float* f, int i, int j, int n, float h) {
    int jm2 = (j + n - 2) % n, jm1 = (j + n - 1) % n, jp1 = (j + 1) % n, jp2 = (j + 2) % n;
    return (f[jm2 * n + i] - 8.0f * f[jm1 * n + i] + 8.0f * f[jp1 * n + i] - f[jp2 * n + i]) / (12.0f * h);
}
// k = -(c . grad f)
kernel void rhs(global const float* f, global float* k, int n, float h, float cx, float cy) {
    int i = get_global_id(0), j = get_global_id(1);
    if (i < n && j < n) k[j * n + i] = -(cx * ddx(f, i, j, n, h) + cy * ddy(f, i, j, n, h));
}
// stage = phi + a * k
kernel void stage(global const float* phi, global const float* k, global float* s, float a, int n) {
    size_t p = get_global_id(0);
    if (p < (size_t)n * n) s[p] = phi[p] + a * k[p];
}
// phi += w * k
kernel void accumulate(global float* phi, global const float* k, float w, int n) {
    size_t p = get_global_id(0);
    if (p < (size_t)n * n) phi[p] += w * k[p];
}
"""


def gaussian(x, y):
    return np.exp(-40.0 * ((x - 0.5) ** 2 + (y - 0.5) ** 2))


def numpy_scheme(phi, steps, dt, h, c):
    def d(f, axis):
        return (np.roll(f, 2, axis) - 8 * np.roll(f, 1, axis) + 8 * np.roll(f, -1, axis) - np.roll(f, -2, axis)) / (12 * h)

    def rhs(f):
        return -(c[0] * d(f, 1) + c[1] * d(f, 0))

    phi = phi.astype(np.float64)
    for _ in range(steps):
        k1 = rhs(phi)
        k2 = rhs(phi + dt / 2 * k1)
        k3 = rhs(phi + dt / 2 * k2)
        k4 = rhs(phi + dt * k3)
        phi = phi + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return phi


def main(n=64, final_time=0.25, c=(1.0, 0.5)):
    h = 1.0 / n
    x = np.arange(n) * h
    X, Y = np.meshgrid(x, x)  # Y varies along rows (j), X along columns (i)
    phi0 = gaussian(X, Y).astype(np.float32)
    steps = int(np.ceil(final_time / (0.5 * h / max(abs(c[0]), abs(c[1])))))
    dt = final_time / steps

    program = cl.Program(SOURCE)
    phi = cl.asarray(phi0)
    acc = cl.zeros((n, n), np.float32)
    k = cl.zeros((n, n), np.float32)
    s = cl.zeros((n, n), np.float32)
    f32, i32 = np.float32, np.int32
    kernel_seconds = copied = 0

    def run(name, size, *args):
        nonlocal kernel_seconds, copied
        r = cl.run_kernel(program, name, size, *args)
        kernel_seconds += r.kernel_seconds
        copied += r.bytes_in + r.bytes_out

    for _ in range(steps):
        # Classical RK4: k_i = rhs(phi + a_i dt k_(i-1)); the new phi, phi + dt sum w_i k_i,
        # is accumulated in `acc` while phi stays the step's start.
        acc[...] = phi
        for a, w in ((0.0, 1 / 6), (0.5, 1 / 3), (0.5, 1 / 3), (1.0, 1 / 6)):
            if a:
                run("stage", n * n, phi, k, s, f32(a * dt), i32(n))
            run("rhs", (n, n), s if a else phi, k, i32(n), f32(h), f32(c[0]), f32(c[1]))
            run("accumulate", n * n, acc, k, f32(w * dt), i32(n))
        phi, acc = acc, phi
    assert copied == 0, "device arrays must stay resident: run_kernel copied bytes"

    result = phi.get()
    reference = numpy_scheme(phi0, steps, dt, h, c)
    scheme_diff = np.abs(result - reference).max()
    exact = gaussian((X - c[0] * final_time) % 1.0, (Y - c[1] * final_time) % 1.0)
    error = np.abs(result - exact).max()
    print(f"{n}x{n}, {steps} steps of RK4 ({11 * steps} runner calls, {kernel_seconds:.3f} s in kernels, "
          f"0 bytes copied): max |clarray - NumPy scheme| = {scheme_diff:.2e}, "
          f"max error against the exact solution = {error:.2e}")
    assert scheme_diff < 1e-4, scheme_diff
    assert error < 0.05, error
    return error


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    t = float(sys.argv[2]) if len(sys.argv) > 2 else 0.25
    main(n, t)
