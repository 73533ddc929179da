//! `policy.open-cluster-management.io`: Policy, ConfigurationPolicy, OperatorPolicy and
//! CertificatePolicy, as Argo CD 3.6.2's scripts.

use super::shapes_d::{cat, join, lua_eq};
use super::{Env, Fault, Hs, Lv, Rule};

const G: &str = "policy.open-cluster-management.io";

pub(super) const RULES: &[Rule] = &[
    Rule { group: G, kind: "CertificatePolicy", check: certificate_policy },
    Rule { group: G, kind: "ConfigurationPolicy", check: configuration_policy },
    Rule { group: G, kind: "OperatorPolicy", check: operator_policy },
    Rule { group: G, kind: "Policy", check: policy },
];

const WAITING: &str = "Waiting for the status to be reported";

/// `status.compliant`, when `status` and it are both set (`None`: Progressing, waiting).
fn compliant<'a>(env: &Env<'a>) -> Result<Option<(Lv<'a>, Lv<'a>)>, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(None);
    }
    let compliant = status.get("compliant")?;
    Ok((!compliant.is_nil()).then_some((status, compliant)))
}

/// `Compliant` is Healthy, any other compliance Degraded.
fn certificate_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    Ok(match compliant(env)? {
        None => Hs::new("Progressing", WAITING),
        Some((_, c)) if c.is("Compliant") => {
            Hs::new("Healthy", "All certificates found comply with the policy")
        }
        Some(_) => Hs::new("Degraded", "At least once certificate does not comply with the policy"),
    })
}

/// Progressing until the evaluated generation is the object's; then `Compliant` is Healthy,
/// else Degraded, with the messages of the compliancy details' conditions (Progressing when
/// there are no details).
fn configuration_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    let Some((status, compliant)) = compliant(env)? else {
        return Ok(Hs::new("Progressing", WAITING));
    };
    let evaluated = status.get("lastEvaluatedGeneration")?;
    if !lua_eq(evaluated, env.obj.get("metadata")?.get("generation")?) {
        return Ok(Hs::new("Progressing", "Waiting for the status to be updated"));
    }
    let code = if compliant.is("Compliant") { "Healthy" } else { "Degraded" };
    let details = status.get("compliancyDetails")?;
    if details.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for compliance"));
    }
    let mut messages = Vec::new();
    for d in details.items()? {
        let conditions = d.get("conditions")?;
        if conditions.is_nil() {
            continue;
        }
        for c in conditions.items()? {
            let message = c.get("message")?;
            if !message.is_nil() && !c.get("type")?.is_nil() {
                messages.push(cat(&[c.get("type")?, Lv::Str(" - "), message])?);
            }
        }
    }
    Ok(Hs::new(code, messages.join("; ")))
}

/// Progressing until the observed generation is the object's; then the `Compliant`
/// condition: `True` is Healthy, else Degraded, with its message.
fn operator_policy(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("conditions")?.is_nil() {
        return Ok(Hs::new("Progressing", WAITING));
    }
    let observed = status.get("observedGeneration")?;
    if !observed.is_nil() && !lua_eq(observed, env.obj.get("metadata")?.get("generation")?) {
        return Ok(Hs::new("Progressing", "Waiting for the status to be updated"));
    }
    if let Some(c) = status.get("conditions")?.find_type("Compliant")? {
        let code = if c.get("status")?.is("True") { "Healthy" } else { "Degraded" };
        return Ok(Hs::new(code, c.get("message")?));
    }
    Ok(Hs::new("Progressing", "Waiting for the compliance condition"))
}

/// Disabled is Healthy; no compliance yet is Progressing (Healthy when placed on no
/// cluster); `Compliant` is Healthy, else Degraded, naming the non-compliant clusters (root
/// policy) or templates (replicated policy).
fn policy(env: &Env<'_>) -> Result<Hs, Fault> {
    if env.obj.get("spec")?.get("disabled")?.truthy() {
        return Ok(Hs::new("Healthy", "Policy is disabled"));
    }
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Progressing", WAITING));
    }
    if status.get("compliant")?.is_nil() && status.get("status")?.is_nil() {
        let placement = status.get("placement")?;
        if !placement.is_nil() && placement.len()? > 0 {
            return Ok(Hs::new("Healthy", "No clusters match this policy"));
        }
    }
    let compliant = status.get("compliant")?;
    if compliant.is_nil() {
        return Ok(Hs::new("Progressing", WAITING));
    }
    let code = if compliant.is("Compliant") { "Healthy" } else { "Degraded" };
    let mut noncompliant = Vec::new();
    let (entries, what) = if !status.get("status")?.is_nil() {
        (status.get("status")?, "clusters")
    } else if !status.get("details")?.is_nil() {
        (status.get("details")?, "templates")
    } else {
        return Ok(Hs::status(code));
    };
    for e in entries.items()? {
        if !e.get("compliant")?.is("Compliant") {
            let name = if what == "clusters" {
                e.get("clustername")?
            } else {
                e.get("templateMeta")?.get("name")?
            };
            if !name.is_nil() {
                noncompliant.push(name);
            }
        }
    }
    Ok(Hs::new(
        code,
        if noncompliant.is_empty() {
            format!("All {what} are compliant")
        } else {
            format!("NonCompliant {what}: {}", join(&noncompliant, ", ")?)
        },
    ))
}
