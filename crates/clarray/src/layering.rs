//! The layering rules, checked on the source text: each layer of the table in `lib.rs` uses only
//! the layers above it, and the files of `runtime/` and `program/` form no cycle — each uses
//! only the files before it in the order stated here. A new file must be placed in that order.
//! `unsafe` code and the `opencl3` binding appear in `src/runtime/` alone (tests included).
//!
//! Only code counts: comments (links in docs may point anywhere) and everything from a file's
//! `#[cfg(test)]` on (tests may use the whole crate) are left out.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The files of `runtime/`, lowest first.
const RUNTIME: &[&str] = &[
    "status",
    "argtype",
    "probe",
    "device",
    "record",
    "context",
    "event",
    "track",
    "buffer",
    "buffer_io",
    "rect",
    "image",
    "image_copy",
    "transfer",
    "scope",
    "pinned",
    "program",
    "kernel",
    "argcheck",
    "args",
    "dims",
    "launch",
];

/// The files of `program/`, lowest first.
const PROGRAM: &[&str] = &["defines", "constants", "source", "build", "disk", "cache"];

/// The layers, lowest first, as `lib.rs`'s table must list them.
const LAYERS: &[&str] =
    &["runtime", "memory", "program", "runner", "profile", "kernel", "array", "reduce", "random", "kernels"];

/// What only `src/runtime/` may write: `unsafe` code and the binding. Spelled in two parts so
/// that this file, which is checked too, does not name them.
const RUNTIME_ONLY: [&str; 2] = [concat!("un", "safe"), concat!("open", "cl3")];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A file's code: no comments, nothing from `#[cfg(test)]` on.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty()).map_or("", |l| l.trim());
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    // `crate::{a::X, b}` is written out as `crate::a::X crate::b`, so each path is seen alone.
    let mut spelled = String::new();
    for (i, _) in out.match_indices("crate::{") {
        let mut depth = 0;
        let mut item = String::new();
        for c in out[i + "crate::".len()..].chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 || (depth == 1 && c == ',') {
                spelled.push_str(&format!(" crate::{} ", item.trim()));
                item.clear();
                if depth == 0 {
                    break;
                }
            } else if !(depth == 1 && c == '{') {
                item.push(c);
            }
        }
    }
    out + &spelled
}

/// Whether `text` names `path` as a path prefix: `path` followed by `::` or by a character that
/// cannot continue an identifier.
fn names(text: &str, path: &str) -> bool {
    text.match_indices(path).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + path.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Whether `text` has `word` as a whole word (not part of a longer identifier such as
/// `unsafe_code`).
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// The words of [`RUNTIME_ONLY`] that `path` uses outside comments, its tests included.
fn runtime_only_words(path: &Path) -> Vec<&'static str> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let code: String =
        text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    RUNTIME_ONLY.into_iter().filter(|w| has_word(&code, w)).collect()
}

/// The sibling files that `code` uses: `super::name` paths, and names in `use super::{…}` groups.
fn siblings(code: &str, files: &[&str]) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for f in files {
        if names(code, &format!("super::{f}")) {
            used.insert(f.to_string());
        }
    }
    for (i, _) in code.match_indices("super::{") {
        let group = &code[i + "super::{".len()..];
        let group = &group[..group.find('}').unwrap_or(group.len())];
        for item in group.split(',') {
            let head = item.trim().split("::").next().unwrap_or("").trim();
            if files.contains(&head) {
                used.insert(head.to_string());
            }
        }
    }
    used
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rs_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every file of `src/<dir>/` other than `mod.rs` is in `order` and uses only files before it.
fn check_files(dir: &str, order: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for path in rs_files(&src().join(dir)) {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if stem == "mod" {
            continue;
        }
        let Some(at) = order.iter().position(|f| *f == stem) else {
            bad.push(format!("{dir}/{stem}.rs is not in the file order of layering.rs; add it there"));
            continue;
        };
        let code = code(&path);
        for used in siblings(&code, order) {
            let rank = order.iter().position(|f| *f == used).unwrap();
            if rank >= at {
                bad.push(format!(
                    "{dir}/{stem}.rs uses {dir}/{used}.rs, which comes after it (order: {order:?})"
                ));
            }
        }
        // Through the module's re-exports the file would be hidden from the check above.
        if names(&code, &format!("crate::{dir}")) {
            bad.push(format!("{dir}/{stem}.rs names crate::{dir}; use super::FILE paths inside {dir}/"));
        }
    }
    bad
}

#[test]
fn runtime_files_form_no_cycle() {
    let bad = check_files("runtime", RUNTIME);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn program_files_form_no_cycle() {
    let bad = check_files("program", PROGRAM);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn lib_table_lists_the_layers_in_order() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let listed: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! | "))
        .filter_map(|row| row.split(" | ").nth(1))
        .filter_map(|cell| cell.split('`').nth(1).map(str::to_string))
        .collect();
    assert_eq!(listed, LAYERS, "lib.rs's layer table and layering.rs's LAYERS differ");
}

#[test]
fn no_layer_uses_a_higher_layer() {
    let lib = code(&src().join("lib.rs"));
    let mut bad = Vec::new();
    for (at, layer) in LAYERS.iter().enumerate() {
        let higher = &LAYERS[at + 1..];
        // The crate root's re-exports of a higher layer (`crate::Array`) count as that layer.
        let mut forbidden: Vec<String> = higher.iter().map(|m| format!("crate::{m}")).collect();
        for line in lib.lines().filter_map(|l| l.trim().strip_prefix("pub use ")) {
            let Some((module, items)) = line.split_once("::") else { continue };
            if higher.contains(&module) {
                let items = items.trim_end_matches(';').trim_matches(|c| c == '{' || c == '}');
                forbidden.extend(items.split(',').map(|i| format!("crate::{}", i.trim())));
            }
        }
        forbidden.push("crate::prelude".into());
        let dir = src().join(layer);
        let files = if dir.is_dir() { rs_files(&dir) } else { vec![src().join(format!("{layer}.rs"))] };
        for path in files {
            let code = code(&path);
            for f in &forbidden {
                if names(&code, f) {
                    bad.push(format!("{} (layer {layer}) uses {f}, a higher layer", path.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn unsafe_code_and_opencl3_stay_in_runtime() {
    let runtime = src().join("runtime");
    let mut bad = Vec::new();
    for path in rs_files(&src()).into_iter().filter(|p| !p.starts_with(&runtime)) {
        for word in runtime_only_words(&path) {
            bad.push(format!(
                "{} uses `{word}`, which only src/runtime/ may: add a safe function to runtime/ and \
                 call that",
                path.display()
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_checks_see_a_back_edge() {
    // The checks above pass only if they can fail: a use of a later file or group entry is seen.
    assert!(siblings("use super::buffer::Buffer;", RUNTIME).contains("buffer"));
    assert!(siblings("use super::{event::Event, track};", RUNTIME).contains("track"));
    assert!(siblings("use super::*;\nsuper::eventful", RUNTIME).is_empty());
    assert!(names("x = crate::array::Array::new", "crate::array"));
    assert!(!names("crate::arrays", "crate::array"));
    let dir = std::env::temp_dir().join(format!("clarray-layering-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("f.rs");
    fs::write(
        &file,
        "use crate::{error::Error, reduce::{sum, api}};\n#[cfg(test)]\nmod tests { use crate::kernels; }\n",
    )
    .unwrap();
    let seen = code(&file);
    fs::remove_dir_all(&dir).ok();
    assert!(names(&seen, "crate::reduce") && names(&seen, "crate::error"), "{seen}");
    assert!(!names(&seen, "crate::kernels"), "{seen}");
    let (unsafe_, binding) = (RUNTIME_ONLY[0], RUNTIME_ONLY[1]);
    assert!(has_word(&format!("let x = {unsafe_} {{ f() }};"), unsafe_));
    assert!(has_word(&format!("use ::{binding}::types::cl_int;"), binding));
    assert!(!has_word(&format!("#![deny({unsafe_}_code)]"), unsafe_));
}
