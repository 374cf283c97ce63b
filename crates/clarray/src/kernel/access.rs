//! Element loads and stores, the one convention of every generated kernel:
//!
//! - a value is computed in its dtype's compute type ([`DType::cl_compute`]) and kept in memory
//!   in its storage type ([`DType::cl_storage`]);
//! - a bool is loaded as 0 or 1 (any nonzero byte is true) and stored as 0 or 1;
//! - an f16 is loaded as a `float` (`vload_half`) and stored rounded to nearest even
//!   (`vstore_half_rte`);
//! - code that only moves elements (gathers, scatters, masks, sorts) moves their bits, as the
//!   unsigned type of their size ([`bits_type`]): no conversion, so NaN payloads survive, f16
//!   needs no `cl_khr_fp16` and f64 no `cl_khr_fp64`;
//! - a complex number is a `float2` or `double2` in memory and in arithmetic.
//!
//! Vector paths load and store `w` neighbouring elements at once: through a pointer to the
//! vector type where the caller knows the address is a multiple of the vector's size (one
//! 16-byte access on GPUs), else with `vloadN`/`vstoreN`.

use super::dtype::DType;

/// The expression loading element `idx` of pointer `p` of dtype `d`, in its compute type.
pub(crate) fn load(d: DType, p: &str, idx: &str) -> String {
    match d {
        DType::F16 => format!("vload_half({idx}, {p})"),
        DType::Bool => format!("(uchar)({p}[{idx}] != 0)"),
        _ => format!("{p}[{idx}]"),
    }
}

/// The statement storing `v` at element `idx` of pointer `p` of dtype `d`. `v` is converted to
/// `d` as a C cast does (a real value of any arithmetic type; for complex `d`, a value of its
/// compute type); for bool, any nonzero value stores 1.
pub(crate) fn store(d: DType, p: &str, idx: &str, v: &str) -> String {
    match d {
        DType::F16 => format!("vstore_half_rte((float)({v}), {idx}, {p});"),
        DType::Bool => format!("{p}[{idx}] = (uchar)(({v}) != 0);"),
        d if d.is_complex() => format!("{p}[{idx}] = {v};"),
        d => format!("{p}[{idx}] = ({})({v});", d.cl_storage()),
    }
}

/// The OpenCL type of `w` elements of dtype `d` as [`vload`] gives them: `float{w}` for f16.
/// No complex type has one.
pub(crate) fn vector_type(d: DType, w: usize) -> String {
    format!("{}{w}", d.cl_compute())
}

/// The expression loading elements `at .. at + w` of pointer `p` of dtype `d` (not complex) as
/// one vector of [`vector_type`]. With `aligned`, `p + at` must be a multiple of `w` elements;
/// bool lanes are read raw, through [`lane`].
pub(crate) fn vload(d: DType, w: usize, p: &str, at: &str, aligned: bool) -> String {
    debug_assert!(!d.is_complex(), "no vector loads of complex values");
    let a = if aligned { "a" } else { "" };
    match d {
        DType::F16 => format!("vload{a}_half{w}(0, {p} + {at})"),
        d if aligned => format!("*((__global const {}{w}*)({p} + {at}))", d.cl_storage()),
        _ => format!("vload{w}(0, {p} + {at})"),
    }
}

/// Lane `k` of vector `v` loaded by [`vload`], in `d`'s compute type (a bool as 0 or 1).
pub(crate) fn lane(d: DType, v: &str, k: usize) -> String {
    match d {
        DType::Bool => format!("(uchar)({v}.s{k:x} != 0)"),
        _ => format!("{v}.s{k:x}"),
    }
}

/// The statement storing `lanes` (each of `d`'s compute type, `d` not complex) at elements
/// `at .. at + lanes.len()` of pointer `p`, as one vector store. With `aligned`, `p + at` must
/// be a multiple of the vector's size.
pub(crate) fn vstore(d: DType, p: &str, at: &str, lanes: &[String], aligned: bool) -> String {
    debug_assert!(!d.is_complex(), "no vector stores of complex values");
    let w = lanes.len();
    let a = if aligned { "a" } else { "" };
    let lanes = lanes.join(", ");
    match d {
        DType::F16 => format!("vstore{a}_half{w}_rte((float{w})({lanes}), 0, {p} + {at});"),
        d => {
            let v = format!("{}{w}", d.cl_storage());
            if aligned {
                format!("*((__global {v}*)({p} + {at})) = ({v})({lanes});")
            } else {
                format!("vstore{w}(({v})({lanes}), 0, {p} + {at});")
            }
        }
    }
}

/// The unsigned OpenCL C type of `d`'s size (`uchar` … `ulong`, `ulong2` for 16 bytes): what
/// code that moves elements without computing with them moves, and what integer arithmetic
/// wraps in.
pub(crate) fn bits_type(d: DType) -> &'static str {
    match d.size() {
        1 => "uchar",
        2 => "ushort",
        4 => "uint",
        8 => "ulong",
        _ => "ulong2",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_loads_are_zero_or_one_and_stores_test_nonzero() {
        assert_eq!(load(DType::Bool, "p", "i"), "(uchar)(p[i] != 0)");
        assert_eq!(lane(DType::Bool, "w", 10), "(uchar)(w.sa != 0)");
        assert_eq!(store(DType::Bool, "p", "i", "x"), "p[i] = (uchar)((x) != 0);");
    }

    #[test]
    fn half_moves_through_float_and_rounds_to_even() {
        assert_eq!(load(DType::F16, "p", "i"), "vload_half(i, p)");
        assert_eq!(store(DType::F16, "p", "i", "x"), "vstore_half_rte((float)(x), i, p);");
        assert_eq!(vload(DType::F16, 8, "p", "i", true), "vloada_half8(0, p + i)");
        assert_eq!(vector_type(DType::F16, 8), "float8");
        assert_eq!(bits_type(DType::F16), "ushort");
        assert_eq!(bits_type(DType::F64), "ulong");
        assert_eq!(bits_type(DType::C128), "ulong2");
    }

    #[test]
    fn aligned_vectors_go_through_vector_pointers() {
        assert_eq!(vload(DType::F32, 4, "p", "i", true), "*((__global const float4*)(p + i))");
        assert_eq!(vload(DType::F32, 4, "p", "i", false), "vload4(0, p + i)");
        let lanes = ["a".to_string(), "b".to_string()];
        assert_eq!(
            vstore(DType::I64, "o", "i", &lanes, true),
            "*((__global long2*)(o + i)) = (long2)(a, b);"
        );
        assert_eq!(vstore(DType::I64, "o", "i", &lanes, false), "vstore2((long2)(a, b), 0, o + i);");
    }
}
