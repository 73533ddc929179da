//! `route.openshift.io`: Route, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "route.openshift.io", kind: "Route", check: route }];

/// Every ingress admitted (`Admitted` conditions `True`, counted over all ingresses) is
/// Healthy; any refused Degraded; else Progressing.
fn route(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = Hs::new("Progressing", "Route is still getting admitted");
    let status = env.obj.get("status")?;
    if status.is_nil() || status.get("ingress")?.is_nil() {
        return Ok(waiting);
    }
    let (mut rules, mut admitted, mut refused) = (0usize, 0usize, 0usize);
    for (_, ingress) in status.get("ingress")?.pairs()? {
        rules += 1;
        for (_, c) in ingress.get("conditions")?.pairs()? {
            if c.get("type")?.is("Admitted") {
                let s = c.get("status")?;
                if s.is("True") {
                    admitted += 1;
                } else if s.is("False") {
                    refused += 1;
                }
            }
        }
    }
    if admitted == rules {
        return Ok(Hs::new("Healthy", "Route is healthy"));
    }
    if refused > 0 {
        return Ok(Hs::new("Degraded", "Route is degraded"));
    }
    Ok(waiting)
}
