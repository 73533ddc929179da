//! `addons.projectcapsule.dev` (the SOPS operator): GlobalSopsSecret, SopsProvider and
//! SopsSecret, as Argo CD 3.6.2's scripts.

use super::shapes_a::{On, Say, capsule_start, first_on};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "addons.projectcapsule.dev", kind: "GlobalSopsSecret", check: sops },
    Rule { group: "addons.projectcapsule.dev", kind: "SopsProvider", check: sops },
    Rule { group: "addons.projectcapsule.dev", kind: "SopsSecret", check: sops },
];

const ROWS: &[On] = &[
    On::new("Ready", "True", "Healthy", Say::Message),
    On::new("Ready", "False", "Degraded", Say::Message),
    On::new("Ready", "Unknown", "Progressing", Say::Message),
];

/// Progressing until the status is current; then Ready `True` Healthy, `False` Degraded,
/// `Unknown` Progressing; else Progressing, `Waiting for Ready condition`.
fn sops(env: &Env<'_>) -> Result<Hs, Fault> {
    let conditions = match capsule_start(env.obj)? {
        Ok(c) => c,
        Err(hs) => return Ok(hs),
    };
    Ok(first_on(conditions, ROWS)?
        .unwrap_or_else(|| Hs::new("Progressing", "Waiting for Ready condition")))
}
