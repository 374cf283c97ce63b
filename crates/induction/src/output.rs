//! Output for people: VTK XML image data (`.vti`, opened by ParaView) with B, |B| and div B, and a
//! PNG of the mid-plane slice (z = nz/2) of |B| and of div B, each with a colour bar labelled with
//! its range.

use std::io::Write;
use std::path::Path;

use crate::config::Config;
use crate::error::{Error, Result};

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.display().to_string(), source }
}

fn magnitude(b: &[f64], np: usize) -> Vec<f64> {
    (0..np).map(|m| (b[m] * b[m] + b[np + m] * b[np + m] + b[2 * np + m] * b[2 * np + m]).sqrt()).collect()
}

/// Writes `b` (3 components, x fastest) and `div` as a `.vti` file of VTK XML image data: the
/// point arrays B, |B| and div B as Float64, appended raw after the XML header (each block a UInt64
/// byte count and the little-endian values), which ParaView and VTK read directly.
pub fn write_vti(path: &Path, cfg: &Config, b: &[f64], div: &[f64]) -> Result<()> {
    let [nx, ny, nz] = cfg.n;
    let np = nx * ny * nz;
    let (lo, _) = cfg.domain();
    let h = cfg.spacing();
    let interleaved: Vec<f64> = (0..np).flat_map(|m| [b[m], b[np + m], b[2 * np + m]]).collect();
    let arrays: [(&str, usize, Vec<f64>); 3] =
        [("B", 3, interleaved), ("|B|", 1, magnitude(b, np)), ("div B", 1, div.to_vec())];
    let extent = format!("0 {} 0 {} 0 {}", nx - 1, ny - 1, nz - 1);
    let mut xml = String::new();
    xml += "<?xml version=\"1.0\"?>\n";
    xml +=
        "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n";
    xml += &format!(
        "<ImageData WholeExtent=\"{extent}\" Origin=\"{} {} {}\" Spacing=\"{} {} {}\">\n",
        lo[0], lo[1], lo[2], h[0], h[1], h[2]
    );
    xml += &format!("<Piece Extent=\"{extent}\">\n<PointData Vectors=\"B\" Scalars=\"|B|\">\n");
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

/// Writes a PNG of the mid-plane slice z = nz/2: |B| on the left (viridis), div B on the right
/// (a diverging map, symmetric about zero), each with a colour bar labelled with its range.
pub fn write_png(path: &Path, cfg: &Config, b: &[f64], div: &[f64]) -> Result<()> {
    let [nx, ny, nz] = cfg.n;
    let np = nx * ny * nz;
    let k = nz / 2;
    let mag = magnitude(b, np);
    let slice = |v: &[f64]| v[k * nx * ny..(k + 1) * nx * ny].to_vec();
    let (smag, sdiv) = (slice(&mag), slice(div));
    let range =
        |v: &[f64]| v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let (mlo, mhi) = range(&smag);
    let (dlo, dhi) = range(&sdiv);
    let dmax = dlo.abs().max(dhi.abs()).max(f64::MIN_POSITIVE);
    let scale = (400 / nx.max(ny)).max(1);
    let panel_w = nx * scale + 8 + 14 + 18 + 9 * 8 + 16;
    let (w, h) = (12 + 2 * panel_w, 12 + 16 + ny * scale + 12);
    let mut cv = Canvas::new(w, h);
    panel(&mut cv, 12, 12, scale, &smag, nx, ny, (mlo, mhi), colorous::VIRIDIS, "|B|");
    panel(&mut cv, 12 + panel_w, 12, scale, &sdiv, nx, ny, (-dmax, dmax), colorous::RED_BLUE, "div B");
    let file = std::fs::File::create(path).map_err(io_err(path))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w as u32, h as u32);
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
