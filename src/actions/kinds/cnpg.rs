//! `postgresql.cnpg.io`: the CloudNativePG Cluster, as Argo CD 3.6.2's scripts.

use serde_json::Value;

use super::table::{self, Call, Fault, Field, Lv, Obj, Out, lua_eq, out, set};
use super::{Kind, Offers, actions, entry, flag};

pub(super) const KINDS: &[Kind] = &[Kind {
    group: "postgresql.cnpg.io",
    kind: "Cluster",
    discover,
    actions: &[
        ("hibernate", hibernate),
        ("promote", promote),
        ("rehydrate", rehydrate),
        ("reload", reload),
        ("restart", restart),
        ("resume", resume),
        ("suspend", suspend),
    ],
}];

const LOOP: &str = "cnpg.io/reconciliationLoop";
const HIBERNATION: &str = "cnpg.io/hibernation";
const PLAY: &str = "fa fa-fw fa-play";
const PAUSE: &str = "fa fa-fw fa-pause";

/// The annotation `name` when `obj.metadata and obj.metadata.annotations` holds.
fn annotation<'a>(obj: Lv<'a>, name: &str) -> Result<Lv<'a>, Fault> {
    let meta = obj.field("metadata")?;
    if !meta.truthy() {
        return Ok(Lv::Nil);
    }
    let a = meta.field("annotations")?;
    if !a.truthy() {
        return Ok(Lv::Nil);
    }
    a.field(name)
}

/// `restart`, `reload`, `promote` (disabled with fewer than two healthy instances; parameter
/// `instance`), `suspend` or `resume` by the reconciliation-loop annotation, `hibernate` or
/// `rehydrate` by the hibernation annotation.
fn discover(obj: Lv<'_>) -> Result<Offers, Fault> {
    let status = obj.field("status")?.field("instancesStatus")?;
    let disabled = !status.truthy() || {
        let healthy = status.field("healthy")?;
        !healthy.truthy() || healthy.len()? < 2
    };
    // Its parameter's `default` (`"any"`) is not read by Argo CD 3.6: not kept.
    let promote =
        entry(flag(disabled), Some("fa fa-fw fa-angles-up"), Some("Promote Replica to Primary"))
            .with_param("instance");
    let mut all = vec![
        ("restart", entry(None, Some("fa fa-fw fa-recycle"), Some("Rollout restart Cluster"))),
        ("reload", entry(None, Some("fa fa-fw fa-rotate-right"), Some("Reload all Configuration"))),
        ("promote", promote),
    ];
    all.push(if annotation(obj, LOOP)?.is("disabled") {
        ("resume", entry(None, Some(PLAY), Some("Resume Reconciliation")))
    } else {
        ("suspend", entry(None, Some(PAUSE), Some("Suspend Reconciliation")))
    });
    all.push(if annotation(obj, HIBERNATION)?.is("on") {
        ("rehydrate", entry(None, Some(PLAY), Some("Rehydrate Cluster")))
    } else {
        ("hibernate", entry(None, Some(PAUSE), Some("Hibernate Cluster")))
    });
    Ok(actions(all))
}

/// `metadata.annotations[name] = value` after making both tables when nil.
fn annotate(mut obj: Obj<'_>, name: &'static str, value: Option<String>) -> Result<Out, Fault> {
    table::ensure(&mut obj, &[], "metadata")?;
    table::ensure(&mut obj, &["metadata"], "annotations")?;
    set(&mut obj, &["metadata", "annotations"], name, value.map(Value::String))?;
    table::done(obj)
}

/// Sets `kubectl.kubernetes.io/restartedAt` to the time.
fn restart(obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    annotate(obj, "kubectl.kubernetes.io/restartedAt", Some(call.date("!%Y-%m-%dT%XZ")))
}

/// Sets `cnpg.io/reloadedAt` to the time.
fn reload(obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    annotate(obj, "cnpg.io/reloadedAt", Some(call.date("!%Y-%m-%dT%XZ")))
}

/// `cnpg.io/hibernation: on`.
fn hibernate(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    annotate(obj, HIBERNATION, Some("on".into()))
}

/// `cnpg.io/hibernation: off`.
fn rehydrate(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    annotate(obj, HIBERNATION, Some("off".into()))
}

/// `cnpg.io/reconciliationLoop: disabled`.
fn suspend(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    annotate(obj, LOOP, Some("disabled".into()))
}

/// Removes `cnpg.io/reconciliationLoop`.
fn resume(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    annotate(obj, LOOP, None)
}

/// The first healthy instance equal to `wanted`.
fn first_equal<'a>(healthy: Lv<'a>, wanted: Lv<'_>) -> Result<Lv<'a>, Fault> {
    Ok(healthy.items()?.find(|n| lua_eq(*n, wanted)).unwrap_or(Lv::Nil))
}

/// Switches over to a healthy instance: with `instance = any` the one after the current
/// primary (the first when the primary is not healthy), with a number `<name>-<n>`, else the
/// instance of that name; `Could not find a healthy instance matching the criteria: <instance>`
/// when none fits.
fn promote(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let instance = call.param("instance");
    let view = obj.lv();
    let status = view.field("status")?;
    let healthy = status.fields(&["instancesStatus", "healthy"])?;
    let selected = if instance.is("any") {
        let primary = status.field("currentPrimary")?;
        let mut next = 0;
        for (i, node) in healthy.items()?.enumerate() {
            if lua_eq(node, primary) {
                next = i + 2;
                if next > healthy.len()? {
                    next = 1;
                }
                break;
            }
        }
        if next > 0 {
            healthy.at(next)?
        } else if healthy.len()? > 0 {
            healthy.at(1)?
        } else {
            Lv::Nil
        }
    } else if instance.str().is_some() && instance.to_number().is_some() {
        let meta = view.field("metadata")?;
        let name = if meta.truthy() { meta.field("name")? } else { meta };
        let name = if name.truthy() { name.text()? } else { "".into() };
        let wanted = format!("{name}-{}", instance.text()?);
        if healthy.truthy() { first_equal(healthy, Lv::Str(&wanted))? } else { Lv::Nil }
    } else if instance.str().is_some() {
        first_equal(healthy, instance)?
    } else {
        Lv::Nil
    };
    if !selected.truthy() {
        return Err(Fault::new(format!(
            "Could not find a healthy instance matching the criteria: {}",
            instance.text()?
        )));
    }
    const SWITCHING: &str = "Switching over to ";
    let name = selected.text()?;
    let mut reason = String::with_capacity(SWITCHING.len() + name.len());
    reason.push_str(SWITCHING);
    reason.push_str(&name);
    let target = out(selected)?;
    // Set in the order of their names (the script's order: targetPrimary, its timestamp,
    // phase, phaseReason; each a different member).
    obj.set_members(
        &["status"],
        [
            ("phase", Some(Value::from("Switchover in progress"))),
            ("phaseReason", Some(Value::String(reason))),
            ("targetPrimary", target),
            ("targetPrimaryTimestamp", Some(Value::String(call.date("!%Y-%m-%dT%XZ")))),
        ],
    )?;
    table::done(obj)
}
