//! Compile-fail tests (trybuild): the borrow checker refuses every way a non-blocking copy
//! could touch host memory that is being read, freed or reused. Each file in
//! `tests/compile_fail/` must fail to compile with the borrow or type error in its `.stderr`.
//! Regenerate those with `TRYBUILD=overwrite cargo test -p clarray-compile-tests` after a
//! compiler upgrade, and read them: each must fail for the reason its file states.
//! (This crate depends on clarray alone: trybuild checks every dependency of the crate that
//! runs it again, from nothing, in a project of its own.)

#[test]
fn non_blocking_copies_keep_host_memory_borrowed() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
