//! Comparing the normalised live object with the predicted one: canonical equality, and the
//! RFC 6902 operations between them.

use serde_json::Value;

use super::predict::Predicted;
use super::{DiffMode, DiffResult, PatchOp};
use crate::json::canonical_eq;

/// Builds a result from the two sides, comparing them canonically.
pub(crate) fn finish(live: Value, predicted: Value, mode: DiffMode) -> DiffResult {
    let (modified, patch) = compare_sides(&live, &predicted);
    DiffResult { modified, normalized_live: live, predicted_live: predicted, patch, mode }
}

/// Whether two sides differ canonically (`!`[`canonical_eq`]) and, if they do, the
/// operations between them ([`json_patch_ops`]), found in one walk instead of two: the sides
/// differ canonically exactly where an operation is not a number replaced by the same number
/// written otherwise (`2` by `2.0`), that is wherever a key or an item is added or removed or
/// anything else is replaced (`the_sides_compare_as_canonical_eq_says` checks it).
pub(crate) fn compare_sides(live: &Value, predicted: &Value) -> (bool, Vec<PatchOp>) {
    let mut walk = Walk { out: Vec::new(), differs: false };
    walk.between(live, predicted, &mut String::new());
    if walk.differs { (true, walk.out) } else { (false, Vec::new()) }
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
            let (modified, patch) = compare_sides(&live, &p);
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

/// The operations turning `from` into `to`, in a deterministic order: objects by key (for each
/// key of `to` in order, an `add` or what its value needs; then a `remove` for each key only
/// `from` has), arrays by index (what each common index needs, then the extra items of `to`
/// added or those of `from` removed, each at the first index past `to`'s end), any other
/// difference a `replace`. These are json-patch's `diff` operations, the same list (checked
/// against it by a property test); equal subtrees are skipped by one `==` instead of walked
/// with a pointer for each member.
pub(crate) fn json_patch_ops(from: &Value, to: &Value) -> Vec<PatchOp> {
    let mut walk = Walk { out: Vec::new(), differs: false };
    walk.between(from, to, &mut String::new());
    walk.out
}

/// [`json_patch_ops`] of the members at `path` (an RFC 6901 pointer), appended to `out`.
pub(crate) fn json_patch_ops_at(from: &Value, to: &Value, path: &str, out: &mut Vec<PatchOp>) {
    let mut walk = Walk { out: std::mem::take(out), differs: false };
    walk.between(from, to, &mut path.to_string());
    *out = walk.out;
}

fn op(op: &str, path: &str, value: Option<Value>) -> PatchOp {
    PatchOp { op: op.to_string(), path: path.to_string(), value, from: None }
}

/// Appends `/token`, escaped as RFC 6901 asks, to `path`.
fn push_token(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Appends `/index` to `path`.
fn push_index(path: &mut String, index: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "/{index}");
}

/// The operations found so far, and whether the sides differ canonically (see
/// [`compare_sides`]).
struct Walk {
    out: Vec<PatchOp>,
    differs: bool,
}

impl Walk {
    /// Appends an operation; every one but a number replaced by an equal number makes the
    /// sides differ canonically.
    fn push(&mut self, op: PatchOp, canonically_equal: bool) {
        self.differs |= !canonically_equal;
        self.out.push(op);
    }

    fn between(&mut self, from: &Value, to: &Value, path: &mut String) {
        match (from, to) {
            (Value::Object(a), Value::Object(b)) => {
                let len = path.len();
                for (k, bv) in b {
                    match a.get(k) {
                        Some(av) if av == bv => {}
                        Some(av) => {
                            push_token(path, k);
                            self.between(av, bv, path);
                            path.truncate(len);
                        }
                        None => {
                            push_token(path, k);
                            self.push(op("add", path, Some(bv.clone())), false);
                            path.truncate(len);
                        }
                    }
                }
                for k in a.keys().filter(|k| !b.contains_key(*k)) {
                    push_token(path, k);
                    self.push(op("remove", path, None), false);
                    path.truncate(len);
                }
            }
            (Value::Array(a), Value::Array(b)) => self.between_arrays(a, b, path),
            (a, b) if a == b => {}
            (a, b) => {
                let same =
                    matches!((a, b), (Value::Number(_), Value::Number(_))) && canonical_eq(a, b);
                self.push(op("replace", path, Some(b.clone())), same);
            }
        }
    }

    fn between_arrays(&mut self, a: &[Value], b: &[Value], path: &mut String) {
        let len = path.len();
        for (i, (av, bv)) in a.iter().zip(b).enumerate() {
            if av != bv {
                push_index(path, i);
                self.between(av, bv, path);
                path.truncate(len);
            }
        }
        // Past the common length: `to`'s items added in turn, or `from`'s removed at the
        // same index (each removal moves the next item there).
        for (i, bv) in b.iter().enumerate().skip(a.len()) {
            push_index(path, i);
            self.push(op("add", path, Some(bv.clone())), false);
            path.truncate(len);
        }
        if a.len() > b.len() {
            push_index(path, b.len());
            for _ in b.len()..a.len() {
                self.push(op("remove", path, None), false);
            }
            path.truncate(len);
        }
    }
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

    /// json-patch's own `diff` of the same pair, as `PatchOp`s.
    fn reference(a: &Value, b: &Value) -> Vec<PatchOp> {
        serde_json::from_value(serde_json::to_value(json_patch::diff(a, b)).unwrap()).unwrap()
    }

    #[test]
    fn the_same_operations_as_json_patch() {
        let a = json!({"a~/b": [1, 2, 3], "x": {"y": 1, "z": 2}, "gone": 1, "l": [{"k": 1}]});
        let b = json!({"a~/b": [1, 5], "x": {"y": 2, "w": []}, "new": {}, "l": [{"k": 2}, 3, 4]});
        assert_eq!(json_patch_ops(&a, &b), reference(&a, &b));
        assert_eq!(json_patch_ops(&b, &a), reference(&b, &a));
        assert_eq!(json_patch_ops(&json!(1), &json!(1.0)), reference(&json!(1), &json!(1.0)));
        assert_eq!(json_patch_ops(&a, &a), []);
    }

    fn values() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0i8..3).prop_map(Value::from),
            prop_oneof![Just(1.0), Just(2.0), Just(0.5), Just(-0.0)].prop_map(Value::from),
            "[a~/]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 40, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[ab~/]{1,2}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn any_pair_gives_json_patch_operations(a in values(), b in values()) {
            proptest::prop_assert_eq!(json_patch_ops(&a, &b), reference(&a, &b));
        }

        /// The one walk of `compare_sides` answers as `canonical_eq` then `json_patch_ops`
        /// did, numbers written as integers and as floats included.
        #[test]
        fn the_sides_compare_as_canonical_eq_says(a in values(), b in values(), f in values()) {
            for (a, b) in [(&a, &b), (&a, &a), (&a, &f), (&f, &b)] {
                let modified = !canonical_eq(a, b);
                let patch = if modified { json_patch_ops(a, b) } else { Vec::new() };
                proptest::prop_assert_eq!(compare_sides(a, b), (modified, patch));
            }
        }
    }
}
