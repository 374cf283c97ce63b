//! Output for people: VTK XML image data (`.vti`, opened by ParaView) with B, |B| and div B, a
//! PNG of the mid-plane slice (z = nz/2) of |B| and of div B, each with a colour bar labelled with
//! its range, and a run's history (the norms after every step) as CSV, JSON or a PNG plot. Every
//! output path is checked before a run ([`check_output_file`]), so a bad one costs no computing.

use std::io::Write;
use std::path::Path;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::solver::{CleanStats, Norms, Panel};

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.display().to_string(), source }
}

/// Writes `b` (3 components, x fastest) and `div` as a `.vti` file of VTK XML image data: the
/// point arrays B, |B| and div B as Float64, appended raw after the XML header (each block a UInt64
/// byte count and the little-endian values), which ParaView and VTK read directly.
pub fn write_vti(path: &Path, cfg: &Config, b: &[f64], div: &[f64]) -> Result<()> {
    let [nx, ny, nz] = cfg.n;
    write_vti_piece(path, cfg, [[0, nx - 1], [0, ny - 1], [0, nz - 1]], b, div)
}

/// The extent of a box of nodes as VTK writes it: first and last node per axis.
fn extent_text(e: [[usize; 2]; 3]) -> String {
    format!("{} {} {} {} {} {}", e[0][0], e[0][1], e[1][0], e[1][1], e[2][0], e[2][1])
}

/// [`write_vti`] of one piece of the grid: the nodes `extent[a][0] ..= extent[a][1]` per axis,
/// whose values `b` (3 components) and `div` hold, x fastest. The file says the whole grid's
/// extent and the piece's, as the pieces of a `.pvti` ([`write_pvti`]) do.
pub fn write_vti_piece(
    path: &Path,
    cfg: &Config,
    extent: [[usize; 2]; 3],
    b: &[f64],
    div: &[f64],
) -> Result<()> {
    let np: usize = extent.iter().map(|e| e[1] + 1 - e[0]).product();
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
        ("|B|", 1, crate::solver::magnitude(b, np, 0..np)),
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
    let file = std::fs::File::create(path).map_err(io_err(path))?;
    let mut w = std::io::BufWriter::new(file);
    let mut body = || -> std::io::Result<()> {
        w.write_all(xml.as_bytes())?;
        for (_, _, values) in &arrays {
            w.write_all(&((8 * values.len()) as u64).to_le_bytes())?;
            for v in values {
                w.write_all(&v.to_le_bytes())?;
            }
        }
        w.write_all(b"\n</AppendedData>\n</VTKFile>\n")?;
        w.flush()
    };
    body().map_err(io_err(path))
}

/// Writes the `.pvti` file (VTK XML parallel image data) that makes the `.vti` pieces one field
/// in ParaView: the whole grid's extent, origin and spacing, the arrays of [`write_vti`], and
/// each piece's extent and file (`pieces`: extent, file name relative to the `.pvti`). Pieces
/// share their high faces with the next piece's low ones, so that no cell is missing between
/// them.
pub fn write_pvti(path: &Path, cfg: &Config, pieces: &[([[usize; 2]; 3], String)]) -> Result<()> {
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
    std::fs::write(path, xml).map_err(io_err(path))
}

/// 3×5 glyphs of the characters the labels use.
fn glyph(c: char) -> [u8; 5] {
    match c {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 7, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 1, 1],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        '.' => [0, 0, 0, 0, 2],
        '-' => [0, 0, 7, 0, 0],
        '+' => [0, 2, 7, 2, 0],
        'e' => [7, 4, 6, 4, 7], // drawn as E: at 3×5 a lowercase e reads as 8
        'B' => [6, 5, 6, 5, 6],
        'd' => [1, 1, 7, 5, 7],
        'i' => [2, 0, 2, 2, 2],
        'v' => [0, 0, 5, 5, 2],
        '|' => [2, 2, 2, 2, 2],
        'E' => [7, 4, 6, 4, 7],
        'r' => [0, 5, 6, 4, 4],
        'o' => [0, 7, 5, 5, 7],
        't' => [2, 7, 2, 2, 3],
        'n' => [0, 6, 5, 5, 5],
        'g' => [0, 7, 5, 3, 6],
        'y' => [0, 5, 5, 2, 4],
        'l' => [6, 2, 2, 2, 7],
        '/' => [1, 1, 2, 4, 4],
        '=' => [0, 7, 0, 7, 0],
        '(' => [1, 2, 2, 2, 1],
        'a' => [0, 6, 1, 5, 7],
        'b' => [4, 4, 7, 5, 7],
        'c' => [0, 7, 4, 4, 7],
        'f' => [3, 4, 7, 4, 4],
        'h' => [4, 4, 7, 5, 5],
        'p' => [0, 7, 5, 7, 4],
        's' => [0, 3, 4, 1, 6],
        'x' => [0, 5, 2, 5, 5],
        'z' => [0, 7, 1, 4, 7],
        'u' => [0, 5, 5, 5, 7],
        'm' => [0, 5, 7, 5, 5],
        ')' => [4, 2, 2, 2, 4],
        _ => [0; 5],
    }
}

struct Canvas {
    w: usize,
    h: usize,
    rgb: Vec<u8>,
}

impl Canvas {
    fn new(w: usize, h: usize) -> Canvas {
        Canvas { w, h, rgb: vec![255; w * h * 3] }
    }

    fn put(&mut self, x: usize, y: usize, c: [u8; 3]) {
        if x < self.w && y < self.h {
            let o = 3 * (y * self.w + x);
            self.rgb[o..o + 3].copy_from_slice(&c);
        }
    }

    /// Text at (x, y), glyphs scaled by 2.
    fn text(&mut self, x: usize, y: usize, s: &str) {
        for (n, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..3 {
                    if bits & (4 >> col) != 0 {
                        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                            self.put(x + n * 8 + col * 2 + dx, y + row * 2 + dy, [0, 0, 0]);
                        }
                    }
                }
            }
        }
    }
}

fn colour(map: colorous::Gradient, t: f64) -> [u8; 3] {
    let c = map.eval_continuous(if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 });
    [c.r, c.g, c.b]
}

/// Draws one panel of a slice (nx × ny values, x fastest) at (x0, y0), with its colour bar.
#[allow(clippy::too_many_arguments)]
fn panel(
    cv: &mut Canvas,
    x0: usize,
    y0: usize,
    scale: usize,
    slice: &[f64],
    nx: usize,
    ny: usize,
    (lo, hi): (f64, f64),
    map: colorous::Gradient,
    title: &str,
) {
    cv.text(x0, y0, title);
    let top = y0 + 16;
    let span = if hi > lo { hi - lo } else { 1.0 };
    for j in 0..ny {
        for i in 0..nx {
            let c = colour(map, (slice[i + nx * j] - lo) / span);
            for dy in 0..scale {
                for dx in 0..scale {
                    cv.put(x0 + i * scale + dx, top + (ny - 1 - j) * scale + dy, c);
                }
            }
        }
    }
    let bar_x = x0 + nx * scale + 8;
    let bar_h = ny * scale;
    for y in 0..bar_h {
        let c = colour(map, 1.0 - y as f64 / (bar_h.max(2) - 1) as f64);
        for dx in 0..14 {
            cv.put(bar_x + dx, top + y, c);
        }
    }
    cv.text(bar_x + 18, top, &format!("{hi:.2e}"));
    cv.text(bar_x + 18, top + bar_h - 10, &format!("{lo:.2e}"));
}

/// Writes a PNG of a plane of the grid (the mid-plane z = nz/2, [`crate::Solver::middle_plane`]):
/// |B| on the left (viridis), div B on the right (a diverging map, symmetric about zero), each
/// with a colour bar labelled with its range.
pub fn write_png(path: &Path, plane: &crate::solver::Plane) -> Result<()> {
    let panels = [
        Panel { title: "|B|".into(), values: plane.magnitude.clone(), signed: false },
        Panel { title: "div B".into(), values: plane.div.clone(), signed: true },
    ];
    write_panels_png(path, [plane.nx, plane.ny], &panels)
}

/// Pixels per node of a plane of `dims` nodes: the plane is drawn about 400 pixels across.
fn node_scale(dims: [usize; 2]) -> usize {
    (400 / dims[0].max(dims[1]).max(1)).max(1)
}

/// Width and height in pixels of the PNG [`write_panels_png`] draws of `panels` panels of a
/// plane of `dims` nodes.
pub fn panels_png_size(dims: [usize; 2], panels: usize) -> (usize, usize) {
    let scale = node_scale(dims);
    let panel_w = dims[0] * scale + 8 + 14 + 18 + 9 * 8 + 16;
    (12 + panels * panel_w, 12 + 16 + dims[1] * scale + 12)
}

/// Writes a PNG of panels side by side, each a plane of `dims` nodes (the faster axis across,
/// the slower up) with its title and a colour bar labelled with its range: viridis for values
/// without a sign, a diverging map symmetric about zero for those with one.
pub fn write_panels_png(path: &Path, dims: [usize; 2], panels: &[Panel]) -> Result<()> {
    let [nx, ny] = dims;
    if let Some(p) = panels.iter().find(|p| p.values.len() != nx * ny) {
        return Err(Error::Config(format!(
            "the panel `{}` has {} values, and its plane {nx}×{ny} = {} nodes; this is a defect of the \
             caller",
            p.title,
            p.values.len(),
            nx * ny
        )));
    }
    let range =
        |v: &[f64]| v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let scale = node_scale(dims);
    let (w, h) = panels_png_size(dims, panels.len());
    let panel_w = if panels.is_empty() { 0 } else { (w - 12) / panels.len() };
    let mut cv = Canvas::new(w, h);
    for (i, p) in panels.iter().enumerate() {
        let (lo, hi) = range(&p.values);
        let (lo, hi, map) = if p.signed {
            let m = lo.abs().max(hi.abs()).max(f64::MIN_POSITIVE);
            (-m, m, colorous::RED_BLUE)
        } else {
            (lo, hi, colorous::VIRIDIS)
        };
        panel(&mut cv, 12 + i * panel_w, 12, scale, &p.values, nx, ny, (lo, hi), map, &p.title);
    }
    write_rgb_png(path, &cv)
}

/// Checks before a run that the file `path`, given by the option `option`, can be written: it is
/// no folder, its folder exists or can be made, and the file can be opened for writing (a file
/// that was not there is removed again). The error names the file.
pub fn check_output_file(option: &str, path: &Path) -> Result<()> {
    let fail = |kind: std::io::ErrorKind, what: String| Error::Io {
        path: path.display().to_string(),
        source: std::io::Error::new(kind, format!("{option} {}: {what}", path.display())),
    };
    if path.is_dir() {
        return Err(fail(std::io::ErrorKind::InvalidInput, "is a folder; give a file name".into()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
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

/// The norms after one step of a run (step 0: the initial field), and the cleaning's outcome
/// where the run cleans.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryFormat {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object: `{"columns": [...], "rows": [[...], ...]}`, non-finite values as null.
    Json,
}

impl HistoryFormat {
    /// The format that `path`'s extension names (`.csv` or `.json`).
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
    std::fs::write(path, out).map_err(io_err(path))
}

/// Draws a line from (x0, y0) to (x1, y1).
fn line(cv: &mut Canvas, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: [u8; 3]) {
    let steps = (x1 - x0).abs().max((y1 - y0).abs()).max(1);
    for s in 0..=steps {
        let x = x0 + (x1 - x0) * s / steps;
        let y = y0 + (y1 - y0) * s / steps;
        if x >= 0 && y >= 0 {
            cv.put(x as usize, y as usize, c);
        }
    }
}

/// Writes a PNG of a history: one panel per quantity over time (energy change E/E0 − 1 on a
/// linear axis; error and divergence on log10 axes), each labelled with its range and the time
/// range.
pub fn write_history_png(path: &Path, rows: &[HistoryRow]) -> Result<()> {
    let e0 = rows.first().map(|r| r.norms.energy).unwrap_or(1.0);
    let times: Vec<f64> = rows.iter().map(|r| r.norms.time).collect();
    let mut panels: Vec<(&str, bool, Vec<f64>)> = vec![
        ("E/E0-1", false, rows.iter().map(|r| r.norms.energy / e0 - 1.0).collect()),
        ("lg error", true, rows.iter().map(|r| r.norms.error).collect()),
        ("lg div B", true, rows.iter().map(|r| r.norms.divergence).collect()),
    ];
    if rows.iter().any(|r| r.clean.is_some()) {
        panels.push((
            "lg cg r",
            true,
            rows.iter().map(|r| r.clean.map_or(f64::NAN, |c| c.residual)).collect(),
        ));
    }
    let (pw, ph, left, gap) = (560usize, 150usize, 100usize, 40usize);
    let (w, h) = (left + pw + 20, 12 + panels.len() * (ph + gap) + 12);
    let mut cv = Canvas::new(w, h);
    let (t0, t1) = (times.first().copied().unwrap_or(0.0), times.last().copied().unwrap_or(1.0));
    let tspan = if t1 > t0 { t1 - t0 } else { 1.0 };
    for (n, (title, log, values)) in panels.iter().enumerate() {
        let top = 12 + n * (ph + gap);
        let ys: Vec<f64> = values
            .iter()
            .map(|&v| {
                if *log {
                    if v > 0.0 {
                        v.log10()
                    } else {
                        f64::NAN
                    }
                } else {
                    v
                }
            })
            .collect();
        let (lo, hi) = ys
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        let (lo, hi) = if lo.is_finite() { (lo, if hi > lo { hi } else { lo + 1.0 }) } else { (0.0, 1.0) };
        cv.text(4, top, title);
        cv.text(4, top + 16, &format!("{hi:.2e}"));
        cv.text(4, top + ph - 10, &format!("{lo:.2e}"));
        for x in left..left + pw {
            cv.put(x, top + ph, [0, 0, 0]);
        }
        for y in top..=top + ph {
            cv.put(left, y, [0, 0, 0]);
        }
        cv.text(left, top + ph + 4, &format!("t={t0:.2e}"));
        cv.text(left + pw - 90, top + ph + 4, &format!("t={t1:.2e}"));
        let point = |t: f64, y: f64| {
            let px = left as f64 + (t - t0) / tspan * (pw - 1) as f64;
            let py = (top + ph) as f64 - (y - lo) / (hi - lo) * (ph - 1) as f64;
            (px.round() as i64, py.round() as i64)
        };
        let mut prev = None;
        for (&t, &y) in times.iter().zip(&ys) {
            if !y.is_finite() {
                prev = None;
                continue;
            }
            let p = point(t, y);
            line(&mut cv, prev.unwrap_or(p), p, [31, 119, 180]);
            prev = Some(p);
        }
    }
    write_rgb_png(path, &cv)
}

fn write_rgb_png(path: &Path, cv: &Canvas) -> Result<()> {
    let file = std::fs::File::create(path).map_err(io_err(path))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), cv.w as u32, cv.h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let png_err = |e: png::EncodingError| Error::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e),
    };
    let mut writer = enc.write_header().map_err(png_err)?;
    writer.write_image_data(&cv.rgb).map_err(png_err)?;
    writer.finish().map_err(png_err)?;
    Ok(())
}
