//! The fields read back to the host and written from it (on a block, its own nodes only).

use clarray::runtime::RectSide;

use super::{Field, Solver, A};
use crate::config::{Mode, Precision};
use crate::error::{Error, Result};

impl Solver {
    /// The values of a field, read back.
    pub(super) fn read(&self, f: &Field) -> Result<Vec<f64>> {
        let mut bytes = vec![0u8; f.buf.len()];
        let e = self.ctx.queue().read_buffer(&f.buf, 0, &mut bytes[..])?;
        self.timing.borrow_mut().transfer_bytes += bytes.len();
        self.record(e, false)?;
        Ok(match self.cfg.precision {
            Precision::F64 => bytemuck::pod_collect_to_vec::<u8, f64>(&bytes),
            Precision::F32 => {
                bytemuck::pod_collect_to_vec::<u8, f32>(&bytes).into_iter().map(f64::from).collect()
            }
        })
    }

    /// The owned nodes' values of `ncomp` components read back whole (all of them without a
    /// block; its own nodes with one).
    pub(super) fn owned(&self, values: Vec<f64>, ncomp: usize) -> Vec<f64> {
        match &self.split {
            Some(s) => s.part.owned_of(&values, ncomp),
            None => values,
        }
    }

    /// Nodes owned: nx·ny·nz, or those of the block on a block.
    pub(super) fn owned_nodes(&self) -> usize {
        self.split.as_ref().map_or(self.np, |s| s.part.owned_nodes())
    }

    /// The field B, read back: 3 components of nx·ny·nz values each, x fastest (on a block, of
    /// its own nodes only: the product of [`Part::len`](super::Part::len) values each, x fastest).
    ///
    /// See the example in the [crate docs](crate).
    pub fn field(&self) -> Result<Vec<f64>> {
        Ok(self.owned(self.read(&self.b)?, 3))
    }

    /// The discrete divergence D·B, read back (nx·ny·nz values; a block's own nodes on a block).
    ///
    /// See the example in the [crate docs](crate).
    pub fn divergence_field(&self) -> Result<Vec<f64>> {
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        Ok(self.owned(self.read(&self.d)?, 1))
    }

    /// Replaces B by `values` (3 components of nx·ny·nz values each, x fastest; on a block, of its
    /// own nodes, as [`Solver::field`] returns them).
    ///
    /// See the example in the [crate docs](crate).
    pub fn set_field(&mut self, values: &[f64]) -> Result<()> {
        self.write_owned(&self.b, values, 3)
    }

    /// Writes `values` (`ncomp` components of the owned nodes each, x fastest) into the owned
    /// nodes of `f` (on a block, a box inside the held ones; the halo stays as it is).
    pub(super) fn write_owned(&self, f: &Field, values: &[f64], ncomp: usize) -> Result<()> {
        let owned = self.owned_nodes();
        if values.len() != ncomp * owned {
            return Err(Error::Config(format!(
                "a field of {} values was given; this grid takes {ncomp} × {} = {}",
                values.len(),
                owned,
                ncomp * owned
            )));
        }
        let bytes: Vec<u8> = match self.cfg.precision {
            Precision::F64 => bytemuck::cast_slice(values).to_vec(),
            Precision::F32 => {
                let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                // A finite value past f32's largest would become inf on the device.
                if let Some(i) = values.iter().zip(&v).position(|(x, y)| x.is_finite() && !y.is_finite()) {
                    return Err(Error::Config(format!(
                        "value {i} of the field, {:e}, is beyond the largest f32 number ({:e}) of \
                         this f32 solver; scale the field or use Precision::F64",
                        values[i],
                        f32::MAX
                    )));
                }
                bytemuck::cast_slice(&v).to_vec()
            }
        };
        if let Some(s) = &self.split {
            // Each component's own nodes, a box inside the held ones.
            let p = &s.part;
            let size = self.cfg.precision.size();
            let row_pitch = p.held(0) * size;
            let slice_pitch = row_pitch * p.held(1);
            let region = [p.len[0] * size, p.len[1], p.len[2]];
            let comp = owned * size;
            for c in 0..ncomp {
                let side = RectSide::new(
                    [p.halo[0][0] * size, p.halo[1][0], c * p.held(2) + p.halo[2][0]],
                    row_pitch,
                    slice_pitch,
                );
                let host = &bytes[c * comp..(c + 1) * comp];
                let e = self.ctx.queue().write_buffer_rect(&f.buf, side, host, RectSide::packed(), region)?;
                self.record(e, false)?;
            }
            if self.cfg.mode == Mode::Copy {
                self.download(f)?;
            }
            return Ok(());
        }
        let e = self.ctx.queue().write_buffer(&f.buf, 0, &bytes[..])?;
        self.record(e, false)?;
        if self.cfg.mode == Mode::Copy {
            *f.host.borrow_mut() = bytes;
        }
        Ok(())
    }
}
