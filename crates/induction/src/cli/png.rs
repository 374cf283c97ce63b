//! `induction run --png FILE` with `--png-plane` and `--png-field`: slices of the numerical
//! solution, the exact solution, their difference and the divergence on the mid-planes x, y and
//! z (what InductionEq's plot_numerical_solution, plot_analytical_solution, plot_difference and
//! plot_divergence show).
//!
//! See [the example in `cli`](mod@crate::cli).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::case::Case;
use crate::error::{Error, Result};
use crate::output::check_output_file;
use crate::solver::{Panel, PlaneAxis, PlaneField, Solver};

/// The planes and quantities `--png` draws.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct PngArgs {
    /// Mid-planes --png draws (x, y, z: the plane through node n/2 normal to that axis),
    /// comma-separated or repeated; default z. With this option or --png-field, --png FILE
    /// becomes one file per quantity and plane, FILE's name with `_QUANTITY_PLANE` before its
    /// extension: `--png out.png --png-plane x,z --png-field exact` writes out_exact_x.png and
    /// out_exact_z.png. Without either, FILE is the z plane's |B| and div B side by side.
    #[arg(long, value_name = "PLANE", value_delimiter = ',', requires = "png")]
    pub png_plane: Vec<PlaneAxis>,
    /// Quantities --png draws on each plane, comma-separated or repeated: numerical (|B|), exact
    /// (|B| of the case's exact solution at the same time), difference (B − B_exact, one panel
    /// per component) or divergence (div B); default numerical,divergence (one file each).
    #[arg(long, value_name = "QUANTITY", value_delimiter = ',', requires = "png")]
    pub png_field: Vec<PlaneField>,
}

/// One PNG file `--png` writes.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PngFile {
    /// Where.
    pub path: PathBuf,
    /// The plane.
    pub axis: PlaneAxis,
    /// The quantity; None: |B| and div B side by side (`--png FILE` alone).
    pub field: Option<PlaneField>,
}

/// `FILE`'s name with `_{tag}` before its extension, in FILE's folder (`out.png`, `exact_x` →
/// `out_exact_x.png`; no extension: `out_exact_x`).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn tagged(file: &Path, tag: &str) -> PathBuf {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match file.extension() {
        Some(ext) => format!("{stem}_{tag}.{}", ext.to_string_lossy()),
        None => format!("{stem}_{tag}"),
    };
    file.with_file_name(name)
}

/// `items` without repeats, in their first order.
pub(crate) fn distinct<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for &i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

impl PngArgs {
    /// Whether the files are the default one (neither option given).
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn is_default(&self) -> bool {
        self.png_plane.is_empty() && self.png_field.is_empty()
    }

    /// The files `--png file` writes, planes in the order given, then the quantities.
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn files(&self, file: &Path) -> Vec<PngFile> {
        if self.is_default() {
            return vec![PngFile { path: file.to_path_buf(), axis: PlaneAxis::Z, field: None }];
        }
        let planes = if self.png_plane.is_empty() { vec![PlaneAxis::Z] } else { distinct(&self.png_plane) };
        let fields = if self.png_field.is_empty() {
            vec![PlaneField::Numerical, PlaneField::Divergence]
        } else {
            distinct(&self.png_field)
        };
        let mut out = Vec::new();
        for &axis in &planes {
            for &field in &fields {
                out.push(PngFile {
                    path: tagged(file, &format!("{field}_{axis}")),
                    axis,
                    field: Some(field),
                });
            }
        }
        out
    }

    /// Refuses what cannot be drawn for `case` (the exact solution where the case has none) and
    /// checks that every file can be written, before any computing.
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn check(&self, case: Case, file: &Path) -> Result<()> {
        if let Some(f) = self.png_field.iter().find(|f| f.needs_exact()) {
            if !case.has_exact_solution() {
                return Err(Error::Usage(format!(
                    "--png-field {f} draws the case's exact solution, and {case} has none past t = 0 (its \
                     boundaries impose no data, and the run leaves the formula it starts from); draw \
                     numerical or divergence instead"
                )));
            }
        }
        for f in self.files(file) {
            check_output_file("--png", &f.path)?;
        }
        Ok(())
    }
}

/// Draws the `--png` files of `solver`'s field: on several ranks every rank calls it, and rank 0
/// writes the planes the ranks gathered to it; returns the files this rank wrote.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn write(solver: &Solver, file: &Path, args: &PngArgs) -> Result<Vec<PathBuf>> {
    let files = args.files(file);
    let mut written = Vec::new();
    for axis in distinct(&files.iter().map(|f| f.axis).collect::<Vec<_>>()) {
        let exact = files.iter().any(|f| f.axis == axis && f.field.is_some_and(|q| q.needs_exact()));
        let Some(slice) = solver.slice(axis, exact)? else {
            continue;
        };
        for f in files.iter().filter(|f| f.axis == axis) {
            let panels: Vec<Panel> = match f.field {
                Some(q) => slice.panels(q)?,
                None => {
                    [slice.panels(PlaneField::Numerical)?, slice.panels(PlaneField::Divergence)?].concat()
                }
            };
            if let Some(dir) = f.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                    doing: "writing",
                    path: dir.display().to_string(),
                    source,
                })?;
            }
            super::picture::write_panels_png(&f.path, slice.dims, &panels)?;
            written.push(f.path.clone());
        }
    }
    Ok(written)
}
