//! `lifecycle.keptn.sh`: KeptnAppVersion, KeptnEvaluation, KeptnTask, KeptnWorkloadInstance
//! and KeptnWorkloadVersion, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

/// The kinds (with the status field they read) read by [`keptn`], by the index its rule
/// passes.
const KINDS: [(&str, &str); 5] = [
    ("KeptnAppVersion", "status"),
    ("KeptnEvaluation", "overallStatus"),
    ("KeptnTask", "status"),
    ("KeptnWorkloadInstance", "status"),
    ("KeptnWorkloadVersion", "status"),
];

pub(super) const RULES: &[Rule] = &[
    Rule { group: "lifecycle.keptn.sh", kind: KINDS[0].0, check: keptn::<0> },
    Rule { group: "lifecycle.keptn.sh", kind: KINDS[1].0, check: keptn::<1> },
    Rule { group: "lifecycle.keptn.sh", kind: KINDS[2].0, check: keptn::<2> },
    Rule { group: "lifecycle.keptn.sh", kind: KINDS[3].0, check: keptn::<3> },
    Rule { group: "lifecycle.keptn.sh", kind: KINDS[4].0, check: keptn::<4> },
];

/// `status.<field>`: `Succeeded` Healthy, `Failed` Degraded, else Progressing, each with
/// `<kind> is healthy` (degraded, progressing).
fn keptn<const I: usize>(env: &Env<'_>) -> Result<Hs, Fault> {
    let (kind, field) = KINDS[I];
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
