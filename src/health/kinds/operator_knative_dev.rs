//! `operator.knative.dev`: KnativeEventing and KnativeServing, as Argo CD 3.6.2's scripts.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "operator.knative.dev", kind: "KnativeEventing", check: eventing },
    Rule { group: "operator.knative.dev", kind: "KnativeServing", check: serving },
];

/// Every condition is listed (`<key>: <type> | <status>`); a condition among `falsy`, or any
/// `Unknown` status, makes it Progressing with the list; all of `truthy` `True` Healthy;
/// else Degraded with the list.
fn knative(env: &Env<'_>, name: &str, truthy: &[&str], falsy: &[&str]) -> Result<Hs, Fault> {
    let Some(conditions) = status_conditions(env.obj)? else {
        return Ok(Hs::new("Progressing", format!("Waiting for {name}")));
    };
    let (mut num_true, mut num_false) = (0, 0);
    let mut msg = String::new();
    for (key, c) in conditions.pairs()? {
        let t = c.get("type")?;
        let status = c.get("status")?;
        // `key .. ": " .. type .. " | " .. status .. "\n"`, written in place.
        let (t_text, status_text) = (t.text()?, status.text()?);
        key.push_to(&mut msg);
        for part in [": ", &t_text, " | ", &status_text, "\n"] {
            msg.push_str(part);
        }
        if status.is("True") && truthy.iter().any(|k| t.is(k)) {
            num_true += 1;
        } else if (status.is("False") && falsy.iter().any(|k| t.is(k))) || status.is("Unknown") {
            num_false += 1;
        }
    }
    if num_false > 0 {
        Ok(Hs::new("Progressing", msg))
    } else if num_true == truthy.len() {
        Ok(Hs::new("Healthy", format!("{name} is healthy.")))
    } else {
        Ok(Hs::new("Degraded", msg))
    }
}

/// Ready and InstallSucceeded.
fn eventing(env: &Env<'_>) -> Result<Hs, Fault> {
    knative(env, "KnativeEventing", &["Ready", "InstallSucceeded"], &["Ready"])
}

/// Ready, InstallSucceeded, DependenciesInstalled and DeploymentsAvailable.
fn serving(env: &Env<'_>) -> Result<Hs, Fault> {
    knative(
        env,
        "KnativeServing",
        &["Ready", "InstallSucceeded", "DependenciesInstalled", "DeploymentsAvailable"],
        &["Ready", "DeploymentsAvailable"],
    )
}
