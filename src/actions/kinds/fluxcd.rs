//! Flux: the `*.toolkit.fluxcd.io` groups (helm, image, kustomize, notification, source), as
//! Argo CD 3.6.2's scripts. Every kind has `suspend` and `resume`; all but Alert and Provider
//! have `reconcile`.

use serde_json::Value;

use super::table::{self, Call, Fault, Field, Lv, Obj, Out};
use super::{Kind, Offers, Run, actions, entry, flag};

const FULL: &[(&str, Run)] = &[("reconcile", reconcile), ("resume", resume), ("suspend", suspend)];
const NO_RECONCILE: &[(&str, Run)] = &[("resume", resume), ("suspend", suspend)];

const fn full(group: &'static str, kind: &'static str) -> Kind {
    Kind { group, kind, discover: discover_full, actions: FULL }
}

const fn no_reconcile(group: &'static str, kind: &'static str) -> Kind {
    Kind { group, kind, discover: discover_no_reconcile, actions: NO_RECONCILE }
}

pub(super) const KINDS: &[Kind] = &[
    full("helm.toolkit.fluxcd.io", "HelmRelease"),
    full("image.toolkit.fluxcd.io", "ImageRepository"),
    full("image.toolkit.fluxcd.io", "ImageUpdateAutomation"),
    full("kustomize.toolkit.fluxcd.io", "Kustomization"),
    no_reconcile("notification.toolkit.fluxcd.io", "Alert"),
    no_reconcile("notification.toolkit.fluxcd.io", "Provider"),
    full("notification.toolkit.fluxcd.io", "Receiver"),
    full("source.toolkit.fluxcd.io", "Bucket"),
    full("source.toolkit.fluxcd.io", "GitRepository"),
    full("source.toolkit.fluxcd.io", "HelmChart"),
    full("source.toolkit.fluxcd.io", "HelmRepository"),
    full("source.toolkit.fluxcd.io", "OCIRepository"),
];

/// Whether `spec.suspend` is set and true in Lua's sense (`obj.spec` must be a table or a
/// string).
fn suspended(obj: Lv<'_>) -> Result<bool, Fault> {
    Ok(obj.fields(&["spec", "suspend"])?.truthy())
}

/// `reconcile` and `suspend` enabled when not suspended, `resume` when suspended.
fn discover_full(obj: Lv<'_>) -> Result<Offers, Fault> {
    let s = suspended(obj)?;
    Ok(actions([
        ("reconcile", entry(flag(s), None, None)),
        ("suspend", entry(flag(s), None, None)),
        ("resume", entry(flag(!s), None, None)),
    ]))
}

/// `suspend` enabled when not suspended, `resume` when suspended.
fn discover_no_reconcile(obj: Lv<'_>) -> Result<Offers, Fault> {
    let s = suspended(obj)?;
    Ok(actions([("suspend", entry(flag(s), None, None)), ("resume", entry(flag(!s), None, None))]))
}

/// Sets `reconcile.fluxcd.io/requestedAt` to `By Argo CD at: <time>` (no zone letter).
fn reconcile(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let at = call.after("By Argo CD at: ", "!%Y-%m-%dT%X");
    table::annotate(&mut obj, &["metadata"], "reconcile.fluxcd.io/requestedAt", at)?;
    table::done(obj)
}

/// `spec.suspend = true`: in a `spec` map of the source at once ([`Obj::set_in_fresh_map`]),
/// anything else as the script does it.
pub(super) fn suspend(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    if !obj.set_in_fresh_map(&["spec"], |_| Some([("suspend", Some(Value::Bool(true)))])) {
        table::set_bool(&mut obj, &["spec"], "suspend", true)?;
    }
    table::done(obj)
}

/// `spec.suspend = false` when it is set and true in Lua's sense; else the object unchanged.
/// A `spec` map of the source is read and set at once ([`Obj::set_in_fresh_map`]).
pub(super) fn resume(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    let fresh = obj.set_in_fresh_map(&["spec"], |spec| {
        let on = spec.get("suspend").is_some_and(|v| Lv::of(v).truthy());
        on.then_some([("suspend", Some(Value::Bool(false)))])
    });
    if fresh {
        return table::done(obj);
    }
    if obj.read(&["spec", "suspend"])?.truthy() {
        table::set_bool(&mut obj, &["spec"], "suspend", false)?;
    }
    table::done(obj)
}
