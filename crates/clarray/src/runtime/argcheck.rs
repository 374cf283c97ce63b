//! The checks every launch's arguments pass: a fast test that they fit what each parameter
//! accepts ([`Kernel::args_fit`]), and, when one does not, the message that says which and why
//! ([`Kernel::explain_args`]), with the device's sizes of types clarray cannot size itself,
//! asked once per kernel by a probe program.

use super::argtype::{self, Declared, OBJECT_TYPES, RAW_BYTES};
use super::kernel::{type_shown, AddressSpace, Arg, Kernel, ProbeRun, Probed, PROBE_KERNEL};
use super::program::Program;
use crate::error::{Error, Result};

impl Kernel {
    pub(super) fn arg_error(&self, i: usize, message: String) -> Error {
        let who = match self.inner.args.get(i).and_then(|a| a.name.clone()) {
            Some(n) => format!("argument {i} (`{n}`)"),
            None => format!("argument {i}"),
        };
        Error::KernelArgs { kernel: self.inner.name.clone(), message: format!("{who}: {message}") }
    }

    /// Whether `args` pass every check of [`Kernel::check_args`] (without making messages).
    pub(super) fn args_fit(&self, args: &[Arg<'_>]) -> bool {
        let accepts = &self.inner.accepts;
        let ctx = self.inner.program.context().id();
        args.len() == accepts.len()
            && args.iter().zip(accepts).enumerate().all(|(i, (arg, ok))| match arg {
                Arg::Buffer(b) => ok.buffer && b.context().id() == ctx,
                Arg::Elements(b, rust) => {
                    ok.buffer
                        && b.context().id() == ctx
                        && ok.pointee.is_none_or(|p| {
                            argtype::given(rust).is_none_or(|g| argtype::elements_fit(&p, &g))
                        })
                }
                Arg::Image(im) => ok.image && im.context().id() == ctx,
                Arg::Local(bytes) => ok.local && *bytes != 0,
                Arg::Scalar(bytes, given) => {
                    ok.scalar
                        && match ok.scalar_type {
                            Some(t) => {
                                t.size == bytes.len()
                                    && (*given == RAW_BYTES
                                        || argtype::given(given).is_none_or(|g| t.accepts(&g)))
                            }
                            // Raw bytes for a type clarray cannot size: of the size the device
                            // gives it, once that was asked (else `explain_args` asks).
                            None => *given == RAW_BYTES && self.probed_size(i) == Some(bytes.len()),
                        }
                }
            })
    }

    /// The error for arguments that [`Kernel::args_fit`] refused: the first check that fails.
    /// `probe` runs the probe program that [`Kernel::probed_sizes`] builds, where one is needed.
    pub(super) fn explain_args(&self, args: &[Arg<'_>], probe: ProbeRun) -> Result<()> {
        let want = self.inner.args.len();
        if args.len() != want {
            let sig: Vec<String> = self
                .inner
                .args
                .iter()
                .map(|a| {
                    format!("{} {}", a.type_name.as_deref().unwrap_or("?"), a.name.as_deref().unwrap_or("?"))
                })
                .collect();
            return Err(Error::KernelArgs {
                kernel: self.inner.name.clone(),
                message: format!(
                    "{} arguments were given, but it takes {want}: ({})",
                    args.len(),
                    sig.join(", ")
                ),
            });
        }
        let ctx = self.inner.program.context();
        for (i, (arg, info)) in args.iter().zip(&self.inner.args).enumerate() {
            let ty = self.inner.type_names[i].as_str();
            let shown = type_shown(ty);
            let is_image = ty.starts_with("image");
            match (arg, info.space) {
                (Arg::Buffer(b) | Arg::Elements(b, _), space) => {
                    ctx.check_same(b.context()).map_err(|e| self.arg_error(i, e.to_string()))?;
                    if is_image || matches!(space, Some(AddressSpace::Local | AddressSpace::Private)) {
                        return Err(
                            self.arg_error(i, format!("a buffer was given where the kernel takes {shown}"))
                        );
                    }
                    let pointee = self.inner.accepts[i].pointee;
                    if let (Arg::Elements(_, rust), Some(p)) = (arg, pointee) {
                        if let Some(g) = argtype::given(rust).filter(|g| !argtype::elements_fit(&p, g)) {
                            return Err(self.arg_error(
                                i,
                                format!(
                                    "an array of {rust} ({}) was given where the kernel takes {shown}, \
                                     whose elements are {}; pass an array of the kernel's element \
                                     type, or its bytes as they are (in Rust the array's `.buffer()`; \
                                     in Python a device array's `.data`, a NumPy array's \
                                     `.view(numpy.uint8)`)",
                                    g.describe(),
                                    p.describe()
                                ),
                            ));
                        }
                    }
                }
                (Arg::Image(im), _) => {
                    ctx.check_same(im.context()).map_err(|e| self.arg_error(i, e.to_string()))?;
                    if info.type_name.is_some() && !is_image {
                        return Err(
                            self.arg_error(i, format!("an image was given where the kernel takes {shown}"))
                        );
                    }
                }
                (Arg::Local(bytes), space) => {
                    if space.is_some() && space != Some(AddressSpace::Local) {
                        return Err(self
                            .arg_error(i, format!("local memory was given where the kernel takes {shown}")));
                    }
                    if *bytes == 0 {
                        return Err(self.arg_error(
                            i,
                            "local memory of 0 bytes was given; OpenCL needs at least 1: give \
                             `Arg::Local(n)` with n ≥ 1 bytes"
                                .into(),
                        ));
                    }
                }
                (Arg::Scalar(bytes, rust), space) => {
                    if matches!(
                        space,
                        Some(AddressSpace::Global | AddressSpace::Constant | AddressSpace::Local)
                    ) || is_image
                    {
                        return Err(self.arg_error(i, format!("a scalar ({rust}) was given where the kernel takes {shown}; pass a buffer or array")));
                    }
                    // Handles passed by value: bytes given for them would reach the driver as
                    // an object handle.
                    let base = ty.trim().trim_start_matches("const ").trim();
                    if OBJECT_TYPES.contains(&base) || base.starts_with("pipe") {
                        return Err(self.arg_error(
                            i,
                            format!("a scalar ({rust}) was given where the kernel takes {shown}, an OpenCL object that clarray cannot pass; declare the sampler inside the kernel (`const sampler_t s = CLK_…;`)"),
                        ));
                    }
                    match (&self.inner.types[i], *rust == RAW_BYTES) {
                        (Declared::Handle(written), _) => {
                            return Err(self.arg_error(
                                i,
                                format!(
                                    "a scalar ({rust}) was given for `{written}`, a pointer, image or OpenCL \
                                     object parameter (read from the program's source: the driver keeps no \
                                     argument information); pass a buffer, array or image"
                                ),
                            ));
                        }
                        (Declared::Known(t), raw) => {
                            if t.size != bytes.len() {
                                return Err(self.arg_error(
                                    i,
                                    format!(
                                        "{} of {} bytes was given where the kernel takes {shown} of {} bytes ({})",
                                        if raw { "raw bytes".to_string() } else { format!("a {rust}") },
                                        bytes.len(),
                                        t.size,
                                        t.describe()
                                    ),
                                ));
                            }
                            if let Some(g) = argtype::given(rust).filter(|g| !raw && !t.accepts(g)) {
                                return Err(self.arg_error(
                                    i,
                                    format!(
                                        "a {rust} ({}) was given where the kernel takes {shown} ({}); pass a \
                                         value of the declared kind",
                                        g.describe(),
                                        t.describe()
                                    ),
                                ));
                            }
                        }
                        (Declared::Unknown(why), false) => {
                            return Err(self.arg_error(
                                i,
                                format!(
                                    "a {rust} of {} bytes was given for {shown}, whose size \
                                     clarray cannot know ({why}); pass the value's bytes explicitly with \
                                     clarray::program::Bytes (e.g. Bytes::of(&value) of a #[repr(C)] type laid \
                                     out as the kernel's)",
                                    bytes.len(),
                                ),
                            ));
                        }
                        (Declared::Unknown(_), true) => {
                            match self.probed_sizes(probe)?.get(i).cloned().flatten() {
                                Some(Ok(n)) if n == bytes.len() => {}
                                Some(Ok(n)) => {
                                    return Err(self.arg_error(
                                        i,
                                        format!(
                                            "raw bytes of {} bytes were given where the kernel takes {shown} \
                                             of {n} bytes (the size the device gives it); pass exactly {n} \
                                             bytes, laid out as the kernel's type (a #[repr(C)] type with \
                                             the same fields and padding)",
                                            bytes.len()
                                        ),
                                    ));
                                }
                                Some(Err(why)) => {
                                    return Err(self.arg_error(
                                        i,
                                        format!(
                                            "raw bytes of {} bytes were given for a parameter of type \
                                             {shown}, whose size clarray could not learn: {why}",
                                            bytes.len()
                                        ),
                                    ));
                                }
                                None => {
                                    return Err(self.arg_error(
                                        i,
                                        format!("raw bytes were given for {shown}, whose size is unknown"),
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The device's size of parameter `i`'s type, where the probe has learnt it already.
    fn probed_size(&self, i: usize) -> Option<usize> {
        match self.inner.sizes.get()?.get(i)? {
            Some(Ok(n)) => Some(*n),
            _ => None,
        }
    }

    /// The sizes of the parameters whose type clarray cannot size itself (structs, unions,
    /// enums, types of macros), as the device gives them: drivers copy as many bytes as
    /// `clSetKernelArg` is told but the kernel reads its type's size, so raw bytes of any other
    /// length would make it read past them. Asked once per kernel, on the first launch that
    /// passes raw bytes to such a parameter, by a kernel appended to the program's source that
    /// writes `sizeof` of each type; a type the probe cannot name (not declared at file scope, a
    /// program without its source) is kept with why. An OpenCL failure while running the probe
    /// is returned and not kept, so a later launch asks again.
    fn probed_sizes(&self, run: ProbeRun) -> Result<&[Probed]> {
        if let Some(v) = self.inner.sizes.get() {
            return Ok(v);
        }
        let wanted: Vec<(usize, &str)> = self
            .inner
            .types
            .iter()
            .zip(&self.inner.operands)
            .enumerate()
            .filter_map(|(i, (d, op))| match (d, op) {
                (Declared::Unknown(_), Some(op)) => Some((i, op.as_str())),
                _ => None,
            })
            .collect();
        let program = &self.inner.program.inner;
        let unnamed = "its type could not be read (the driver keeps no argument information and the \
                       kernel's signature could not be read from the source); declare the parameter \
                       with an OpenCL C scalar or vector type or a typedef of one";
        let mut sizes: Vec<Probed> = self
            .inner
            .types
            .iter()
            .map(|d| matches!(d, Declared::Unknown(_)).then(|| Err(unnamed.to_string())))
            .collect();
        match (&program.source, wanted.is_empty()) {
            (_, true) => {}
            (None, false) => {
                for &(i, _) in &wanted {
                    sizes[i] = Some(Err(
                        "the program was loaded from a binary without its source, so clarray cannot ask \
                         the device; build it from source (or load it with \
                         Program::from_binary_with_source), or declare the parameter with an OpenCL C \
                         scalar or vector type or a typedef of one"
                            .into(),
                    ));
                }
            }
            (Some(source), false) => {
                let body: Vec<String> = wanted
                    .iter()
                    .enumerate()
                    .map(|(k, (_, op))| format!("    clarray_sizeof_out[{k}] = (ulong)sizeof({op});\n"))
                    .collect();
                let text = format!(
                    "{source}\n__kernel void {PROBE_KERNEL}(__global ulong* clarray_sizeof_out) {{\n{}}}\n",
                    body.concat()
                );
                match Program::build(&program.ctx, &text, &program.options) {
                    Ok(p) => {
                        let got = run(&p, wanted.len())?;
                        for (&(i, op), n) in wanted.iter().zip(got) {
                            sizes[i] = Some(match usize::try_from(n) {
                                Ok(n) if n > 0 => Ok(n),
                                _ => Err(format!("the device reported {n} bytes for `sizeof({op})`")),
                            });
                        }
                    }
                    Err(Error::Build(f)) => {
                        let first = f
                            .log
                            .lines()
                            .find(|l| l.contains("error"))
                            .unwrap_or("")
                            .trim()
                            .chars()
                            .take(300)
                            .collect::<String>();
                        for &(i, op) in &wanted {
                            sizes[i] = Some(Err(format!(
                                "a probe kernel writing `sizeof({op})`, appended to the program's source, \
                                 did not build ({first}); declare the type at file scope of the \
                                 program's source, or declare the parameter with an OpenCL C scalar or \
                                 vector type or a typedef of one"
                            )));
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        // Two threads may both have probed; the first result is kept (they are the same).
        Ok(self.inner.sizes.get_or_init(|| sizes))
    }
}
