//! The kinds of single-kind groups: `core.strimzi.io` StrimziPodSet, `external-secrets.io`
//! ExternalSecret and PushSecret, `k8s.mariadb.com` MariaDB, `promoter.argoproj.io`
//! PullRequest and `psmdb.percona.com` PerconaServerMongoDB, as Argo CD 3.6.2's scripts.

use serde_json::Value;

use super::fluxcd::resume;
use super::table::{self, Call, Fault, Field, Lv, Obj, Out};
use super::{Kind, Offers, actions, entry, flag};

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
fn discover_strimzi(obj: Lv<'_>) -> Result<Offers, Fault> {
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
fn discover_external_secret(obj: Lv<'_>) -> Result<Offers, Fault> {
    let policy = obj.fields(&["spec", "refreshPolicy"])?;
    let off = zero_interval(obj)? && !policy.is("OnChange");
    Ok(actions([("refresh", entry(flag(off), None, None))]))
}

/// `push`, disabled for a zero refresh interval.
fn discover_push_secret(obj: Lv<'_>) -> Result<Offers, Fault> {
    let off = zero_interval(obj)?;
    Ok(actions([("push", entry(flag(off), None, None))]))
}

/// Sets the `force-sync` annotation to the time.
fn force_sync(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    table::annotate(&mut obj, &["metadata"], "force-sync", call.date("!%Y-%m-%dT%XZ"))?;
    table::done(obj)
}

/// `resume` when `spec.suspend` is `true`, else `suspend`.
fn discover_mariadb(obj: Lv<'_>) -> Result<Offers, Fault> {
    let spec = obj.field("spec")?;
    let suspended = spec.truthy() && spec.field("suspend")?.is_bool(true);
    Ok(actions([if suspended {
        ("resume", entry(None, Some("fa fa-fw fa-play"), Some("Resume")))
    } else {
        ("suspend", entry(None, Some("fa fa-fw fa-pause"), Some("Suspend")))
    }]))
}

/// `spec.suspend = true` when there is a `spec`: a map of the source set at once (no walk
/// of the changes, [`Obj::set_in_fresh_map`]), anything else as the script does it.
fn suspend_mariadb(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    if obj.set_in_fresh_map(&["spec"], |_| Some([("suspend", Some(Value::Bool(true)))])) {
        return table::done(obj);
    }
    if !obj.read(&["spec"])?.is_nil() {
        table::set_bool(&mut obj, &["spec"], "suspend", true)?;
    }
    table::done(obj)
}

/// `merge`, enabled while `spec.state` is `"open"`.
fn discover_pull_request(obj: Lv<'_>) -> Result<Offers, Fault> {
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
fn discover_psmdb(obj: Lv<'_>) -> Result<Offers, Fault> {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::actions::kinds::fluxcd;

    /// MariaDB `suspend`, Flux `suspend` and `resume` (MariaDB's too) as the scripts do them,
    /// step by step: what their fresh-map shortcuts are checked against.
    fn by_steps(action: &str, mut obj: Obj<'_>) -> Result<Out, Fault> {
        match action {
            "mariadb-suspend" => {
                if !obj.read(&["spec"])?.is_nil() {
                    table::set_bool(&mut obj, &["spec"], "suspend", true)?;
                }
            }
            "suspend" => table::set_bool(&mut obj, &["spec"], "suspend", true)?,
            _ => {
                if obj.read(&["spec", "suspend"])?.truthy() {
                    table::set_bool(&mut obj, &["spec"], "suspend", false)?;
                }
            }
        }
        table::done(obj)
    }

    /// [`Obj::set_in_fresh_map`] in `suspend` and `resume` keeps the changes (and raises the
    /// errors) of the scripts' steps, on objects whose `spec` and `spec.suspend` are missing,
    /// `null` or of every type.
    #[test]
    fn suspended_at_once_is_suspended_by_steps() {
        let values = table::values_of_every_type();
        let mut objects = vec![json!(null), json!("x"), json!([]), json!({})];
        for v in &values {
            objects.push(json!({"spec": v}));
            objects.push(json!({"metadata": {"name": "n"}, "spec": {"suspend": v}}));
            objects.push(json!({"spec": {"a": 1, "suspend": v, "z": [null]}}));
        }
        let params = BTreeMap::new();
        let call = Call { params: &params, now: 0 };
        let runs: [(&str, crate::actions::kinds::Run); 3] = [
            ("mariadb-suspend", suspend_mariadb),
            ("suspend", fluxcd::suspend),
            ("resume", resume),
        ];
        let mut compared = 0;
        for obj in &objects {
            for (name, run) in runs {
                assert_eq!(
                    run(Obj::new(obj), &call),
                    by_steps(name, Obj::new(obj)),
                    "{name} {obj}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 3 * (4 + 3 * values.len()));
    }
}
