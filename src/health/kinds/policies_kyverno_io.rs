//! `policies.kyverno.io`: the CEL policies (DeletingPolicy, GeneratingPolicy,
//! ImageValidatingPolicy, MutatingPolicy, ValidatingPolicy and their Namespaced forms), as
//! Argo CD 3.6.2's scripts: one shape, three variants.

use super::lua::Field;
use super::shapes_c::lua_lt;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "policies.kyverno.io", kind: KINDS[0].kind, check: policy::<0> },
    Rule { group: "policies.kyverno.io", kind: KINDS[1].kind, check: policy::<1> },
    Rule { group: "policies.kyverno.io", kind: KINDS[2].kind, check: policy::<2> },
    Rule { group: "policies.kyverno.io", kind: KINDS[3].kind, check: policy::<3> },
    Rule { group: "policies.kyverno.io", kind: KINDS[4].kind, check: policy::<4> },
    Rule { group: "policies.kyverno.io", kind: KINDS[5].kind, check: policy::<5> },
    Rule { group: "policies.kyverno.io", kind: KINDS[6].kind, check: policy::<6> },
    Rule { group: "policies.kyverno.io", kind: KINDS[7].kind, check: policy::<7> },
    Rule { group: "policies.kyverno.io", kind: KINDS[8].kind, check: policy::<8> },
    Rule { group: "policies.kyverno.io", kind: KINDS[9].kind, check: policy::<9> },
];

/// The kinds read by [`policy`], by the index its rule passes.
const KINDS: [Ready; 10] = [
    Ready { kind: "DeletingPolicy", webhook: false, status_message: true },
    Ready { kind: "GeneratingPolicy", webhook: false, status_message: true },
    Ready { kind: "ImageValidatingPolicy", webhook: true, status_message: true },
    Ready { kind: "MutatingPolicy", webhook: true, status_message: false },
    Ready { kind: "NamespacedDeletingPolicy", webhook: false, status_message: true },
    Ready { kind: "NamespacedGeneratingPolicy", webhook: false, status_message: true },
    Ready { kind: "NamespacedImageValidatingPolicy", webhook: true, status_message: true },
    Ready { kind: "NamespacedMutatingPolicy", webhook: true, status_message: false },
    Ready { kind: "NamespacedValidatingPolicy", webhook: true, status_message: false },
    Ready { kind: "ValidatingPolicy", webhook: true, status_message: false },
];

/// How one kind reads a ready policy.
struct Ready {
    /// The kind, in the messages.
    kind: &'static str,
    /// Whether only a `WebhookConfigured` condition gives the Healthy message (else the first
    /// `True` condition).
    webhook: bool,
    /// Whether, without such a message, `conditionStatus.message` comes before `Policy is
    /// ready`.
    status_message: bool,
}

/// `cs.message` when set and not empty, else `default`.
fn status_message_or(cs: Lv<'_>, default: &str) -> Result<Field, Fault> {
    let m = cs.get("message")?;
    Ok(if !m.is_nil() && !m.is("") && m.truthy() { Field::from(m) } else { Field::from(default) })
}

/// `status.conditionStatus`: a condition observed at an older generation waits; `ready`
/// `true` is Healthy (with a `True` condition's message); else Degraded with the first
/// `False` condition (`<type>: <message>`) or the status's message.
fn policy<const I: usize>(env: &Env<'_>) -> Result<Hs, Fault> {
    let r = &KINDS[I];
    let status = env.obj.get("status")?;
    let cs = if status.is_nil() { Lv::Nil } else { status.get("conditionStatus")? };
    if cs.is_nil() {
        return Ok(Hs::new("Progressing", format!("Waiting for {} status", r.kind)));
    }
    let generation = env.obj.path(&["metadata", "generation"])?;
    if !generation.is_nil() {
        let conditions = cs.get("conditions")?;
        if !conditions.is_nil() {
            for c in conditions.items()? {
                let observed = c.get("observedGeneration")?;
                if !observed.is_nil() && lua_lt(observed, generation)? {
                    return Ok(Hs::new(
                        "Progressing",
                        format!("Waiting for {} status to reflect latest generation", r.kind),
                    ));
                }
            }
        }
    }
    if cs.get("ready")?.is_bool(true) {
        let mut message = Lv::Nil;
        let conditions = cs.get("conditions")?;
        if !conditions.is_nil() {
            for c in conditions.items()? {
                if (!r.webhook || c.get("type")?.is("WebhookConfigured"))
                    && c.get("status")?.is("True")
                {
                    message = c.get("message")?;
                    break;
                }
            }
        }
        if !message.is_nil() {
            return Ok(Hs::new("Healthy", message));
        }
        let message = if r.status_message {
            status_message_or(cs, "Policy is ready")?
        } else {
            Field::from("Policy is ready")
        };
        return Ok(Hs::new("Healthy", message));
    }
    let conditions = cs.get("conditions")?;
    if !conditions.is_nil() {
        for c in conditions.items()? {
            if c.get("status")?.is("False") {
                let message = format!("{}: {}", c.get("type")?.text()?, c.get("message")?.text()?);
                return Ok(Hs::new("Degraded", message));
            }
        }
    }
    Ok(Hs::new("Degraded", status_message_or(cs, "Policy is not ready")?))
}
