//! Kubernetes defaulting of built-in types (spec diff.md §6.6), applied to untyped JSON the
//! way Argo CD applies it: as a two-way strategic patch from the object to its defaulted form.
//! STUB: signatures only.
#![allow(dead_code, unused_variables)]

use serde_json::Value;

/// Returns `obj` with the Kubernetes defaults of its built-in type applied; unknown kinds and
/// objects that do not decode as their type are returned unchanged.
pub(crate) fn apply_defaults(obj: &Value) -> Value {
    obj.clone()
}
