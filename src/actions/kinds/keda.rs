//! `keda.sh`: ScaledJob and ScaledObject, as Argo CD 3.6.2's scripts.

use super::table::{self, Call, Fault, Field, Lv, Obj, Out, out, set};
use super::{Kind, Offers, actions, entry, flag};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "keda.sh",
        kind: "ScaledJob",
        discover: discover_scaled_job,
        actions: &[("pause", pause), ("resume", resume_job)],
    },
    Kind {
        group: "keda.sh",
        kind: "ScaledObject",
        discover: discover_scaled_object,
        actions: &[
            ("pause", pause),
            ("paused-replicas", paused_replicas),
            ("resume", resume_object),
        ],
    },
];

const PAUSED: &str = "autoscaling.keda.sh/paused";
const PAUSED_REPLICAS: &str = "autoscaling.keda.sh/paused-replicas";
const PAUSE_ICON: &str = "fa fa-fw fa-pause-circle";
const PLAY_ICON: &str = "fa fa-fw fa-play-circle";

/// The annotations when `obj.metadata and obj.metadata.annotations` is true in Lua's sense.
fn annotations(obj: Lv<'_>) -> Result<Option<Lv<'_>>, Fault> {
    let meta = obj.field("metadata")?;
    if !meta.truthy() {
        return Ok(None);
    }
    let a = meta.field("annotations")?;
    Ok(a.truthy().then_some(a))
}

/// `pause` enabled unless the `paused` annotation is `"true"`, `resume` when it is.
fn discover_scaled_job(obj: Lv<'_>) -> Result<Offers, Fault> {
    let paused = match annotations(obj)? {
        Some(a) => a.field(PAUSED)?.is("true"),
        None => false,
    };
    Ok(actions([
        ("pause", entry(flag(paused), Some(PAUSE_ICON), None)),
        ("resume", entry(flag(!paused), Some(PLAY_ICON), None)),
    ]))
}

/// `pause` enabled unless paused or holding `paused-replicas`; `paused-replicas` (parameter
/// `replicas`, its default the annotation or `"0"`) unless paused; `resume` when either is set.
fn discover_scaled_object(obj: Lv<'_>) -> Result<Offers, Fault> {
    let (paused, current) = match annotations(obj)? {
        Some(a) => (a.field(PAUSED)?.is("true"), a.field(PAUSED_REPLICAS)?),
        None => (false, Lv::Nil),
    };
    let is_paused = paused || !current.is_nil();
    // The parameter's `default` (the annotation, else `"0"`) is not read by Argo CD 3.6: not
    // kept, but read as the script reads it (its faults are the script's).
    if current.truthy() {
        out(current)?;
    }
    let replicas = entry(flag(paused), Some(PAUSE_ICON), None).with_param("replicas");
    Ok(actions([
        ("pause", entry(flag(is_paused), Some(PAUSE_ICON), None)),
        ("paused-replicas", replicas),
        ("resume", entry(flag(!is_paused), Some(PLAY_ICON), None)),
    ]))
}

/// `metadata` and its `annotations` made tables when they are nil.
fn ensure_annotations(obj: &mut Obj<'_>) -> Result<(), Fault> {
    table::ensure(obj, &[], "metadata")?;
    table::ensure(obj, &["metadata"], "annotations")
}

/// Sets the `paused` annotation to `"true"`.
fn pause(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    ensure_annotations(&mut obj)?;
    table::set_text(&mut obj, &["metadata", "annotations"], PAUSED, "true")?;
    table::done(obj)
}

/// Sets `paused-replicas` to the `replicas` parameter read as a number at least 0 (written
/// back as Lua writes the number).
fn paused_replicas(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    ensure_annotations(&mut obj)?;
    let replicas = call.param("replicas");
    if !replicas.truthy() {
        return Err(Fault::new("replicas parameter is required"));
    }
    let n = match replicas.to_number() {
        Some(n) if n >= 0.0 || n.is_nan() => n,
        _ => {
            return Err(Fault::new(format!("invalid number: {} (must be >= 0)", replicas.text()?)));
        }
    };
    let text = Lv::Num(n).to_text().into_owned();
    table::set_text(&mut obj, &["metadata", "annotations"], PAUSED_REPLICAS, text)?;
    table::done(obj)
}

/// Removes the annotations named, when there are annotations.
fn remove(mut obj: Obj<'_>, names: &[&'static str]) -> Result<Out, Fault> {
    if annotations(obj.lv())?.is_some() {
        for name in names {
            set(&mut obj, &["metadata", "annotations"], name, None)?;
        }
    }
    table::done(obj)
}

/// Removes the `paused` annotation.
fn resume_job(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    remove(obj, &[PAUSED])
}

/// Removes the `paused` and `paused-replicas` annotations.
fn resume_object(obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    remove(obj, &[PAUSED, PAUSED_REPLICAS])
}
