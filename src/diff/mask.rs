//! Secret masking (gitops-engine pkg/diff/diff.go `HideSecretData`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::normalize::{normalize_secret, set_annotation};
use crate::config::LAST_APPLIED_ANNOTATION;

/// Whether objects of this group and kind are Secrets, whose values are masked: the core
/// group's `Secret`, whether its `apiVersion` is written `v1` or `core/v1`.
pub(crate) fn is_secret(group: &str, kind: &str) -> bool {
    kind == "Secret" && (group.is_empty() || group == "core")
}

/// The mask of the first distinct value of a key, and of a last-applied annotation that is
/// hidden whole (eight `+`). Every further distinct value gets four more `+`.
pub(super) const MASK_ANNOTATION_VALUE: &str = "++++++++";

/// Masks a Secret pair for display, as Argo CD's `HideSecretData`.
///
/// Both objects (either may be absent) are normalised as Secrets (`stringData` folded into
/// `data`), then every `data` value, and every annotation named in `hide_annotations`, is
/// replaced by a run of `+`: per key, the first distinct value seen (in the order target,
/// live, target's last-applied, live's last-applied) gets 8, the next 12, and so on. Equal
/// values share a mask, so a difference stays visible without showing the secret. The
/// last-applied annotations are re-serialised masked; one that does not parse, or that is
/// itself named in `hide_annotations`, becomes exactly `++++++++`.
pub(crate) fn hide_secret_data(
    target: Option<&Value>,
    live: Option<&Value>,
    hide_annotations: &[String],
) -> (Option<Value>, Option<Value>) {
    let mut target = target.cloned();
    let mut live = live.cloned();
    let (mut target_la, target_la_bad) = parse_la(target.as_ref());
    let (mut live_la, live_la_bad) = parse_la(live.as_ref());
    for obj in [&mut target, &mut live, &mut target_la, &mut live_la].into_iter().flatten() {
        normalize_secret(obj);
        hide_malformed(obj);
    }
    let mut keys = BTreeSet::new();
    for obj in [&target, &live, &target_la, &live_la].into_iter().flatten() {
        if let Some(Value::Object(d)) = obj.get("data") {
            keys.extend(d.keys().cloned());
        }
    }
    {
        let mut objs = [&mut target, &mut live, &mut target_la, &mut live_la];
        hide(&mut objs, keys.iter().map(String::as_str), &["data"]);
        hide(&mut objs, hide_annotations.iter().map(String::as_str), &["metadata", "annotations"]);
    }
    let hide_la = hide_annotations.iter().any(|a| a == LAST_APPLIED_ANNOTATION);
    for (obj, la, bad) in
        [(&mut live, &live_la, live_la_bad), (&mut target, &target_la, target_la_bad)]
    {
        let Some(obj) = obj else { continue };
        if la.is_none() && !bad {
            continue;
        }
        let text = match la {
            Some(la) if !hide_la && !bad => {
                serde_json::to_string(&sorted(la)).unwrap_or_else(|_| MASK_ANNOTATION_VALUE.into())
            }
            _ => MASK_ANNOTATION_VALUE.to_string(),
        };
        set_annotation(obj, LAST_APPLIED_ANNOTATION, text);
    }
    (target, live)
}

/// Hides whole a `data` or `stringData` that is not a map (a list or a string: not a valid
/// Secret, but Git may hold one), which no per-key mask would reach.
fn hide_malformed(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    for field in ["data", "stringData"] {
        if let Some(v) = map.get_mut(field)
            && !v.is_object()
            && !v.is_null()
        {
            *v = Value::String(MASK_ANNOTATION_VALUE.to_string());
        }
    }
}

/// A value with object keys sorted (serde_json's map is sorted unless `preserve_order` is on
/// somewhere in the build; this makes the order explicit either way).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let b: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, sorted(v))).collect();
            Value::Object(b.into_iter().map(|(k, v)| (k.clone(), v)).collect::<Map<_, _>>())
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The parsed last-applied configuration and whether it was present but unparseable.
fn parse_la(obj: Option<&Value>) -> (Option<Value>, bool) {
    match obj.and_then(super::normalize::last_applied) {
        None => (None, false),
        Some(Ok(v)) => (Some(v), false),
        Some(Err(())) => (None, true),
    }
}

fn hide<'k>(objs: &mut [&mut Option<Value>; 4], keys: impl Iterator<Item = &'k str>, at: &[&str]) {
    for key in keys {
        let mut next = MASK_ANNOTATION_VALUE.to_string();
        let mut masks: BTreeMap<String, String> = BTreeMap::new();
        for obj in objs.iter_mut() {
            let Some(obj) = obj.as_mut() else { continue };
            let Some(Value::Object(map)) = descend(obj, at) else { continue };
            let Some(value) = map.get_mut(key) else { continue };
            let text = match &*value {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            let mask = masks.entry(text).or_insert_with(|| {
                let m = next.clone();
                next.push_str("++++");
                m
            });
            *value = Value::String(mask.clone());
        }
    }
}

fn descend<'a>(obj: &'a mut Value, at: &[&str]) -> Option<&'a mut Value> {
    let mut v = obj;
    for k in at {
        v = v.get_mut(*k)?;
    }
    Some(v)
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    proptest! {
        // Per key: equal values share a mask, different values get different masks, and no
        // mask shows the value.
        #[test]
        fn masks_preserve_equality_only(t in prop::collection::btree_map("[a-c]", "[xy]{1,3}", 0..4),
                                        l in prop::collection::btree_map("[a-c]", "[xy]{1,3}", 0..4)) {
            let enc = |m: &std::collections::BTreeMap<String, String>| -> Value {
                let data: serde_json::Map<String, Value> = m.iter()
                    .map(|(k, v)| (k.clone(), json!(crate::json::base64_encode(v.as_bytes()))))
                    .collect();
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": data})
            };
            let (mt, ml) = super::hide_secret_data(Some(&enc(&t)), Some(&enc(&l)), &[]);
            let (mt, ml) = (mt.unwrap_or_default(), ml.unwrap_or_default());
            for (k, tv) in &t {
                let tm = mt["data"][k].as_str().unwrap_or_default().to_string();
                prop_assert!(tm.chars().all(|c| c == '+') && tm.len() == 8);
                if let Some(lv) = l.get(k) {
                    let lm = ml["data"][k].as_str().unwrap_or_default();
                    prop_assert_eq!(tm == lm, tv == lv);
                }
            }
        }
    }
}
