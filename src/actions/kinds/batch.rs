//! `batch`: CronJob and Job, as Argo CD 3.6.2's scripts.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::argoproj_io::{CONTROLLER, create, generated_name, owner, owner_ref, put, stamped};
use super::fluxcd::{resume, suspend};
use super::table::{self, Call, Fault, Field, Lv, Obj, Out, deep_copy, out, set};
use super::{Kind, Offers, actions, entry};

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
fn discover_cron_job(obj: Lv<'_>) -> Result<Offers, Fault> {
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
fn discover_job(obj: Lv<'_>) -> Result<Offers, Fault> {
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
/// annotation and a controller owner reference. The metadata's copy is changed where it lies,
/// as a map (the Job's own tables copied from their shape); when it or its annotations copy
/// as anything else ([`job_built`]), table by table.
fn create_job(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    match job_shaped(obj.lv(), call)? {
        Some(made) => Ok(made),
        None => job_built(obj, call),
    }
}

const INSTANTIATE: &str = "cronjob.kubernetes.io/instantiate";

/// [`create_job`] of the CronJob `o`, or `None` when the template's metadata or its
/// annotations copy as anything but a map.
fn job_shaped(o: Lv<'_>, call: &Call<'_>) -> Result<Option<Out>, Fault> {
    // Read in the order of the script's reads (its errors first), as `job_built`.
    let [api_version, kind, meta, spec] =
        table::fields_of(o, ["apiVersion", "kind", "metadata", "spec"])?;
    let template = spec.field("jobTemplate")?;
    let mut m = match deep_copy(template.field("metadata")?)? {
        None => Map::new(),
        Some(Value::Object(m)) if m.get("annotations").is_none_or(Value::is_object) => m,
        Some(_) => return Ok(None),
    };
    let source = meta.field("name")?;
    let name = stamped(source, call, false)?;
    let name_valid = crate::object::name_problem("batch", "Job", &name, false).is_none();
    m.insert("name".into(), Value::String(name));
    let [namespace, uid] = table::fields_of(meta, ["namespace", "uid"])?;
    put(&mut m, "namespace", out(namespace)?);
    match m.get_mut("annotations") {
        Some(Value::Object(a)) => {
            a.insert(INSTANTIATE.into(), Value::from("manual"));
        }
        _ => {
            let a = table::table([(INSTANTIATE, Some(Value::from("manual")))]);
            m.insert("annotations".into(), a);
        }
    }
    let owner = owner_ref([out(api_version)?, out(kind)?, out(source)?, out(uid)?], true);
    m.insert("ownerReferences".into(), Value::Array(vec![owner]));
    let spec = deep_copy(template.field("spec")?)?;
    Ok(Some(Out::Made {
        resource: job_of(Value::Object(m), spec),
        group: "batch",
        kind: "Job",
        group_kind: "batch/Job",
        name_valid,
    }))
}

/// The Job of its metadata and spec (both encoded): copied from its shape (made once per
/// process, never changed; [`table::filled`]) when it has a spec, else made.
fn job_of(metadata: Value, spec: Option<Value>) -> Value {
    static SHAPE: OnceLock<Value> = OnceLock::new();
    let built = |metadata, spec| {
        table::table([
            ("apiVersion", Some(Value::from("batch/v1"))),
            ("kind", Some(Value::from("Job"))),
            ("metadata", Some(metadata)),
            ("spec", spec),
        ])
    };
    match spec {
        Some(spec) => {
            let shape = SHAPE.get_or_init(|| built(Value::Null, Some(Value::Null)));
            table::filled(shape, [metadata, spec])
        }
        None => built(metadata, None),
    }
}

/// [`create_job`] made table by table, as the script does: the general way, for a job
/// template whose metadata or annotations copy as anything but a map (and the shortcut's
/// reference, `shaped_job_is_built_job`).
fn job_built(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
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
    let owner = owner(o, &CONTROLLER)?;
    set(&mut job, &["metadata"], "ownerReferences", Some(Value::Array(vec![owner])))?;
    let spec = deep_copy(template.field("spec")?)?;
    // The copy is encoded already: the rest is encoded before it joins.
    let mut job = table::encode(job);
    set(&mut job, &[], "spec", spec)?;
    Ok(create(job))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    /// The Job made from its shape (the metadata's copy changed where it lies) is the one
    /// made table by table, on CronJobs whose members are set, missing and of other types:
    /// the same object (or error), its name checked as the create check would check it.
    #[test]
    fn shaped_job_is_built_job() {
        let params = BTreeMap::new();
        let call = Call { params: &params, now: 1_700_000_000 };
        let metas = [
            json!(null),
            json!({}),
            json!({"labels": {"a": "b"}}),
            json!({"annotations": {"x": "y"}, "name": "t", "namespace": "o", "uid": 1}),
            json!({"annotations": {}}),
            json!({"annotations": {"e": {}}}),
            json!({"annotations": "s"}),
            json!({"annotations": [1]}),
            json!({"labels": {}}),
            json!("text"),
            json!([1, {}]),
            json!([{}, 1]),
        ];
        let specs = [
            json!(null),
            json!({"template": {"spec": {"containers": [{"name": "c", "resources": {}}]}}}),
            json!({}),
            json!([{}, 1]),
        ];
        let sources = [
            json!({"name": "hello", "namespace": "ns", "uid": "1"}),
            json!({"name": "hello"}),
            json!({"name": 7, "namespace": {"a": null}, "uid": true}),
            json!({"name": "Bad_Name", "namespace": 5}),
            json!({"namespace": "ns"}),
            json!("meta"),
        ];
        let mut crons =
            vec![json!({"metadata": {"name": "a"}}), json!({"spec": {"jobTemplate": 1}})];
        for meta in &metas {
            for spec in &specs {
                for source in &sources {
                    for api in [json!("batch/v1"), json!(null)] {
                        let template = json!({"metadata": meta, "spec": spec});
                        crons.push(json!({"apiVersion": api, "kind": "CronJob",
                            "metadata": source, "spec": {"jobTemplate": template}}));
                    }
                }
            }
        }
        let mut shaped = 0;
        for cron in &crons {
            match (create_job(Obj::new(cron), &call), job_built(Obj::new(cron), &call)) {
                (
                    Ok(Out::Made { resource, group, kind, group_kind, name_valid }),
                    Ok(Out::Create(built)),
                ) => {
                    assert_eq!(resource, built, "{cron}");
                    let name = built["metadata"]["name"].as_str().expect("a name");
                    let valid = crate::object::name_problem(group, kind, name, false).is_none();
                    assert_eq!(name_valid, valid, "{cron}");
                    assert_eq!((group, kind, group_kind), ("batch", "Job", "batch/Job"));
                    shaped += 1;
                }
                (fast, general) => assert_eq!(fast, general, "{cron}"),
            }
        }
        assert!(shaped > 50, "{shaped}");
    }
}
