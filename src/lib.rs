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
//! ## The public face
//!
//! Every public item has exactly one path, `gitops_core::<area>::<Item>`:
//!
//! - The crate root holds only the areas, one public module per concern (`config`, `object`,
//!   `diff`, `health`, `sync`, ...). It re-exports no item.
//! - An area's own files are private modules; the area re-exports, by name, the items that
//!   make its face (`pub use` at the top of its `mod.rs`). No glob re-exports between areas.
//! - Where a host needs the pieces a main call is made of, they are in one public submodule of
//!   the area, `<area>::parts` (as `regex-automata` is to `regex`): `health::parts` holds the
//!   script seam and the built-in rules one by one. No other submodule is public.
//! - Public signatures name only std, `serde`, `serde_json` and this crate's types: the
//!   script engines (mlua, jaq), the time library, the diff library and the patch library stay
//!   private, so they can change without a breaking release. (With `serve`, the protocol's
//!   types also implement `schemars::JsonSchema`, from which its JSON Schema is derived.)
//!
//! `.ci/public_face.py` checks the rules on rustdoc's JSON in CI and prints the count of public
//! items; `unreachable_pub` flags a `pub` item no path reaches.
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
#![warn(unreachable_pub)]

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
