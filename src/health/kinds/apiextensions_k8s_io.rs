//! `apiextensions.k8s.io`: CustomResourceDefinition, as Argo CD 3.6.2's scripts.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "apiextensions.k8s.io",
    kind: "CustomResourceDefinition",
    check: custom_resource_definition,
}];

/// Terminating while deleted or with a `True` Terminating condition; Degraded for names not
/// accepted, a non-structural schema or an invalid CA bundle; Healthy once Established;
/// else Progressing.
fn custom_resource_definition(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    if !obj.path(&["metadata", "deletionTimestamp"])?.is_nil() {
        return Ok(Hs::new("Progressing", "CRD is terminating"));
    }
    let conditions = obj.path(&["status", "conditions"])?;
    if conditions.is_nil() || conditions.len()? == 0 {
        return Ok(Hs::new("Progressing", "Status conditions not found"));
    }
    let mut established = false;
    for (_, c) in conditions.pairs()? {
        let kind = c.get("type")?;
        let status = c.get("status")?;
        let said = |prefix: &str| -> Result<String, Fault> {
            Ok(format!("{prefix}{}", c.get("message")?.text()?))
        };
        if kind.is("Terminating") && status.is("True") {
            return Ok(Hs::new("Progressing", said("CRD is terminating: ")?));
        }
        if kind.is("NamesAccepted") && status.is("False") {
            return Ok(Hs::new("Degraded", said("CRD names have not been accepted: ")?));
        }
        if kind.is("NonStructuralSchema") && status.is("True") {
            return Ok(Hs::new("Degraded", said("Schema violations found: ")?));
        }
        if kind.is("Established") {
            let reason = c.get("reason")?;
            if status.is("True") {
                established = true;
            } else if reason.is("InvalidCABundle") {
                return Ok(Hs::new("Degraded", said("CRD is not established: ")?));
            } else if reason.is("Installing") {
                return Ok(Hs::new("Progressing", "CRD is being installed"));
            }
        }
    }
    if !established {
        return Ok(Hs::new("Progressing", "CRD is not established"));
    }
    Ok(Hs::new("Healthy", "CRD is healthy"))
}
