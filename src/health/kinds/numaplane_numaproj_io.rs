//! `numaplane.numaproj.io`: ISBServiceRollout, MonoVertexRollout, NumaflowControllerRollout
//! and PipelineRollout, as Argo CD 3.6.2's scripts.

use super::lua::Field;
use super::shapes_c::lua_eq;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "numaplane.numaproj.io", kind: KINDS[0].kind, check: rollout::<0> },
    Rule { group: "numaplane.numaproj.io", kind: KINDS[1].kind, check: rollout::<1> },
    Rule { group: "numaplane.numaproj.io", kind: KINDS[2].kind, check: rollout::<2> },
    Rule { group: "numaplane.numaproj.io", kind: KINDS[3].kind, check: rollout::<3> },
];

/// The kinds read by [`rollout`], by the index its rule passes.
const KINDS: [Rollout; 4] = [
    Rollout {
        kind: "ISBServiceRollout",
        failed_reason: Some("ISBSvcFailed"),
        progressive: true,
        paused: None,
        unknown: "Unknown status",
    },
    Rollout {
        kind: "MonoVertexRollout",
        failed_reason: Some("MonoVertexFailed"),
        progressive: true,
        paused: Some("MonoVertexPausingOrPaused"),
        unknown: "Unknown MonoVertex status",
    },
    Rollout {
        kind: "NumaflowControllerRollout",
        failed_reason: None,
        progressive: false,
        paused: None,
        unknown: "Unknown status",
    },
    Rollout {
        kind: "PipelineRollout",
        failed_reason: Some("PipelineFailed"),
        progressive: true,
        paused: Some("PipelinePausingOrPaused"),
        unknown: "Unknown Pipeline status",
    },
];

/// How one rollout kind reads its status.
struct Rollout {
    /// The kind.
    kind: &'static str,
    /// The `ChildResourcesHealthy` `False` reason that degrades (`None`: any reason but
    /// `Progressing`).
    failed_reason: Option<&'static str>,
    /// Whether a `ProgressiveUpgradeSucceeded` `False` condition counts (it degrades, and an
    /// upgrade in progress does not wait for it).
    progressive: bool,
    /// The condition type that, `True`, is Healthy as paused.
    paused: Option<&'static str>,
    /// The message when nothing decides.
    unknown: &'static str,
}

/// Whether a condition is `kind` with status `status`.
fn is(c: Lv<'_>, kind: &str, status: &str) -> Result<bool, Fault> {
    Ok(c.get("type")?.is(kind) && c.get("status")?.is(status))
}

/// The conditions, walked as `ipairs` walks them; none when unset.
fn each<'a>(conditions: Lv<'a>) -> Result<impl Iterator<Item = Lv<'a>>, Fault> {
    let items = if conditions.is_nil() { None } else { Some(conditions.items()?) };
    Ok(items.into_iter().flatten())
}

/// Progressing (not reconciled, an upgrade in progress, a child progressing), then Degraded
/// (phase `Failed`, a failed child, a failed progressive upgrade), then paused, then a
/// healthy child; else Unknown.
fn rollout<const I: usize>(env: &Env<'_>) -> Result<Hs, Fault> {
    let r = &KINDS[I];
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", "Not yet reconciled"));
    }
    if !lua_eq(env.obj.path(&["metadata", "generation"])?, status.get("observedGeneration")?) {
        return Ok(Hs::new("Progressing", "Not yet reconciled"));
    }
    let upgrade = status.get("upgradeInProgress")?;
    let conditions = status.get("conditions")?;
    if (!upgrade.is_nil() && !upgrade.is("")) || status.get("phase")?.is("Pending") {
        let mut progressive_failed = false;
        if r.progressive {
            for c in each(conditions)? {
                if is(c, "ProgressiveUpgradeSucceeded", "False")? {
                    progressive_failed = true;
                }
            }
        }
        if !progressive_failed {
            return Ok(Hs::new("Progressing", "Update in progress"));
        }
    }
    for c in each(conditions)? {
        if is(c, "ChildResourcesHealthy", "False")? && c.get("reason")?.is("Progressing") {
            return Ok(Hs::new("Progressing", "Child Progressing"));
        }
    }
    if status.get("phase")?.is("Failed") {
        return Ok(Hs::new("Degraded", status.get("message")?));
    }
    for c in each(conditions)? {
        if is(c, "ChildResourcesHealthy", "False")? {
            let reason = c.get("reason")?;
            let failed = match r.failed_reason {
                Some(f) => reason.is(f),
                None => !reason.is("Progressing"),
            };
            if failed {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
        }
        if r.progressive && is(c, "ProgressiveUpgradeSucceeded", "False")? {
            return Ok(Hs::new("Degraded", "Progressive upgrade failed"));
        }
    }
    if let Some(paused) = r.paused {
        for c in each(conditions)? {
            if is(c, paused, "True")? {
                return Ok(Hs::new("Healthy", c.get("message")?));
            }
        }
    }
    for c in each(conditions)? {
        if is(c, "ChildResourcesHealthy", "True")? {
            return Ok(Hs::new("Healthy", "Healthy"));
        }
    }
    Ok(Hs::new("Unknown", Field::from(r.unknown)))
}
