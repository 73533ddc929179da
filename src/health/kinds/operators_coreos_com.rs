//! `operators.coreos.com`: Subscription, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "operators.coreos.com", kind: "Subscription", check: subscription }];

/// Every condition is listed (`<key>: <type> | <status>`) and counted: an `InstallPlanPending`
/// `True` is pending (skipped when a manual approval of an upgrade is pending), an
/// `InstallPlanMissing` (but for `ReferencedInstallPlanNotFound`) or a `True`
/// `CatalogSourcesUnhealthy`, `InstallPlanFailed` or `ResolutionFailed` degrades; then
/// `status.state` is listed and counted. Nothing counted is Healthy, only pending
/// Progressing, else Degraded, each with the list.
fn subscription(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    let conditions = if status.is_nil() { None } else { Some(status.get("conditions")?) };
    let Some(conditions) = conditions.filter(|c| !c.is_nil()) else {
        return Ok(Hs::new(
            "Progressing",
            "An install plan for a subscription is pending installation",
        ));
    };
    let (mut degraded, mut pending) = (0, 0);
    let mut msg = String::new();
    let mut manual_pending = false;
    let spec = env.obj.get("spec")?;
    if !spec.is_nil() && spec.get("installPlanApproval")?.is("Manual") {
        for (_, c) in conditions.pairs()? {
            if c.get("type")?.is("InstallPlanPending")
                && c.get("status")?.is("True")
                && c.get("reason")?.is("RequiresApproval")
            {
                if !status.get("installedCSV")?.is_nil() {
                    manual_pending = true;
                }
                break;
            }
        }
    }
    for (key, c) in conditions.members()? {
        if manual_pending && c.get("type")?.is("InstallPlanPending") {
            continue;
        }
        let t = c.get("type")?;
        let s = c.get("status")?;
        msg.push_str(&format!("{key}: {} | {}\n", t.text()?, s.text()?));
        if t.is("InstallPlanPending") && s.is("True") {
            pending += 1;
        } else if t.is("InstallPlanMissing") {
            if !c.get("reason")?.is("ReferencedInstallPlanNotFound") {
                degraded += 1;
            }
        } else if ["CatalogSourcesUnhealthy", "InstallPlanFailed", "ResolutionFailed"]
            .iter()
            .any(|k| t.is(k))
            && s.is("True")
        {
            degraded += 1;
        }
    }
    let state = status.get("state")?;
    if state.is_nil() {
        pending += 1;
        msg.push_str(".status.state not yet known\n");
    } else if state.is("UpgradePending") && manual_pending {
        msg.push_str(
            ".status.state is 'UpgradePending' (manual InstallPlan approval pending; treated as healthy)\n",
        );
    } else {
        if state.is("") || state.is("UpgradeAvailable") || state.is("UpgradePending") {
            pending += 1;
        } else if state.is("UpgradeFailed") {
            degraded += 1;
        }
        msg.push_str(&format!(".status.state is '{}'\n", state.text()?));
    }
    let health = if degraded == 0 && pending == 0 {
        "Healthy"
    } else if pending > 0 && degraded == 0 {
        "Progressing"
    } else {
        "Degraded"
    };
    Ok(Hs::new(health, msg))
}
