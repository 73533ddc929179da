//! `batch`: CronJob and Job, as Argo CD 3.6.2's scripts.

use serde_json::Value;

use super::argoproj_io::{create, generated_name, owner};
use super::fluxcd::{resume, suspend};
use super::table::{self, Call, Fault, Field, Lv, Obj, Out, deep_copy, out, set};
use super::{Kind, actions, entry};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "batch",
        kind: "CronJob",
        discover: discover_cron_job,
        actions: &[("create-job", create_job), ("resume", resume), ("suspend", suspend)],
    },
    Kind {
        group: "batch",
        kind: "Job",
        discover: discover_job,
        actions: &[("resume", resume), ("suspend", suspend), ("terminate", terminate)],
    },
];

const PLAY: &str = "fa fa-fw fa-play";
const PAUSE: &str = "fa fa-fw fa-pause";

/// `create-job`, and `resume` when `spec.suspend` is true in Lua's sense, else `suspend`.
fn discover_cron_job(obj: Lv<'_>) -> Result<Value, Fault> {
    let create = ("create-job", entry(None, Some("fa fa-fw fa-plus"), Some("Create Job")));
    let other = if obj.fields(&["spec", "suspend"])?.truthy() {
        ("resume", entry(None, Some(PLAY), None))
    } else {
        ("suspend", entry(None, Some(PAUSE), None))
    };
    Ok(actions([create, other]))
}

/// Whether a condition (walked as `pairs` walks a table) of type Complete, Failed,
/// FailureTarget or SuccessCriteriaMet has status `"True"`.
fn completed(status: Lv<'_>) -> Result<bool, Fault> {
    let conditions = status.field("conditions")?;
    if conditions.is_nil() {
        return Ok(false);
    }
    let mut done = false;
    for (_, c) in conditions.members()? {
        let t = c.field("type")?;
        let ended = ["Complete", "Failed", "FailureTarget", "SuccessCriteriaMet"];
        if ended.iter().any(|e| t.is(e)) && c.field("status")?.is("True") {
            done = true;
        }
    }
    Ok(done)
}

/// Until the Job has ended: `resume` or `suspend` by `spec.suspend`, and `terminate` once it
/// has a status.
fn discover_job(obj: Lv<'_>) -> Result<Value, Fault> {
    let status = obj.field("status")?;
    let done = !status.is_nil() && completed(status)?;
    let mut all = Vec::new();
    if !done {
        if obj.fields(&["spec", "suspend"])?.truthy() {
            all.push(("resume", entry(None, Some(PLAY), None)));
        } else {
            all.push(("suspend", entry(None, Some(PAUSE), None)));
        }
        if !status.is_nil() {
            all.push(("terminate", entry(None, Some("fa fa-fw fa-stop"), None)));
        }
    }
    Ok(actions(all))
}

/// Adds a `FailureTarget` condition (`ManuallyTerminated`) to a Job with a status that has not
/// ended.
fn terminate(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let status = obj.read(&["status"])?;
    if status.is_nil() || completed(status)? {
        return table::done(obj);
    }
    let condition = table::table([
        ("lastTransitionTime", Some(Value::String(call.date("!%Y-%m-%dT%XZ")))),
        ("message", Some(Value::from("Job was terminated explicitly through Argo CD"))),
        ("reason", Some(Value::from("ManuallyTerminated"))),
        ("status", Some(Value::from("True"))),
        ("type", Some(Value::from("FailureTarget"))),
    ]);
    let list = match status.field("conditions")? {
        Lv::Table(list @ Value::Array(_)) => {
            // The list as the script holds it: read where it lies, so copied as its view.
            let mut items = match table::view(list) {
                Value::Array(items) => items,
                _ => Vec::new(),
            };
            items.push(condition);
            items
        }
        Lv::Table(Value::Object(m)) if !m.is_empty() => {
            return Err(Fault::new(
                "cannot encode mixed or invalid key types (a condition added to a map)",
            ));
        }
        // `nil` or `false` (`or {}`), or an empty table.
        _ => vec![condition],
    };
    set(&mut obj, &["status"], "conditions", Some(Value::Array(list)))?;
    table::done(obj)
}

/// A Job from the CronJob, as `kubectl create job --from=cronjob/<name>` makes it: the job
/// template's metadata and spec (empty tables left out), the `instantiate: manual`
/// annotation and a controller owner reference.
fn create_job(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let o = obj.lv();
    let template = o.fields(&["spec", "jobTemplate"])?;
    let mut job = table::table([
        ("apiVersion", Some(Value::from("batch/v1"))),
        ("kind", Some(Value::from("Job"))),
        ("metadata", deep_copy(template.field("metadata")?)?),
    ]);
    table::ensure(&mut job, &[], "metadata")?;
    let name = generated_name(o, call, false)?;
    table::set_text(&mut job, &["metadata"], "name", name)?;
    let namespace = out(o.fields(&["metadata", "namespace"])?)?;
    set(&mut job, &["metadata"], "namespace", namespace)?;
    table::annotate(&mut job, &["metadata"], "cronjob.kubernetes.io/instantiate", "manual")?;
    let extra =
        [("blockOwnerDeletion", Some(Value::Bool(true))), ("controller", Some(Value::Bool(true)))];
    let owner = owner(o, &extra)?;
    set(&mut job, &["metadata"], "ownerReferences", Some(Value::Array(vec![owner])))?;
    let spec = deep_copy(template.field("spec")?)?;
    // The copy is encoded already: the rest is encoded before it joins.
    let mut job = table::encode(job);
    set(&mut job, &[], "spec", spec)?;
    Ok(create(job))
}
