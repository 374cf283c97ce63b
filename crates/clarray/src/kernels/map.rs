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
        (!d.array && digits.is_some()).then_some("the kernel names the elements it loads x0, x1, …")
    })
}

/// Rewrites `name[i]` of every array argument to the loaded value `x{k}`; an array read any
/// other way is an error.
pub(super) fn rewrite(kernel: &str, expr: &str, decls: &[ArgDecl], what: &str) -> Result<String> {
    let mut out = String::new();
    let bytes: Vec<char> = expr.chars().collect();
    let mut i = 0;
    let arrays: Vec<(usize, &ArgDecl)> = decls.iter().filter(|d| d.array).enumerate().collect();
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == '_') {
                i += 1;
            }
            let word: String = bytes[start..i].iter().collect();
            if let Some((k, _)) = arrays.iter().find(|(_, d)| d.name == word) {
                let rest: String = bytes[i..].iter().collect();
                let t = rest.trim_start();
                let skipped = rest.len() - t.len();
                let sub = t
                    .strip_prefix('[')
                    .map(str::trim_start)
                    .and_then(|t| t.strip_prefix('i'))
                    .map(str::trim_start);
                match sub.and_then(|t| t.strip_prefix(']')) {
                    Some(after)
                        if !sub.is_some_and(|s| {
                            s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                        }) =>
                    {
                        let consumed = rest.len() - after.len();
                        let _ = skipped;
                        i += consumed;
                        let _ = write!(out, "x{k}");
                        continue;
                    }
                    _ => {
                        return Err(Error::KernelArgs {
                            kernel: kernel.to_string(),
                            message: format!(
                                "the {what} reads the array `{word}` other than as `{word}[i]`; reduction and scan \
                                 kernels see one element at a time (the one at `i`), so write `{word}[i]`"
                            ),
                        });
                    }
                }
            }
            out.push_str(&word);
            continue;
        }
        out.push(c);
        i += 1;
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
