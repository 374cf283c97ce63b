//! Compile-fail tests of clarray (in `tests/`): nothing here. They live in a crate of their own
//! so that trybuild, which checks every dependency and dev-dependency of the crate that runs it
//! again in a project of its own, checks clarray alone, not clarray's dev-dependencies as well.
