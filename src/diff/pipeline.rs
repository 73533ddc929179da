//! gitops-engine's `Diff` for one pair (gitops-engine pkg/diff/diff.go `Diff`,
//! `handleResourceCreateOrDeleteDiff`, `ThreeWayDiff`): choosing the
//! algorithm, normalising both sides, three-way and two-way patches.

use std::borrow::Cow;

use serde_json::Value;

use super::compare::finish_prediction;
use super::normalize::{last_applied, normalize, prepare, remove_namespace_annotation};
use super::predict::three_way_predict;
use super::remarshal::decodes_strictly;
use super::structured_merge::{server_side_diff, structured_merge_diff};
use super::{DiffError, DiffMode, DiffOptions, DiffResult, PatchOp};
use crate::object::ObjectRef;
use crate::schema;

/// Compares a desired object with a live object, as gitops-engine's `Diff(config, live)`.
///
/// Either side may be absent, not both. The algorithm is chosen as in gitops-engine
/// pkg/diff/diff.go `Diff`: server-side diff when [`DiffOptions::server_side_diff`] is set,
/// structured-merge diff when [`DiffOptions::structured_merge`] is set (Argo CD 3.6 no longer has
/// it; a desired object whose `argocd.argoproj.io/sync-options` holds `ServerSideApply=true` is
/// compared as any other when server-side diff is off), else a three-way diff with the live
/// object's `kubectl.kubernetes.io/last-applied-configuration`, falling back to a two-way diff when
/// there is none or the three-way patch fails.
///
/// # Errors
///
/// [`DiffError::BothAbsent`] without objects; [`DiffError::Patch`] when even the two-way
/// patch cannot be built (an element without its merge key); the server-side errors when the
/// dry-run result is missing or unusable.
///
/// # Examples
///
/// ```
/// use gitops_core::diff::{self, DiffOptions, DiffMode};
/// use serde_json::json;
///
/// let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
/// let r = diff::diff(None, Some(&live), &DiffOptions::default()).unwrap();
/// assert!(!r.modified); // the controller marks it as requiring pruning instead
/// assert_eq!(r.mode, DiffMode::LiveOnly);
/// assert_eq!(r.predicted_live, serde_json::Value::Null);
/// ```
pub fn diff(
    desired: Option<&Value>,
    live: Option<&Value>,
    opts: &DiffOptions<'_>,
) -> Result<DiffResult, DiffError> {
    diff_objects(desired.map(Cow::Borrowed), live.map(Cow::Borrowed), opts, Keep::Objects)
}

/// What the caller of [`diff_objects`] keeps of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The result's objects (normalised live and prediction).
    Objects,
    /// Only whether they differ, the patch and the mode: the objects are `null`.
    Patch,
    /// As [`Keep::Patch`], and nothing reads live's `metadata.managedFields` beyond the
    /// pointers it names (no jq rule that may run on the object has the field in its
    /// footprint, and the object's own annotation rule has no jq step): when the prediction would set
    /// the field aside ([`ManagedFields`]), live's working copy is made without it, so it is
    /// neither copied nor remarshalled nor normalised only to be dropped.
    PatchUnread,
}

/// [`diff()`] on objects the caller may hand over: an owned object becomes the working copy
/// of its side (no copy is made of it); a borrowed one is copied once. Each stage then works
/// on those two copies in place (remarshal, normalisation, the prediction's patch and
/// defaults). With `keep` off the result's objects are `null` (only `modified`, the patch
/// and the mode are kept), which also spares the copy of an unchanged prediction.
pub(crate) fn diff_objects(
    desired: Option<Cow<'_, Value>>,
    live: Option<Cow<'_, Value>>,
    opts: &DiffOptions<'_>,
    kept: Keep,
) -> Result<DiffResult, DiffError> {
    let keep = kept == Keep::Objects;
    let skip_full = opts.server_side_diff;
    let config = desired.map(|c| prepare(c, opts, skip_full));
    let three_way = !opts.server_side_diff && !opts.structured_merge;
    let live = live.map(|l| match &config {
        Some(config) if three_way && kept == Keep::PatchUnread => {
            prepare(ManagedFields::leave_out(l, config), opts, skip_full)
        }
        _ => prepare(l, opts, skip_full),
    });
    let (mut config, mut live) = match (config, live) {
        (None, None) => return Err(DiffError::BothAbsent),
        (None, Some(live)) => {
            return Ok(DiffResult {
                modified: false,
                normalized_live: if keep { live } else { Value::Null },
                predicted_live: Value::Null,
                patch: Vec::new(),
                mode: DiffMode::LiveOnly,
            });
        }
        (Some(config), None) => {
            let predicted_live = if keep { config.clone() } else { Value::Null };
            let patch = vec![PatchOp {
                op: "add".into(),
                path: String::new(),
                value: Some(config),
                from: None,
            }];
            return Ok(DiffResult {
                modified: true,
                normalized_live: Value::Null,
                predicted_live,
                patch,
                mode: DiffMode::Create,
            });
        }
        (Some(c), Some(l)) => (c, l),
    };
    let object = ObjectRef::from_object_lossy(&config);
    if opts.server_side_diff {
        return server_side_diff(&config, &live, opts, &object);
    }
    // Argo CD 3.6 compares an object annotated `ServerSideApply=true` by server-side diff when
    // that is on, else by the client-side diff below: structured-merge diff only on request.
    if opts.structured_merge {
        return structured_merge_diff(&config, &live, opts.openapi, &object);
    }
    // Step 1 of `ThreeWayDiff` on the working copies: the prediction reads them borrowed.
    remove_namespace_annotation(&mut config);
    let orig = match last_applied(&live) {
        Some(Ok(mut orig)) => {
            normalize(&mut orig, opts, false);
            remove_namespace_annotation(&mut orig);
            Some(orig)
        }
        _ => None,
    };
    let aside = ManagedFields::set_aside(&mut live, &config, orig.as_ref());
    if let Some(orig) = orig
        && let Ok(p) = three_way_predict(&orig, &config, &mut live, keep)
    {
        return Ok(aside.put_back(finish_prediction(live, p, DiffMode::ThreeWay, keep)));
    }
    match three_way_predict(&config, &config, &mut live, keep) {
        Ok(p) => Ok(aside.put_back(finish_prediction(live, p, DiffMode::TwoWay, keep))),
        Err(f) => {
            Err(DiffError::Patch { object: Box::new(object), path: f.path, message: f.message })
        }
    }
}

/// Live's `metadata.managedFields`, set aside while the prediction runs when neither the
/// desired object nor the last-applied one has the field: no patch can then touch it, no
/// defaulter reads or writes it, and it is the same on both sides of the comparison, so it
/// would only be copied, defaulted and compared for nothing. A built-in object's field is set
/// aside only when it decodes as its type (otherwise the whole object is left undefaulted,
/// and that must not change). It is put back into the result's objects when they are kept.
struct ManagedFields(Option<Value>);

impl ManagedFields {
    fn set_aside(live: &mut Value, config: &Value, orig: Option<&Value>) -> ManagedFields {
        if has_managed_fields(config) || orig.is_some_and(has_managed_fields) {
            return ManagedFields(None);
        }
        match managed_fields(live) {
            Some(fields) if decodes_if_builtin(live, fields) => {}
            _ => return ManagedFields(None),
        }
        let meta = live.get_mut("metadata").and_then(Value::as_object_mut);
        ManagedFields(meta.and_then(|m| m.remove("managedFields")))
    }

    /// Live's working copy without `metadata.managedFields` when [`ManagedFields::set_aside`]
    /// would set it aside once live is prepared (checked on live as given: the desired
    /// object, already prepared, and the last-applied text do not have the field, and a
    /// built-in object's field strictly decodes, as it then still does once remarshalled);
    /// else live as it is. Only for a caller that drops the result's objects and whose
    /// normaliser reads no more of live than the pointers it removes ([`Keep::PatchUnread`]):
    /// remarshal and the normaliser then treat every other field the same without it.
    fn leave_out<'v>(live: Cow<'v, Value>, config: &Value) -> Cow<'v, Value> {
        let Some(fields) = managed_fields(&live) else { return live };
        let last_applied = crate::object::annotation(&live, crate::config::LAST_APPLIED_ANNOTATION)
            .unwrap_or_default();
        if has_managed_fields(config)
            || crate::object::last_applied_may_hold_managed_fields(last_applied)
            || !decodes_if_builtin(&live, fields)
        {
            return live;
        }
        match live {
            Cow::Owned(mut v) => {
                if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
                Cow::Owned(v)
            }
            Cow::Borrowed(v) => Cow::Owned(clone_without_managed_fields(v)),
        }
    }

    fn put_back(self, mut result: DiffResult) -> DiffResult {
        let Some(fields) = self.0 else { return result };
        for side in [&mut result.normalized_live, &mut result.predicted_live] {
            if let Some(meta) = side.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("managedFields".to_owned(), fields.clone());
            }
        }
        result
    }
}

/// Whether an object has `metadata.managedFields`.
fn has_managed_fields(obj: &Value) -> bool {
    managed_fields(obj).is_some()
}

/// An object's `metadata.managedFields`, read by key (`Value::pointer` splits the pointer and
/// copies each of its tokens, about 2,500 instructions a call).
fn managed_fields(obj: &Value) -> Option<&Value> {
    obj.get("metadata")?.get("managedFields")
}

/// Whether live's `managedFields` (`fields`) can be set aside as far as its type goes: a
/// built-in object's field must strictly decode (otherwise the whole object is left
/// undefaulted, and must stay so); any other object's can.
fn decodes_if_builtin(live: &Value, fields: &Value) -> bool {
    let Some((g, v, k)) = schema::gvk_of(live).filter(|&(g, v, k)| schema::is_builtin(g, v, k))
    else {
        return true;
    };
    schema::lookup(g, v, k)
        .and_then(|t| t.field("metadata"))
        .and_then(|t| t.field("managedFields"))
        .is_some_and(|t| decodes_strictly(fields, t))
}

/// A copy of an object without `metadata.managedFields`.
fn clone_without_managed_fields(obj: &Value) -> Value {
    let Value::Object(map) = obj else { return obj.clone() };
    let copy = map.iter().map(|(k, v)| {
        let v = match v {
            Value::Object(meta) if k == "metadata" => Value::Object(
                meta.iter()
                    .filter(|(mk, _)| *mk != "managedFields")
                    .map(|(mk, mv)| (mk.clone(), mv.clone()))
                    .collect(),
            ),
            other => other.clone(),
        };
        (k.clone(), v)
    });
    Value::Object(copy.collect())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            "[a-z+/=]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof!["[a-z]{1,3}", Just("name".to_string()), Just("data".to_string())],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn object(kind: &str, body: Value, fields: Value) -> Value {
        let mut o = json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": "x",
            "managedFields": [{"manager": "argocd-controller", "operation": "Apply",
                "fieldsV1": fields}]}});
        if let (Some(m), Value::Object(b)) = (o.as_object_mut(), body) {
            for (k, v) in b {
                m.entry(k).or_insert(v);
            }
        }
        o
    }

    #[test]
    fn managed_fields_set_aside_come_back_in_kept_objects() {
        let fields = json!([{"manager": "kubectl", "operation": "Update",
            "fieldsV1": {"f:data": {"f:a": {}}}}]);
        let desired = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "n"}, "spec": {"replicas": 2}});
        let mut live = desired.clone();
        live["spec"]["replicas"] = json!(3);
        live["metadata"]["managedFields"] = fields.clone();
        let r = diff(Some(&desired), Some(&live), &DiffOptions::default()).unwrap();
        assert!(r.modified);
        assert_eq!(r.normalized_live["metadata"]["managedFields"], fields);
        assert_eq!(r.predicted_live["metadata"]["managedFields"], fields);
        assert!(r.patch.iter().all(|op| !op.path.contains("managedFields")));
        // Not of its type: not set aside (the object is then left undefaulted), and kept.
        live["metadata"]["managedFields"] = json!("not a list");
        let r = diff(Some(&desired), Some(&live), &DiffOptions::default()).unwrap();
        assert_eq!(r.normalized_live["metadata"]["managedFields"], json!("not a list"));
        assert_eq!(r.predicted_live["metadata"]["managedFields"], json!("not a list"));
    }

    /// Live's working copy made without its managedFields (`Keep::PatchUnread`) gives the
    /// answer of the copy made with them (`Keep::Patch`): when the prediction sets the field
    /// aside, when it cannot (the desired object or last-applied has the field, it does not
    /// decode as its type) and for a custom resource; and the field is not copied when set
    /// aside.
    #[test]
    fn managed_fields_left_out_give_the_same_answer() {
        let fields = json!([{"manager": "kubectl", "operation": "Update",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}}]);
        let desired = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "n"}, "spec": {"replicas": 2}});
        let mut live = desired.clone();
        live["spec"]["replicas"] = json!(3);
        live["metadata"]["managedFields"] = fields.clone();
        let la = crate::config::LAST_APPLIED_ANNOTATION;
        let last = |v: &Value| {
            let mut o = v.clone();
            o["metadata"]["annotations"][la] = json!(desired.to_string());
            o
        };
        let mut cases = vec![(desired.clone(), live.clone()), (desired.clone(), last(&live))];
        // The desired object has the field; so has last-applied; not of its type.
        let mut d = desired.clone();
        d["metadata"]["managedFields"] = fields.clone();
        cases.push((d.clone(), live.clone()));
        let mut l = live.clone();
        l["metadata"]["annotations"][la] = json!(d.to_string());
        cases.push((desired.clone(), l));
        let mut l = live.clone();
        l["metadata"]["managedFields"] = json!([{"manager": 1}]);
        cases.push((desired.clone(), l));
        // A custom resource (a JSON merge patch) and an object without the field.
        let cr = |n: u8| {
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "managedFields": fields}, "spec": {"n": n}})
        };
        cases.push((cr(1), cr(2)));
        cases.push((desired.clone(), desired.clone()));
        let opts = DiffOptions::default();
        for (d, l) in &cases {
            let full = |kept| {
                diff_objects(Some(Cow::Borrowed(d)), Some(Cow::Borrowed(l)), &opts, kept)
                    .map(|r| (r.modified, r.patch, r.mode))
                    .map_err(|e| e.to_string())
            };
            assert_eq!(full(Keep::PatchUnread), full(Keep::Patch), "{d} {l}");
        }
        let left = ManagedFields::leave_out(Cow::Borrowed(&live), &desired);
        assert!(matches!(left, Cow::Owned(_)));
        assert_eq!(left.pointer("/metadata/managedFields"), None);
        assert_eq!(left.pointer("/spec/replicas"), Some(&json!(3)));
        let kept = ManagedFields::leave_out(Cow::Borrowed(&live), &d);
        assert!(matches!(kept, Cow::Borrowed(_)));
    }

    proptest! {
        // Bad input is an error or a result, never a panic, in every mode.
        #[test]
        fn no_panics(a in arb_json(), b in arb_json(), f in arb_json(), kind in prop_oneof![
            Just("Secret"), Just("ClusterRole"), Just("Endpoints"), Just("Widget")]) {
            let desired = object(kind, a, json!({}));
            let live = object(kind, b, f);
            let dry = live.clone();
            for opts in [
                DiffOptions::default(),
                DiffOptions::default().with_structured_merge(true),
                DiffOptions::default().with_server_side_diff(Some(&dry)),
                DiffOptions::default().with_ignore_aggregated_roles(true),
            ] {
                let _ = diff(Some(&desired), Some(&live), &opts);
            }
            let _ = crate::diff::hide_secret_data(Some(&desired), Some(&live), &["a".into()]);
            let mut d = desired.clone();
            let mut l = live.clone();
            crate::diff::normalize_managed_fields(&mut l, &mut d, &["argocd-controller".into()]);
        }
    }
}
