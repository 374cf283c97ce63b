//! The test cases: domain, boundary kind, velocity and exact solution. The formulas live in
//! OpenCL C (`kernels/cases.cl`, selected by a define), evaluated on the device for the initial
//! field, the boundary data at every stage and the error; the host knows the domain and the
//! velocity (for the time step: the largest |u| over the grid nodes).
//!
//! ```
//! use induction::Case;
//! let c = Case::Rotation2d;
//! assert_eq!((c.name(), c.domain()), ("rotation_2d", ([-1.0; 3], [1.0; 3])));
//! assert!(!c.periodic() && c.is_planar() && c.has_exact_solution());
//! assert_eq!(c.velocity([0.5, 0.0, 0.0]), [0.0, 0.5, 0.0]); // u = (−y, x, 0)
//! let periodic: Vec<&str> = Case::ALL.iter().filter(|c| c.periodic()).map(|c| c.name()).collect();
//! assert!(periodic.contains(&"periodic_advection"));
//! assert!(Case::HallPeriodic.is_hall() && Case::HallPeriodic.density().is_some());
//! ```

use std::fmt;

use crate::error::Error;

/// The Alfvén wave's angle α to the x axis (30°).
///
/// See [the example in `case`](mod@crate::case).
pub const ALFVEN_ANGLE: f64 = std::f64::consts::FRAC_PI_6;
/// The Alfvén wave's amplitude A = |u|.
///
/// See [the example in `case`](mod@crate::case).
pub const ALFVEN_AMPLITUDE: f64 = 0.1;
/// The Alfvén wave's period along x, 1/cos α = 2/√3.
///
/// See [the example in `case`](mod@crate::case).
pub const ALFVEN_PERIOD_X: f64 = 1.1547005383792517;
/// The Alfvén wave's period along y, 1/sin α = 2.
///
/// See [the example in `case`](mod@crate::case).
pub const ALFVEN_PERIOD_Y: f64 = 2.0;

/// A test case with an exact solution.
///
/// See [the example in `case`](mod@crate::case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Case {
    /// u = (−y, x, 0) on [−1, 1]³; a Gaussian-localised field, independent of z, rotated with
    /// the flow (InductionEq's `rotation_2D`).
    #[cfg_attr(feature = "cli", value(name = "rotation_2d"))]
    Rotation2d,
    /// u = k × x, k = (1, 1, 1)/√3, on [−1, 1]³; B₀ = ¼ψ k × (x − c), ψ = exp(−20|x − c|²),
    /// c = ((3 + √3)/12, −(3 − √3)/12, −√3/6), rotated with the flow (InductionEq's
    /// `rotation_3D`).
    #[cfg_attr(feature = "cli", value(name = "rotation_3d"))]
    Rotation3d,
    /// B = u on [0, 1]³, a steady solution with u·n = 0 on the whole boundary.
    #[cfg_attr(feature = "cli", value(name = "confined_domain"))]
    ConfinedDomain,
    /// Constant u = (1, 1, 1) on the periodic unit cube; B(t, x) = B₀(x − ut).
    #[cfg_attr(feature = "cli", value(name = "periodic_advection"))]
    PeriodicAdvection,
    /// The same rotation as [`Case::Rotation3d`] with another field: B₀ = 4ψ e_z × (x − c),
    /// ψ = exp(−20|x − c|²), c = (½, −½, 0)/√2 (this crate's first `rotation_3d`, kept for its
    /// measured figures).
    #[cfg_attr(feature = "cli", value(name = "rotation_3d_ez"))]
    Rotation3dEz,
    /// InductionEq's `hall_periodic`: an exact solution of the induction equation with the Hall
    /// term on the periodic cube [0, 4π/3)³, density 1. With α = ½, k = (1 − α²)/α = 3/2 and
    /// n = (1, 1, 1)/√3, the velocity is the Beltrami field u(t, x) = v(x + αtn),
    /// v = (cos ky + sin kz, cos kz + sin kx, cos kx + sin ky) (curl v = k v), and B = αu + n.
    /// Needs [`crate::Config::hall`].
    #[cfg_attr(feature = "cli", value(name = "hall_periodic"))]
    HallPeriodic,
    /// InductionEq's `hall_travelling_wave`: a circularly polarised wave along z with the Hall
    /// term, periodic, on [0, 150)² × [0, 5·2π/Ω) (Ω = 19/90: five wavelengths), density 1:
    /// ξ = kz − ωt, B = (cos Ωξ, sin Ωξ, 1), u = (f cos Ωξ + 1, f sin Ωξ + 1, 0.1),
    /// f = k/(0.1k − ω), k = ω = 1. Needs [`crate::Config::hall`].
    #[cfg_attr(feature = "cli", value(name = "hall_travelling_wave"))]
    HallTravellingWave,
    /// The initial data of [`Case::HallPeriodic`] on the bounded cube [0, 4π/3]³ with the Hall
    /// term's outflow penalties on every face (InductionEq's `hall_periodic` run with
    /// `periodic = 'NONE'`, as in its paper's divergence-cleaning study): the boundaries impose
    /// no data, so the error is measured against `hall_periodic`'s solution, which the run
    /// leaves. Needs [`crate::Config::hall`].
    #[cfg_attr(feature = "cli", value(name = "hall_outflow"))]
    HallOutflow,
    /// A travelling Alfvén-type wave at α = 30° to the x axis on the periodic box
    /// [0, 2/√3) × [0, 2) × [0, 1) (InductionEq's `alfven_periodic_2D`): with e∥ = (cos α, sin α, 0),
    /// e⊥ = (−sin α, cos α, 0) and φ = 2π(x·e∥ + t), the velocity u = A(sin φ e⊥ + cos φ e_z),
    /// A = 1/10, depends on time, and B = e∥ + u.
    #[cfg_attr(feature = "cli", value(name = "alfven_periodic_2d"))]
    AlfvenPeriodic2d,
}

impl Case {
    /// Every case, in the order of the documentation.
    pub const ALL: [Case; 9] = [
        Case::Rotation2d,
        Case::Rotation3d,
        Case::ConfinedDomain,
        Case::PeriodicAdvection,
        Case::Rotation3dEz,
        Case::HallPeriodic,
        Case::HallTravellingWave,
        Case::HallOutflow,
        Case::AlfvenPeriodic2d,
    ];

    /// The name on the command line.
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn name(self) -> &'static str {
        match self {
            Case::Rotation2d => "rotation_2d",
            Case::Rotation3d => "rotation_3d",
            Case::ConfinedDomain => "confined_domain",
            Case::PeriodicAdvection => "periodic_advection",
            Case::Rotation3dEz => "rotation_3d_ez",
            Case::HallPeriodic => "hall_periodic",
            Case::HallTravellingWave => "hall_travelling_wave",
            Case::HallOutflow => "hall_outflow",
            Case::AlfvenPeriodic2d => "alfven_periodic_2d",
        }
    }

    /// The number the kernels select the case by (`-D CASE=…`).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn id(self) -> u32 {
        match self {
            Case::Rotation2d => 1,
            Case::Rotation3d => 2,
            Case::ConfinedDomain => 3,
            Case::PeriodicAdvection => 4,
            Case::Rotation3dEz => 5,
            // The Hall cases' formulas live in kernels/hall_cases.cl (numbers apart from
            // cases.cl's).
            Case::HallPeriodic => 10,
            Case::HallTravellingWave => 11,
            Case::HallOutflow => 12,
            Case::AlfvenPeriodic2d => 6,
        }
    }

    /// Lower and upper corner of the case's own domain (`Config::bounds` may give another).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn domain(self) -> ([f64; 3], [f64; 3]) {
        match self {
            Case::Rotation2d | Case::Rotation3d | Case::Rotation3dEz => ([-1.0; 3], [1.0; 3]),
            Case::ConfinedDomain | Case::PeriodicAdvection => ([0.0; 3], [1.0; 3]),
            Case::HallPeriodic | Case::HallOutflow => ([0.0; 3], [HALL_PERIODIC_SIDE; 3]),
            Case::HallTravellingWave => ([0.0; 3], [150.0, 150.0, HALL_WAVE_LENGTH_Z]),
            Case::AlfvenPeriodic2d => ([0.0; 3], [ALFVEN_PERIOD_X, ALFVEN_PERIOD_Y, 1.0]),
        }
    }

    /// Whether the domain is periodic (central stencils everywhere, no boundaries).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn periodic(self) -> bool {
        matches!(
            self,
            Case::PeriodicAdvection | Case::HallPeriodic | Case::HallTravellingWave | Case::AlfvenPeriodic2d
        )
    }

    /// Whether the case's exact solution is one of the induction equation with the Hall term
    /// (then [`crate::Config::hall`] must be on).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn is_hall(self) -> bool {
        matches!(self, Case::HallPeriodic | Case::HallTravellingWave | Case::HallOutflow)
    }

    /// The ion density ρ of the Hall term, where the case defines one: 1 in every case of
    /// InductionEq (each of its case files sets ρ = 1, the Hall cases included); none for this
    /// crate's own cases (`periodic_advection`, `rotation_3d_ez`), which InductionEq does not
    /// have.
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn density(self) -> Option<f64> {
        match self {
            Case::PeriodicAdvection | Case::Rotation3dEz => None,
            _ => Some(1.0),
        }
    }

    /// Whether the case's formula is its solution at every time, so that the exact solution can
    /// be drawn and compared with: every case but `hall_outflow`, whose boundaries impose no data
    /// and whose run leaves `hall_periodic`'s solution (its error is measured against that).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn has_exact_solution(self) -> bool {
        !matches!(self, Case::HallOutflow)
    }

    /// The CFL number when none is given, for a grid of `n` points: 0.5, and for the Hall cases
    /// the number InductionEq's scripts give them, which shrinks with the grid so that the step
    /// goes as h² (the Hall term's fastest waves move at a speed ∝ 1/h): 0.95/nx for
    /// `hall_periodic` and `hall_outflow` (its paper's convergence and cleaning studies), 100/nz
    /// for `hall_travelling_wave` (its example).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn default_cfl(self, n: [usize; 3]) -> f64 {
        match self {
            Case::HallPeriodic | Case::HallOutflow => 0.95 / n[0].max(1) as f64,
            Case::HallTravellingWave => (100.0 / n[2].max(1) as f64).min(2.0),
            _ => 0.5,
        }
    }

    /// Whether the case's exact solution holds on the box `lo`…`hi` (as a periodic box where the
    /// case is periodic); the error names the case, what it needs and its own box. The rotations
    /// and the periodic advection (whose field keeps one period per side) take any box.
    /// `confined_domain` is the steady B = u with u·n = 0 on the boundary, which holds on faces
    /// at whole numbers only (elsewhere the flow would enter and the domain not be confined).
    /// The Alfvén wave repeats itself only over whole periods: 2/√3 along x, 2 along y.
    ///
    /// See [the example in `case`](mod@crate::case).
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
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn velocity(self, x: [f64; 3]) -> [f64; 3] {
        self.velocity_at(x, 0.0)
    }

    /// Whether u depends on time (then the solver recomputes it on the device at every stage
    /// time, as InductionEq does with `variable_u`).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn velocity_depends_on_time(self) -> bool {
        self == Case::AlfvenPeriodic2d
    }

    /// The velocity at `x` and time `t`.
    ///
    /// See [the example in `case`](mod@crate::case).
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
            Case::HallPeriodic | Case::HallOutflow => hall_periodic_velocity(x, 0.0),
            Case::HallTravellingWave => {
                let (xi, omega, f) = hall_wave_phase(x[2], 0.0);
                [f * (omega * xi).cos() + 1.0, f * (omega * xi).sin() + 1.0, 0.1]
            }
        }
    }

    /// The largest |u| over the nodes `lo + p·h` (p = 0 … n − 1 on each axis), for the time step
    /// (InductionEq's rule). For the linear and constant velocities |u|² is convex, so the
    /// largest value lies at a corner of the grid. For `confined_domain`, |u|² is
    /// (1 − w)·g(x, y) plus 4·cos²(πx)cos²(πy)·w with w = sin²(πz), affine in w, so for each
    /// (x, y) only the nodes with the smallest and the largest sin²(πz) can hold the largest
    /// value: O(nx·ny + nz).
    ///
    /// See [the example in `case`](mod@crate::case).
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
            // Neither |u|² of a sum of sines and cosines nor that of the wave is convex: every
            // node (the wave's u depends on z only, so nx = ny = 1 gives the same maximum).
            Case::HallPeriodic | Case::HallOutflow | Case::HallTravellingWave => {
                let m = if self == Case::HallTravellingWave { [1, 1, n[2]] } else { n };
                let mut best = 0.0f64;
                for k in 0..m[2] {
                    for j in 0..m[1] {
                        for i in 0..m[0] {
                            best = best.max(speed([node(0, i), node(1, j), node(2, k)]));
                        }
                    }
                }
                best
            }
            _ => {
                let mut best = 0.0f64;
                for corner in 0..8 {
                    let x = std::array::from_fn(|a| {
                        node(a, if corner >> a & 1 == 1 { n[a].saturating_sub(1) } else { 0 })
                    });
                    best = best.max(speed(x));
                }
                best
            }
        }
    }

    /// The final time when none is given: one revolution for the rotations, 2 for the confined
    /// domain, one period for the advection, InductionEq's example's 200 (200 periods) for the Alfvén
    /// wave; for the Hall cases InductionEq's scripts' (1 for
    /// `hall_periodic`, 200 for `hall_travelling_wave`, 5 for `hall_outflow`, its paper's
    /// cleaning study).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn default_final_time(self) -> f64 {
        match self {
            Case::Rotation2d | Case::Rotation3d | Case::Rotation3dEz => 2.0 * std::f64::consts::PI,
            Case::ConfinedDomain => 2.0,
            Case::PeriodicAdvection | Case::HallPeriodic => 1.0,
            Case::HallTravellingWave | Case::AlfvenPeriodic2d => 200.0,
            Case::HallOutflow => 5.0,
        }
    }

    /// Whether u is linear or constant, so cheap enough that the stage kernels may evaluate it at
    /// each stencil point in registers rather than read the stored field (on a GPU: see
    /// `solver::velocity_in_registers`).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn velocity_is_linear(self) -> bool {
        !matches!(self, Case::ConfinedDomain | Case::AlfvenPeriodic2d) && !self.is_hall()
    }

    /// Whether the solution is independent of z (then a thin grid in z loses nothing).
    ///
    /// See [the example in `case`](mod@crate::case).
    pub fn is_planar(self) -> bool {
        matches!(self, Case::Rotation2d | Case::AlfvenPeriodic2d)
    }
}

/// The side of `hall_periodic`'s cube: one period 2π/k of its solution, k = 3/2.
const HALL_PERIODIC_SIDE: f64 = 4.0 * std::f64::consts::PI / 3.0;

/// The z-length of `hall_travelling_wave`'s box: five wavelengths 2π/Ω, Ω = 19/90.
const HALL_WAVE_LENGTH_Z: f64 = 5.0 * (2.0 * std::f64::consts::PI) / (19.0 / 90.0);

/// `hall_periodic`'s velocity at (t, x) (see [`Case::HallPeriodic`]; the same formulas as
/// `kernels/hall_cases.cl`).
fn hall_periodic_velocity(x: [f64; 3], t: f64) -> [f64; 3] {
    let alpha = 0.5;
    let k = (1.0 - alpha * alpha) / alpha;
    let n = 1.0 / 3f64.sqrt();
    let [px, py, pz] = [0, 1, 2].map(|a| k * x[a] + alpha * k * t * n);
    [py.cos() + pz.sin(), pz.cos() + px.sin(), px.cos() + py.sin()]
}

/// `hall_travelling_wave`'s phase ξ = kz − ωt, its wave number Ω in ξ and the amplitude f of
/// the velocity's wave (k = ω = B_z = 1, u_z = 0.1).
fn hall_wave_phase(z: f64, t: f64) -> (f64, f64, f64) {
    let (k, omega, bz, uz) = (1.0, 1.0, 1.0, 0.1);
    let s = k * uz - omega;
    (k * z - omega * t, (s * s - k * k * bz * bz) / (bz * s * k * k), k * bz / s)
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
