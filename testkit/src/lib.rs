//! What gitops-core's tests, benchmarks and differential oracle share, as one dev-only crate
//! instead of files included across folders by path attributes. Never published; a dev-dependency
//! of the workspace root.
//!
//! - [`transcript`]: the `serve` conversation scripts of `testdata/serve/` (the library's
//!   `serve` tests and the pipe tests of the built binary).
//! - [`workload`]: the deterministic N-resource application the benchmarks and the oracle
//!   measure.
//! - [`testdata`]: reading the benchmarks' inputs from `testdata/`.
//! - [`oracle`]: gitops-core's side of the differential oracle's areas and their comparisons,
//!   shared by the oracle's runner and the replay of its recorded answers.
#![forbid(unsafe_code)]
#![allow(clippy::disallowed_methods)] // a dev kit: it reads testdata/, which the library never does

pub mod oracle;
pub mod testdata;
pub mod transcript;
pub mod workload;
