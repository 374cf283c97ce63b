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

// This file: `Source` and the expansion of its includes. The typed defines are in defines.rs,
// the mapping of a build log back to the included files in build.rs.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::runtime::code_only;

pub use super::defines::{DefineValue, Defines};

/// The option that makes the driver keep kernel argument information, which launches are
/// checked against. Every program clarray builds gets it.
///
/// See [the example on `Source`](crate::program::Source).
pub const ARG_INFO_OPTION: &str = "-cl-kernel-arg-info";

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

/// A source whose includes expand past this many bytes, or inline more headers than
/// [`MAX_INLINES`], is refused: headers included again and again without a guard (or whose
/// guard is undefined) grow exponentially, as do guarded headers included inside `#if`
/// branches (inlined at each include: which branch the compiler takes is not known here).
const MAX_EXPANDED: usize = 64 << 20;

/// See [`MAX_EXPANDED`].
const MAX_INLINES: usize = 500_000;

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
    /// include directories; left to the compiler otherwise), as the C preprocessor would take
    /// them (tested against GCC's on random include graphs): a `#pragma once` header, or one
    /// guarded by `#ifndef`, is inlined once unless an `#if` may skip it or its guard is
    /// `#undef`ined; headers inside `#if` branches are inlined for the compiler to choose.
    /// Includes nested deeper than 64, or expanding past 64 MiB or 20 000 inlined headers, are
    /// refused ([`Error::Value`]).
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn expand(&self) -> Result<Expanded> {
        let (text, label, dir) = match &self.main {
            Main::Text(t) => (t.clone(), MAIN_LABEL.to_string(), None),
            Main::File(p) => (read(p)?, p.display().to_string(), p.parent().map(Path::to_path_buf)),
        };
        let mut out = String::with_capacity(text.len());
        let search = Search { dirs: &self.include_dirs, texts: &self.texts };
        let mut x = Expansion::default();
        expand_into(
            &text,
            &label,
            dir.as_deref(),
            &search,
            false,
            include_guard(&text).is_some(),
            &mut x,
            &mut out,
        )?;
        let Expansion { any, mut files, .. } = x;
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

/// A preprocessor directive's name and the rest of its line (`#  ifndef X` → `("ifndef", "X")`),
/// in a line of code (comments and literals blanked).
fn directive(code_line: &str) -> Option<(&str, &str)> {
    let rest = code_line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(rest.len());
    Some((&rest[..end], rest[end..].trim()))
}

/// The macro of a classic include guard: the whole file (but blank lines and comments) inside
/// `#ifndef X` (or `#if !defined(X)`) whose next directive is `#define X` and whose `#endif`
/// is the file's last line of code.
fn include_guard(text: &str) -> Option<String> {
    let code = code_only(text);
    // (A `#pragma once` may come before the guard, as in headers written for both.)
    let mut lines = code.lines().map(str::trim).filter(|l| !l.is_empty()).skip_while(|l| {
        directive(l).is_some_and(|(k, rest)| k == "pragma" && rest.split_whitespace().next() == Some("once"))
    });
    let (kind, rest) = directive(lines.next()?)?;
    let name = match kind {
        "ifndef" => rest,
        "if" => rest
            .strip_prefix('!')?
            .trim_start()
            .strip_prefix("defined")?
            .trim()
            .trim_matches(['(', ')'])
            .trim(),
        _ => return None,
    };
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return None;
    }
    let (kind, rest) = directive(lines.next()?)?;
    if kind != "define" || rest.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next() != Some(name) {
        return None;
    }
    // The #ifndef's own #endif must close the file.
    let mut depth = 1usize;
    for l in lines {
        if depth == 0 {
            return None; // code after the guard's #endif
        }
        match directive(l).map(|(k, _)| k) {
            Some("if" | "ifdef" | "ifndef") => depth += 1,
            Some("endif") => depth -= 1,
            // The file has a branch for when the macro is defined: no guard.
            Some("else" | "elif" | "elifdef" | "elifndef") if depth == 1 => return None,
            _ => {}
        }
    }
    (depth == 0).then(|| name.to_string())
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

/// What an expansion has learnt so far.
#[derive(Default)]
struct Expansion {
    /// The keys of headers that need not be inlined again: `#pragma once` files (by path or
    /// in-memory name) and classic guards (by macro) inlined where no `#if` could skip them.
    once: HashSet<String>,
    /// The keys of the headers being inlined, outermost first.
    stack: Vec<String>,
    /// Every file read: its label and text.
    files: Vec<(String, String)>,
    /// Whether anything was inlined.
    any: bool,
    /// The keys of the headers taken once that were inlined anywhere so far.
    seen: HashSet<String>,
    /// Headers inlined so far.
    inlines: usize,
    /// The files read so far, by canonical path.
    read: HashMap<PathBuf, String>,
}

/// Inlines the includes of `text` (the file `label` in `dir`) into `out`. `conditional`: the
/// text is inside an `#if` of a file that includes it, which the compiler may skip. `guarded`:
/// the text is wrapped in its own include guard, whose `#ifndef` is no condition on what it
/// includes (it is the condition on the file itself).
///
/// The compiler, not this function, evaluates `#if`: a header that an `#if` may skip is inlined
/// all the same (guarded so that the compiler takes it once), and one that is not found there is
/// left to the compiler (which fails on it only where the branch is taken).
#[allow(clippy::too_many_arguments)]
fn expand_into(
    text: &str,
    label: &str,
    dir: Option<&Path>,
    search: &Search<'_>,
    conditional: bool,
    guarded: bool,
    x: &mut Expansion,
    out: &mut String,
) -> Result<()> {
    // Directives are looked for in the code only: an `#include` in a comment or a string
    // literal is text, not an include (the compiler would not read it either).
    let code = code_only(text);
    // `#if` nesting in this file.
    let mut depth = 0usize;
    let lines: Vec<&str> = text.lines().collect();
    // The last line of a replaced `#include` directive that goes on over several lines (a
    // block comment or a backslash): the lines up to it are the directive's, not code.
    let mut blank_to = 0usize;
    // A block comment opened on a replaced `#include` line that never closes: opened again
    // after it, so that the compiler sees the unterminated comment the file has.
    let mut reopen = false;
    for (i, (line, code_line)) in lines.iter().copied().zip(code.lines()).enumerate() {
        if i > 0 && i <= blank_to {
            out.push('\n');
            continue;
        }
        if std::mem::take(&mut reopen) {
            out.push_str("/*");
        }
        match directive(code_line) {
            Some(("if" | "ifdef" | "ifndef", _)) => depth += 1,
            Some(("endif", _)) => depth = depth.saturating_sub(1),
            // An undefined guard lets its header in again (where the #undef is dead, the copy
            // costs text, not meaning: the guard still holds), and no longer ends a cycle
            // through a header being inlined: it is inlined again, up to the nesting limit
            // (the preprocessor stops it only where an #if, unknown here, does).
            Some(("undef", name)) => {
                let key = format!("macro:{}", name.split_whitespace().next().unwrap_or(""));
                x.once.remove(&key);
                for k in x.stack.iter_mut().filter(|k| **k == key) {
                    k.push_str(" (undefined)");
                }
            }
            _ => {}
        }
        // `#include \` with the name on the next line: the directive is the spliced lines.
        let spliced = match directive(code_line) {
            Some(("include", _)) if include_target(code_line).is_none() && spliced_part(line).is_some() => {
                Some(join_spliced(&lines, i))
            }
            _ => None,
        };
        // The name is inside quotes, which code_only blanks: read it from the line itself (or
        // the spliced lines), at the same offset (code_only keeps offsets).
        let hash = code_line.find('#');
        let directive = match &spliced {
            Some(text) => hash.and_then(|h| text.get(h..)).and_then(include_target),
            None => include_target(code_line)
                .and_then(|_| line.get(hash?..).and_then(include_target))
                // `<sub//a.h>`, `<it's.h>`: a header name in angle brackets is taken as written,
                // though code_only read a comment or a literal in it.
                .or_else(|| {
                    matches!(directive(code_line), Some(("include", _)))
                        .then(|| line.get(hash?..).and_then(include_target).filter(|&(_, quoted)| !quoted))
                        .flatten()
                }),
        };
        let Some((name, quoted)) = directive else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let skippable = conditional || depth > usize::from(guarded);
        let include_dirs = search.dirs;
        let in_memory = search.texts.iter().find(|(n, _)| n == name).map(|(_, t)| Found::Text(t));
        let absolute = Some(Path::new(name)).filter(|p| p.is_absolute()).map(Path::to_path_buf);
        let candidates = dir.filter(|_| quoted).into_iter().chain(include_dirs.iter().map(PathBuf::as_path));
        let found = in_memory.or_else(|| {
            absolute
                .filter(|p| p.is_file())
                .or_else(|| candidates.map(|d| d.join(name)).find(|p| p.is_file()))
                .map(Found::File)
        });
        let Some(found) = found else {
            if quoted && !skippable {
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
        // Whatever follows on the directive's lines is the directive's (extra tokens, which the
        // compiler ignores): blanked, not left as code.
        match directive_last_line(&lines, i) {
            Some(last) => blank_to = last,
            None => reopen = true,
        }
        // What comes before the `#` (the end of a comment opened above: `*/ #include …`).
        let before = line.get(..hash.unwrap_or(0)).unwrap_or("");
        // What the file is known by: its canonical path, or its in-memory name.
        let (file_key, inc, inc_label, inc_dir) = match found {
            Found::File(path) => {
                let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
                // Each file read once per expansion: one text for every include of it.
                let inc = match x.read.get(&canonical) {
                    Some(t) => t.clone(),
                    None => {
                        let t = read(&path)?;
                        x.read.insert(canonical.clone(), t.clone());
                        t
                    }
                };
                (
                    format!("file:{}", canonical.display()),
                    inc,
                    path.display().to_string(),
                    path.parent().map(Path::to_path_buf),
                )
            }
            Found::Text(t) => (format!("text:{name}"), t.to_string(), name.to_string(), None),
        };
        // A header taken once (`#pragma once`, keyed by file; a classic guard, keyed by its
        // macro, as the compiler knows it) is not inlined where it was inlined already
        // unconditionally, nor inside itself (an include cycle the guard ends).
        let pragma = has_pragma_once(&inc);
        let key = if pragma { Some(file_key) } else { include_guard(&inc).map(|m| format!("macro:{m}")) };
        if let Some(k) = &key {
            if x.once.contains(k) || x.stack.contains(k) {
                out.push_str(before);
                out.push('\n');
                continue;
            }
        }
        x.inlines += 1;
        if out.len() > MAX_EXPANDED || x.inlines > MAX_INLINES {
            let what = if x.inlines > MAX_INLINES {
                format!("more than {MAX_INLINES} inlined headers")
            } else {
                format!("more than {} MiB of source", MAX_EXPANDED >> 20)
            };
            return Err(Error::Value {
                name: "#include",
                value: format!("{label}:{}", i + 1),
                message: format!(
                    "the includes expand to {what} (the limit was passed at {label}:{}): headers \
                     included again and again. A header without a guard is inlined at every \
                     include, and so is a guarded one included inside an #if or #ifdef branch \
                     (which branch the compiler takes is not known before it builds); guard the \
                     headers with #pragma once or #ifndef and include them outside #if branches",
                    i + 1
                ),
            });
        }
        if x.stack.len() >= MAX_DEPTH {
            return Err(Error::Value {
                name: "#include",
                value: format!("{label}:{}", i + 1),
                message: format!(
                    "{label}:{}: includes nest deeper than {MAX_DEPTH} (an include cycle?); guard the \
                     header with #pragma once or #ifndef (a header that #undefs its own guard and \
                     includes itself again is inlined to this depth: the #if that would end it is \
                     the compiler's to evaluate)",
                    i + 1
                ),
            });
        }
        x.any = true;
        if !x.files.iter().any(|(l, _)| *l == inc_label) {
            x.files.push((inc_label.clone(), inc.clone()));
        }
        // `#pragma once` where an `#if` may have skipped the file before (or may skip it here):
        // a guard macro of clarray's own lets the compiler take it once.
        let wrap = match (&key, pragma) {
            (Some(k), true) => Some(once_macro(k)),
            _ => None,
        };
        if !before.trim().is_empty() {
            out.push_str(before);
            out.push('\n');
        }
        if let Some(m) = &wrap {
            writeln!(out, "#ifndef {m}\n#define {m}").expect("writing to a String cannot fail");
        }
        writeln!(out, "#line 1 \"{}\"", escape(&inc_label)).expect("writing to a String cannot fail");
        x.stack.push(key.clone().unwrap_or_else(|| format!("unguarded:{inc_label}")));
        let guarded = include_guard(&inc).is_some();
        // A header taken once that was inlined before (inside an #if, or before its guard was
        // undefined) may be skipped here by its own guard: what it includes is conditional then,
        // and taken once only where it is inlined unconditionally.
        let seen_before = key.as_ref().is_some_and(|k| !x.seen.insert(k.clone()));
        expand_into(&inc, &inc_label, inc_dir.as_deref(), search, skippable || seen_before, guarded, x, out)?;
        // Taken once from now on, unless its guard was undefined while it was inlined.
        let still_guarded = x.stack.pop() == key;
        if let Some(k) = key.filter(|_| !skippable && still_guarded) {
            x.once.insert(k);
        }
        // Each after an empty line, which a backslash ending the header's last line splices.
        if wrap.is_some() {
            out.push_str("\n#endif\n");
        }
        writeln!(out, "\n#line {} \"{}\"", i + 2, escape(label)).expect("writing to a String cannot fail");
    }
    Ok(())
}

/// The guard macro clarray wraps a `#pragma once` file in, named by its key.
fn once_macro(key: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(key.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("CLARRAY_ONCE_{hex}_")
}

/// `line` without the backslash that splices it with the next (spaces or a carriage return may
/// follow the backslash, as GCC and Clang take it); `None` where no splice ends it.
fn spliced_part(line: &str) -> Option<&str> {
    line.trim_end_matches([' ', '\t', '\r']).strip_suffix('\\')
}

/// Line `first` of `lines` with the lines that backslashes splice onto it.
fn join_spliced(lines: &[&str], first: usize) -> String {
    let mut text = String::new();
    for line in &lines[first..] {
        match spliced_part(line) {
            Some(part) => text.push_str(part),
            None => {
                text.push_str(line);
                break;
            }
        }
    }
    text
}

/// The last line of the directive that starts on line `first` of `lines`: a directive ends at
/// the first line end that is neither inside a block comment nor spliced by a backslash (the
/// preprocessor splices lines, then replaces comments, before it reads directives, so
/// `#include "a.h" /* note` goes on to the line where the comment closes, and what follows `*/`
/// there is the directive's). A backslash before the line end splices it also with spaces or a
/// carriage return after it (as GCC and Clang take it). `None` where a block comment opened on
/// the directive never closes.
fn directive_last_line(lines: &[&str], first: usize) -> Option<usize> {
    let mut block = false;
    // One logical line: physical lines joined where a backslash ends them.
    let mut logical = String::new();
    for (j, line) in lines.iter().enumerate().skip(first) {
        if let Some(part) = spliced_part(line) {
            logical.push_str(part);
            continue;
        }
        logical.push_str(line);
        let b = std::mem::take(&mut logical).into_bytes();
        let mut quote = None::<u8>;
        let mut k = 0;
        while k < b.len() {
            let next = b.get(k + 1).copied();
            match (block, quote, b[k]) {
                (true, _, b'*') if next == Some(b'/') => {
                    block = false;
                    k += 1;
                }
                (true, ..) => {}
                (_, Some(_), b'\\') => k += 1,
                (_, Some(q), c) if c == q => quote = None,
                (_, Some(_), _) => {}
                (_, None, b'/') if next == Some(b'*') => {
                    block = true;
                    k += 1;
                }
                (_, None, b'/') if next == Some(b'/') => break, // a line comment: to the end
                (_, None, c @ (b'"' | b'\'')) => quote = Some(c),
                _ => {}
            }
            k += 1;
        }
        if !block {
            return Some(j);
        }
    }
    // Spliced into the end of the file: the directive ends there (a comment still open is
    // unterminated).
    (!block).then(|| lines.len().saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A header name in angle brackets is taken as written, `//` and `'` included (they were
    /// read as a comment and a literal, and the include was left to the compiler).
    #[test]
    fn angled_names_with_comment_or_quote_characters_are_inlined() {
        let src = Source::new("#include <it's.h>\n#include <sub//a.h>\nrest\n")
            .include_text("it's.h", "#define QUOTED 1\n")
            .include_text("sub//a.h", "#define SLASHED 2\n");
        let e = src.expand().unwrap();
        assert!(e.text.contains("#define QUOTED 1") && e.text.contains("#define SLASHED 2"), "{}", e.text);
        assert!(!e.text.contains("#include"), "{}", e.text);
        assert!(e.text.contains("rest"), "{}", e.text);
    }
}
