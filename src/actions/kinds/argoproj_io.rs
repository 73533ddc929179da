//! `argoproj.io`: AnalysisRun, Application, CronWorkflow, Rollout and WorkflowTemplate, as Argo
//! CD 3.6.2's scripts.

use std::sync::OnceLock;

use serde_json::Value;

use super::apps::pause;
use super::table::{self, Call, Fault, Field, Lv, Obj, Out, deep_copy, lua_eq, out, set};
use super::{Kind, Offers, actions, entry, flag};

pub(super) const KINDS: &[Kind] = &[
    Kind {
        group: "argoproj.io",
        kind: "AnalysisRun",
        discover: discover_analysis_run,
        actions: &[("terminate", terminate)],
    },
    Kind {
        group: "argoproj.io",
        kind: "Application",
        discover: discover_application,
        actions: &[("toggle-auto-sync", toggle_auto_sync)],
    },
    Kind {
        group: "argoproj.io",
        kind: "CronWorkflow",
        discover: discover_create_workflow,
        actions: &[("create-workflow", create_from_cron_workflow)],
    },
    Kind {
        group: "argoproj.io",
        kind: "Rollout",
        discover: discover_rollout,
        actions: &[
            ("abort", abort),
            ("pause", pause),
            ("promote-full", promote_full),
            ("restart", restart),
            ("resume", resume),
            ("retry", retry),
            ("skip-current-step", skip_current_step),
        ],
    },
    Kind {
        group: "argoproj.io",
        kind: "WorkflowTemplate",
        discover: discover_create_workflow,
        actions: &[("create-workflow", create_from_workflow_template)],
    },
];

/// `table.getn(v)`: the length of a table, an error for anything else.
fn getn(v: Lv<'_>) -> Result<usize, Fault> {
    match v {
        Lv::Table(_) => v.len(),
        other => Err(Fault::new(format!(
            "bad argument #1 to getn (table expected, got {})",
            other.type_name()
        ))),
    }
}

/// The number `v` for Lua's `<` and `>` against a number; an error for anything else.
fn compared(v: Lv<'_>) -> Result<f64, Fault> {
    v.num().ok_or_else(|| Fault::new(format!("attempt to compare number with {}", v.type_name())))
}

/// `terminate`, disabled by `spec.terminate` (its value when true in Lua's sense) or a
/// finished phase.
fn discover_analysis_run(obj: Lv<'_>) -> Result<Offers, Fault> {
    let t = obj.fields(&["spec", "terminate"])?;
    let disabled = if t.truthy() {
        out(t)?
    } else {
        let phase = obj.fields(&["status", "phase"])?;
        flag(["Successful", "Failed", "Error", "Inconclusive"].iter().any(|p| phase.is(p)))
    };
    Ok(actions([("terminate", entry(disabled, None, None))]))
}

/// `spec.terminate = true`.
fn terminate(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::set_bool(&mut obj, &["spec"], "terminate", true)?;
    table::done(obj)
}

/// Whether automated sync is on: `automated` set with `enabled` true or absent.
fn auto_sync(automated: Lv<'_>) -> Result<bool, Fault> {
    let enabled = automated.field("enabled")?;
    Ok(enabled.is_bool(true) || enabled.is_nil())
}

/// `toggle-auto-sync`, named for what it does now.
fn discover_application(obj: Lv<'_>) -> Result<Offers, Fault> {
    let spec = obj.field("spec")?;
    let mut on = false;
    if !spec.is_nil() {
        let policy = spec.field("syncPolicy")?;
        if !policy.is_nil() {
            let automated = policy.field("automated")?;
            if !automated.is_nil() {
                on = auto_sync(automated)?;
            }
        }
    }
    let name = if on { "Disable Auto-Sync" } else { "Enable Auto-Sync" };
    Ok(actions([("toggle-auto-sync", entry(flag(false), None, Some(name)))]))
}

/// Turns automated sync off (`enabled = false`) when on, else on (`enabled = true`, making
/// `automated` when absent), keeping its other fields.
fn toggle_auto_sync(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::ensure(&mut obj, &[], "spec")?;
    table::ensure(&mut obj, &["spec"], "syncPolicy")?;
    let automated = obj.read(&["spec", "syncPolicy", "automated"])?;
    let enabled = !automated.is_nil() && auto_sync(automated)?;
    let at = ["spec", "syncPolicy", "automated"];
    if enabled {
        table::set_bool(&mut obj, &at, "enabled", false)?;
    } else if automated.is_nil() {
        let on = table::table([("enabled", Some(Value::Bool(true)))]);
        set(&mut obj, &["spec", "syncPolicy"], "automated", Some(on))?;
    } else {
        table::set_bool(&mut obj, &at, "enabled", true)?;
    }
    table::done(obj)
}

/// `create-workflow`, always enabled.
fn discover_create_workflow(_: Lv<'_>) -> Result<Offers, Fault> {
    Ok(actions([(
        "create-workflow",
        entry(None, Some("fa fa-fw fa-plus"), Some("Create Workflow")),
    )]))
}

/// `{apiVersion, kind, name, uid}` of the source, as an owner reference.
pub(super) fn owner(obj: Lv<'_>, extra: &[(&str, Option<Value>)]) -> Result<Value, Fault> {
    let meta = obj.field("metadata")?;
    owner_of(obj, meta, out(meta.field("name")?)?, extra)
}

/// [`owner`] of a source whose `metadata` is `meta` and whose name (as [`out`] reads it) is
/// `name`, read already.
fn owner_of(
    obj: Lv<'_>,
    meta: Lv<'_>,
    name: Option<Value>,
    extra: &[(&str, Option<Value>)],
) -> Result<Value, Fault> {
    let [api_version, kind, _] = table::fields_of(obj, ["apiVersion", "kind", "metadata"])?;
    owner_read(api_version, kind, name, meta.field("uid")?, extra)
}

/// [`owner_of`] of the source's `apiVersion`, `kind`, name and `uid`, read already.
fn owner_read(
    api_version: Lv<'_>,
    kind: Lv<'_>,
    name: Option<Value>,
    uid: Lv<'_>,
    extra: &[(&str, Option<Value>)],
) -> Result<Value, Fault> {
    Ok(owner_table([out(api_version)?, out(kind)?, name, out(uid)?], extra))
}

/// The members an owner reference naming its controller adds.
pub(super) const CONTROLLER: [(&str, Option<Value>); 2] =
    [("blockOwnerDeletion", Some(Value::Bool(true))), ("controller", Some(Value::Bool(true)))];

/// The owner reference `{apiVersion, kind, name, uid}` of members read already (each as
/// [`out`] reads it; `nil` ones left out), with the `extra` members set.
fn owner_table(members: [Option<Value>; 4], extra: &[(&str, Option<Value>)]) -> Value {
    let [api_version, kind, name, uid] = members;
    let mut m = serde_json::Map::new();
    table::insert_all(
        &mut m,
        [("apiVersion", api_version), ("kind", kind), ("name", name), ("uid", uid)],
    );
    for (k, v) in extra {
        if let Some(v) = v {
            m.insert((*k).to_string(), v.clone());
        }
    }
    Value::Object(m)
}

/// The owner reference `{apiVersion, kind, name, uid}` of members read already (each as
/// [`out`] reads it), with `blockOwnerDeletion` and `controller` true when `controller`:
/// copied from its shape (made once per process, never changed) when its `apiVersion`, `kind`
/// and name are set (with or without a `uid`), where making the table looks each member's
/// place up.
pub(super) fn owner_ref(members: [Option<Value>; 4], controller: bool) -> Value {
    /// Without and with a `uid`, without and with the controller's members.
    static SHAPES: [OnceLock<Value>; 4] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let [Some(api_version), Some(kind), Some(name), uid] = members else {
        return owner_built(members, controller);
    };
    let with_uid = uid.is_some();
    let shape = SHAPES[usize::from(with_uid) + 2 * usize::from(controller)].get_or_init(|| {
        let hole = || Some(Value::Null);
        let uid = if with_uid { hole() } else { None };
        owner_built([hole(), hole(), hole(), uid], controller)
    });
    // The holes in the order of the members' names.
    match uid {
        Some(uid) => table::filled(shape, [api_version, kind, name, uid]),
        None => table::filled(shape, [api_version, kind, name]),
    }
}

/// [`owner_ref`] made member by member ([`owner_table`]), encoded: `[]` when no member is set.
fn owner_built(members: [Option<Value>; 4], controller: bool) -> Value {
    table::encode(owner_table(members, if controller { &CONTROLLER } else { &[] }))
}

/// `[{operation = "create", resource = ...}]` (`resource` encoded).
pub(super) fn create(resource: Value) -> Out {
    Out::Create(resource)
}

/// `<name>-<stamp>`: the source's name (a string or number) and the time to the minute,
/// `os.date("!%Y%m%d%H%M")` (`full_year`) or `os.date("!%y%m%d%H%M")`.
pub(super) fn generated_name(
    obj: Lv<'_>,
    call: &Call<'_>,
    full_year: bool,
) -> Result<String, Fault> {
    stamped(obj.fields(&["metadata", "name"])?, call, full_year)
}

/// [`generated_name`] of the source's name `name`, read already.
pub(super) fn stamped(name: Lv<'_>, call: &Call<'_>, full_year: bool) -> Result<String, Fault> {
    let name = name.text()?;
    let mut out = String::with_capacity(name.len() + 13);
    out.push_str(&name);
    out.push('-');
    crate::vocabulary::minute_stamp_into(&mut out, call.now, full_year);
    Ok(out)
}

/// A Workflow from a CronWorkflow, as `argo submit --from=CronWorkflow/<name>` makes it: the
/// `workflowMetadata` labels, annotations and finalizers (empty tables left out), the
/// `cron-workflow` label, the controller's instance label, the scheduled time, the owner
/// reference and the `workflowSpec`. The labels and annotations are changed where they lie,
/// as maps (the Workflow's own tables copied from their shape); when the template's copy as
/// anything else ([`cron_workflow_built`]), table by table.
fn create_from_cron_workflow(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    match cron_workflow_shaped(obj.lv(), call)? {
        Some(made) => Ok(made),
        None => cron_workflow_built(obj, call),
    }
}

/// [`create_from_cron_workflow`] of the CronWorkflow `o`, or `None` when its
/// `workflowMetadata`'s labels or annotations copy as anything but a map.
fn cron_workflow_shaped(o: Lv<'_>, call: &Call<'_>) -> Result<Option<Out>, Fault> {
    let src = CronSource::read(o, call)?;
    let (Some(mut wf_labels), Some(mut wf_annotations)) =
        (copied_map(src.wm_labels)?, copied_map(src.wm_annotations)?)
    else {
        return Ok(None);
    };
    put(&mut wf_labels, "workflows.argoproj.io/cron-workflow", src.source_name.clone());
    if let Some(id) = controller_instance(src.labels)? {
        put(&mut wf_labels, INSTANCE, id);
    }
    let scheduled = crate::vocabulary::second_stamp(call.now);
    wf_annotations.insert("workflows.argoproj.io/scheduled-time".into(), Value::String(scheduled));
    let items = finalizer_items(src.finalizers)?;
    let owner =
        owner_ref([out(src.api_version)?, out(src.kind)?, src.source_name, out(src.uid)?], false);
    let spec = deep_copy(src.spec.field("workflowSpec")?)?;
    let parts = WorkflowParts {
        finalizers: items,
        annotations: map_or_empty(wf_annotations),
        labels: map_or_empty(wf_labels),
        name: Value::String(src.name),
        namespace: src.namespace,
        owner,
        spec,
    };
    Ok(Some(workflow(parts.shaped(), src.name_valid)))
}

/// What both ways of [`create_from_cron_workflow`] read of the CronWorkflow, in the order of
/// the script's reads (their errors first): its members in one walk, `metadata`'s after its
/// `name` (the script's first read there), then the Workflow's name and the copies of the
/// source's name and namespace, then `spec.workflowMetadata`'s `labels` (first, for the error
/// of a `workflowMetadata` that is not a table), `annotations` and `finalizers`.
struct CronSource<'a> {
    api_version: Lv<'a>,
    kind: Lv<'a>,
    spec: Lv<'a>,
    labels: Lv<'a>,
    uid: Lv<'a>,
    /// `spec.workflowMetadata`'s labels, annotations and finalizers (`nil` without it).
    wm_labels: Lv<'a>,
    wm_annotations: Lv<'a>,
    finalizers: Lv<'a>,
    /// The Workflow's name, the source's with the scheduled time.
    name: String,
    name_valid: bool,
    source_name: Option<Value>,
    namespace: Option<Value>,
}

impl<'a> CronSource<'a> {
    fn read(o: Lv<'a>, call: &Call<'_>) -> Result<Self, Fault> {
        let [api_version, kind, meta, spec] =
            table::fields_of(o, ["apiVersion", "kind", "metadata", "spec"])?;
        let source = meta.field("name")?;
        let [labels, namespace, uid] = table::fields_of(meta, ["labels", "namespace", "uid"])?;
        let name = stamped(source, call, true)?;
        let name_valid = workflow_name_valid(&name);
        let source_name = out(source)?;
        let namespace = out(namespace)?;
        let wm = spec.field("workflowMetadata")?;
        let (mut wm_labels, mut wm_annotations, mut finalizers) = (Lv::Nil, Lv::Nil, Lv::Nil);
        if !wm.is_nil() {
            wm_labels = wm.field("labels")?;
            [wm_annotations, finalizers] = table::fields_of(wm, ["annotations", "finalizers"])?;
        }
        Ok(CronSource {
            api_version,
            kind,
            spec,
            labels,
            uid,
            wm_labels,
            wm_annotations,
            finalizers,
            name,
            name_valid,
            source_name,
            namespace,
        })
    }
}

/// The label naming the controller instance, copied from the CronWorkflow to its Workflow.
const INSTANCE: &str = "workflows.argoproj.io/controller-instanceid";

/// The CronWorkflow's [`INSTANCE`] label to set on the Workflow (its copy, `None` inside for
/// a copy that is `nil`), or `None` when it has none.
fn controller_instance(labels: Lv<'_>) -> Result<Option<Option<Value>>, Fault> {
    if labels.is_nil() {
        return Ok(None);
    }
    let id = labels.field(INSTANCE)?;
    if id.is_nil() { Ok(None) } else { out(id).map(Some) }
}

/// The copies of `workflowMetadata.finalizers`' items (`nil` copies left out).
fn finalizer_items(finalizers: Lv<'_>) -> Result<Vec<Value>, Fault> {
    let mut items = Vec::new();
    if !finalizers.is_nil() {
        for item in finalizers.items()? {
            items.extend(out(item)?);
        }
    }
    Ok(items)
}

/// [`deep_copy`] of a `workflowMetadata` member as a map to change (`{}` for `nil`, as the
/// script starts from); `None` when it copies as anything else.
fn copied_map(v: Lv<'_>) -> Result<Option<serde_json::Map<String, Value>>, Fault> {
    if v.is_nil() {
        return Ok(Some(serde_json::Map::new()));
    }
    Ok(match deep_copy(v)? {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    })
}

/// `t[key] = value` on a map (`nil` removes).
pub(super) fn put(m: &mut serde_json::Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            m.insert(key.to_string(), v);
        }
        None => {
            m.remove(key);
        }
    }
}

/// A map made here, encoded: `[]` when empty.
fn map_or_empty(m: serde_json::Map<String, Value>) -> Value {
    if m.is_empty() { Value::Array(Vec::new()) } else { Value::Object(m) }
}

/// The parts of the Workflow [`create_from_cron_workflow`] makes, each encoded.
struct WorkflowParts {
    finalizers: Vec<Value>,
    annotations: Value,
    labels: Value,
    name: Value,
    namespace: Option<Value>,
    owner: Value,
    spec: Option<Value>,
}

impl WorkflowParts {
    /// The Workflow, its tables made member by member.
    fn built(self) -> Value {
        let WorkflowParts { finalizers, annotations, labels, name, namespace, owner, spec } = self;
        let m = table::table([
            ("annotations", Some(annotations)),
            ("labels", Some(labels)),
            ("name", Some(name)),
            ("namespace", namespace),
            ("ownerReferences", Some(Value::Array(vec![owner]))),
        ]);
        table::table([
            ("apiVersion", Some(Value::from("argoproj.io/v1alpha1"))),
            ("finalizers", Some(Value::Array(finalizers))),
            ("kind", Some(Value::from("Workflow"))),
            ("metadata", Some(m)),
            ("spec", spec),
        ])
    }

    /// [`WorkflowParts::built`], copied from the Workflow's shape (its tables made once,
    /// their members `null`: [`table::filled`]) when it has a namespace and a spec (almost
    /// always), else built.
    fn shaped(self) -> Value {
        static SHAPE: OnceLock<Value> = OnceLock::new();
        let WorkflowParts {
            finalizers,
            annotations,
            labels,
            name,
            namespace: Some(namespace),
            owner,
            spec: Some(spec),
        } = self
        else {
            return self.built();
        };
        let shape = SHAPE.get_or_init(|| {
            let hole = || Value::Null;
            let parts = WorkflowParts {
                finalizers: Vec::new(),
                annotations: hole(),
                labels: hole(),
                name: hole(),
                namespace: Some(hole()),
                owner: hole(),
                spec: Some(hole()),
            };
            let mut shape = parts.built();
            // `finalizers` a hole too.
            shape["finalizers"] = hole();
            shape
        });
        // The holes in the order of the members' names, depth first.
        let holes = [Value::Array(finalizers), annotations, labels, name, namespace, owner, spec];
        table::filled(shape, holes)
    }
}

/// [`create_from_cron_workflow`] made table by table, as the script does: the general way,
/// for a `workflowMetadata` whose labels or annotations copy as anything but a map (and the
/// shortcut's reference, `shaped_cron_workflow_is_built`).
fn cron_workflow_built(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let src = CronSource::read(obj.lv(), call)?;
    let mut m = table::table([
        ("annotations", Some(table::empty())),
        ("labels", Some(table::empty())),
        ("name", Some(Value::String(src.name))),
        ("namespace", src.namespace),
    ]);
    for (key, v) in [("labels", src.wm_labels), ("annotations", src.wm_annotations)] {
        if !v.is_nil() {
            set(&mut m, &[], key, deep_copy(v)?)?;
        }
    }
    set(&mut m, &["labels"], "workflows.argoproj.io/cron-workflow", src.source_name.clone())?;
    if let Some(id) = controller_instance(src.labels)? {
        set(&mut m, &["labels"], INSTANCE, id)?;
    }
    let scheduled = call.date("!%Y-%m-%dT%H:%M:%SZ");
    table::set_text(&mut m, &["annotations"], "workflows.argoproj.io/scheduled-time", scheduled)?;
    let items = finalizer_items(src.finalizers)?;
    let owner =
        table::encode(owner_read(src.api_version, src.kind, src.source_name, src.uid, &[])?);
    set(&mut m, &[], "ownerReferences", Some(Value::Array(vec![owner])))?;
    // Encoded already (the copies are, and every table made here has a member) but where
    // `labels` or `annotations` may be left empty.
    if let Value::Object(members) = &mut m {
        for key in ["annotations", "labels"] {
            if let Some(t) = members.get_mut(key)
                && t.as_object().is_some_and(serde_json::Map::is_empty)
            {
                *t = Value::Array(Vec::new());
            }
        }
    }
    let spec = deep_copy(src.spec.field("workflowSpec")?)?;
    let wf = table::table([
        ("apiVersion", Some(Value::from("argoproj.io/v1alpha1"))),
        ("finalizers", Some(Value::Array(items))),
        ("kind", Some(Value::from("Workflow"))),
        ("metadata", Some(m)),
        ("spec", spec),
    ]);
    Ok(workflow(wf, src.name_valid))
}

/// A Workflow from a WorkflowTemplate, as `argo submit --from=workflowtemplate/<name>` makes
/// it: a `workflowTemplateRef` to the template, its label and owner reference.
fn create_from_workflow_template(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    let [api_version, kind, source, namespace, uid] = match obj.identity() {
        // Read already where the kind was found (a map and its metadata map: no error to
        // raise); only the `uid` is looked for, from the metadata's end.
        Some(id) => {
            let uid = table::last_member(id.metadata, "uid");
            [id.api_version, id.kind, id.name, id.namespace, uid].map(table::lv_of)
        }
        None => template_read(obj.lv())?,
    };
    let name = stamped(source, call, true)?;
    let name_valid = workflow_name_valid(&name);
    let source_name = out(source)?;
    let owner = [out(api_version)?, out(kind)?, out(uid)?];
    let from =
        FromTemplate { name: Value::String(name), source_name, owner, namespace: out(namespace)? };
    let wf = from.shaped();
    Ok(workflow(wf, name_valid))
}

/// The members of the template `o` [`create_from_workflow_template`] reads (`apiVersion`,
/// `kind`, the metadata's `name`, `namespace` and `uid`), read once each, in the order the
/// script reads them (its errors first).
fn template_read(o: Lv<'_>) -> Result<[Lv<'_>; 5], Fault> {
    let [api_version, kind, meta] = table::fields_of(o, ["apiVersion", "kind", "metadata"])?;
    let [source, namespace, uid] = table::fields_of(meta, ["name", "namespace", "uid"])?;
    Ok([api_version, kind, source, namespace, uid])
}

/// What [`create_from_workflow_template`] reads into its Workflow: the Workflow's name, the
/// template's name, its `apiVersion`, `kind` and `uid` (for the owner reference) and its
/// namespace, each as [`out`] reads it (`None` for `nil`).
#[derive(Clone)]
struct FromTemplate {
    name: Value,
    source_name: Option<Value>,
    owner: [Option<Value>; 3],
    namespace: Option<Value>,
}

impl FromTemplate {
    /// The Workflow, its tables made member by member.
    fn built(self) -> Value {
        let FromTemplate { name, source_name, owner: [api_version, kind, uid], namespace } = self;
        let labels =
            table::table([("workflows.argoproj.io/workflow-template", source_name.clone())]);
        let owner = table::encode(table::table([
            ("apiVersion", api_version),
            ("kind", kind),
            ("name", source_name.clone()),
            ("uid", uid),
        ]));
        let m = table::table([
            ("labels", Some(labels)),
            ("name", Some(name)),
            ("namespace", namespace),
            ("ownerReferences", Some(Value::Array(vec![owner]))),
        ]);
        let spec =
            table::table([("workflowTemplateRef", Some(table::table([("name", source_name)])))]);
        // Encoded already: every member is read by `out` (encoded) or made here, and no table
        // made here is empty (the label and reference hold the name, which is text) but the
        // owner, encoded on its own.
        table::table([
            ("apiVersion", Some(Value::from("argoproj.io/v1alpha1"))),
            ("kind", Some(Value::from("Workflow"))),
            ("metadata", Some(m)),
            ("spec", Some(spec)),
        ])
    }

    /// [`FromTemplate::built`], copied from the Workflow's shape (its tables made once, their
    /// members `null`: [`table::filled`]) when every member but the `uid` is set (the template
    /// has a name, a namespace, an `apiVersion` and a `kind`: almost always), else built.
    fn shaped(self) -> Value {
        /// The shapes without and with a `uid`: made once per process and never changed, a
        /// constant that cannot be written as one. Copying one puts each member in its place
        /// at once, where making a table looks its place up member by member.
        static SHAPES: [OnceLock<Value>; 2] = [OnceLock::new(), OnceLock::new()];
        let FromTemplate { name, source_name, owner, namespace } = self;
        let (source, api_version, kind, uid, namespace) = match (source_name, owner, namespace) {
            (Some(s), [Some(a), Some(k), uid], Some(ns)) => (s, a, k, uid, ns),
            (source_name, owner, namespace) => {
                return FromTemplate { name, source_name, owner, namespace }.built();
            }
        };
        let with_uid = uid.is_some();
        let shape = SHAPES[usize::from(with_uid)].get_or_init(|| {
            let hole = || Some(Value::Null);
            let owner = [hole(), hole(), if with_uid { hole() } else { None }];
            FromTemplate { name: Value::Null, source_name: hole(), owner, namespace: hole() }
                .built()
        });
        // The holes in the order of the members' names, depth first: the label, the name, the
        // namespace, the owner's members and the reference.
        let label = source.clone();
        match uid {
            None => {
                let owner = source.clone();
                table::filled(shape, [label, name, namespace, api_version, kind, owner, source])
            }
            Some(uid) => {
                let (owner, reference) = (source.clone(), source);
                let holes = [label, name, namespace, api_version, kind, owner, uid, reference];
                table::filled(shape, holes)
            }
        }
    }
}

/// Whether a Workflow may be named `name` (see [`Out::Made`]).
fn workflow_name_valid(name: &str) -> bool {
    crate::object::name_problem("argoproj.io", "Workflow", name, false).is_none()
}

/// The Workflow `wf` as a created object: made by [`create_from_cron_workflow`] or
/// [`create_from_workflow_template`], which set its `apiVersion`, `kind` and name themselves
/// (the name valid when `name_valid`) and copy the source's `metadata.namespace`.
fn workflow(wf: Value, name_valid: bool) -> Out {
    Out::Made {
        resource: wf,
        group: "argoproj.io",
        kind: "Workflow",
        group_kind: "argoproj.io/Workflow",
        name_valid,
    }
}

/// Restart (always), resume (while paused), abort, retry and pause (during an update),
/// promote-full (by the controller's version: canary only before v0.10) and skip-current-step
/// (a canary not at its last step).
fn discover_rollout(obj: Lv<'_>) -> Result<Offers, Fault> {
    let status = obj.field("status")?;
    let pcs = if status.is_nil() { Lv::Nil } else { status.field("pauseConditions")? };
    let paused = if !status.is_nil() && !pcs.is_nil() {
        Lv::Bool(getn(pcs)? > 0)
    } else {
        let p = obj.fields(&["spec", "paused"])?;
        if p.is_nil() { Lv::Bool(false) } else { p }
    };
    let fully =
        status.is_nil() || lua_eq(status.field("currentPodHash")?, status.field("stableRS")?);
    let abort_v = if fully { Lv::Nil } else { status.field("abort")? };
    let abort = if fully { flag(true) } else { out(abort_v)? };
    let retry = flag(fully || !abort_v.truthy());
    let pause = if fully {
        flag(true)
    } else if abort_v.truthy() {
        out(abort_v)?
    } else {
        out(obj.fields(&["spec", "paused"])?)?
    };
    let mut promote = flag(true);
    if !status.is_nil() && !fully {
        let generation = status.field("observedGeneration")?.to_number();
        let older = match generation {
            None => true,
            Some(g) => g > compared(obj.fields(&["metadata", "generation"])?)?,
        };
        if older {
            promote = flag(!obj.fields(&["spec", "strategy", "blueGreen"])?.is_nil());
        } else {
            promote = flag(false);
        }
    }
    let canary = obj.fields(&["spec", "strategy", "canary"])?;
    let skip = canary.is_nil() || {
        let steps = canary.field("steps")?;
        steps.is_nil()
            || status.is_nil()
            || status.field("currentStepIndex")?.is_num(getn(steps)? as f64)
    };
    if matches!(abort_v, Lv::Table(_)) {
        // `abort` and `pause` both hold the one table as `disabled`: gopher-json refuses a
        // table met twice (once the script has run to its end).
        return Err(Fault::new(
            "cannot encode recursively nested tables to JSON (status.abort is the `disabled` of \
             both abort and pause)",
        ));
    }
    Ok(actions([
        ("restart", entry(flag(false), None, Some("Restart Pods"))),
        ("resume", entry(flag(!paused.truthy()), None, None)),
        ("abort", entry(abort, None, None)),
        ("retry", entry(retry, None, None)),
        ("pause", entry(pause, None, None)),
        ("promote-full", entry(promote, None, None)),
        ("skip-current-step", entry(flag(skip), None, None)),
    ]))
}

/// `status.abort = true`.
fn abort(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    table::set_bool(&mut obj, &["status"], "abort", true)?;
    table::done(obj)
}

/// Removes `status.abort`.
fn retry(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    set(&mut obj, &["status"], "abort", None)?;
    table::done(obj)
}

/// `spec.restartAt` = the time.
fn restart(mut obj: Obj<'_>, call: &Call<'_>) -> Result<Out, Fault> {
    table::set_text(&mut obj, &["spec"], "restartAt", call.date("!%Y-%m-%dT%XZ"))?;
    table::done(obj)
}

/// Removes the pause conditions (when there are any) and sets a true `spec.paused` to false.
fn resume(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    let status = obj.read(&["status"])?;
    if !status.is_nil() {
        let pcs = status.field("pauseConditions")?;
        if !pcs.is_nil() && getn(pcs)? > 0 {
            set(&mut obj, &["status"], "pauseConditions", None)?;
        }
    }
    if obj.read(&["spec", "paused"])?.truthy() {
        table::set_bool(&mut obj, &["spec"], "paused", false)?;
    }
    table::done(obj)
}

/// With a status: before v0.10 (`observedGeneration` not a number or newer than the
/// generation) removes `abort` and moves a canary to its last step; else
/// `status.promoteFull = true`.
fn promote_full(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    let o = obj.lv();
    let status = o.field("status")?;
    if status.is_nil() {
        return table::done(obj);
    }
    let older = match status.field("observedGeneration")?.to_number() {
        None => true,
        Some(g) => g > compared(o.fields(&["metadata", "generation"])?)?,
    };
    if older {
        let steps = o
            .fields(&["spec", "strategy", "canary", "steps"])
            .and_then(|s| if s.is_nil() { Ok(None) } else { getn(s).map(Some) });
        set(&mut obj, &["status"], "abort", None)?;
        if let Some(n) = steps? {
            set(&mut obj, &["status"], "currentStepIndex", Some(table::number(n as f64)?))?;
        }
    } else {
        table::set_bool(&mut obj, &["status"], "promoteFull", true)?;
    }
    table::done(obj)
}

/// A canary not at its last step moves one step on, its pause conditions removed.
fn skip_current_step(mut obj: Obj<'_>, _: &Call<'_>) -> Result<Out, Fault> {
    let o = obj.lv();
    let status = o.field("status")?;
    if status.is_nil() {
        return table::done(obj);
    }
    let canary = o.fields(&["spec", "strategy", "canary"])?;
    if canary.is_nil() {
        return table::done(obj);
    }
    let steps = canary.field("steps")?;
    if steps.is_nil() {
        return table::done(obj);
    }
    let index = status.field("currentStepIndex")?;
    let n = getn(steps)?;
    let i = index.num().ok_or_else(|| {
        Fault::new(format!("attempt to compare {} with number", index.type_name()))
    })?;
    if i < n as f64 {
        let pcs = status.field("pauseConditions")?;
        let clear = !pcs.is_nil() && getn(pcs)? > 0;
        if clear {
            set(&mut obj, &["status"], "pauseConditions", None)?;
        }
        set(&mut obj, &["status"], "currentStepIndex", Some(table::number(i + 1.0)?))?;
    }
    table::done(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The Workflow copied from its shape is the one made table by table, on every
    /// combination of members set, missing and of other types, encoded as `out` gives them (a
    /// table holding a `null` among them: a value filled in is not walked), with and without
    /// a `uid`.
    #[test]
    fn shaped_workflow_is_built_workflow() {
        let some = |v: Value| Some(v);
        let texts = [some(json!("wt")), some(json!(7)), None];
        let members = [
            some(json!("argoproj.io/v1alpha1")),
            some(json!(1.5)),
            some(json!([])),
            some(json!({"a": null, "b": [null, []]})),
            None,
        ];
        let uids = [some(json!("u-1")), some(json!(true)), None];
        let namespaces = [some(json!("default")), some(json!({"x": null})), None];
        let mut compared = 0;
        for source_name in &texts {
            for api_version in &members {
                for kind in &members {
                    for uid in &uids {
                        for namespace in &namespaces {
                            let from = FromTemplate {
                                name: json!("wt-202306221735"),
                                source_name: source_name.clone(),
                                owner: [api_version.clone(), kind.clone(), uid.clone()],
                                namespace: namespace.clone(),
                            };
                            assert_eq!(from.clone().shaped(), from.built());
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 3 * 5 * 5 * 3 * 3);
    }

    /// WorkflowTemplate's `create-workflow` given what finding its kind read
    /// (`actions::run::identity`) makes what it makes reading the template itself (or fails
    /// the same way), on templates whose members are set, missing, `null` and of other types,
    /// with the `uid` before, among and after other members.
    #[test]
    fn template_read_where_found_is_read_again() {
        let params = std::collections::BTreeMap::new();
        let call = Call { params: &params, now: 1_700_000_000 };
        let values = [json!(null), json!("wt"), json!(7), json!(true), json!([]), json!({"a": 1})];
        let metas = || {
            let mut metas = vec![json!(null), json!("m"), json!([1]), json!({})];
            for v in &values {
                metas.push(json!({"name": v, "namespace": "ns", "uid": "u"}));
                metas.push(json!({"labels": {}, "name": "wt", "namespace": v, "zz": 1}));
                metas.push(json!({"generateName": "g-", "name": "wt", "uid": v}));
                metas.push(json!({"a": 1, "name": "wt", "namespace": "ns", "uid": v, "z": 2}));
                metas.push(json!({"name": "wt", "namespace": "ns", "uid": "u", "v": v}));
            }
            metas
        };
        let mut objects = vec![json!(null), json!("x"), json!([]), json!({})];
        for meta in metas() {
            for v in &values {
                objects
                    .push(json!({"apiVersion": v, "kind": "WorkflowTemplate", "metadata": meta}));
                objects.push(json!({"apiVersion": "argoproj.io/v1alpha1", "kind": v, "metadata": meta, "spec": {}}));
            }
        }
        let mut with_identity = 0;
        for obj in &objects {
            let (_, known) = crate::actions::run::identity(obj);
            with_identity += usize::from(known.is_some());
            let found = create_from_workflow_template(Obj::with_identity(obj, known), &call);
            let again = create_from_workflow_template(Obj::new(obj), &call);
            assert_eq!(found, again, "{obj}");
        }
        assert!(with_identity > 300, "{with_identity} of {}", objects.len());
    }
}

#[cfg(test)]
mod cron_tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    /// The Workflow made from a CronWorkflow with its labels and annotations changed where
    /// they lie and its tables copied from their shape is the one made table by table, on
    /// CronWorkflows whose members are set, missing and of other types (or the same error).
    #[test]
    fn shaped_cron_workflow_is_built() {
        let params = BTreeMap::new();
        let call = Call { params: &params, now: 1_700_000_000 };
        let wms = [
            json!(null),
            json!({}),
            json!({"labels": {"e": "t"}, "annotations": {"a": "b"}, "finalizers": ["f"]}),
            json!({"labels": {}}),
            json!({"labels": "s"}),
            json!({"labels": {"x": {}}}),
            json!({"annotations": []}),
            json!({"annotations": [1, 2]}),
            json!({"annotations": {"workflows.argoproj.io/scheduled-time": 1}}),
            json!("wm"),
            json!({"finalizers": [1, null, "x", {}]}),
            json!({"finalizers": "f"}),
        ];
        let labels = [
            json!(null),
            json!({"workflows.argoproj.io/controller-instanceid": "i"}),
            json!({"workflows.argoproj.io/controller-instanceid": {"z": []}}),
            json!("str"),
            json!({"other": 1}),
        ];
        let metas = [
            json!({"name": "hello-world", "namespace": "default", "uid": "u"}),
            json!({"name": 3}),
            json!({"name": "N_", "namespace": 2}),
            json!({"namespace": "x"}),
            json!({"name": {}}),
        ];
        let specs = [json!(null), json!({"entrypoint": "w"}), json!({}), json!([{}, 1])];
        let mut made = 0;
        for wm in &wms {
            for label in &labels {
                for meta in &metas {
                    for spec in &specs {
                        let mut m = meta.clone();
                        m["labels"] = label.clone();
                        let cron = json!({"apiVersion": "argoproj.io/v1alpha1",
                            "kind": "CronWorkflow", "metadata": m,
                            "spec": {"workflowMetadata": wm, "workflowSpec": spec}});
                        let fast = create_from_cron_workflow(Obj::new(&cron), &call);
                        let general = cron_workflow_built(Obj::new(&cron), &call);
                        made += usize::from(fast.is_ok());
                        assert_eq!(fast, general, "{cron}");
                    }
                }
            }
        }
        assert!(made > 200, "{made}");
        // Without a workflowMetadata or a spec at all, and without an apiVersion or kind.
        for cron in
            [json!({"metadata": {"name": "a"}}), json!({"metadata": {"name": "a"}, "spec": 1})]
        {
            let fast = create_from_cron_workflow(Obj::new(&cron), &call);
            assert_eq!(fast, cron_workflow_built(Obj::new(&cron), &call), "{cron}");
        }
    }

    /// The owner reference copied from its shape is the one made member by member.
    #[test]
    fn shaped_owner_is_built_owner() {
        let values = [Some(json!("v")), Some(json!(2)), Some(json!({"a": 1})), None];
        for a in &values {
            for k in &values {
                for n in &values {
                    for u in &values {
                        for controller in [false, true] {
                            let members = [a.clone(), k.clone(), n.clone(), u.clone()];
                            let built = owner_built(members.clone(), controller);
                            assert_eq!(owner_ref(members, controller), built);
                        }
                    }
                }
            }
        }
    }
}
