//! Compile-fail tests (trybuild): the borrow checker refuses every way a non-blocking copy
//! could touch host memory that is being read, freed or reused. Each file in
//! `tests/compile_fail/` must fail to compile with the borrow or type error in its `.stderr`.
//! Regenerate those with `TRYBUILD=overwrite cargo test -p clarray --test compile_fail` after
//! a compiler upgrade, and read them: each must fail for the reason its file states.

#[test]
fn non_blocking_copies_keep_host_memory_borrowed() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
