//! Strategic merge patch (apimachinery `strategicpatch`): creating two- and three-way patches
//! and applying them, driven by the merge keys and strategies of `crate::schema`.
//! STUB: signatures only; the bodies are placeholders until the real implementation lands.
#![allow(dead_code, unused_variables)]

use serde_json::Value;

/// A patch error, before the caller attaches the object: the pointer and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchFailure {
    /// RFC 6901 pointer of the field.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

/// Whether `group/version, kind` is a type registered in client-go's scheme (built-in), so
/// that kubectl uses a strategic merge patch for it (spec diff.md §3.1, §6.3).
pub(crate) fn is_builtin(group: &str, version: &str, kind: &str) -> bool {
    false
}

/// `CreateThreeWayMergePatch(original, modified, current, overwrite=true)` for a built-in type.
pub(crate) fn three_way_strategic_patch(
    original: &Value,
    modified: &Value,
    current: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Value, PatchFailure> {
    Err(PatchFailure {
        path: String::new(),
        message: "strategic merge patch not implemented".into(),
    })
}

/// `CreateTwoWayMergePatch(original, modified)` for a built-in type.
pub(crate) fn two_way_strategic_patch(
    original: &Value,
    modified: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Value, PatchFailure> {
    Err(PatchFailure {
        path: String::new(),
        message: "strategic merge patch not implemented".into(),
    })
}

/// `StrategicMergePatch(doc, patch)` for a built-in type (directives `$patch`, `$retainKeys`,
/// `$setElementOrder`, `$deleteFromPrimitiveList` honoured).
pub(crate) fn apply_strategic_patch(
    doc: &Value,
    patch: &Value,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Value, PatchFailure> {
    Err(PatchFailure {
        path: String::new(),
        message: "strategic merge patch not implemented".into(),
    })
}
