//! `controlplane.cluster.x-k8s.io` (Cluster API's AWS provider): AWSManagedControlPlane, as
//! Argo CD 3.6.2's scripts.

use super::shapes_a::eq;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "controlplane.cluster.x-k8s.io",
    kind: "AWSManagedControlPlane",
    check: aws_managed_control_plane,
}];

/// Progressing until the spec is reconciled; Degraded with a failure message; Progressing
/// while EKS updates; Healthy when Ready is `True`; Degraded with the messages of the `False`
/// conditions of severity Error; else Progressing.
fn aws_managed_control_plane(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let provisioning = || Hs::new("Progressing", "Provisioning...");
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(provisioning());
    }
    let generation = obj.path(&["metadata", "generation"])?;
    if !generation.is_nil() {
        let observed = status.get("observedGeneration")?;
        if !observed.is_nil() && !eq(observed, generation) {
            return Ok(Hs::new(
                "Progressing",
                "Waiting for the control plane spec to be reconciled",
            ));
        }
    }
    let failure = status.get("failureMessage")?;
    if !failure.is_nil() && !failure.is("") {
        return Ok(Hs::new("Degraded", failure));
    }
    let conditions = status.get("conditions")?;
    if conditions.is_nil() {
        return Ok(provisioning());
    }
    for c in conditions.items()? {
        if c.get("type")?.is("EKSControlPlaneUpdating") && c.get("status")?.is("True") {
            return Ok(Hs::new("Progressing", "EKS control plane is updating"));
        }
    }
    let mut errors: Option<String> = None;
    for c in conditions.items()? {
        let condition_status = c.get("status")?;
        if c.get("type")?.is("Ready") && condition_status.is("True") {
            return Ok(Hs::new("Healthy", "Control plane is ready"));
        }
        if condition_status.is("False") && c.get("severity")?.is("Error") {
            let so_far = errors.take().unwrap_or_default();
            errors = Some(format!("{so_far}{} ", c.get("message")?.text()?));
        }
    }
    if let Some(errors) = errors {
        return Ok(Hs::new("Degraded", errors));
    }
    if status.get("ready")?.is_bool(false) {
        return Ok(Hs::new("Progressing", "Control plane is not ready (.status.ready is false)"));
    }
    Ok(Hs::new("Progressing", "Control plane is not ready"))
}
