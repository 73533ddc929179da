//! `serving.kserve.io` (KServe): InferenceService and LLMInferenceService, as Argo CD
//! 3.6.2's scripts.

use super::lua::cat_into;
use super::shapes_d::{Text, lua_eq};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "serving.kserve.io", kind: "InferenceService", check: inference_service },
    Rule { group: "serving.kserve.io", kind: "LLMInferenceService", check: llm_inference_service },
];

/// A `Stopped` condition `True` is Suspended. Else a model transition not up to date, and
/// the conditions not `True`, are listed; nothing listed is Healthy, a failed transition
/// Degraded, else Progressing.
fn inference_service(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = Hs::new("Progressing", "Waiting for InferenceService to report status...");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting);
    }
    let (mut progressing, mut degraded) = (false, false);
    let (mut failed, mut unknown) = (0usize, 0usize);
    let mut msg = Text::Read(Lv::Str(""));
    let model = status.get("modelStatus")?;
    if !model.is_nil() {
        let transition = model.get("transitionStatus")?;
        if !transition.is("UpToDate") {
            if transition.is("InProgress") {
                progressing = true;
            } else {
                degraded = true;
            }
            msg.append(&[Lv::Str("0: transitionStatus | "), transition])?;
        }
    }
    let conditions = status.get("conditions")?;
    if conditions.is_nil() {
        return Ok(waiting);
    }
    for (i, c) in conditions.pairs()? {
        // A condition's members in one walk; the script reads `type` first.
        let [message, reason, s, t] =
            c.get_each("type", ["message", "reason", "status", "type"])?;
        if t.is("Stopped") && s.is("True") {
            return Ok(Hs::new("Suspended", "InferenceService is Stopped"));
        }
        if s.is("Unknown") {
            unknown += 1;
        } else if s.is("False") && !t.is("Stopped") {
            failed += 1;
        }
        if !s.is("True") && !t.is("Stopped") {
            msg.append(&[Lv::Str(" | "), Lv::Str(&i.text()), Lv::Str(": "), t, Lv::Str(" | "), s])?;
            for v in [reason, message] {
                if !v.is_nil() && !v.is("") {
                    msg.append(&[Lv::Str(" | "), v])?;
                }
            }
        }
    }
    let code = if !progressing && !degraded && unknown == 0 && failed == 0 {
        msg = Text::Read(Lv::Str("InferenceService is healthy."));
        "Healthy"
    } else if !degraded {
        "Progressing"
    } else {
        "Degraded"
    };
    Ok(Hs::new(code, msg.field()))
}

/// Not yet observed (status or Ready generation stale) is Progressing; a condition with
/// reason `Stopped` Suspended; Ready `True` Healthy, `False` Degraded, else Progressing, with
/// the conditions that are not `True` (or Ready's message).
fn llm_inference_service(env: &Env<'_>) -> Result<Hs, Fault> {
    let mut hs = Hs::new("Progressing", "Waiting for LLMInferenceService to report status...");
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("conditions")?.is_nil() {
        return Ok(hs);
    }
    let mut ready = None;
    let mut stopped = false;
    let mut msg = String::new();
    for c in status.get("conditions")?.items()? {
        // A condition's members in one walk; the script reads `reason` first.
        let [message, reason, s, t] =
            c.get_each("reason", ["message", "reason", "status", "type"])?;
        if reason.is("Stopped") {
            stopped = true;
        }
        if t.is("Ready") {
            ready = Some(c);
        } else if !s.is("True") {
            if !msg.is_empty() {
                msg.push_str("; ");
            }
            // Written in place: the same text and errors as concatenating each part.
            cat_into(&mut msg, &[t, Lv::Str(": "), s])?;
            for v in [reason, message] {
                if !v.is_nil() && !v.is("") {
                    cat_into(&mut msg, &[Lv::Str(" | "), v])?;
                }
            }
        }
    }
    let metadata = env.obj.get("metadata")?;
    let generation = if metadata.is_nil() { Lv::Nil } else { metadata.get("generation")? };
    if !generation.is_nil() {
        let observed = status.get("observedGeneration")?;
        let mut stale = !observed.is_nil() && !lua_eq(observed, generation);
        if let Some(r) = ready {
            let observed = r.get("observedGeneration")?;
            if !observed.is_nil() && !lua_eq(observed, generation) {
                stale = true;
            }
        }
        if stale {
            return Ok(Hs::new(
                "Progressing",
                "Waiting for LLMInferenceService reconciliation (generation mismatch)",
            ));
        }
    }
    if stopped {
        return Ok(Hs::new("Suspended", "LLMInferenceService is Stopped"));
    }
    let ready_status = match ready {
        Some(r) => r.get("status")?,
        None => Lv::Nil,
    };
    if ready_status.is("True") {
        return Ok(Hs::new("Healthy", "LLMInferenceService is healthy."));
    }
    hs.status = if ready_status.is("False") { "Degraded" } else { "Progressing" }.into();
    if !msg.is_empty() {
        hs.message = msg.into();
    } else if let Some(r) = ready {
        let m = r.get("message")?;
        if !m.is_nil() && !m.is("") {
            hs.message = m.into();
        }
    }
    Ok(hs)
}
