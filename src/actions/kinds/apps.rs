//! `apps`: DaemonSet, Deployment and StatefulSet, as Argo CD 3.6.2's scripts.

use super::table::{self, Call, Fault, Field, Lv, Obj, Out, out, set};
use super::{Entry, Kind, Offers, actions, entry, flag};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "apps",
        kind: "DaemonSet",
        discover: discover_restart,
        actions: &[("restart", restart)],
    },
    Kind {
        group: "apps",
        kind: "Deployment",
        discover: discover_deployment,
        actions: &[("pause", pause), ("restart", restart), ("resume", resume), ("scale", scale)],
    },
    Kind {
        group: "apps",
        kind: "StatefulSet",
        discover: discover_statefulset,
        actions: &[("restart", restart), ("scale", scale)],
    },
];

const REDO: &str = "fa fa-fw fa-redo";
const PLUS: &str = "fa fa-fw fa-plus-circle";

/// `restart`, always enabled.
fn discover_restart(_: Lv<'_>) -> Result<Offers, Fault> {
    Ok(actions([("restart", entry(None, Some(REDO), None))]))
}

/// `restart` and `scale` (with its `replicas` parameter), always enabled.
fn discover_statefulset(_: Lv<'_>) -> Result<Offers, Fault> {
    Ok(actions([("restart", entry(None, Some(REDO), None)), ("scale", scale_entry())]))
}

fn scale_entry() -> Entry {
    entry(None, Some(PLUS), None).with_param("replicas")
}

/// `restart`, `scale`, and `pause` or `resume` by `spec.paused` (`pause` is disabled by its
/// value, whatever it is; `resume` by its truth).
fn discover_deployment(obj: Lv<'_>) -> Result<Offers, Fault> {
    let p = obj.fields(&["spec", "paused"])?;
    let paused = if p.is_nil() { Lv::Bool(false) } else { p };
    Ok(actions([
        ("restart", entry(None, Some(REDO), None)),
        ("pause", entry(out(paused)?, Some("fa fa-fw fa-pause-circle"), None)),
        ("resume", entry(flag(!paused.truthy()), Some("fa fa-fw fa-play-circle"), None)),
        ("scale", scale_entry()),
    ]))
}

/// Sets `kubectl.kubernetes.io/restartedAt` on the pod template's annotations to the time.
pub(super) fn restart(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    table::ensure(&mut obj, &["spec", "template"], "metadata")?;
    let now = call.date("!%Y-%m-%dT%XZ");
    table::annotate(&mut obj, &["spec", "template", "metadata"], RESTARTED_AT, now)?;
    table::done(obj)
}

const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";

/// `spec.paused = true`.
pub(super) fn pause(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::set_bool(&mut obj, &["spec"], "paused", true)?;
    table::done(obj)
}

/// Removes `spec.paused`.
fn resume(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    set(&mut obj, &["spec"], "paused", None)?;
    table::done(obj)
}

/// `spec.replicas` from the `replicas` parameter read as a number; `invalid number: <text>`
/// when it is not one.
fn scale(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let text = call.param("replicas");
    let Some(n) = text.to_number() else {
        return Err(Fault::new(format!("invalid number: {}", text.text()?)));
    };
    set(&mut obj, &["spec"], "replicas", Some(table::number(n)?))?;
    table::done(obj)
}
