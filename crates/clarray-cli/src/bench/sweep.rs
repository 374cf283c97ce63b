//! `clarray bench --sweep`: `a + 2`, `sum` and `cumsum` on f32 arrays of 2^10 … 2^30 elements
//! (2^10 … 2^20 with `--quick`), each size timed as the other rows are (best of the repeats,
//! enqueue to `finish`), so the table and the picture show where a user's array sizes fall:
//! below some size every operation costs a launch, above it the bandwidth. Sizes the device
//! cannot hold (three arrays, with a margin) are left out and named.
//!
//! With `--plot FILE.svg` the rows are drawn as GB/s against the size (plotters' SVG backend:
//! text without a font rasteriser), with the copy ceiling as a line and, with `--peers
//! FILE.json` (`scripts/peers.py --sweep --json`), each peer's rows of the same names beside.

use std::path::{Path, PathBuf};

use clarray::array::Array;
use clarray::Context;
use plotters::prelude::*;

use super::{time, BenchOpts, Row};

/// The operations of the sweep, in the order of their rows.
pub const OPS: [&str; 3] = ["a + 2", "sum", "cumsum"];

/// The row name of `op` at 2^`log2` elements (the same in `scripts/peers.py --sweep`).
pub fn row_name(op: &str, log2: u32) -> String {
    format!("sweep: {op} f32 2^{log2}")
}

/// The sizes of the sweep (log2 of the element count).
fn sizes(opts: &BenchOpts) -> std::ops::RangeInclusive<u32> {
    10..=opts.pick(20, 30)
}

/// The rows: every operation at every size that fits.
pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let info = ctx.device().info();
    let q = ctx.queue();
    let mut rows = Vec::new();
    for log2 in sizes(opts) {
        let n = 1usize << log2;
        let bytes = 4 * n as u64;
        // a, the result and cumsum's scratch; half the memory, to leave room for the pool.
        if bytes > info.max_alloc_bytes || 3 * bytes > info.global_mem_bytes / 2 {
            eprintln!(
                "clarray bench --sweep: 2^{log2} f32 left out: 3 × {bytes} bytes do not fit {}",
                info.name
            );
            break;
        }
        let a = Array::<f32>::full(ctx, &[n], 1.0)?;
        let mut out = Array::<f32>::empty(ctx, &[n])?;
        let b = bytes as f64;
        let t = time(opts, q, || out.assign(&a + 2.0))?;
        rows.push(Row::timed(row_name(OPS[0], log2), 2.0 * b, &t, "reads n, writes n"));
        let t = time(opts, q, || a.sum().map(drop))?;
        rows.push(Row::timed(row_name(OPS[1], log2), b, &t, "reads n"));
        let t = time(opts, q, || a.cumsum(0).map(drop))?;
        rows.push(Row::timed(row_name(OPS[2], log2), 2.0 * b, &t, "reads n, writes n"));
    }
    Ok(rows)
}

/// One curve of the picture: a label and (log2 size, GB/s) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// `clarray a + 2`, `cupy sum`, ...
    pub label: String,
    /// The points, by size.
    pub points: Vec<(f64, f64)>,
}

/// The curves of rows named by [`row_name`], one per operation, labelled `who op`.
pub fn curves<'a>(who: &str, rows: impl IntoIterator<Item = (&'a str, f64)>) -> Vec<Curve> {
    let mut out: Vec<Curve> =
        OPS.iter().map(|op| Curve { label: format!("{who} {op}"), points: Vec::new() }).collect();
    for (name, gbps) in rows {
        let Some(rest) = name.strip_prefix("sweep: ") else { continue };
        for (i, op) in OPS.iter().enumerate() {
            let Some(size) = rest.strip_prefix(op).and_then(|r| r.strip_prefix(" f32 2^")) else { continue };
            if let Ok(log2) = size.parse::<u32>() {
                out[i].points.push((f64::from(log2), gbps));
            }
        }
    }
    out.retain(|c| !c.points.is_empty());
    for c in &mut out {
        c.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The peers' curves from `scripts/peers.py --sweep --json`: `{lib: {rows: [{name, gbps}]}}`.
pub fn peer_curves(json: &str) -> Result<Vec<Curve>, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let libs = v.as_object().ok_or("expected an object of libraries (peers.py --json)")?;
    let mut out = Vec::new();
    for (lib, body) in libs {
        let rows = body["rows"].as_array().ok_or_else(|| format!("{lib}: no `rows` list"))?;
        let named = rows.iter().filter_map(|r| Some((r["name"].as_str()?, r["gbps"].as_f64()?)));
        out.extend(curves(lib, named));
    }
    Ok(out)
}

/// The file `--plot PATH` writes: `path` with its symbolic links followed (a link is written
/// through, to the file it names, and stays a link; a dangling one makes the file it names).
/// An existing path that is not a regular file — a folder, a FIFO, a device such as
/// `/dev/stdout`, a socket — is refused: the SVG is written to a temporary file beside the
/// target and renamed over it, which would replace such a path, not write to it.
fn plot_target(path: &Path) -> Result<PathBuf, String> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err("is a folder; give a file name".into()),
        Ok(m) if !m.is_file() => {
            Err("is not a regular file (a FIFO, a device or a socket); the SVG is written \
                                     to a temporary file and renamed over the path, so give the path of a \
                                     regular file or a new one"
                .into())
        }
        Ok(_) => std::fs::canonicalize(path).map_err(|e| format!("cannot resolve {}: {e}", path.display())),
        // Missing, or a dangling link: follow the links by hand to the path they name.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut p = path.to_path_buf();
            for _ in 0..40 {
                match std::fs::symlink_metadata(&p) {
                    Ok(m) if m.file_type().is_symlink() => {
                        let to = std::fs::read_link(&p)
                            .map_err(|e| format!("cannot read the link {}: {e}", p.display()))?;
                        p = match p.parent() {
                            Some(dir) if to.is_relative() => dir.join(to),
                            _ => to,
                        };
                    }
                    _ => return Ok(p),
                }
            }
            Err(format!("{}: too many levels of symbolic links", p.display()))
        }
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The temporary file the SVG of `target` is written to before it is renamed over `target`:
/// in the same folder (so the rename stays in one file system), hidden, named by the process.
fn temp_for(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// An error unless the SVG file `path` can be written, found before anything is measured: the
/// path (its links followed, see [`plot`]) is not a folder nor any other file that is not a
/// regular one, and the temporary file written beside it can be created (it is created and
/// removed again). The error names the file that failed.
pub fn check_plot_path(path: &Path) -> Result<(), String> {
    let target = plot_target(path)?;
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!("its folder {} does not exist", dir.display()));
    }
    let tmp = temp_for(&target);
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
        Ok(f) => {
            drop(f);
            std::fs::remove_file(&tmp)
                .map_err(|e| format!("cannot remove the temporary file {}: {e}", tmp.display()))
        }
        Err(e) => Err(format!(
            "cannot create {} (the temporary file written first, then renamed to {}): {e}; give a path in a \
             folder you can write",
            tmp.display(),
            target.display()
        )),
    }
}

/// Draws `curves` and the ceiling (GB/s) into an SVG file, written atomically: into a
/// temporary file in the same folder, renamed to `path` once whole. A symbolic link at `path`
/// is followed (the file it names is replaced; the link stays); an existing `path` that is not
/// a regular file (a FIFO, a device) is refused, as [`check_plot_path`] refuses it. An error
/// names the file that could not be written or renamed.
pub fn plot(path: &Path, title: &str, ceiling_gbps: f64, curves: &[Curve]) -> Result<(), String> {
    let mut svg = String::new();
    draw(&mut svg, path, title, ceiling_gbps, curves)?;
    let target = plot_target(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let tmp = temp_for(&target);
    let written = match std::fs::write(&tmp, svg) {
        Err(e) => Err(format!("cannot write {}: {e}", tmp.display())),
        Ok(()) => std::fs::rename(&tmp, &target)
            .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), target.display())),
    };
    if written.is_err() {
        std::fs::remove_file(&tmp).ok();
    }
    written
}

/// Draws `curves` and the ceiling (GB/s) as SVG into `svg`.
fn draw(
    svg: &mut String,
    path: &Path,
    title: &str,
    ceiling_gbps: f64,
    curves: &[Curve],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", path.display());
    let (x0, x1) = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0.is_finite() { (x0, x1.max(x0 + 1.0)) } else { (10.0, 30.0) };
    let ymax = curves.iter().flat_map(|c| c.points.iter().map(|p| p.1)).fold(ceiling_gbps, f64::max) * 1.1;
    let root = SVGBackend::with_string(svg, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, 0.0..ymax.max(1e-9))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("elements (log2)")
        .y_desc("GB/s")
        .x_label_formatter(&|x| format!("2^{x:.0}"))
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new([(x0, ceiling_gbps), (x1, ceiling_gbps)], BLACK.stroke_width(1)))
        .map_err(|e| err(&e))?
        .label(format!("copy ceiling {ceiling_gbps:.0} GB/s"))
        .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK));
    for (i, c) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(c.points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(c.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_take_the_rows_of_each_operation_by_size() {
        let rows = [
            (row_name("sum", 12).as_str().to_owned(), 3.0),
            (row_name("a + 2", 11), 2.0),
            (row_name("a + 2", 10), 1.0),
            ("reduce: sum f32 2^28".to_owned(), 9.0),
            (row_name("cumsum", 10), 4.0),
        ];
        let c = curves("clarray", rows.iter().map(|(n, g)| (n.as_str(), *g)));
        let labels: Vec<&str> = c.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["clarray a + 2", "clarray sum", "clarray cumsum"]);
        assert_eq!(c[0].points, [(10.0, 1.0), (11.0, 2.0)]);
        assert_eq!(c[1].points, [(12.0, 3.0)]);
    }

    #[test]
    fn peers_json_gives_a_curve_per_library_and_operation() {
        let json = r#"{"cupy": {"rows": [{"name": "sweep: sum f32 2^10", "gbps": 5.5},
                                          {"name": "a + 2", "gbps": 1.0}]},
                       "pyopencl": {"rows": []}}"#;
        let c = peer_curves(json).unwrap();
        assert_eq!(c, [Curve { label: "cupy sum".into(), points: vec![(10.0, 5.5)] }]);
        assert!(peer_curves("[1]").unwrap_err().contains("object of libraries"));
        assert!(peer_curves(r#"{"cupy": {}}"#).unwrap_err().contains("cupy: no `rows`"));
    }

    #[test]
    fn the_plot_is_an_svg_with_every_label() {
        let dir = std::env::temp_dir().join(format!("clarray-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sweep.svg");
        let c = [Curve { label: "clarray a + 2".into(), points: vec![(10.0, 1.0), (20.0, 100.0)] }];
        plot(&path, "test sweep", 150.0, &c).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        for text in ["test sweep", "clarray a + 2", "copy ceiling 150 GB/s", "2^10"] {
            assert!(svg.contains(text), "no {text:?} in the SVG");
        }
        // Written atomically: no temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["sweep.svg"]);
        assert!(check_plot_path(&path).is_ok());
        assert!(check_plot_path(&dir).unwrap_err().contains("is a folder"));
        let e = check_plot_path(&dir.join("nope/x.svg")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The pre-check creates the temporary file the plot is written to, so a folder that exists
    /// but takes no new file (`/proc`) is refused before anything is measured, and the error
    /// names that temporary file (the file that failed), not the plot's path.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_check_creates_the_temporary_file_and_names_it() {
        let e = check_plot_path(Path::new("/proc/x.svg")).unwrap_err();
        let tmp = format!("/proc/.x.svg.{}.tmp", std::process::id());
        assert!(e.contains(&format!("cannot create {tmp}")), "{e}");
        // A folder that takes files: the check leaves nothing behind.
        let dir = std::env::temp_dir().join(format!("clarray-sweep-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        check_plot_path(&dir.join("new.svg")).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the check left a file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A symbolic link is written through: the file it names gets the SVG and the link stays a
    /// link (a dangling one makes the file it names); a path that is not a regular file (a
    /// device, a FIFO) is refused by the check and by `plot`, and left as it was.
    #[cfg(unix)]
    #[test]
    fn the_plot_writes_through_links_and_refuses_what_is_not_a_file() {
        use std::os::unix::fs::{symlink, FileTypeExt};
        let dir = std::env::temp_dir().join(format!("clarray-sweep-links-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let c = [Curve { label: "clarray sum".into(), points: vec![(10.0, 1.0)] }];
        let is_link = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type().is_symlink();

        // A link to an existing file, relative to the link's folder.
        std::fs::write(dir.join("sub/real.svg"), "old").unwrap();
        symlink("sub/real.svg", dir.join("link.svg")).unwrap();
        check_plot_path(&dir.join("link.svg")).unwrap();
        plot(&dir.join("link.svg"), "t", 1.0, &c).unwrap();
        assert!(is_link(&dir.join("link.svg")), "the link was replaced");
        assert!(std::fs::read_to_string(dir.join("sub/real.svg")).unwrap().starts_with("<svg"));

        // A dangling link (through another link): the file it names is made.
        symlink("sub/new.svg", dir.join("hop.svg")).unwrap();
        symlink("hop.svg", dir.join("dangling.svg")).unwrap();
        check_plot_path(&dir.join("dangling.svg")).unwrap();
        plot(&dir.join("dangling.svg"), "t", 1.0, &c).unwrap();
        assert!(is_link(&dir.join("dangling.svg")) && is_link(&dir.join("hop.svg")));
        assert!(std::fs::read_to_string(dir.join("sub/new.svg")).unwrap().starts_with("<svg"));

        // Not regular files: a device and a link to it, and a FIFO where mkfifo exists.
        symlink("/dev/null", dir.join("null.svg")).unwrap();
        let fifo = dir.join("fifo.svg");
        let have_fifo = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
        let mut odd = vec![PathBuf::from("/dev/null"), dir.join("null.svg")];
        if have_fifo {
            odd.push(fifo.clone());
        }
        for p in &odd {
            let e = check_plot_path(p).unwrap_err();
            assert!(e.contains("not a regular file"), "{}: {e}", p.display());
            let e = plot(p, "t", 1.0, &c).unwrap_err();
            assert!(e.contains("not a regular file"), "{}: {e}", p.display());
        }
        assert!(is_link(&dir.join("null.svg")));
        if have_fifo {
            assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
        }
        // No temporary file was left anywhere.
        for d in [dir.clone(), dir.join("sub")] {
            for f in std::fs::read_dir(&d).unwrap() {
                let name = f.unwrap().file_name().to_string_lossy().into_owned();
                assert!(!name.ends_with(".tmp"), "{name} left in {}", d.display());
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
