//! `k8s.mariadb.com`: MariaDB, Backup, Database, Grant, SqlJob and User, as Argo CD 3.6.2's
//! scripts.

use super::lua::Field;
use super::shapes_b::{cat, status_conditions};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "k8s.mariadb.com", kind: "Backup", check: backup },
    Rule { group: "k8s.mariadb.com", kind: "Database", check: ready_condition },
    Rule { group: "k8s.mariadb.com", kind: "Grant", check: ready_condition },
    Rule { group: "k8s.mariadb.com", kind: "MariaDB", check: mariadb },
    Rule { group: "k8s.mariadb.com", kind: "SqlJob", check: sql_job },
    Rule { group: "k8s.mariadb.com", kind: "User", check: ready_condition },
];

const NO_STATUS: &str = "No status info available";

/// `<reason> <message>` of a condition.
fn reason_message(c: Lv<'_>) -> Result<String, Fault> {
    cat(&[c.get("reason")?, Lv::Str(" "), c.get("message")?])
}

/// The first `Ready` condition, `True` Healthy else Degraded, with the message of the last
/// condition read; Progressing without one (with that message, if any was read).
fn ready_condition(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut message = Field::from(NO_STATUS);
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            message = c.get("message")?.into();
            if c.get("type")?.is("Ready") {
                let health = if c.get("status")?.is("True") { "Healthy" } else { "Degraded" };
                return Ok(Hs::new(health, message));
            }
        }
    }
    Ok(Hs::new("Progressing", message))
}

/// The first condition that is `False`: Degraded when `failed` says so, else Progressing,
/// with its message (`message` of the condition); Healthy when none is (the last message).
fn first_false(
    env: &Env<'_>,
    message: fn(Lv<'_>) -> Result<Field, Fault>,
    failed: fn(Lv<'_>) -> Result<bool, Fault>,
) -> Result<Hs, Fault> {
    let Some(conditions) = status_conditions(env.obj)? else {
        return Ok(Hs::new("Progressing", NO_STATUS));
    };
    let mut last = Field::Absent;
    for c in conditions.items()? {
        last = message(c)?;
        if c.get("status")?.is("False") {
            let health = if failed(c)? { "Degraded" } else { "Progressing" };
            return Ok(Hs::new(health, last));
        }
    }
    Ok(Hs::new("Healthy", last))
}

/// [`first_false`] with the condition's message, failed when the reason is `Failed`.
fn mariadb(env: &Env<'_>) -> Result<Hs, Fault> {
    first_false(env, |c| Ok(c.get("message")?.into()), |c| Ok(c.get("reason")?.is("Failed")))
}

/// [`first_false`] with `<reason> <message>`, failed when the CronJob failed to be scheduled.
fn backup(env: &Env<'_>) -> Result<Hs, Fault> {
    first_false(
        env,
        |c| Ok(reason_message(c)?.into()),
        |c| Ok(c.get("reason")?.is("CronJobScheduled") && c.get("message")?.is("Failed")),
    )
}

/// The first condition with reason `JobComplete` (Healthy) or `JobFailed` (Degraded) that is
/// `True`, with its `<reason> <message>`; else Progressing with the last one's.
fn sql_job(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut message = Field::from(NO_STATUS);
    if let Some(conditions) = status_conditions(env.obj)? {
        for c in conditions.items()? {
            message = reason_message(c)?.into();
            let reason = c.get("reason")?;
            let is_true = c.get("status")?.is("True");
            if reason.is("JobComplete") && is_true {
                return Ok(Hs::new("Healthy", message));
            }
            if reason.is("JobFailed") && is_true {
                return Ok(Hs::new("Degraded", message));
            }
        }
    }
    Ok(Hs::new("Progressing", message))
}
