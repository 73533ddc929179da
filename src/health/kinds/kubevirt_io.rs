//! `kubevirt.io`: VirtualMachine and VirtualMachineInstance, as Argo CD 3.6.2's scripts.

use super::lua::Field;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "kubevirt.io", kind: "VirtualMachine", check: virtual_machine },
    Rule { group: "kubevirt.io", kind: "VirtualMachineInstance", check: virtual_machine_instance },
];

/// Declared stopped (`spec.running: false` or `runStrategy: Halted`) with no instance is
/// Healthy; else the conditions, read to the end: Paused (Suspended), Ready `True` (Healthy,
/// `Running`) or not (`Starting` while created, else Suspended `Stopped`); then
/// `status.printableStatus` is the message when set.
fn virtual_machine(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "No status available");
    let spec = env.obj.get("spec")?;
    let declared_stopped = !spec.is_nil()
        && (spec.get("running")?.is_bool(false) || spec.get("runStrategy")?.is("Halted"));
    let status = env.obj.get("status")?;
    if declared_stopped && (status.is_nil() || !status.get("created")?.truthy()) {
        return Ok(Hs::new("Healthy", "Stopped as declared"));
    }
    if !status.is_nil() {
        let conditions = status.get("conditions")?;
        if !conditions.is_nil() {
            for c in conditions.items()? {
                if c.get("type")?.is("Paused") && c.get("status")?.is("True") {
                    return Ok(Hs::new("Suspended", "Paused"));
                }
                if c.get("type")?.is("Ready") {
                    if c.get("status")?.is("True") {
                        hs = Hs::new("Healthy", "Running");
                    } else if status.get("created")?.truthy() {
                        hs.message = "Starting".into();
                    } else {
                        hs = Hs::new("Suspended", "Stopped");
                    }
                }
            }
        }
        let printable = status.get("printableStatus")?;
        if !printable.is_nil() {
            hs.message = Field::from(printable);
        }
    }
    Ok(hs)
}

/// The phase first (`Failed` Degraded, `Pending`/`Scheduling`/`Scheduled` Progressing,
/// `Succeeded` Suspended, `Unknown` Unknown, each with the phase as message); then the
/// conditions, read to the end: Ready (`True` Healthy `Running`, else Degraded) or a Paused
/// `True` (Suspended).
fn virtual_machine_instance(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "No status available");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(hs);
    }
    let phase = status.get("phase")?;
    if !phase.is_nil() {
        hs.message = Field::from(phase);
        for (p, s) in [
            ("Failed", "Degraded"),
            ("Pending", "Progressing"),
            ("Scheduling", "Progressing"),
            ("Scheduled", "Progressing"),
            ("Succeeded", "Suspended"),
            ("Unknown", "Unknown"),
        ] {
            if phase.is(p) {
                return Ok(Hs { status: s.into(), ..hs });
            }
        }
    }
    let conditions = status.get("conditions")?;
    if !conditions.is_nil() {
        for c in conditions.items()? {
            let t = c.get("type")?;
            if t.is("Ready") {
                if c.get("status")?.is("True") {
                    hs = Hs::new("Healthy", "Running");
                } else {
                    hs = Hs::new("Degraded", c.get("message")?);
                }
            } else if t.is("Paused") && c.get("status")?.is("True") {
                return Ok(Hs::new("Suspended", c.get("message")?));
            }
        }
    }
    Ok(hs)
}
