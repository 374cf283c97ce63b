//! Building a program from its expanded source: build options whose files the cache key cannot
//! cover are refused, and a failed build's log and excerpt are mapped back to the files and
//! lines the errors are in (the expanded text's `#line` directives say where each line came from).

use crate::error::{Error, Result};
use crate::runtime::{Context, Program};

use super::source::MAIN_LABEL;

/// Build options that make the driver read files clarray does not see (and so cannot put in the
/// cache key): include directories, forced includes and macro files.
const FILE_OPTIONS: [&str; 7] =
    ["-I", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-iprefix"];

/// Refuses options whose files the cache key cannot cover.
pub(crate) fn check_options(options: &str) -> Result<()> {
    for o in options.split_whitespace() {
        if let Some(f) = FILE_OPTIONS.iter().find(|f| o.starts_with(*f)) {
            return Err(Error::Value {
                name: "options",
                value: o.to_string(),
                message: format!(
                    "the build option `{o}` makes the OpenCL driver read headers that clarray's program \
                 cache cannot see, so a changed header would not rebuild the program; instead of `{f}` \
                 add the directory with Source::include_dir(…) and #include the header: clarray inlines \
                 it, and its text is part of the cache key"
                ),
            });
        }
    }
    Ok(())
}

/// Builds from source; a build error's excerpt shows the lines in the files they are in.
pub(crate) fn build(
    ctx: &Context,
    source: &str,
    options: &str,
    files: &[(String, String)],
) -> Result<Program> {
    Program::build(ctx, source, options).map_err(|e| match e {
        Error::Build(mut failure) => {
            failure.log = translate_log(source, files, &failure.log);
            failure.excerpt = excerpt(files, &failure.log);
            Error::Build(failure)
        }
        other => other,
    })
}

/// Where each line of an expanded source comes from, read off the `#line` directives that
/// [`Source::expand`](super::Source::expand) wrote: entry `k` is the `(label, line)` of expanded
/// line `k + 1`.
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
