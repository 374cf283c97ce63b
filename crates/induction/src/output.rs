//! Output for people: VTK XML image data (`.vti`, opened by ParaView) with B, |B| and div B, and
//! a run's history (the norms after every step) as CSV or JSON. Every output path is checked
//! before a run ([`check_output_file`]), so a bad one costs no computing. The PNG pictures are
//! the command line's (`induction::cli::picture`, feature `cli`).
//!
//! ```
//! use induction::output::{check_output_file, write_vti, HistoryFormat};
//! use induction::{Case, Config};
//! use std::path::Path;
//! # fn main() -> induction::Result<()> {
//! assert_eq!(HistoryFormat::of(Path::new("run/history.json"))?, HistoryFormat::Json);
//! assert!(HistoryFormat::of(Path::new("history.txt")).is_err()); // .csv or .json
//! let dir = std::env::temp_dir().join(format!("induction-doc-{}", std::process::id()));
//! let file = dir.join("b.vti");
//! check_output_file("--vtk", &file)?; // makes the folder, leaves no file behind
//! let cfg = Config::new(Case::PeriodicAdvection, 2, 4); // 4³ nodes
//! let (b, div) = (vec![1.0; 3 * 64], vec![0.0; 64]); // B (x fastest) and div B
//! write_vti(&file, &cfg, &b, &div)?;
//! let bytes = std::fs::read(&file).map_err(|source| induction::Error::Io { doing: "reading", path: "b.vti".into(), source })?;
//! assert!(bytes.starts_with(b"<?xml")); // an XML header, the values appended raw
//! std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```

use std::io::Write;
use std::path::Path;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::solver::{CleanStats, Norms};

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { doing: "writing", path: path.display().to_string(), source }
}

/// Writes the file `path` atomically: `body` writes into a temporary file in the same folder,
/// which is flushed to disk and renamed to `path`, so that `path` holds either its old contents
/// or the whole new file, never a part (a run killed while writing, a full disk). The
/// temporary file is removed when `body` or the writing fails.
///
/// ```
/// use induction::output::write_atomically;
/// # fn main() -> induction::Result<()> {
/// let path = std::env::temp_dir().join(format!("induction-atomic-{}.txt", std::process::id()));
/// write_atomically(&path, |w| std::io::Write::write_all(w, b"whole or nothing"))?;
/// assert_eq!(std::fs::read(&path).unwrap(), b"whole or nothing");
/// std::fs::remove_file(&path).ok();
/// # Ok(()) }
/// ```
pub fn write_atomically(
    path: &Path,
    body: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(file);
        body(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all()?;
        drop(w);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        std::fs::remove_file(&tmp).ok();
    }
    written.map_err(io_err(path))
}

/// Writes `b` (3 components, x fastest) and `div` as a `.vti` file of VTK XML image data: the
/// point arrays B, |B| and div B as Float64, appended raw after the XML header (each block a UInt64
/// byte count and the little-endian values), which ParaView and VTK read directly.
///
/// See [the example in `output`](mod@crate::output).
pub fn write_vti(path: &Path, cfg: &Config, b: &[f64], div: &[f64]) -> Result<()> {
    check_grid(cfg)?;
    let [nx, ny, nz] = cfg.n;
    write_vti_piece(path, cfg, [[0, nx - 1], [0, ny - 1], [0, nz - 1]], b, div)
}

/// An error unless `cfg`'s grid has a node along every axis.
fn check_grid(cfg: &Config) -> Result<()> {
    let [nx, ny, nz] = cfg.n;
    if cfg.n.contains(&0) {
        return Err(Error::Config(format!(
            "a VTK file of a {nx}×{ny}×{nz} grid was asked for; every axis needs at least one node"
        )));
    }
    Ok(())
}

/// The extent of a box of nodes as VTK writes it: first and last node per axis.
fn extent_text(e: [[usize; 2]; 3]) -> String {
    format!("{} {} {} {} {} {}", e[0][0], e[0][1], e[1][0], e[1][1], e[2][0], e[2][1])
}

/// [`write_vti`] of one piece of the grid: the nodes `extent[a][0] ..= extent[a][1]` per axis,
/// whose values `b` (3 components) and `div` hold, x fastest. The file says the whole grid's
/// extent and the piece's, as the pieces of a `.pvti` ([`write_pvti`]) do.
///
/// See [the example in `output`](mod@crate::output).
pub fn write_vti_piece(
    path: &Path,
    cfg: &Config,
    extent: [[usize; 2]; 3],
    b: &[f64],
    div: &[f64],
) -> Result<()> {
    check_grid(cfg)?;
    if let Some(a) = (0..3).find(|&a| extent[a][0] > extent[a][1] || extent[a][1] >= cfg.n[a]) {
        return Err(Error::Config(format!(
            "a piece of nodes {} … {} along {} was asked for, but the grid has nodes 0 … {} there; \
             give first ≤ last < {}",
            extent[a][0],
            extent[a][1],
            ["x", "y", "z"][a],
            cfg.n[a] - 1,
            cfg.n[a]
        )));
    }
    // Each extent is within the grid, whose node count `cfg.nodes()` bounds.
    let np = cfg.nodes().map(|_| extent.iter().map(|e| e[1] + 1 - e[0]).product::<usize>())?;
    if b.len() != 3 * np || div.len() != np {
        return Err(Error::Config(format!(
            "a piece of {np} nodes was given {} values of B and {} of div B; it takes {} and {np}",
            b.len(),
            div.len(),
            3 * np
        )));
    }
    let [nx, ny, nz] = cfg.n;
    let whole = extent_text([[0, nx - 1], [0, ny - 1], [0, nz - 1]]);
    let (lo, _) = cfg.domain();
    let h = cfg.spacing();
    let interleaved: Vec<f64> = (0..np).flat_map(|m| [b[m], b[np + m], b[2 * np + m]]).collect();
    let arrays: [(&str, usize, Vec<f64>); 3] = [
        ("B", 3, interleaved),
        ("|B|", 1, crate::solver::magnitude(b, np, 0..np)?),
        ("div B", 1, div.to_vec()),
    ];
    let mut xml = String::new();
    xml += "<?xml version=\"1.0\"?>\n";
    xml +=
        "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n";
    xml += &format!(
        "<ImageData WholeExtent=\"{whole}\" Origin=\"{} {} {}\" Spacing=\"{} {} {}\">\n",
        lo[0], lo[1], lo[2], h[0], h[1], h[2]
    );
    xml +=
        &format!("<Piece Extent=\"{}\">\n<PointData Vectors=\"B\" Scalars=\"|B|\">\n", extent_text(extent));
    let mut offset = 0usize;
    for (name, comps, values) in &arrays {
        xml += &format!(
            "<DataArray type=\"Float64\" Name=\"{name}\" NumberOfComponents=\"{comps}\" format=\"appended\" offset=\"{offset}\"/>\n"
        );
        offset += 8 + 8 * values.len();
    }
    xml += "</PointData>\n</Piece>\n</ImageData>\n<AppendedData encoding=\"raw\">\n_";
    write_atomically(path, |w| {
        w.write_all(xml.as_bytes())?;
        for (_, _, values) in &arrays {
            w.write_all(&((8 * values.len()) as u64).to_le_bytes())?;
            for v in values {
                w.write_all(&v.to_le_bytes())?;
            }
        }
        w.write_all(b"\n</AppendedData>\n</VTKFile>\n")
    })
}

/// Writes the `.pvti` file (VTK XML parallel image data) that makes the `.vti` pieces one field
/// in ParaView: the whole grid's extent, origin and spacing, the arrays of [`write_vti`], and
/// each piece's extent and file (`pieces`: extent, file name relative to the `.pvti`). Pieces
/// share their high faces with the next piece's low ones, so that no cell is missing between
/// them.
///
/// See [the example in `output`](mod@crate::output).
pub fn write_pvti(path: &Path, cfg: &Config, pieces: &[([[usize; 2]; 3], String)]) -> Result<()> {
    // The whole extent's last node is n - 1 per axis: a grid with an empty axis has none.
    check_grid(cfg)?;
    let [nx, ny, nz] = cfg.n;
    let (lo, _) = cfg.domain();
    let h = cfg.spacing();
    let mut xml = String::new();
    xml += "<?xml version=\"1.0\"?>\n";
    xml +=
        "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n";
    xml += &format!(
        "<PImageData WholeExtent=\"{}\" GhostLevel=\"0\" Origin=\"{} {} {}\" Spacing=\"{} {} {}\">\n",
        extent_text([[0, nx - 1], [0, ny - 1], [0, nz - 1]]),
        lo[0],
        lo[1],
        lo[2],
        h[0],
        h[1],
        h[2]
    );
    xml += "<PPointData Vectors=\"B\" Scalars=\"|B|\">\n";
    for (name, comps) in [("B", 3), ("|B|", 1), ("div B", 1)] {
        xml += &format!("<PDataArray type=\"Float64\" Name=\"{name}\" NumberOfComponents=\"{comps}\"/>\n");
    }
    xml += "</PPointData>\n";
    for (extent, file) in pieces {
        xml += &format!("<Piece Extent=\"{}\" Source=\"{file}\"/>\n", extent_text(*extent));
    }
    xml += "</PImageData>\n</VTKFile>\n";
    write_atomically(path, |w| w.write_all(xml.as_bytes()))
}

/// Checks before a run that the file `path`, given by the option `option`, can be written: it is
/// no folder, its folder exists or can be made, and the file can be opened for writing (a file
/// that was not there is removed again). The error names the file.
///
/// See [the example in `output`](mod@crate::output).
pub fn check_output_file(option: &str, path: &Path) -> Result<()> {
    let fail = |kind: std::io::ErrorKind, what: String| Error::Io {
        doing: "writing",
        path: path.display().to_string(),
        source: std::io::Error::new(kind, format!("{option} {}: {what}", path.display())),
    };
    if path.is_dir() {
        return Err(fail(std::io::ErrorKind::InvalidInput, "is a folder; give a file name".into()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Some(file) = file_ancestor(dir) {
            return Err(fail(
                std::io::ErrorKind::NotADirectory,
                format!("{} is a file, not a folder", file.display()),
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            fail(e.kind(), format!("its folder {} does not exist and cannot be made: {e}", dir.display()))
        })?;
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| fail(e.kind(), format!("cannot be opened for writing: {e}")))?;
    if !existed {
        // Gone already is fine: the ranks of an MPI run all check the same files at once, and
        // another rank may have removed the file this one found missing and made.
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(fail(e.kind(), format!("cannot be removed again: {e}")));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The nearest of `dir` and its ancestors that exists, if that is not a folder (a file where
/// a folder is needed).
fn file_ancestor(dir: &Path) -> Option<&Path> {
    let existing = dir.ancestors().filter(|a| !a.as_os_str().is_empty()).find(|a| a.exists())?;
    (!existing.is_dir()).then_some(existing)
}

/// Checks before a run that the folder `dir`, given by the option `option`, is not a file and
/// not under one (it is not made here). The error names the option and the folder.
///
/// See [the example in `output`](mod@crate::output) for its sibling [`check_output_file`].
pub fn check_output_dir(option: &str, dir: &Path) -> Result<()> {
    let fail = |kind: std::io::ErrorKind, what: String| Error::Io {
        doing: "writing",
        path: dir.display().to_string(),
        source: std::io::Error::new(kind, format!("{option} {}: {what}", dir.display())),
    };
    if let Some(file) = file_ancestor(dir) {
        return Err(fail(
            std::io::ErrorKind::NotADirectory,
            format!("{} is a file, not a folder", file.display()),
        ));
    }
    // Not made here: a run refused later (a bad option) must leave nothing behind; the
    // checkpoint writer makes the folder.
    Ok(())
}

/// The norms after one step of a run (step 0: the initial field), and the cleaning's outcome
/// where the run cleans.
///
/// See [the example in `output`](mod@crate::output).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryRow {
    /// Steps taken.
    pub step: usize,
    /// The norms of the field after them.
    pub norms: Norms,
    /// The divergence cleaning after the step.
    pub clean: Option<CleanStats>,
}

/// The format of a history file, by its extension.
///
/// See [the example in `output`](mod@crate::output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryFormat {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object: `{"columns": [...], "rows": [[...], ...]}`, non-finite values as null.
    Json,
}

impl HistoryFormat {
    /// The format that `path`'s extension names (`.csv` or `.json`).
    ///
    /// See [the example in `output`](mod@crate::output).
    pub fn of(path: &Path) -> Result<HistoryFormat> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("csv") => Ok(HistoryFormat::Csv),
            Some("json") => Ok(HistoryFormat::Json),
            _ => Err(Error::Config(format!(
                "--history {}: the format is chosen by the extension, .csv or .json; name the file \
                 e.g. history.csv",
                path.display()
            ))),
        }
    }
}

const HISTORY_COLUMNS: [&str; 9] = [
    "step",
    "time",
    "energy",
    "error",
    "relative_error",
    "divergence",
    "divergence_interior",
    "cg_iterations",
    "cg_residual",
];

fn history_values(r: &HistoryRow) -> [Option<f64>; 9] {
    let n = &r.norms;
    [
        Some(r.step as f64),
        Some(n.time),
        Some(n.energy),
        Some(n.error),
        Some(n.relative_error),
        Some(n.divergence),
        Some(n.divergence_interior),
        r.clean.map(|c| c.iterations as f64),
        r.clean.map(|c| c.residual),
    ]
}

/// Writes a history as CSV or JSON (by the extension of `path`).
///
/// See [the example in `output`](mod@crate::output).
pub fn write_history(path: &Path, rows: &[HistoryRow]) -> Result<()> {
    let format = HistoryFormat::of(path)?;
    // Full precision (shortest round-trip form); integers as integers.
    let num =
        |v: f64| if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v:e}") };
    let mut out = String::new();
    match format {
        HistoryFormat::Csv => {
            out += &HISTORY_COLUMNS.join(",");
            out.push('\n');
            for r in rows {
                let cells: Vec<String> =
                    history_values(r).iter().map(|v| v.map(num).unwrap_or_default()).collect();
                out += &cells.join(",");
                out.push('\n');
            }
        }
        HistoryFormat::Json => {
            let cols: Vec<String> = HISTORY_COLUMNS.iter().map(|c| format!("\"{c}\"")).collect();
            out += &format!("{{\"columns\": [{}],\n \"rows\": [", cols.join(", "));
            for (i, r) in rows.iter().enumerate() {
                let cells: Vec<String> = history_values(r)
                    .iter()
                    .map(|v| match v {
                        Some(x) if x.is_finite() => num(*x),
                        _ => "null".into(),
                    })
                    .collect();
                out += &format!("{}\n  [{}]", if i == 0 { "" } else { "," }, cells.join(", "));
            }
            out += "]}\n";
        }
    }
    write_atomically(path, |w| w.write_all(out.as_bytes()))
}
