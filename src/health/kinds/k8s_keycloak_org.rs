//! `k8s.keycloak.org`: Keycloak, as Argo CD 3.6.2's script.

use super::shapes_b::{cat, lt};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "k8s.keycloak.org", kind: "Keycloak", check: keycloak }];

/// The script's sort order: `a` before `b` when both have a `lastTransitionTime` and `a`'s is
/// less; conditions without one go last.
fn before(a: Lv<'_>, b: Lv<'_>) -> Result<bool, Fault> {
    let ta = a.get("lastTransitionTime")?;
    if ta.is_nil() {
        return Ok(false);
    }
    let tb = b.get("lastTransitionTime")?;
    if tb.is_nil() {
        return Ok(true);
    }
    lt(ta, tb)
}

/// The conditions sorted by `lastTransitionTime` (as gopher-lua's `table.sort` sorts up to 12
/// items: Go's insertion sort; longer lists may order ties otherwise, see `SKIPPED.md`), then the first `Ready` `True` (Healthy) or `HasErrors` `True`
/// (Degraded, `Has Errors: <message>`); else Progressing; waiting without conditions.
fn keycloak(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("conditions")?.is_nil() {
        return Ok(Hs::new("Progressing", "Waiting for Keycloak status conditions to exist"));
    }
    let conditions = status.get("conditions")?;
    let Lv::Table(_) = conditions else {
        return Err(Fault(format!(
            "bad argument #1 to sort (table expected, got {})",
            conditions.type_name()
        )));
    };
    let mut sorted: Vec<Lv<'_>> = conditions.items()?.collect();
    for i in 1..sorted.len() {
        let mut j = i;
        while j > 0 && before(sorted[j], sorted[j - 1])? {
            sorted.swap(j, j - 1);
            j -= 1;
        }
    }
    for c in sorted {
        let t = c.get("type")?;
        let s = c.get("status")?;
        if t.is("Ready") && s.is("True") {
            return Ok(Hs::new("Healthy", ""));
        }
        if t.is("HasErrors") && s.is("True") {
            return Ok(Hs::new("Degraded", cat(&[Lv::Str("Has Errors: "), c.get("message")?])?));
        }
    }
    Ok(Hs::new("Progressing", ""))
}
