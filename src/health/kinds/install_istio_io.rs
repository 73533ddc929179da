//! `install.istio.io`: IstioOperator, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "install.istio.io", kind: "IstioOperator", check: istio_operator }];

/// `status.status`, by name or number: NONE (0) Unknown, UPDATING (1) and RECONCILING (2)
/// Progressing, HEALTHY (3) Healthy, ERROR (4) Degraded; else Progressing, waiting.
fn istio_operator(env: &Env<'_>) -> Result<Hs, Fault> {
    const STATES: &[(f64, &str, &str, &str)] = &[
        (0.0, "NONE", "Unknown", "Component is not present."),
        (1.0, "UPDATING", "Progressing", "Component is being updated to a different version."),
        (
            2.0,
            "RECONCILING",
            "Progressing",
            "Controller has started but not yet completed reconciliation loop for the component.",
        ),
        (3.0, "HEALTHY", "Healthy", "Component is healthy."),
        (4.0, "ERROR", "Degraded", "Component is in an error state."),
    ];
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let s = status.get("status")?;
        for &(n, name, health, message) in STATES {
            if s.is_num(n) || s.is(name) {
                return Ok(Hs::new(health, message));
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Istio Control Plane"))
}
