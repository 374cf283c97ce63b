//! Typed `-D` defines: the values a define can take ([`DefineValue`]) written as exact OpenCL C
//! literals, and the set of defines a program is built with ([`Defines`]).

use std::fmt::Write as _;

use crate::error::{Error, Result};

/// A value that can be written into a `-DNAME=value` define.
///
/// Integers of every Rust type are written as plain decimal literals, whose OpenCL C type is C's
/// rule for the literal and not the Rust type: `int` where the value fits an `int` (an `i64` of
/// 5 or of `i32::MIN` too), else `long`, else (above `i64::MAX`) `ulong`. Cast in the kernel
/// (`(long)N`) where the type matters, e.g. before a product that could pass `int`'s range.
/// Floats keep their type: `f64` unsuffixed (`double`), `f32` with `f`.
///
/// See [the example on `Defines`](crate::program::Defines).
pub trait DefineValue {
    /// The value as OpenCL C source text.
    ///
    /// See [the example on `Defines`](crate::program::Defines).
    fn literal(&self) -> Result<String>;
}

macro_rules! int_define {
    ($($t:ty),*) => {$(
        impl DefineValue for $t {
            fn literal(&self) -> Result<String> {
                (*self as i64).literal()
            }
        }
    )*};
}
int_define!(i8, i16, i32, isize, u8, u16, u32);

impl DefineValue for i64 {
    fn literal(&self) -> Result<String> {
        Ok(match *self {
            // `-2147483648` is the negation of a literal too large for `int`, so a `long`; and
            // `-9223372036854775808` of one too large for `long`, which has no type in C (PoCL
            // made it a 128-bit integer). The least values are written as differences instead.
            v if v == i64::from(i32::MIN) => "(-2147483647-1)".to_string(),
            i64::MIN => "(-9223372036854775807L-1L)".to_string(),
            v if v < 0 => format!("({v})"),
            v => v.to_string(),
        })
    }
}

impl DefineValue for usize {
    fn literal(&self) -> Result<String> {
        (*self as u64).literal()
    }
}

impl DefineValue for u64 {
    fn literal(&self) -> Result<String> {
        // Above i64's range an unsuffixed decimal literal has no type in C; say it is unsigned.
        Ok(if *self > i64::MAX as u64 { format!("{self}UL") } else { self.to_string() })
    }
}

fn float_literal(v: f64, shortest: String, suffix: &str) -> Result<String> {
    if !v.is_finite() {
        return Err(Error::Value {
            name: "define",
            value: v.to_string(),
            message: format!(
                "a define with the value {v}; only finite numbers can be written as literals (use \
             INFINITY or NAN in the kernel source)"
            ),
        });
    }
    // `{:e}` writes the shortest digits that read back as the same value, with an exponent,
    // so the literal is a floating-point one whatever the magnitude.
    Ok(if v < 0.0 { format!("({shortest}{suffix})") } else { format!("{shortest}{suffix}") })
}

impl DefineValue for f64 {
    fn literal(&self) -> Result<String> {
        float_literal(*self, format!("{self:e}"), "")
    }
}

impl DefineValue for f32 {
    /// Written with an `f` suffix, so the constant is a `float` in the kernel.
    fn literal(&self) -> Result<String> {
        float_literal(f64::from(*self), format!("{self:e}"), "f")
    }
}

impl DefineValue for bool {
    /// `1` or `0`, for `#if NAME`.
    fn literal(&self) -> Result<String> {
        Ok(if *self { "1" } else { "0" }.into())
    }
}

/// `-D` defines with typed values, the way solvers inject grid sizes, time steps, switches and
/// the floating-point type into their kernels.
///
/// ```
/// use clarray::program::Defines;
/// let d = Defines::new()
///     .set("N", 128)
///     .set("DT", 0.1)          // f64: `1e-1`, reads back exactly
///     .set("OMEGA", 1.5f32)    // f32: `1.5e0f`
///     .set("PERIODIC", true)   // `1`
///     .type_name("REAL", "double");
/// assert_eq!(
///     d.options().unwrap(),
///     "-DN=128 -DDT=1e-1 -DOMEGA=1.5e0f -DPERIODIC=1 -DREAL=double"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use = "defines do nothing until given to a `Source` or a kernel"]
pub struct Defines {
    items: Vec<(String, Option<String>)>,
    /// The first invalid entry, reported by [`Defines::options`].
    error: Option<Error>,
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl Defines {
    /// No defines.
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn new() -> Defines {
        Defines::default()
    }

    fn push(mut self, name: &str, value: Result<Option<String>>) -> Defines {
        if self.error.is_some() {
            return self;
        }
        if !is_identifier(name) {
            self.error = Some(Error::Value {
                name: "define",
                value: name.to_string(),
                message: format!(
                    "define name `{name}` is not a C identifier (letters, digits and `_`, not starting \
                 with a digit)"
                ),
            });
            return self;
        }
        match value {
            Ok(v) => {
                // A later value for the same name replaces the earlier one.
                self.items.retain(|(n, _)| n != name);
                self.items.push((name.to_string(), v));
            }
            Err(e) => self.error = Some(e),
        }
        self
    }

    /// `-DNAME=value`: integers as they are, floats with full precision (`f32` with an `f`
    /// suffix), booleans as `1`/`0`. Negative numbers are parenthesised.
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn set(self, name: &str, value: impl DefineValue) -> Defines {
        let v = value.literal().map(Some);
        self.push(name, v)
    }

    /// `-DNAME` (defined, no value), for `#ifdef NAME`.
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn flag(self, name: &str) -> Defines {
        self.push(name, Ok(None))
    }

    /// `-DNAME=type`, e.g. `type_name("REAL", "double")`. The type is one or more identifiers
    /// joined by `_` (`float`, `uint`, `float4`, `my_struct`); no spaces.
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn type_name(self, name: &str, ty: &str) -> Defines {
        let v = if is_identifier(ty) {
            Ok(Some(ty.to_string()))
        } else {
            Err(Error::Value {
                name: "define",
                value: format!("{name}={ty}"),
                message: format!(
                    "define {name}: type name `{ty}` is not one identifier; use a typedef in the \
                 source for `unsigned int`-style names"
                ),
            })
        };
        self.push(name, v)
    }

    /// `-DNAME=text` with `text` verbatim: an expression or token sequence without whitespace
    /// (the driver splits options at spaces).
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn text(self, name: &str, text: &str) -> Defines {
        let v = if text.contains(['"', '\\']) {
            // Build options are split and unquoted by the driver: `"12345"` arrived as the
            // integer 12345, `"hi"` as an identifier.
            Err(Error::Value {
                name: "define",
                value: format!("{name}={text}"),
                message: format!(
                    "define {name}: the text `{text}` holds a double quote or a backslash, which the \
                     driver's option parsing removes or reads otherwise; define it in the source \
                     (Source::include_text) instead"
                ),
            })
        } else if text.is_empty() || text.chars().any(char::is_whitespace) {
            Err(Error::Value {
                name: "define",
                value: format!("{name}={text}"),
                message: format!(
                    "define {name}: the text `{text}` is empty or contains whitespace, which build \
                 options cannot carry; remove the spaces or define it in the source"
                ),
            })
        } else {
            Ok(Some(text.to_string()))
        };
        self.push(name, v)
    }

    /// Every define in `other` (later values win).
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn merge(mut self, other: &Defines) -> Defines {
        if let Some(e) = &other.error {
            self.error.get_or_insert(e.clone());
        }
        for (n, v) in &other.items {
            self = self.push(n, Ok(v.clone()));
        }
        self
    }

    /// Whether no define was given.
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The build options, `-DNAME=value` separated by spaces; the first invalid entry's error
    /// if there was one.
    ///
    /// See [the example on `Defines`](crate::program::source::Defines).
    pub fn options(&self) -> Result<String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let mut out = String::new();
        for (n, v) in &self.items {
            if !out.is_empty() {
                out.push(' ');
            }
            match v {
                Some(v) => write!(out, "-D{n}={v}"),
                None => write!(out, "-D{n}"),
            }
            .expect("writing to a String cannot fail");
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_defines_round_trip() {
        for v in [0.1f64, 1e-300, 12345.678901234567, -2.5, 1.0 / 3.0, 6.02214076e23] {
            let s = v.literal().unwrap();
            let back: f64 = s.trim_matches(|c| c == '(' || c == ')').parse().unwrap();
            assert_eq!(back, v, "{s}");
        }
        for v in [0.1f32, 1.0 / 3.0, -7.25e-20] {
            let s = v.literal().unwrap();
            assert!(s.trim_end_matches(')').ends_with('f'), "{s}");
            let back: f32 = s.trim_matches(|c| c == '(' || c == ')').trim_end_matches('f').parse().unwrap();
            assert_eq!(back, v, "{s}");
        }
        let e = f64::NAN.literal().unwrap_err();
        assert!(e.to_string().contains("only finite numbers"), "{e}");
        assert!(f32::INFINITY.literal().is_err());
    }

    #[test]
    fn defines_reject_bad_names_and_text() {
        let e = Defines::new().set("2N", 1).options().unwrap_err();
        assert!(e.to_string().contains("`2N` is not a C identifier"), "{e}");
        let e = Defines::new().text("X", "a b").options().unwrap_err();
        assert!(e.to_string().contains("whitespace"), "{e}");
        let e = Defines::new().type_name("T", "unsigned int").options().unwrap_err();
        assert!(e.to_string().contains("not one identifier"), "{e}");
        assert_eq!(Defines::new().set("A", 1).set("A", 2).options().unwrap(), "-DA=2");
        assert_eq!(Defines::new().set("M", u64::MAX).options().unwrap(), format!("-DM={}UL", u64::MAX));
    }
}
