//! Index arithmetic for strided views: the integer type positions are computed in (32-bit where
//! every index and position fits, 64-bit otherwise), the turning of a flat index into
//! coordinates, and an element's position from coordinates, strides and an offset.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// The integer type of a kernel's index arithmetic; part of every generated kernel's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IndexType {
    /// `int`: every index and position is below 2^30 (room for a loop's step).
    Int,
    /// `long`.
    Long,
}

impl IndexType {
    /// `Long` if `wide`, else `Int`.
    pub(crate) fn wide(wide: bool) -> IndexType {
        if wide {
            IndexType::Long
        } else {
            IndexType::Int
        }
    }

    /// The OpenCL C type.
    pub(crate) fn cl(self) -> &'static str {
        match self {
            IndexType::Int => "int",
            IndexType::Long => "long",
        }
    }
}

static FORCE_WIDE: AtomicBool = AtomicBool::new(false);

/// Makes every generated kernel that can choose use 64-bit indices, as arrays of 2^30 elements
/// or more do (for tests on small arrays; process-wide).
pub(crate) fn force_64bit_indices(on: bool) {
    FORCE_WIDE.store(on, Ordering::Relaxed);
}

/// Whether an index or position can use 32-bit arithmetic (with room for the loop's step).
pub(crate) fn fits_int(n: isize) -> bool {
    n.unsigned_abs() < 1 << 30 && !FORCE_WIDE.load(Ordering::Relaxed)
}

/// Statements declaring the coordinates `coord(d)` (of type `it`, C order: the last axis
/// varies fastest) of flat index `lin` over axes of extents `extent(d)`, `d < k`, through a
/// scratch variable `tmp`; after each coordinate, `then(d)` (code using it, e.g. adding its
/// offsets). Axis 0 takes what remains, so its extent is not read. One line.
pub(crate) fn unravel(
    it: IndexType,
    lin: &str,
    k: usize,
    tmp: &str,
    extent: impl Fn(usize) -> String,
    coord: impl Fn(usize) -> String,
    then: impl Fn(usize) -> String,
) -> String {
    let it = it.cl();
    let mut s = format!("{it} {tmp} = {lin};");
    for d in (0..k).rev() {
        let c = coord(d);
        s.push(' ');
        if d == 0 {
            let _ = write!(s, "{it} {c} = {tmp};");
        } else {
            let e = extent(d);
            let _ = write!(s, "{it} {c} = {tmp} % {e}; {tmp} /= {e};");
        }
        let t = then(d);
        if !t.is_empty() {
            s.push(' ');
            s.push_str(&t);
        }
    }
    s
}

/// The position `base + coord(0) * stride(0) + …` of an element at `k` coordinates.
pub(crate) fn position(
    base: &str,
    k: usize,
    coord: impl Fn(usize) -> String,
    stride: impl Fn(usize) -> String,
) -> String {
    let mut s = base.to_string();
    for d in 0..k {
        let _ = write!(s, " + {} * {}", coord(d), stride(d));
    }
    s
}

/// A block `{ … }` that turns flat index `lin` into coordinates over axes of extents
/// `extents` (64-bit) and adds coordinate `j` times `stride(k, j)` to each position variable
/// `offs[k]`: where the elements of several strided operands at one flat index lie. Empty for
/// no axes.
pub(crate) fn add_offsets(
    lin: &str,
    extents: &[String],
    offs: &[String],
    stride: impl Fn(usize, usize) -> String,
) -> String {
    if extents.is_empty() {
        return String::new();
    }
    let then = |j: usize| {
        let adds: Vec<String> =
            offs.iter().enumerate().map(|(k, off)| format!("{off} += c{j}_ * {};", stride(k, j))).collect();
        adds.join(" ")
    };
    let coords = unravel(
        IndexType::Long,
        lin,
        extents.len(),
        "t_",
        |j| extents[j].clone(),
        |j| format!("c{j}_"),
        then,
    );
    format!("{{ {coords} }}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unravel_gives_c_order_coordinates() {
        let s =
            unravel(IndexType::Int, "i", 3, "r", |d| format!("n{d}"), |d| format!("c{d}"), |_| String::new());
        assert_eq!(s, "int r = i; int c2 = r % n2; r /= n2; int c1 = r % n1; r /= n1; int c0 = r;");
        let s = unravel(
            IndexType::Long,
            "i",
            1,
            "t",
            |d| format!("n{d}"),
            |d| format!("c{d}"),
            |d| format!("a += c{d};"),
        );
        assert_eq!(s, "long t = i; long c0 = t; a += c0;");
    }

    #[test]
    fn offsets_add_each_coordinate_times_its_stride() {
        let ex = ["n0".to_string(), "n1".to_string()];
        let offs = ["a".to_string(), "b".to_string()];
        let s = add_offsets("o", &ex, &offs, |k, j| format!("s{k}_{j}"));
        assert_eq!(
            s,
            "{ long t_ = o; long c1_ = t_ % n1; t_ /= n1; a += c1_ * s0_1; b += c1_ * s1_1; \
             long c0_ = t_; a += c0_ * s0_0; b += c0_ * s1_0; }"
        );
        assert_eq!(add_offsets("o", &[], &offs, |k, j| format!("s{k}_{j}")), "");
    }

    #[test]
    fn position_adds_every_axis() {
        assert_eq!(position("o", 2, |d| format!("c{d}"), |d| format!("s{d}")), "o + c0 * s0 + c1 * s1");
        assert_eq!(position("o", 0, |d| format!("c{d}"), |d| format!("s{d}")), "o");
    }

    #[test]
    fn wide_indices_are_chosen_from_the_extent() {
        assert!(fits_int((1 << 30) - 1) && !fits_int(1 << 30) && !fits_int(-(1 << 30)));
        assert_eq!(IndexType::wide(true).cl(), "long");
        assert_eq!(IndexType::wide(false).cl(), "int");
    }
}
