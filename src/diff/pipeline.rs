//! gitops-engine's `Diff` for one pair (spec §1.4, §2 "Diff itself", §3): choosing the
//! algorithm, normalising both sides, three-way and two-way patches.

use serde_json::Value;

use super::json::canonical_eq;
use super::normalize::{last_applied, normalize_object, remove_namespace_annotation};
use super::patch::json_patch_ops;
use super::smp::PatchFailure;
use super::{
    DiffError, DiffMode, DiffOptions, DiffResult, PatchOp, apply_defaults, apply_merge_patch,
    apply_strategic_patch, is_builtin, managed_fields, remarshal, remove_list_fields,
    remove_map_fields, three_way_json_merge_patch, three_way_strategic_patch,
};
use crate::object::{ObjectRef, split_api_version};

/// Compares a desired object with a live object, as gitops-engine's `Diff(config, live)`.
///
/// Either side may be absent, not both. The algorithm is chosen as in spec §0: server-side
/// diff when [`DiffOptions::server_side_diff`] is set, structured-merge diff when
/// [`DiffOptions::structured_merge`] is set or the desired object's
/// `argocd.argoproj.io/sync-options` holds `ServerSideApply=true`, else a three-way diff with
/// the live object's `kubectl.kubernetes.io/last-applied-configuration`, falling back to a
/// two-way diff when there is none or the three-way patch fails.
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
    let skip_full = opts.server_side_diff;
    let config = desired.map(|c| prepare(c, opts, skip_full));
    let live = live.map(|l| prepare(l, opts, skip_full));
    let (config, live) = match (config, live) {
        (None, None) => return Err(DiffError::BothAbsent),
        (None, Some(live)) => {
            return Ok(DiffResult {
                modified: false,
                normalized_live: live,
                predicted_live: Value::Null,
                patch: Vec::new(),
                mode: DiffMode::LiveOnly,
            });
        }
        (Some(config), None) => {
            let patch = vec![PatchOp {
                op: "add".into(),
                path: String::new(),
                value: Some(config.clone()),
                from: None,
            }];
            return Ok(DiffResult {
                modified: true,
                normalized_live: Value::Null,
                predicted_live: config,
                patch,
                mode: DiffMode::Create,
            });
        }
        (Some(c), Some(l)) => (c, l),
    };
    let object = ObjectRef::from_object_lossy(&config);
    if opts.server_side_diff {
        return managed_fields::server_side_diff(&config, &live, opts, &object);
    }
    let ssa_annotation =
        crate::config::resource_sync_options(&config).contains(&"ServerSideApply=true");
    if opts.structured_merge || ssa_annotation {
        return managed_fields::structured_merge_diff(&config, &live, opts.openapi, &object);
    }
    if let Some(Ok(mut orig)) = last_applied(&live) {
        normalize(&mut orig, opts, false);
        if let Ok(r) = three_way(&orig, &config, &live, DiffMode::ThreeWay) {
            return Ok(r);
        }
    }
    three_way(&config, &config, &live, DiffMode::TwoWay).map_err(|f| DiffError::Patch {
        object: Box::new(object),
        path: f.path,
        message: f.message,
    })
}

/// `remarshal` then `Normalize`.
pub(crate) fn prepare(obj: &Value, opts: &DiffOptions<'_>, skip_full: bool) -> Value {
    let mut v = remarshal(obj);
    normalize(&mut v, opts, skip_full);
    v
}

/// gitops-engine's `Normalize`: creation timestamp, kind-specific rules, then the full
/// normaliser unless skipped.
pub(crate) fn normalize(obj: &mut Value, opts: &DiffOptions<'_>, skip_full: bool) {
    normalize_object(obj, opts.ignore_aggregated_roles);
    if !skip_full && let Some(n) = opts.normalizer {
        n.normalize(obj);
    }
}

/// Builds a result from the two sides, comparing them canonically.
pub(crate) fn finish(live: Value, predicted: Value, mode: DiffMode) -> DiffResult {
    let modified = !canonical_eq(&live, &predicted);
    let patch = if modified { json_patch_ops(&live, &predicted) } else { Vec::new() };
    DiffResult { modified, normalized_live: live, predicted_live: predicted, patch, mode }
}

/// `ThreeWayDiff(orig, config, live)` (spec §3.1); the two-way diff passes `orig = config`.
fn three_way(
    orig: &Value,
    config: &Value,
    live: &Value,
    mode: DiffMode,
) -> Result<DiffResult, PatchFailure> {
    let mut orig = orig.clone();
    let mut config = config.clone();
    remove_namespace_annotation(&mut orig);
    remove_namespace_annotation(&mut config);
    let api = orig.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let (group, version) = split_api_version(api);
    let kind = orig.get("kind").and_then(Value::as_str).unwrap_or("");
    if is_builtin(group, version, kind) {
        let mut live_for_patch = live.clone();
        if kind == "StatefulSet" && matches!(group, "apps" | "extensions") {
            statefulset_workaround(&orig, &mut live_for_patch);
        }
        let patch =
            three_way_strategic_patch(&orig, &config, &live_for_patch, group, version, kind)?;
        let predicted = apply_strategic_patch(live, &patch, group, version, kind)?;
        let predicted = apply_defaults(&predicted);
        let live = apply_defaults(live);
        Ok(finish(live, predicted, mode))
    } else {
        let live_for_patch = remove_map_fields(&orig, live);
        let patch = three_way_json_merge_patch(&orig, &config, &live_for_patch)?;
        let predicted = apply_merge_patch(live, &patch);
        Ok(finish(live.clone(), predicted, mode))
    }
}

/// The StatefulSet `volumeClaimTemplates` workaround: live's list is stripped positionally to
/// the keys of last-applied's list, for computing the patch only.
fn statefulset_workaround(orig: &Value, live: &mut Value) {
    let Some(Value::Array(orig_list)) = orig.pointer("/spec/volumeClaimTemplates") else {
        return;
    };
    if let Some(slot @ Value::Array(_)) = live.pointer_mut("/spec/volumeClaimTemplates") {
        let live_list = slot.as_array().cloned().unwrap_or_default();
        *slot = Value::Array(remove_list_fields(orig_list, &live_list));
    }
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
