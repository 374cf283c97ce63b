//! What reduction and scan kernels share: a user's expression with each `name[i]` rewritten to
//! the element being reduced or scanned, and the fused map that loads those elements from the
//! (broadcast) arrays.

use std::fmt::Write as _;

use super::args::{ArgDecl, ArgValue};
use crate::array::DType;
use crate::error::{Error, Result};
use crate::reduce::engine::{MapExpr, Param};

/// Refuses a scalar argument named like the generator's names of the loaded elements (`x0`,
/// `x1`, …), which it would clash with in the map function.
pub(super) fn refuse_element_names(kernel: &str, decls: &[ArgDecl]) -> Result<()> {
    super::args::refuse_reserved(kernel, decls, |d| {
        let digits =
            d.name.strip_prefix('x').filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()));
        if !d.array && d.name == "i" {
            return Some("`i` is the element index in `x[i]`; a scalar of that name would read as it");
        }
        (!d.array && digits.is_some()).then_some("the kernel names the elements it loads x0, x1, …")
    })
}

/// Rewrites `name[i]` of every array argument to the loaded value `x{k}`; an array read any
/// other way is an error. Number literals (`2.0f`, `1e-3`) and member names (`p[i].x`,
/// `q->y`) are not names of arguments; only ASCII white space may stand between a name and its
/// `[i]`.
pub(super) fn rewrite(kernel: &str, expr: &str, decls: &[ArgDecl], what: &str) -> Result<String> {
    let chars: Vec<char> = expr.chars().collect();
    let arrays: Vec<(usize, &ArgDecl)> = decls.iter().filter(|d| d.array).enumerate().collect();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let skip_space = |mut j: usize| {
        while j < chars.len() && chars[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        // A number literal, with its suffix and exponent: `2.0f`, `.5`, `1e-3`, `0x1p-8f`.
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            i += 1;
            while i < chars.len() {
                let d = chars[i];
                let exponent_sign = (d == '+' || d == '-') && matches!(chars[i - 1], 'e' | 'E' | 'p' | 'P');
                if !(is_word(d) || d == '.' || exponent_sign) {
                    break;
                }
                i += 1;
            }
            out.extend(&chars[start..i]);
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == '_') {
            out.push(c);
            i += 1;
            continue;
        }
        while i < chars.len() && is_word(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let before = out.trim_end();
        let member = before.ends_with('.') || before.ends_with("->");
        let array = if member { None } else { arrays.iter().find(|(_, d)| d.name == word) };
        let Some((k, _)) = array else {
            // A bare `i` reached the compiler as an undeclared name: these kernels hand the
            // expression the element, not its index (PyOpenCL's do).
            if word == "i" && !member {
                return Err(Error::KernelArgs {
                    kernel: kernel.to_string(),
                    message: format!(
                        "the {what} uses the index `i` other than in `name[i]`; reduction and scan \
                         kernels give their expressions the elements, not their index: pass the \
                         index as an array argument (e.g. `long *idx` holding 0, 1, 2, … and \
                         write `idx[i]`)"
                    ),
                });
            }
            out.push_str(&word);
            continue;
        };
        // `[`, `i`, `]`, with ASCII white space between them.
        let open = skip_space(i);
        let index = skip_space(open + 1);
        let close = skip_space(index + 1);
        let subscripted = chars.get(open) == Some(&'[')
            && chars.get(index) == Some(&'i')
            && chars.get(index + 1).is_none_or(|&c| !is_word(c))
            && chars.get(close) == Some(&']');
        if !subscripted {
            return Err(Error::KernelArgs {
                kernel: kernel.to_string(),
                message: format!(
                    "the {what} reads the array `{word}` other than as `{word}[i]`; reduction and scan \
                     kernels see one element at a time (the one at `i`), so write `{word}[i]`"
                ),
            });
        }
        let _ = write!(out, "x{k}");
        i = close + 1;
    }
    Ok(out)
}

/// The fused map of a reduction or scan kernel over the arrays and scalars given.
pub(super) fn user_map(
    kernel: &str,
    decls: &[ArgDecl],
    vals: &[ArgValue],
    code: String,
    value: DType,
    preamble: &str,
) -> Result<MapExpr> {
    let mut inputs = Vec::new();
    let mut params = Vec::new();
    for (d, v) in decls.iter().zip(vals) {
        match v {
            ArgValue::Array(s) => inputs.push(s.clone()),
            ArgValue::Scalar(t, b) => params.push(Param {
                name: d.name.clone(),
                ctype: t.cl_compute(),
                bytes: super::args::compute_bytes(*t, b),
            }),
        }
    }
    // Arrays broadcast to one shape (NumPy's rule); an array that does not is refused here,
    // before any kernel could index it past its end.
    let mut shape: Vec<usize> = Vec::new();
    let names = decls.iter().zip(vals).filter(|(_, v)| matches!(v, ArgValue::Array(_))).map(|(d, _)| d);
    for (s, d) in inputs.iter().zip(names) {
        shape = crate::array::broadcast_shapes(&shape, s.shape()).map_err(|e| Error::Shape {
            shapes: vec![s.shape().to_vec(), shape.clone()],
            message: format!(
                "kernel `{kernel}`: argument `{}` of shape {:?} ({} elements) does not broadcast with the \
                 shape {shape:?} of the arrays before it: {e}",
                d.name,
                s.shape(),
                s.len()
            ),
        })?;
    }
    let inputs = inputs.iter().map(|s| s.broadcast_to(&shape)).collect::<Result<Vec<_>>>()?;
    Ok(MapExpr { inputs, params, body: String::new(), code, value, preamble: preamble.to_string() })
}
