//! `astra.netapp.io` (NetApp Trident protect): AppVault, Application, Backup, ExecHook,
//! ExecHooksRun, ResourceBackup, ResticVolumeBackup, Schedule and Snapshot, as Argo CD
//! 3.6.2's scripts.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "astra.netapp.io", kind: "AppVault", check: app_vault },
    Rule { group: "astra.netapp.io", kind: "Application", check: application },
    Rule { group: "astra.netapp.io", kind: "Backup", check: run_state },
    Rule { group: "astra.netapp.io", kind: "ExecHook", check: exec_hook },
    Rule { group: "astra.netapp.io", kind: "ExecHooksRun", check: run_state },
    Rule { group: "astra.netapp.io", kind: "ResourceBackup", check: run_state },
    Rule { group: "astra.netapp.io", kind: "ResticVolumeBackup", check: run_state },
    Rule { group: "astra.netapp.io", kind: "Schedule", check: schedule },
    Rule { group: "astra.netapp.io", kind: "Snapshot", check: run_state },
];

fn no_status() -> Hs {
    Hs::new("Progressing", "No status available")
}

/// `status.state`, when `status` and it are set.
fn state<'a>(obj: Lv<'a>) -> Result<Option<Lv<'a>>, Fault> {
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(None);
    }
    let state = status.get("state")?;
    Ok((!state.is_nil()).then_some(state))
}

/// `<kind><suffix>`.
fn kind_says(obj: Lv<'_>, suffix: &str) -> Result<String, Fault> {
    Ok(format!("{}{suffix}", obj.get("kind")?.text()?))
}

/// `available` is Healthy, `failed` Degraded (either case of the first letter); else
/// Progressing.
fn app_vault(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    Ok(match state(obj)?.and_then(|s| s.str()) {
        Some("available" | "Available") => Hs::new("Healthy", kind_says(obj, " Available")?),
        Some("failed" | "Failed") => Hs::new("Degraded", kind_says(obj, " Failed")?),
        _ => no_status(),
    })
}

/// Ready `True` is Healthy with the protection state, `False` Degraded with the message;
/// else Progressing.
fn application(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let status = obj.get("status")?;
    if status.is_nil() {
        return Ok(no_status());
    }
    let conditions = status.get("conditions")?;
    if conditions.is_nil() {
        return Ok(no_status());
    }
    for c in conditions.items()? {
        if c.get("type")?.is("Ready") {
            let s = c.get("status")?;
            if s.is("True") {
                let state = status.get("protectionState")?.text()?;
                return Ok(Hs::new(
                    "Healthy",
                    format!("Astra Application Ready, protectionState: {state}"),
                ));
            }
            if s.is("False") {
                let message = c.get("message")?.text()?;
                return Ok(Hs::new(
                    "Degraded",
                    format!("Astra Application Degraded, message: {message}"),
                ));
            }
        }
    }
    Ok(no_status())
}

/// `Completed` is Healthy, `Running` Progressing, any other state Degraded with the state
/// as the message; none yet Progressing.
fn run_state(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let Some(state) = state(obj)? else {
        return Ok(no_status());
    };
    Ok(match state.str() {
        Some("Completed") => Hs::new("Healthy", kind_says(obj, " Completed")?),
        Some("Running") => Hs::new("Progressing", kind_says(obj, " Running")?),
        _ => Hs::new("Degraded", state),
    })
}

/// `spec.enabled`: `true` Healthy, `false` Suspended; else Progressing.
fn exec_hook(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let spec = obj.get("spec")?;
    if spec.is_nil() {
        return Ok(no_status());
    }
    Ok(match spec.get("enabled")? {
        Lv::Bool(true) => Hs::new("Healthy", kind_says(obj, " enabled")?),
        Lv::Bool(false) => Hs::new("Suspended", kind_says(obj, " disabled")?),
        _ => no_status(),
    })
}

/// Healthy, with the last schedule time when there is one.
fn schedule(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let last = status.get("lastScheduleTime")?;
        if !last.is_nil() {
            return Ok(Hs::new(
                "Healthy",
                format!("Protection policy lastScheduleTime: {}", last.text()?),
            ));
        }
    }
    Ok(Hs::new("Healthy", "Protection policy not yet executed"))
}
