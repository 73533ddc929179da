//! Integration-style tests: they read `testdata/` and use only the public API.
#![allow(clippy::disallowed_methods)] // tests read files from testdata/

mod parse;
mod serve;
mod smp;
mod diff;
mod ignore;
mod health;
#[cfg(feature = "lua")]
mod lua;
mod support;
mod sync;
