//! Checkpoints: the state of a run between two steps, written so that a run can restart from it
//! ([`Solver::checkpoint`], [`Solver::restart`]).
//!
//! Each rank writes one file of its own (`rank00001-of-00004.step0000000020.ckpt`): a header line
//! (what the run is, so that another configuration is refused, the step and the time to the
//! bit) and its owned nodes of B as little-endian f64 (exact for f32 fields too). A file is
//! written whole under a temporary name, flushed to disk and renamed, so a file with a final
//! name is complete. Older checkpoints are removed only after every rank has its new one (the
//! ranks agree first), so that at any time the ranks share at least one complete step; a restart
//! takes the newest step every rank has. Both concern this run's checkpoints only (those whose
//! header is this run's): other runs may share the folder, and theirs are neither removed nor
//! taken. A file whose header disagrees with its name (the step, the time of that step) or
//! whose field is cut short is refused as damaged. A run killed at any point loses at most the
//! steps since its last checkpoint. B, the time and the step are the whole state between steps: every
//! scheme's other registers are set within a step before they are read.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Part, Solver};
use crate::config::{CleanForm, Config, Inflow, Precision};
use crate::error::{Error, Result};

const MAGIC: &str = "induction checkpoint 1";

fn io_err<'a>(doing: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::Io { doing, path: path.display().to_string(), source }
}

/// The fingerprint line of the checkpoint file `path` (its second line), read without the field;
/// `None` where the file does not start as a checkpoint does, or is gone (another rank or run
/// removed it since the folder was listed).
fn fingerprint_of(path: &Path) -> Result<Option<String>> {
    use std::io::{BufRead, Read};
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("reading", path)(e)),
    };
    // The header is a few hundred bytes; a file without line breaks is not read whole.
    let mut r = std::io::BufReader::new(file).take(1 << 16);
    let mut line = || -> Result<Vec<u8>> {
        let mut l = Vec::new();
        r.read_until(b'\n', &mut l).map_err(io_err("reading", path))?;
        if l.last() == Some(&b'\n') {
            l.pop();
        }
        Ok(l)
    };
    if line()? != MAGIC.as_bytes() {
        return Ok(None);
    }
    Ok(String::from_utf8(line()?).ok())
}

impl Solver {
    /// (rank, ranks) of this solver.
    fn place(&self) -> (usize, usize) {
        self.split.as_ref().map_or((0, 1), |s| (s.peers.rank(), s.peers.size()))
    }

    /// What must match between the run that wrote a checkpoint and the one that reads it:
    /// every option that changes the numbers, the rank and its block, as `key=value` words
    /// ([`differences`] names those that differ). The options that leave the field as it is
    /// (launch layout, copy mode, index width, overlap) are left out, so that a run may restart
    /// on another device or with other launch options.
    fn fingerprint(&self) -> Result<String> {
        fingerprint(&self.cfg, self.place(), self.part())
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
            Err(e) => return Err(io_err("reading", dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err("reading", dir))?;
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
    /// rank must call it at the same step. Returns the file written. The state must be one that
    /// [`Solver::run`] or [`Solver::run_to`] reached: after [`Solver::step`] by hand (which
    /// advances the time but not [`Solver::steps_done`]) it is refused.
    ///
    /// See the example in the [crate docs](crate).
    pub fn checkpoint(&self, dir: &Path) -> Result<PathBuf> {
        self.check_reached_by_run()?;
        std::fs::create_dir_all(dir).map_err(io_err("writing", dir))?;
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
            let file = std::fs::File::create(&tmp).map_err(io_err("writing", &tmp))?;
            let mut w = std::io::BufWriter::new(file);
            let mut body = || -> std::io::Result<()> {
                w.write_all(header.as_bytes())?;
                for v in &b {
                    w.write_all(&v.to_le_bytes())?;
                }
                w.flush()?;
                w.get_ref().sync_all()
            };
            body().map_err(io_err("writing", &tmp))?;
        }
        std::fs::rename(&tmp, &path).map_err(io_err("writing", &path))?;
        // Every rank has this step now (each says so by taking part in the sum), so the older
        // ones may go: those of this run only (the same fingerprint). Another run's checkpoints
        // in the same folder (another case, grid or option) are its own, and stay.
        let mut agree = [1.0];
        self.sum_over_ranks(&mut agree)?;
        let mine = self.fingerprint()?;
        for (step, old) in self.checkpoints_in(dir)? {
            if step < self.steps_done && fingerprint_of(&old)?.as_deref() == Some(mine.as_str()) {
                match std::fs::remove_file(&old) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(io_err("writing", &old)(e));
                    }
                    _ => {}
                }
            }
        }
        Ok(path)
    }

    /// Restores the newest checkpoint in `dir` that every rank has (written by a run of the same
    /// configuration on as many ranks; other runs' checkpoints in `dir` are passed over, and
    /// named in the error where none of this run's is there); [`Solver::run`] then continues
    /// from its step. Returns the step restored.
    ///
    /// See the example in the [crate docs](crate).
    pub fn restart(&mut self, dir: &Path) -> Result<usize> {
        let mine = self.fingerprint()?;
        // This rank's checkpoints of this run (the same fingerprint); those of other runs that
        // share the folder are passed over, and named if none of this run's is there.
        let mut found = Vec::new();
        let mut others: Vec<(usize, PathBuf, Option<String>)> = Vec::new();
        // A rank that cannot read the folder still takes part in the agreement below (the
        // others would wait for it for ever), and then returns its error.
        let read = self.checkpoints_in(dir).and_then(|list| {
            for (step, path) in list {
                match fingerprint_of(&path)? {
                    Some(print) if print == mine => found.push((step, path)),
                    print => others.push((step, path, print)),
                }
            }
            Ok(())
        });
        // The newest step common to all ranks: the least of the ranks' newest; and whether a
        // rank failed to read.
        let newest = found.last().map_or(-1.0, |(s, _)| *s as f64);
        let mut agreed = [-newest, if read.is_err() { 1.0 } else { 0.0 }];
        self.max_over_ranks(&mut agreed)?;
        read?;
        if agreed[1] > 0.0 {
            return Err(Error::Config(format!(
                "--restart {}: another rank could not read its checkpoints there (its own error \
                 says why); nothing was restored",
                dir.display()
            )));
        }
        let step = -agreed[0];
        let Some((name_step, path)) = found.iter().find(|(s, _)| *s as f64 == step) else {
            let (rank, size) = self.place();
            if found.is_empty() && !others.is_empty() {
                return Err(Error::Config(format!(
                    "--restart {}: it holds checkpoints for rank {rank} of {size}, but none of this \
                     run: {}; restart with the same options and number of ranks as the run that wrote \
                     them, or give this run a folder of its own (--checkpoint and --restart)",
                    dir.display(),
                    foreign(&others, &mine)
                )));
            }
            return Err(Error::Config(format!(
                "--restart {}: no checkpoint there that every rank has (rank {rank} of {size} looked for \
                 files {}*.ckpt of this run); restart with the folder and the number of ranks of the run \
                 that wrote it",
                dir.display(),
                self.file_prefix()
            )));
        };
        let bytes = std::fs::read(path).map_err(io_err("reading", path))?;
        let bad = |why: &str| {
            Error::Config(format!(
                "--restart: {} is not a checkpoint of this run: {why}; restart with the same options and \
                 number of ranks as the run that wrote it",
                path.display()
            ))
        };
        // A file whose header was read as this run's, but whose contents do not hold together:
        // damaged (cut short, edited, renamed), not another run's.
        let damaged = |why: String| Error::Io {
            doing: "reading",
            path: path.display().to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the checkpoint is damaged: {why}; remove it to restart from an older checkpoint \
                     of this run (or run again from the start)"
                ),
            ),
        };
        let mut lines = bytes.splitn(4, |&c| c == b'\n');
        let (magic, print, state) = (lines.next(), lines.next(), lines.next());
        let data = lines.next().unwrap_or(&[]);
        if magic != Some(MAGIC.as_bytes()) {
            return Err(bad("it does not start as a checkpoint does"));
        }
        let print = String::from_utf8_lossy(print.unwrap_or(&[])).into_owned();
        if print != mine {
            return Err(bad(&format!(
                "it differs in {}; it was written by `{print}`, this run is `{mine}`",
                differences(&print, &mine)
            )));
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
            return Err(damaged(format!("its state line `{state}` does not parse")));
        };
        if steps != *name_step {
            return Err(damaged(format!("its header says step {steps}, its name step {name_step}")));
        }
        let t = f64::from_bits(t);
        let (fits, expected) = self.time_of_steps(steps, t)?;
        if !fits {
            return Err(damaged(format!(
                "its header says t = {t:e}, but {steps} steps of this run end at t = {expected:e}"
            )));
        }
        if values.checked_mul(8) != Some(data.len()) {
            return Err(damaged(format!(
                "it is truncated or overlong: its header announces {values} values ({} bytes of field), \
                 the file holds {} bytes of field",
                values.saturating_mul(8),
                data.len()
            )));
        }
        let b: Vec<f64> =
            data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        self.set_field(&b)?;
        self.t = t;
        self.steps_done = steps;
        self.cg_iterations = cg;
        Ok(steps)
    }

    /// Whether `t` is the time that `steps` steps of [`Solver::run`] reach: `steps` times the
    /// run's dt up to the rounding of adding them up (or the final time after the last step);
    /// with that time.
    pub(crate) fn time_of_steps(&self, steps: usize, t: f64) -> Result<(bool, f64)> {
        let (total, dt) = self.cfg.steps()?;
        let k = steps as f64;
        let expected = k * dt;
        // Each of the k additions rounds by at most half an ulp of a sum of at most k·dt.
        let rounding = k * k * f64::EPSILON * dt;
        let fits = (t - expected).abs() <= rounding || (steps == total && t == self.cfg.final_time());
        Ok((fits, expected))
    }

    /// An error unless the solver is at a state that [`Solver::run`] reaches: its time is that
    /// of the steps it counts ([`Solver::step`] by hand advances the time, not the count, and
    /// a restart from such a state would go on from a wrong step or refuse to run).
    fn check_reached_by_run(&self) -> Result<()> {
        let (fits, expected) = self.time_of_steps(self.steps_done, self.t)?;
        if fits {
            return Ok(());
        }
        Err(Error::Config(format!(
            "Solver::checkpoint: this solver is at t = {:e}, but the {} steps of run()/run_to() it \
             counts end at t = {expected:e}: it was advanced by Solver::step by hand. A checkpoint \
             holds a state that run() or run_to() reached, so that a restart goes on with the run's \
             steps; advance with run_to(Some(step), …) instead, or checkpoint before stepping by hand",
            self.t, self.steps_done
        )))
    }
}

/// The checkpoints of other runs (`others`: step, file, fingerprint where the file starts as a
/// checkpoint does), in words: each fingerprint once, with its steps, a file and how it differs
/// from this run's (`mine`).
fn foreign(others: &[(usize, PathBuf, Option<String>)], mine: &str) -> String {
    let mut prints: Vec<&Option<String>> = Vec::new();
    for (_, _, print) in others {
        if !prints.contains(&print) {
            prints.push(print);
        }
    }
    prints
        .into_iter()
        .map(|print| {
            let of: Vec<_> = others.iter().filter(|(_, _, p)| p == print).collect();
            let steps: Vec<String> = of.iter().map(|(s, _, _)| s.to_string()).collect();
            let file = of[0].1.display();
            match print {
                Some(print) => format!(
                    "{file} (steps {}) is not a checkpoint of this run: it differs in {}; it was \
                     written by `{print}`, this run is `{mine}`",
                    steps.join(", "),
                    differences(print, mine)
                ),
                None => format!("{file} (steps {}) does not start as a checkpoint does", steps.join(", ")),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// [`Solver::fingerprint`] of a run of `cfg` on rank `place.0` of `place.1`, with block `part`.
fn fingerprint(cfg: &Config, place: (usize, usize), part: Option<Part>) -> Result<String> {
    // Every field named, so that a new option must be placed here or left out on purpose.
    let Config {
        case,
        order,
        operator,
        n,
        // Both enter through the steps and dt.
        final_time: _,
        cfl: _,
        integrator,
        forms,
        precision,
        mode: _,
        clean,
        inflow,
        local: _,
        gpu_layout: _,
        z_chunk: _,
        vector_width: _,
        build_options: _,
        wide_indices: _,
        force: _,
        dissipation,
        dissipation_options,
        // Both enter through the domain.
        periodic_length: _,
        hall,
        bounds: _,
        overlap: _,
    } = cfg;
    let (steps, dt) = cfg.steps()?;
    let (rank, size) = place;
    let list = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let part = part.map_or_else(|| "whole".into(), |p| format!("{}+{}", list(&p.start), list(&p.len)));
    let (lo, hi) = cfg.domain();
    let domain: Vec<String> = (0..3).map(|a| format!("{:?},{:?}", lo[a], hi[a])).collect();
    let cg = clean.map_or_else(
        || "none".to_string(),
        |c| format!("{}/{:?}/{}/{}", c.norm, c.tol, c.max_iter, c.check_every),
    );
    let diss = dissipation_options;
    let a = diss.adaptive;
    Ok(format!(
        "case={case} order={order} operator={operator:?} n={}x{}x{} precision={} integrator={integrator} \
         forms={forms} steps={steps} dt={:016x} clean={} cg={cg} inflow={} hall={hall} domain={} \
         dissipation={} dissipation-form={} dissipation-rows={} adaptive={:?},{:?},{:?},{:?} \
         rank={rank} ranks={size} block={part}",
        n[0],
        n[1],
        n[2],
        if *precision == Precision::F64 { "f64" } else { "f32" },
        dt.to_bits(),
        // true for the least-norm form (as before there were others), else the form's name.
        match clean.map(|o| o.form) {
            None => "false",
            Some(CleanForm::LeastNorm) => "true",
            Some(CleanForm::WideDirichlet) => "wide-dirichlet",
            Some(CleanForm::NarrowDirichlet) => "narrow-dirichlet",
        },
        match inflow {
            Inflow::Exact => "exact",
            Inflow::Zero => "zero",
        },
        domain.join(","),
        dissipation.map_or_else(|| "none".to_string(), |e| format!("{e:?}")),
        diss.form,
        diss.rows,
        a.mp2min,
        a.mp2max,
        a.cmin,
        a.cmax,
    ))
}

/// The words of two fingerprints (`key=value`) that differ, in words: "dissipation (none in the
/// checkpoint, 1.0 in this run), …".
fn differences(theirs: &str, mine: &str) -> String {
    let words = |s: &str| -> Vec<(String, String)> {
        s.split_whitespace()
            .map(|w| match w.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (w.to_string(), String::new()),
            })
            .collect()
    };
    let (theirs, mine) = (words(theirs), words(mine));
    let value =
        |list: &[(String, String)], key: &str| list.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let mut keys: Vec<&String> = mine.iter().map(|(k, _)| k).collect();
    keys.extend(theirs.iter().map(|(k, _)| k).filter(|k| value(&mine, k).is_none()));
    let differ: Vec<String> = keys
        .into_iter()
        .filter_map(|k| {
            let (t, m) = (value(&theirs, k), value(&mine, k));
            (t != m).then(|| {
                let said = |v: Option<String>| v.unwrap_or_else(|| "not given".into());
                format!("{k} ({} in the checkpoint, {} in this run)", said(t), said(m))
            })
        })
        .collect();
    if differ.is_empty() {
        "the layout of its header line".to_string()
    } else {
        differ.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::{differences, fingerprint};
    use crate::config::{CgNorm, CleanOptions, Config, Inflow};
    use crate::dissipation::{DissipationForm, DissipationRows};
    use crate::{Case, Integrator};

    /// Regression: the fingerprint left out the dissipation (strength, form, rows, adaptive
    /// thresholds), the Hall term, the inflow data, the box and the cleaning's tolerance, inner
    /// product and iteration limits, so a checkpoint of one run restarted another. Each option
    /// that changes the field changes the fingerprint, and the difference names it; the launch
    /// options do not.
    #[test]
    fn every_option_that_changes_the_field_is_in_the_fingerprint() {
        let base = Config::new(Case::Rotation3d, 4, 8);
        let print = |c: &Config| fingerprint(c, (0, 1), None).unwrap();
        let mine = print(&base);
        let diss = |f: &dyn Fn(&mut Config)| {
            let mut c = base.clone();
            c.dissipation = Some(1.0);
            f(&mut c);
            c
        };
        let cleaned = |f: &dyn Fn(&mut CleanOptions)| {
            let mut c = base.clone();
            let mut o = CleanOptions::default();
            f(&mut o);
            c.clean = Some(o);
            c
        };
        let with = |f: &dyn Fn(&mut Config)| {
            let mut c = base.clone();
            f(&mut c);
            c
        };
        let periodic = Config::new(Case::PeriodicAdvection, 4, 8);
        let changed: Vec<(&str, Config, Config)> = vec![
            ("dissipation", base.clone(), diss(&|_| {})),
            ("dissipation", diss(&|_| {}), diss(&|c| c.dissipation = Some(0.5))),
            (
                "dissipation-form",
                diss(&|_| {}),
                diss(&|c| c.dissipation_options.form = DissipationForm::Adaptive),
            ),
            (
                "dissipation-rows",
                diss(&|_| {}),
                diss(&|c| c.dissipation_options.rows = DissipationRows::InductionEq),
            ),
            (
                "adaptive",
                diss(&|c| c.dissipation_options.form = DissipationForm::Adaptive),
                diss(&|c| {
                    c.dissipation_options.form = DissipationForm::Adaptive;
                    c.dissipation_options.adaptive.cmax = 20.0;
                }),
            ),
            ("hall", with(&|_| {}), with(&|c| c.hall = true)),
            ("inflow", base.clone(), with(&|c| c.inflow = Inflow::Zero)),
            ("domain", base.clone(), with(&|c| c.bounds = Some([[-1.0, 1.0], [-1.0, 1.0], [-0.5, 1.5]]))),
            ("domain", periodic.clone(), Config { periodic_length: Some(2.0), ..periodic.clone() }),
            ("cg", base.clone(), cleaned(&|_| {})),
            ("cg", cleaned(&|_| {}), cleaned(&|o| o.tol = 1e-6)),
            ("cg", cleaned(&|_| {}), cleaned(&|o| o.norm = CgNorm::Euclidean)),
            ("cg", cleaned(&|_| {}), cleaned(&|o| o.max_iter = 7)),
            ("cg", cleaned(&|_| {}), cleaned(&|o| o.check_every = 3)),
            ("integrator", base.clone(), with(&|c| c.integrator = Integrator::Ssprk33)),
            ("steps", base.clone(), with(&|c| c.final_time = Some(2.0))),
            ("dt", base.clone(), with(&|c| c.cfl = 0.25)),
        ];
        for (key, a, b) in &changed {
            b.validate().unwrap_or_else(|e| panic!("{key}: {e}"));
            let (pa, pb) = (print(a), print(b));
            assert_ne!(pa, pb, "{key}: the same fingerprint");
            let d = differences(&pa, &pb);
            assert!(d.contains(&format!("{key} (")), "{key}: {d}");
        }
        // Options that leave the field as it is.
        for same in [
            with(&|c| c.mode = crate::Mode::Copy),
            with(&|c| c.gpu_layout = Some(true)),
            with(&|c| c.wide_indices = true),
            with(&|c| c.overlap = false),
            with(&|c| c.local = Some([2, 2, 2])),
        ] {
            assert_eq!(print(&same), mine, "{same:?}");
        }
        // Another rank or split.
        assert!(differences(&mine, &fingerprint(&base, (1, 2), None).unwrap()).contains("rank (0 in"));
    }

    #[test]
    fn differences_name_each_word_that_differs() {
        let d =
            differences("case=a dissipation=none steps=3 old=1", "case=a dissipation=1.0 steps=4 cg=none");
        assert_eq!(
            d,
            "dissipation (none in the checkpoint, 1.0 in this run), steps (3 in the checkpoint, 4 in \
             this run), cg (not given in the checkpoint, none in this run), old (1 in the checkpoint, \
             not given in this run)"
        );
    }
}
