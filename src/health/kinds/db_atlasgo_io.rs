//! `db.atlasgo.io`: AtlasMigration and AtlasSchema, as Argo CD 3.6.2's scripts.

use super::shapes_b::status_conditions;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "db.atlasgo.io", kind: "AtlasMigration", check: atlas_migration },
    Rule { group: "db.atlasgo.io", kind: "AtlasSchema", check: atlas_schema },
];

/// The first `Ready` condition, if any.
fn ready<'a>(env: &Env<'a>) -> Result<Option<Lv<'a>>, Fault> {
    match status_conditions(env.obj)? {
        Some(conditions) => conditions.find_type("Ready"),
        None => Ok(None),
    }
}

/// Progressing while there is no `Ready` condition; Healthy when it is `True`; else
/// Progressing when `reconciling` says so, Degraded otherwise; the message is the reason.
fn atlas(env: &Env<'_>, reconciling: fn(Lv<'_>) -> Result<bool, Fault>) -> Result<Hs, Fault> {
    let Some(ready) = ready(env)? else {
        return Ok(Hs::new("Progressing", "Waiting for Atlas Operator"));
    };
    if ready.get("status")?.is("True") {
        return Ok(Hs::new("Healthy", ready.get("reason")?));
    }
    let status = if reconciling(ready)? { "Progressing" } else { "Degraded" };
    Ok(Hs::new(status, ready.get("reason")?))
}

/// [`atlas`], reconciling while the reason is `Reconciling`.
fn atlas_migration(env: &Env<'_>) -> Result<Hs, Fault> {
    atlas(env, |c| Ok(c.get("reason")?.is("Reconciling")))
}

/// [`atlas`], reconciling while the message is `Reconciling` or `GettingDevDB`.
fn atlas_schema(env: &Env<'_>) -> Result<Hs, Fault> {
    atlas(env, |c| {
        let m = c.get("message")?;
        Ok(m.is("Reconciling") || m.is("GettingDevDB"))
    })
}
