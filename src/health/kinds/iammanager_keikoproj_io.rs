//! `iammanager.keikoproj.io`: Iamrole, as Argo CD 3.6.2's script.

use super::shapes_b::{cat, lt, or};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "iammanager.keikoproj.io", kind: "Iamrole", check: iamrole }];

/// Ready Healthy, naming the role; an error state (Error, RolesMaxLimitReached,
/// PolicyNotAllowed, RoleNameNotAvailable) Degraded with the retries and the error; else
/// Progressing.
fn iamrole(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let none = Lv::Str("<none>");
        let name = or(status.get("roleName")?, none);
        let arn = or(status.get("roleARN")?, none);
        let id = or(status.get("roleID")?, none);
        let role = [
            Lv::Str("for role '"),
            name,
            Lv::Str("' with ARN '"),
            arn,
            Lv::Str("' and ID '"),
            id,
            Lv::Str("'."),
        ];
        let state = status.get("state")?;
        if state.is("Ready") {
            let mut parts = role;
            parts[0] = Lv::Str("Role '");
            parts[2] = Lv::Str("' exists with ARN '");
            return Ok(Hs::new("Healthy", cat(&parts)?));
        }
        if ["Error", "RolesMaxLimitReached", "PolicyNotAllowed", "RoleNameNotAvailable"]
            .iter()
            .any(|s| state.is(s))
        {
            let mut message = String::from("Failed to reconcile the Iamrole ");
            let retries = status.get("retryCount")?;
            if !retries.is_nil() && lt(Lv::Num(0.0), retries)? {
                message.push_str("(retry ");
                message.push_str(&retries.to_text());
                message.push_str(") ");
            }
            message.push_str(&cat(&role)?);
            let error = status.get("errorDescription")?;
            if !error.is_nil() {
                message.push_str(" Reconciliation error was: ");
                message.push_str(&error.text()?);
            }
            return Ok(Hs::new("Degraded", message));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for Iamrole to be reconciled"))
}
