//! `kubernetes-client.io`: ExternalSecret, as Argo CD 3.6.2's script.

use super::shapes_c::starts_with_method;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "kubernetes-client.io", kind: "ExternalSecret", check: external_secret }];

/// `status.status`: `SUCCESS` is Healthy, a text starting `ERROR` is Degraded with the text
/// less every `ERROR, `, anything else Progressing.
fn external_secret(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let s = status.get("status")?;
        if s.is("SUCCESS") {
            return Ok(Hs::new("Healthy", "Fetched ExternalSecret."));
        }
        if starts_with_method(s, "ERROR")? {
            let text = s.str().unwrap_or_default();
            return Ok(Hs::new("Degraded", text.replace("ERROR, ", "")));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for ExternalSecret."))
}
