//! Sandboxed script engines: Lua health scripts (`lua` feature) and jq path expressions
//! (`jq` feature), with deterministic limits.
#[cfg(feature = "jq")]
pub(crate) mod jq;
