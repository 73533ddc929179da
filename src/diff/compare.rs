//! Comparing the normalised live object with the predicted one: canonical equality, and the
//! RFC 6902 operations between them.

use serde_json::Value;

use super::predict::Predicted;
use super::{DiffMode, DiffResult, PatchOp};
use crate::json::canonical_eq;

/// Builds a result from the two sides, comparing them canonically.
pub(crate) fn finish(live: Value, predicted: Value, mode: DiffMode) -> DiffResult {
    let modified = !canonical_eq(&live, &predicted);
    let patch = if modified { json_patch_ops(&live, &predicted) } else { Vec::new() };
    DiffResult { modified, normalized_live: live, predicted_live: predicted, patch, mode }
}

/// Builds a result from the defaulted live object and its prediction. An unchanged prediction
/// is not modified and has no patch; with `keep` off the objects are dropped here (`null`).
pub(crate) fn finish_prediction(
    live: Value,
    predicted: Predicted,
    mode: DiffMode,
    keep: bool,
) -> DiffResult {
    match (predicted, keep) {
        (Predicted::Changed(p), true) => finish(live, p, mode),
        (Predicted::Changed(p), false) => {
            let modified = !canonical_eq(&live, &p);
            let patch = if modified { json_patch_ops(&live, &p) } else { Vec::new() };
            let (normalized_live, predicted_live) = (Value::Null, Value::Null);
            DiffResult { modified, normalized_live, predicted_live, patch, mode }
        }
        (Predicted::Same, true) => DiffResult {
            modified: false,
            predicted_live: live.clone(),
            normalized_live: live,
            patch: Vec::new(),
            mode,
        },
        (Predicted::Same, false) => DiffResult {
            modified: false,
            normalized_live: Value::Null,
            predicted_live: Value::Null,
            patch: Vec::new(),
            mode,
        },
    }
}

/// The operations turning `from` into `to` (json-patch's structural diff: objects by key, arrays
/// by index), in a deterministic order.
pub(crate) fn json_patch_ops(from: &Value, to: &Value) -> Vec<PatchOp> {
    use json_patch::PatchOperation as P;
    let op = |op: &str, path: &jsonptr::Pointer, value, from: Option<&jsonptr::Pointer>| PatchOp {
        op: op.to_string(),
        path: path.as_str().to_string(),
        value,
        from: from.map(|f| f.as_str().to_string()),
    };
    json_patch::diff(from, to)
        .0
        .into_iter()
        .map(|o| match o {
            P::Add(a) => op("add", &a.path, Some(a.value), None),
            P::Remove(r) => op("remove", &r.path, None, None),
            P::Replace(r) => op("replace", &r.path, Some(r.value), None),
            P::Move(m) => op("move", &m.path, None, Some(&m.from)),
            P::Copy(c) => op("copy", &c.path, None, Some(&c.from)),
            P::Test(t) => op("test", &t.path, Some(t.value), None),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ops_apply_back() {
        let a = json!({"spec": {"replicas": 3, "x": [1, 2, 3]}, "k": "v"});
        let b = json!({"spec": {"replicas": 1, "x": [1]}, "n": null});
        let ops = json_patch_ops(&a, &b);
        let patch: json_patch::Patch =
            serde_json::from_value(serde_json::to_value(&ops).unwrap()).unwrap();
        let mut doc = a.clone();
        json_patch::patch(&mut doc, &patch).unwrap();
        assert_eq!(doc, b);
        assert!(ops.iter().any(|o| o.op == "replace" && o.path == "/spec/replicas"));
    }
}
