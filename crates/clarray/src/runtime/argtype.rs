//! What a scalar kernel argument is: the size and kind of an OpenCL C parameter type (its
//! `typedef`s resolved from the program's source), and of the Rust value given for it.
//!
//! Drivers do not check the size given to `clSetKernelArg` for a value parameter (PoCL reads the
//! parameter's own size from the pointer whatever size it was told), so a launch must know the
//! size of every value parameter before it passes bytes for one. Types clarray cannot size
//! (structs, unions, enums, macros it cannot see) take only [`RAW_BYTES`] arguments, of the
//! size the device itself gives the type (`sizeof`, asked once per kernel by a probe kernel
//! built from the program's source).

use std::collections::HashMap;

/// The type name of a raw-bytes argument ([`crate::program::Bytes`]): passed as given, with its
/// size checked where the parameter's size is known, and its kind not checked.
pub const RAW_BYTES: &str = "raw bytes";

/// The kind of a scalar's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Integers, signed or unsigned. Signedness is not compared: a `u32` passed for an `int`
    /// keeps its bits, as C's conversion would, and generated code passes counts of either.
    Int,
    /// Floating-point numbers.
    Float,
}

/// A scalar or vector type: its element kind and size, and its whole size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scalar {
    pub class: Class,
    pub elem: usize,
    pub size: usize,
}

impl Scalar {
    /// `integer, 8 bytes` / `floating-point (4-byte elements), 16 bytes`.
    pub fn describe(&self) -> String {
        let what = match self.class {
            Class::Int => "integer",
            Class::Float => "floating-point",
        };
        let bytes = |n: usize| if n == 1 { "1 byte".to_string() } else { format!("{n} bytes") };
        if self.elem == self.size {
            format!("{what}, {}", bytes(self.size))
        } else {
            format!("{what} vector of {}-byte elements, {}", self.elem, bytes(self.size))
        }
    }

    /// Whether a value of type `given` may be passed for this one (same element kind and
    /// size; the whole sizes are compared separately).
    pub fn accepts(&self, given: &Scalar) -> bool {
        self.class == given.class && self.elem == given.elem
    }
}

/// An OpenCL C builtin scalar or vector type by name (`uint`, `unsigned int`, `float4`,
/// `double3`); `size_t` and its kin with the device's pointer size.
pub(crate) fn builtin(name: &str, pointer_bytes: usize) -> Option<Scalar> {
    let name = name.trim();
    let joined;
    // One word (the launch path's case) needs no allocation.
    let name = if name.contains(char::is_whitespace) {
        let words: Vec<&str> = name.split_whitespace().filter(|w| !QUALIFIERS.contains(w)).collect();
        joined = words.join(" ");
        joined.as_str()
    } else {
        name
    };
    if name.is_empty() {
        return None;
    }
    let (base, n) = match name.find(|c: char| c.is_ascii_digit()) {
        Some(i) => (&name[..i], name[i..].parse::<usize>().ok()?),
        None => (name, 1),
    };
    if !matches!(n, 1..=4 | 8 | 16) {
        return None;
    }
    // A 3-vector is sized and aligned as a 4-vector.
    let lanes = if n == 3 { 4 } else { n };
    let (class, elem) = match base {
        "char" | "uchar" | "unsigned char" | "signed char" | "bool" => (Class::Int, 1),
        "short" | "ushort" | "unsigned short" => (Class::Int, 2),
        "int" | "uint" | "unsigned int" | "unsigned" | "signed" => (Class::Int, 4),
        "long" | "ulong" | "unsigned long" => (Class::Int, 8),
        "half" => (Class::Float, 2),
        "float" => (Class::Float, 4),
        "double" => (Class::Float, 8),
        "size_t" | "ptrdiff_t" | "intptr_t" | "uintptr_t" if n == 1 && pointer_bytes > 0 => {
            (Class::Int, pointer_bytes)
        }
        _ => return None,
    };
    if n > 1 && base.contains(' ') {
        return None;
    }
    Some(Scalar { class, elem, size: elem * lanes })
}

/// Words that make a parameter a pointer or an image: address spaces and image access.
const HANDLE_QUALIFIERS: [&str; 12] = [
    "global",
    "__global",
    "local",
    "__local",
    "constant",
    "__constant",
    "read_only",
    "__read_only",
    "write_only",
    "__write_only",
    "read_write",
    "__read_write",
];

/// OpenCL objects passed by value that clarray cannot pass as bytes.
pub(crate) const OBJECT_TYPES: [&str; 5] = ["sampler_t", "queue_t", "clk_event_t", "event_t", "reserve_id_t"];

const QUALIFIERS: [&str; 6] = ["const", "volatile", "__private", "private", "restrict", "__restrict"];

/// The type of a Rust value given for a scalar argument, from the name the argument carries
/// (`f32`, `half::f16`, `num_complex::Complex<f64>`, `[f32; 4]`, or an OpenCL name such as
/// `int`); `None` for names clarray does not know (then only the size is checked).
pub(crate) fn given(name: &str) -> Option<Scalar> {
    let rust = |n: &str| -> Option<(Class, usize)> {
        Some(match n.trim() {
            "i8" | "u8" => (Class::Int, 1),
            "i16" | "u16" => (Class::Int, 2),
            "i32" | "u32" => (Class::Int, 4),
            "i64" | "u64" => (Class::Int, 8),
            "f16" | "half::f16" | "half::binary16::f16" => (Class::Float, 2),
            "f32" => (Class::Float, 4),
            "f64" => (Class::Float, 8),
            _ => return None,
        })
    };
    if let Some((class, elem)) = rust(name) {
        return Some(Scalar { class, elem, size: elem });
    }
    if let Some(inner) = name.strip_prefix("num_complex::Complex<").and_then(|r| r.strip_suffix('>')) {
        let (class, elem) = rust(inner)?;
        return Some(Scalar { class, elem, size: 2 * elem });
    }
    if let Some(inner) = name.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (t, n) = inner.split_once(';')?;
        let (class, elem) = rust(t)?;
        let n: usize = n.trim().parse().ok()?;
        return Some(Scalar { class, elem, size: n * elem });
    }
    builtin(name, 0)
}

/// A parameter type as the program declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Declared {
    /// A builtin type, or a typedef of one.
    Known(Scalar),
    /// A type clarray cannot size; the reason, for messages.
    Unknown(String),
    /// A pointer, image or other OpenCL object parameter, as its source declares it (read from
    /// the source where the driver keeps no argument information): it takes no scalar, since
    /// bytes given for it would reach the driver as a memory-object handle.
    Handle(String),
}

/// One parameter of a kernel's signature as written in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Written {
    /// A value parameter of this type (qualifiers dropped).
    Value(String),
    /// A pointer, array, image or OpenCL object parameter: the whole declaration.
    Handle(String),
}

/// The `typedef`s of a program's source: name → what it names (`Err`: a type clarray cannot
/// size, such as a struct, with why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Typedefs {
    map: HashMap<String, std::result::Result<String, String>>,
}

impl Typedefs {
    /// The typedefs written in `source` (comments and string literals skipped). Typedefs made
    /// by macros or in headers the driver includes itself are not seen: their names stay
    /// unknown, which refuses typed scalars for them rather than guessing.
    ///
    /// clarray does not run the preprocessor: a typedef written under `#if`/`#ifdef`/`#ifndef`,
    /// or written more than once, names a type that depends on the build (`typedef double real;`
    /// or `typedef float real;`), so it stays unknown too, and its size is asked of the device
    /// where raw bytes are passed for it.
    pub fn parse(source: &str) -> Typedefs {
        let code = code_only(source);
        let conditional = conditional_lines(&code);
        let under_if = |at: usize| {
            let k = conditional.partition_point(|&(start, _)| start <= at);
            k > 0 && conditional[k - 1].1
        };
        let mut map = HashMap::new();
        let insert = |map: &mut HashMap<String, std::result::Result<String, String>>,
                      name: &str,
                      value: std::result::Result<String, String>,
                      at: usize| {
            let why = "a typedef written under #if/#ifdef or more than once (clarray does not run the \
                       preprocessor, so its type depends on the build)";
            let value = match map.get(name) {
                Some(old) if *old != value => Err(why.to_string()),
                _ if under_if(at) => Err(why.to_string()),
                _ => value,
            };
            map.insert(name.to_string(), value);
        };
        let b = code.as_bytes();
        let mut i = 0;
        while let Some(p) = code[i..].find("typedef") {
            let at = i + p;
            i = at + 7;
            let before_ok = at == 0 || !is_ident(b[at - 1]);
            let after_ok = !matches!(b.get(at + 7), Some(c) if is_ident(*c));
            // Skip preprocessor lines (a `#define` that mentions typedef).
            let line_start = code[..at].rfind('\n').map_or(0, |n| n + 1);
            if !before_ok || !after_ok || code[line_start..at].trim_start().starts_with('#') {
                continue;
            }
            // The declaration runs to the `;` outside braces.
            let mut depth = 0i32;
            let mut end = None;
            for (k, c) in code[i..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ';' if depth <= 0 => {
                        end = Some(i + k);
                        break;
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            let body = &code[i..end];
            i = end + 1;
            if let Some(close) = body.rfind('}') {
                // typedef struct/union/enum { … } NAME;
                let kind = body.split_whitespace().next().unwrap_or("type").to_string();
                for name in body[close + 1..].split(',') {
                    let name = name.trim();
                    if is_identifier(name) {
                        insert(&mut map, name, Err(format!("a typedef of a {kind}")), at);
                    }
                }
                continue;
            }
            let words: Vec<&str> = body.split_whitespace().collect();
            let Some((name, base)) = words.split_last() else { continue };
            if !is_identifier(name) || base.is_empty() {
                // Arrays, function pointers, several declarators: named, not sized.
                if let Some(n) =
                    body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).rfind(|w| is_identifier(w))
                {
                    map.entry(n.to_string()).or_insert_with(|| {
                        Err("a typedef clarray cannot read (an array or pointer?)".into())
                    });
                }
                continue;
            }
            let base = base.join(" ");
            let aggregate =
                ["struct", "union", "enum"].iter().any(|k| base.split_whitespace().next() == Some(k));
            let value = if base.contains('*') || base.contains('[') || base.contains('(') || aggregate {
                Err(format!("a typedef of `{base}`"))
            } else {
                Ok(base)
            };
            insert(&mut map, name, value, at);
        }
        Typedefs { map }
    }

    /// Adds the `-DNAME=value` defines of build options whose value is one word, so that a
    /// type written as a macro (`REAL x` built with `-DREAL=float`) is known too.
    pub fn add_defines(&mut self, options: &str) {
        for o in options.split_whitespace() {
            if let Some((n, v)) = o.strip_prefix("-D").and_then(|d| d.split_once('=')) {
                if is_identifier(n) && is_identifier(v) {
                    self.map.insert(n.to_string(), Ok(v.to_string()));
                }
            }
        }
    }

    /// What the parameter type `name` (as the driver reports it) is.
    pub fn resolve(&self, name: &str, pointer_bytes: usize) -> Declared {
        let mut name = name.trim().to_string();
        for _ in 0..32 {
            if let Some(s) = builtin(&name, pointer_bytes) {
                return Declared::Known(s);
            }
            let bare: Vec<&str> = name.split_whitespace().filter(|w| !QUALIFIERS.contains(w)).collect();
            let bare = bare.join(" ");
            match self.map.get(&bare) {
                Some(Ok(base)) => name = base.clone(),
                Some(Err(why)) => return Declared::Unknown(format!("`{bare}` is {why}")),
                None if bare.starts_with("struct ") || bare.starts_with("union ") => {
                    return Declared::Unknown(format!(
                        "`{bare}` is a {}",
                        bare.split(' ').next().unwrap_or("")
                    ))
                }
                None => {
                    return Declared::Unknown(format!(
                        "`{bare}` is not an OpenCL C scalar or vector type nor a typedef of one in the \
                         program's source"
                    ))
                }
            }
        }
        Declared::Unknown(format!("`{name}`: typedefs nest too deep"))
    }
}

/// The element type of a pointer parameter from its declaration (`__global const float4*
/// restrict x`) or the driver's type name (`float4*`): a builtin scalar or vector type wider
/// than a byte. `None` for anything else (`void*`, `uchar*`, a typedef, a pointer to pointer),
/// whose buffers are not checked.
pub(crate) fn pointee(decl: &str) -> Option<Scalar> {
    const SKIP: &str = "__global global __constant constant __local local const __const volatile \
                        restrict __restrict __private";
    let (before, after) = decl.split_once('*')?;
    if after.contains('*') || after.contains('[') {
        return None;
    }
    let words: Vec<&str> = before.split_whitespace().filter(|w| !SKIP.split(' ').any(|k| k == *w)).collect();
    builtin(&words.join(" "), 0).filter(|s| s.elem > 1)
}

/// Whether a buffer of `given` elements may be passed for a pointer to `pointee`: the same
/// element width, and the same kind except for 16-bit elements (a kernel without fp16 support
/// reads `half` data as `ushort` bits). Elements of one byte (`u8`, `i8`, `bool`, `[u8; 4]`)
/// are bytes, which a kernel may see as any type.
pub(crate) fn elements_fit(pointee: &Scalar, given: &Scalar) -> bool {
    given.elem == 1 || (pointee.elem == given.elem && (pointee.class == given.class || pointee.elem == 2))
}

/// The start of every line of `code` (comments blanked) and whether the line lies inside an
/// `#if`, `#ifdef` or `#ifndef` block (the directive lines themselves included), in order.
fn conditional_lines(code: &str) -> Vec<(usize, bool)> {
    let mut depth = 0usize;
    let mut start = 0;
    let mut out = Vec::new();
    for line in code.split_inclusive('\n') {
        let directive = line.trim_start().strip_prefix('#').map(|d| d.trim_start());
        let word = directive.map(|d| d.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or(""));
        if matches!(word, Some("if" | "ifdef" | "ifndef")) {
            depth += 1;
        }
        out.push((start, depth > 0));
        if word == Some("endif") {
            depth = depth.saturating_sub(1);
        }
        start += line.len();
    }
    out
}

/// A parameter type's name as a `sizeof` operand (qualifiers dropped), for the probe that asks
/// the device the size of a type clarray cannot size itself; `None` for a name that is not
/// words only (nothing but a type name may reach the probe's source).
pub(crate) fn sizeof_operand(name: &str) -> Option<String> {
    let words: Vec<&str> = name.split_whitespace().filter(|w| !QUALIFIERS.contains(w)).collect();
    (!words.is_empty() && words.iter().all(|w| is_identifier(w))).then(|| words.join(" "))
}

/// The parameters of kernel `kernel` as written in `source` (pointers, arrays, images and
/// other OpenCL objects marked as [`Written::Handle`]: they take no scalar), when the driver
/// keeps no argument information: read from the first `kernel`/`__kernel` function of that
/// name. `None` also where a parameter cannot be read at all.
pub(crate) fn signature(source: &str, kernel: &str) -> Option<Vec<Written>> {
    let code = code_only(source);
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(p) = code[from..].find(kernel) {
        let at = from + p;
        from = at + kernel.len();
        if (at > 0 && is_ident(b[at - 1])) || matches!(b.get(from), Some(c) if is_ident(*c)) {
            continue;
        }
        let rest = code[from..].trim_start();
        let Some(params) = rest.strip_prefix('(') else { continue };
        // The declaration this name is in starts after the previous `;`, `{` or `}`.
        let head = &code[code[..at].rfind([';', '}', '{']).map_or(0, |s| s + 1)..at];
        if !head
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == "kernel" || w == "__kernel")
        {
            continue;
        }
        let close = params.find(')')?;
        let list = params[..close].trim();
        if list.is_empty() || list == "void" {
            return Some(Vec::new());
        }
        return list
            .split(',')
            .map(|p| {
                let p = p.trim();
                let words: Vec<&str> = p.split_whitespace().collect();
                // The words before the parameter's name.
                let ty_words = &words[..words.len().saturating_sub(1)];
                let handle = p.contains('*')
                    || p.contains('[')
                    || ty_words.iter().any(|w| {
                        HANDLE_QUALIFIERS.contains(w)
                            || (w.starts_with("image") && w.ends_with("_t"))
                            || OBJECT_TYPES.contains(w)
                            || *w == "pipe"
                    });
                if handle {
                    return Some(Written::Handle(words.join(" ")));
                }
                let (_, ty) = words.split_last()?;
                let ty = ty.iter().filter(|w| !QUALIFIERS.contains(w)).copied().collect::<Vec<_>>();
                (!ty.is_empty()).then(|| Written::Value(ty.join(" ")))
            })
            .collect();
    }
    None
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.bytes();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == b'_') && c.all(is_ident)
}

/// `source` with every comment and the contents of every string and character literal
/// replaced by spaces, newlines kept: byte offsets and line numbers stay those of `source`.
/// Line splices (a backslash before a line end, spaces or a carriage return allowed between, as
/// GCC and Clang take them) join what they split, as the preprocessor joins lines before it
/// finds comments: `*\` then `/` on the next line closes a block comment, and a line comment
/// goes on over a splice.
pub fn code_only(source: &str) -> String {
    #[derive(PartialEq)]
    enum S {
        Code,
        Line,
        Block,
        Str(u8),
    }
    let b = source.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    // Blanks `b[from..to]`, newlines kept.
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        out.extend(b[from..to].iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
    };
    let mut s = S::Code;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        // The next byte that counts: past any splices after this one.
        let k = after_splices(b, i + 1);
        let next = b.get(k).copied();
        match s {
            S::Code => match (c, next) {
                (b'/', Some(b'/')) => {
                    s = S::Line;
                    blank(&mut out, i, k + 1);
                    i = k + 1;
                    continue;
                }
                (b'/', Some(b'*')) => {
                    s = S::Block;
                    blank(&mut out, i, k + 1);
                    i = k + 1;
                    continue;
                }
                (b'"' | b'\'', _) => {
                    s = S::Str(c);
                    out.push(c);
                }
                _ => out.push(c),
            },
            S::Line => {
                let end = after_splices(b, i);
                if end > i {
                    // A line comment continues over a splice.
                    blank(&mut out, i, end);
                    i = end;
                    continue;
                }
                if c == b'\n' {
                    s = S::Code;
                    out.push(b'\n');
                } else {
                    out.push(b' ');
                }
            }
            S::Block => {
                if c == b'*' && next == Some(b'/') {
                    s = S::Code;
                    blank(&mut out, i, k + 1);
                    i = k + 1;
                    continue;
                }
                out.push(if c == b'\n' { b'\n' } else { b' ' });
            }
            S::Str(q) => {
                let end = after_splices(b, i);
                if end > i {
                    blank(&mut out, i, end);
                    i = end;
                    continue;
                }
                if c == b'\\' && i + 1 < b.len() {
                    out.push(b' ');
                    out.push(if b[i + 1] == b'\n' { b'\n' } else { b' ' });
                    i += 2;
                    continue;
                }
                if c == q || c == b'\n' {
                    // An unterminated literal ends at the line's end, as the compiler would
                    // report it.
                    s = S::Code;
                    out.push(c);
                } else {
                    out.push(b' ');
                }
            }
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, by ASCII spaces: multi-byte characters inside comments
    // became spaces byte for byte, those outside are copied whole.
    String::from_utf8(out).unwrap_or_default()
}

/// The index of the first byte at or after `j` that is not part of a line splice (a backslash,
/// then spaces, tabs or a carriage return, then a newline).
fn after_splices(b: &[u8], mut j: usize) -> usize {
    while b.get(j) == Some(&b'\\') {
        let mut k = j + 1;
        while matches!(b.get(k), Some(b' ' | b'\t' | b'\r')) {
            k += 1;
        }
        if b.get(k) != Some(&b'\n') {
            break;
        }
        j = k + 1;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typedefs_resolve_to_their_builtin() {
        let t = Typedefs::parse(
            "typedef ulong u64_t; // typedef float nope;\n typedef u64_t idx_t;\n\
             typedef struct { float x; int y; } pair_t;\n typedef unsigned int  u32_t ;\n\
             /* typedef double hidden; */ typedef float4 v4;\n#define T typedef\n",
        );
        let k = |n: &str| match t.resolve(n, 8) {
            Declared::Known(s) => Some(s.size),
            Declared::Unknown(_) | Declared::Handle(_) => None,
        };
        assert_eq!(k("u64_t"), Some(8));
        assert_eq!(k("idx_t"), Some(8));
        assert_eq!(k("u32_t"), Some(4));
        assert_eq!(k("v4"), Some(16));
        assert_eq!(k("float3"), Some(16));
        assert_eq!(k("size_t"), Some(8));
        assert_eq!(k("pair_t"), None);
        assert_eq!(k("nope"), None);
        assert_eq!(k("hidden"), None);
        assert_eq!(k("struct foo"), None);
        assert_eq!(given("[f32; 4]"), builtin("float4", 0));
        assert_eq!(given("num_complex::Complex<f64>").map(|s| s.size), Some(16));
        assert_eq!(given("u64").map(|s| s.class), Some(Class::Int));
        assert_eq!(given("scalar"), None);
        assert_eq!(sizeof_operand(" const  struct pair "), Some("struct pair".into()));
        assert_eq!(sizeof_operand("pair_t) + 1; (x"), None);
        assert_eq!(sizeof_operand("const"), None);
    }

    /// Regression: a typedef written in both branches of an `#ifdef` resolved to its last
    /// definition, so an f32 was accepted for a `real` the device built as double (the kernel
    /// read 8 bytes of a 4-byte value) and the right f64 was refused. Typedefs under a
    /// conditional, or written twice differently, are now unknown (sized by the device); the
    /// same typedef written twice alike, and typedefs outside the block, still resolve.
    #[test]
    fn typedefs_that_depend_on_the_preprocessor_are_unknown() {
        let t = Typedefs::parse(
            "typedef int before;\n#ifdef cl_khr_fp64\n typedef double real;\n#else\n  typedef float real;\n\
             #endif\ntypedef uint after; typedef uint after;\n# if defined(X) // a comment\n\
             #  ifndef Y\ntypedef long deep;\n#  endif\ntypedef short shallow;\n#endif\n\
             typedef float twice; typedef double twice;\ntypedef char last;\n",
        );
        let k = |n: &str| match t.resolve(n, 8) {
            Declared::Known(s) => Ok(s.size),
            Declared::Unknown(why) => Err(why),
            Declared::Handle(_) => Err(String::new()),
        };
        assert_eq!(k("before"), Ok(4));
        assert_eq!(k("after"), Ok(4));
        assert_eq!(k("last"), Ok(1));
        for name in ["real", "deep", "shallow", "twice"] {
            let why = k(name).unwrap_err();
            assert!(why.contains("under #if/#ifdef or more than once"), "{name}: {why}");
        }
    }

    #[test]
    fn pointer_element_types_are_read_from_declarations() {
        let elem = |d: &str| pointee(d).map(|s| (s.class, s.elem));
        assert_eq!(elem("__global const float4* restrict x"), Some((Class::Float, 4)));
        assert_eq!(elem("float*"), Some((Class::Float, 4)));
        assert_eq!(elem("global unsigned int *o"), Some((Class::Int, 4)));
        assert_eq!(elem("__constant double* c"), Some((Class::Float, 8)));
        for none in ["void*", "global uchar* b", "real*", "float** p", "float x", "image2d_t im"] {
            assert_eq!(elem(none), None, "{none}");
        }
        let (f32_, i32_, f16_) = (given("f32").unwrap(), given("i32").unwrap(), given("half::f16").unwrap());
        assert!(elements_fit(&pointee("float4*").unwrap(), &f32_));
        assert!(!elements_fit(&pointee("double*").unwrap(), &f32_));
        assert!(!elements_fit(&pointee("float*").unwrap(), &i32_));
        assert!(elements_fit(&pointee("ushort*").unwrap(), &f16_));
        assert!(elements_fit(&pointee("float2*").unwrap(), &given("num_complex::Complex<f32>").unwrap()));
        assert!(elements_fit(&pointee("uint*").unwrap(), &given("[u8; 4]").unwrap()), "bytes");
        assert!(elements_fit(&pointee("double*").unwrap(), &given("u8").unwrap()), "bytes");
    }

    #[test]
    fn signatures_are_read_from_the_source() {
        let src = "/* kernel void k(float x) */ void k2(int a) {}\n\
                   __kernel __attribute__((reqd_work_group_size(1, 1, 1))) void k(u64_t v,\n  const int n,\n\
                   __global float* restrict o, local int* l, float4 w) { }\nkernel void e(void) {}";
        let v = |t: &str| Written::Value(t.into());
        let h = |t: &str| Written::Handle(t.into());
        assert_eq!(
            signature(src, "k"),
            Some(vec![v("u64_t"), v("int"), h("__global float* restrict o"), h("local int* l"), v("float4")])
        );
        assert_eq!(signature(src, "e"), Some(Vec::new()));
        assert_eq!(signature(src, "k2"), None, "not a kernel");
    }

    #[test]
    fn signature_marks_pointer_image_and_object_parameters() {
        let src = "kernel void k(global float *o, __constant int* c, float a[4], read_only image2d_t img,\n\
                   __write_only image3d_t w, sampler_t s, const float x, global const uint2* restrict p,\n\
                   uint n) {}";
        let h = |t: &str| Written::Handle(t.into());
        assert_eq!(
            signature(src, "k"),
            Some(vec![
                h("global float *o"),
                h("__constant int* c"),
                h("float a[4]"),
                h("read_only image2d_t img"),
                h("__write_only image3d_t w"),
                h("sampler_t s"),
                Written::Value("float".into()),
                h("global const uint2* restrict p"),
                Written::Value("uint".into()),
            ])
        );
        assert_eq!(
            signature("kernel void k(uint image, int images_t, float sampler_t_n) {}", "k"),
            Some(vec![
                Written::Value("uint".into()),
                Written::Value("int".into()),
                Written::Value("float".into())
            ])
        );
    }

    #[test]
    fn code_only_blanks_comments_and_strings() {
        let s = "a /* b\n c */ d // e\n\"f // g\" 'h' /* é */ i";
        let c = code_only(s);
        assert_eq!(c.len(), s.len());
        assert_eq!(c.lines().count(), s.lines().count());
        assert!(c.contains('a') && c.contains('d') && c.contains('i'));
        assert!(!c.contains('b') && !c.contains('e') && !c.contains('f') && !c.contains('h'));
    }
}
