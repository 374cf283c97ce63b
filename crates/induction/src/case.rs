//! The test cases: domain, boundary kind, velocity and exact solution. The formulas live in
//! OpenCL C (`kernels/cases.cl`, selected by a define), evaluated on the device for the initial
//! field, the boundary data at every stage and the error; the host only knows the domain and the
//! largest speed (for the time step).

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// A test case with an exact solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// u = (−y, x, 0) on [−1, 1]³; a Gaussian-localised field rotated with the flow.
    Rotation2d,
    /// Rotation about (1, 1, 1)/√3; a divergence-free localised field rotated with the flow.
    Rotation3d,
    /// B = u on [0, 1]³, a steady solution with u·n = 0 on the whole boundary.
    ConfinedDomain,
    /// Constant u = (1, 1, 1) on the periodic unit cube; B(t, x) = B₀(x − ut).
    PeriodicAdvection,
}

impl Case {
    /// Every case, in the order of the documentation.
    pub const ALL: [Case; 4] =
        [Case::Rotation2d, Case::Rotation3d, Case::ConfinedDomain, Case::PeriodicAdvection];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Case::Rotation2d => "rotation_2d",
            Case::Rotation3d => "rotation_3d",
            Case::ConfinedDomain => "confined_domain",
            Case::PeriodicAdvection => "periodic_advection",
        }
    }

    /// The number the kernels select the case by (`-D CASE=…`).
    pub fn id(self) -> u32 {
        match self {
            Case::Rotation2d => 1,
            Case::Rotation3d => 2,
            Case::ConfinedDomain => 3,
            Case::PeriodicAdvection => 4,
        }
    }

    /// Lower and upper corner of the domain.
    pub fn domain(self) -> ([f64; 3], [f64; 3]) {
        match self {
            Case::Rotation2d | Case::Rotation3d => ([-1.0; 3], [1.0; 3]),
            Case::ConfinedDomain | Case::PeriodicAdvection => ([0.0; 3], [1.0; 3]),
        }
    }

    /// Whether the domain is periodic (central stencils everywhere, no boundaries).
    pub fn periodic(self) -> bool {
        self == Case::PeriodicAdvection
    }

    /// The largest |u| over the domain, for the time step.
    pub fn max_speed(self) -> f64 {
        match self {
            Case::Rotation2d => 2f64.sqrt(),
            // |a × x| ≤ |x| ≤ √3 on [−1, 1]³.
            Case::Rotation3d => 3f64.sqrt(),
            // |u|² = s²c²c² + c²s²c² + 4c²c²s² ≤ 4 (at x = y = 0, z = ½).
            Case::ConfinedDomain => 2.0,
            Case::PeriodicAdvection => 3f64.sqrt(),
        }
    }

    /// The final time when none is given: one revolution for the rotations, the 2 for
    /// the confined domain, one period for the advection.
    pub fn default_final_time(self) -> f64 {
        match self {
            Case::Rotation2d | Case::Rotation3d => 2.0 * std::f64::consts::PI,
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

impl FromStr for Case {
    type Err = Error;
    fn from_str(s: &str) -> Result<Case, Error> {
        Case::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
            let names: Vec<_> = Case::ALL.iter().map(|c| c.name()).collect();
            Error::Config(format!("unknown case `{s}`; the cases are {}", names.join(", ")))
        })
    }
}
