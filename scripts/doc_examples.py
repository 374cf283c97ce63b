#!/usr/bin/env python3
"""Lists the public items of the library crates whose docs show no example and link to none.

Usage: scripts/doc_examples.py [--check] [--quiet] [--crate NAME ...] [--features LIST] [--json FILE ...]

It reads rustdoc's JSON output, which the stable toolchain writes with RUSTC_BOOTSTRAP=1:
`cargo rustdoc -p <crate> --lib -- -Z unstable-options --output-format json` (this script runs
that for each crate, clarray and induction by default, unless --json names the files; with
--features, default `clarray/serde,clarray/tracing`, so that feature-gated items count too).

The items that count are those reachable from the crate's root through public paths, as rustdoc
documents them (`#[doc(hidden)]` items and private ones are not in its output):
  - every module, struct, enum, union, trait, function, type alias, constant, static and macro
    that the root module or a public module lists, or re-exports with `pub use` (also a glob);
  - their children: struct and variant fields, enum variants, the associated items of a trait,
    and the public items of the impl blocks written for a struct, enum or union (inherent impls
    and trait impls; not derived, blanket or auto-trait impls, which the crate does not write).
Each item is counted once, however many paths reach it; its module is that of the shortest path
on which a module lists it itself (a re-export's path only when no such path exists).

An item is covered when:
  1. its own docs hold a Rust code block (a ``` or ~~~ fence whose info string rustdoc reads as
     Rust: empty, `rust`, or only doctest attributes such as `no_run`; not `ignore`, `text`,
     `c`, ...), or
  2. its docs hold an intra-doc link (rustdoc's `links` table) to an item of the same crate whose
     own docs hold such a code block (one step: a link to an item that only links is not enough),
     or
  3. it is a field, an enum variant, an associated const or type, or an item of a trait impl,
     and the item it belongs to (the struct, variant, enum, trait or implementing type) is covered.
Trait methods (declared in the trait) and inherent methods need 1 or 2 themselves.

It prints, per crate, the number of items and of covered items per module, then the uncovered
items with the file and line of their declaration (--quiet: the totals and those items only).
--check exits 1 if any item is uncovered.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

# The fence attributes rustdoc accepts on a Rust code block (a block with any other word in its
# info string is another language, unless the word `rust` is there too).
RUST_ATTRS = {
    "rust",
    "no_run",
    "should_panic",
    "compile_fail",
    "test_harness",
    "standalone_crate",
    "ignore",
}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*(.*?)\s*$")

# Kinds that are items of a module (rustdoc JSON's `inner` keys).
MODULE_LEVEL = {
    "module",
    "struct",
    "enum",
    "union",
    "trait",
    "trait_alias",
    "function",
    "type_alias",
    "constant",
    "static",
    "macro",
    "proc_macro",
}
# Kinds that are covered when the item they belong to is.
INHERITS = {"struct_field", "variant", "assoc_const", "assoc_type"}


def is_rust_fence(info: str) -> bool:
    """True if a fence's info string makes the block a Rust code block that rustdoc tests
    (or builds, for no_run): `ignore` blocks are not examples that anyone checks."""
    words = [w for w in re.split(r"[\s,]+", info.strip()) if w]
    words = [w for w in words if not w.startswith("{") and not w.startswith(".")]
    if any(w == "ignore" or w.startswith("ignore-") for w in words):
        return False
    unknown = [w for w in words if w not in RUST_ATTRS and not re.fullmatch(r"edition\d+", w)]
    return not unknown or "rust" in words


def has_example(docs: str | None) -> bool:
    """True if markdown `docs` holds a fenced Rust code block (see is_rust_fence)."""
    if not docs:
        return False
    opened = None  # the fence that opened the current block, if inside one
    for line in docs.splitlines():
        m = FENCE.match(line)
        if not m:
            continue
        fence, info = m.group(1), m.group(2)
        if opened is None:
            if is_rust_fence(info):
                return True
            opened = fence
        elif fence[0] == opened[0] and len(fence) >= len(opened) and not info:
            opened = None
    return False


def kind_of(item: dict) -> str:
    return next(iter(item["inner"]))


def is_hidden(item: dict) -> bool:
    return any("hidden" in json.dumps(a) and "doc" in json.dumps(a) for a in item.get("attrs", []))


def is_derived(item: dict) -> bool:
    return any("automatically_derived" in json.dumps(a) for a in item.get("attrs", []))


@dataclass
class Entry:
    """One counted item: its path, kind, the module it is listed under and its parent."""

    id: int
    path: list[str]
    kind: str
    module: str
    parent: int | None = None  # the item it inherits coverage from (INHERITS, trait impls)
    owner: int | None = None  # the type or trait whose impl or declaration holds a method
    covered: bool = False
    why: str = ""
    location: str = ""
    children: list[int] = field(default_factory=list)


def walk(krate: dict) -> dict[int, Entry]:
    """The items of `krate` (rustdoc JSON) reachable from its root, with their best paths."""
    index = krate["index"]

    def get(i):
        return index.get(str(i)) if i is not None else None

    # 1. Module-level items: every (path, listed directly?) a public module gives them.
    best: dict[int, tuple[bool, int, list[str]]] = {}  # id -> (reexport?, len, path)
    seen_modules: set[int] = set()
    queue: list[tuple[int, list[str]]] = [(krate["root"], [get(krate["root"])["name"]])]
    best[krate["root"]] = (False, 1, queue[0][1])

    def offer(i: int, path: list[str], reexport: bool) -> None:
        key = (reexport, len(path), path)
        if i not in best or key < best[i]:
            best[i] = key

    while queue:
        mod_id, mod_path = queue.pop(0)
        if mod_id in seen_modules:
            continue
        seen_modules.add(mod_id)
        members: list[tuple[int, str, bool]] = []  # (id, name, reexport)
        for child in get(mod_id)["inner"]["module"]["items"]:
            it = get(child)
            if it is None or is_hidden(it):
                continue
            k = kind_of(it)
            if k == "use":
                use = it["inner"]["use"]
                target = get(use["id"])
                if target is None or target.get("crate_id") != 0 or is_hidden(target):
                    continue  # another crate's item, or not documented
                if use["is_glob"]:
                    if kind_of(target) == "module":
                        for g in target["inner"]["module"]["items"]:
                            gi = get(g)
                            if gi is not None and kind_of(gi) in MODULE_LEVEL and not is_hidden(gi):
                                members.append((g, gi["name"], True))
                    continue
                members.append((use["id"], use["name"], True))
            elif k in MODULE_LEVEL:
                members.append((child, it["name"], False))
        for i, name, reexport in members:
            path = mod_path + [name]
            offer(i, path, reexport)
            if kind_of(get(i)) == "module":
                queue.append((i, path))

    entries: dict[int, Entry] = {}

    def location(it: dict) -> str:
        span = it.get("span")
        return f"{span['filename']}:{span['begin'][0]}" if span else "?"

    def add(i: int, path: list[str], module: str, parent: int | None, owner=None) -> Entry | None:
        it = get(i)
        if it is None or i in entries or is_hidden(it):
            return None
        e = Entry(i, path, kind_of(it), module, parent, owner, location=location(it))
        entries[i] = e
        if parent is not None and parent in entries:
            entries[parent].children.append(i)
        return e

    def add_fields(owner: int, inner_kind: dict, path: list[str], module: str) -> None:
        kind = inner_kind.get("kind")
        if isinstance(kind, dict) and "plain" in kind:
            ids = kind["plain"]["fields"]
        elif isinstance(kind, dict) and "struct" in kind:
            ids = kind["struct"]["fields"]
        elif isinstance(kind, dict) and "tuple" in kind:
            ids = [f for f in kind["tuple"] if f is not None]
        else:
            ids = inner_kind.get("fields", []) if isinstance(inner_kind.get("fields"), list) else []
        for f in ids:
            fi = get(f)
            if fi is not None:
                add(f, path + [fi["name"]], module, owner)

    def add_impls(owner: int, impl_ids: list[int], path: list[str], module: str) -> None:
        for imp in impl_ids:
            it = get(imp)
            if it is None or is_hidden(it) or is_derived(it):
                continue
            im = it["inner"]["impl"]
            if im.get("is_synthetic") or im.get("blanket_impl") is not None or im.get("is_negative"):
                continue
            trait = im.get("trait")
            for m in im["items"]:
                mi = get(m)
                if mi is None or is_hidden(mi):
                    continue
                k = kind_of(mi)
                if trait is None:
                    if mi.get("visibility") != "public":
                        continue
                    add(m, path + [mi["name"]], module, owner if k in INHERITS else None, owner)
                else:
                    add(m, path + [f"{mi['name']} (impl {trait['path']})"], module, owner, owner)

    # 2. The items and their children, each under its best path.
    for i, (_, _, path) in sorted(best.items(), key=lambda kv: (kv[1][1], kv[1][2])):
        it = get(i)
        k = kind_of(it)
        module = "::".join(path if k == "module" else path[:-1])
        if add(i, path, module, None) is None:
            continue
        inner = it["inner"][k]
        if k in ("struct", "union"):
            add_fields(i, inner, path, module)
            add_impls(i, inner.get("impls", []), path, module)
        elif k == "enum":
            for v in inner["variants"]:
                vi = get(v)
                if vi is None or is_hidden(vi):
                    continue
                if add(v, path + [vi["name"]], module, i) is not None:
                    add_fields(v, vi["inner"]["variant"], path + [vi["name"]], module)
            add_impls(i, inner.get("impls", []), path, module)
        elif k == "trait":
            for m in inner["items"]:
                mi = get(m)
                if mi is not None and not is_hidden(mi):
                    add(m, path + [mi["name"]], module, i if kind_of(mi) in INHERITS else None, i)
    return entries


def cover(krate: dict, entries: dict[int, Entry]) -> None:
    """Sets `covered` and `why` on every entry (rules 1-3 of the module docs)."""
    index = krate["index"]

    def own_example(i) -> bool:
        it = index.get(str(i))
        return it is not None and it.get("crate_id") == 0 and has_example(it.get("docs"))

    for e in entries.values():
        it = index[str(e.id)]
        if has_example(it.get("docs")):
            e.covered, e.why = True, "example"
            continue
        for text, target in (it.get("links") or {}).items():
            if target != e.id and own_example(target):
                e.covered, e.why = True, f"link {text}"
                break

    def inherited(e: Entry, depth=0) -> bool:
        if e.covered:
            return True
        if e.parent is None or e.parent not in entries or depth > 8:
            return False
        return inherited(entries[e.parent], depth + 1)

    for e in entries.values():
        if not e.covered and inherited(e):
            e.covered, e.why = True, "parent"


def rustdoc_json(crate: str, features: list[str]) -> dict:
    """Runs rustdoc's JSON output for `crate` and returns it parsed.

    `features` (`package/feature`) go to the crate and to the workspace crates it depends on;
    given as `cargo doc` was, the JSON build reuses that build's checked dependencies.
    """
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    pkg = next(p for p in meta["packages"] if p["name"] == crate)
    known = {crate} | {d["name"] for d in pkg["dependencies"]}
    own = [f for f in features if f.split("/", 1)[0] in known]
    cmd = ["cargo", "rustdoc", "-q", "-p", crate, "--lib"]
    if own:
        cmd += ["--features", ",".join(own)]
    cmd += ["--", "-Z", "unstable-options", "--output-format", "json"]
    # RUSTC_BOOTSTRAP reaches rustdoc alone, through a wrapper: set for cargo, it would also
    # reach the build scripts that probe the compiler (proc-macro2, serde, …), which rerun when
    # it changes, and the next ordinary cargo command would rebuild everything above them.
    wrapper = os.path.join(meta["target_directory"], "rustdoc-unstable.sh")
    os.makedirs(meta["target_directory"], exist_ok=True)
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec "$CLARRAY_RUSTDOC" "$@"\n')
    os.chmod(wrapper, 0o755)
    env = dict(os.environ, RUSTDOC=wrapper, CLARRAY_RUSTDOC=os.environ.get("RUSTDOC", "rustdoc"))
    env.pop("RUSTDOCFLAGS", None)  # `-D warnings` belongs to the HTML build (same docs)
    subprocess.run(cmd, check=True, env=env)
    path = os.path.join(meta["target_directory"], "doc", crate.replace("-", "_") + ".json")
    with open(path) as f:
        return json.load(f)


def report(name: str, entries: dict[int, Entry], quiet=False, out=sys.stdout) -> int:
    """Prints the per-module table (not when `quiet`) and the uncovered items; returns how many
    are uncovered."""
    modules: dict[str, list[Entry]] = {}
    for e in entries.values():
        modules.setdefault(e.module, []).append(e)
    total = len(entries)
    covered = sum(e.covered for e in entries.values())
    print(f"{name}: {covered} of {total} public items covered, {total - covered} not", file=out)
    if not quiet:
        print(f"  {'module':<40} {'items':>6} {'covered':>8} {'not':>5}", file=out)
    for m in sorted(modules) if not quiet else []:
        es = modules[m]
        c = sum(e.covered for e in es)
        print(f"  {m:<40} {len(es):>6} {c:>8} {len(es) - c:>5}", file=out)
    missing = sorted((e for e in entries.values() if not e.covered), key=lambda e: e.path)
    if missing:
        print(f"{name}: not covered (no example, no link to one):", file=out)
        for e in missing:
            print(f"  {'::'.join(e.path)} ({e.kind}) {e.location}", file=out)
    return len(missing)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if any item is not covered")
    ap.add_argument("--quiet", action="store_true", help="no table per module")
    ap.add_argument("--crate", action="append", help="crate to check (default: clarray, induction)")
    ap.add_argument(
        "--features",
        default="clarray/serde,clarray/tracing",
        help="features as package/feature, comma-separated, as `cargo doc` was given them",
    )
    ap.add_argument("--json", action="append", help="read this rustdoc JSON file instead of building")
    args = ap.parse_args(argv)
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    features = [f for f in args.features.split(",") if f]
    krates = []
    if args.json:
        for path in args.json:
            with open(path) as f:
                krates.append(json.load(f))
    else:
        for crate in args.crate or ["clarray", "induction"]:
            krates.append(rustdoc_json(crate, features))
    missing = 0
    for krate in krates:
        entries = walk(krate)
        cover(krate, entries)
        missing += report(krate["index"][str(krate["root"])]["name"], entries, args.quiet)
    return 1 if args.check and missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
