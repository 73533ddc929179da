//! Prediction by merge kind (gitops-engine pkg/diff/diff.go `ThreeWayDiff`, `threeWayMergePatch`):
//! what the live object becomes when the desired object is applied with kubectl's three-way patch.
//! Built-in kinds get a strategic merge patch and Kubernetes defaults on both sides; anything else
//! a JSON merge patch.

use serde_json::Value;

use super::defaults::{Known, apply_defaults_in_place, in_place_as, may_take_the_patch_path};
use super::error::PatchFailure;
use super::merge_patch::{
    apply_merge_patch, remove_list_fields, remove_map_fields, three_way_json_merge_patch,
};
use super::smp::{apply_typed_in_place, is_builtin, leaves_unchanged_typed, three_way_typed};
use crate::schema;

/// What the live object becomes.
#[derive(Debug)]
pub(crate) enum Predicted {
    /// Exactly the (defaulted) live object: the patch changes nothing (most resources).
    Same,
    /// Another object.
    Changed(Value),
}

impl Predicted {
    /// The predicted object, given the defaulted live one.
    #[cfg(test)]
    pub(crate) fn into_value(self, live: &Value) -> Value {
        match self {
            Predicted::Same => live.clone(),
            Predicted::Changed(v) => v,
        }
    }
}

/// The patch-and-default core of Argo CD's `ThreeWayDiff` (gitops-engine pkg/diff/diff.go, steps
/// 1-2): `orig` (last-applied, or `config` in two-way mode), `config` and `live` are already
/// remarshalled and normalised, and `orig` and `config` have been through
/// `removeNamespaceAnnotation` (step 1). Built-in kinds (decided by `orig`'s GVK) get the
/// StatefulSet `volumeClaimTemplates` workaround, a three-way strategic merge patch computed from
/// the borrowed objects and applied to one working copy of live, and Kubernetes defaults applied in
/// place on both sides; anything else gets the three-way JSON merge patch against
/// `RemoveMapFields(orig, live)`. `Modified` is the canonical inequality of live and the
/// prediction.
///
/// On success `live` has its defaults, except for an unchanged prediction when the caller
/// does not keep the objects (`keep` off): both sides would get the same defaults, so the
/// comparison's answer is the same without them. On an error (Argo CD then falls back to the
/// two-way diff) `live` is left as it was.
pub(crate) fn three_way_predict(
    orig: &Value,
    config: &Value,
    live: &mut Value,
    keep: bool,
) -> Result<Predicted, PatchFailure> {
    let (g, v, k) = schema::gvk_of(orig).unwrap_or(("", "", ""));
    // The type is looked up once, for the patch, its application and both sides' defaults.
    if is_builtin(g, v, k)
        && let Some(t) = schema::lookup(g, v, k)
    {
        // The StatefulSet workaround patches against live with its claim templates stripped:
        // they are swapped in for the patch's computation and swapped back after it.
        let mut stripped = None;
        if (g == "apps" || g == "extensions")
            && k == "StatefulSet"
            && let (Some(Value::Array(o)), Some(Value::Array(l))) =
                (claim_templates(orig), claim_templates(live))
        {
            stripped = Some(Value::Array(remove_list_fields(o, l)));
        }
        let patch = match stripped {
            Some(mut stripped) => {
                swap_claim_templates(live, &mut stripped);
                let patch = three_way_typed(orig, config, live, Some(t));
                swap_claim_templates(live, &mut stripped);
                patch?
            }
            None => three_way_typed(orig, config, live, Some(t))?,
        };
        // An empty patch, or one that only deletes keys live lacks, leaves live as it is: no
        // working copy is needed. The patch's keys are
        // kept to say where the prediction differs from live.
        let (mut predicted, applied) = if patch.as_object().is_some_and(serde_json::Map::is_empty)
            || leaves_unchanged_typed(live, &patch, t)
        {
            (None, None)
        } else {
            let mut predicted = live.clone();
            let applied = patch.clone();
            apply_typed_in_place(&mut predicted, patch, Some(t))?;
            (Some(predicted).filter(|p| p != &*live), Some(applied))
        };
        let known = Known { t, gvk: (g, v, k) };
        default_both(predicted.as_mut(), applied.as_ref(), live, keep, known)?;
        Ok(match predicted {
            None => Predicted::Same,
            Some(p) => Predicted::Changed(p),
        })
    } else {
        let live_for_patch = remove_map_fields(orig, live);
        let patch = three_way_json_merge_patch(orig, config, &live_for_patch)?;
        let predicted = apply_merge_patch(live, &patch);
        Ok(if predicted == *live { Predicted::Same } else { Predicted::Changed(predicted) })
    }
}

/// The defaults of both sides, the prediction's first as in Argo CD's `applyPatch`; a side
/// whose defaults patch cannot be applied fails the prediction (live is then left as it was).
/// Live's are skipped with an unchanged prediction when the objects are not kept, unless
/// live's defaults may need a patch: Argo CD defaults the unchanged prediction too, and its
/// defaults patch fails where Go's `$setElementOrder` check refuses a repeated merge key,
/// which the three-way patch let pass.
///
/// With a prediction both sides get their defaults: whether live takes the in-place path is
/// asked once, and the prediction's answer then follows from what the `applied` patch
/// touched (the rest of the prediction is live's).
fn default_both(
    predicted: Option<&mut Value>,
    applied: Option<&Value>,
    live: &mut Value,
    keep: bool,
    known: Known,
) -> Result<(), PatchFailure> {
    let live_in_place = predicted.as_ref().and_then(|_| in_place_as(live, Some(known)));
    let changed = predicted.is_some();
    if let Some(p) = predicted {
        match (&live_in_place, applied) {
            (Some(ip), Some(patch)) if ip.holds_after(p, live, patch) => ip.apply(p),
            _ => apply_defaults_in_place(p)?,
        }
    }
    if keep || changed || may_take_the_patch_path(live, Some(known)) {
        match &live_in_place {
            Some(ip) => ip.apply(live),
            None => apply_defaults_in_place(live)?,
        }
    }
    Ok(())
}

/// An object's `spec.volumeClaimTemplates` (read by key: `Value::pointer` parses its text
/// and allocates each token).
fn claim_templates(obj: &Value) -> Option<&Value> {
    obj.get("spec")?.get("volumeClaimTemplates")
}

/// Swaps live's `spec.volumeClaimTemplates` with `other`.
fn swap_claim_templates(live: &mut Value, other: &mut Value) {
    if let Some(templates) = live.get_mut("spec").and_then(|s| s.get_mut("volumeClaimTemplates")) {
        std::mem::swap(templates, other);
    }
}
