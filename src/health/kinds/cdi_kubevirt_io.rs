//! `cdi.kubevirt.io` (KubeVirt's Containerized Data Importer): DataVolume, as Argo CD
//! 3.6.2's scripts.

use super::lua::Field;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "cdi.kubevirt.io", kind: "DataVolume", check: data_volume }];

/// The phase is the message: Succeeded Healthy, Paused Suspended, Failed and Unknown
/// Degraded; a Running condition `False` for reason Error is Degraded with its message; else
/// Progressing.
fn data_volume(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", "No status available"));
    }
    let mut health = "Progressing";
    let mut message = Field::from("No status available");
    let phase = status.get("phase")?;
    if !phase.is_nil() {
        message = Field::from(phase);
        match phase.str() {
            Some("Succeeded") => return Ok(Hs::new("Healthy", phase)),
            Some("Failed" | "Unknown") => health = "Degraded",
            Some("Paused") => return Ok(Hs::new("Suspended", phase)),
            _ => {}
        }
    }
    let conditions = status.get("conditions")?;
    if !conditions.is_nil() {
        for c in conditions.items()? {
            if c.get("type")?.is("Running")
                && c.get("status")?.is("False")
                && c.get("reason")?.is("Error")
            {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
        }
    }
    Ok(Hs::new(health, message))
}
