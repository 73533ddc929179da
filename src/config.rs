//! Configuration as Argo CD users write it: the `Application` resource and the `argocd-cm`
//! ConfigMap, read from data the host passes in.
//!
//! [`Application`] keeps the parts of an Argo CD Application the engine reads (destination,
//! `ignoreDifferences`, `syncPolicy`, annotations and the raw `status`). [`Settings`] is what
//! `argocd-cm` says about resources: per-kind overrides ([`ResourceOverride`]: health scripts,
//! `ignoreDifferences`, `knownTypeFields`), compare options, the tracking method and the
//! annotations to mask.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::object::type_name;
use crate::vocabulary::{COMPARE_OPTIONS_ANNOTATION, DEFAULT_INSTANCE_LABEL, csv};

/// kubectl's last-applied-configuration annotation.
pub(crate) const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// An Argo CD `Application`, as far as the engine reads it.
///
/// Unknown fields are ignored, so a whole Application manifest (or one with its `status`, as
/// `kubectl get -o yaml` gives it) deserializes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Application {
    /// `metadata`: name, namespace, annotations.
    pub metadata: AppMetadata,
    /// `spec`.
    pub spec: ApplicationSpec,
    /// `status`, kept as data: `sync`, `health`, `operationState`, `history`, `conditions`.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub status: Value,
    /// `operation`, when one is requested.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub operation: Value,
}

/// The metadata of an Application.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct AppMetadata {
    /// Application name.
    pub name: String,
    /// Namespace the Application lives in (usually `argocd`).
    pub namespace: String,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Deletion timestamp, RFC 3339, when the Application is being deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// Finalizers (`resources-finalizer.argocd.argoproj.io[/background]`, the pre- and
    /// post-delete ones), which drive the deletion ([`crate::sync::DeletionRequest::step`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
}

/// The spec of an Application.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ApplicationSpec {
    /// The AppProject name.
    pub project: String,
    /// Where the app is deployed.
    pub destination: Destination,
    /// `ignoreDifferences` rules.
    pub ignore_differences: Vec<IgnoreDifferences>,
    /// `syncPolicy`.
    pub sync_policy: SyncPolicy,
    /// `source` (single-source apps), kept as data; compared with the last sync's source.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub source: Value,
    /// `sources` (multi-source apps), kept as data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Value>,
}

/// The destination of an Application.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Destination {
    /// Cluster API URL.
    pub server: String,
    /// Cluster name.
    pub name: String,
    /// Default namespace for namespaced objects without one.
    pub namespace: String,
}

/// One `ignoreDifferences` rule of an Application (or, without name and namespace, of
/// `argocd-cm`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct IgnoreDifferences {
    /// API group glob; `""` is the core group.
    pub group: String,
    /// Kind glob.
    pub kind: String,
    /// Exact name; `""` matches any.
    pub name: String,
    /// Exact namespace; `""` matches any.
    pub namespace: String,
    /// RFC 6901 pointers to remove before comparing.
    pub json_pointers: Vec<String>,
    /// jq path expressions to delete before comparing.
    pub jq_path_expressions: Vec<String>,
    /// Field managers whose fields are not compared.
    pub managed_fields_managers: Vec<String>,
}

impl IgnoreDifferences {
    /// Whether the rule removes nothing.
    pub fn is_empty(&self) -> bool {
        self.json_pointers.is_empty()
            && self.jq_path_expressions.is_empty()
            && self.managed_fields_managers.is_empty()
    }
}

/// `spec.syncPolicy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SyncPolicy {
    /// Automated sync, when enabled.
    pub automated: Option<Automated>,
    /// App-level sync options, e.g. `CreateNamespace=true`.
    pub sync_options: Vec<String>,
    /// Retry strategy.
    pub retry: Option<RetryStrategy>,
    /// Labels and annotations for a namespace created by `CreateNamespace=true`.
    pub managed_namespace_metadata: Option<ManagedNamespaceMetadata>,
}

impl SyncPolicy {
    /// Whether an app-level option is set (exact match of a whole item, as Argo CD's
    /// `HasOption`).
    pub fn has_option(&self, option: &str) -> bool {
        self.sync_options.iter().any(|o| o == option)
    }
}

/// `syncPolicy.automated`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Automated {
    /// Delete resources no longer in Git.
    pub prune: bool,
    /// Sync when the live state drifts.
    pub self_heal: bool,
    /// Allow a sync that leaves the app with no resources.
    pub allow_empty: bool,
    /// `enabled: false` turns automation off while keeping the block.
    pub enabled: Option<bool>,
}

/// `syncPolicy.retry`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct RetryStrategy {
    /// Retries; negative is unlimited; unset is 0 (5 for auto-sync).
    pub limit: Option<i64>,
    /// Backoff between retries.
    pub backoff: Option<Backoff>,
    /// Retry with the latest revision instead of the one that failed.
    pub refresh: bool,
}

/// `syncPolicy.retry.backoff`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Backoff {
    /// First delay: a Go duration (`5s`, `2m`) or plain seconds.
    pub duration: Option<String>,
    /// Multiplier per retry.
    pub factor: Option<i64>,
    /// Largest delay.
    pub max_duration: Option<String>,
}

/// `syncPolicy.managedNamespaceMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ManagedNamespaceMetadata {
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
}

/// An error reading configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The Application does not have the expected shape.
    #[error("invalid application at {path}: {message}")]
    Application {
        /// RFC 6901 pointer into the Application.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The AppProject does not have the expected shape.
    #[error("invalid AppProject `{project}` at {path}: {message}")]
    Project {
        /// The project's name.
        project: String,
        /// RFC 6901 pointer into the AppProject.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A cluster (an Argo CD cluster Secret, or its `name`, `server` and `project`) could not
    /// be read.
    #[error("invalid cluster `{cluster}` at {path}: {message}")]
    Cluster {
        /// The cluster's name (the Secret's `metadata.name` until its data is read).
        cluster: String,
        /// RFC 6901 pointer into the document.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A key of `argocd-cm` could not be read.
    #[error("invalid argocd-cm key `{key}`: {message}")]
    Key {
        /// The ConfigMap data key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The document is not of the kind the reader takes (an Application given for argocd-cm,
    /// a Deployment for an Application).
    #[error("expected kind {expected}, found kind {found}")]
    Kind {
        /// The kind the reader takes.
        expected: &'static str,
        /// The document's `kind`.
        found: String,
    },
    /// The ConfigMap itself has the wrong shape.
    #[error("invalid argocd-cm at {path}: expected {expected}, found {found}")]
    Shape {
        /// RFC 6901 pointer into the ConfigMap.
        path: String,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: &'static str,
    },
}

impl Application {
    /// Reads an Application from its JSON form.
    ///
    /// # Examples
    ///
    /// ```
    /// let app = gitops_core::config::Application::from_value(&serde_json::json!({
    ///     "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
    ///     "metadata": {"name": "bookstore"},
    ///     "spec": {"destination": {"namespace": "bookstore"},
    ///              "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}
    /// })).unwrap();
    /// assert_eq!(app.spec.destination.namespace, "bookstore");
    /// assert!(app.spec.sync_policy.has_option("CreateNamespace=true"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConfigError::Kind`] for a document whose `kind` is set to anything but `Application`
    /// (a document without `kind` is read as an Application); [`ConfigError::Application`]
    /// for one without an Application's shape.
    pub fn from_value(value: &Value) -> Result<Application, ConfigError> {
        check_kind(value, "Application")?;
        Application::deserialize(value)
            .map_err(|e| ConfigError::Application { path: String::new(), message: e.to_string() })
    }

    /// The app's compare options (annotation `argocd.argoproj.io/compare-options`), trimmed.
    pub fn compare_options(&self) -> Vec<&str> {
        self.metadata
            .annotations
            .get(COMPARE_OPTIONS_ANNOTATION)
            .map(|v| csv(v))
            .unwrap_or_default()
    }

    /// Whether the compare options hold `option` (e.g. `ServerSideDiff=true`).
    pub fn has_compare_option(&self, option: &str) -> bool {
        self.compare_options().contains(&option)
    }
}

/// Refuses a document whose `kind` is set and is not `expected` (a document without `kind`
/// passes: a fragment written for the reader).
pub(crate) fn check_kind(doc: &Value, expected: &'static str) -> Result<(), ConfigError> {
    match doc.get("kind") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(k)) if k == expected => Ok(()),
        Some(Value::String(k)) => Err(ConfigError::Kind { expected, found: k.clone() }),
        Some(other) => Err(ConfigError::Kind { expected, found: other.to_string() }),
    }
}

/// How Argo CD tracks which objects belong to an app (`application.resourceTrackingMethod`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TrackingMethod {
    /// The app-instance label.
    Label,
    /// The `argocd.argoproj.io/tracking-id` annotation (the default since Argo CD 3.0).
    #[default]
    Annotation,
    /// Both the annotation and the label.
    AnnotationAndLabel,
}

/// What `resource.compareoptions.ignoreResourceStatusField` selects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StatusFieldMode {
    /// `/status` is ignored on every kind (the default, also `all` and `""`).
    #[default]
    All,
    /// Only on `CustomResourceDefinition` objects.
    Crd,
    /// Never (`none`, `off`, `false`).
    None,
}

/// `knownTypeFields` entry: a field path and the Kubernetes type it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct KnownTypeField {
    /// Dotted field path, e.g. `spec.template.spec`.
    pub field: String,
    /// Type name, e.g. `core/v1/PodSpec`, `core/Quantity`, `meta/v1/Duration`.
    #[serde(rename = "type")]
    pub type_: String,
}

/// The `ignoreDifferences` of a system-level override (no name or namespace).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct OverrideIgnoreDiff {
    /// RFC 6901 pointers.
    pub json_pointers: Vec<String>,
    /// jq path expressions.
    pub jq_path_expressions: Vec<String>,
    /// Field managers.
    pub managed_fields_managers: Vec<String>,
}

/// What `argocd-cm` says about one kind (or a glob of kinds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ResourceOverride {
    /// `health.lua`: a Lua health script.
    pub health_lua: String,
    /// `health.lua.useOpenLibs`.
    pub use_open_libs: bool,
    /// `actions`: resource actions (`discovery.lua`, `definitions`, `mergeBuiltinActions`);
    /// `None` when the key is absent or empty, as Argo CD treats an empty `actions` text.
    pub actions: Option<ResourceActions>,
    /// `ignoreDifferences`.
    pub ignore_differences: OverrideIgnoreDiff,
    /// `ignoreResourceUpdates`.
    pub ignore_resource_updates: OverrideIgnoreDiff,
    /// `knownTypeFields`.
    pub known_type_fields: Vec<KnownTypeField>,
}

/// The `actions` of an `argocd-cm` override (Argo CD's `ResourceActions`).
///
/// # Examples
///
/// ```
/// let cm = serde_json::json!({"data": {
///     "resource.customizations.actions.apps_Deployment":
///         "discovery.lua: return {}\nmergeBuiltinActions: true\ndefinitions:\n- name: noop\n  action.lua: return obj\n"
/// }});
/// let s = gitops_core::config::Settings::from_config_map(&cm).unwrap();
/// let a = s.overrides["apps/Deployment"].actions.as_ref().unwrap();
/// assert!(a.merge_builtin_actions);
/// assert_eq!((a.definitions[0].name.as_str(), a.definitions[0].action_lua.as_str()), ("noop", "return obj"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ResourceActions {
    /// `discovery.lua`: returns the actions an object offers.
    #[serde(rename = "discovery.lua")]
    pub discovery_lua: String,
    /// `definitions`: one script per action.
    pub definitions: Vec<ActionDefinition>,
    /// `mergeBuiltinActions`: also offer the built-in actions of the kind (the override's
    /// win where both name one).
    #[serde(rename = "mergeBuiltinActions")]
    pub merge_builtin_actions: bool,
}

/// One entry of `definitions`: an action's name and its script.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ActionDefinition {
    /// The action's name.
    pub name: String,
    /// `action.lua`: the script.
    #[serde(rename = "action.lua")]
    pub action_lua: String,
}

/// Resource settings from `argocd-cm`.
///
/// Overrides are keyed by `group/Kind`, `Kind` for the core group, or a glob such as `*/*`
/// (the `.all` keys) or `*.crossplane.io/*`. The map is sorted, so where Argo CD walks a Go
/// map in no fixed order (several globs matching one kind) this crate takes the first key in
/// byte order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Settings {
    /// Per-kind overrides, after the `ignoreResourceStatusField` entries are added.
    pub overrides: BTreeMap<String, ResourceOverride>,
    /// `resource.compareoptions.ignoreAggregatedRoles`.
    pub ignore_aggregated_roles: bool,
    /// `resource.compareoptions.ignoreResourceStatusField`.
    pub ignore_resource_status_field: StatusFieldMode,
    /// `resource.sensitive.mask.annotations`: annotation keys masked like Secret data.
    pub sensitive_mask_annotations: Vec<String>,
    /// `application.resourceTrackingMethod`.
    pub tracking_method: TrackingMethod,
    /// `application.instanceLabelKey`.
    pub instance_label_key: String,
    /// `installationID`: when set, a tracking annotation counts only on objects whose
    /// `argocd.argoproj.io/installation-id` annotation holds it, and desired objects get it.
    pub installation_id: String,
    /// `resource.ignoreResourceUpdatesEnabled` (on unless set to false): whether watch
    /// events that change only ignored fields are skipped
    /// ([`crate::ignore::ResourceUpdate::needs_refresh`]).
    pub ignore_resource_updates_enabled: bool,
    /// `resource.compareoptions.ignoreDifferencesOnResourceUpdates`: the update check also
    /// leaves out the `ignoreDifferences` paths.
    pub ignore_differences_on_resource_updates: bool,
    /// `resource.exclusions`: kinds Argo CD does not watch, on top of its built-in ones
    /// ([`Settings::excludes`]).
    pub resource_exclusions: Vec<FilteredResource>,
    /// `resource.inclusions`: when an entry names a cluster, only the kinds listed are watched
    /// there.
    pub resource_inclusions: Vec<FilteredResource>,
    /// `resource.selectors`: label selectors that narrow down which objects of the kinds they
    /// match Argo CD watches ([`Settings::label_selector`]).
    pub resource_selectors: Vec<FilteredResource>,
    /// The namespace Argo CD runs in: the `metadata.namespace` of `argocd-cm`, `argocd` by
    /// default. An app outside it is tracked as `<namespace>_<name>`
    /// ([`Application::instance_name`]).
    pub namespace: String,
}

/// An entry of `resource.exclusions`, `resource.inclusions` or `resource.selectors` (Argo CD's
/// `FilteredResource`): API group globs, kinds (`*` for any) and cluster URL globs; an empty
/// list matches anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct FilteredResource {
    /// API group globs (`""` is the core group).
    pub api_groups: Vec<String>,
    /// Kinds, or `*`.
    pub kinds: Vec<String>,
    /// Cluster API URL globs.
    pub clusters: Vec<String>,
    /// A label selector in its string form (`resource.selectors` only; empty selects all).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub selector: String,
}

impl FilteredResource {
    fn matches_cluster(&self, cluster: &str) -> bool {
        self.clusters.is_empty()
            || self.clusters.iter().any(|c| crate::glob::glob_match(c, cluster))
    }

    fn matches(&self, group: &str, kind: &str, cluster: &str) -> bool {
        (self.api_groups.is_empty()
            || self.api_groups.iter().any(|g| crate::glob::glob_match(g, group)))
            && (self.kinds.is_empty() || self.kinds.iter().any(|k| k == "*" || k == kind))
            && self.matches_cluster(cluster)
    }
}

/// Argo CD's built-in exclusions (`coreExcludedResources`): the `events.k8s.io` and
/// `metrics.k8s.io` groups, core `Event`, `coordination.k8s.io` `Lease`.
fn core_excluded(group: &str, kind: &str) -> bool {
    matches!(group, "events.k8s.io" | "metrics.k8s.io")
        || (group.is_empty() && kind == "Event")
        || (group == "coordination.k8s.io" && kind == "Lease")
}

/// The namespace Argo CD runs in when `argocd-cm` names none.
pub(crate) const DEFAULT_ARGOCD_NAMESPACE: &str = "argocd";

impl Default for Settings {
    fn default() -> Self {
        let mut s = Settings {
            overrides: BTreeMap::new(),
            ignore_aggregated_roles: false,
            ignore_resource_status_field: StatusFieldMode::All,
            sensitive_mask_annotations: Vec::new(),
            tracking_method: TrackingMethod::Annotation,
            instance_label_key: DEFAULT_INSTANCE_LABEL.to_string(),
            installation_id: String::new(),
            ignore_resource_updates_enabled: true,
            ignore_differences_on_resource_updates: false,
            resource_exclusions: Vec::new(),
            resource_inclusions: Vec::new(),
            resource_selectors: Vec::new(),
            namespace: DEFAULT_ARGOCD_NAMESPACE.to_string(),
        };
        s.add_status_ignores();
        s
    }
}

const OVERRIDE_TYPES: &[&str] = &[
    "health",
    "useOpenLibs",
    "actions",
    "ignoreDifferences",
    "ignoreResourceUpdates",
    "knownTypeFields",
];

impl Settings {
    /// Reads settings from an `argocd-cm` ConfigMap object (its `data`).
    ///
    /// # Examples
    ///
    /// ```
    /// let cm = serde_json::json!({
    ///     "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
    ///     "data": {
    ///         "resource.customizations.ignoreDifferences.apps_Deployment":
    ///             "jsonPointers:\n- /spec/replicas\n",
    ///         "resource.customizations.health.cert-manager.io_Certificate":
    ///             "return {status = 'Healthy'}",
    ///     }
    /// });
    /// let s = gitops_core::config::Settings::from_config_map(&cm).unwrap();
    /// let d = &s.overrides["apps/Deployment"].ignore_differences;
    /// assert_eq!(d.json_pointers, ["/spec/replicas"]);
    /// assert!(s.overrides["cert-manager.io/Certificate"].health_lua.starts_with("return"));
    /// // `ignoreResourceStatusField` defaults to all kinds:
    /// assert_eq!(s.overrides["*/*"].ignore_differences.json_pointers, ["/status"]);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ConfigError::Kind`] for a document whose `kind` is set to anything but `ConfigMap`;
    /// [`ConfigError::Shape`] and [`ConfigError::Key`] for data that cannot be read.
    pub fn from_config_map(cm: &Value) -> Result<Settings, ConfigError> {
        check_kind(cm, "ConfigMap")?;
        let empty = serde_json::Map::new();
        let data = match cm.get("data") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(ConfigError::Shape {
                    path: "/data".into(),
                    expected: "an object",
                    found: type_name(other),
                });
            }
        };
        let mut map = BTreeMap::new();
        for (k, v) in data {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(ConfigError::Shape {
                        path: format!("/data/{}", crate::object::escape_pointer_token(k)),
                        expected: "a string",
                        found: type_name(other),
                    });
                }
            };
            map.insert(k.clone(), text);
        }
        let mut s = Settings::from_data(&map)?;
        if let Some(ns) = cm.pointer("/metadata/namespace").and_then(Value::as_str)
            && !ns.is_empty()
        {
            s.namespace = ns.to_string();
        }
        Ok(s)
    }

    /// Reads settings from the `data` map of `argocd-cm`.
    pub fn from_data(data: &BTreeMap<String, String>) -> Result<Settings, ConfigError> {
        let mut s = Settings { overrides: BTreeMap::new(), ..Settings::default() };
        if let Some(legacy) = data.get("resource.customizations") {
            s.overrides = parse_legacy_overrides(legacy)?;
        }
        for (key, value) in data {
            if !key.starts_with("resource.customizations.") {
                continue;
            }
            let parts: Vec<&str> = key.splitn(4, '.').collect();
            if parts.len() < 4 {
                continue;
            }
            let (kind_type, gk) = (parts[2], parts[3]);
            if !OVERRIDE_TYPES.contains(&kind_type) {
                return Err(ConfigError::Key {
                    key: key.clone(),
                    message: format!("unknown customization type `{kind_type}`"),
                });
            }
            let gk = split_key_group_kind(gk).ok_or_else(|| ConfigError::Key {
                key: key.clone(),
                message: "expected `<group>_<Kind>`, `<Kind>` or `all`".to_string(),
            })?;
            let entry = s.overrides.entry(gk).or_default();
            match kind_type {
                "health" => entry.health_lua = value.clone(),
                "useOpenLibs" => {
                    entry.use_open_libs = parse_go_bool(value).ok_or_else(|| ConfigError::Key {
                        key: key.clone(),
                        message: format!("`{value}` is not a boolean"),
                    })?;
                }
                "actions" => entry.actions = parse_actions(key, value)?,
                "ignoreDifferences" => entry.ignore_differences = parse_yaml(key, value)?,
                "ignoreResourceUpdates" => entry.ignore_resource_updates = parse_yaml(key, value)?,
                "knownTypeFields" => entry.known_type_fields = parse_yaml(key, value)?,
                _ => {}
            }
        }
        if let Some(opts) = data.get("resource.compareoptions") {
            #[derive(Deserialize, Default)]
            #[serde(rename_all = "camelCase", default)]
            struct CompareOptions {
                ignore_aggregated_roles: bool,
                ignore_differences_on_resource_updates: bool,
                ignore_resource_status_field: Option<String>,
            }
            let o: CompareOptions = parse_yaml("resource.compareoptions", opts)?;
            s.ignore_aggregated_roles = o.ignore_aggregated_roles;
            s.ignore_differences_on_resource_updates = o.ignore_differences_on_resource_updates;
            s.ignore_resource_status_field = match o.ignore_resource_status_field.as_deref() {
                Some("crd") => StatusFieldMode::Crd,
                Some("none" | "off" | "false") => StatusFieldMode::None,
                // "", "all" and anything else count as `all`, as in Argo CD.
                _ => StatusFieldMode::All,
            };
        }
        if let Some(v) = data.get("resource.sensitive.mask.annotations") {
            s.sensitive_mask_annotations = v
                .split(',')
                .map(|a| a.chars().filter(|c| !c.is_whitespace()).collect::<String>())
                .filter(|a| !a.is_empty())
                .collect();
        }
        if let Some(v) = data.get("application.resourceTrackingMethod") {
            s.tracking_method = match v.as_str() {
                "label" => TrackingMethod::Label,
                // Argo CD reads an empty value as the default, `annotation`.
                "annotation" | "" => TrackingMethod::Annotation,
                "annotation+label" => TrackingMethod::AnnotationAndLabel,
                other => {
                    return Err(ConfigError::Key {
                        key: "application.resourceTrackingMethod".into(),
                        message: format!("unknown tracking method `{other}`"),
                    });
                }
            };
        }
        if let Some(v) = data.get("application.instanceLabelKey").filter(|v| !v.is_empty()) {
            s.instance_label_key = v.clone();
        }
        if let Some(v) = data.get("resource.ignoreResourceUpdatesEnabled").filter(|v| !v.is_empty())
        {
            s.ignore_resource_updates_enabled =
                parse_go_bool(v).ok_or_else(|| ConfigError::Key {
                    key: "resource.ignoreResourceUpdatesEnabled".into(),
                    message: format!("`{v}` is not a boolean"),
                })?;
        }
        if let Some(v) = data.get("resource.exclusions") {
            s.resource_exclusions = parse_yaml("resource.exclusions", v)?;
        }
        if let Some(v) = data.get("resource.inclusions") {
            s.resource_inclusions = parse_yaml("resource.inclusions", v)?;
        }
        if let Some(v) = data.get("resource.selectors") {
            s.resource_selectors = parse_yaml("resource.selectors", v)?;
            for r in &s.resource_selectors {
                crate::selector::LabelSelector::parse(&r.selector).map_err(|e| {
                    ConfigError::Key {
                        key: "resource.selectors".into(),
                        message: format!(
                            "error parsing resource selector {}: {e}",
                            crate::vocabulary::go_quote(&r.selector)
                        ),
                    }
                })?;
            }
        }
        if let Some(v) = data.get("installationID") {
            s.installation_id = v.clone();
        }
        s.add_status_ignores();
        Ok(s)
    }

    /// Whether Argo CD leaves a kind out on a cluster (`IsExcludedResource`): it is in the
    /// built-in exclusions or `resource.exclusions`; else it is in `resource.inclusions`, or no
    /// inclusion names the cluster. An excluded kind is neither watched, compared nor pruned,
    /// and a desired object of it raises `ExcludedResourceWarning`. `cluster` is the
    /// destination's API URL (`spec.destination.server`).
    ///
    /// # Examples
    ///
    /// ```
    /// let cm = serde_json::json!({"data": {"resource.exclusions":
    ///     "- apiGroups: ['']\n  kinds: [Endpoints]\n"}});
    /// let s = gitops_core::config::Settings::from_config_map(&cm).unwrap();
    /// assert!(s.excludes("", "Endpoints", "https://kubernetes.default.svc"));
    /// assert!(s.excludes("coordination.k8s.io", "Lease", "")); // built in
    /// assert!(!s.excludes("", "ConfigMap", ""));
    /// ```
    pub fn excludes(&self, group: &str, kind: &str, cluster: &str) -> bool {
        if core_excluded(group, kind)
            || self.resource_exclusions.iter().any(|r| r.matches(group, kind, cluster))
        {
            return true;
        }
        if self.resource_inclusions.iter().any(|r| r.matches(group, kind, cluster)) {
            return false;
        }
        self.resource_inclusions.iter().any(|r| r.matches_cluster(cluster))
    }

    /// The label selector Argo CD lists and watches a kind with on a cluster
    /// (`GetLabelSelector`): the selectors of every `resource.selectors` entry that matches,
    /// trimmed, joined by `,`; empty when none does (every object is watched).
    ///
    /// # Examples
    ///
    /// ```
    /// let cm = serde_json::json!({"data": {"resource.selectors":
    ///     "- apiGroups: ['']\n  kinds: [Pod]\n  selector: '!argocd.argoproj.io/instance'\n"}});
    /// let s = gitops_core::config::Settings::from_config_map(&cm).unwrap();
    /// assert_eq!(s.label_selector("", "Pod", ""), "!argocd.argoproj.io/instance");
    /// assert_eq!(s.label_selector("apps", "Deployment", ""), "");
    /// ```
    pub fn label_selector(&self, group: &str, kind: &str, cluster: &str) -> String {
        let selectors: Vec<&str> = self
            .resource_selectors
            .iter()
            .map(|r| (r, r.selector.trim()))
            .filter(|(r, s)| !s.is_empty() && r.matches(group, kind, cluster))
            .map(|(_, s)| s)
            .collect();
        selectors.join(",")
    }

    /// Whether Argo CD watches this object on `cluster`: its labels match
    /// [`Settings::label_selector`] (a selector that does not parse selects everything).
    /// `None` when the object is watched, else the selector it fails.
    pub(crate) fn unwatched(&self, obj: &Value, cluster: &str) -> Option<String> {
        self.unwatched_labelled(obj, cluster, None)
    }

    /// [`Settings::unwatched`] for an object that gets the instance label `instance_label`
    /// first: a desired object is matched after Argo CD's `SetAppInstance` (controller/state.go
    /// `CompareAppState` checks the selector after `NormalizeTargetObjects`).
    pub(crate) fn unwatched_labelled(
        &self,
        obj: &Value,
        cluster: &str,
        instance_label: Option<&str>,
    ) -> Option<String> {
        if self.resource_selectors.is_empty() {
            return None;
        }
        let r = crate::object::ObjectRef::from_object_lossy(obj);
        let selector = self.label_selector(&r.group, &r.kind, cluster);
        let parsed = crate::selector::LabelSelector::parse(&selector).ok()?;
        let mut labels =
            obj.pointer("/metadata/labels").and_then(Value::as_object).cloned().unwrap_or_default();
        if let Some(v) = instance_label {
            labels.insert(self.instance_label_key.clone(), Value::String(v.to_string()));
        }
        (!parsed.matches_labels(&labels)).then_some(selector)
    }

    fn add_status_ignores(&mut self) {
        let key = match self.ignore_resource_status_field {
            StatusFieldMode::All => "*/*",
            StatusFieldMode::Crd => "apiextensions.k8s.io/CustomResourceDefinition",
            StatusFieldMode::None => return,
        };
        let entry = self.overrides.entry(key.to_string()).or_default();
        if !entry.ignore_differences.json_pointers.iter().any(|p| p == "/status") {
            entry.ignore_differences.json_pointers.push("/status".to_string());
        }
    }
}

/// `group_Kind` → `group/Kind`, `Kind` → `Kind`, `all` → `*/*`.
fn split_key_group_kind(gk: &str) -> Option<String> {
    if gk == "all" {
        return Some("*/*".to_string());
    }
    match gk.split('_').collect::<Vec<_>>().as_slice() {
        [kind] => Some((*kind).to_string()),
        [group, kind] => Some(format!("{group}/{kind}")),
        _ => None,
    }
}

pub(crate) fn parse_go_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn parse_yaml<T: serde::de::DeserializeOwned + Default>(
    key: &str,
    text: &str,
) -> Result<T, ConfigError> {
    if text.trim().is_empty() {
        return Ok(T::default());
    }
    // Argo CD reads these texts with sigs.k8s.io/yaml (go-yaml v2, YAML 1.1: `yes` is a
    // boolean, `0644` the integer 420), its first document only, then as JSON into its types:
    // the project's own YAML reader, then its typed reading (`object::from_yaml_value`).
    let fail = |message: String| ConfigError::Key { key: key.to_string(), message };
    // Numbers as go-yaml v2 gives them to sigs.k8s.io/yaml: `1e6` where a string is wanted
    // is "1e+06".
    let options = crate::object::ParseOptions { go_numbers: true, ..Default::default() };
    let (docs, _) = options.parse_documents(text).map_err(|e| fail(e.to_string()))?;
    let first = docs.into_iter().next().unwrap_or(Value::Null);
    crate::object::from_yaml_value::<Option<T>>(first).map(Option::unwrap_or_default).map_err(fail)
}

/// An `actions` text: `None` when empty (Argo CD skips an override whose `actions` is "").
fn parse_actions(key: &str, text: &str) -> Result<Option<ResourceActions>, ConfigError> {
    if text.is_empty() {
        return Ok(None);
    }
    parse_yaml(key, text).map(Some)
}

fn parse_legacy_overrides(text: &str) -> Result<BTreeMap<String, ResourceOverride>, ConfigError> {
    const KEY: &str = "resource.customizations";
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Legacy {
        #[serde(rename = "health.lua")]
        health_lua: String,
        #[serde(rename = "health.lua.useOpenLibs")]
        use_open_libs: bool,
        actions: String,
        #[serde(rename = "ignoreDifferences")]
        ignore_differences: String,
        #[serde(rename = "ignoreResourceUpdates")]
        ignore_resource_updates: String,
        #[serde(rename = "knownTypeFields")]
        known_type_fields: Vec<KnownTypeField>,
    }
    let legacy: BTreeMap<String, Legacy> = parse_yaml(KEY, text)?;
    let mut out = BTreeMap::new();
    for (k, l) in legacy {
        let key = format!("{KEY}[{k}]");
        out.insert(
            k,
            ResourceOverride {
                health_lua: l.health_lua,
                use_open_libs: l.use_open_libs,
                actions: parse_actions(&key, &l.actions)?,
                ignore_differences: parse_yaml(&key, &l.ignore_differences)?,
                ignore_resource_updates: parse_yaml(&key, &l.ignore_resource_updates)?,
                known_type_fields: l.known_type_fields,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn split_keys_overwrite_legacy_fields() {
        let s = Settings::from_data(&data(&[
            (
                "resource.customizations",
                "argoproj.io/Rollout:\n  health.lua: legacy\n  ignoreDifferences: |\n    jsonPointers:\n    - /a\n",
            ),
            ("resource.customizations.health.argoproj.io_Rollout", "split"),
            ("resource.customizations.useOpenLibs.argoproj.io_Rollout", "T"),
        ]))
        .unwrap();
        let o = &s.overrides["argoproj.io/Rollout"];
        assert_eq!(o.health_lua, "split");
        assert!(o.use_open_libs);
        assert_eq!(o.ignore_differences.json_pointers, ["/a"]);
    }

    #[test]
    fn bad_keys_fail_the_load() {
        let err =
            Settings::from_data(&data(&[("resource.customizations.colour.apps_Deployment", "x")]))
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argocd-cm key `resource.customizations.colour.apps_Deployment`: unknown customization type `colour`"
        );
        let err = Settings::from_data(&data(&[("resource.customizations.useOpenLibs.Pod", "yes")]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argocd-cm key `resource.customizations.useOpenLibs.Pod`: `yes` is not a boolean"
        );
        let err = Settings::from_data(&data(&[("resource.customizations.health.a_b_c", "x")]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argocd-cm key `resource.customizations.health.a_b_c`: expected `<group>_<Kind>`, `<Kind>` or `all`"
        );
    }

    #[test]
    fn actions_are_read_and_bad_ones_named() {
        let s = Settings::from_data(&data(&[(
            "resource.customizations.actions.batch_CronJob",
            "discovery.lua: |\n  return {}\ndefinitions:\n- name: a\n  action.lua: return obj\n",
        )]))
        .unwrap();
        let a = s.overrides["batch/CronJob"].actions.as_ref().unwrap();
        assert_eq!(a.discovery_lua, "return {}\n");
        assert!(!a.merge_builtin_actions);
        assert_eq!(a.definitions.len(), 1);
        let err = Settings::from_data(&data(&[(
            "resource.customizations.actions.batch_CronJob",
            "definitions: 3",
        )]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argocd-cm key `resource.customizations.actions.batch_CronJob`: definitions: invalid type: integer `3`, expected a sequence"
        );
        let s = Settings::from_data(&data(&[("resource.customizations.actions.Pod", "")])).unwrap();
        assert_eq!(s.overrides["Pod"].actions, None);
    }

    #[test]
    fn resource_selectors_are_checked_when_read() {
        let bad = "- kinds: [Pod]\n  selector: 'tier=-web'\n";
        let err = Settings::from_data(&data(&[("resource.selectors", bad)])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argocd-cm key `resource.selectors`: error parsing resource selector \"tier=-web\": unable to parse requirement: values[0][tier]: Invalid value: \"-web\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        let ok =
            "- kinds: [Pod]\n  selector: ' a=b '\n- kinds: ['*']\n  selector: c\n- selector: ''\n";
        let s = Settings::from_data(&data(&[("resource.selectors", ok)])).unwrap();
        assert_eq!(s.label_selector("", "Pod", "x"), "a=b,c");
        assert_eq!(s.label_selector("apps", "Deployment", "x"), "c");
    }

    #[test]
    fn readers_refuse_other_kinds() {
        let deployment = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        assert_eq!(
            Application::from_value(&deployment).unwrap_err().to_string(),
            "expected kind Application, found kind Deployment"
        );
        let app = serde_json::json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "data": {}});
        assert_eq!(
            Settings::from_config_map(&app).unwrap_err().to_string(),
            "expected kind ConfigMap, found kind Application"
        );
        let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap"});
        assert_eq!(
            crate::sync::SyncWindow::of_project(&cm).unwrap_err().to_string(),
            "expected kind AppProject, found kind ConfigMap"
        );
        assert_eq!(
            crate::project::AppProject::from_value(&cm).unwrap_err().to_string(),
            "expected kind AppProject, found kind ConfigMap"
        );
        let bad = serde_json::json!({"kind": "AppProject", "metadata": {"name": "shop"},
            "spec": {"orphanedResources": {"warn": "yes"}}});
        assert_eq!(
            crate::project::AppProject::from_value(&bad).unwrap_err().to_string(),
            "invalid AppProject `shop` at /spec/orphanedResources: invalid type: string \"yes\", expected a boolean"
        );
        assert_eq!(
            Application::from_value(&serde_json::json!({"kind": 3})).unwrap_err().to_string(),
            "expected kind Application, found kind 3"
        );
        assert!(Application::from_value(&serde_json::json!({"metadata": {"name": "a"}})).is_ok());
        assert!(Settings::from_config_map(&serde_json::json!({"data": {}})).is_ok());
    }

    #[test]
    fn empty_tracking_method_is_annotation_and_namespace_is_read() {
        let s = Settings::from_data(&data(&[("application.resourceTrackingMethod", "")])).unwrap();
        assert_eq!(s.tracking_method, TrackingMethod::Annotation);
        let cm = serde_json::json!({"kind": "ConfigMap",
            "metadata": {"name": "argocd-cm", "namespace": "gitops"},
            "data": {"installationID": "prod"}});
        let s = Settings::from_config_map(&cm).unwrap();
        assert_eq!((s.namespace.as_str(), s.installation_id.as_str()), ("gitops", "prod"));
        assert_eq!(Settings::default().namespace, "argocd");
        let err = Settings::from_data(&data(&[("resource.exclusions", "- kinds: 3")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid argocd-cm key `resource.exclusions`: [0].kinds: invalid type: integer `3`, expected a sequence"
        );
    }

    /// argocd-cm's embedded YAML is read as Argo CD reads it (sigs.k8s.io/yaml over go-yaml
    /// v2): YAML 1.1 scalars, and a boolean or number where a string is wanted becomes its text
    /// (checked against sigs.k8s.io/yaml v1.6.0: `off` is "false", `0644` "420", `3.0` "3").
    #[test]
    fn embedded_yaml_is_yaml_1_1() {
        let s = Settings::from_data(&data(&[
            (
                "resource.exclusions",
                "- kinds: [yes, 0644, 1_000, 3.0, 1.5]\n  apiGroups: [on, ~]\n",
            ),
            (
                "resource.customizations.ignoreDifferences.apps_Deployment",
                "managedFieldsManagers: [off, 0x1F]\njsonPointers: [/spec/replicas]\n",
            ),
        ]))
        .unwrap();
        assert_eq!(s.resource_exclusions[0].kinds, ["true", "420", "1000", "3", "1.5"]);
        assert_eq!(s.resource_exclusions[0].api_groups, ["true", ""]);
        let d = &s.overrides["apps/Deployment"].ignore_differences;
        assert_eq!(d.managed_fields_managers, ["false", "31"]);
        assert_eq!(d.json_pointers, ["/spec/replicas"]);
    }

    /// Floats where a string is wanted are Go's `strconv.FormatFloat(f, 'g', -1, 32)` of the
    /// float go-yaml v2 decoded, before any JSON step (`1e6` is "1e+06", not "1000000");
    /// elsewhere a whole float is an integer. Checked against sigs.k8s.io/yaml v1.6.0.
    #[test]
    fn embedded_yaml_floats_as_go_prints_them() {
        let s = Settings::from_data(&data(&[
            (
                "resource.exclusions",
                "- kinds: [1e6, 1.5e-7, 1e21, 0.1, 100.0, .5, -0.0, 1E6, 12345678.9, 0.000001]\n  \
                 apiGroups: [18446744073709551615, 1_000.5, 6.02e23, .nan, .inf, -.Inf]\n",
            ),
            ("resource.inclusions", "[{\"kinds\": [1e6, 100.0, 2.5], \"apiGroups\": [1e21]}]"),
        ]))
        .unwrap();
        let e = &s.resource_exclusions[0];
        assert_eq!(
            e.kinds,
            [
                "1e+06",
                "1.5e-07",
                "1e+21",
                "0.1",
                "100",
                "0.5",
                "-0",
                "1e+06",
                "1.2345679e+07",
                "1e-06"
            ]
        );
        assert_eq!(
            e.api_groups,
            ["18446744073709551615", "1000.5", "6.02e+23", "NaN", "+Inf", "-Inf"]
        );
        let i = &s.resource_inclusions[0];
        assert_eq!(i.kinds, ["1e+06", "100", "2.5"]);
        assert_eq!(i.api_groups, ["1e+21"]);
    }

    #[test]
    fn status_field_modes() {
        let s = Settings::from_data(&data(&[(
            "resource.compareoptions",
            "ignoreResourceStatusField: crd\nignoreAggregatedRoles: true\n",
        )]))
        .unwrap();
        assert!(s.ignore_aggregated_roles);
        assert!(!s.overrides.contains_key("*/*"));
        assert_eq!(
            s.overrides["apiextensions.k8s.io/CustomResourceDefinition"]
                .ignore_differences
                .json_pointers,
            ["/status"]
        );
        let s = Settings::from_data(&data(&[(
            "resource.compareoptions",
            "ignoreResourceStatusField: off",
        )]))
        .unwrap();
        assert!(s.overrides.is_empty());
    }
}
