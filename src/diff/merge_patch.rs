//! JSON merge patch (RFC 7386): create, apply, kubectl's three-way JSON merge with conflict
//! detection, and gitops-engine's RemoveMapFields / RemoveListFields.
//! STUB: signatures only.
#![allow(dead_code, unused_variables)]

use serde_json::Value;

use super::smp::PatchFailure;

/// `CreateThreeWayJSONMergePatch(original, modified, current)`; a conflict is an error.
pub(crate) fn three_way_json_merge_patch(
    original: &Value,
    modified: &Value,
    current: &Value,
) -> Result<Value, PatchFailure> {
    Err(PatchFailure { path: String::new(), message: "json merge patch not implemented".into() })
}

/// RFC 7386 apply.
pub(crate) fn apply_merge_patch(doc: &Value, patch: &Value) -> Value {
    doc.clone()
}

/// Keeps only the keys of `live` that also exist in `config`, recursively (lists positional).
pub(crate) fn remove_map_fields(config: &Value, live: &Value) -> Value {
    live.clone()
}

/// Positional stripping of list elements: each live element keeps only keys present in the
/// config element at the same index.
pub(crate) fn remove_list_fields(config: &[Value], live: &[Value]) -> Vec<Value> {
    live.to_vec()
}
