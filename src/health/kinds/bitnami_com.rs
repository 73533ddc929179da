//! `bitnami.com` (Sealed Secrets): SealedSecret, as Argo CD 3.6.2's scripts.

use super::shapes_a::{READY_SYNCED, eq, first_on};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "bitnami.com", kind: "SealedSecret", check: sealed_secret }];

/// Progressing until the status describes the current generation; then Synced `False`
/// Degraded, `True` Healthy; else Progressing.
fn sealed_secret(env: &Env<'_>) -> Result<Hs, Fault> {
    let obj = env.obj;
    let waiting = || Hs::new("Progressing", "Waiting for Sealed Secret to be decrypted");
    let metadata = obj.get("metadata")?;
    if metadata.is_nil() {
        return Ok(waiting());
    }
    let generation = metadata.get("generation")?;
    let status = obj.get("status")?;
    if generation.is_nil() || status.is_nil() || !eq(status.get("observedGeneration")?, generation)
    {
        return Ok(waiting());
    }
    let conditions = status.get("conditions")?;
    if !conditions.is_nil()
        && let Some(hs) = first_on(conditions, READY_SYNCED)?
    {
        return Ok(hs);
    }
    Ok(waiting())
}
