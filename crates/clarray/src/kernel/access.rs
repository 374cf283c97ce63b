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

/// The value of the expression `v` (of any arithmetic type, real or complex, as a user's code
/// may give) in `d`'s compute type, as NumPy converts: a real value becomes a complex one with a
/// zero imaginary part (a C cast to `float2` would copy it into both parts), a complex value
/// stays itself, a nonzero value is a true bool (a C cast to `uchar` would keep its low byte).
/// `vec_step(v)` (1 for a scalar, 2 for a complex value) is known when the kernel compiles, and
/// `v` is evaluated once.
pub(crate) fn convert(d: DType, v: &str) -> String {
    match d {
        DType::Bool => format!("(uchar)(({v}) != 0)"),
        DType::C64 | DType::C128 => {
            let (c, m) = if d == DType::C64 { ("float2", "int2") } else { ("double2", "long2") };
            format!("select(({c})(0), ({c})({v}), ({m})(-1, vec_step({v}) == 1 ? 0 : -1))")
        }
        d => format!("({})({v})", d.cl_compute()),
    }
}

/// The OpenCL type of `w` elements of dtype `d` as [`vload`] gives them: `float{w}` for f16;
/// for complex `d`, a vector of `2w` components (`float8` holds 4 `complex64` values), real
/// and imaginary parts alternating as in memory.
pub(crate) fn vector_type(d: DType, w: usize) -> String {
    if d.is_complex() {
        format!("{}{}", d.real().cl_compute(), 2 * w)
    } else {
        format!("{}{w}", d.cl_compute())
    }
}

/// The expression loading elements `at .. at + w` of pointer `p` of dtype `d` as one vector of
/// [`vector_type`]. With `aligned`, `p + at` must be a multiple of `w` elements; bool lanes are
/// read raw, through [`lane`]; complex values as `2w` components of their real type (2 or
/// 2w must be a valid vector length: `w` of 1, 2, 4 or 8).
pub(crate) fn vload(d: DType, w: usize, p: &str, at: &str, aligned: bool) -> String {
    let a = if aligned { "a" } else { "" };
    match d {
        DType::F16 => format!("vload{a}_half{w}(0, {p} + {at})"),
        d if d.is_complex() => {
            let (r, w2) = (d.real().cl_compute(), 2 * w);
            if aligned {
                format!("*((__global const {r}{w2}*)({p} + {at}))")
            } else {
                format!("vload{w2}(0, (__global const {r}*)({p} + {at}))")
            }
        }
        d if aligned => format!("*((__global const {}{w}*)({p} + {at}))", d.cl_storage()),
        _ => format!("vload{w}(0, {p} + {at})"),
    }
}

/// Lane `k` of vector `v` loaded by [`vload`], in `d`'s compute type (a bool as 0 or 1).
pub(crate) fn lane(d: DType, v: &str, k: usize) -> String {
    match d {
        DType::Bool => format!("(uchar)({v}.s{k:x} != 0)"),
        d if d.is_complex() => format!("{v}.s{:x}{:x}", 2 * k, 2 * k + 1),
        _ => format!("{v}.s{k:x}"),
    }
}

/// The statement storing `lanes` (each of `d`'s compute type) at elements
/// `at .. at + lanes.len()` of pointer `p`, as one vector store (complex values as `2w`
/// components of their real type). With `aligned`, `p + at` must be a multiple of the
/// vector's size.
pub(crate) fn vstore(d: DType, p: &str, at: &str, lanes: &[String], aligned: bool) -> String {
    let w = lanes.len();
    let a = if aligned { "a" } else { "" };
    let lanes = lanes.join(", ");
    match d {
        DType::F16 => format!("vstore{a}_half{w}_rte((float{w})({lanes}), 0, {p} + {at});"),
        d if d.is_complex() => {
            let v = vector_type(d, w);
            if aligned {
                format!("*((__global {v}*)({p} + {at})) = ({v})({lanes});")
            } else {
                format!(
                    "vstore{}(({v})({lanes}), 0, (__global {}*)({p} + {at}));",
                    2 * w,
                    d.real().cl_compute()
                )
            }
        }
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

/// The f16 vector paths of the elementwise kernels: elements `at .. at + w` of the f16
/// pointer `p` read as one vector of 16-bit words (one wide load, where `vload_halfN` from
/// global memory may be compiled into `w` narrow ones), converted to `float{w}` by
/// [`half_helpers`]' function. Needs no `cl_khr_fp16`. With `aligned`, `p + at` must be a
/// multiple of `w` elements.
pub(crate) fn vload_half_bits(w: usize, p: &str, at: &str, aligned: bool) -> String {
    let bits = if aligned {
        format!("*((__global const ushort{w}*)({p} + {at}))")
    } else {
        format!("vload{w}(0, (__global const ushort*)({p} + {at}))")
    };
    format!("clarray_h2f{w}({bits})")
}

/// The statement storing `lanes` (floats) at elements `at .. at + w` of the f16 pointer `p`,
/// rounded to nearest even, as one store of `w` 16-bit words (see [`vload_half_bits`]).
pub(crate) fn vstore_half_bits(p: &str, at: &str, lanes: &[String], aligned: bool) -> String {
    let w = lanes.len();
    let bits = format!("clarray_f2h{w}((float{w})({}))", lanes.join(", "));
    if aligned {
        format!("*((__global ushort{w}*)({p} + {at})) = {bits};")
    } else {
        format!("vstore{w}({bits}, 0, (__global ushort*)({p} + {at}));")
    }
}

/// The conversions [`vload_half_bits`] and [`vstore_half_bits`] call for width `w`: between
/// `ushort{w}` words and `float{w}`, through `vload_half{w}`/`vstore_half{w}_rte` on private
/// memory (which compilers keep in registers). Guarded, so a kernel may include it twice.
pub(crate) fn half_helpers(w: usize) -> String {
    format!(
        "#ifndef CLARRAY_HALF{w}\n#define CLARRAY_HALF{w}\n\
         inline float{w} clarray_h2f{w}(ushort{w} b) {{ return vload_half{w}(0, (const __private half*)&b); }}\n\
         inline ushort{w} clarray_f2h{w}(float{w} v) {{ ushort{w} b; vstore_half{w}_rte(v, 0, (__private half*)&b); return b; }}\n\
         #endif\n"
    )
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
        assert_eq!(convert(DType::Bool, "x"), "(uchar)((x) != 0)");
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
    fn complex_vectors_move_their_components() {
        assert_eq!(vector_type(DType::C64, 4), "float8");
        assert_eq!(vload(DType::C64, 4, "p", "i", true), "*((__global const float8*)(p + i))");
        assert_eq!(vload(DType::C128, 4, "p", "i", false), "vload8(0, (__global const double*)(p + i))");
        assert_eq!(lane(DType::C64, "w", 3), "w.s67");
        let lanes = ["a".to_string(), "b".to_string()];
        assert_eq!(
            vstore(DType::C64, "o", "i", &lanes, true),
            "*((__global float4*)(o + i)) = (float4)(a, b);"
        );
        assert_eq!(
            vstore(DType::C64, "o", "i", &lanes, false),
            "vstore4((float4)(a, b), 0, (__global float*)(o + i));"
        );
    }

    #[test]
    fn half_vectors_move_as_words() {
        assert_eq!(vload_half_bits(8, "p", "i", true), "clarray_h2f8(*((__global const ushort8*)(p + i)))");
        assert_eq!(
            vload_half_bits(4, "p", "i", false),
            "clarray_h2f4(vload4(0, (__global const ushort*)(p + i)))"
        );
        let lanes = ["a".to_string(), "b".to_string()];
        assert_eq!(
            vstore_half_bits("o", "i", &lanes, true),
            "*((__global ushort2*)(o + i)) = clarray_f2h2((float2)(a, b));"
        );
        assert!(half_helpers(8).contains("inline float8 clarray_h2f8(ushort8 b)"));
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
