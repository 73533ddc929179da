//! The kinds of single-kind groups: `core.strimzi.io` StrimziPodSet, `external-secrets.io`
//! ExternalSecret and PushSecret, `k8s.mariadb.com` MariaDB, `promoter.argoproj.io`
//! PullRequest and `psmdb.percona.com` PerconaServerMongoDB, as Argo CD 3.6.2's scripts.

use serde_json::Value;

use super::fluxcd::resume;
use super::table::{self, Call, Fault, Field, Lv, Obj, Out};
use super::{Kind, actions, entry, flag};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "core.strimzi.io",
        kind: "StrimziPodSet",
        discover: discover_strimzi,
        actions: &[("rolling-update", rolling_update)],
    },
    Kind {
        group: "external-secrets.io",
        kind: "ExternalSecret",
        discover: discover_external_secret,
        actions: &[("refresh", force_sync)],
    },
    Kind {
        group: "external-secrets.io",
        kind: "PushSecret",
        discover: discover_push_secret,
        actions: &[("push", force_sync)],
    },
    Kind {
        group: "k8s.mariadb.com",
        kind: "MariaDB",
        discover: discover_mariadb,
        actions: &[("resume", resume), ("suspend", suspend_mariadb)],
    },
    Kind {
        group: "promoter.argoproj.io",
        kind: "PullRequest",
        discover: discover_pull_request,
        actions: &[("merge", merge)],
    },
    // Argo CD 3.6.2 offers `pause` too, but its script is misnamed (`actions.lua`): running it
    // fails there, and it is not a built-in here.
    Kind {
        group: "psmdb.percona.com",
        kind: "PerconaServerMongoDB",
        discover: discover_psmdb,
        actions: &[("unpause", unpause)],
    },
];

const ROLLING: &str = "strimzi.io/manual-rolling-update";

/// `rolling-update`, disabled while the manual-rolling-update annotation is `"true"`.
fn discover_strimzi(obj: Lv<'_>) -> Result<Value, Fault> {
    let a = obj.fields(&["metadata", "annotations"])?;
    let rolling = !a.is_nil() && a.field(ROLLING)?.is("true");
    Ok(actions([("rolling-update", entry(flag(rolling), None, None))]))
}

/// Sets the manual-rolling-update annotation to `"true"`.
fn rolling_update(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::annotate(&mut obj, &["metadata"], ROLLING, "true")?;
    table::done(obj)
}

/// Whether `spec.refreshInterval` (as `tostring` writes it) is a zero duration: `0`, or `0`
/// with a unit.
fn zero_interval(obj: Lv<'_>) -> Result<bool, Fault> {
    let digits = obj.fields(&["spec", "refreshInterval"])?;
    if digits.is_nil() {
        return Ok(false);
    }
    let text = digits.to_text();
    Ok(text == "0"
        || ["ns", "us", "µs", "ms", "s", "m", "h"]
            .iter()
            .any(|u| text.strip_prefix('0') == Some(u)))
}

/// `refresh`, disabled for a zero refresh interval unless the policy is `OnChange`.
fn discover_external_secret(obj: Lv<'_>) -> Result<Value, Fault> {
    let policy = obj.fields(&["spec", "refreshPolicy"])?;
    let off = zero_interval(obj)? && !policy.is("OnChange");
    Ok(actions([("refresh", entry(flag(off), None, None))]))
}

/// `push`, disabled for a zero refresh interval.
fn discover_push_secret(obj: Lv<'_>) -> Result<Value, Fault> {
    let off = zero_interval(obj)?;
    Ok(actions([("push", entry(flag(off), None, None))]))
}

/// Sets the `force-sync` annotation to the time.
fn force_sync(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    table::annotate(&mut obj, &["metadata"], "force-sync", call.date("!%Y-%m-%dT%XZ"))?;
    table::done(obj)
}

/// `resume` when `spec.suspend` is `true`, else `suspend`.
fn discover_mariadb(obj: Lv<'_>) -> Result<Value, Fault> {
    let spec = obj.field("spec")?;
    let suspended = spec.truthy() && spec.field("suspend")?.is_bool(true);
    Ok(actions([if suspended {
        ("resume", entry(None, Some("fa fa-fw fa-play"), Some("Resume")))
    } else {
        ("suspend", entry(None, Some("fa fa-fw fa-pause"), Some("Suspend")))
    }]))
}

/// `spec.suspend = true` when there is a `spec`.
fn suspend_mariadb(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    if !obj.read(&["spec"])?.is_nil() {
        table::set_bool(&mut obj, &["spec"], "suspend", true)?;
    }
    table::done(obj)
}

/// `merge`, enabled while `spec.state` is `"open"`.
fn discover_pull_request(obj: Lv<'_>) -> Result<Value, Fault> {
    let open = obj.fields(&["spec", "state"])?.is("open");
    let merge = entry(flag(!open), Some("fa fa-fw fa-code-merge"), Some("Merge PR"));
    Ok(actions([("merge", merge)]))
}

/// `spec.state = "merged"`.
fn merge(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::set_text(&mut obj, &["spec"], "state", "merged")?;
    table::done(obj)
}

/// `pause` enabled unless `spec.pause` is `true`, `unpause` when it is.
fn discover_psmdb(obj: Lv<'_>) -> Result<Value, Fault> {
    let paused = obj.fields(&["spec", "pause"])?.is_bool(true);
    Ok(actions([
        ("pause", entry(flag(paused), Some("fa fa-fw fa-pause-circle"), None)),
        ("unpause", entry(flag(!paused), Some("fa fa-fw fa-play-circle"), None)),
    ]))
}

/// `spec.pause = false`.
fn unpause(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::set_bool(&mut obj, &["spec"], "pause", false)?;
    table::done(obj)
}
