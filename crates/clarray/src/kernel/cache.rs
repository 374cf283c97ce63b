//! The one cache of generated kernels: per context, keyed by the kernel's structure (kind,
//! layout class, dtypes, the expression's instructions; never sizes, strides, offsets or scalar
//! values, which are arguments), so a repeated operation costs a hash lookup and no source
//! generation. The program cache below (memory and disk, keyed by the source text) still sees
//! every new source once, when its kernel is first built here.
//!
//! Elementwise kernels are looked up on every evaluation of an expression, so their keys are
//! short lists of small integers looked up by slice (a hit allocates nothing), and the cache of
//! the context a thread used last is found without the context's slot lookup. Other kinds name
//! their structure as text ([`kernel_by_text`]); it becomes words of the same key space.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use smallvec::SmallVec;

use crate::error::Result;
use crate::program::cache::generated_kernel;
use crate::runtime::{Context, Kernel, StoredKernel};

/// A generated kernel's key: its first word is its kind ([`ELEMENTWISE`] or [`TEXT`]), then
/// the words of its structure. Inline for all but long expressions.
pub(crate) type Key = SmallVec<[u32; 32]>;

/// The first word of an elementwise kernel's key.
pub(crate) const ELEMENTWISE: u32 = 0;

/// The first word of a key given as text: then its length in bytes and its bytes, four a word.
const TEXT: u32 = 1;

/// A generated kernel (without its context: the cache is kept in the context's own state,
/// which must not hold the context), its readable key and its source.
type Entry = (StoredKernel, String, Arc<str>);

/// The generated kernels of a context.
#[derive(Default)]
struct Generated {
    // FxHash: the keys are short lists of small integers made by clarray itself, so a fast
    // multiplicative hash is enough and SipHash's cost per lookup is not.
    kernels: Mutex<HashMap<Vec<u32>, Entry, rustc_hash::FxBuildHasher>>,
}

fn generated(ctx: &Context) -> Arc<Generated> {
    thread_local! {
        /// The generated kernels of the context this thread used last, by a `Weak` (no
        /// context is kept alive by it): repeated evaluations skip the context's slot lookup.
        static LAST: RefCell<(u64, Weak<Generated>)> = const { RefCell::new((u64::MAX, Weak::new())) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 == ctx.id() {
            if let Some(g) = last.1.upgrade() {
                return g;
            }
        }
        let g: Arc<Generated> = ctx.slot();
        *last = (ctx.id(), Arc::downgrade(&g));
        g
    })
}

/// The kernel `entry` for `key` in `ctx`: generated with `source` and built on first use only;
/// `name` is its readable key (for [`elementwise_sources`] and the debug log). `key` must
/// determine the source.
pub(crate) fn kernel(
    ctx: &Context,
    key: &[u32],
    entry: &str,
    name: impl FnOnce() -> String,
    source: impl FnOnce() -> String,
) -> Result<Kernel> {
    let g = generated(ctx);
    if let Some((k, _, _)) = g.kernels.lock().unwrap_or_else(|p| p.into_inner()).get(key) {
        return Ok(k.attach(ctx));
    }
    let name = name();
    let src = source();
    diag!(debug, "generated kernel {entry} for {name}:\n{src}");
    if key.first() != Some(&ELEMENTWISE) && std::env::var_os("CLARRAY_DUMP_REDUCE").is_some() {
        eprintln!("{src}");
    }
    // Built without -cl-kernel-arg-info: the arguments are right by construction, and the
    // launch checks only their count and kinds (cheaper for tiny arrays).
    let k = generated_kernel(ctx, &src, entry)?;
    g.kernels.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_vec(), (k.detach(), name, src.into()));
    Ok(k)
}

/// The words of a key given as text.
fn text_key(text: &str) -> Vec<u32> {
    let bytes = text.as_bytes();
    let mut key = Vec::with_capacity(2 + bytes.len().div_ceil(4));
    key.extend([TEXT, bytes.len() as u32]);
    key.extend(bytes.chunks(4).map(|c| {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        u32::from_le_bytes(w)
    }));
    key
}

/// [`kernel`] for a kind whose structure is named by `key` as text (reductions, scans,
/// gathers, masks, sorts, random numbers, user reductions and scans). `key` with `entry`
/// must determine the source; the entry is part of the key, so kinds whose keys happen to
/// read alike stay apart.
pub(crate) fn kernel_by_text(
    ctx: &Context,
    key: String,
    entry: &str,
    source: impl FnOnce() -> String,
) -> Result<Kernel> {
    kernel(ctx, &text_key(&format!("{entry}\0{key}")), entry, || key, source)
}

/// How many distinct elementwise kernels have been generated (and built) in `ctx`.
pub(crate) fn elementwise_count(ctx: &Context) -> usize {
    let g = generated(ctx);
    let n =
        g.kernels.lock().unwrap_or_else(|p| p.into_inner()).keys().filter(|k| k[0] == ELEMENTWISE).count();
    n
}

/// The readable key and source of every elementwise kernel generated in `ctx`, sorted.
pub(crate) fn elementwise_sources(ctx: &Context) -> Vec<(String, Arc<str>)> {
    let g = generated(ctx);
    let map = g.kernels.lock().unwrap_or_else(|p| p.into_inner());
    let mut v: Vec<(String, Arc<str>)> = map
        .iter()
        .filter(|(k, _)| k[0] == ELEMENTWISE)
        .map(|(_, (_, name, src))| (name.clone(), src.clone()))
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keys_differ_where_the_text_does() {
        // Trailing zero bytes are padding: the length word tells "a" from "a\0".
        assert_ne!(text_key("a"), text_key("a\0"));
        assert_ne!(text_key("abcd"), text_key("abce"));
        assert_eq!(text_key("abcde"), text_key("abcde"));
        assert_eq!(text_key("abcde")[0], TEXT);
        assert_ne!(TEXT, ELEMENTWISE);
    }

    /// Every kind shares the one cache: a structure's source is generated and built once, and
    /// the elementwise count and sources see the elementwise kernels only.
    #[test]
    fn one_cache_for_every_kind_generates_each_structure_once() {
        let ctx = Context::new().unwrap_or_else(|e| {
            panic!("this test needs an OpenCL device and found none: {e} (PoCL's CPU device is enough)")
        });
        let src = "__kernel void k(__global int* a) { a[0] = 1; }";
        let calls = std::cell::Cell::new(0);
        let source = || {
            calls.set(calls.get() + 1);
            src.to_string()
        };
        for _ in 0..2 {
            kernel_by_text(&ctx, "test|k".into(), "k", source).unwrap();
        }
        assert_eq!(calls.get(), 1, "a text key's source was generated again");
        // The same text under another entry point is another kernel.
        let built = std::cell::Cell::new(false);
        let k2 = kernel_by_text(&ctx, "test|k".into(), "k2", || {
            built.set(true);
            src.replace("void k(", "void k2(")
        })
        .unwrap();
        assert!(built.get() && k2.name() == "k2", "another entry point with the same key text was a hit");
        assert_eq!(elementwise_count(&ctx), 0);
        for _ in 0..2 {
            kernel(&ctx, &[ELEMENTWISE, 7], "k", || "ew test".into(), source).unwrap();
        }
        assert_eq!(calls.get(), 2, "an elementwise key's source was generated again");
        assert_eq!(elementwise_count(&ctx), 1);
        assert_eq!(elementwise_sources(&ctx), vec![("ew test".to_string(), Arc::from(src))]);
    }
}
