//! `notification.toolkit.fluxcd.io`: Receiver, as Argo CD 3.6.2's script.

use super::shapes_c::flux_counts;
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "notification.toolkit.fluxcd.io", kind: "Receiver", check: receiver }];

/// Suspended; else Flux's count, `Ready` `False` and `Reconciling` `True` both failing
/// (Degraded), one `Ready` `True` Healthy, else Degraded.
fn receiver(env: &Env<'_>) -> Result<Hs, Fault> {
    flux_counts(env, "False", "Degraded")
}
