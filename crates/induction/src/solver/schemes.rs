//! The time step of each Runge–Kutta scheme: which buffer each stage reads and writes. Every scheme works in the solver's three fields B, W1 and
//! W2 (no extra device memory) and reuses the fused stage kernels: 2N schemes `stage_lsrk`,
//! SSPRK(10,4) `stage_ssp` plus one `axpby`, 2R schemes `stage_2r` (compiled only for them).

use super::{Solver, A};
use crate::config::Integrator;
use crate::error::Result;
use crate::rk;

impl Solver {
    /// The right-hand side dB/dt = L(B, t) at the current field and time (SAT penalties and
    /// dissipation included), read back: 3 components of nx·ny·nz values. Runs the 2N stage
    /// kernel with A = 0, so it overwrites the Runge–Kutta registers W1 and W2 (which hold
    /// nothing between steps) and leaves B as it was.
    ///
    /// See the example in the [crate docs](crate).
    pub fn rate(&mut self) -> Result<Vec<f64>> {
        let args = [
            A::F(&self.b),
            A::F(&self.w1),
            A::F(&self.w2),
            A::F(&self.u),
            A::R(0.0),
            A::R(0.0),
            A::R(1.0),
            A::R(self.t),
        ];
        self.launch_stage("stage_lsrk", &args)?;
        Ok(self.owned(self.read(&self.w1)?, 3))
    }

    /// One step of a 2N scheme `(A, Bc, c)`: K ← A·K + dt·L(B), B ← B + Bc·K (W1 holds K).
    pub(super) fn step_2n(&mut self, dt: f64, table: &[(f64, f64, f64)]) -> Result<()> {
        for &(a, bc, c) in table {
            let args = [
                A::F(&self.b),
                A::F(&self.w1),
                A::F(&self.w2),
                A::F(&self.u),
                A::R(a),
                A::R(bc),
                A::R(dt),
                A::R(self.t + c * dt),
            ];
            self.launch_stage("stage_lsrk", &args)?;
            std::mem::swap(&mut self.b, &mut self.w2);
        }
        Ok(())
    }

    /// One step of a 2R scheme `(a_{i+1,i}, b_i, c_i)`: K = dt·L(X), X' = S + a·K, S' = S + b·K.
    /// S (the sum y₀ + Σ b_j K_j) lives in W1 from the first stage on; the stage input X
    /// alternates between W2 and B, so that no stage writes the field it reads at neighbours.
    /// At the end S is swapped into B.
    pub(super) fn step_2r(&mut self, dt: f64, table: &[(f64, f64, f64)]) -> Result<()> {
        for (i, &(a, b, c)) in table.iter().enumerate() {
            let (x, s_in, x_out) = match i {
                0 => (&self.b, &self.b, &self.w2),
                i if i % 2 == 1 => (&self.w2, &self.w1, &self.b),
                _ => (&self.b, &self.w1, &self.w2),
            };
            let args = [
                A::F(x),
                A::F(s_in),
                A::F(x_out),
                A::F(&self.w1),
                A::F(&self.u),
                A::R(a),
                A::R(b),
                A::R(dt),
                A::R(self.t + c * dt),
            ];
            self.launch_stage("stage_2r", &args)?;
        }
        std::mem::swap(&mut self.b, &mut self.w1);
        Ok(())
    }

    /// One step of SSPRK(10,4) (see [`rk::SSPRK104_C`]): forward Euler stages of dt/6 that
    /// alternate between W1 and W2, with B holding y₀ and, from stage 5 on, u₂.
    pub(super) fn step_ssprk104(&mut self, dt: f64) -> Result<()> {
        let h = dt / 6.0;
        let euler = |s: &Self, i: usize, from: &super::Field, to: &super::Field| -> Result<()> {
            let args = [
                A::F(from),
                A::F(from),
                A::F(to),
                A::F(&s.u),
                A::R(0.0),
                A::R(1.0),
                A::R(h),
                A::R(s.t + rk::SSPRK104_C[i] * dt),
            ];
            s.launch_stage("stage_ssp", &args)
        };
        let (b, w1, w2) = (&self.b, &self.w1, &self.w2);
        euler(self, 0, b, w1)?;
        euler(self, 1, w1, w2)?;
        euler(self, 2, w2, w1)?;
        euler(self, 3, w1, w2)?;
        // W1 = 0.6·y₀ + 0.4·E u₄, then B = u₂ = 0.9·W1 − 0.5·y₀ (in place: pointwise).
        let (ma, mb) = rk::SSPRK104_MIX;
        let args = [
            A::F(b),
            A::F(w2),
            A::F(w1),
            A::F(&self.u),
            A::R(ma),
            A::R(mb),
            A::R(h),
            A::R(self.t + rk::SSPRK104_C[4] * dt),
        ];
        self.launch_stage("stage_ssp", &args)?;
        let n = 3 * self.np;
        let (ua, ub) = rk::SSPRK104_U2;
        self.launch_flat("axpby", &[A::F(b), A::F(w1), A::R(ua), A::R(ub), A::N(n)], n)?;
        euler(self, 5, w1, w2)?;
        euler(self, 6, w2, w1)?;
        euler(self, 7, w1, w2)?;
        euler(self, 8, w2, w1)?;
        let (la, lb) = rk::SSPRK104_LAST;
        let args = [
            A::F(b),
            A::F(w1),
            A::F(b),
            A::F(&self.u),
            A::R(la),
            A::R(lb),
            A::R(h),
            A::R(self.t + rk::SSPRK104_C[9] * dt),
        ];
        self.launch_stage("stage_ssp", &args)
    }

    /// One step of the configured scheme (no cleaning).
    pub(super) fn step_scheme(&mut self, dt: f64) -> Result<()> {
        match self.cfg.integrator {
            Integrator::Lsrk4 => self.step_2n(dt, &rk::LSRK54),
            Integrator::Td2n84f => self.step_2n(dt, &rk::TD2N84F),
            Integrator::Kcl2r54c => self.step_2r(dt, &rk::KCL2R54C),
            Integrator::Cfr2r64 => self.step_2r(dt, &rk::CFR2R64),
            Integrator::Ssprk104 => self.step_ssprk104(dt),
            Integrator::Ssprk33 => self.step_ssprk33(dt),
        }
    }

    /// One step of SSPRK33 in Shu–Osher form: B⁰ = B, stages into W1, W2 and back into B.
    fn step_ssprk33(&mut self, dt: f64) -> Result<()> {
        for (s, &(a, b, c)) in rk::SSPRK33.iter().enumerate() {
            let (bs, out) = match s {
                0 => (&self.b, &self.w1),
                1 => (&self.w1, &self.w2),
                _ => (&self.w2, &self.b),
            };
            let args = [
                A::F(&self.b),
                A::F(bs),
                A::F(out),
                A::F(&self.u),
                A::R(a),
                A::R(b),
                A::R(dt),
                A::R(self.t + c * dt),
            ];
            self.launch_stage("stage_ssp", &args)?;
        }
        Ok(())
    }
}
