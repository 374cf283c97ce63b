//! Knobs of the generated kernels that a tuning sweep may turn (`clarray bench --tune`): the
//! single-pass scan, the one-sweep radix sort, axis reductions and tiled transposes. One
//! process-wide setting, read by each kind of kernel when it builds and launches one; every
//! kernel's cache key includes the knobs it reads, so a changed knob builds a new kernel.
//!
//! [`set`] checks each knob against what every device allows (powers of two, ranges) and
//! refuses a bad one with [`Error::Value`]; a setting that a given device cannot run (local
//! memory or work-group size over its limit) is refused with the same error when a kernel
//! needs it (or, for a work-group wider than a compiled kernel allows, with
//! [`Error::LaunchDims`]), never silently replaced.
//!
//! [`scoped`] puts a setting in force for the calling thread only, for the length of a closure:
//! what a sweep or a test uses, so that other threads keep the process-wide setting.

use std::cell::Cell;
use std::sync::RwLock;

use crate::error::{Error, Result};

/// The knobs, with [`Tuning::default`] the library's own choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Whether contiguous unsegmented scans take the single pass with decoupled look-back.
    pub scan_look_back: bool,
    /// Work-items of a single-pass scan tile (64 to 1024, a power of two).
    pub scan_wg: usize,
    /// Elements per work-item of a single-pass scan tile for 4-byte accumulators (2 to 32, a
    /// power of two; scaled for other sizes so that a tile keeps its bytes).
    pub scan_items: usize,
    /// Whether single-pass inclusive f32 scans of lines aligned to 16 bytes keep their
    /// elements in registers (float4 loads and stores, only work-item totals in local memory)
    /// rather than staging the tile in local memory.
    pub scan_registers: bool,
    /// Predecessor tiles a look-back step reads at once (1 to `scan_wg`, a power of two).
    pub scan_window: usize,
    /// Keys per work-item of the one-sweep sort (1 to 32).
    pub sort_kpt: usize,
    /// Work-groups of the one-sweep sort's histogram kernel at most (1 to 65 535).
    pub sort_hist_groups: usize,
    /// Vector loads a lane of a row reduction issues before it adds them (1 to 16, a power of
    /// two); it also sets how many lanes share a short row.
    pub reduce_unroll: usize,
    /// Unrolling of a column reduction's loop over rows (1 to 16, a power of two).
    pub reduce_column_unroll: usize,
    /// Work-groups per compute unit a row reduction (and a whole-array one) aims for when it
    /// splits its rows (1 to 64).
    pub reduce_groups_per_cu: usize,
    /// Work-groups per compute unit a column reduction aims for when it splits its columns
    /// (1 to 64).
    pub reduce_column_groups_per_cu: usize,
    /// Side of a transpose tile in elements (16, 32 or 64).
    pub transpose_tile: usize,
    /// Rows of work-items of a transpose work-group (1 to the tile side, a power of two); each
    /// work-item moves `tile / rows` elements.
    pub transpose_rows: usize,
}

/// The library's choices: from `clarray bench --tune all` on an NVIDIA H200
/// (`bench-results/h200-2026-12-03-tune.json`), each the fastest setting that every dtype can
/// run within 48 KiB of local memory and 256 work-items (the single-pass scan's tile is
/// 32 KiB for every accumulator size; 12 keys per work-item keep an 8-byte key's sort tile in
/// 47 KiB; whole-array reductions keep 8 work-groups per compute unit, which their `max`
/// needs, and column reductions take 4). A device that cannot run the default scan tile takes
/// the three passes, the default sort tile the other sort.
impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            scan_look_back: true,
            scan_wg: 256,
            scan_items: 32,
            scan_registers: true,
            scan_window: 32,
            sort_kpt: 12,
            sort_hist_groups: 1024,
            reduce_unroll: 8,
            reduce_column_unroll: 4,
            reduce_groups_per_cu: 8,
            reduce_column_groups_per_cu: 4,
            transpose_tile: 32,
            transpose_rows: 4,
        }
    }
}

static TUNING: RwLock<Option<Tuning>> = RwLock::new(None);

thread_local! {
    /// The setting [`scoped`] put in force on this thread, if any.
    static SCOPED: Cell<Option<Tuning>> = const { Cell::new(None) };
}

/// The knobs in force on this thread: those of the innermost [`scoped`] call, else the
/// process-wide setting.
pub fn get() -> Tuning {
    if let Some(t) = SCOPED.with(Cell::get) {
        return t;
    }
    TUNING.read().map_or_else(|e| e.into_inner().unwrap_or_default(), |t| t.unwrap_or_default())
}

/// Runs `f` with `t` in force on this thread only (checked as [`set`] checks it); the
/// setting before it comes back when `f` returns or panics. Other threads are not affected.
///
/// # Errors
/// [`Error::Value`] naming the first knob outside its range (then `f` does not run).
pub fn scoped<R>(t: Tuning, f: impl FnOnce() -> R) -> Result<R> {
    struct Restore(Option<Tuning>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED.with(|s| s.set(self.0));
        }
    }
    t.check()?;
    let _restore = Restore(SCOPED.with(|s| s.replace(Some(t))));
    Ok(f())
}

/// Puts `t` in force for this process after checking every knob.
///
/// # Errors
/// [`Error::Value`] naming the first knob outside its range.
pub fn set(t: Tuning) -> Result<()> {
    t.check()?;
    match TUNING.write() {
        Ok(mut g) => *g = Some(t),
        Err(e) => *e.into_inner() = Some(t),
    }
    Ok(())
}

/// Changes the knobs in force with `f` (checked as [`set`] checks them).
///
/// # Errors
/// As [`set`]; the knobs in force are then left as they were.
pub fn update(f: impl FnOnce(&mut Tuning)) -> Result<()> {
    let mut t = get();
    f(&mut t);
    set(t)
}

fn bad(name: &'static str, value: usize, allowed: &str) -> Error {
    Error::Value {
        name,
        value: value.to_string(),
        message: format!("tuning knob `{name}` = {value}: it must be {allowed}"),
    }
}

fn pow2_in(name: &'static str, v: usize, lo: usize, hi: usize) -> Result<()> {
    if v.is_power_of_two() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(bad(name, v, &format!("a power of two from {lo} to {hi}")))
    }
}

fn in_range(name: &'static str, v: usize, lo: usize, hi: usize) -> Result<()> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(bad(name, v, &format!("from {lo} to {hi}")))
    }
}

impl Tuning {
    /// Checks every knob against its range.
    ///
    /// # Errors
    /// [`Error::Value`] naming the first knob outside its range.
    pub fn check(&self) -> Result<()> {
        pow2_in("scan_wg", self.scan_wg, 64, 1024)?;
        pow2_in("scan_items", self.scan_items, 2, 32)?;
        pow2_in("scan_window", self.scan_window, 1, self.scan_wg)?;
        in_range("sort_kpt", self.sort_kpt, 1, 32)?;
        in_range("sort_hist_groups", self.sort_hist_groups, 1, 65_535)?;
        pow2_in("reduce_unroll", self.reduce_unroll, 1, 16)?;
        pow2_in("reduce_column_unroll", self.reduce_column_unroll, 1, 16)?;
        in_range("reduce_groups_per_cu", self.reduce_groups_per_cu, 1, 64)?;
        in_range("reduce_column_groups_per_cu", self.reduce_column_groups_per_cu, 1, 64)?;
        pow2_in("transpose_tile", self.transpose_tile, 16, 64)?;
        pow2_in("transpose_rows", self.transpose_rows, 1, self.transpose_tile)?;
        Ok(())
    }
}

/// A kind of kernel whose knobs are judged together: where a device cannot run the library's
/// own choice for it, the kernel takes another path; where it cannot run a setting a caller
/// chose, that is an error naming the knob (a sweep must not measure another path under the
/// knob's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The single-pass scan's tile.
    Scan,
    /// The one-sweep sort's tile.
    Sort,
    /// The tiled transpose's tile.
    Transpose,
}

impl Tuning {
    /// Whether the knobs of `kind` are the library's own choice ([`Tuning::default`]'s values).
    pub(crate) fn is_library_choice(&self, kind: Kind) -> bool {
        let d = Tuning::default();
        match kind {
            Kind::Scan => {
                (self.scan_wg, self.scan_items, self.scan_window, self.scan_registers)
                    == (d.scan_wg, d.scan_items, d.scan_window, d.scan_registers)
            }
            Kind::Sort => self.sort_kpt == d.sort_kpt,
            Kind::Transpose => {
                (self.transpose_tile, self.transpose_rows) == (d.transpose_tile, d.transpose_rows)
            }
        }
    }
}

/// The error for a knob setting that `what` on this device cannot run: `need` of a resource
/// (`unit`) where the device has `limit`.
pub(crate) fn over_device_limit(
    name: &'static str,
    value: usize,
    what: &str,
    need: u64,
    limit: u64,
    unit: &str,
) -> Error {
    Error::Value {
        name,
        value: value.to_string(),
        message: format!(
            "tuning knob `{name}` = {value}: {what} needs {need} {unit} and this device allows {limit}; \
             choose a smaller value"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_bad_knobs_are_refused_with_their_name() {
        Tuning::default().check().unwrap();
        type Case = (fn(&mut Tuning), &'static str);
        let cases: [Case; 7] = [
            (|t| t.scan_wg = 100, "scan_wg"),
            (|t| t.scan_items = 3, "scan_items"),
            (|t| t.scan_window = 512, "scan_window"),
            (|t| t.sort_kpt = 0, "sort_kpt"),
            (|t| t.reduce_unroll = 32, "reduce_unroll"),
            (|t| t.transpose_tile = 128, "transpose_tile"),
            (|t| t.transpose_rows = 64, "transpose_rows"),
        ];
        for (f, name) in cases {
            let mut t = Tuning::default();
            f(&mut t);
            match t.check() {
                Err(Error::Value { name: n, .. }) => assert_eq!(n, name),
                other => panic!("{name}: expected a Value error, got {other:?}"),
            }
        }
    }

    /// A scoped setting is seen by its own thread only, nests, and is gone after the call,
    /// also after a panic inside it.
    #[test]
    fn scoped_settings_stay_on_their_thread_and_end_with_the_call() {
        let outer = Tuning { sort_kpt: 5, ..get() };
        let inner = Tuning { sort_kpt: 6, ..get() };
        let before = get();
        scoped(outer, || {
            assert_eq!(get().sort_kpt, 5);
            std::thread::scope(|s| s.spawn(|| assert_eq!(get(), before)).join().unwrap());
            scoped(inner, || assert_eq!(get().sort_kpt, 6)).unwrap();
            assert_eq!(get().sort_kpt, 5);
            let hit = std::panic::catch_unwind(|| scoped(inner, || panic!("inside")));
            assert!(hit.is_err());
            assert_eq!(get().sort_kpt, 5);
        })
        .unwrap();
        assert_eq!(get(), before);
        let bad = Tuning { sort_kpt: 0, ..get() };
        assert!(matches!(scoped(bad, || unreachable!()), Err(Error::Value { name: "sort_kpt", .. })));
    }
}
