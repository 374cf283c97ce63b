//! The discrete choices of a run: the forms of the terms, the time integrator, the precision and
//! where the fields live.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// How a derivative of a product `∂(ab)` is discretised.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Form {
    /// `D(ab)`.
    Central,
    /// `½(D(ab) + a·Db + b·Da)`.
    Split,
    /// `a·Db + b·Da`.
    Product,
}

impl Form {
    /// Every form.
    pub const ALL: [Form; 3] = [Form::Central, Form::Split, Form::Product];

    /// The name on the command line.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn name(self) -> &'static str {
        match self {
            Form::Central => "central",
            Form::Split => "split",
            Form::Product => "product",
        }
    }

    pub(crate) fn id(self) -> u32 {
        match self {
            Form::Central => 0,
            Form::Split => 1,
            Form::Product => 2,
        }
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the middle term `uᵢ∂ⱼBⱼ` is discretised (InductionEq's `USE_SOURCE_*`).
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum SourceForm {
    /// `uᵢ·DⱼBⱼ`.
    Central,
    /// `½(uᵢ·DⱼBⱼ + Dⱼ(uᵢBⱼ) − Bⱼ·Dⱼuᵢ)`: the mean of the central form and the one the product
    /// rule gives.
    Split,
    /// Dropped: the term vanishes for divergence-free B, and without it the equation is in
    /// conservation form.
    Zero,
}

impl SourceForm {
    /// Every source form.
    pub const ALL: [SourceForm; 3] = [SourceForm::Central, SourceForm::Split, SourceForm::Zero];

    /// The name on the command line.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn name(self) -> &'static str {
        match self {
            SourceForm::Central => "central",
            SourceForm::Split => "split",
            SourceForm::Zero => "zero",
        }
    }

    pub(crate) fn id(self) -> u32 {
        match self {
            SourceForm::Central => 0,
            SourceForm::Split => 1,
            SourceForm::Zero => 2,
        }
    }
}

impl fmt::Display for SourceForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The forms of the three terms: `∂ⱼ(uᵢBⱼ)`, the source `uᵢ∂ⱼBⱼ` and `∂ⱼ(uⱼBᵢ)`.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forms {
    /// Form of `∂ⱼ(uᵢBⱼ)`.
    pub uibj: Form,
    /// Form of `uᵢ∂ⱼBⱼ`.
    pub source: SourceForm,
    /// Form of `∂ⱼ(uⱼBᵢ)`.
    pub ujbi: Form,
}

impl Forms {
    /// The combination that the energy method proves stable: `∂ⱼ(uᵢBⱼ)` in product form (with the
    /// central source term it leaves `Bⱼ∂ⱼuᵢ`, no derivative of B), `∂ⱼ(uⱼBᵢ)` in split form (its
    /// energy contribution reduces to boundary terms, which the SAT penalties control).
    pub const STABLE: Forms = Forms { uibj: Form::Product, source: SourceForm::Central, ujbi: Form::Split };

    /// `∂ⱼ(uᵢBⱼ)` and `∂ⱼ(uⱼBᵢ)` in the given forms, the source term central.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn new(uibj: Form, ujbi: Form) -> Forms {
        Forms { uibj, source: SourceForm::Central, ujbi }
    }
}

impl Default for Forms {
    fn default() -> Forms {
        Forms::STABLE
    }
}

impl fmt::Display for Forms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.uibj, self.source, self.ujbi)
    }
}

impl FromStr for Forms {
    type Err = Error;
    /// `A,S,B` (forms of `∂ⱼ(uᵢBⱼ)`, `uᵢ∂ⱼBⱼ` and `∂ⱼ(uⱼBᵢ)`; `/` separates as well as `,`),
    /// `A,B` (the source term central) or one form for both product terms.
    fn from_str(s: &str) -> Result<Forms> {
        let form = |f: &str| {
            Form::ALL.into_iter().find(|x| x.name() == f).ok_or_else(|| {
                Error::Config(format!("unknown form `{f}`; the forms are central, split and product"))
            })
        };
        let source = |f: &str| {
            SourceForm::ALL.into_iter().find(|x| x.name() == f).ok_or_else(|| {
                Error::Config(format!(
                    "unknown source form `{f}`; the forms of ui dj Bj are central, split and zero"
                ))
            })
        };
        let parts: Vec<&str> = s.split([',', '/']).map(str::trim).collect();
        match parts.as_slice() {
            [a] => Ok(Forms::new(form(a)?, form(a)?)),
            [a, b] => Ok(Forms::new(form(a)?, form(b)?)),
            [a, m, b] => Ok(Forms { uibj: form(a)?, source: source(m)?, ujbi: form(b)? }),
            _ => Err(Error::Config(format!(
                "--forms `{s}`: give the forms of ∂j(ui Bj), ui ∂j Bj and ∂j(uj Bi) separated by \
                 commas, e.g. `product,central,split`, or two (the source term central) or one"
            ))),
        }
    }
}

/// The time integrator: every scheme InductionEq offers. On the command line by its name or
/// InductionEq's.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Integrator {
    /// Three-stage third-order strong-stability-preserving Runge–Kutta.
    #[cfg_attr(feature = "cli", value(name = "ssprk33", alias = "SSPRK33"))]
    Ssprk33,
    /// Five-stage fourth-order low-storage (2N) Runge–Kutta of Carpenter and Kennedy
    /// (InductionEq's `CarpenterKennedy2N54`).
    #[cfg_attr(feature = "cli", value(name = "lsrk4", alias = "lsrk54", alias = "CarpenterKennedy2N54"))]
    Lsrk4,
    /// Ketcheson's ten-stage fourth-order SSP scheme (`SSPRK104`).
    #[cfg_attr(feature = "cli", value(name = "ssprk104", alias = "SSPRK104"))]
    Ssprk104,
    /// Five-stage fourth-order 2R scheme of Kennedy, Carpenter and Lewis
    /// (`KennedyCarpenterLewis2R54C`).
    #[cfg_attr(feature = "cli", value(name = "kcl2r54c", alias = "KennedyCarpenterLewis2R54C"))]
    Kcl2r54c,
    /// Six-stage fourth-order 2R scheme of Calvo, Franco and Rández (`CalvoFrancoRandez2R64`).
    #[cfg_attr(feature = "cli", value(name = "cfr2r64", alias = "CalvoFrancoRandez2R64"))]
    Cfr2r64,
    /// Eight-stage fourth-order 2N scheme of Toulorge and Desmet (`ToulorgeDesmet2N84F`).
    #[cfg_attr(feature = "cli", value(name = "td2n84f", alias = "ToulorgeDesmet2N84F"))]
    Td2n84f,
}

impl Integrator {
    /// Every integrator.
    pub const ALL: [Integrator; 6] = [
        Integrator::Ssprk33,
        Integrator::Lsrk4,
        Integrator::Ssprk104,
        Integrator::Kcl2r54c,
        Integrator::Cfr2r64,
        Integrator::Td2n84f,
    ];

    /// The name on the command line.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn name(self) -> &'static str {
        match self {
            Integrator::Ssprk33 => "ssprk33",
            Integrator::Lsrk4 => "lsrk4",
            Integrator::Ssprk104 => "ssprk104",
            Integrator::Kcl2r54c => "kcl2r54c",
            Integrator::Cfr2r64 => "cfr2r64",
            Integrator::Td2n84f => "td2n84f",
        }
    }

    /// InductionEq's name of the scheme (also accepted on the command line).
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn inductioneq_name(self) -> &'static str {
        match self {
            Integrator::Ssprk33 => "SSPRK33",
            Integrator::Lsrk4 => "CarpenterKennedy2N54",
            Integrator::Ssprk104 => "SSPRK104",
            Integrator::Kcl2r54c => "KennedyCarpenterLewis2R54C",
            Integrator::Cfr2r64 => "CalvoFrancoRandez2R64",
            Integrator::Td2n84f => "ToulorgeDesmet2N84F",
        }
    }

    /// Right-hand-side evaluations (stage kernels) per step.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn stages(self) -> usize {
        match self {
            Integrator::Ssprk33 => 3,
            Integrator::Lsrk4 | Integrator::Kcl2r54c => 5,
            Integrator::Cfr2r64 => 6,
            Integrator::Td2n84f => 8,
            Integrator::Ssprk104 => 10,
        }
    }

    /// Order of accuracy.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn order(self) -> usize {
        if self == Integrator::Ssprk33 {
            3
        } else {
            4
        }
    }

    /// Whether the scheme is of van der Houwen's two-register (2R) kind, which the solver runs
    /// with the `stage_2r` kernel.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn is_2r(self) -> bool {
        matches!(self, Integrator::Kcl2r54c | Integrator::Cfr2r64)
    }
}

impl fmt::Display for Integrator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Floating-point precision of the fields and kernels.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Precision {
    /// `float`.
    #[cfg_attr(feature = "cli", value(name = "f32", alias = "float", alias = "single"))]
    F32,
    /// `double` (needs a device with fp64).
    #[cfg_attr(feature = "cli", value(name = "f64", alias = "double"))]
    F64,
}

impl Precision {
    /// Bytes per value.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        })
    }
}

/// Where the fields live between kernel calls.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Mode {
    /// On the device from initialisation to the end.
    Resident,
    /// On the host: every kernel call uploads its arrays and downloads them again.
    Copy,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Resident => "resident",
            Mode::Copy => "copy",
        })
    }
}
