//! `__constant` tables for a program's text: coefficients too many for `-D` defines, written
//! with the same exact literals as [`Defines`](super::Defines).

use std::fmt::Write as _;

use super::defines::{is_identifier, DefineValue};
use crate::error::{Error, Result};

/// `__constant` arrays written as OpenCL C, each value a literal that reads back exactly (as
/// [`Defines`](super::Defines) writes them: `f32` with an `f` suffix, negative values in
/// parentheses). Give the text to a program with
/// [`Source::include_text`](super::Source::include_text) and `#include` it.
///
/// ```
/// use clarray::program::{Constants, Source};
/// let tables = Constants::new().array("W", "float", &[0.5f32, 1.0, -2.0]);
/// assert_eq!(tables.text().unwrap(), "__constant float W[3] = {5e-1f, 1e0f, (-2e0f)};\n");
/// let src = Source::new("#include \"tables.h\"\nkernel void k(global float* a) { a[0] = W[2]; }")
///     .include_text("tables.h", tables.text().unwrap());
/// assert!(src.expand().unwrap().text.contains("W[3] = {"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use = "constants do nothing until their text is given to a `Source`"]
pub struct Constants {
    text: String,
    /// The first invalid table, reported by [`Constants::text`].
    error: Option<Error>,
}

impl Constants {
    /// No tables.
    ///
    /// See [the example on `Constants`](crate::program::constants::Constants).
    pub fn new() -> Constants {
        Constants::default()
    }

    /// `__constant TYPE NAME[n] = {v0, v1, …};` with `ty` an identifier: a type (`float`,
    /// `double`) or a macro naming one (`REAL`, defined with
    /// [`Defines::type_name`](super::Defines::type_name)). The literals' type follows the
    /// values' (`f32` or `f64`), not `ty`: give values of the type the table holds.
    ///
    /// See [the example on `Constants`](crate::program::constants::Constants).
    pub fn array<T: DefineValue>(mut self, name: &str, ty: &str, values: &[T]) -> Constants {
        if self.error.is_some() {
            return self;
        }
        let bad = |message: String| Error::Value { name: "constant table", value: name.to_string(), message };
        let checked = if !is_identifier(name) {
            Err(bad(format!("table name `{name}` is not a C identifier")))
        } else if !is_identifier(ty) {
            Err(bad(format!("table {name}: type `{ty}` is not one identifier; use a typedef or a define")))
        } else if values.is_empty() {
            Err(bad(format!("table {name} is empty; OpenCL C has no zero-length arrays, leave it out")))
        } else {
            values.iter().map(DefineValue::literal).collect::<Result<Vec<_>>>()
        };
        match checked {
            Ok(literals) => {
                writeln!(
                    self.text,
                    "__constant {ty} {name}[{}] = {{{}}};",
                    literals.len(),
                    literals.join(", ")
                )
                .expect("writing to a String cannot fail");
            }
            Err(e) => self.error = Some(e),
        }
        self
    }

    /// Whether no table was given.
    ///
    /// See [the example on `Constants`](crate::program::constants::Constants).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.error.is_none()
    }

    /// The tables' OpenCL C text, one line each in the order given; the first invalid table's
    /// error if there was one.
    ///
    /// See [the example on `Constants`](crate::program::constants::Constants).
    pub fn text(&self) -> Result<String> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(self.text.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_exact_literals() {
        let third = 1.0f64 / 3.0;
        let t = Constants::new().array("A", "double", &[third, -0.1]).array("B", "REAL", &[1.5f32]);
        let text = t.text().unwrap();
        assert_eq!(
            text,
            format!("__constant double A[2] = {{{third:e}, (-1e-1)}};\n__constant REAL B[1] = {{1.5e0f}};\n")
        );
        let first = text.split(['{', ',']).nth(1).unwrap();
        assert_eq!(first.parse::<f64>().unwrap(), third);
    }

    #[test]
    fn bad_tables_are_refused_at_text() {
        let e = Constants::new().array("2A", "float", &[1.0f32]).text().unwrap_err();
        assert!(e.to_string().contains("not a C identifier"), "{e}");
        let e = Constants::new().array("A", "unsigned int", &[1u32]).text().unwrap_err();
        assert!(e.to_string().contains("not one identifier"), "{e}");
        let e = Constants::new().array::<f32>("A", "float", &[]).text().unwrap_err();
        assert!(e.to_string().contains("zero-length"), "{e}");
        let e = Constants::new().array("A", "float", &[f32::NAN]).array("B", "float", &[1.0f32]).text();
        assert!(e.unwrap_err().to_string().contains("only finite numbers"));
        assert!(Constants::new().is_empty());
    }
}
