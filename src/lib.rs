//! # gitops-core
//!
//! Argo CD's decisions as a library: Kubernetes objects in, diffs, health and sync plans out.
//!
//! The crate does no I/O. It reads no files, no clock, no environment and no network: a host
//! (a controller, a CLI, a CI check) fetches the objects, passes them in with the time, and
//! carries out what it gets back. The same input gives the same bytes out.
//!
//! ```text
//!   Git manifests ─┐                      ┌─> DiffResult / AppDiff   (what differs, sync status)
//!   live objects ──┼─> gitops-core ───────┼─> HealthResult / AppHealth
//!   Application ───┤   (pure functions)   └─> Plan / step actions  (what to apply, in order)
//!   argocd-cm ─────┘
//! ```
//!
//! ## Scope
//!
//! The reference is Argo CD 3.x and its gitops-engine: an Application spec, an `argocd-cm`
//! and Lua health scripts written for Argo CD give the same answers here. Where this crate
//! differs, the difference is listed in `testdata/SKIPPED.md` and in the README.
//!
//! ## Errors and panics
//!
//! Bad input is an error, never a panic: every error names the object, the rule or script,
//! and the RFC 6901 pointer of the field. A panic is a bug.
//!
//! ## Feature flags
//!
//! - `lua` (default): Lua health scripts and resource action scripts, on a vendored LuaJIT with
//!   the JIT off. Needs a C compiler. The built-in resource actions need no Lua.
//! - `jq` (default): jq path expressions in `ignoreDifferences`, on jaq. Pure Rust.
//! - `cli` (default): the `gitops-core` command-line tool; turns on `serve`.
//! - `serve`: the JSON-lines protocol of `gitops-core serve` (module `protocol`) and its JSON
//!   Schema; brings in `schemars` and `serde_path_to_error`.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

pub mod actions;
pub mod config;
pub mod diff;
// The fuzz targets' invariants panic by design: compiled only for the library's tests and for
// `fuzz/` (the dev-only `fuzzing` feature), never into a build that ships.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod glob;
pub mod health;
pub mod ignore;
mod json;
mod managed_fields;
pub mod object;
pub mod orphans;
pub mod ownership;
pub mod preview;
pub mod project;
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub mod protocol;
pub mod reconcile;
pub mod schema;
pub mod script;
mod selector;
pub mod sync;
pub mod vocabulary;

#[cfg(test)]
mod tests;

pub use config::{
    ActionDefinition, Application, ConfigError, IgnoreDifferences, ResourceActions,
    ResourceOverride, Settings,
};
pub use glob::{Glob, glob_match};
pub use health::{HealthResult, HealthStatus};
pub use object::{ObjectRef, ParseError, Scope, Scopes, parse_manifests};
