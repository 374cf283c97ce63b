//! PNG pictures: slices of the grid as panels with colour bars labelled with their range, and a
//! run's history (energy, error and divergence over time). Drawn on a canvas of RGB pixels with a
//! built-in 3×5 font, so that no font or plotting library is needed.
//!
//! See [the example in `cli`](mod@crate::cli).

use std::path::Path;

use crate::error::{Error, Result};
use crate::output::HistoryRow;
use crate::solver::Panel;

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
///
/// See [the example in `cli`](mod@crate::cli).
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
///
/// See [the example in `cli`](mod@crate::cli).
pub fn panels_png_size(dims: [usize; 2], panels: usize) -> (usize, usize) {
    let scale = node_scale(dims);
    let panel_w = dims[0] * scale + 8 + 14 + 18 + 9 * 8 + 16;
    (12 + panels * panel_w, 12 + 16 + dims[1] * scale + 12)
}

/// Writes a PNG of panels side by side, each a plane of `dims` nodes (the faster axis across,
/// the slower up) with its title and a colour bar labelled with its range: viridis for values
/// without a sign, a diverging map symmetric about zero for those with one.
///
/// See [the example in `cli`](mod@crate::cli).
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
///
/// See [the example in `cli`](mod@crate::cli).
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
    // Encoded in memory, then written atomically (a temporary file renamed).
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, cv.w as u32, cv.h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let png_err = |e: png::EncodingError| Error::Io {
        doing: "writing",
        path: path.display().to_string(),
        source: std::io::Error::other(e),
    };
    let mut writer = enc.write_header().map_err(png_err)?;
    writer.write_image_data(&cv.rgb).map_err(png_err)?;
    writer.finish().map_err(png_err)?;
    crate::output::write_atomically(path, |w| std::io::Write::write_all(w, &bytes))
}
