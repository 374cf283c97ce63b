//! The test cases: domain, boundary kind, velocity and exact solution. The formulas live in
//! OpenCL C (`kernels/cases.cl`, selected by a define), evaluated on the device for the initial
//! field, the boundary data at every stage and the error; the host knows the domain and the
//! velocity (for the time step: the largest |u| over the grid nodes).

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// The Alfvén wave's angle α to the x axis (30°).
pub const ALFVEN_ANGLE: f64 = std::f64::consts::FRAC_PI_6;
/// The Alfvén wave's amplitude A = |u|.
pub const ALFVEN_AMPLITUDE: f64 = 0.1;
/// The Alfvén wave's period along x, 1/cos α = 2/√3.
pub const ALFVEN_PERIOD_X: f64 = 1.1547005383792517;
/// The Alfvén wave's period along y, 1/sin α = 2.
pub const ALFVEN_PERIOD_Y: f64 = 2.0;

/// A test case with an exact solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// u = (−y, x, 0) on [−1, 1]³; a Gaussian-localised field, independent of z, rotated with
    /// the flow (InductionEq's `rotation_2D`).
    Rotation2d,
    /// u = k × x, k = (1, 1, 1)/√3, on [−1, 1]³; B₀ = ¼ψ k × (x − c), ψ = exp(−20|x − c|²),
    /// c = ((3 + √3)/12, −(3 − √3)/12, −√3/6), rotated with the flow (InductionEq's
    /// `rotation_3D`).
    Rotation3d,
    /// B = u on [0, 1]³, a steady solution with u·n = 0 on the whole boundary.
    ConfinedDomain,
    /// Constant u = (1, 1, 1) on the periodic unit cube; B(t, x) = B₀(x − ut).
    PeriodicAdvection,
    /// The same rotation as [`Case::Rotation3d`] with another field: B₀ = 4ψ e_z × (x − c),
    /// ψ = exp(−20|x − c|²), c = (½, −½, 0)/√2 (this crate's first `rotation_3d`, kept for its
    /// measured figures).
    Rotation3dEz,
    /// A travelling Alfvén-type wave at α = 30° to the x axis on the periodic box
    /// [0, 2/√3) × [0, 2) × [0, 1) (InductionEq's `alfven_periodic_2D`): with e∥ = (cos α, sin α, 0),
    /// e⊥ = (−sin α, cos α, 0) and φ = 2π(x·e∥ + t), the velocity u = A(sin φ e⊥ + cos φ e_z),
    /// A = 1/10, depends on time, and B = e∥ + u.
    AlfvenPeriodic2d,
}

impl Case {
    /// Every case, in the order of the documentation.
    pub const ALL: [Case; 6] = [
        Case::Rotation2d,
        Case::Rotation3d,
        Case::ConfinedDomain,
        Case::PeriodicAdvection,
        Case::Rotation3dEz,
        Case::AlfvenPeriodic2d,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Case::Rotation2d => "rotation_2d",
            Case::Rotation3d => "rotation_3d",
            Case::ConfinedDomain => "confined_domain",
            Case::PeriodicAdvection => "periodic_advection",
            Case::Rotation3dEz => "rotation_3d_ez",
            Case::AlfvenPeriodic2d => "alfven_periodic_2d",
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
            Case::AlfvenPeriodic2d => 6,
        }
    }

    /// Lower and upper corner of the case's own domain (`Config::bounds` may give another).
    pub fn domain(self) -> ([f64; 3], [f64; 3]) {
        match self {
            Case::Rotation2d | Case::Rotation3d | Case::Rotation3dEz => ([-1.0; 3], [1.0; 3]),
            Case::ConfinedDomain | Case::PeriodicAdvection => ([0.0; 3], [1.0; 3]),
            Case::AlfvenPeriodic2d => ([0.0; 3], [ALFVEN_PERIOD_X, ALFVEN_PERIOD_Y, 1.0]),
        }
    }

    /// Whether the domain is periodic (central stencils everywhere, no boundaries).
    pub fn periodic(self) -> bool {
        matches!(self, Case::PeriodicAdvection | Case::AlfvenPeriodic2d)
    }

    /// Whether the case's exact solution holds on the box `lo`…`hi` (as a periodic box where the
    /// case is periodic); the error names the case, what it needs and its own box. The rotations
    /// and the periodic advection (whose field keeps one period per side) take any box.
    /// `confined_domain` is the steady B = u with u·n = 0 on the boundary, which holds on faces
    /// at whole numbers only (elsewhere the flow would enter and the domain not be confined).
    /// The Alfvén wave repeats itself only over whole periods: 2/√3 along x, 2 along y.
    pub fn check_domain(self, lo: [f64; 3], hi: [f64; 3]) -> Result<(), Error> {
        let axes = ["x", "y", "z"];
        match self {
            Case::ConfinedDomain => {
                for a in 0..3 {
                    for (end, v) in [("min", lo[a]), ("max", hi[a])] {
                        if v.fract() != 0.0 {
                            return Err(Error::Config(format!(
                                "{self} needs a box whose faces lie at whole numbers (its u·n = 0 \
                                 holds only there; its own box is [0, 1]³), but {}{end} = {v}; give \
                                 whole numbers, e.g. --box 0,1,0,1,0,1",
                                axes[a]
                            )));
                        }
                    }
                }
                Ok(())
            }
            Case::AlfvenPeriodic2d => {
                for (a, period, name) in [(0, ALFVEN_PERIOD_X, "2/√3"), (1, ALFVEN_PERIOD_Y, "2")] {
                    let l = hi[a] - lo[a];
                    let periods = l / period;
                    if !(periods.round() >= 1.0 && (periods - periods.round()).abs() <= 1e-10 * periods) {
                        return Err(Error::Config(format!(
                            "{self} needs a periodic box whose length along {} is a whole multiple of \
                             its period {name} = {period} (its own box is [0, 2/√3) × [0, 2) × [0, \
                             1), any length along z), but the length along {} is {l}; give e.g. \
                             --box 0,{},0,{},0,1",
                            axes[a], axes[a], ALFVEN_PERIOD_X, ALFVEN_PERIOD_Y
                        )));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The velocity at `x` at t = 0 (the formulas of `kernels/cases.cl`, in f64).
    pub fn velocity(self, x: [f64; 3]) -> [f64; 3] {
        self.velocity_at(x, 0.0)
    }

    /// Whether u depends on time (then the solver recomputes it on the device at every stage
    /// time, as InductionEq does with `variable_u`).
    pub fn velocity_depends_on_time(self) -> bool {
        self == Case::AlfvenPeriodic2d
    }

    /// The velocity at `x` and time `t`.
    pub fn velocity_at(self, x: [f64; 3], t: f64) -> [f64; 3] {
        match self {
            Case::AlfvenPeriodic2d => {
                let (sa, ca) = ALFVEN_ANGLE.sin_cos();
                let phi = 2.0 * std::f64::consts::PI * (x[0] * ca + x[1] * sa + t);
                let (sp, cp) = phi.sin_cos();
                [-ALFVEN_AMPLITUDE * sa * sp, ALFVEN_AMPLITUDE * ca * sp, ALFVEN_AMPLITUDE * cp]
            }
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
            // u depends on x and y only: one plane holds every value.
            Case::AlfvenPeriodic2d => {
                let mut best = 0.0f64;
                for j in 0..n[1] {
                    for i in 0..n[0] {
                        best = best.max(speed([node(0, i), node(1, j), lo[2]]));
                    }
                }
                best
            }
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

    /// The final time when none is given: one revolution for the rotations, the 2 for
    /// the confined domain, one period for the advection, InductionEq's example's 200 (200
    /// periods) for the Alfvén wave.
    pub fn default_final_time(self) -> f64 {
        match self {
            Case::Rotation2d | Case::Rotation3d | Case::Rotation3dEz => 2.0 * std::f64::consts::PI,
            Case::ConfinedDomain => 2.0,
            Case::PeriodicAdvection => 1.0,
            Case::AlfvenPeriodic2d => 200.0,
        }
    }

    /// Whether u is linear or constant, so cheap enough that the stage kernels may evaluate it at
    /// each stencil point in registers rather than read the stored field (on a GPU: see
    /// `solver::velocity_in_registers`).
    pub fn velocity_is_linear(self) -> bool {
        !matches!(self, Case::ConfinedDomain | Case::AlfvenPeriodic2d)
    }

    /// Whether the solution is independent of z (then a thin grid in z loses nothing).
    pub fn is_planar(self) -> bool {
        matches!(self, Case::Rotation2d | Case::AlfvenPeriodic2d)
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Case {
    type Err = Error;
    fn from_str(s: &str) -> Result<Case, Error> {
        Case::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
            let names: Vec<_> = Case::ALL.iter().map(|c| c.name()).collect();
            Error::Config(format!("unknown case `{s}`; the cases are {}", names.join(", ")))
        })
    }
}
