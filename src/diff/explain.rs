//! Who wrote the drift, and what self-heal cannot see: a diff result read against the live
//! object's `metadata.managedFields`.
//!
//! - [`ResourceDiff::explain_changes`]: for every field where the normalised live object and the predicted
//!   live object differ, the desired and live values and the field managers that last wrote
//!   the field.
//! - [`ResourceDiff::unmanaged_fields`]: fields present in live that Git never declared (an env var added
//!   with `kubectl set env`, a sidecar, a label) and that a person or a tool wrote. A
//!   three-way diff keeps them, so neither the diff nor self-heal undoes them; a `Replace`
//!   sync would remove them. The sync status is not changed by them.
//! - [`AppDiff::explain`]: both for every resource of an application diff.
//!
//! # Paths
//!
//! Each field has a `path`, kubectl-style, and the RFC 6901 `pointer` of the same field in
//! the normalised live object (in the predicted live object when live lacks it). The path
//! joins field names with `.`; an element of a keyed list is written by its keys,
//! `containers[name=api]` (`ports[containerPort=8080,protocol=TCP]` for several keys); other
//! lists are atomic and stand as a whole (`args`); a field name holding anything but
//! ASCII letters, digits, `-` and `_` is written as a JSON string in brackets,
//! `annotations["deployment.kubernetes.io/revision"]`. A list is keyed when the Kubernetes
//! schema gives it list-map keys or a strategic merge key, or when a `managedFields` entry
//! records its elements as `k:{...}`.
//!
//! # Writers
//!
//! A field's writers are the `managedFields` entries whose `fieldsV1` hold the most specific
//! path to it: the field itself or something below it, or else the nearest enclosing atomic
//! field (`f:selector: {}`). They are sorted by time, latest first, then by manager.
//! A field that no entry holds has no recorded writer.
//!
//! # Secrets
//!
//! Values come from the [`ResourceDiff`], which masks Secrets unless the comparison was asked
//! to reveal them, and the `data` of a Secret is masked again here in every case, with the
//! annotations named in [`ExplainOptions::hide_annotations`].

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::defaults::apply_defaults_in_place;
use super::structured_merge::{InferredSchema, ListKind};
use super::{AppDiff, AppDiffInput, DiffOptions, ResourceDiff, hide_secret_data};
use crate::config::LAST_APPLIED_ANNOTATION;
use crate::json::canonical_eq;
use crate::managed_fields::{Entry, FieldSet, PathElement, find_item, managed_fields};
use crate::object::{ObjectIndex, ObjectRef, escape_pointer_token};
use crate::schema::{self, Shape, TypeRef};
use crate::vocabulary::{DEFAULT_INSTANCE_LABEL, TRACKING_ID_ANNOTATION};

/// Managers that stand for the API server and the built-in controllers: fields only they
/// wrote are bookkeeping (revision annotations, allocated values), not drift.
pub(super) const SYSTEM_MANAGERS: &[&str] = &[
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "cloud-controller-manager",
];

/// Fields the API server allocates or defaults outside the type defaulters, and annotations
/// the built-in controllers write. Only consulted for live objects without any
/// `managedFields` entry, where no writer can be read.
const SERVER_SET: &[&str] = &[
    "/spec/clusterIP",
    "/spec/clusterIPs",
    "/spec/ipFamilies",
    "/spec/ipFamilyPolicy",
    "/spec/internalTrafficPolicy",
    "/spec/healthCheckNodePort",
    "/spec/volumeName",
    "/spec/nodeName",
    "/metadata/annotations/deployment.kubernetes.io~1revision",
    "/metadata/annotations/pv.kubernetes.io~1bind-completed",
    "/metadata/annotations/pv.kubernetes.io~1bound-by-controller",
    "/metadata/annotations/volume.kubernetes.io~1storage-provisioner",
];

/// How explanations are computed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExplainOptions {
    /// The managers that apply the app: by default `argocd-controller` (Argo CD's field
    /// manager), `argocd-application-controller` (the name the controller's client-side
    /// applies are recorded under when no field manager is given) and
    /// `kubectl-client-side-apply` (objects first applied with `kubectl apply`). What they
    /// wrote is Git's, never an unmanaged addition.
    pub appliers: Vec<String>,
    /// Managers whose fields alone are not drift; by default the control plane's
    /// (`kube-apiserver`, `kube-controller-manager`, `kube-scheduler`, `kubelet`,
    /// `cloud-controller-manager`).
    pub system_managers: Vec<String>,
    /// Labels and annotations Argo CD writes itself (tracking, last-applied); never listed.
    pub argo_metadata: Vec<String>,
    /// Secret annotations to mask (`resource.sensitive.mask.annotations`).
    pub hide_annotations: Vec<String>,
}

impl Default for ExplainOptions {
    fn default() -> Self {
        ExplainOptions {
            appliers: vec![
                DiffOptions::ARGOCD_MANAGER.to_string(),
                "argocd-application-controller".into(),
                "kubectl-client-side-apply".into(),
            ],
            system_managers: SYSTEM_MANAGERS.iter().map(|s| s.to_string()).collect(),
            argo_metadata: vec![
                LAST_APPLIED_ANNOTATION.to_string(),
                TRACKING_ID_ANNOTATION.to_string(),
                DEFAULT_INSTANCE_LABEL.to_string(),
            ],
            hide_annotations: Vec::new(),
        }
    }
}

/// One `managedFields` entry, as a writer of a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FieldWriter {
    /// The field manager (`kubectl-scale`, `kube-controller-manager`, ...).
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// The subresource written through (`scale`, `status`), empty for the object itself.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
    /// When the entry was last written (RFC 3339), empty when not recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub time: String,
}

impl fmt::Display for FieldWriter {
    /// `kubectl (Update, scale, 2026-12-02T22:38:02Z)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}", self.manager, self.operation)?;
        for part in [&self.subresource, &self.time] {
            if !part.is_empty() {
                write!(f, ", {part}")?;
            }
        }
        f.write_str(")")
    }
}

/// The writers of a field, as text: `written by kubectl (Update, ...)`, `written by 2
/// managers: a (...); b (...)`, or `no recorded writer`.
struct Writers<'a>(&'a [FieldWriter]);

impl fmt::Display for Writers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [] => f.write_str("no recorded writer"),
            [one] => write!(f, "written by {one}"),
            many => {
                write!(f, "written by {} managers: ", many.len())?;
                for (i, w) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{w}")?;
                }
                Ok(())
            }
        }
    }
}

/// A value as the explanation lines print it: `absent`; a string as is, unless it is empty,
/// has spaces, commas, quotes or control characters, or reads as another JSON value (then
/// JSON-quoted); anything else as compact JSON.
struct Shown<'a>(Option<&'a Value>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("absent"),
            Some(Value::String(s)) if plain(s) => f.write_str(s),
            Some(v) => write!(f, "{v}"),
        }
    }
}

fn plain(s: &str) -> bool {
    !s.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, ',' | '"'))
        && serde_json::from_str::<Value>(s).is_err()
}

/// A field where the live object differs from what Git predicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FieldChange {
    /// kubectl-style path (see the module docs).
    pub path: String,
    /// RFC 6901 pointer in the normalised live object, or in the predicted live object when
    /// live lacks the field.
    pub pointer: String,
    /// The predicted (desired) value; `None` (left out of JSON) when a sync removes the
    /// field.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::present")]
    pub desired: Option<Value>,
    /// The live value; `None` (left out of JSON) when live lacks the field.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::present")]
    pub live: Option<Value>,
    /// Who last wrote the field in live, latest first; empty when nobody is recorded.
    pub writers: Vec<FieldWriter>,
}

impl fmt::Display for FieldChange {
    /// `spec.replicas: desired 1, live 3, written by kubectl (Update, scale, <time>)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: desired {}, live {}, {}",
            self.path,
            Shown(self.desired.as_ref()),
            Shown(self.live.as_ref()),
            Writers(&self.writers)
        )
    }
}

/// A live field Git never declared, written by someone other than the app's applier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UnmanagedField {
    /// kubectl-style path (see the module docs).
    pub path: String,
    /// RFC 6901 pointer in the normalised live object.
    pub pointer: String,
    /// The live value (a whole list element or map when the addition is one).
    pub live: Value,
    /// Who wrote it, latest first; empty when the live object records no writers at all.
    pub writers: Vec<FieldWriter>,
}

impl fmt::Display for UnmanagedField {
    /// `spec.template.spec.containers[name=api].env[name=X]: {...}, written by kubectl-set (...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}, {}", self.path, Shown(Some(&self.live)), Writers(&self.writers))
    }
}

/// The explanation of one resource of an application diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceExplanation {
    /// The resource.
    pub object: ObjectRef,
    /// Its differing fields, in path order.
    pub changes: Vec<FieldChange>,
    /// Its unmanaged additions, in path order.
    pub unmanaged: Vec<UnmanagedField>,
}

/// One step of a path, with the position of the element on each side.
#[derive(Debug, Clone)]
enum Seg {
    Field(String),
    /// An element of a keyed list: its keys, its index in live and in predicted.
    Key(Vec<(String, Value)>, Option<usize>, Option<usize>),
}

fn render_path(segs: &[Seg]) -> String {
    let mut out = String::new();
    for s in segs {
        match s {
            Seg::Field(k) => {
                if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                    && !k.is_empty()
                {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                } else {
                    out.push('[');
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(']');
                }
            }
            Seg::Key(keys, _, _) => {
                out.push('[');
                for (i, (k, v)) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&format!("{k}={}", Shown(Some(v))));
                }
                out.push(']');
            }
        }
    }
    out
}

/// The RFC 6901 pointer of a path on one side (`live` or predicted); `None` when an element
/// is not on that side.
fn pointer(segs: &[Seg], live_side: bool) -> Option<String> {
    let mut out = String::new();
    for s in segs {
        out.push('/');
        match s {
            Seg::Field(k) => out.push_str(&escape_pointer_token(k)),
            Seg::Key(_, l, p) => out.push_str(&(if live_side { *l } else { *p })?.to_string()),
        }
    }
    Some(out)
}

/// What a walk knows about lists: the Kubernetes schema of the object and the list kinds its
/// `managedFields` record.
struct Lists {
    root: Option<TypeRef<'static>>,
    inferred: InferredSchema,
}

impl Lists {
    fn new(obj: &Value, entries: &[Entry]) -> Lists {
        let mut inferred = InferredSchema::default();
        for e in entries {
            inferred.learn(&e.set);
        }
        Lists { root: schema::lookup_object(obj), inferred }
    }

    /// The keys of the list at `dotted` (field names from the root) typed `t`.
    fn keys(&self, dotted: &str, t: Option<TypeRef>) -> Option<Vec<String>> {
        if let Some(t) = t
            && matches!(t.list_type(), Some(schema::ListType::Map))
        {
            let keys = t.list_map_keys();
            if !keys.is_empty() {
                return Some(keys.to_vec());
            }
        }
        match self.inferred.list_kind(dotted) {
            Some(ListKind::Map(keys)) if !keys.is_empty() => Some(keys),
            _ => None,
        }
    }
}

fn child_type(t: Option<TypeRef<'static>>, key: &str) -> Option<TypeRef<'static>> {
    t.and_then(|t| t.child(key))
}

fn items_type(t: Option<TypeRef>) -> Option<TypeRef> {
    t.filter(|t| t.shape() == Shape::List).and_then(|t| t.items())
}

fn join(dotted: &str, k: &str) -> String {
    if dotted.is_empty() { k.to_string() } else { format!("{dotted}.{k}") }
}

/// The key values of a list element (only the keys it has); `None` when it has none.
fn key_of(item: &Value, keys: &[String]) -> Option<Vec<(String, Value)>> {
    let k: Vec<(String, Value)> =
        keys.iter().filter_map(|k| item.get(k).map(|v| (k.clone(), v.clone()))).collect();
    (!k.is_empty()).then_some(k)
}

fn find_keyed(list: &[Value], keys: &[String], key: &[(String, Value)]) -> Option<usize> {
    list.iter().position(|i| key_of(i, keys).as_deref() == Some(key))
}

/// Where the walk is.
struct At<'a> {
    segs: Vec<Seg>,
    dotted: String,
    t: Option<TypeRef<'static>>,
    lists: &'a Lists,
}

/// Collects the differing fields of `live` and `predicted` (both present).
fn walk_changes(live: &Value, predicted: &Value, at: &mut At<'_>, out: &mut Vec<Vec<Seg>>) {
    if canonical_eq(live, predicted) {
        return;
    }
    match (live, predicted) {
        (Value::Object(l), Value::Object(p)) => {
            let mut keys: Vec<&String> = l.keys().chain(p.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                at.segs.push(Seg::Field(k.clone()));
                let (dotted, t) = (at.dotted.clone(), at.t);
                at.dotted = join(&dotted, k);
                at.t = child_type(t, k);
                match (l.get(k), p.get(k)) {
                    (Some(lv), Some(pv)) => walk_changes(lv, pv, at, out),
                    _ => out.push(at.segs.clone()),
                }
                at.dotted = dotted;
                at.t = t;
                at.segs.pop();
            }
        }
        (Value::Array(l), Value::Array(p)) => {
            let Some(keys) = at.lists.keys(&at.dotted, at.t) else {
                out.push(at.segs.clone());
                return;
            };
            let before = out.len();
            let t = at.t;
            at.t = items_type(t);
            let mut seen = vec![false; p.len()];
            let mut unkeyed = false;
            for (li, item) in l.iter().enumerate() {
                let Some(key) = key_of(item, &keys) else {
                    unkeyed = true;
                    continue;
                };
                let pi = find_keyed(p, &keys, &key);
                if let Some(pi) = pi {
                    seen[pi] = true;
                }
                at.segs.push(Seg::Key(key, Some(li), pi));
                match pi {
                    Some(pi) => walk_changes(item, &p[pi], at, out),
                    None => out.push(at.segs.clone()),
                }
                at.segs.pop();
            }
            for (pi, item) in p.iter().enumerate() {
                if seen[pi] {
                    continue;
                }
                match key_of(item, &keys) {
                    Some(key) => {
                        let li = find_keyed(l, &keys, &key);
                        if li.is_some() {
                            // A duplicate key: matched to the first live element already.
                            unkeyed = true;
                            continue;
                        }
                        at.segs.push(Seg::Key(key, None, Some(pi)));
                        out.push(at.segs.clone());
                        at.segs.pop();
                    }
                    None => unkeyed = true,
                }
            }
            at.t = t;
            // Elements without keys, or a different order only: the list as a whole.
            if unkeyed || out.len() == before {
                out.truncate(before);
                out.push(at.segs.clone());
            }
        }
        _ => out.push(at.segs.clone()),
    }
}

/// The value at a path on one side.
fn value_at<'v>(root: &'v Value, segs: &[Seg], live_side: bool) -> Option<&'v Value> {
    let mut v = root;
    for s in segs {
        v = match s {
            Seg::Field(k) => v.get(k)?,
            Seg::Key(_, l, p) => v.get((if live_side { *l } else { *p })?)?,
        };
    }
    Some(v)
}

/// The value at a path, keyed list elements found by their keys.
fn by_key<'v>(root: &'v Value, segs: &[Seg]) -> Option<&'v Value> {
    let mut v = root;
    for s in segs {
        v = match s {
            Seg::Field(k) => v.get(k)?,
            Seg::Key(key, _, _) => v
                .as_array()?
                .iter()
                .find(|item| key.iter().all(|(k, kv)| item.get(k) == Some(kv)))?,
        };
    }
    Some(v)
}

/// The writers of a path in `live` (whose lists the path's live indices point into).
fn writers_of(entries: &[Entry], live: &Value, segs: &[Seg]) -> Vec<FieldWriter> {
    // (depth reached, entry) for every entry holding the path, below it or an atomic parent.
    let mut found: Vec<(usize, &Entry)> = Vec::new();
    for e in entries {
        if let Some(depth) = holds(&e.set, live, segs) {
            found.push((depth, e));
        }
    }
    let Some(best) = found.iter().map(|(d, _)| *d).max() else { return Vec::new() };
    let mut out: Vec<FieldWriter> = found
        .into_iter()
        .filter(|(d, _)| *d == best)
        .map(|(_, e)| FieldWriter {
            manager: e.manager.clone(),
            operation: e.operation.clone(),
            subresource: e.subresource.clone(),
            time: e.time.clone(),
        })
        .collect();
    out.sort_by(|a, b| {
        b.time.cmp(&a.time).then_with(|| {
            (&a.manager, &a.operation, &a.subresource).cmp(&(
                &b.manager,
                &b.operation,
                &b.subresource,
            ))
        })
    });
    out.dedup();
    out
}

/// How deep `set` follows `segs` when it holds the path: `segs.len()` when it holds the field
/// or something below it, less when an atomic field above holds it; `None` otherwise.
fn holds(set: &FieldSet, live: &Value, segs: &[Seg]) -> Option<usize> {
    let mut node = set;
    let mut v = Some(live);
    for (depth, s) in segs.iter().enumerate() {
        if depth > 0 && node.is_member() && node.children().next().is_none() {
            return Some(depth);
        }
        let next = match s {
            Seg::Field(k) => {
                v = v.and_then(|v| v.get(k));
                node.child(&PathElement::Field(k.clone()))
            }
            Seg::Key(_, li, _) => {
                let li = (*li)?;
                let list = v.and_then(Value::as_array)?;
                v = list.get(li);
                node.children().find(|(pe, _)| find_item(list, pe) == Some(li)).map(|(_, c)| c)
            }
        };
        node = next?;
    }
    (!node.is_empty()).then_some(segs.len())
}

/// The resource's rendered sides, with Secret data masked once more.
fn sides(resource: &ResourceDiff, opts: &ExplainOptions) -> (Value, Value) {
    let (n, p) = (&resource.normalized_live, &resource.predicted_live);
    if super::is_secret(&resource.object.group, &resource.object.kind) {
        let (mp, mn) = hide_secret_data(
            Some(p).filter(|v| !v.is_null()),
            Some(n).filter(|v| !v.is_null()),
            &opts.hide_annotations,
        );
        return (mn.unwrap_or(Value::Null), mp.unwrap_or(Value::Null));
    }
    (n.clone(), p.clone())
}

/// The `managedFields` entries of the live object (none when they cannot be read), and
/// whether it records any, readable or not.
fn entries_of(resource: &ResourceDiff, live: Option<&Value>) -> (Vec<Entry>, bool) {
    let obj = live.unwrap_or(&resource.normalized_live);
    let recorded = obj
        .pointer("/metadata/managedFields")
        .is_some_and(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()));
    (managed_fields(obj).unwrap_or_default(), recorded)
}

impl ResourceDiff {
    /// The differing fields of one resource, with who last wrote each in live.
    ///
    /// Both the normalised live and the predicted live object must be present (otherwise the
    /// whole object is the difference and the result is empty). The fields are those of the
    /// resource's patch, with keyed lists matched by key rather than by position: a field only
    /// in live has `desired: None`, a field only in predicted live has `live: None`. `live` is the
    /// live object as the cluster returned it (for its `managedFields`); `None` reads them from
    /// the normalised live object.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::diff::{self, AppDiffInput, ExplainOptions};
    /// use gitops_core::config::{Application, Settings};
    /// use gitops_core::object::Scopes;
    /// use serde_json::json;
    ///
    /// let desired = [json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "c", "namespace": "ns"}, "data": {"mode": "fast"}})];
    /// let live = [json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "c", "namespace": "ns", "managedFields": [{"manager": "kubectl-edit",
    ///         "operation": "Update", "time": "2026-12-01T10:00:00Z",
    ///         "fieldsV1": {"f:data": {"f:mode": {}}}}]}, "data": {"mode": "slow"}})];
    /// let (app, settings, scopes) = (Application::default(), Settings::default(), Scopes::builtin());
    /// let input = AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(true);
    /// let out = diff::diff_app(&input).unwrap();
    /// let changes = out.resources[0].explain_changes(Some(&live[0]), &ExplainOptions::default());
    /// assert_eq!(changes[0].to_string(),
    ///     "data.mode: desired fast, live slow, written by kubectl-edit (Update, 2026-12-01T10:00:00Z)");
    /// ```
    pub fn explain_changes(&self, live: Option<&Value>, opts: &ExplainOptions) -> Vec<FieldChange> {
        let resource = self;
        let (n, p) = sides(resource, opts);
        if n.is_null() || p.is_null() || !resource.modified {
            return Vec::new();
        }
        let (entries, _) = entries_of(resource, live);
        let lists = Lists::new(&n, &entries);
        let mut at = At { segs: Vec::new(), dotted: String::new(), t: lists.root, lists: &lists };
        let mut paths = Vec::new();
        walk_changes(&n, &p, &mut at, &mut paths);
        let mut out: Vec<FieldChange> = paths
            .into_iter()
            .map(|segs| {
                let lv = value_at(&n, &segs, true);
                let pv = value_at(&p, &segs, false);
                let ptr = if lv.is_some() { pointer(&segs, true) } else { pointer(&segs, false) };
                FieldChange {
                    path: render_path(&segs),
                    pointer: ptr.unwrap_or_default(),
                    desired: pv.cloned(),
                    live: lv.cloned(),
                    writers: if lv.is_some() {
                        writers_of(&entries, &n, &segs)
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.pointer.cmp(&b.pointer)));
        out
    }
}

impl ResourceDiff {
    /// The unmanaged additions of one resource: live fields that Git never declared and that a
    /// person or a tool wrote.
    ///
    /// A field of the normalised live object is listed when all of these hold:
    ///
    /// 1. it is not under `status`, and under `metadata` it is a label or an annotation, other
    ///    than those Argo CD writes itself ([`ExplainOptions::argo_metadata`]);
    /// 2. it holds something (not `null`, an empty map or an empty list), and it is not in the
    ///    desired object once the Kubernetes defaults of its type are applied (keyed list
    ///    elements matched by key; the topmost missing field is listed, a whole list element or
    ///    map entry at once);
    /// 3. the diff keeps it: the predicted live object holds the same value (so it is not a
    ///    difference, and self-heal leaves it);
    /// 4. its writers (see the module docs) include none of [`ExplainOptions::appliers`], and at
    ///    least one manager that is not in [`ExplainOptions::system_managers`]. A field nobody
    ///    is recorded to have written is left out when the object has `managedFields`, readable
    ///    or not (the API server set it); when it has none at all, it is listed with no writer unless
    ///    the API server allocates it (`spec.clusterIP`, `spec.clusterIPs`, `spec.ipFamilies`,
    ///    `spec.ipFamilyPolicy`, `spec.internalTrafficPolicy`, `spec.healthCheckNodePort`,
    ///    `spec.volumeName`, `spec.nodeName`) or a built-in controller writes it (the annotations
    ///    `deployment.kubernetes.io/revision`, `pv.kubernetes.io/bind-completed`,
    ///    `pv.kubernetes.io/bound-by-controller`, `volume.kubernetes.io/storage-provisioner`).
    ///
    /// `desired` is the desired object as rendered from Git, with its namespace; `live` as for
    /// [`ResourceDiff::explain_changes`]. Nothing is listed unless both the desired and the live object exist.
    pub fn unmanaged_fields(
        &self,
        desired: Option<&Value>,
        live: Option<&Value>,
        opts: &ExplainOptions,
    ) -> Vec<UnmanagedField> {
        let resource = self;
        let (n, p) = sides(resource, opts);
        let Some(desired) = desired else { return Vec::new() };
        if n.is_null() || p.is_null() {
            return Vec::new();
        }
        let mut d = super::normalize::prepare(
            std::borrow::Cow::Borrowed(desired),
            &DiffOptions::default(),
            true,
        );
        // Left undefaulted when its defaults do not fit it (the comparison has failed then).
        let _ = apply_defaults_in_place(&mut d);
        let (entries, recorded) = entries_of(resource, live);
        let lists = Lists::new(&n, &entries);
        let (Value::Object(nm), Value::Object(dm)) = (&n, &d) else { return Vec::new() };
        let mut cands = Vec::new();
        let mut at = At { segs: Vec::new(), dotted: String::new(), t: lists.root, lists: &lists };
        for (k, v) in nm {
            if k == "status" {
                continue;
            }
            if k == "metadata" {
                for sub in ["labels", "annotations"] {
                    let Some(Value::Object(m)) = v.get(sub) else { continue };
                    for name in m.keys() {
                        if opts.argo_metadata.iter().any(|a| a == name) {
                            continue;
                        }
                        let segs = vec![
                            Seg::Field("metadata".into()),
                            Seg::Field(sub.into()),
                            Seg::Field(name.clone()),
                        ];
                        if d.pointer(&format!("/metadata/{sub}/{}", escape_pointer_token(name)))
                            .is_none()
                        {
                            cands.push(segs);
                        }
                    }
                }
                continue;
            }
            at.segs.push(Seg::Field(k.clone()));
            at.dotted = k.clone();
            at.t = child_type(lists.root, k);
            match dm.get(k) {
                Some(dv) => walk_additions(v, dv, &mut at, &mut cands),
                None => cands.push(at.segs.clone()),
            }
            at.segs.pop();
        }
        let mut out = Vec::new();
        for segs in cands {
            let Some(lv) = value_at(&n, &segs, true) else { continue };
            if adds_nothing(lv) {
                continue;
            }
            let Some(ptr) = pointer(&segs, true) else { continue };
            // Kept by the diff: the predicted live holds the same value (keyed elements by key).
            if !by_key(&p, &segs).is_some_and(|pv| canonical_eq(pv, lv)) {
                continue;
            }
            let writers = writers_of(&entries, &n, &segs);
            let listed = if writers.is_empty() {
                !recorded && !SERVER_SET.contains(&ptr.as_str())
            } else {
                !writers.iter().any(|w| opts.appliers.contains(&w.manager))
                    && writers.iter().any(|w| !opts.system_managers.contains(&w.manager))
            };
            if listed {
                out.push(UnmanagedField {
                    path: render_path(&segs),
                    pointer: ptr,
                    live: lv.clone(),
                    writers,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.pointer.cmp(&b.pointer)));
        out
    }
}

/// `null`, an empty map or an empty list adds nothing (the API server writes `resources: {}`
/// for an empty struct, `creationTimestamp: null` in a pod template).
fn adds_nothing(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Collects the topmost fields of `live` that `desired` lacks (keyed lists by key; other
/// lists are atomic and never descended).
fn walk_additions(live: &Value, desired: &Value, at: &mut At<'_>, out: &mut Vec<Vec<Seg>>) {
    match (live, desired) {
        (Value::Object(l), Value::Object(d)) => {
            for (k, lv) in l {
                at.segs.push(Seg::Field(k.clone()));
                let (dotted, t) = (at.dotted.clone(), at.t);
                at.dotted = join(&dotted, k);
                at.t = child_type(t, k);
                match d.get(k) {
                    Some(dv) => walk_additions(lv, dv, at, out),
                    None => out.push(at.segs.clone()),
                }
                at.dotted = dotted;
                at.t = t;
                at.segs.pop();
            }
        }
        (Value::Array(l), Value::Array(d)) => {
            let Some(keys) = at.lists.keys(&at.dotted, at.t) else { return };
            let t = at.t;
            at.t = items_type(t);
            for (li, item) in l.iter().enumerate() {
                let Some(key) = key_of(item, &keys) else { continue };
                let di = find_keyed(d, &keys, &key);
                at.segs.push(Seg::Key(key, Some(li), None));
                match di {
                    Some(di) => walk_additions(item, &d[di], at, out),
                    None => out.push(at.segs.clone()),
                }
                at.segs.pop();
            }
            at.t = t;
        }
        _ => {}
    }
}

impl AppDiff {
    /// Explains every resource of an application diff that has something to explain: its
    /// differing fields ([`ResourceDiff::explain_changes`]) and its unmanaged additions ([`ResourceDiff::unmanaged_fields`]),
    /// pairing each resource with its desired object (namespace defaulted as [`super::diff_app`]
    /// does) and its live object from `input`, with [`ExplainOptions::default`] plus the
    /// settings' instance label and `resource.sensitive.mask.annotations`. Resources are in the order of `result`; hooks and resources
    /// with nothing to say are left out. It reads the normalised and predicted objects: `result`
    /// must come from an input (`input`, the one it was computed from) built with [`AppDiffInput::with_objects`].
    pub fn explain(&self, input: &AppDiffInput<'_>) -> Vec<ResourceExplanation> {
        let result = self;
        let mut opts = ExplainOptions {
            hide_annotations: input.settings.sensitive_mask_annotations.clone(),
            ..ExplainOptions::default()
        };
        if !opts.argo_metadata.contains(&input.settings.instance_label_key) {
            opts.argo_metadata.push(input.settings.instance_label_key.clone());
        }
        let ns = input.app.spec.destination.namespace.as_str();
        let desired: Vec<(ObjectRef, Value)> = input
            .desired
            .iter()
            .map(|o| {
                let mut o = o.clone();
                input.scopes.default_namespace(&mut o, ns);
                (ObjectRef::from_object_lossy(&o), o)
            })
            .collect();
        let live: Vec<ObjectRef> = input
            .live
            .iter()
            .map(|o| {
                let mut r = ObjectRef::from_object_lossy(o);
                if input.scopes.is_cluster_scoped(&r.group, &r.kind) {
                    r.namespace.clear();
                }
                r
            })
            .collect();
        let desired_at = ObjectIndex::of_refs(desired.iter().map(|(r, _)| r));
        let live_at = ObjectIndex::of_refs(&live);
        let mut out = Vec::new();
        for r in &result.resources {
            if r.hook {
                continue;
            }
            let l = live_at.first(&r.object).map(|i| &input.live[i]);
            let d = desired_at.last(&r.object).map(|i| &desired[i].1);
            let changes = r.explain_changes(l, &opts);
            let unmanaged = r.unmanaged_fields(d, l, &opts);
            if changes.is_empty() && unmanaged.is_empty() {
                continue;
            }
            out.push(ResourceExplanation { object: r.object.clone(), changes, unmanaged });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_print_plain_unless_ambiguous() {
        let shown = |v: Value| Shown(Some(&v)).to_string();
        assert_eq!(shown(json!("api:1")), "api:1");
        assert_eq!(shown(json!("/dev/termination-log")), "/dev/termination-log");
        for (v, text) in [
            (json!(""), r#""""#),
            (json!("a b"), r#""a b""#),
            (json!("a,b"), r#""a,b""#),
            (json!("1"), r#""1""#),
            (json!("true"), r#""true""#),
            (json!("null"), r#""null""#),
            (json!(3), "3"),
            (json!(null), "null"),
            (json!({"b": 1, "a": [true]}), r#"{"a":[true],"b":1}"#),
        ] {
            assert_eq!(shown(v), text);
        }
        assert_eq!(Shown(None).to_string(), "absent");
    }

    #[test]
    fn paths_quote_odd_names_and_show_keys() {
        let segs = vec![
            Seg::Field("metadata".into()),
            Seg::Field("annotations".into()),
            Seg::Field("example.com/a b".into()),
        ];
        assert_eq!(render_path(&segs), r#"metadata.annotations["example.com/a b"]"#);
        assert_eq!(pointer(&segs, true).as_deref(), Some("/metadata/annotations/example.com~1a b"));
        let key = vec![("containerPort".into(), json!(80)), ("protocol".into(), json!("TCP"))];
        let segs = vec![
            Seg::Field("ports".into()),
            Seg::Key(key, Some(2), None),
            Seg::Field("name".into()),
        ];
        assert_eq!(render_path(&segs), "ports[containerPort=80,protocol=TCP].name");
        assert_eq!(pointer(&segs, true).as_deref(), Some("/ports/2/name"));
        assert_eq!(pointer(&segs, false), None);
        assert_eq!(render_path(&[Seg::Field(String::new())]), r#"[""]"#);
    }

    #[test]
    fn writers_text() {
        let w = |m: &str, sub: &str, time: &str| FieldWriter {
            manager: m.into(),
            operation: "Update".into(),
            subresource: sub.into(),
            time: time.into(),
        };
        assert_eq!(Writers(&[]).to_string(), "no recorded writer");
        assert_eq!(Writers(&[w("hpa", "", "")]).to_string(), "written by hpa (Update)");
        assert_eq!(
            Writers(&[w("a", "scale", "t2"), w("b", "", "t1")]).to_string(),
            "written by 2 managers: a (Update, scale, t2); b (Update, t1)"
        );
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::diff::{AppDiffInput, diff_app};
    use crate::{config::Application, config::Settings, object::Scopes};

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0..3i32).prop_map(Value::from),
            prop_oneof![Just("a"), Just("b"), Just("f:a"), Just("k:{\"name\":\"a\"}"), Just(".")]
                .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("name".to_string()),
                        Just("data".to_string()),
                        Just("f:name".to_string()),
                        Just("k:{\"name\":\"a\"}".to_string()),
                        Just(".".to_string()),
                        "[a-c]{1,2}"
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        // Bad input (any body, any managedFields) never panics.
        #[test]
        fn no_panics(d in arb_json(), l in arb_json(), f in arb_json(), kind in prop_oneof![
            Just(("v1", "Secret")), Just(("apps/v1", "Deployment")), Just(("x.io/v1", "W"))]) {
            let obj = |body: Value, mf: Value| {
                json!({"apiVersion": kind.0, "kind": kind.1,
                    "metadata": {"name": "x", "namespace": "n", "managedFields": mf},
                    "spec": body.clone(), "data": body})
            };
            let desired = [obj(d, Value::Null)];
            let live = [obj(l, json!([{"manager": "m", "operation": "Update", "fieldsV1": f}]))];
            let (app, settings, scopes) =
                (Application::default(), Settings::default(), Scopes::builtin());
            let input =
                AppDiffInput::new(&desired, &live, &app, &settings, &scopes).with_objects(true);
            if let Ok(result) = diff_app(&input) {
                for e in result.explain(&input) {
                    for c in &e.changes {
                        let _ = c.to_string();
                    }
                    for u in &e.unmanaged {
                        let _ = u.to_string();
                    }
                }
            }
        }
    }
}
