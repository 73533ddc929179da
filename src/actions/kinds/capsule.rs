//! `capsule.clastix.io`: GlobalTenantResource, Tenant and TenantResource, as Argo CD 3.6.2's
//! scripts.

use super::table::{self, Call, Fault, Field, Lv, Obj, Out};
use super::{Kind, Offers, Run, actions, entry, flag};

const WITH_RECONCILE: &[(&str, Run)] =
    &[("cordon", cordon), ("reconcile", reconcile), ("uncordon", uncordon)];

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "capsule.clastix.io",
        kind: "GlobalTenantResource",
        discover: discover_with_reconcile,
        actions: WITH_RECONCILE,
    },
    Kind {
        group: "capsule.clastix.io",
        kind: "Tenant",
        discover: discover_tenant,
        actions: &[("cordon", cordon), ("uncordon", uncordon)],
    },
    Kind {
        group: "capsule.clastix.io",
        kind: "TenantResource",
        discover: discover_with_reconcile,
        actions: WITH_RECONCILE,
    },
];

const PAUSE: &str = "fa fa-fw fa-pause";
const PLAY: &str = "fa fa-fw fa-play";

/// `spec.cordoned` in Lua's sense, `false` without a `spec`.
fn cordoned(obj: Lv<'_>) -> Result<bool, Fault> {
    let spec = obj.field("spec")?;
    Ok(!spec.is_nil() && spec.field("cordoned")?.truthy())
}

/// `cordon` enabled when not cordoned, `uncordon` when cordoned.
fn discover_tenant(obj: Lv<'_>) -> Result<Offers, Fault> {
    let c = cordoned(obj)?;
    Ok(actions([
        ("cordon", entry(flag(c), Some(PAUSE), None)),
        ("uncordon", entry(flag(!c), Some(PLAY), None)),
    ]))
}

/// As [`discover_tenant`], with `reconcile` enabled when not cordoned.
fn discover_with_reconcile(obj: Lv<'_>) -> Result<Offers, Fault> {
    let c = cordoned(obj)?;
    Ok(actions([
        ("cordon", entry(flag(c), Some(PAUSE), None)),
        ("uncordon", entry(flag(!c), Some(PLAY), None)),
        ("reconcile", entry(flag(c), Some("fa fa-fw fa-rotate-right"), None)),
    ]))
}

/// `spec.cordoned = true`, making `spec` when there is none.
fn cordon(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::ensure(&mut obj, &[], "spec")?;
    table::set_bool(&mut obj, &["spec"], "cordoned", true)?;
    table::done(obj)
}

/// `spec.cordoned = false` when it is set and true in Lua's sense.
fn uncordon(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    if cordoned(obj.lv())? {
        table::set_bool(&mut obj, &["spec"], "cordoned", false)?;
    }
    table::done(obj)
}

/// Sets `reconcile.projectcapsule.dev/requestedAt` to the time.
fn reconcile(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let now = call.date("!%Y-%m-%dT%XZ");
    table::annotate(&mut obj, &["metadata"], "reconcile.projectcapsule.dev/requestedAt", now)?;
    table::done(obj)
}
