//! Program sources: text or files, `#include "…"` resolved by clarray through include paths,
//! typed `-D` defines, and build options.
//!
//! An include is found among the source's in-memory files ([`Source::include_text`]) first,
//! then in the including file's directory and the include directories.
//!
//! Includes are inlined here rather than left to the driver, with `#line` directives so the
//! compiler's messages still name the right file and line. The text that reaches the compiler
//! is therefore the whole program, and the program cache's key covers every included file: a
//! change in a header rebuilds the program (PyOpenCL's cache misses such changes).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::runtime::code_only;

/// The option that makes the driver keep kernel argument information, which launches are
/// checked against. Every program clarray builds gets it.
///
/// See [the example on `Source`](crate::program::Source).
pub const ARG_INFO_OPTION: &str = "-cl-kernel-arg-info";

/// A value that can be written into a `-DNAME=value` define.
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
                Ok(if *self < 0 as $t { format!("({self})") } else { self.to_string() })
            }
        }
    )*};
}
int_define!(i8, i16, i32, i64, isize, u8, u16, u32, usize);

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
        let v = if text.is_empty() || text.chars().any(char::is_whitespace) {
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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Main {
    Text(String),
    File(PathBuf),
}

/// A program to build: its text or file, include paths, defines and options.
///
/// ```no_run
/// # fn demo(ctx: &clarray::Context) -> clarray::Result<()> {
/// use clarray::program::{Defines, Source};
/// let kernels = Source::file("kernels/heat.cl")
///     .include_dir("kernels/include")
///     .defines(Defines::new().set("NX", 512).type_name("REAL", "float"))
///     .option("-cl-mad-enable")
///     .build(ctx)?;
/// let step = kernels.kernel("step")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a source does nothing until `build` is called"]
pub struct Source {
    main: Main,
    include_dirs: Vec<PathBuf>,
    /// In-memory files: `(name, text)`.
    texts: Vec<(String, String)>,
    defines: Defines,
    options: Vec<String>,
}

/// A source with its includes inlined: the text the compiler gets, and each file's own text
/// (for showing the lines a build log points at).
///
/// See [the example on `Source`](crate::program::Source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The whole program, includes inlined.
    pub text: String,
    /// `(name used in #line directives, its text)` for the main source and every included file.
    pub files: Vec<(String, String)>,
}

/// How the main source is named in `#line` directives when it is a string.
///
/// See [the example on `Source`](crate::program::Source).
pub const MAIN_LABEL: &str = "<source>";

/// Include nesting deeper than this is taken for a cycle.
const MAX_DEPTH: usize = 64;

impl Source {
    /// A program from OpenCL C text.
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn new(text: impl Into<String>) -> Source {
        Source {
            main: Main::Text(text.into()),
            include_dirs: Vec::new(),
            texts: Vec::new(),
            defines: Defines::new(),
            options: Vec::new(),
        }
    }

    /// A program from a file (read when it is built; its directory is searched first for its
    /// `#include "…"`s).
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn file(path: impl AsRef<Path>) -> Source {
        Source { main: Main::File(path.as_ref().to_path_buf()), ..Source::new("") }
    }

    /// Adds a directory to search for `#include`s, after the including file's own directory
    /// and earlier include directories.
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn include_dir(mut self, dir: impl AsRef<Path>) -> Source {
        self.include_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Makes `text` the file that `#include "name"` (or `<name>`) reads, before any directory is
    /// searched: headers compiled into a binary with `include_str!`, or generated when the
    /// program is made (such as a [`Constants`](super::Constants) table). The text is inlined as
    /// a file's would be, named `name` in `#line` directives and build errors; its own quoted
    /// includes are found among the in-memory files and in the include directories. A later
    /// text for the same name replaces the earlier one.
    ///
    /// ```
    /// use clarray::program::Source;
    /// const COMMON: &str = "#define TWICE(x) (2 * (x))\n"; // include_str!("kernels/common.cl")
    /// let src = Source::new("#include \"common.cl\"\nkernel void k(global int* a) { a[0] = TWICE(a[0]); }")
    ///     .include_text("common.cl", COMMON);
    /// let text = src.expand().unwrap().text;
    /// assert!(text.contains("#define TWICE(x)") && text.contains("#line 1 \"common.cl\""));
    /// ```
    pub fn include_text(mut self, name: impl Into<String>, text: impl Into<String>) -> Source {
        let name = name.into();
        self.texts.retain(|(n, _)| *n != name);
        self.texts.push((name, text.into()));
        self
    }

    /// Adds defines (later values for a name win).
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn defines(mut self, defines: Defines) -> Source {
        self.defines = self.defines.merge(&defines);
        self
    }

    /// Adds one define, as [`Defines::set`].
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn define(mut self, name: &str, value: impl DefineValue) -> Source {
        self.defines = self.defines.set(name, value);
        self
    }

    /// Adds a build option, e.g. `-cl-fast-relaxed-math` or `-cl-std=CL2.0`. (Include paths
    /// go through [`Source::include_dir`], which clarray resolves itself.)
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn option(mut self, option: impl Into<String>) -> Source {
        self.options.push(option.into());
        self
    }

    /// The build options: the given options, the defines, and `-cl-kernel-arg-info`.
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn build_options(&self) -> Result<String> {
        let mut parts: Vec<String> = self.options.clone();
        let d = self.defines.options()?;
        if !d.is_empty() {
            parts.push(d);
        }
        Ok(with_arg_info(&parts.join(" ")))
    }

    /// The source with every `#include "…"` inlined (`#include <…>` too, where found in the
    /// include directories; left to the compiler otherwise). A file whose text contains
    /// `#pragma once` is inlined once.
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn expand(&self) -> Result<Expanded> {
        let mut files = Vec::new();
        let mut once = HashSet::new();
        let (text, label, dir) = match &self.main {
            Main::Text(t) => (t.clone(), MAIN_LABEL.to_string(), None),
            Main::File(p) => (read(p)?, p.display().to_string(), p.parent().map(Path::to_path_buf)),
        };
        let mut out = String::with_capacity(text.len());
        let mut any = false;
        let search = Search { dirs: &self.include_dirs, texts: &self.texts };
        expand_into(&text, &label, dir.as_deref(), &search, 0, &mut once, &mut out, &mut files, &mut any)?;
        if !any {
            // Nothing was included: the compiler gets the text unchanged.
            out = text.clone();
        } else if matches!(self.main, Main::File(_)) {
            out = format!("#line 1 \"{}\"\n{out}", escape(&label));
        }
        files.insert(0, (label, text));
        Ok(Expanded { text: out, files })
    }
}

/// `options` with `-cl-kernel-arg-info` added when missing.
///
/// See [the example on `Source`](crate::program::Source).
pub fn with_arg_info(options: &str) -> String {
    if options.split_whitespace().any(|o| o == ARG_INFO_OPTION) {
        options.trim().to_string()
    } else if options.trim().is_empty() {
        ARG_INFO_OPTION.to_string()
    } else {
        format!("{} {ARG_INFO_OPTION}", options.trim())
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("reading OpenCL source `{}`", path.display()), e))
}

fn escape(label: &str) -> String {
    label.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `#include "name"` or `#include <name>`: the name and whether it was quoted.
fn include_target(line: &str) -> Option<(&str, bool)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim();
    if let Some(r) = rest.strip_prefix('"') {
        return r.find('"').map(|e| (&r[..e], true));
    }
    if let Some(r) = rest.strip_prefix('<') {
        return r.find('>').map(|e| (&r[..e], false));
    }
    None
}

fn has_pragma_once(text: &str) -> bool {
    code_only(text).lines().any(|l| {
        let mut w = l.trim_start().trim_start_matches('#').split_whitespace();
        l.trim_start().starts_with('#') && w.next() == Some("pragma") && w.next() == Some("once")
    })
}

/// Where includes are looked for: the in-memory files, then the include directories.
struct Search<'a> {
    dirs: &'a [PathBuf],
    texts: &'a [(String, String)],
}

/// An included file, found on disk or among the in-memory files.
enum Found<'a> {
    File(PathBuf),
    Text(&'a str),
}

#[allow(clippy::too_many_arguments)]
fn expand_into(
    text: &str,
    label: &str,
    dir: Option<&Path>,
    search: &Search<'_>,
    depth: usize,
    once: &mut HashSet<String>,
    out: &mut String,
    files: &mut Vec<(String, String)>,
    any: &mut bool,
) -> Result<()> {
    // Directives are looked for in the code only: an `#include` in a comment or a string
    // literal is text, not an include (the compiler would not read it either).
    let code = code_only(text);
    for (i, (line, code_line)) in text.lines().zip(code.lines()).enumerate() {
        let directive = include_target(code_line).and_then(|_| {
            // The name is inside quotes, which code_only blanks: read it from the line itself,
            // at the same offset (code_only keeps offsets).
            let hash = code_line.find('#')?;
            line.get(hash..).and_then(include_target)
        });
        let Some((name, quoted)) = directive else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let include_dirs = search.dirs;
        let in_memory = search.texts.iter().find(|(n, _)| n == name).map(|(_, t)| Found::Text(t));
        let candidates = dir.filter(|_| quoted).into_iter().chain(include_dirs.iter().map(PathBuf::as_path));
        let found =
            in_memory.or_else(|| candidates.map(|d| d.join(name)).find(|p| p.is_file()).map(Found::File));
        let Some(found) = found else {
            if quoted {
                let searched: Vec<String> = dir
                    .into_iter()
                    .chain(include_dirs.iter().map(PathBuf::as_path))
                    .map(|d| format!("`{}`", d.display()))
                    .collect();
                let message = format!(
                    "not found in {}; add its directory with Source::include_dir, or its text with \
                     Source::include_text",
                    if searched.is_empty() {
                        "any directory (none given)".to_string()
                    } else {
                        searched.join(", ")
                    }
                );
                return Err(Error::io(
                    format!("{label}:{}: #include \"{name}\"", i + 1),
                    std::io::Error::new(std::io::ErrorKind::NotFound, message),
                ));
            }
            out.push_str(line);
            out.push('\n');
            continue;
        };
        if depth >= MAX_DEPTH {
            return Err(Error::Value {
                name: "#include",
                value: format!("{label}:{}", i + 1),
                message: format!(
                    "{label}:{}: includes nest deeper than {MAX_DEPTH} (an include cycle?); guard the \
                 header with #pragma once or #ifndef",
                    i + 1
                ),
            });
        }
        // What `#pragma once` knows a file by: its canonical path, or its in-memory name.
        let (key, inc, inc_label, inc_dir) = match found {
            Found::File(path) => {
                let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
                (
                    format!("file:{}", canonical.display()),
                    read(&path)?,
                    path.display().to_string(),
                    path.parent().map(Path::to_path_buf),
                )
            }
            Found::Text(t) => (format!("text:{name}"), t.to_string(), name.to_string(), None),
        };
        if once.contains(&key) {
            out.push('\n');
            continue;
        }
        if has_pragma_once(&inc) {
            once.insert(key);
        }
        *any = true;
        if !files.iter().any(|(l, _)| *l == inc_label) {
            files.push((inc_label.clone(), inc.clone()));
        }
        writeln!(out, "#line 1 \"{}\"", escape(&inc_label)).expect("writing to a String cannot fail");
        expand_into(&inc, &inc_label, inc_dir.as_deref(), search, depth + 1, once, out, files, any)?;
        writeln!(out, "#line {} \"{}\"", i + 2, escape(label)).expect("writing to a String cannot fail");
    }
    Ok(())
}

/// Where each line of an expanded source comes from, read off the `#line` directives that
/// [`Source::expand`] wrote: entry `k` is the `(label, line)` of expanded line `k + 1`.
fn line_map(expanded: &str) -> Vec<(String, usize)> {
    let mut label = MAIN_LABEL.to_string();
    let mut next = 1usize;
    let mut map = Vec::new();
    for l in expanded.lines() {
        map.push((label.clone(), next));
        next += 1;
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix("#line ") {
            let mut parts = rest.splitn(2, ' ');
            if let Some(Ok(n)) = parts.next().map(str::parse::<usize>) {
                next = n;
                if let Some(name) = parts.next() {
                    label = name.trim().trim_matches('"').replace("\\\\", "\\").replace("\\\"", "\"");
                }
            }
        }
    }
    map
}

/// Rewrites `NAME:LINE:` references of a build log that name no file of `files` (drivers that
/// ignore `#line`, such as NVIDIA's, write `<kernel>:LINE:` with LINE counted in the expanded
/// text) into the file and line they come from. Logs of drivers that honour `#line` are
/// returned unchanged.
pub(crate) fn translate_log(expanded: &str, files: &[(String, String)], log: &str) -> String {
    if files.len() < 2 {
        return log.to_string();
    }
    let map = line_map(expanded);
    let mut out = String::with_capacity(log.len());
    for l in log.split_inclusive('\n') {
        out.push_str(&translate_line(l, files, &map));
    }
    out
}

fn translate_line(l: &str, files: &[(String, String)], map: &[(String, usize)]) -> String {
    let bytes = l.as_bytes();
    let mut i = 0;
    while let Some(p) = l[i..].find(':') {
        let at = i + p;
        let digits = l[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && bytes.get(at + 1 + digits) == Some(&b':') {
            let before = &l[..at];
            let start = before.rfind(' ').map_or(0, |s| s + 1);
            let name = &before[start..];
            if files.iter().any(|(label, _)| label == name) {
                return l.to_string();
            }
            let Ok(n) = l[at + 1..at + 1 + digits].parse::<usize>() else { return l.to_string() };
            return match map.get(n.wrapping_sub(1)) {
                Some((label, line)) => format!("{}{label}:{line}{}", &l[..start], &l[at + 1 + digits..]),
                None => l.to_string(),
            };
        }
        i = at + 1;
    }
    l.to_string()
}

/// The source lines a build log points at (`FILE:LINE:COL:`), each shown from its own file
/// with a line of context; the first lines of the main source when the log names none.
pub(crate) fn excerpt(files: &[(String, String)], log: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut shown = 0;
    for l in log.lines() {
        let Some((file, line)) = locate(l, files) else { continue };
        let Some((name, text)) = files.get(file) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        for m in line.saturating_sub(1).max(1)..=(line + 1).min(lines.len()) {
            let s = format!("{name}:{m:<5}| {}", lines[m - 1]);
            if !out.contains(&s) {
                out.push(s);
            }
        }
        shown += 1;
        if shown == 10 {
            break;
        }
    }
    if out.is_empty() {
        if let Some((name, text)) = files.first() {
            out =
                text.lines().take(20).enumerate().map(|(i, l)| format!("{name}:{:<5}| {l}", i + 1)).collect();
        }
    }
    out.join("\n")
}

/// In a log line such as `error: inc/a.h:3:7: …` or `<kernel>:3:7: error: …`, the file (index
/// in `files`; the main source when the name is not one of them) and the line number.
fn locate(log_line: &str, files: &[(String, String)]) -> Option<(usize, usize)> {
    let bytes = log_line.as_bytes();
    let mut i = 0;
    while let Some(p) = log_line[i..].find(':') {
        let at = i + p;
        let digits = log_line[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && bytes.get(at + 1 + digits) == Some(&b':') {
            let n: usize = log_line[at + 1..at + 1 + digits].parse().ok()?;
            let before = &log_line[..at];
            let name = before.rsplit(' ').next().unwrap_or(before);
            let file = files.iter().position(|(l, _)| l == name).unwrap_or(0);
            let len = files.get(file).map_or(0, |(_, t)| t.lines().count());
            return (n >= 1 && n <= len).then_some((file, n));
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_that_ignore_line_directives_are_mapped_back() {
        let files = vec![
            ("<source>".to_string(), "#include \"a.h\"\nkernel void k() {}\n".to_string()),
            ("inc/a.h".to_string(), "// a\nint f() { return x; }\n".to_string()),
        ];
        let expanded =
            "#line 1 \"inc/a.h\"\n// a\nint f() { return x; }\n#line 2 \"<source>\"\nkernel void k() {}\n";
        // NVIDIA counts lines in the expanded text and names the program `<kernel>`.
        let log = "<kernel>:3:19: error: use of undeclared identifier 'x'\n<kernel>:5:1: note\nno location\n";
        let t = translate_log(expanded, &files, log);
        assert_eq!(
            t,
            "inc/a.h:2:19: error: use of undeclared identifier 'x'\n<source>:2:1: note\nno location\n"
        );
        // A driver that honours #line already names the files: unchanged.
        let honoured = "inc/a.h:2:19: error: use of undeclared identifier 'x'\n";
        assert_eq!(translate_log(expanded, &files, honoured), honoured);
        assert!(
            excerpt(&files, &t).contains("inc/a.h:2    | int f() { return x; }"),
            "{}",
            excerpt(&files, &t)
        );
    }

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

    #[test]
    fn in_memory_includes_are_inlined_before_directories() {
        let dir = std::env::temp_dir().join(format!("clarray-include-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.h"), "#define FROM_DISK 1\n").unwrap();
        std::fs::write(dir.join("b.h"), "#define FROM_DISK_B 1\n").unwrap();
        let src =
            Source::new("#include \"a.h\"\n#include \"gen.h\"\n#include \"gen.h\"\nkernel void k() {}\n")
                .include_dir(&dir)
                // Found before the directory's a.h; its own include of b.h comes from the directory.
                .include_text("a.h", "#pragma once\n#include \"b.h\"\n#define FROM_MEMORY 1\n")
                .include_text("gen.h", "#define OLD 1\n")
                .include_text("gen.h", "#define GEN 2\n");
        let e = src.expand().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.text.contains("#define FROM_MEMORY 1"));
        assert!(!e.text.contains("#define FROM_DISK 1"), "{}", e.text);
        assert!(e.text.contains("#define FROM_DISK_B 1"), "{}", e.text);
        // No #pragma once in gen.h: inlined each time; the later text replaced the earlier.
        assert_eq!(e.text.matches("#define GEN 2").count(), 2, "{}", e.text);
        assert!(!e.text.contains("OLD"));
        assert!(
            e.text.contains("#line 1 \"gen.h\"") && e.text.contains("#line 3 \"<source>\""),
            "{}",
            e.text
        );
        let labels: Vec<&str> = e.files.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels[..2], ["<source>", "a.h"]);
        assert!(labels.contains(&"gen.h"));
        // A name neither in memory nor on disk: the error says both ways to give it.
        let err = Source::new("#include \"none.h\"\n").include_text("gen.h", "").expand().unwrap_err();
        assert!(err.to_string().contains("Source::include_text"), "{err}");
    }

    #[test]
    fn locates_log_lines() {
        let files = vec![
            ("<source>".to_string(), "a\nb\nc\n".to_string()),
            ("inc/a.h".to_string(), "x\ny\n".to_string()),
        ];
        assert_eq!(locate("error: inc/a.h:2:7: oops", &files), Some((1, 2)));
        assert_eq!(locate("<source>:3:1: error: oops", &files), Some((0, 3)));
        assert_eq!(locate("error: /tmp/x.cl:1:19: use", &files), Some((0, 1)));
        assert_eq!(locate("no location here", &files), None);
    }
}
