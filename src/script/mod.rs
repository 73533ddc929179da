//! Sandboxed script engines: Lua health scripts (`lua` feature) and jq path expressions
//! (`jq` feature), with deterministic limits.
//!
//! # Lua
//! [`LuaEngine`] runs Argo CD `health.lua` scripts unchanged on a vendored LuaJIT with the JIT
//! off (Lua 5.1 plus `goto`, as gopher-lua). The script sees the object as the global `obj`
//! and returns a table with `status`, `message` and optionally `deletionMessage`. What a
//! script can reach is listed on [`LuaEngine`]; the limits are in [`ScriptLimits`].
//! ## Untrusted scripts
//! Scripts come from `argocd-cm` and from directories users maintain, so they are treated as
//! hostile. A script cannot read files, the environment, the clock (other than the `now` the
//! host passes) or the network, cannot load binary chunks, and cannot change what the next
//! evaluation sees. Every way to run long or large is bounded by a count, not a timer, so the
//! same script stops at the same point on every run:
//! - Lua code by an instruction budget (a hook every 100 VM instructions; the JIT compiler
//!   is off so the hook always runs; `pcall` cannot swallow the error);
//! - native library calls on the same budget: each function that can do work proportional to
//!   its input (`upper`, `sub`, `format`, `table.sort`, `table.insert`, `unpack`,
//!   `loadstring`, ...) charges the bytes it reads or builds, the elements it moves and the
//!   comparisons it makes before it runs;
//! - the heap by a memory limit per evaluation, with the collector stopped while the script
//!   runs, so every allocation counts, garbage included (a loop building large strings stops
//!   there, at the same point on every run);
//! - pattern matching, which runs in native code the hook cannot see, by a step budget on
//!   gitops-core's own Lua 5.1 matcher;
//! - `string.rep` and `string.gsub` results by a size checked before allocating;
//! - native recursion (object and result nesting, nested `gsub` callbacks) by depth limits.
//!
//! Each failure is a [`ScriptError`] naming the script, the object and the limit, and the
//! host carries on. Behind the counts, a host may install an [`Interrupt`] (a wall-clock
//! [`Deadline`], say) for whatever they miss; its stop is reported as its own error kind.

pub(crate) mod gopher;
mod interrupt;
#[cfg(feature = "jq")]
pub(crate) mod jq;
mod limits;
pub use interrupt::{Deadline, Interrupt, InterruptCheck};
#[cfg(feature = "lua")]
mod lua;
pub use limits::ScriptLimits;
#[cfg(feature = "lua")]
#[cfg_attr(docsrs, doc(cfg(feature = "lua")))]
pub use lua::{LuaEngine, LuaHealth, ScriptError, ScriptErrorKind};
