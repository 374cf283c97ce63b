#!/usr/bin/env python3
"""Tests of scripts/doc_examples.py: its fence rules, and its counts on a small crate written
to a temporary directory and documented by rustdoc (about a second of CPU).

Run: python3 scripts/test_doc_examples.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_examples as de  # noqa: E402

FIXTURE = {
    "Cargo.toml": """[package]
name = "fixture"
version = "0.1.0"
edition = "2021"
[workspace]
""",
    "src/lib.rs": '''//! The root: an example.
//!
//! ```
//! assert!(true);
//! ```
pub mod shapes;
mod private;
pub use private::Reexported;
pub use shapes::*;

/// Hidden: not counted.
#[doc(hidden)]
pub fn hidden() {}

/// A macro without an example.
#[macro_export]
macro_rules! nothing { () => {} }
''',
    "src/private.rs": """/// Reached only through the re-export at the root; see [`crate::shapes::Square::new`].
pub struct Reexported;
""",
    "src/shapes.rs": '''//! Shapes, no example here.

/// A square; the example is on [`Square::new`].
#[derive(Clone, Debug)]
pub struct Square {
    /// Its side (covered through the struct).
    pub side: f64,
    hidden_field: u8,
}

impl Square {
    /// A square.
    ///
    /// ```
    /// let s = fixture::shapes::Square::new(2.0);
    /// assert_eq!(s.side, 2.0);
    /// ```
    pub fn new(side: f64) -> Square { Square { side, hidden_field: 0 } }
    /// Its area: a text block is no example.
    ///
    /// ```text
    /// side * side
    /// ```
    pub fn area(&self) -> f64 { self.side * self.side }
    /// Its perimeter: a link to [`Square`], which only links, is not enough.
    pub fn perimeter(&self) -> f64 { 4.0 * self.side }
    /// Ignored blocks are no examples.
    ///
    /// ```ignore
    /// x
    /// ```
    pub fn ignored(&self) {}
    fn private(&self) {}
    /// An associated const (covered through the struct).
    pub const UNIT: f64 = 1.0;
}

impl std::fmt::Display for Square {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{}", self.side) }
}

/// Kinds, without an example.
pub enum Kind {
    /// A variant.
    One(u8),
    /// Another.
    Two { x: u8 },
}

/// A trait.
///
/// ```no_run
/// let _ = 1;
/// ```
pub trait Area {
    /// Needs its own example or link.
    fn area(&self) -> f64;
    /// Covered through the trait.
    const SIDES: u8;
}

impl Area for Kind {
    fn area(&self) -> f64 { 0.0 }
    const SIDES: u8 = 0;
}
''',
}

EXPECTED_UNCOVERED = {
    "fixture::nothing",
    "fixture::shapes",
    "fixture::shapes::Area::area",
    "fixture::shapes::Kind",
    "fixture::shapes::Kind::One",
    "fixture::shapes::Kind::One::0",
    "fixture::shapes::Kind::Two",
    "fixture::shapes::Kind::Two::x",
    "fixture::shapes::Kind::area (impl Area)",
    "fixture::shapes::Kind::SIDES (impl Area)",
    "fixture::shapes::Square::area",
    "fixture::shapes::Square::perimeter",
    "fixture::shapes::Square::ignored",
}
EXPECTED_COVERED = {
    "fixture",
    "fixture::Reexported",
    "fixture::shapes::Square",
    "fixture::shapes::Square::side",
    "fixture::shapes::Square::new",
    "fixture::shapes::Square::UNIT",
    "fixture::shapes::Square::fmt (impl Display)",
    "fixture::shapes::Area",
    "fixture::shapes::Area::SIDES",
}


class Fences(unittest.TestCase):
    def test_rust_fences(self):
        for info in ["", "rust", "no_run", "should_panic", "compile_fail", "rust,no_run", "edition2021"]:
            self.assertTrue(de.is_rust_fence(info), info)
        for info in ["text", "ignore", "c", "console", "rust,ignore", "ignore-windows", "json"]:
            self.assertFalse(de.is_rust_fence(info), info)

    def test_has_example(self):
        self.assertTrue(de.has_example("a\n\n```\nlet x = 1;\n```\n"))
        self.assertTrue(de.has_example("    ```no_run\n    x\n    ```"))
        self.assertFalse(de.has_example(None))
        self.assertFalse(de.has_example("inline `code` only"))
        self.assertFalse(de.has_example("```text\nx\n```\n"))
        # A fence inside a longer text block does not open a Rust block.
        self.assertFalse(de.has_example("````text\n```\nx\n```\n````\n"))
        self.assertTrue(de.has_example("```text\nx\n```\n\n~~~\nlet y = 2;\n~~~\n"))


class Fixture(unittest.TestCase):
    def test_fixture_crate(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text in FIXTURE.items():
                os.makedirs(os.path.join(d, os.path.dirname(name)), exist_ok=True)
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            env = dict(os.environ, RUSTC_BOOTSTRAP="1", CARGO_TARGET_DIR=os.path.join(d, "target"))
            env.pop("RUSTDOCFLAGS", None)
            subprocess.run(
                ["cargo", "rustdoc", "-q", "--lib", "--", "-Z", "unstable-options", "--output-format", "json"],
                cwd=d,
                env=env,
                check=True,
            )
            import json

            with open(os.path.join(d, "target", "doc", "fixture.json")) as f:
                krate = json.load(f)
        entries = de.walk(krate)
        de.cover(krate, entries)
        paths = {"::".join(e.path): e for e in entries.values()}
        uncovered = {p for p, e in paths.items() if not e.covered}
        covered = {p for p, e in paths.items() if e.covered}
        self.assertEqual(uncovered, EXPECTED_UNCOVERED)
        self.assertEqual(covered, EXPECTED_COVERED)
        self.assertNotIn("fixture::hidden", paths)
        self.assertEqual(paths["fixture::shapes::Square"].why, "link `Square::new`")
        self.assertEqual(paths["fixture::shapes::Square::side"].why, "parent")
        self.assertEqual(paths["fixture::shapes::Square"].module, "fixture::shapes")
        self.assertEqual(paths["fixture::Reexported"].module, "fixture")


if __name__ == "__main__":
    unittest.main()
