//! `flagger.app`: Canary, as Argo CD 3.6.2's script.

use super::shapes_b::{cat, lt, to_number};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[Rule { group: "flagger.app", kind: "Canary", check: canary }];

const SEP: &str = " --- ";

/// The phase (Failed Degraded; Progressing, Finalising, Promoting Progressing; Succeeded,
/// Initialized Healthy; else Unknown) with a message of the phase, the canary weight when
/// above 0 and the conditions' messages; Unknown, `No status` without a status.
fn canary(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(Hs::new("Unknown", "No status"));
    }
    let mut message = String::new();
    let weight = status.get("canaryWeight")?;
    let number = to_number(weight).map_or(Lv::Nil, Lv::Num);
    if lt(Lv::Num(0.0), number)? {
        message = cat(&[Lv::Str("Canary Weight: "), weight, Lv::Str(" %")])?;
    }
    for c in status.get("conditions")?.items()? {
        if !message.is_empty() {
            message.push_str(SEP);
        }
        message.push_str(&c.get("message")?.text()?);
    }
    let phase = status.get("phase")?;
    let health = if phase.is("Failed") {
        "Degraded"
    } else if phase.is("Progressing") || phase.is("Finalising") || phase.is("Promoting") {
        "Progressing"
    } else if phase.is("Succeeded") || phase.is("Initialized") {
        "Healthy"
    } else {
        "Unknown"
    };
    Ok(Hs::new(health, cat(&[phase, Lv::Str(SEP), Lv::Str(&message)])?))
}
