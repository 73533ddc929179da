//! `networking.gke.io`: ManagedCertificate, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "networking.gke.io", kind: "ManagedCertificate", check: managed_certificate }];

/// A domain `FailedNotVisible` is Degraded; else `status.certificateStatus` `Active` is
/// Healthy; else Progressing.
fn managed_certificate(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let domains = status.get("domainStatus")?;
        if !domains.is_nil() {
            for d in domains.items()? {
                if d.get("status")?.is("FailedNotVisible") {
                    return Ok(Hs::new(
                        "Degraded",
                        "At least one certificate has failed to be provisioned",
                    ));
                }
            }
        }
        if status.get("certificateStatus")?.is("Active") {
            return Ok(Hs::new("Healthy", "All certificates are active"));
        }
    }
    Ok(Hs::new("Progressing", "At least one certificate is still being provisioned"))
}
