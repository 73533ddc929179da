//! `RespectIgnoreDifferences=true` (Argo CD 3.6.2 controller/sync.go `normalizeTargetResources`):
//! before a sync applies the desired objects, the fields the ignore rules hide take their live
//! values, so a sync does not undo what the rules tell the diff to ignore.
//!
//! For each pair of a target and its live object:
//!
//! 1. both are normalized as for the diff: resource tracking (util/argo/resource_tracking.go),
//!    `managedFieldsManagers`, then the JSON pointers and jq expressions, then the known types. The
//!    rule the target declares in its `gitops-core.io/ignore-differences` annotation (unless the
//!    normalizer has it turned off) counts as one more app rule for this pair, after the others; a
//!    live object's annotation is never read, and an invalid one on the target is an error;
//! 2. the live values the normalization removed are computed as a patch from the normalized
//!    live object to the live object, both without `status` (never copied): a three-way
//!    strategic merge patch for built-in kinds, a JSON merge patch (RFC 7386) otherwise;
//! 3. the patch is applied to the normalized target;
//! 4. fields the rules do not hide are put back to their Git values where the patch replaced
//!    them (a `patchStrategy: replace` field such as a PodDisruptionBudget's selector, #18232),
//!    and live-only fields the rules do not hide are dropped.
//!
//! A target without a live object (a creation) is returned unchanged, and a live object
//! without a target (a prune) stays without one.

use serde::Serialize;
use serde_json::{Map, Value};

use super::merge_patch::apply_merge_patch;
use super::remarshal::normalize_known_types;
use super::smp::{apply_strategic_patch, is_builtin, three_way_strategic_patch};
use crate::config::{Settings, TrackingMethod};
use crate::ignore::{IgnoreError, IgnoreNormalizer};
use crate::managed_fields::trusted_managers_normalize as managed_fields_normalize;
use crate::object::ObjectRef;
use crate::vocabulary::TRACKING_ID_ANNOTATION;

/// One target after `RespectIgnoreDifferences`, in the order of the input.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RespectedTarget {
    /// The object to apply; `None` where the target was `None` (a resource to prune).
    pub object: Option<Value>,
    /// Whether live values were copied in (false for creations and prunes).
    pub respected: bool,
}

impl IgnoreNormalizer {
    /// Applies `RespectIgnoreDifferences` to targets and their live counterparts, paired by
    /// position (`None` for a missing side).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::ignore::IgnoreNormalizer;
    /// use gitops_core::config::Settings;
    /// let n = IgnoreNormalizer::new(&[], &Settings::default()).unwrap();
    /// let target = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "c"}, "data": {"a": "1"}});
    /// // A creation: nothing live to copy from, the target is applied as it is.
    /// let out = n.respect_ignore_differences(&[Some(target.clone())], &[None]).unwrap();
    /// assert_eq!(out[0].object.as_ref(), Some(&target));
    /// assert!(!out[0].respected);
    /// ```
    pub fn respect_ignore_differences(
        &self,
        targets: &[Option<Value>],
        lives: &[Option<Value>],
    ) -> Result<Vec<RespectedTarget>, IgnoreError> {
        let normalizer = self;
        if targets.len() != lives.len() {
            return Err(IgnoreError::Unpaired { targets: targets.len(), lives: lives.len() });
        }
        targets
            .iter()
            .zip(lives)
            .map(|(target, live)| match (target, live) {
                (None, _) => Ok(RespectedTarget { object: None, respected: false }),
                (Some(t), None) => {
                    Ok(RespectedTarget { object: Some(t.clone()), respected: false })
                }
                (Some(t), Some(l)) => respect_one(normalizer, t, l)
                    .map(|o| RespectedTarget { object: Some(o), respected: true }),
            })
            .collect()
    }
}

fn respect_one(n: &IgnoreNormalizer, target: &Value, live: &Value) -> Result<Value, IgnoreError> {
    let r = ObjectRef::from_object_lossy(target);
    let (mut norm_target, mut norm_live) = (target.clone(), live.clone());
    normalize_tracking(&mut norm_target, &mut norm_live, n.settings());
    let own = n.annotation_rule(target)?;
    let mut managers = n.managed_fields_managers(&r);
    for m in own.iter().flat_map(|o| o.managed_fields_managers()) {
        if !managers.contains(m) {
            managers.push(m.clone());
        }
    }
    managed_fields_normalize(&mut norm_live, &mut norm_target, &managers);
    for obj in [&mut norm_target, &mut norm_live] {
        n.normalize(obj)?;
        if let Some(own) = &own {
            own.normalize(obj)?;
        }
        let fields = n.known_type_fields(&ObjectRef::from_object_lossy(obj));
        normalize_known_types(obj, &fields).map_err(|f| IgnoreError::Patch {
            object: Box::new(r.clone()),
            path: f.path,
            message: f.message,
        })?;
    }
    let live_p = without_status(live);
    let norm_live_p = without_status(&norm_live);
    let patched = if is_builtin(&r.group, &r.version, &r.kind) {
        let patch = three_way_strategic_patch(
            &live_p,
            &live_p,
            &norm_live_p,
            &r.group,
            &r.version,
            &r.kind,
        )
        .map_err(|f| IgnoreError::Patch {
            object: Box::new(r.clone()),
            path: f.path,
            message: f.message,
        })?;
        apply_strategic_patch(&norm_target, &patch, &r.group, &r.version, &r.kind).map_err(|f| {
            IgnoreError::Patch { object: Box::new(r.clone()), path: f.path, message: f.message }
        })?
    } else {
        apply_merge_patch(&norm_target, &create_merge_patch(&norm_live_p, &live_p))
    };
    let mut patched = patched;
    if let (Some(p), Some(o)) = (patched.as_object_mut(), target.as_object()) {
        restore_non_ignored_fields(p, o, norm_target.as_object(), norm_live.as_object(), 0);
    }
    Ok(patched)
}

/// Argo CD's resource-tracking normalization (Argo CD 3.6.2 util/argo/resource_tracking.go
/// `resourceTracking.Normalize`): with annotation tracking, a live object still carrying the
/// app-instance label gets the target's tracking annotation when it has none, and loses the label
/// when the target does not set it. CRDs are left alone.
fn normalize_tracking(target: &mut Value, live: &mut Value, settings: &Settings) {
    if settings.tracking_method == TrackingMethod::Label {
        return;
    }
    let key = settings.instance_label_key.as_str();
    if crate::object::label(live, key).is_none()
        || (live.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
            && live
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|v| v.starts_with("apiextensions.k8s.io/")))
    {
        return;
    }
    if crate::object::annotation(live, TRACKING_ID_ANNOTATION).is_none()
        && let Some(id) = crate::object::annotation(target, TRACKING_ID_ANNOTATION)
    {
        let id = Value::String(id.to_string());
        if let Some(meta) = live.get_mut("metadata").and_then(Value::as_object_mut) {
            let annotations = meta.entry("annotations").or_insert(Value::Null);
            if !annotations.is_object() {
                *annotations = Value::Object(Map::new());
            }
            if let Some(a) = annotations.as_object_mut() {
                a.insert(TRACKING_ID_ANNOTATION.to_string(), id);
            }
        }
    }
    if crate::object::label(target, key).is_none()
        && let Some(labels) = live.pointer_mut("/metadata/labels").and_then(Value::as_object_mut)
    {
        labels.remove(key);
    }
}

fn without_status(obj: &Value) -> Value {
    let mut o = obj.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("status");
    }
    o
}

/// RFC 7386 `CreateMergePatch(original, modified)`: the merge patch that turns `original`
/// into `modified` (objects recursively, everything else replaced whole).
pub(crate) fn create_merge_patch(original: &Value, modified: &Value) -> Value {
    merge_patch_at(original, modified, 0)
}

/// Deepest level compared key by key; below it a changed value is replaced whole.
const MAX_DEPTH: usize = 128;

fn merge_patch_at(original: &Value, modified: &Value, depth: usize) -> Value {
    match (original, modified) {
        _ if depth > MAX_DEPTH => modified.clone(),
        (Value::Object(o), Value::Object(m)) => {
            let mut patch = Map::new();
            for (k, mv) in m {
                match o.get(k) {
                    Some(ov) if ov == mv => {}
                    Some(ov @ Value::Object(_)) if mv.is_object() => {
                        patch.insert(k.clone(), merge_patch_at(ov, mv, depth + 1));
                    }
                    _ => {
                        patch.insert(k.clone(), mv.clone());
                    }
                }
            }
            for k in o.keys() {
                if !m.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            Value::Object(patch)
        }
        _ => modified.clone(),
    }
}

/// Argo CD's `restoreNonIgnoredFields`: walks the maps of the original target; a field the
/// normalization left as it was (the normalized target holds the original value) is restored
/// where the patch changed or removed it; then a key the patch added that the original target
/// lacks but the normalized live object has (a live-only field no rule hides) is removed.
fn restore_non_ignored_fields(
    patched: &mut Map<String, Value>,
    original: &Map<String, Value>,
    norm_target: Option<&Map<String, Value>>,
    norm_live: Option<&Map<String, Value>>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    for (k, ov) in original {
        let nt = norm_target.and_then(|m| m.get(k));
        match (ov, patched.get_mut(k), nt) {
            (Value::Object(om), Some(Value::Object(pm)), Some(Value::Object(ntm))) => {
                let nl = norm_live.and_then(|m| m.get(k)).and_then(Value::as_object);
                restore_non_ignored_fields(pm, om, Some(ntm), nl, depth + 1);
            }
            // A leaf, a changed type or a missing key the normalization did not touch.
            (_, current, Some(ntv)) if ntv == ov && current.as_deref() != Some(ov) => {
                patched.insert(k.clone(), ov.clone());
            }
            _ => {}
        }
    }
    let leaked: Vec<String> = patched
        .keys()
        .filter(|k| !original.contains_key(*k) && norm_live.is_some_and(|m| m.contains_key(*k)))
        .cloned()
        .collect();
    for k in leaked {
        patched.remove(&k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_creation() {
        let original = json!({"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2], "gone": true});
        let modified = json!({"a": 1, "b": {"c": 5, "d": 3}, "l": [1], "new": {"x": null}});
        assert_eq!(
            create_merge_patch(&original, &modified),
            json!({"b": {"c": 5}, "l": [1], "new": {"x": null}, "gone": null})
        );
        assert_eq!(create_merge_patch(&json!(1), &json!([1])), json!([1]));
    }

    #[test]
    fn status_is_never_in_the_live_patch() {
        let live = json!({"spec": {"a": 1}, "status": {"phase": "Running"}});
        let norm_live = json!({"spec": {}});
        let patch = create_merge_patch(&without_status(&norm_live), &without_status(&live));
        assert_eq!(patch, json!({"spec": {"a": 1}}));
    }

    fn restore(patched: Value, original: Value, nt: Value, nl: Value) -> Value {
        let mut p = patched;
        restore_non_ignored_fields(
            p.as_object_mut().unwrap(),
            original.as_object().unwrap(),
            nt.as_object(),
            nl.as_object(),
            0,
        );
        p
    }

    /// The PodDisruptionBudget selector of #18232 (R14–R17): `replace` brought the live
    /// selector in whole.
    #[test]
    fn restore_repairs_replace_collateral() {
        let original = json!({"spec": {"selector": {
            "matchLabels": {"app": "myapp-v2", "version": "v2"},
            "matchExpressions": [{"key": "tier"}]}}});
        let nt = json!({"spec": {"selector": {
            "matchLabels": {"app": "myapp-v2"}, "matchExpressions": [{"key": "tier"}]}}});
        let nl = json!({"spec": {"selector": {"matchLabels": {"app": "myapp", "track": "s"}}}});
        let patched = json!({"spec": {"selector": {
            "matchLabels": {"app": "myapp", "version": "v1", "track": "s"}}}});
        assert_eq!(
            restore(patched, original.clone(), nt, nl),
            json!({"spec": {"selector": {
                "matchLabels": {"app": "myapp-v2", "version": "v1"},
                "matchExpressions": [{"key": "tier"}]}}})
        );
        // The whole selector ignored: the live one stays.
        let nt = json!({"spec": {}});
        let nl = json!({"spec": {}});
        let patched = json!({"spec": {"selector": {"matchLabels": {"app": "myapp"}}}});
        assert_eq!(restore(patched.clone(), original, nt, nl), patched);
    }

    #[test]
    fn tracking_normalization() {
        let settings = crate::config::Settings::default();
        let target = json!({"kind": "Deployment", "metadata": {"annotations": {
            "argocd.argoproj.io/tracking-id": "app:apps/Deployment:ns/d"}}});
        let mut t = target.clone();
        let mut live = json!({"kind": "Deployment", "metadata": {
            "labels": {"app.kubernetes.io/instance": "app", "keep": "x"}}});
        normalize_tracking(&mut t, &mut live, &settings);
        assert_eq!(t, target);
        assert_eq!(
            live,
            json!({"kind": "Deployment", "metadata": {"labels": {"keep": "x"}, "annotations": {
                "argocd.argoproj.io/tracking-id": "app:apps/Deployment:ns/d"}}})
        );
        // A different existing annotation is left alone; without the label nothing changes.
        let mut live = json!({"metadata": {"annotations": {"argocd.argoproj.io/tracking-id": "other"},
            "labels": {"app.kubernetes.io/instance": "app"}}});
        normalize_tracking(&mut t, &mut live, &settings);
        assert_eq!(live["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"], "other");
        let mut plain = json!({"metadata": {}});
        normalize_tracking(&mut t, &mut plain, &settings);
        assert_eq!(plain, json!({"metadata": {}}));
    }

    #[test]
    fn creations_and_prunes_pass_through() {
        let n = IgnoreNormalizer::new(&[], &crate::config::Settings::default()).unwrap();
        let t = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let out = n
            .respect_ignore_differences(&[None, Some(t.clone())], &[Some(t.clone()), None])
            .unwrap();
        assert_eq!(out[0], RespectedTarget { object: None, respected: false });
        assert_eq!(out[1], RespectedTarget { object: Some(t), respected: false });
        let err = n.respect_ignore_differences(&[None], &[]).unwrap_err();
        assert_eq!(err.to_string(), "1 targets but 0 live objects: the lists must pair up");
    }
}
