//! `cluster.x-k8s.io` (Cluster API): Cluster, Machine, MachineDeployment,
//! MachineHealthCheck and MachinePool, as Argo CD 3.6.2's scripts.

use super::lua::Field;
use super::shapes_a::{eq, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "cluster.x-k8s.io", kind: "Cluster", check: cluster },
    Rule { group: "cluster.x-k8s.io", kind: "Machine", check: machine },
    Rule { group: "cluster.x-k8s.io", kind: "MachineDeployment", check: machine_deployment },
    Rule { group: "cluster.x-k8s.io", kind: "MachineHealthCheck", check: machine_health_check },
    Rule { group: "cluster.x-k8s.io", kind: "MachinePool", check: machine_pool },
];

/// `status.phase`, when `status` and it are set.
fn phase<'a>(obj: Lv<'a>) -> Result<Lv<'a>, Fault> {
    let status = obj.get("status")?;
    if status.is_nil() { Ok(Lv::Nil) } else { status.get("phase") }
}

/// Suspended while paused; a Ready `False` condition that is not of severity Info is
/// Degraded; else the phase (Provisioned Healthy, Failed Degraded, any other Progressing).
fn cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    if obj.path(&["spec", "paused"])?.truthy() {
        return Ok(Hs::new("Suspended", "Cluster is paused"));
    }
    let phase = phase(obj)?;
    let hs = match phase.str() {
        Some("Provisioned") => Hs::new("Healthy", "Cluster is running"),
        Some("Failed") => Hs::new("Degraded", ""),
        _ => Hs::new("Progressing", "Waiting for clusters"),
    };
    if let Some(conditions) = status_conditions(obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Ready")
                && c.get("status")?.is("False")
                && !c.get("severity")?.is("Info")
            {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
        }
    }
    Ok(hs)
}

/// Running is Healthy; else the phase's status (Failed Degraded, any other Progressing) with
/// the first Ready `False` condition's message, or `Condition is unknown`.
fn machine(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let phase = phase(obj)?;
    if phase.is("Running") {
        return Ok(Hs::new("Healthy", "Machine is running"));
    }
    let health = if phase.is("Failed") { "Degraded" } else { "Progressing" };
    if let Some(conditions) = status_conditions(obj)? {
        for c in conditions.items()? {
            if c.get("type")?.is("Ready") && c.get("status")?.is("False") {
                return Ok(Hs::new(health, c.get("message")?));
            }
        }
    }
    Ok(Hs::new(health, "Condition is unknown"))
}

/// Suspended while paused; else the phase: Running Healthy, ScalingUp and ScalingDown
/// Progressing, Failed Degraded.
fn machine_deployment(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    if obj.path(&["spec", "paused"])?.truthy() {
        return Ok(Hs::new("Suspended", "MachineDeployment is paused"));
    }
    let (health, message) = match phase(obj)?.str() {
        Some("Running") => ("Healthy", "Machines are running under this deployment"),
        Some("ScalingUp") => ("Progressing", "Cluster is spawning machines"),
        Some("ScalingDown") => ("Progressing", "Cluster is stopping machines"),
        Some("Failed") => ("Degraded", "MachineDeployment is failed"),
        _ => ("Progressing", "Waiting for machines"),
    };
    Ok(Hs::new(health, message))
}

/// Healthy when every expected machine is healthy, else Degraded; Progressing until counted.
fn machine_health_check(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let healthy = status.get("currentHealthy")?;
        if !healthy.is_nil() {
            let health =
                if eq(status.get("expectedMachines")?, healthy) { "Healthy" } else { "Degraded" };
            return Ok(Hs::new(health, ""));
        }
    }
    Ok(Hs::new("Progressing", ""))
}

/// The phase (Running and Scaling Healthy, Failed and Unknown Degraded, any other
/// Progressing) with the `False` conditions listed.
fn machine_pool(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let mut health = "Progressing";
    let mut message = String::new();
    let phase = phase(obj)?;
    if !phase.is_nil() {
        message = format!("MachinePool is {}", phase.text()?);
        match phase.str() {
            Some("Running" | "Scaling") => health = "Healthy",
            Some("Failed" | "Unknown") => health = "Degraded",
            _ => {}
        }
    }
    let mut extra = String::new();
    if let Some(conditions) = status_conditions(obj)? {
        for c in conditions.items()? {
            let kind = c.get("type")?;
            if !kind.is_nil() && c.get("status")?.is("False") {
                if !extra.is_empty() {
                    extra.push_str(", ");
                }
                extra = format!("{extra}Not {}", kind.text()?);
                let reason = c.get("reason")?;
                if !reason.is_nil() {
                    extra = format!("{extra} ({})", reason.text()?);
                }
            }
        }
    }
    if !extra.is_empty() {
        message = format!("{message}: {extra}");
    }
    Ok(Hs::new(health, Field::from(message)))
}
