//! `proclaim.dogmatiq.io`: DNSSDServiceInstance, as Argo CD 3.6.2's script.

use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[Rule {
    group: "proclaim.dogmatiq.io",
    kind: "DNSSDServiceInstance",
    check: dnssd_service_instance,
}];

/// The last `Adopted`, `Advertised` and `Discoverable` conditions: not adopted or an
/// advertising error is Degraded, a discovery error Unknown, discoverable Healthy, else
/// Progressing.
fn dnssd_service_instance(env: &Env<'_>) -> Result<Hs, Fault> {
    let (mut adopted, mut advertised, mut discovered) = (None, None, None);
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let conditions = status.get("conditions")?;
        if !conditions.is_nil() {
            for c in conditions.items()? {
                let t = c.get("type")?;
                if t.is("Adopted") {
                    adopted = Some(c);
                } else if t.is("Advertised") {
                    advertised = Some(c);
                } else if t.is("Discoverable") {
                    discovered = Some(c);
                }
            }
        }
    }
    if field(adopted, "status")?.is("False") {
        return Ok(Hs::new("Degraded", field(adopted, "message")?));
    }
    let reason = field(advertised, "reason")?;
    if reason.is("AdvertiseError") || reason.is("UnadvertiseError") {
        return Ok(Hs::new("Degraded", field(advertised, "message")?));
    }
    let message = field(discovered, "message")?;
    if field(discovered, "reason")?.is("DiscoveryError") {
        return Ok(Hs::new("Unknown", message));
    }
    if field(discovered, "status")?.is("True") {
        return Ok(Hs::new("Healthy", message));
    }
    Ok(Hs::new("Progressing", message))
}

/// `c.k` where a condition not found reads as `{status = "Unknown"}`.
fn field<'a>(c: Option<Lv<'a>>, k: &str) -> Result<Lv<'a>, Fault> {
    match c {
        Some(c) => c.get(k),
        None => Ok(if k == "status" { Lv::Str("Unknown") } else { Lv::Nil }),
    }
}
