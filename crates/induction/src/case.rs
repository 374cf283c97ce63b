//! The test cases: domain, boundary kind, velocity and exact solution. The formulas live in
//! OpenCL C (`kernels/cases.cl`, selected by a define), evaluated on the device for the initial
//! field, the boundary data at every stage and the error; the host knows the domain and the
//! velocity (for the time step: the largest |u| over the grid nodes).

use std::fmt;

/// A test case with an exact solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Case {
    /// u = (−y, x, 0) on [−1, 1]³; a Gaussian-localised field, independent of z, rotated with
    /// the flow (InductionEq's `rotation_2D`).
    #[value(name = "rotation_2d")]
    Rotation2d,
    /// u = k × x, k = (1, 1, 1)/√3, on [−1, 1]³; B₀ = ¼ψ k × (x − c), ψ = exp(−20|x − c|²),
    /// c = ((3 + √3)/12, −(3 − √3)/12, −√3/6), rotated with the flow (InductionEq's
    /// `rotation_3D`).
    #[value(name = "rotation_3d")]
    Rotation3d,
    /// B = u on [0, 1]³, a steady solution with u·n = 0 on the whole boundary.
    #[value(name = "confined_domain")]
    ConfinedDomain,
    /// Constant u = (1, 1, 1) on the periodic unit cube; B(t, x) = B₀(x − ut).
    #[value(name = "periodic_advection")]
    PeriodicAdvection,
    /// The same rotation as [`Case::Rotation3d`] with another field: B₀ = 4ψ e_z × (x − c),
    /// ψ = exp(−20|x − c|²), c = (½, −½, 0)/√2 (this crate's first `rotation_3d`, kept for its
    /// measured figures).
    #[value(name = "rotation_3d_ez")]
    Rotation3dEz,
}

impl Case {
    /// Every case, in the order of the documentation.
    pub const ALL: [Case; 5] = [
        Case::Rotation2d,
        Case::Rotation3d,
        Case::ConfinedDomain,
        Case::PeriodicAdvection,
        Case::Rotation3dEz,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Case::Rotation2d => "rotation_2d",
            Case::Rotation3d => "rotation_3d",
            Case::ConfinedDomain => "confined_domain",
            Case::PeriodicAdvection => "periodic_advection",
            Case::Rotation3dEz => "rotation_3d_ez",
        }
    }

    /// The number the kernels select the case by (`-D CASE=…`).
    pub fn id(self) -> u32 {
        match self {
            Case::Rotation2d => 1,
            Case::Rotation3d => 2,
            Case::ConfinedDomain => 3,
            Case::PeriodicAdvection => 4,
            Case::Rotation3dEz => 5,
        }
    }

    /// Lower and upper corner of the domain.
    pub fn domain(self) -> ([f64; 3], [f64; 3]) {
        match self {
            Case::Rotation2d | Case::Rotation3d | Case::Rotation3dEz => ([-1.0; 3], [1.0; 3]),
            Case::ConfinedDomain | Case::PeriodicAdvection => ([0.0; 3], [1.0; 3]),
        }
    }

    /// Whether the domain is periodic (central stencils everywhere, no boundaries).
    pub fn periodic(self) -> bool {
        self == Case::PeriodicAdvection
    }

    /// The velocity at `x` (the formulas of `kernels/cases.cl`, in f64).
    pub fn velocity(self, x: [f64; 3]) -> [f64; 3] {
        match self {
            Case::Rotation2d => [-x[1], x[0], 0.0],
            Case::Rotation3d | Case::Rotation3dEz => {
                let s = 3f64.sqrt();
                [(x[2] - x[1]) / s, (x[0] - x[2]) / s, (x[1] - x[0]) / s]
            }
            Case::ConfinedDomain => {
                let pi = std::f64::consts::PI;
                let (sx, cx) = (pi * x[0]).sin_cos();
                let (sy, cy) = (pi * x[1]).sin_cos();
                let (sz, cz) = (pi * x[2]).sin_cos();
                [sx * cy * cz, cx * sy * cz, -2.0 * cx * cy * sz]
            }
            Case::PeriodicAdvection => [1.0; 3],
        }
    }

    /// The largest |u| over the nodes `lo + p·h` (p = 0 … n − 1 on each axis), for the time step
    /// (InductionEq's rule). For the linear and constant velocities |u|² is convex, so the
    /// largest value lies at a corner of the grid. For `confined_domain`, |u|² is
    /// (1 − w)·g(x, y) plus 4·cos²(πx)cos²(πy)·w with w = sin²(πz), affine in w, so for each
    /// (x, y) only the nodes with the smallest and the largest sin²(πz) can hold the largest
    /// value: O(nx·ny + nz).
    pub fn max_speed_on_nodes(self, n: [usize; 3], lo: [f64; 3], h: [f64; 3]) -> f64 {
        let node = |a: usize, p: usize| lo[a] + p as f64 * h[a];
        let speed = |x: [f64; 3]| {
            let u = self.velocity(x);
            (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt()
        };
        match self {
            Case::ConfinedDomain => {
                let s2 = |p: usize| (std::f64::consts::PI * node(2, p)).sin().powi(2);
                let (mut zmin, mut zmax) = (0, 0);
                for p in 0..n[2] {
                    if s2(p) < s2(zmin) {
                        zmin = p;
                    }
                    if s2(p) > s2(zmax) {
                        zmax = p;
                    }
                }
                let mut best = 0.0f64;
                for j in 0..n[1] {
                    for i in 0..n[0] {
                        for k in [zmin, zmax] {
                            best = best.max(speed([node(0, i), node(1, j), node(2, k)]));
                        }
                    }
                }
                best
            }
            _ => {
                let mut best = 0.0f64;
                for corner in 0..8 {
                    let x = std::array::from_fn(|a| node(a, if corner >> a & 1 == 1 { n[a] - 1 } else { 0 }));
                    best = best.max(speed(x));
                }
                best
            }
        }
    }

    /// The final time when none is given: one revolution for the rotations, 2 for
    /// the confined domain, one period for the advection.
    pub fn default_final_time(self) -> f64 {
        match self {
            Case::Rotation2d | Case::Rotation3d | Case::Rotation3dEz => 2.0 * std::f64::consts::PI,
            Case::ConfinedDomain => 2.0,
            Case::PeriodicAdvection => 1.0,
        }
    }

    /// Whether u is linear or constant, so cheap enough that the stage kernels may evaluate it at
    /// each stencil point in registers rather than read the stored field (on a GPU: see
    /// `solver::velocity_in_registers`).
    pub fn velocity_is_linear(self) -> bool {
        self != Case::ConfinedDomain
    }

    /// Whether the solution is independent of z (then a thin grid in z loses nothing).
    pub fn is_planar(self) -> bool {
        self == Case::Rotation2d
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
