//! `ceph.rook.io` (Rook): CephCluster and CephObjectStore, as Argo CD 3.6.2's scripts.

use std::borrow::Cow;

use super::lua::{Field, number_text};
use super::shapes_a::sorted_keys;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "ceph.rook.io", kind: "CephCluster", check: ceph_cluster },
    Rule { group: "ceph.rook.io", kind: "CephObjectStore", check: ceph_object_store },
];

/// The message the CephCluster script builds: a text, or (once `status.message` is taken as
/// it is) any value.
enum Message<'a> {
    Text(String),
    Value(Lv<'a>),
}

impl<'a> Message<'a> {
    /// Appends ` - <part>` (or sets the message to `part` while it is empty); an empty part
    /// adds nothing.
    fn append(&mut self, part: Message<'a>) -> Result<(), Fault> {
        let part = match part {
            Message::Value(Lv::Str(s)) => Message::Text(s.to_string()),
            other => other,
        };
        if matches!(&part, Message::Text(s) if s.is_empty()) {
            return Ok(());
        }
        if matches!(self, Message::Text(s) if s.is_empty()) {
            *self = part;
            return Ok(());
        }
        let joined = format!("{} - {}", self.text()?, part.text()?);
        *self = Message::Text(joined);
        Ok(())
    }

    /// The message as an operand of `..`.
    fn text(&self) -> Result<Cow<'_, str>, Fault> {
        match self {
            Message::Text(s) => Ok(Cow::Borrowed(s)),
            Message::Value(v) => v.text(),
        }
    }

    fn field(self) -> Field {
        match self {
            Message::Text(s) => Field::from(s),
            Message::Value(v) => Field::from(v),
        }
    }
}

/// `table.concat(parts, sep)`: strings and numbers only.
fn concat(parts: &[Lv<'_>], sep: &str) -> Result<String, Fault> {
    let mut out = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        out.push(match p {
            Lv::Str(s) => Cow::Borrowed(*s),
            Lv::Num(n) => Cow::Owned(number_text(*n)),
            other => {
                return Err(Fault(format!(
                    "invalid value (at index {}) in table for 'concat' (a {})",
                    i + 1,
                    other.type_name()
                )));
            }
        });
    }
    Ok(out.join(sep))
}

/// Ceph's health (HEALTH_OK Healthy, HEALTH_WARN and HEALTH_ERR Degraded) with its details;
/// when Healthy, the cluster's state (Created and Connected Healthy, Error Degraded, any other
/// Progressing); the status's message appended; Progressing until there is a status.
fn ceph_cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for status to be reported"));
    }
    let mut health = "Progressing";
    let mut message = Message::Text(String::new());
    let ceph = status.get("ceph")?;
    if !ceph.is_nil() && !ceph.get("health")?.is_nil() {
        let ceph_health = ceph.get("health")?;
        let mut details_message = String::new();
        let details = ceph.get("details")?;
        if !details.is_nil() {
            let mut parts = Vec::new();
            for (_, info) in sorted_keys(details)? {
                let m = info.get("message")?;
                if !m.is_nil() {
                    parts.push(m);
                }
            }
            if !parts.is_empty() {
                details_message = format!(" ({})", concat(&parts, "; ")?);
            }
        }
        if ceph_health.is("HEALTH_ERR") || ceph_health.is("HEALTH_WARN") {
            health = "Degraded";
        } else if ceph_health.is("HEALTH_OK") {
            health = "Healthy";
        }
        let part = format!("Ceph health is {}{details_message}", ceph_health.text()?);
        message.append(Message::Text(part))?;
    }
    let state = status.get("state")?;
    if !state.is_nil() && health == "Healthy" {
        let part = format!("Ceph cluster state is {}", state.text()?);
        message.append(Message::Text(part))?;
        health = match state.str() {
            Some("Created" | "Connected") => "Healthy",
            Some("Error") => "Degraded",
            _ => "Progressing",
        };
    }
    let status_message = status.get("message")?;
    if !status_message.is_nil() {
        message.append(Message::Value(status_message))?;
    }
    Ok(Hs::new(health, message.field()))
}

/// The phase (Ready Healthy, Failure Degraded, any other Progressing) and the endpoint.
fn ceph_object_store(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    let mut message = String::from("Waiting for status to be reported");
    if status.is_nil() {
        return Ok(Hs::new("Progressing", message));
    }
    let mut health = "Progressing";
    let phase = status.get("phase")?;
    if !phase.is_nil() {
        message = format!("Ceph object store phase is {}", phase.text()?);
        if phase.is("Ready") {
            health = "Healthy";
        } else if phase.is("Failure") {
            health = "Degraded";
        }
    }
    let info = status.get("info")?;
    if !info.is_nil() {
        let endpoint = info.get("endpoint")?;
        if !endpoint.is_nil() && !endpoint.is("") {
            message = format!("{message} - endpoint: {}", endpoint.text()?);
        }
    }
    Ok(Hs::new(health, message))
}
