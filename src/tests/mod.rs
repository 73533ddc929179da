//! Integration-style tests: they read `testdata/` and use only the public API.
#![allow(clippy::disallowed_methods)] // tests read files from testdata/

mod actions;
mod diff;
mod explain;
mod fuzz_replay;
mod health;
mod ignore;
#[cfg(feature = "lua")]
mod lua;
#[cfg(all(feature = "serve", feature = "lua", feature = "jq"))]
mod oracle_replay;
mod parse;
mod preview;
mod properties;
mod reconcile;
mod selector;
#[cfg(feature = "serve")]
mod serve;
mod smp;
pub(crate) mod support;
mod sync;
