//! Type-driven canonicalisation of built-in kinds (spec diff.md §4.4) and the known-types
//! normaliser (§4.5): quantities, int-or-string, durations, omitempty.
//! STUB: signatures only.
#![allow(dead_code, unused_variables)]

use serde_json::Value;

use crate::config::KnownTypeField;

/// Argo CD's `remarshal`: canonicalises a built-in object through its type; returns the plain
/// JSON round trip when the object does not strictly decode as its type.
pub(crate) fn remarshal(obj: &Value) -> Value {
    obj.clone()
}

/// The known-types normaliser: remarshals the values at the configured field paths.
/// A field whose value does not decode as its type is an error naming the path.
pub(crate) fn normalize_known_types(
    obj: &mut Value,
    fields: &[KnownTypeField],
) -> Result<(), super::smp::PatchFailure> {
    Ok(())
}
