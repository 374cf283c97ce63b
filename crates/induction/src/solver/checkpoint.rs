//! Checkpoints: the state of a run between two steps, written so that a run can restart from it
//! ([`Solver::checkpoint`], [`Solver::restart`]).
//!
//! Each rank writes one file of its own (`rank00001-of-00004.step0000000020.ckpt`): a header line
//! (what the run is, so that another configuration is refused, the step and the time to the
//! bit) and its owned nodes of B as little-endian f64 (exact for f32 fields too). A file is
//! written whole under a temporary name, flushed to disk and renamed, so a file with a final
//! name is complete. Older checkpoints are removed only after every rank has its new one (the
//! ranks agree first), so that at any time the ranks share at least one complete step; a restart
//! takes the newest step every rank has. A run killed at any point loses at most the steps since
//! its last checkpoint. B, the time and the step are the whole state between steps: every
//! scheme's other registers are set within a step before they are read.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::Solver;
use crate::config::{CleanForm, Precision};
use crate::error::{Error, Result};

const MAGIC: &str = "induction checkpoint 1";

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.display().to_string(), source }
}

impl Solver {
    /// (rank, ranks) of this solver.
    fn place(&self) -> (usize, usize) {
        self.split.as_ref().map_or((0, 1), |s| (s.peers.rank(), s.peers.size()))
    }

    /// What must match between the run that wrote a checkpoint and the one that reads it.
    fn fingerprint(&self) -> Result<String> {
        let c = &self.cfg;
        let (steps, dt) = c.steps()?;
        let (rank, size) = self.place();
        let part =
            self.part().map(|p| format!("{:?}+{:?}", p.start, p.len)).unwrap_or_else(|| "whole".into());
        Ok(format!(
            "case={} order={} operator={:?} n={}x{}x{} precision={} integrator={} forms={} steps={steps} \
             dt={:016x} clean={} rank={rank} ranks={size} block={part}",
            c.case,
            c.order,
            c.operator,
            c.n[0],
            c.n[1],
            c.n[2],
            if c.precision == Precision::F64 { "f64" } else { "f32" },
            c.integrator,
            c.forms,
            dt.to_bits(),
            // true for the least-norm form (as before there were others), else the form's name.
            match c.clean.map(|o| o.form) {
                None => "false",
                Some(CleanForm::LeastNorm) => "true",
                Some(CleanForm::WideDirichlet) => "wide-dirichlet",
                Some(CleanForm::NarrowDirichlet) => "narrow-dirichlet",
            },
        ))
    }

    fn file_prefix(&self) -> String {
        let (rank, size) = self.place();
        format!("rank{rank:05}-of-{size:05}.step")
    }

    /// The steps of this rank's checkpoints in `dir` (complete files only), with their paths.
    fn checkpoints_in(&self, dir: &Path) -> Result<Vec<(usize, PathBuf)>> {
        let prefix = self.file_prefix();
        let mut found = Vec::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
            Err(e) => return Err(io_err(dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err(dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let step =
                name.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".ckpt")).and_then(|s| s.parse().ok());
            if let Some(step) = step {
                found.push((step, entry.path()));
            }
        }
        found.sort();
        Ok(found)
    }

    /// The steps taken so far by [`Solver::run`] (or restored by [`Solver::restart`]).
    ///
    /// See the example in the [crate docs](crate).
    pub fn steps_done(&self) -> usize {
        self.steps_done
    }

    /// Writes this rank's checkpoint of the current state into `dir` (created if missing); every
    /// rank must call it at the same step. Returns the file written.
    ///
    /// See the example in the [crate docs](crate).
    pub fn checkpoint(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let name = format!("{}{:010}.ckpt", self.file_prefix(), self.steps_done);
        let path = dir.join(&name);
        let tmp = dir.join(format!("{name}.tmp"));
        let b = self.field()?;
        let header = format!(
            "{MAGIC}\n{}\nstep={} t={:016x} cg_iterations={} values={}\n",
            self.fingerprint()?,
            self.steps_done,
            self.t.to_bits(),
            self.cg_iterations,
            b.len()
        );
        {
            let file = std::fs::File::create(&tmp).map_err(io_err(&tmp))?;
            let mut w = std::io::BufWriter::new(file);
            let mut body = || -> std::io::Result<()> {
                w.write_all(header.as_bytes())?;
                for v in &b {
                    w.write_all(&v.to_le_bytes())?;
                }
                w.flush()?;
                w.get_ref().sync_all()
            };
            body().map_err(io_err(&tmp))?;
        }
        std::fs::rename(&tmp, &path).map_err(io_err(&path))?;
        // Every rank has this step now (each says so by taking part in the sum), so the older
        // ones may go.
        let mut agree = [1.0];
        self.sum_over_ranks(&mut agree)?;
        for (step, old) in self.checkpoints_in(dir)? {
            if step < self.steps_done {
                std::fs::remove_file(&old).map_err(io_err(&old))?;
            }
        }
        Ok(path)
    }

    /// Restores the newest checkpoint in `dir` that every rank has (written by a run of the same
    /// configuration on as many ranks); [`Solver::run`] then continues from its step. Returns
    /// the step restored.
    ///
    /// See the example in the [crate docs](crate).
    pub fn restart(&mut self, dir: &Path) -> Result<usize> {
        let found = self.checkpoints_in(dir)?;
        // The newest step common to all ranks: the least of the ranks' newest.
        let newest = found.last().map_or(-1.0, |(s, _)| *s as f64);
        let mut least = [-newest];
        self.max_over_ranks(&mut least)?;
        let step = -least[0];
        let Some((_, path)) = found.iter().find(|(s, _)| *s as f64 == step) else {
            let (rank, size) = self.place();
            return Err(Error::Config(format!(
                "--restart {}: no checkpoint there that every rank has (rank {rank} of {size} looked for \
                 files {}*.ckpt); restart with the folder and the number of ranks of the run that wrote it",
                dir.display(),
                self.file_prefix()
            )));
        };
        let bytes = std::fs::read(path).map_err(io_err(path))?;
        let bad = |why: &str| {
            Error::Config(format!(
                "--restart: {} is not a checkpoint of this run: {why}; restart with the same options and \
                 number of ranks as the run that wrote it",
                path.display()
            ))
        };
        let mut lines = bytes.splitn(4, |&c| c == b'\n');
        let (magic, print, state) = (lines.next(), lines.next(), lines.next());
        let data = lines.next().unwrap_or(&[]);
        if magic != Some(MAGIC.as_bytes()) {
            return Err(bad("it does not start as a checkpoint does"));
        }
        let print = String::from_utf8_lossy(print.unwrap_or(&[])).into_owned();
        let mine = self.fingerprint()?;
        if print != mine {
            return Err(bad(&format!("it was written by `{print}`, this run is `{mine}`")));
        }
        let state = String::from_utf8_lossy(state.unwrap_or(&[])).into_owned();
        let field = |key: &str| -> Option<&str> {
            state.split_whitespace().find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        };
        let parsed = (|| {
            Some((
                field("step")?.parse::<usize>().ok()?,
                u64::from_str_radix(field("t")?, 16).ok()?,
                field("cg_iterations")?.parse::<usize>().ok()?,
                field("values")?.parse::<usize>().ok()?,
            ))
        })();
        let Some((steps, t, cg, values)) = parsed else {
            return Err(bad("its state line does not parse"));
        };
        if values.checked_mul(8) != Some(data.len()) {
            return Err(bad(&format!(
                "it holds {} bytes of field where {values} values were announced",
                data.len()
            )));
        }
        let b: Vec<f64> =
            data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        self.set_field(&b)?;
        self.t = f64::from_bits(t);
        self.steps_done = steps;
        self.cg_iterations = cg;
        Ok(steps)
    }
}
