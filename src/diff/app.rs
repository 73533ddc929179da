//! An application's comparison end to end and the sync-status roll-up (Argo CD
//! 3.6.2 controller/state.go `CompareAppState`).

use std::borrow::Cow;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ignore_seam::AppNormalizer;
use super::normalize::{normalize_tracking, set_annotation, tracking_change};
use super::pipeline::{Keep, diff_objects};
use super::{DiffError, DiffMode, DiffOptions, DiffResult, PatchOp, hide_secret_data};
use crate::config::{Application, Settings, TrackingMethod};
use crate::managed_fields::normalize_managed_fields;
use crate::object::{ObjectIndex, ObjectRef, Scopes, annotation};
use crate::ownership::{
    Unmanaged, desired_ref, object_ref, pair_key, self_referenced, sort_live, truncate_label,
};
use crate::vocabulary::{
    self, AppOptions, COMPARE_OPTIONS_ANNOTATION, INSTALLATION_ID_ANNOTATION, ResourceOptions,
    SYNC_OPTIONS_ANNOTATION, TRACKING_ID_ANNOTATION,
};

/// The sync status of an application or a resource: what the diff reports and what
/// `sync::AutoSyncInput::decide` reads. Spelled as Argo CD spells it on the wire.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[non_exhaustive]
pub enum SyncStatus {
    /// Live matches desired.
    Synced,
    /// Something differs, is missing, or requires pruning.
    OutOfSync,
    /// The comparison failed, or not known.
    #[default]
    Unknown,
}

impl SyncStatus {
    /// The name Argo CD prints: `Synced`, `OutOfSync`, `Unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncStatus::Synced => "Synced",
            SyncStatus::OutOfSync => "OutOfSync",
            SyncStatus::Unknown => "Unknown",
        }
    }
}

/// Everything [`diff_app`] compares: the app's desired objects (rendered manifests), its live
/// objects as the host found them, the Application and `argocd-cm` settings.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct AppDiffInput<'a> {
    /// Desired objects, as rendered from Git ([`diff_app_owned`] compares the objects it is
    /// given after these).
    pub desired: &'a [Value],
    /// Live objects the host found for the app ([`diff_app_owned`]: as for `desired`).
    pub live: &'a [Value],
    /// The Application (destination namespace, ignore rules, sync options, annotations).
    pub app: &'a Application,
    /// `argocd-cm` settings.
    pub settings: &'a Settings,
    /// Scopes of kinds, for namespace defaulting.
    pub scopes: &'a Scopes,
    /// Server-side dry-run results of desired objects, matched by identity; needed only for
    /// server-side diff.
    pub dry_runs: &'a [Value],
    /// The controller's `--server-side-diff-enabled` flag.
    pub server_side_diff: bool,
    /// Shows Secret values in the rendered outputs instead of masks.
    pub reveal_secrets: bool,
    /// Ignore rules compiled once by the host (from this app's `ignoreDifferences` and these
    /// settings), so repeated comparisons do not compile jq expressions again.
    pub ignore_rules: Option<&'a crate::ignore::IgnoreNormalizer>,
    /// The cluster's OpenAPI v2 document (or CRD definitions), for custom resources' list
    /// types in structured-merge and server-side diff ([`DiffOptions::openapi`]).
    pub openapi: Option<&'a crate::schema::OpenApiSchema>,
    /// Whether a desired object's `gitops-core.io/ignore-differences` annotation adds an
    /// ignore rule for that object (on by default). Lent rules built with
    /// `IgnoreNormalizer::with_annotation(false)` turn it off as well.
    pub ignore_annotation: bool,
    /// Whether each [`ResourceDiff`] keeps its normalised and predicted live objects (off by
    /// default: they are `null` and only the patch and the status are kept, so a large
    /// application holds no copy of its objects beyond the comparison of one resource).
    /// [`AppDiff::render_text`], `AppDiff::explain` and a caller reading the objects need them:
    /// ask with [`AppDiffInput::with_objects`].
    pub keep_objects: bool,
    /// The host's backstop for the app's jq ignore rules, asked while each expression runs
    /// on each object (used when the rules are not lent by [`AppDiffInput::ignore_rules`],
    /// which carry their own).
    pub interrupt: Option<&'a std::sync::Arc<dyn crate::script::Interrupt>>,
    /// The app's AppProject: live objects it does not permit are left out (with a note), and
    /// a resource whose kind it does not permit is `Unknown` (Argo CD 3.6.2 `CompareAppState`:
    /// `IsLiveResourcePermitted`, `IsGroupKindNamePermitted`). `None`: everything permitted.
    pub project: Option<&'a crate::project::AppProject>,
}

impl<'a> AppDiffInput<'a> {
    /// An input with no dry-run results, server-side diff off and Secrets masked.
    pub fn new(
        desired: &'a [Value],
        live: &'a [Value],
        app: &'a Application,
        settings: &'a Settings,
        scopes: &'a Scopes,
    ) -> Self {
        AppDiffInput {
            desired,
            live,
            app,
            settings,
            scopes,
            dry_runs: &[],
            server_side_diff: false,
            reveal_secrets: false,
            ignore_rules: None,
            openapi: None,
            ignore_annotation: true,
            keep_objects: false,
            interrupt: None,
            project: None,
        }
    }

    /// Sets [`AppDiffInput::project`]: what the app's AppProject permits.
    pub fn with_project(mut self, project: &'a crate::project::AppProject) -> Self {
        self.project = Some(project);
        self
    }

    /// The host's backstop for the app's jq ignore rules (the CLI and `serve` install a 1 s
    /// wall-clock [`crate::script::Deadline`]); a stop fails the comparison, naming the rule,
    /// the object and the limit.
    #[must_use]
    pub fn with_interrupt(
        mut self,
        interrupt: &'a std::sync::Arc<dyn crate::script::Interrupt>,
    ) -> Self {
        self.interrupt = Some(interrupt);
        self
    }

    /// Keeps the normalised and predicted live objects in the result, or, off (the default),
    /// only the patch and the status ([`AppDiffInput::keep_objects`]).
    pub fn with_objects(mut self, on: bool) -> Self {
        self.keep_objects = on;
        self
    }

    /// Sets [`AppDiffInput::openapi`], the schema of custom resources.
    pub fn with_openapi(mut self, schema: &'a crate::schema::OpenApiSchema) -> Self {
        self.openapi = Some(schema);
        self
    }

    /// Turns the `gitops-core.io/ignore-differences` annotation on (the default) or off.
    pub fn with_ignore_annotation(mut self, on: bool) -> Self {
        self.ignore_annotation = on;
        self
    }

    /// Uses ignore rules compiled once, which must have been built from `app`'s
    /// `ignoreDifferences` and `settings` (`IgnoreNormalizer::for_app`).
    pub fn with_ignore_rules(mut self, rules: &'a crate::ignore::IgnoreNormalizer) -> Self {
        self.ignore_rules = Some(rules);
        self
    }

    /// Sets the dry-run results and turns server-side diff on.
    pub fn with_dry_runs(mut self, dry_runs: &'a [Value]) -> Self {
        self.dry_runs = dry_runs;
        self.server_side_diff = true;
        self
    }

    /// Shows Secret values unmasked.
    pub fn with_reveal_secrets(mut self, on: bool) -> Self {
        self.reveal_secrets = on;
        self
    }

    /// Whether [`diff_app`] with this input may read the `metadata.managedFields` of a live
    /// object beyond setting it aside: when it does not, a live object read without the field
    /// (`ParseOptions::leave_out_managed_fields`, which keeps it wherever the object itself
    /// could make it count: a last-applied annotation that may hold one, a field that a
    /// built-in type might refuse) gets the same answer, byte for byte. Reads everything but
    /// [`AppDiffInput::live`], so a host may ask before it reads the live objects.
    ///
    /// `true` (the field is read) when the result keeps its objects
    /// ([`AppDiffInput::keep_objects`]: the text diff, explanations), with server-side diff
    /// (the host's flag, dry-run results, the app's `ServerSideDiff=true` or server-side
    /// apply), when a `managedFieldsManagers` of the app or of `argocd-cm` or a jq rule whose
    /// footprint may reach the field could apply, when the rules do not compile (the
    /// comparison then fails in its own words), and when a desired object has
    /// `metadata.managedFields` (the prediction then patches live's) or an ignore annotation
    /// that is read (its own managers or jq). [`diff_app`] runs no Lua script and no output
    /// field counts or names live's fields, so nothing else reads it.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::config::{Application, Settings};
    /// use gitops_core::diff::AppDiffInput;
    /// use gitops_core::object::Scopes;
    ///
    /// let (app, settings, scopes) = (Application::default(), Settings::default(), Scopes::builtin());
    /// let input = AppDiffInput::new(&[], &[], &app, &settings, &scopes);
    /// assert!(!input.reads_live_managed_fields());
    /// assert!(input.with_objects(true).reads_live_managed_fields());
    /// ```
    pub fn reads_live_managed_fields(&self) -> bool {
        let (app, settings) = (self.app, self.settings);
        let rules = &app.spec.ignore_differences;
        let managers = rules.iter().any(|r| !r.managed_fields_managers.is_empty())
            || (settings.overrides.values())
                .any(|o| !o.ignore_differences.managed_fields_managers.is_empty());
        let jq = || {
            AppNormalizer::new(rules, settings, self.ignore_rules, None)
                .map_or(true, |n| n.ignore.may_read_managed_fields(None, None))
        };
        let desired = || {
            self.desired.iter().any(|d| {
                let own = crate::ignore::AnnotationRule::ANNOTATION;
                let meta = d.get("metadata");
                meta.is_some_and(|m| m.get("managedFields").is_some())
                    || (self.ignore_annotation
                        && meta
                            .and_then(|m| m.get("annotations"))
                            .is_some_and(|a| a.get(own).is_some()))
            })
        };
        self.keep_objects || server_side(self) || managers || jq() || desired()
    }
}

/// An application condition (Argo CD's `status.conditions[]`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Condition {
    /// `ComparisonError`, `RepeatedResourceWarning`, ...
    #[serde(rename = "type")]
    pub type_: String,
    /// The message.
    pub message: String,
}

/// The comparison of one resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceDiff {
    /// The resource (from live when it exists, else from desired).
    pub object: ObjectRef,
    /// `Synced`, `OutOfSync` or `Unknown`; `None` for hooks, ignored objects and objects
    /// another resource's tracking id claims.
    pub status: Option<SyncStatus>,
    /// Whether normalised live and predicted live differ.
    pub modified: bool,
    /// Live only: Argo CD would delete it on a pruning sync.
    pub requires_pruning: bool,
    /// `Delete=confirm` or `Prune=confirm`: deletion waits for a confirmation.
    pub requires_deletion_confirmation: bool,
    /// The object is a hook.
    pub hook: bool,
    /// RFC 6902 operations from normalised live to predicted live (masked for Secrets).
    pub diff: Vec<PatchOp>,
    /// Normalised live (masked for Secrets); `null` when missing.
    pub normalized_live: Value,
    /// Predicted live (masked for Secrets); `null` when not desired.
    pub predicted_live: Value,
    /// The algorithm used, when a diff ran.
    pub mode: Option<DiffMode>,
    /// What the comparison has to say about this resource (empty when nothing).
    pub message: String,
    /// RespectIgnoreDifferences: the desired object with live values at ignored paths, for
    /// the sync plan to apply. `None` until filled by the ignore engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub respected_target: Option<Value>,
}

/// The comparison of an application.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AppDiff {
    /// The application's sync status.
    pub sync_status: SyncStatus,
    /// Resources, sorted by group, kind, namespace, name.
    pub resources: Vec<ResourceDiff>,
    /// Hooks among the desired objects (not compared), sorted.
    pub hooks: Vec<ObjectRef>,
    /// Conditions (errors and warnings), sorted.
    pub conditions: Vec<Condition>,
    /// Notes about objects left out (see [`AppDiff::unmanaged`]), sorted.
    pub notes: Vec<String>,
    /// Live objects that are not the app's (`crate::ownership`): not compared, not pruned;
    /// sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmanaged: Vec<Unmanaged>,
    /// Whether the comparison kept the normalised and predicted objects
    /// ([`AppDiffInput::with_objects`]), which the text diff ([`AppDiff::texts`]) needs. Not
    /// serialized: an `AppDiff` read back from JSON has no text diff.
    #[serde(skip)]
    pub(crate) objects_kept: bool,
}

/// One object of the text diff ([`AppDiff::texts`]): the YAML of its normalised live object
/// and of its predicted live object (the live object as it would be once the desired one is
/// applied), as `kubectl diff` writes them into its `LIVE` and `MERGED` folders.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectText {
    /// The object.
    pub object: ObjectRef,
    /// The live YAML; `None` when there is no live object (it would be created).
    pub live: Option<String>,
    /// The predicted live YAML; `None` when the object would be pruned.
    pub merged: Option<String>,
}

impl ObjectText {
    /// The file name `kubectl diff` gives the object in its folders:
    /// `group.version.Kind.namespace.name`, without `group.` for the core group
    /// (kubectl's `InfoObject.Name` in `pkg/cmd/diff/diff.go`), e.g.
    /// `apps.v1.Deployment.shop.api`, `v1.Namespace..shop`.
    pub fn file_name(&self) -> String {
        let o = &self.object;
        let group = if o.group.is_empty() { String::new() } else { format!("{}.", o.group) };
        format!("{group}{}.{}.{}.{}", o.version, o.kind, o.namespace, o.name)
    }

    /// [`ObjectText::file_name`] for a header line: a control character of the name (a line
    /// break in hostile input) is escaped, so that the name stays on its line.
    fn shown_name(&self) -> String {
        let name = self.file_name();
        if !name.contains(char::is_control) {
            return name;
        }
        name.chars()
            .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
            .collect()
    }

    /// What `argocd app diff` prints for the object: a `===== group/Kind namespace/name
    /// ======` header and the line diff of the two YAML texts (classic `diff`: hunks headed
    /// `3c3`, `5a6,7`, `9d8`, removed lines prefixed `< `, added lines `> `).
    pub fn classic(&self) -> String {
        let o = &self.object;
        let mut out = format!("===== {}/{} {}/{} ======\n", o.group, o.kind, o.namespace, o.name);
        out.push_str(&super::line_diff(
            self.live.as_deref().unwrap_or_default(),
            self.merged.as_deref().unwrap_or_default(),
        ));
        out
    }

    /// What `kubectl diff` prints for the object (`diff -u -N` of its files in the `live` and
    /// `merged` folders): a `diff -u -N live/NAME merged/NAME` line, then
    /// [`ObjectText::hunks`]. Empty when the texts are equal.
    pub fn unified(&self) -> String {
        let hunks = self.hunks();
        if hunks.is_empty() {
            return String::new();
        }
        let name = self.shown_name();
        format!("diff -u -N live/{name} merged/{name}\n{hunks}")
    }

    /// The unified line diff (`diff -u`, three lines of context) of the two YAML texts: `--- live/NAME` and
    /// `+++ merged/NAME` lines naming the files ([`ObjectText::file_name`]), then the hunks.
    /// A side without an object reads as an empty file. Empty when the texts are equal.
    pub fn hunks(&self) -> String {
        let name = self.shown_name();
        super::unified_diff(
            self.live.as_deref().unwrap_or_default(),
            self.merged.as_deref().unwrap_or_default(),
            &format!("live/{name}"),
            &format!("merged/{name}"),
        )
    }
}

impl AppDiff {
    /// Whether anything differs: a resource is out of sync (missing, modified, or requiring
    /// pruning). Hooks and ignored objects, which have no status, do not count.
    pub fn has_differences(&self) -> bool {
        self.resources.iter().any(|r| r.status == Some(SyncStatus::OutOfSync))
    }

    /// The objects of the text diff, in the order of [`AppDiff::resources`]: every modified,
    /// missing or extraneous resource (not hooks), with the YAML of its normalised live object
    /// and of its predicted live object. Secrets are masked unless the input asked otherwise.
    ///
    /// # Errors
    ///
    /// [`DiffError::ObjectsNotKept`] when the comparison did not keep the objects (made
    /// without [`AppDiffInput::with_objects`], or read back from JSON).
    pub fn texts(&self) -> Result<Vec<ObjectText>, DiffError> {
        if !self.objects_kept {
            return Err(DiffError::ObjectsNotKept);
        }
        let mut out = Vec::new();
        for r in &self.resources {
            if r.hook || r.status.is_none() && !r.modified {
                continue;
            }
            if r.normalized_live.is_null() && r.predicted_live.is_null() {
                continue;
            }
            let live_missing = r.normalized_live.is_null();
            let target_missing = r.predicted_live.is_null();
            if !(r.modified || live_missing || target_missing) {
                continue;
            }
            let yaml = |v: &Value| (!v.is_null()).then(|| to_yaml(v));
            out.push(ObjectText {
                object: r.object.clone(),
                live: yaml(&r.normalized_live),
                merged: yaml(&r.predicted_live),
            });
        }
        Ok(out)
    }

    /// What `argocd app diff` prints: [`ObjectText::classic`] of every object of
    /// [`AppDiff::texts`].
    ///
    /// # Errors
    ///
    /// [`DiffError::ObjectsNotKept`], as [`AppDiff::texts`].
    pub fn render_text(&self) -> Result<String, DiffError> {
        Ok(self.texts()?.iter().map(ObjectText::classic).collect())
    }

    /// What `kubectl diff` prints: [`ObjectText::unified`] of every object of
    /// [`AppDiff::texts`].
    ///
    /// # Errors
    ///
    /// [`DiffError::ObjectsNotKept`], as [`AppDiff::texts`].
    pub fn render_unified(&self) -> Result<String, DiffError> {
        Ok(self.texts()?.iter().map(ObjectText::unified).collect())
    }
}

/// YAML text of an object (empty for `null`), keys sorted, read back by Kubernetes' reader as
/// the same object ([`crate::object::to_yaml`]).
pub(crate) fn to_yaml(v: &Value) -> String {
    if v.is_null() {
        return String::new();
    }
    crate::object::to_yaml(v).unwrap_or_else(|e| format!("# {e}\n"))
}

/// The tracking id Argo CD gives a desired object: an object without a namespace (a
/// cluster-scoped kind) carries the destination namespace (`UnstructuredToAppInstanceValue`).
fn tracking_id(app: &str, r: &ObjectRef, destination_namespace: &str) -> String {
    let namespace = if r.namespace.is_empty() { destination_namespace } else { &r.namespace };
    format!("{app}:{}/{}:{namespace}/{}", r.group, r.kind, r.name)
}

/// Compares an application's desired objects with its live objects, as Argo CD's
/// `CompareAppState` (Argo CD 3.6.2 controller/state.go).
///
/// Desired objects get the destination namespace (namespaced kinds) and the app's tracking
/// label or annotation; duplicates keep the last one (with a `RepeatedResourceWarning`);
/// hooks are set aside. Only the app's live objects are compared ([`crate::ownership`]: the
/// live copies of desired objects, and the objects whose tracking names the app and that have
/// no `ownerReferences`); the others are left out, listed in [`AppDiff::unmanaged`] and named
/// in [`AppDiff::notes`]: they are neither compared nor pruned.
/// Objects pair by group, kind, namespace and name. Each pair is diffed with
/// [`super::diff()`] under the app's options (server-side diff, server-side apply, aggregated
/// roles, ignore rules, known types). Secrets are masked in every rendered output; the
/// statuses come from the unmasked diff.
///
/// A desired object's `gitops-core.io/ignore-differences` annotation (see
/// [`crate::ignore::AnnotationRule`]) adds a rule for that object alone, applied after the
/// app and `argocd-cm` rules, unless [`AppDiffInput::ignore_annotation`] is off. The
/// annotation on a live object is never read.
///
/// A comparison that fails (a bad ignore rule or annotation, a patch that cannot be built) is not an
/// `Err`: the app and every resource are `Unknown` with the `ComparisonError` condition
/// "Failed to compare desired state to live state: ...", as in Argo CD.
///
/// # Errors
///
/// [`DiffError::Interrupted`] when the host's interrupt ([`AppDiffInput::with_interrupt`], a
/// wall-clock backstop) stopped a jq ignore rule: a stop by the clock is no property of the
/// input, so it becomes no `Unknown` verdict; the caller may retry. A counted limit of a
/// rule is a `ComparisonError` as above, the same on every run.
///
/// # Examples
///
/// ```
/// use gitops_core::diff::{self, AppDiffInput, SyncStatus};
/// use gitops_core::config::{Application, Settings};
/// use gitops_core::object::Scopes;
/// use serde_json::json;
///
/// let live = [
///     json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "old", "namespace": "shop",
///         "annotations": {"argocd.argoproj.io/tracking-id": "shop:/Service:shop/old"}}}),
///     json!({"apiVersion": "v1", "kind": "ConfigMap",
///         "metadata": {"name": "kube-root-ca.crt", "namespace": "shop"}}),
/// ];
/// let app = Application::from_value(&json!({"metadata": {"name": "shop"}})).unwrap();
/// let (settings, scopes) = (Settings::default(), Scopes::builtin());
/// let out = diff::diff_app(&AppDiffInput::new(&[], &live, &app, &settings, &scopes)).unwrap();
/// assert_eq!(out.sync_status, SyncStatus::OutOfSync);
/// assert!(out.resources[0].requires_pruning);
/// // Tracked by no application: neither compared nor pruned.
/// assert_eq!(out.resources.len(), 1);
/// assert_eq!(out.notes, ["not compared or pruned, tracked by no application: ConfigMap:shop/kube-root-ca.crt"]);
/// ```
pub fn diff_app(input: &AppDiffInput<'_>) -> Result<AppDiff, DiffError> {
    diff_app_owned(input, Vec::new(), Vec::new())
}

/// [`diff_app`] on objects the caller gives away: `desired` and `live` are compared as if
/// they followed [`AppDiffInput::desired`] and [`AppDiffInput::live`] (a host that hands
/// every object over lends empty slices there, as `AppDiffInput::new(&[], &[], ...)`), and
/// the answer is [`diff_app`]'s for those objects, byte for byte.
///
/// Why: [`diff_app`] borrows the objects, so each comparison first copies its desired object
/// (to give it the destination namespace and the tracking) and its live object (to
/// normalise it). A host that does not read the objects after the comparison (a command
/// printing the result, a controller that read them for this comparison only) hands them
/// over instead: each object becomes the working copy of its own comparison and is freed
/// with it, so no copy is made and the objects are not held twice.
///
/// [`AppDiffInput::reads_live_managed_fields`] reads [`AppDiffInput::desired`] only: a host
/// that asks it before reading the live objects asks on an input that lends the desired
/// objects, then hands them over.
///
/// # Errors
///
/// As [`diff_app`].
///
/// # Examples
///
/// ```
/// use gitops_core::diff::{self, AppDiffInput, SyncStatus};
/// use gitops_core::config::{Application, Settings};
/// use gitops_core::object::Scopes;
/// use serde_json::json;
///
/// let desired = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "settings", "namespace": "shop"}, "data": {"a": "1"}})];
/// let live = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "settings", "namespace": "shop"}, "data": {"a": "2"}})];
/// let app = Application::from_value(&json!({"metadata": {"name": "shop"}})).unwrap();
/// let (settings, scopes) = (Settings::default(), Scopes::builtin());
///
/// // The borrowed way, for a host that reads the objects afterwards ...
/// let lent = diff::diff_app(&AppDiffInput::new(&desired, &live, &app, &settings, &scopes));
/// // ... and the objects given away: the same answer, without a copy of them.
/// let input = AppDiffInput::new(&[], &[], &app, &settings, &scopes);
/// let owned = diff::diff_app_owned(&input, desired, live).unwrap();
/// assert_eq!(owned, lent.unwrap());
/// assert_eq!(owned.sync_status, SyncStatus::OutOfSync);
/// assert_eq!(owned.resources[0].diff[0].path, "/data/a");
/// ```
pub fn diff_app_owned(
    input: &AppDiffInput<'_>,
    desired: Vec<Value>,
    live: Vec<Value>,
) -> Result<AppDiff, DiffError> {
    let app = input.app;
    let settings = input.settings;
    let Targets { map: mut targets, mut hooks, mut conditions, set_aside } =
        targets_of(input, desired);
    let mut notes = Vec::new();

    // The app's live objects (the ownership rule: `crate::ownership`, as `managed_live` sorts
    // them, paired by the targets' identities read once above, hooks and objects set aside
    // included); the others are left out with a note.
    let instance = app.instance_name(settings);
    let (managed, mut unmanaged) = {
        let paired: BTreeSet<_> = (targets.values().map(|(r, _)| r))
            .chain(&hooks)
            .chain(set_aside.iter().filter(|r| !crate::ownership::excluded(r, app, settings)))
            .filter(|r| !r.name.is_empty())
            .map(pair_key)
            .collect();
        let objects = input.live.iter().map(Cow::Borrowed).chain(live.into_iter().map(Cow::Owned));
        sort_live(objects, |k| paired.contains(&k), app, settings, input.scopes)
    };
    let mut lives: Lives<'_> = BTreeMap::new();
    for (r, obj) in managed {
        if let Some(reason) = not_permitted(input.project, &r, app) {
            unmanaged.push(Unmanaged { object: r, reason });
            continue;
        }
        conditions.extend(shared_warning(app, settings, &instance, &r, &obj));
        lives.insert(key(&r), (r, obj));
    }
    unmanaged.sort();
    notes.extend(crate::ownership::notes(&unmanaged));
    if let Some(ns) = managed_namespace(app, &targets, &lives) {
        let r = object_ref(&ns);
        targets.insert(key(&r), (r, Desired::Synthesized(ns)));
    }
    conditions.extend(targets.values().filter_map(|(r, _)| invalid_spec(r, input.scopes)));
    let pairs = PairsByKey::new(targets, lives);

    let normalizer = match AppNormalizer::new(
        &app.spec.ignore_differences,
        settings,
        input.ignore_rules,
        input.interrupt,
    ) {
        Ok(n) => n,
        Err(e) => {
            let every = pairs.map(|(t, l)| l.map_or_else(|| t.map(|(r, _)| r), |(r, _)| Some(r)));
            let mut out = failed(every.flatten(), hooks, conditions, notes, &e);
            out.unmanaged = unmanaged;
            out.objects_kept = input.keep_objects;
            return Ok(out);
        }
    };
    let ssd = server_side(input);
    let dry_runs = ObjectIndex::of_objects(input.dry_runs);
    let options = AppOptions::new(input.app.spec.sync_policy.sync_options.clone());
    let shared =
        Shared { input, normalizer: &normalizer, ssd, dry_runs: &dry_runs, app_options: &options };
    // Each pair is moved into its comparison, which makes its working copies of the objects
    // (no copy of an owned object) and drops them; the identity is moved into the answer.
    let compared = compare_each(pairs, |(t, l)| {
        let (tr, desired) = match t {
            Some((r, d)) => {
                let obj = d.into_object(&r, input);
                (Some(r), Some(obj))
            }
            None => (None, None),
        };
        let (lr, live) = l.unzip();
        // A pair has a side: `lr.or(tr)` is never `None`.
        let r = lr.or(tr).unwrap_or_default();
        shared.compare_pair(r, desired, live)
    });
    let mut resources = Vec::with_capacity(compared.len());
    let mut app_status = SyncStatus::Synced;
    let mut error = None;
    for c in compared {
        match c {
            Ok(mut c) => {
                if c.out_of_sync {
                    app_status = SyncStatus::OutOfSync;
                }
                unknown_if_not_permitted(input.project, &mut c.resource, input.scopes);
                resources.push(c.resource);
            }
            // The first failure in key order decides; every resource is still named.
            Err(failed) => {
                let (r, e) = *failed;
                error.get_or_insert(e);
                resources.push(unknown(r));
            }
        }
    }
    match error {
        // The host's backstop decides no verdict: the caller gets the stop and may retry.
        Some(e @ DiffError::Interrupted { .. }) => return Err(e),
        Some(e) => {
            let every = resources.into_iter().map(|r| r.object);
            let mut out = failed(every, hooks, conditions, notes, &e);
            out.unmanaged = unmanaged;
            out.objects_kept = input.keep_objects;
            return Ok(out);
        }
        None => {}
    }
    if changed_managed_namespace_metadata(app) {
        app_status = SyncStatus::OutOfSync;
    }
    hooks.sort();
    conditions.sort();
    notes.sort();
    Ok(AppDiff {
        sync_status: app_status,
        resources,
        hooks,
        conditions,
        notes,
        unmanaged,
        objects_kept: input.keep_objects,
    })
}

/// The app's live objects by identity, each with the identity it pairs by: lent by the input
/// or handed over ([`diff_app_owned`]).
type Lives<'a> = BTreeMap<Key, (ObjectRef, Cow<'a, Value>)>;

/// One key's desired object (with its identity) and live object (with the identity it
/// pairs by), either or both.
type Pair<'a> = (Option<(ObjectRef, Desired<'a>)>, Option<(ObjectRef, Cow<'a, Value>)>);

/// The targets and the live objects paired by key, in key order: the two sorted maps merged
/// (each key once, what the sorted, deduplicated union of their keys looked up in both
/// gives), their entries moved out one pair at a time (no list of the pairs is held beside
/// the objects: the peak memory of a large app is its objects once).
struct PairsByKey<'a> {
    targets:
        std::iter::Peekable<std::collections::btree_map::IntoIter<Key, (ObjectRef, Desired<'a>)>>,
    lives: std::iter::Peekable<
        std::collections::btree_map::IntoIter<Key, (ObjectRef, Cow<'a, Value>)>,
    >,
}

impl<'a> PairsByKey<'a> {
    fn new(targets: BTreeMap<Key, (ObjectRef, Desired<'a>)>, lives: Lives<'a>) -> Self {
        PairsByKey { targets: targets.into_iter().peekable(), lives: lives.into_iter().peekable() }
    }
}

impl<'a> Iterator for PairsByKey<'a> {
    type Item = Pair<'a>;

    fn next(&mut self) -> Option<Pair<'a>> {
        use std::cmp::Ordering;
        let order = match (self.targets.peek(), self.lives.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((a, _)), Some((b, _))) => a.cmp(b),
        };
        let target = if order.is_le() { self.targets.next().map(|(_, v)| v) } else { None };
        let live = if order.is_ge() { self.lives.next().map(|(_, v)| v) } else { None };
        Some((target, live))
    }
}

/// The desired side of a comparison: the targets by identity (destination namespace applied,
/// duplicates resolved, excluded kinds and hooks set aside), the hooks, and the conditions
/// the desired objects raise on their own.
pub(crate) struct Targets<'a> {
    pub(crate) map: BTreeMap<Key, (ObjectRef, Desired<'a>)>,
    pub(crate) hooks: Vec<ObjectRef>,
    pub(crate) conditions: Vec<Condition>,
    /// The identities of the desired objects set aside (repeated, ignored, deletion-only
    /// hooks): still desired when live objects are sorted (`managed_live` reads every
    /// desired object that is not excluded).
    pub(crate) set_aside: Vec<ObjectRef>,
}

/// Builds the [`Targets`] of an input (the first part of [`diff_app`]).
pub(crate) fn targets<'a>(input: &AppDiffInput<'a>) -> Targets<'a> {
    targets_of(input, Vec::new())
}

/// The [`Targets`] of the input's desired objects followed by `owned`, which the caller gives
/// away (the first part of [`diff_app_owned`]).
fn targets_of<'a>(input: &AppDiffInput<'a>, owned: Vec<Value>) -> Targets<'a> {
    let (app, settings) = (input.app, input.settings);
    let mut conditions = Vec::new();
    // Targets: identities with the destination namespace, de-duplication (last wins). The
    // objects stay as given (lent or owned); each gets its namespace and tracking on its own
    // working copy when its turn comes ([`Desired::into_object`]).
    let mut targets: BTreeMap<Key, (ObjectRef, Desired<'a>)> = BTreeMap::new();
    // Argo CD 3.6.2's `NormalizeTargetObjects` keys an unnamed object with a `generateName` by
    // that prefix and its position (`web-` third is `web-2`, which a named `web-2` of the same
    // kind repeats); an unnamed object is never paired with a live one. Each repeat key holds
    // how often it came and the target of its last object (one look-up per object).
    let mut slots: BTreeMap<String, (usize, Key)> = BTreeMap::new();
    let mut set_aside = Vec::new();
    let objects = input.desired.iter().map(Cow::Borrowed).chain(owned.into_iter().map(Cow::Owned));
    for (index, obj) in objects.enumerate() {
        let r = desired_ref(&obj, input.scopes, &app.spec.destination.namespace);
        let mut k = key(&r);
        let mut repeat_key = r.key();
        if r.name.is_empty() {
            k.3 = format!("\u{0}{index:08}");
            if let Some(prefix) = obj
                .pointer("/metadata/generateName")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
            {
                repeat_key = format!("{}/{}/{}/{prefix}{index}", r.group, r.kind, r.namespace);
            }
        }
        match slots.entry(repeat_key) {
            Entry::Vacant(v) => {
                v.insert((1, k.clone()));
            }
            Entry::Occupied(mut o) => {
                let (n, slot) = o.get_mut();
                *n += 1;
                let earlier = std::mem::replace(slot, k.clone());
                if let Some((r, _)) = targets.remove(&earlier) {
                    set_aside.push(r);
                }
            }
        }
        targets.insert(k, (r, Desired::Rendered(obj)));
    }
    for (k, (n, _)) in &slots {
        if *n > 1 {
            conditions.push(Condition {
                type_: "RepeatedResourceWarning".into(),
                message: format!("Resource {k} appeared {n} times among application resources."),
            });
        }
    }
    // Kinds the settings exclude are not synced or compared (Argo CD warns, hooks included).
    // An object the `resource.selectors` of its kind leave out stays, with a warning: it is
    // never watched, so it has no live state. It is matched with the instance label it gets
    // (label tracking), as Argo CD checks after `SetAppInstance`.
    let instance = app.instance_name(settings);
    let label = Some(instance.as_str()).filter(|i| !i.is_empty());
    let label = label.and_then(|i| instance_label(i, settings));
    targets.retain(|_, (r, obj)| {
        if !crate::ownership::excluded(r, app, settings) {
            let cluster = &app.spec.destination.server;
            if let Some(selector) = settings.unwatched_labelled(obj.source(), cluster, label) {
                conditions.push(Condition {
                    type_: "ExcludedResourceWarning".into(),
                    message: format!(
                        "Resource {}/{} {} does not match the resource selector {selector:?} in \
                         the settings and will not be watched; it will appear as OutOfSync",
                        r.group, r.kind, r.name
                    ),
                });
            }
            return true;
        }
        conditions.push(Condition {
            type_: "ExcludedResourceWarning".into(),
            message: format!(
                "Resource {}/{} {} is excluded in the settings",
                r.group, r.kind, r.name
            ),
        });
        false
    });
    // Hooks are set aside; objects with a hook annotation but no valid type are dropped.
    let mut hooks = Vec::new();
    targets.retain(|_, (r, obj)| {
        let obj = obj.source();
        // The hook functions all read a hook annotation: the usual object has none.
        if !vocabulary::has_hook_annotation(obj) {
            return true;
        }
        if vocabulary::is_ignored(obj) || vocabulary::is_deletion_hook_only(obj) {
            set_aside.push(std::mem::take(r));
            return false;
        }
        if vocabulary::is_hook(obj) {
            hooks.push(r.clone());
            return false;
        }
        true
    });

    Targets { map: targets, hooks, conditions, set_aside }
}

/// Argo CD's `SharedResourceWarning` for a live object of the app whose tracking names
/// another app: it is desired here and compared, with the warning.
pub(crate) fn shared_warning(
    app: &Application,
    settings: &Settings,
    instance: &str,
    r: &ObjectRef,
    obj: &Value,
) -> Option<Condition> {
    let owner = settings.tracked_app(obj)?;
    if instance.is_empty() || owner == instance {
        return None;
    }
    let app_name = app.metadata.name.as_str();
    let qualified = if app.metadata.namespace.is_empty() {
        app_name.to_string()
    } else {
        format!("{}/{app_name}", app.metadata.namespace)
    };
    Some(Condition {
        type_: "SharedResourceWarning".into(),
        message: format!(
            "{}/{} is part of applications {qualified} and {}",
            r.kind,
            r.name,
            owner.replace('_', "/")
        ),
    })
}

/// Argo CD's `InvalidSpecError` for a target of a namespaced kind left without a namespace.
pub(crate) fn invalid_spec(r: &ObjectRef, scopes: &Scopes) -> Option<Condition> {
    (r.namespace.is_empty()
        && scopes.scope(&r.group, &r.kind) == Some(crate::object::Scope::Namespaced))
    .then(|| Condition {
        type_: "InvalidSpecError".into(),
        message: format!(
            "Namespace for {} {}/{}, Kind={} is missing.",
            r.name, r.group, r.version, r.kind
        ),
    })
}

/// Argo CD 3.6 (`shouldUseServerSideDiff`): server-side diff when the host asks or the app
/// does, also for an app that syncs with server-side apply (structured-merge diff is
/// discontinued), unless the app turns it off.
pub(crate) fn server_side(input: &AppDiffInput<'_>) -> bool {
    let app = input.app;
    (input.server_side_diff
        || app.has_compare_option("ServerSideDiff=true")
        || AppOptions::new(app.spec.sync_policy.sync_options.clone()).server_side_apply())
        && !app.has_compare_option("ServerSideDiff=false")
}

/// A resource whose comparison failed: `Unknown`, nothing else known.
pub(crate) fn unknown(object: ObjectRef) -> ResourceDiff {
    ResourceDiff {
        object,
        status: Some(SyncStatus::Unknown),
        modified: false,
        requires_pruning: false,
        requires_deletion_confirmation: false,
        hook: false,
        diff: Vec::new(),
        normalized_live: Value::Null,
        predicted_live: Value::Null,
        mode: None,
        message: String::new(),
        respected_target: None,
    }
}

/// The `ComparisonError` condition of a comparison that failed.
pub(crate) fn comparison_error(err: &DiffError) -> Condition {
    Condition {
        type_: "ComparisonError".into(),
        message: format!("Failed to compare desired state to live state: {err}"),
    }
}

/// The identity a resource is paired by: group, kind, namespace, name.
pub(crate) type Key = (String, String, String, String);

/// A desired object until its comparison: rendered (lent by the input or handed over; its
/// working copy gets the destination namespace and the app's tracking), or synthesized by the
/// comparison (the managed namespace).
#[derive(Debug)]
pub(crate) enum Desired<'a> {
    Rendered(Cow<'a, Value>),
    Synthesized(Value),
}

impl Desired<'_> {
    /// The object as given (hook and sync-option annotations read the same on both).
    pub(crate) fn source(&self) -> &Value {
        match self {
            Desired::Rendered(v) => v,
            Desired::Synthesized(v) => v,
        }
    }

    /// The working copy of the desired object: namespace defaulting and tracking applied
    /// (a copy of it; [`Desired::into_object`] makes none of an owned object).
    pub(crate) fn object(&self, r: &ObjectRef, input: &AppDiffInput<'_>) -> Value {
        match self {
            Desired::Rendered(v) => tracked(v.as_ref().clone(), r, input),
            Desired::Synthesized(v) => v.clone(),
        }
    }

    /// [`Desired::object`], made of the object itself when it is owned.
    pub(crate) fn into_object(self, r: &ObjectRef, input: &AppDiffInput<'_>) -> Value {
        match self {
            Desired::Rendered(v) => tracked(v.into_owned(), r, input),
            Desired::Synthesized(v) => v,
        }
    }
}

/// A rendered desired object (`r`) with the destination namespace (namespaced kinds) and the
/// app's tracking.
fn tracked(mut obj: Value, r: &ObjectRef, input: &AppDiffInput<'_>) -> Value {
    let app = input.app;
    input.scopes.default_namespace(&mut obj, &app.spec.destination.namespace);
    let instance = app.instance_name(input.settings);
    if !instance.is_empty() {
        let namespace = &app.spec.destination.namespace;
        set_tracking(&mut obj, &instance, r, namespace, input.settings);
    }
    obj
}

/// One resource's comparison, and whether it makes the app out of sync.
#[derive(Debug)]
pub(crate) struct Compared {
    pub(crate) resource: ResourceDiff,
    pub(crate) out_of_sync: bool,
}

/// What every resource's comparison shares: the input, the app's ignore rules, the mode.
pub(crate) struct Shared<'s, 'a> {
    pub(crate) input: &'s AppDiffInput<'a>,
    pub(crate) normalizer: &'s AppNormalizer<'a>,
    pub(crate) ssd: bool,
    /// The index of `input.dry_runs`.
    pub(crate) dry_runs: &'s ObjectIndex<'a>,
    /// The app's sync options.
    pub(crate) app_options: &'s AppOptions,
}

/// Compares every pair, moved in, in order: one after the other, or (feature `parallel`)
/// spread over threads. The results come back in the order of the pairs either way, so the
/// output is the same bytes.
#[cfg(not(feature = "parallel"))]
fn compare_each<P, T>(pairs: impl Iterator<Item = P>, f: impl Fn(P) -> T) -> Vec<T> {
    pairs.map(f).collect()
}

/// Compares every pair, moved in, in order: one after the other, or (feature `parallel`)
/// spread over threads. The results come back in the order of the pairs either way, so the
/// output is the same bytes.
#[cfg(feature = "parallel")]
fn compare_each<P: Send, T: Send>(
    pairs: impl Iterator<Item = P>,
    f: impl Fn(P) -> T + Sync + Send,
) -> Vec<T> {
    use rayon::prelude::*;
    pairs.collect::<Vec<P>>().into_par_iter().map(f).collect()
}

impl Shared<'_, '_> {
    /// Compares one resource from lent objects: its desired object (`target`), its live
    /// object, or both ([`Shared::compare_pair`] on a working copy of desired).
    pub(crate) fn compare(
        &self,
        target: Option<&(ObjectRef, Desired<'_>)>,
        live: Option<&(ObjectRef, &Value)>,
    ) -> Result<Option<Compared>, DiffError> {
        let r = match (live, target) {
            (Some((r, _)), _) | (None, Some((r, _))) => r.clone(),
            (None, None) => return Ok(None),
        };
        let desired = target.map(|(r, d)| d.object(r, self.input));
        let live = live.map(|(_, v)| Cow::Borrowed(*v));
        self.compare_pair(r, desired, live).map(Some).map_err(|failed| failed.1)
    }

    /// Compares one resource, `r` (live's identity when it has a live object, else
    /// desired's): the working copy of its desired object ([`Desired::object`]), its live
    /// object (lent or handed over: an owned one becomes the working copy of live), or both.
    /// The comparison takes both objects; a failed one gives `r` back with the error.
    pub(crate) fn compare_pair(
        &self,
        r: ObjectRef,
        desired: Option<Value>,
        live: Option<Cow<'_, Value>>,
    ) -> Result<Compared, Box<(ObjectRef, DiffError)>> {
        match self.compare_objects(&r, desired, live) {
            Ok(mut c) => {
                c.resource.object = r;
                Ok(c)
            }
            Err(e) => Err(Box::new((r, e))),
        }
    }

    /// [`Shared::compare_pair`] but for the identity, which the caller puts into the
    /// resource (left empty here).
    fn compare_objects(
        &self,
        r: &ObjectRef,
        desired: Option<Value>,
        live: Option<Cow<'_, Value>>,
    ) -> Result<Compared, DiffError> {
        let Shared { input, normalizer, ssd, dry_runs, app_options } = *self;
        let (app, settings) = (input.app, input.settings);
        let base = DiffOptions {
            ignore_aggregated_roles: settings.ignore_aggregated_roles,
            server_side_diff: ssd,
            ignore_mutation_webhook: !app.has_compare_option("IncludeMutationWebhook=true"),
            openapi: input.openapi,
            ..DiffOptions::default()
        }
        .with_normalizer(normalizer);
        // `desired`, the working copy of the desired object, is dropped with this comparison.
        let live_obj = live.as_deref();
        // What the status and message read of the objects, before the comparison takes them.
        let Some(obj) = live_obj.or(desired.as_ref()) else { return Err(DiffError::BothAbsent) };
        // Argo CD 3.6's `isSelfReferencedObj`: a paired object's id is built from the desired
        // object, which names the live one it pairs with (an id an older API group or another
        // object left on the live copy does not matter); a live-only object is read by its
        // own tracking id.
        let self_ref =
            desired.is_some() || live_obj.is_none_or(|lv| self_referenced(lv, r, settings));
        // The hook functions all read a hook annotation: the usual object has none.
        let hooky = vocabulary::has_hook_annotation(obj);
        let hook = hooky && vocabulary::is_app_hook(obj);
        let no_status = hook
            || (hooky && vocabulary::is_ignored(obj))
            || (hooky && desired.is_some() && vocabulary::is_skip(obj))
            || !self_ref;
        // `Prune=false` resolved as a sync resolves it for the prune of this live object.
        let prune_false = vocabulary::prune_disabled(&ResourceOptions::of(obj), app_options);
        let ignore_extraneous =
            vocabulary::has_annotation_option(obj, COMPARE_OPTIONS_ANNOTATION, "IgnoreExtraneous");
        // `Delete=confirm` (or `Prune=confirm`) on the desired or the live object.
        // `isObjRequiresDeletionConfirmation` of each, the app's options as the default.
        let confirm = |o: Option<&Value>| {
            o.is_some_and(|o| {
                vocabulary::requires_deletion_confirmation(&ResourceOptions::of(o), app_options)
            })
        };
        let requires_deletion_confirmation = confirm(desired.as_ref()) || confirm(live_obj);
        let managed_ns = is_managed_namespace(desired.as_ref(), app);
        let (has_target, has_live) = (desired.is_some(), live_obj.is_some());
        // The rule the desired object declares for itself; a live-only annotation is not
        // read (whoever can edit the cluster could otherwise hide drift from Git).
        let own = match &desired {
            Some(d) => normalizer.ignore.annotation_rule(d, input.ignore_annotation)?,
            None => None,
        };

        // Copies of lent live only when the pre-diff normalisations may change it.
        let mut t = desired.map(Cow::Owned);
        let mut l = live;
        if let (Some(t), Some(l)) = (&t, &mut l)
            && tracking_change(t, l, settings).is_some()
        {
            normalize_tracking(t, l.to_mut(), settings);
        }
        if let (Some(t), Some(l)) = (&mut t, &mut l) {
            let managers = normalizer.ignore.managers(r, own.as_ref());
            if !managers.is_empty() {
                normalize_managed_fields(l.to_mut(), t.to_mut(), &managers);
            }
        }
        let dry_run = dry_runs.first(r).map(|i| &input.dry_runs[i]);
        let resource_normalizer = normalizer.for_resource(own.as_ref());
        let opts = DiffOptions { dry_run, normalizer: Some(&resource_normalizer), ..base };
        // A masked Secret is compared again from its masked sides below, so it lends its
        // objects; anything else hands them over as the working copies of the comparison.
        let secret = super::is_secret(&r.group, &r.kind) && !input.reveal_secrets;
        let result = if secret {
            let (tb, lb) = (t.as_deref().map(Cow::Borrowed), l.as_deref().map(Cow::Borrowed));
            diff_objects(tb, lb, &opts, Keep::Objects)?
        } else {
            let kept = if input.keep_objects {
                Keep::Objects
            } else if normalizer
                .ignore
                .may_read_managed_fields(Some((&r.group, &r.kind)), own.as_ref())
            {
                Keep::Patch
            } else {
                Keep::PatchUnread
            };
            diff_objects(t.take(), l.take(), &opts, kept)?
        };
        // A jq rule a limit stopped was not applied: the comparison cannot stand.
        if let Some(e) = resource_normalizer.take_limit() {
            return Err(e);
        }
        let requires_pruning = !has_target && has_live && self_ref;
        let mut out_of_sync = false;
        let status = if no_status {
            None
        } else if (!managed_ns || has_live) && (result.modified || !has_target || !has_live) {
            if !(requires_pruning && ignore_extraneous) {
                out_of_sync = true;
            }
            Some(SyncStatus::OutOfSync)
        } else {
            Some(SyncStatus::Synced)
        };
        let message = if !self_ref {
            "the tracking id names another resource".to_string()
        } else if requires_pruning && prune_false {
            "requires pruning; Prune=false: a sync skips it".to_string()
        } else if requires_pruning {
            "requires pruning".to_string()
        } else {
            String::new()
        };
        let (modified, mode) = (result.modified, result.mode);
        let shown = if secret {
            masked(t.as_deref(), l.as_deref(), &result, &opts, settings, input.keep_objects)
        } else {
            result
        };
        let (normalized_live, predicted_live) = if input.keep_objects {
            (shown.normalized_live, shown.predicted_live)
        } else {
            (Value::Null, Value::Null)
        };
        let resource = ResourceDiff {
            // Set by `compare_pair`, which owns it.
            object: ObjectRef::default(),
            status,
            modified,
            requires_pruning,
            requires_deletion_confirmation,
            hook,
            diff: shown.patch,
            normalized_live,
            predicted_live,
            mode: Some(mode),
            message,
            respected_target: None,
        };
        Ok(Compared { resource, out_of_sync })
    }
}

/// `HasChangedManagedNamespaceMetadata`: the spec's `managedNamespaceMetadata` differs from
/// what the last sync applied (`status.operationState.syncResult.managedNamespaceMetadata`).
pub(crate) fn changed_managed_namespace_metadata(app: &Application) -> bool {
    let Some(spec) = &app.spec.sync_policy.managed_namespace_metadata else { return false };
    let Some(result) = app.status.pointer("/operationState/syncResult").filter(|v| v.is_object())
    else {
        return false;
    };
    match result.get("managedNamespaceMetadata") {
        None | Some(Value::Null) => true,
        Some(v) => serde_json::from_value::<crate::config::ManagedNamespaceMetadata>(v.clone())
            .map_or(true, |applied| &applied != spec),
    }
}

/// The displayed result of a Secret: in server-side mode the result pair is masked; otherwise
/// the diff is recomputed from the masked target and live, as Argo CD's controller does.
fn masked(
    target: Option<&Value>,
    live: Option<&Value>,
    result: &DiffResult,
    opts: &DiffOptions<'_>,
    settings: &Settings,
    keep: bool,
) -> DiffResult {
    let hide = &settings.sensitive_mask_annotations;
    if result.mode == DiffMode::ServerSide {
        let (p, n) = hide_secret_data(
            Some(&result.predicted_live).filter(|v| !v.is_null()),
            Some(&result.normalized_live).filter(|v| !v.is_null()),
            hide,
        );
        return super::compare::finish(
            n.unwrap_or(Value::Null),
            p.unwrap_or(Value::Null),
            result.mode,
        );
    }
    let (mt, ml) = hide_secret_data(target, live, hide);
    let opts = DiffOptions { server_side_diff: false, ..*opts };
    let kept = if keep { Keep::Objects } else { Keep::Patch };
    match diff_objects(mt.map(Cow::Owned), ml.map(Cow::Owned), &opts, kept) {
        Ok(mut r) => {
            // The status comes from the unmasked diff; keep the masked outputs only.
            r.modified = result.modified;
            r
        }
        // Fail closed: show nothing of the Secret rather than its values.
        Err(_) => DiffResult {
            modified: result.modified,
            normalized_live: Value::Null,
            predicted_live: Value::Null,
            patch: Vec::new(),
            mode: result.mode,
        },
    }
}

/// Whether an object is the app's destination namespace with `managedNamespaceMetadata`.
fn is_managed_namespace(obj: Option<&Value>, app: &Application) -> bool {
    obj.is_some_and(|o| {
        o.get("kind").and_then(Value::as_str) == Some("Namespace")
            && o.pointer("/metadata/name").and_then(Value::as_str)
                == Some(app.spec.destination.namespace.as_str())
            && app.spec.sync_policy.managed_namespace_metadata.is_some()
    })
}

/// Argo CD's `addManagedNamespaces`: a live destination namespace with
/// `managedNamespaceMetadata` and no desired Namespace gets a synthesized desired one (its
/// labels and annotations from the metadata, the live sync options kept), so it is compared
/// instead of pruned.
fn managed_namespace(
    app: &Application,
    targets: &BTreeMap<Key, (ObjectRef, Desired<'_>)>,
    lives: &Lives<'_>,
) -> Option<Value> {
    let k = managed_namespace_key(app)?;
    if targets.contains_key(&k) {
        return None;
    }
    let (_, live) = lives.get(&k)?;
    synthesized_namespace(app, live)
}

/// The identity of the destination namespace when the app has `managedNamespaceMetadata`.
pub(crate) fn managed_namespace_key(app: &Application) -> Option<Key> {
    app.spec.sync_policy.managed_namespace_metadata.as_ref()?;
    let ns = app.spec.destination.namespace.as_str();
    Some((String::new(), "Namespace".to_string(), String::new(), ns.to_string()))
}

/// The desired Namespace [`managed_namespace`] synthesizes from the live one.
pub(crate) fn synthesized_namespace(app: &Application, live: &Value) -> Option<Value> {
    let meta = app.spec.sync_policy.managed_namespace_metadata.as_ref()?;
    let ns = app.spec.destination.namespace.as_str();
    let mut obj = serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns}});
    if !meta.labels.is_empty() {
        obj["metadata"]["labels"] = serde_json::to_value(&meta.labels).ok()?;
    }
    let mut annotations = meta.annotations.clone();
    if let Some(v) = annotation(live, SYNC_OPTIONS_ANNOTATION) {
        annotations.insert(SYNC_OPTIONS_ANNOTATION.to_string(), v.to_string());
    }
    if !annotations.is_empty() {
        obj["metadata"]["annotations"] = serde_json::to_value(&annotations).ok()?;
    }
    Some(obj)
}

/// Argo CD's `SetAppInstance` on a desired object's working copy: the tracking id (and the
/// installation id, or none) for the annotation methods, the instance label for the label
/// methods (cut to 63 characters with `annotation+label`, whose label is not read back).
fn set_tracking(
    obj: &mut Value,
    instance: &str,
    r: &ObjectRef,
    destination_namespace: &str,
    settings: &Settings,
) {
    let method = settings.tracking_method;
    if matches!(method, TrackingMethod::Annotation | TrackingMethod::AnnotationAndLabel) {
        if settings.installation_id.is_empty() {
            if let Some(a) = obj.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut)
            {
                a.remove(INSTALLATION_ID_ANNOTATION);
            }
        } else {
            set_annotation(obj, INSTALLATION_ID_ANNOTATION, settings.installation_id.clone());
        }
        set_annotation(
            obj,
            TRACKING_ID_ANNOTATION,
            tracking_id(instance, r, destination_namespace),
        );
    }
    if let Some(value) = instance_label(instance, settings)
        && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
    {
        let labels = meta.entry("labels").or_insert_with(|| Value::Object(Default::default()));
        if let Some(l) = labels.as_object_mut() {
            l.insert(settings.instance_label_key.clone(), Value::String(value.to_string()));
        }
    }
}

/// A resource whose kind the app's project does not permit has sync status `Unknown`
/// (`CompareAppState`, `IsGroupKindNamePermitted`).
pub(crate) fn unknown_if_not_permitted(
    project: Option<&crate::project::AppProject>,
    resource: &mut ResourceDiff,
    scopes: &Scopes,
) {
    let r = &resource.object;
    let namespaced = !scopes.is_cluster_scoped(&r.group, &r.kind);
    if project.is_some_and(|p| !p.permits_kind(&r.group, &r.kind, &r.name, namespaced)) {
        resource.status = Some(SyncStatus::Unknown);
    }
}

/// Why the app's project leaves a live object of the app out of the comparison (Argo CD's
/// `IsLiveResourcePermitted`), if it does.
pub(crate) fn not_permitted(
    project: Option<&crate::project::AppProject>,
    r: &ObjectRef,
    app: &Application,
) -> Option<crate::ownership::Unclaimed> {
    let p = project?;
    (!p.permits_resource(&r.group, &r.kind, &r.name, &r.namespace, app))
        .then(|| crate::ownership::Unclaimed::NotPermitted { project: p.name.clone() })
}

/// The instance label value `SetAppInstance` gives a desired object: the instance name with
/// `label`, cut to 63 characters with `annotation+label`, none with `annotation`.
fn instance_label<'i>(instance: &'i str, settings: &Settings) -> Option<&'i str> {
    match settings.tracking_method {
        TrackingMethod::Label => Some(instance),
        TrackingMethod::AnnotationAndLabel => truncate_label(instance),
        TrackingMethod::Annotation => None,
    }
}

pub(crate) fn key(r: &ObjectRef) -> (String, String, String, String) {
    (r.group.clone(), r.kind.clone(), r.namespace.clone(), r.name.clone())
}

/// `failedToLoadObjs`: every resource (`every`, in key order) and the app are `Unknown`, with
/// the condition.
fn failed(
    every: impl Iterator<Item = ObjectRef>,
    mut hooks: Vec<ObjectRef>,
    mut conditions: Vec<Condition>,
    mut notes: Vec<String>,
    err: &DiffError,
) -> AppDiff {
    conditions.push(comparison_error(err));
    let resources = every.map(unknown).collect();
    hooks.sort();
    conditions.sort();
    notes.sort();
    AppDiff {
        sync_status: SyncStatus::Unknown,
        resources,
        hooks,
        conditions,
        notes,
        unmanaged: Vec::new(),
        objects_kept: false,
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{Desired, Key, Lives, PairsByKey};
    use crate::object::ObjectRef;

    fn keys() -> impl Strategy<Value = Vec<Key>> {
        let part = || prop_oneof![Just(String::new()), "[ab]{1,2}"];
        prop::collection::vec((part(), part(), part(), part()), 0..12)
    }

    proptest! {
        /// The merge of the two sorted maps pairs what the sorted, deduplicated union of
        /// their keys, each looked up in both maps, pairs, in that order.
        #[test]
        fn pairs_are_the_union_looked_up(t in keys(), l in keys()) {
            let at = |n: usize| ObjectRef { name: n.to_string(), ..ObjectRef::default() };
            let targets: BTreeMap<Key, (ObjectRef, Desired<'_>)> = (t.iter().cloned().zip(0..))
                .map(|(k, n)| (k, (at(n), Desired::Synthesized(json!(n)))))
                .collect();
            let lives: Lives<'_> = (l.iter().cloned().zip(100..))
                .map(|(k, n)| (k, (at(n), Cow::Owned(json!(n)))))
                .collect();
            let mut union: Vec<&Key> = targets.keys().chain(lives.keys()).collect();
            union.sort();
            union.dedup();
            let name = |r: &ObjectRef| r.name.clone();
            let general: Vec<_> = union
                .iter()
                .map(|k| {
                    let (t, l) = (targets.get(*k), lives.get(*k));
                    let sides = (t.map(|(r, _)| name(r)), l.map(|(r, _)| name(r)));
                    (sides, (t.map(|(_, d)| d.source().clone()), l.map(|(_, v)| v.as_ref().clone())))
                })
                .collect();
            let merged: Vec<_> = PairsByKey::new(targets, lives)
                .map(|(t, l)| {
                    let (tr, d) = t.unzip();
                    let (lr, v) = l.unzip();
                    let objects = (d.map(|d| d.source().clone()), v.map(Cow::into_owned));
                    ((tr.as_ref().map(name), lr.as_ref().map(name)), objects)
                })
                .collect::<Vec<(_, (Option<Value>, Option<Value>))>>();
            prop_assert_eq!(merged, general);
        }
    }
}
