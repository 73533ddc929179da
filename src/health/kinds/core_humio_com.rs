//! `core.humio.com`: HumioCluster and the Humio components (HumioAction, HumioAlert,
//! HumioIngestToken, HumioParser, HumioRepository, HumioView), as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "core.humio.com", kind: "HumioAction", check: component },
    Rule { group: "core.humio.com", kind: "HumioAlert", check: component },
    Rule { group: "core.humio.com", kind: "HumioCluster", check: cluster },
    Rule { group: "core.humio.com", kind: "HumioIngestToken", check: component },
    Rule { group: "core.humio.com", kind: "HumioParser", check: component },
    Rule { group: "core.humio.com", kind: "HumioRepository", check: component },
    Rule { group: "core.humio.com", kind: "HumioView", check: component },
];

/// The component's `status.state`: Exists Healthy, NotFound Missing, ConfigError Degraded,
/// Unknown Unknown, each with `Component state: <state>.`; else Progressing,
/// `Update in progress`.
fn component(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let state = status.get("state")?;
        for (name, health) in [
            ("Exists", "Healthy"),
            ("NotFound", "Missing"),
            ("ConfigError", "Degraded"),
            ("Unknown", "Unknown"),
        ] {
            if state.is(name) {
                return Ok(Hs::new(health, format!("Component state: {name}.")));
            }
        }
    }
    Ok(Hs::new("Progressing", "Update in progress"))
}

/// The cluster's `status.state` (Running, Restarting, Upgrading, ConfigError, Pending,
/// Unknown), with `status.message` when set or the state's own text; Progressing,
/// `Update in progress` for any other state. A missing `status` is an error, as in the
/// script (it reads `status.message` when `status` is nil).
fn cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    const STATES: &[(&str, &str, &str)] = &[
        ("Running", "Healthy", "Cluster is in a healthy running state"),
        ("Restarting", "Progressing", "Cluster pods are being restarted"),
        ("Upgrading", "Progressing", "Cluster pods are being upgraded"),
        (
            "ConfigError",
            "Degraded",
            "User-provided cluster specification resulted in a configuration error",
        ),
        ("Pending", "Progressing", "Cluster is waiting on resources to be provisioned"),
        ("Unknown", "Unknown", "Component state: Unknown."),
    ];
    let status = env.obj.get("status")?;
    if status.is_nil() {
        status.get("message")?;
    }
    let state = status.get("state")?;
    for &(name, health, text) in STATES {
        if state.is(name) {
            let message = status.get("message")?;
            let message = if message.is_nil() { Lv::Str(text) } else { message };
            return Ok(Hs::new(health, message));
        }
    }
    Ok(Hs::new("Progressing", "Update in progress"))
}
