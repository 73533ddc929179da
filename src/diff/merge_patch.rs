//! JSON merge patch (RFC 7386): create, apply, kubectl's three-way JSON merge with conflict
//! detection (gitops-engine pkg/diff/diff.go `threeWayMergePatch`, for a kind the scheme lacks),
//! and gitops-engine's RemoveMapFields / RemoveListFields (pkg/utils/json/json.go).

use serde_json::{Map, Value};

use super::error::PatchFailure;

/// RFC 7386 patch turning `original` into `modified`; lists are atomic.
pub(crate) fn create_merge_patch(original: &Value, modified: &Value) -> Value {
    match (original, modified) {
        (Value::Object(o), Value::Object(m)) => Value::Object(diff_objects(o, m)),
        _ => modified.clone(),
    }
}

fn diff_objects(o: &Map<String, Value>, m: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = Map::new();
    for (k, mv) in m {
        match o.get(k) {
            None => {
                patch.insert(k.clone(), mv.clone());
            }
            Some(ov) if ov == mv => {}
            Some(Value::Object(oo)) => match mv {
                Value::Object(mo) => {
                    let sub = diff_objects(oo, mo);
                    if !sub.is_empty() {
                        patch.insert(k.clone(), Value::Object(sub));
                    }
                }
                _ => {
                    patch.insert(k.clone(), mv.clone());
                }
            },
            Some(_) => {
                patch.insert(k.clone(), mv.clone());
            }
        }
    }
    for k in o.keys() {
        if !m.contains_key(k) {
            patch.insert(k.clone(), Value::Null);
        }
    }
    patch
}

/// Keeps only the `null`s (`keep_null`) or everything but the `null`s, recursively; an
/// explicitly empty object is a value (kept only when not keeping nulls).
fn keep_or_delete_null(m: &Map<String, Value>, keep_null: bool) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in m {
        match v {
            Value::Null if keep_null => {
                out.insert(k.clone(), Value::Null);
            }
            Value::Null => {}
            Value::Object(sub) if sub.is_empty() => {
                if !keep_null {
                    out.insert(k.clone(), v.clone());
                }
            }
            Value::Object(sub) => {
                let f = keep_or_delete_null(sub, keep_null);
                if !f.is_empty() {
                    out.insert(k.clone(), Value::Object(f));
                }
            }
            _ => {
                if !keep_null {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

/// apimachinery `mergepatch.HasConflicts`.
fn has_conflicts(left: &Value, right: &Value) -> Option<String> {
    fn walk(left: &Value, right: &Value, path: &mut String) -> bool {
        match (left, right) {
            (Value::Object(l), Value::Object(r)) => {
                for (k, lv) in l {
                    if let Some(rv) = r.get(k) {
                        let len = path.len();
                        path.push('/');
                        path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                        if walk(lv, rv, path) {
                            return true;
                        }
                        path.truncate(len);
                    }
                }
                false
            }
            (Value::Object(_), _) => true,
            (Value::Array(l), Value::Array(r)) => {
                if l.len() != r.len() {
                    return true;
                }
                l.iter().zip(r).enumerate().any(|(i, (a, b))| {
                    let len = path.len();
                    path.push_str(&format!("/{i}"));
                    let c = walk(a, b, path);
                    if !c {
                        path.truncate(len);
                    }
                    c
                })
            }
            (Value::Array(_), _) => true,
            _ => left != right,
        }
    }
    let mut path = String::new();
    walk(left, right, &mut path).then_some(path)
}

/// `CreateThreeWayJSONMergePatch(original, modified, current)`; a conflict is an error.
pub(crate) fn three_way_json_merge_patch(
    original: &Value,
    modified: &Value,
    current: &Value,
) -> Result<Value, PatchFailure> {
    let empty = Value::Object(Map::new());
    let norm = |v: &Value| if v.is_null() { empty.clone() } else { v.clone() };
    let (original, modified, current) = (norm(original), norm(modified), norm(current));
    let object = |v: &Value, what: &str| -> Result<Map<String, Value>, PatchFailure> {
        v.as_object()
            .cloned()
            .ok_or_else(|| PatchFailure::new("", format!("{what} is not a JSON object")))
    };
    let add = match create_merge_patch(&current, &modified) {
        Value::Object(m) => keep_or_delete_null(&m, false),
        _ => object(&modified, "modified")?,
    };
    let del = match create_merge_patch(&original, &modified) {
        Value::Object(m) => keep_or_delete_null(&m, true),
        _ => Map::new(),
    };
    let (add, del) = (Value::Object(add), Value::Object(del));
    if let Some(path) = has_conflicts(&add, &del) {
        return Err(PatchFailure::new(
            &path,
            "the configuration has been changed differently than the live object (json merge patch conflict)",
        ));
    }
    Ok(apply_merge_patch(&del, &add))
}

/// RFC 7386 apply, as evanphx/json-patch's `MergePatch` (the one Argo CD runs): a value the
/// patch puts where the document has none (or where the document is no object) loses its
/// `null` members, inside lists too; a non-object value replacing an object is kept as is.
pub(crate) fn apply_merge_patch(doc: &Value, patch: &Value) -> Value {
    match (doc, patch) {
        (Value::Object(d), Value::Object(p)) => Value::Object(merge_docs(d.clone(), p)),
        (_, p) => pruned(p),
    }
}

fn merge_docs(mut doc: Map<String, Value>, patch: &Map<String, Value>) -> Map<String, Value> {
    for (k, pv) in patch {
        if pv.is_null() {
            doc.remove(k);
            continue;
        }
        let merged = match doc.get(k) {
            None | Some(Value::Null) => pruned(pv),
            Some(Value::Object(cur)) => match pv {
                Value::Object(p) => Value::Object(merge_docs(cur.clone(), p)),
                other => other.clone(),
            },
            Some(_) => pruned(pv),
        };
        doc.insert(k.clone(), merged);
    }
    doc
}

/// `pruneNulls`: an object's `null` members removed, recursively, through lists too (a `null`
/// list element stays).
fn pruned(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), pruned(v))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(pruned).collect()),
        other => other.clone(),
    }
}

/// Keeps only the keys of `live` that also exist in `config`, recursively (lists positional).
pub(crate) fn remove_map_fields(config: &Value, live: &Value) -> Value {
    match (config, live) {
        (Value::Object(c), Value::Object(l)) => Value::Object(remove_map_fields_obj(c, l)),
        _ => live.clone(),
    }
}

fn remove_map_fields_obj(
    config: &Map<String, Value>,
    live: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, cv) in config {
        let Some(lv) = live.get(k) else { continue };
        let v = match (cv, lv) {
            (_, Value::Null) => Value::Null,
            (Value::Object(c), Value::Object(l)) => Value::Object(remove_map_fields_obj(c, l)),
            (Value::Array(c), Value::Array(l)) => Value::Array(remove_list_fields(c, l)),
            _ => lv.clone(),
        };
        out.insert(k.clone(), v);
    }
    out
}

/// [`remove_map_fields`] in place: `live` keeps only the keys `config` also has.
pub(crate) fn retain_map_fields(config: &Value, live: &mut Value) {
    if let (Value::Object(c), Value::Object(l)) = (config, live) {
        retain_map_fields_obj(c, l);
    }
}

fn retain_map_fields_obj(config: &Map<String, Value>, live: &mut Map<String, Value>) {
    live.retain(|k, lv| {
        let Some(cv) = config.get(k) else { return false };
        match (cv, lv) {
            (Value::Object(c), Value::Object(l)) => retain_map_fields_obj(c, l),
            (Value::Array(c), Value::Array(l)) => retain_list_fields(c, l),
            _ => {}
        }
        true
    });
}

/// [`remove_list_fields`] in place.
fn retain_list_fields(config: &[Value], live: &mut [Value]) {
    for (i, lv) in live.iter_mut().enumerate() {
        match (config.get(i), lv) {
            (Some(Value::Object(c)), Value::Object(l)) => retain_map_fields_obj(c, l),
            (Some(Value::Array(c)), Value::Array(l)) => retain_list_fields(c, l),
            _ => {}
        }
    }
}

/// Positional stripping of list elements: each live element keeps only keys present in the
/// config element at the same index.
pub(crate) fn remove_list_fields(config: &[Value], live: &[Value]) -> Vec<Value> {
    live.iter()
        .enumerate()
        .map(|(i, lv)| match (config.get(i), lv) {
            (Some(Value::Object(c)), Value::Object(l)) => {
                Value::Object(remove_map_fields_obj(c, l))
            }
            (Some(Value::Array(c)), Value::Array(l)) => Value::Array(remove_list_fields(c, l)),
            _ => lv.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rfc7386_examples() {
        let doc = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        let patch = json!({"a": "z", "c": {"f": null}});
        assert_eq!(apply_merge_patch(&doc, &patch), json!({"a": "z", "c": {"d": "e"}}));
        assert_eq!(
            apply_merge_patch(&json!({"a": [1]}), &json!({"a": [2, 3]})),
            json!({"a": [2, 3]})
        );
        assert_eq!(apply_merge_patch(&json!({"a": "b"}), &json!(["c"])), json!(["c"]));
        assert_eq!(
            apply_merge_patch(&json!({}), &json!({"a": {"bb": {"ccc": null}}})),
            json!({"a": {"bb": {}}})
        );
        assert_eq!(
            apply_merge_patch(&json!({"e": null}), &json!({"a": 1})),
            json!({"e": null, "a": 1})
        );
    }

    #[test]
    fn nulls_inside_new_values_are_pruned_as_evanphx_does() {
        // A list the patch brings in: its objects' nulls go, a null element stays.
        let p = json!({"l": [{"a": null, "b": 1}, null], "n": {"x": null, "y": {"z": null}}});
        assert_eq!(
            apply_merge_patch(&json!({"l": [1]}), &p),
            json!({"l": [{"b": 1}, null], "n": {"y": {}}})
        );
        // A non-object replacing an object is kept as is.
        let p = json!({"o": [{"a": null}]});
        assert_eq!(apply_merge_patch(&json!({"o": {"k": 1}}), &p), json!({"o": [{"a": null}]}));
    }

    #[test]
    fn create_round_trips() {
        let a = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": true});
        let b = json!({"a": 2, "b": {"c": [1], "f": {}}, "g": null});
        let p = create_merge_patch(&a, &b);
        assert_eq!(p, json!({"a": 2, "b": {"c": [1], "d": null, "f": {}}, "e": null, "g": null}));
    }

    #[test]
    fn three_way_keeps_live_only_fields_and_replaces_lists() {
        let orig = json!({"spec": {"items": ["a"], "old": 1}});
        let config = json!({"spec": {"items": ["a"]}});
        let live = json!({"spec": {"items": ["a", "b"], "old": 1, "extra": true}});
        let live_for_patch = remove_map_fields(&orig, &live);
        let patch = three_way_json_merge_patch(&orig, &config, &live_for_patch).expect("patch");
        assert_eq!(patch, json!({"spec": {"items": ["a"], "old": null}}));
        assert_eq!(
            apply_merge_patch(&live, &patch),
            json!({"spec": {"items": ["a"], "extra": true}})
        );
    }

    #[test]
    fn conflicts() {
        assert_eq!(
            has_conflicts(&json!({"a": {"b": 1}}), &json!({"a": {"b": null}})),
            Some("/a/b".into())
        );
        assert_eq!(has_conflicts(&json!({"a": {}}), &json!({"a": {"b": null}})), None);
        assert_eq!(has_conflicts(&json!({"a": [1]}), &json!({"a": [1, 2]})), Some("/a".into()));
        assert_eq!(has_conflicts(&json!({"a": 1}), &json!({"b": null})), None);
        // Additions and deletions come from the same desired object, so they never collide.
        let p = three_way_json_merge_patch(&json!({"a": {"b": 1}}), &json!({"a": {}}), &json!({}))
            .expect("no conflict");
        assert_eq!(p, json!({"a": {"b": null}}));
    }

    #[test]
    fn remove_fields() {
        let config = json!({"a": {"b": 1}, "l": [{"x": 1}], "n": null, "missing": 1});
        let live = json!({"a": {"b": 2, "c": 3}, "l": [{"x": 2, "y": 3}, {"z": 1}], "n": {"k": 1}, "other": 1});
        assert_eq!(
            remove_map_fields(&config, &live),
            json!({"a": {"b": 2}, "l": [{"x": 2}, {"z": 1}], "n": {"k": 1}})
        );
    }
}
