//! Sandboxed script engines: Lua health scripts (`lua` feature) and jq path expressions
//! (`jq` feature), with deterministic limits.
//!
//! # Lua
//!
//! [`LuaEngine`] runs Argo CD `health.lua` scripts unchanged on a vendored LuaJIT with the JIT
//! off (Lua 5.1 plus `goto`, as gopher-lua). The script sees the object as the global `obj`
//! and returns a table with `status`, `message` and optionally `deletionMessage`. What a
//! script can reach is listed on [`LuaEngine`]; the limits are in [`ScriptLimits`].

mod limits;
#[cfg(feature = "lua")]
mod lua;

pub use limits::ScriptLimits;
#[cfg(feature = "lua")]
pub use lua::{LuaEngine, LuaHealth, ScriptError, ScriptErrorKind};
