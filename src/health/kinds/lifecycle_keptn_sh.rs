//! `lifecycle.keptn.sh`: KeptnAppVersion, KeptnEvaluation, KeptnTask, KeptnWorkloadInstance
//! and KeptnWorkloadVersion, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "lifecycle.keptn.sh", kind: "KeptnAppVersion", check: app_version },
    Rule { group: "lifecycle.keptn.sh", kind: "KeptnEvaluation", check: evaluation },
    Rule { group: "lifecycle.keptn.sh", kind: "KeptnTask", check: task },
    Rule { group: "lifecycle.keptn.sh", kind: "KeptnWorkloadInstance", check: workload_instance },
    Rule { group: "lifecycle.keptn.sh", kind: "KeptnWorkloadVersion", check: workload_version },
];

/// `status.<field>`: `Succeeded` Healthy, `Failed` Degraded, else Progressing, each with
/// `<kind> is healthy` (degraded, progressing).
fn keptn(env: &Env<'_>, field: &str, kind: &str) -> Result<Hs, Fault> {
    let v = env.obj.get("status")?.get(field)?;
    let (status, word) = if v.is("Succeeded") {
        ("Healthy", "healthy")
    } else if v.is("Failed") {
        ("Degraded", "degraded")
    } else {
        ("Progressing", "progressing")
    };
    Ok(Hs::new(status, format!("{kind} is {word}")))
}

/// `status.status`.
fn app_version(env: &Env<'_>) -> Result<Hs, Fault> {
    keptn(env, "status", "KeptnAppVersion")
}

/// `status.overallStatus`.
fn evaluation(env: &Env<'_>) -> Result<Hs, Fault> {
    keptn(env, "overallStatus", "KeptnEvaluation")
}

/// `status.status`.
fn task(env: &Env<'_>) -> Result<Hs, Fault> {
    keptn(env, "status", "KeptnTask")
}

/// `status.status`.
fn workload_instance(env: &Env<'_>) -> Result<Hs, Fault> {
    keptn(env, "status", "KeptnWorkloadInstance")
}

/// `status.status`.
fn workload_version(env: &Env<'_>) -> Result<Hs, Fault> {
    keptn(env, "status", "KeptnWorkloadVersion")
}
