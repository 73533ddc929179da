//! Prediction by merge kind (spec diff.md §3.1): what the live object becomes when the desired
//! object is applied with kubectl's three-way patch. Built-in kinds get a strategic merge
//! patch and Kubernetes defaults on both sides; anything else a JSON merge patch.

use std::borrow::Cow;

use serde_json::Value;

use super::defaults::apply_defaults;
use super::error::PatchFailure;
use super::merge_patch::{
    apply_merge_patch, remove_list_fields, remove_map_fields, three_way_json_merge_patch,
};
use super::normalize::remove_namespace_annotation;
use super::smp::{apply_strategic_patch, is_builtin, three_way_strategic_patch};
use crate::schema;

/// The patch-and-default core of Argo CD's `ThreeWayDiff` (spec diff.md §3.1 steps 1-2):
/// `orig` (last-applied, or `config` in two-way mode), `config` and `live` are already
/// remarshalled and normalised. Built-in kinds (decided by `orig`'s GVK) get the StatefulSet
/// `volumeClaimTemplates` workaround, a three-way strategic merge patch applied to live, and
/// Kubernetes defaults on both sides; anything else gets the three-way JSON merge patch
/// against `RemoveMapFields(orig, live)`. Returns `(predicted, live)`; `Modified` is their
/// canonical inequality. An error means Argo CD falls back to the two-way diff.
pub(crate) fn three_way_predict(
    orig: &Value,
    config: &Value,
    live: &Value,
) -> Result<(Value, Value), PatchFailure> {
    let mut orig = orig.clone();
    let mut config = config.clone();
    remove_namespace_annotation(&mut orig);
    remove_namespace_annotation(&mut config);
    let (g, v, k) = schema::gvk_of(&orig).unwrap_or(("", "", ""));
    if is_builtin(g, v, k) {
        // The StatefulSet workaround patches against a copy; anything else against live.
        let mut live_for_patch = Cow::Borrowed(live);
        if (g == "apps" || g == "extensions")
            && k == "StatefulSet"
            && let (Some(Value::Array(o)), Some(Value::Array(l))) = (
                orig.pointer("/spec/volumeClaimTemplates"),
                live.pointer("/spec/volumeClaimTemplates"),
            )
        {
            let stripped = remove_list_fields(o, l);
            if let Some(spec) =
                live_for_patch.to_mut().get_mut("spec").and_then(Value::as_object_mut)
            {
                spec.insert("volumeClaimTemplates".to_owned(), Value::Array(stripped));
            }
        }
        let patch = three_way_strategic_patch(&orig, &config, &live_for_patch, g, v, k)?;
        let predicted = apply_strategic_patch(live, &patch, g, v, k)?;
        let defaulted_live = apply_defaults(live);
        // Nothing to change (most resources): the prediction's defaults are live's.
        let predicted =
            if predicted == *live { defaulted_live.clone() } else { apply_defaults(&predicted) };
        Ok((predicted, defaulted_live))
    } else {
        let live_for_patch = remove_map_fields(&orig, live);
        let patch = three_way_json_merge_patch(&orig, &config, &live_for_patch)?;
        Ok((apply_merge_patch(live, &patch), live.clone()))
    }
}
