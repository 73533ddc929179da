//! Core `v1` Pod.

use super::fields::Reader;
use super::{HealthError, HealthResult, HealthStatus};
use crate::object::annotation;
use crate::vocabulary::go_quote;
use crate::vocabulary::{IGNORE_RESTART_POLICY_ANNOTATION, is_hook};

/// Argo CD's Pod check.
pub(crate) fn health(r: &Reader<'_>) -> Result<HealthResult, HealthError> {
    use HealthStatus::{Degraded, Healthy, Progressing, Unknown};
    let restart_policy = r.str("/spec/restartPolicy")?;
    let ignore_rp = annotation(r.obj, IGNORE_RESTART_POLICY_ANNOTATION) == Some("true");
    let long_running = restart_policy == "Always" || (ignore_rp && !is_hook(r.obj));
    let containers = r.items("/status/containerStatuses")?;
    let message = r.str("/status/message")?;

    if long_running {
        let mut messages = Vec::new();
        for c in &containers {
            if r.opt_object(&format!("{c}/state/waiting"))?.is_none() {
                continue;
            }
            let reason = r.str(&format!("{c}/state/waiting/reason"))?;
            if reason.starts_with("Err") || reason.ends_with("Error") || reason.ends_with("BackOff")
            {
                messages.push(r.str(&format!("{c}/state/waiting/message"))?);
            }
        }
        if !messages.is_empty() {
            return Ok(HealthResult::new(Degraded, messages.join(", ")));
        }
    }

    match r.str("/status/phase")? {
        "Pending" => return Ok(HealthResult::new(Progressing, message)),
        "Succeeded" => return Ok(HealthResult::new(Healthy, message)),
        "Failed" => {
            if !message.is_empty() {
                return Ok(HealthResult::new(Degraded, message));
            }
            let mut all = r.items("/status/initContainerStatuses")?;
            all.extend(containers.iter().cloned());
            for c in &all {
                if r.opt_object(&format!("{c}/state/terminated"))?.is_none() {
                    continue;
                }
                let text = terminated_message(r, c)?;
                if !text.is_empty() {
                    return Ok(HealthResult::new(Degraded, text));
                }
            }
            return Ok(HealthResult::new(Degraded, ""));
        }
        "Running" => {
            if long_running {
                let ready = match r.condition("/status/conditions", "Ready")? {
                    Some(c) => r.str(&format!("{c}/status"))? == "True",
                    None => false,
                };
                if ready {
                    return Ok(HealthResult::new(Healthy, message));
                }
                for c in &containers {
                    if r.opt_object(&format!("{c}/lastState/terminated"))?.is_some() {
                        return Ok(HealthResult::new(Degraded, message));
                    }
                }
                return Ok(HealthResult::new(Progressing, message));
            }
            if matches!(restart_policy, "OnFailure" | "Never") {
                return Ok(HealthResult::new(Progressing, message));
            }
        }
        _ => {}
    }
    Ok(HealthResult::new(Unknown, message))
}

/// The text of a terminated container: its message, else `OOMKilled`, else its exit code.
fn terminated_message(r: &Reader<'_>, c: &str) -> Result<String, HealthError> {
    let message = r.str(&format!("{c}/state/terminated/message"))?;
    if !message.is_empty() {
        return Ok(message.to_string());
    }
    if r.str(&format!("{c}/state/terminated/reason"))? == "OOMKilled" {
        return Ok("OOMKilled".to_string());
    }
    let code = r.int(&format!("{c}/state/terminated/exitCode"))?;
    if code != 0 {
        let name = r.str(&format!("{c}/name"))?;
        return Ok(format!("container {} failed with exit code {code}", go_quote(name)));
    }
    Ok(String::new())
}
