//! # induction: the linear magnetic induction equation, resident on an OpenCL device
//!
//! Solves ∂t B = ∇×(u×B) for a prescribed velocity u, written per component as
//! ∂t Bᵢ = ∂ⱼ(uᵢBⱼ) − uᵢ∂ⱼBⱼ − ∂ⱼ(uⱼBᵢ), on a 3-D structured grid with summation-by-parts
//! finite differences ([`sbp`]), SAT penalties at inflow boundaries, explicit Runge–Kutta time
//! stepping and optional divergence cleaning by conjugate gradients. The fields are allocated on
//! the device when the [`Solver`] is made and stay there; only the scalars and outputs asked for
//! come back. `Mode::Copy` instead moves every array up and down around every kernel call, as a
//! host-driven code does, to show what residency is worth.
//!
//! | module | what it holds |
//! |---|---|
//! | [`sbp`] | the SBP operators (host, f64): coefficients, norms, dense matrices for tests |
//! | [`case`] | the test cases with exact solutions, their domains and OpenCL formulas |
//! | [`config`] | the options of a run and their validation |
//! | [`decomp`] | the split of the grid into blocks, one per process (groundwork of the MPI solver) |
//! | [`dissipation`] | the artificial dissipation's forms, InductionEq's rows and tables |
//! | [`solver`] | device buffers, generated kernels, time stepping, norms, divergence cleaning |
//! | [`rk`] | the Runge–Kutta schemes' coefficients |
//! | [`output`] | VTK image data, a run's history as CSV or JSON |
//! | [`scaling`] | the times of a step on several ranks against one (`induction bench --scaling`) |
//! | `ranks` | (feature `mpi`) MPI start-up: ranks, node-local rank, the rank's device |
//! | `cli` | (feature `cli`, on by default) the `induction` command line, its progress bars and PNG pictures |
//!
//! The library needs neither clap nor a PNG encoder: a program that embeds the solver depends on
//! it with `default-features = false`. The crate is not published on crates.io, so by path or
//! git: `induction = { path = "…/crates/induction", default-features = false }` (once
//! published, `version = "0.1"` in place of `path`). examples/embed.rs steps a solver and reads
//! its norms so.
//!
//! ```no_run
//! use induction::{Case, Config, Solver};
//!
//! let ctx = induction::context(None)?; // a profiling context on the default device
//! let mut cfg = Config::new(Case::Rotation2d, 4, 40); // order 4, 40 × 40 (× 8) points
//! cfg.final_time = Some(1.0);
//! let mut solver = Solver::new(&ctx, &cfg)?; // fields allocated and initialised on the device
//! let report = solver.run(|_step, _steps, _solver| Ok(()))?;
//! println!("error {:e}, energy {:e}", report.last.error, report.last.energy);
//! # Ok::<(), induction::Error>(())
//! ```
//!
//! Built only on clarray's public API: [`clarray::memory::alloc`] for buffers,
//! [`clarray::program::Source`] for its program (built once into clarray's `Kernels`),
//! `Kernel::launch` and the copy calls.

#![deny(unsafe_code)]

pub mod case;
#[cfg(feature = "cli")]
pub mod cli;
pub mod config;
pub mod decomp;
mod device;
pub mod dissipation;
pub mod error;
pub mod output;
#[cfg(feature = "mpi")]
pub mod ranks;
pub mod rk;
pub mod sbp;
pub mod scaling;
pub mod solver;

pub use case::Case;
pub use config::{CgNorm, Config, Form, Forms, Integrator, Mode, Precision, SourceForm};
pub use device::context;
pub use error::{Error, Result};
pub use solver::{Report, Solver};
