//! Diagnostics, through `tracing` with the crate's `tracing` feature: spans for program builds,
//! events for kernel launches, transfers and the memory pool. Without the feature these macros
//! expand to nothing (no `tracing` code is compiled in), except [`diag!`], whose warnings and
//! errors then go to `log` as they always did.
//!
//! Targets are the module paths (`clarray::runtime::launch`, …), levels: `debug` for builds and
//! the pool, `trace` for each launch and transfer, `warn`/`error` for what a user should see.

/// A `tracing` event (`trace_event!(debug, bytes = n, "message")`) with the `tracing` feature;
/// nothing without it.
macro_rules! trace_event {
    ($level:ident, $($arg:tt)+) => {
        #[cfg(feature = "tracing")]
        ::tracing::$level!($($arg)+);
    };
}

/// A `tracing` span entered until the end of the enclosing block
/// (`trace_span!(DEBUG, "build", bytes = n)`) with the `tracing` feature; nothing without it.
macro_rules! trace_span {
    ($level:ident, $name:literal $($fields:tt)*) => {
        #[cfg(feature = "tracing")]
        let _span = ::tracing::span!(::tracing::Level::$level, $name $($fields)*).entered();
    };
}

/// A warning or error for the user (`diag!(warn, "format {}", x)`): a `tracing` event with the
/// `tracing` feature, a `log` record without it.
macro_rules! diag {
    ($level:ident, $($arg:tt)+) => {{
        #[cfg(feature = "tracing")]
        ::tracing::$level!($($arg)+);
        #[cfg(not(feature = "tracing"))]
        ::log::$level!($($arg)+);
    }};
}
