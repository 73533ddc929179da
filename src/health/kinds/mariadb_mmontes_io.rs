//! `mariadb.mmontes.io`: MariaDB, as Argo CD 3.6.2's script.

use super::shapes_c::status_conditions;
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "mariadb.mmontes.io", kind: "MariaDB", check: mariadb }];

/// The first `False` condition: Degraded when its reason is `Failed`, else Progressing;
/// with none, Healthy with the last condition's message.
fn mariadb(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)? {
        let mut message = Lv::Nil;
        for c in conditions.items()? {
            message = c.get("message")?;
            if c.get("status")?.is("False") {
                let status = if c.get("reason")?.is("Failed") { "Degraded" } else { "Progressing" };
                return Ok(Hs::new(status, message));
            }
        }
        return Ok(Hs::new("Healthy", message));
    }
    Ok(Hs::new("Progressing", "No status info available"))
}
