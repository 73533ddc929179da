//! Sessions of the `serve` protocol: an app prepared once ([`crate::reconcile::PreparedApp`])
//! and kept by the server between requests, fed watch events and new commits.
//!
//! `app.open` prepares the app from its desired and live objects and answers with a handle
//! (`s1`, `s2`, ... never reused) and the whole comparison. `app.update` takes watch events
//! as the Kubernetes API server sends them (`{"type": "MODIFIED", "object": {...}}`),
//! `app.desired` a new desired set (a new commit); both answer with what changed: the rows of
//! resources whose comparison or health changed, the resources gone, and the app's roll-ups.
//! `app.close` frees the session. A session keeps the app, `argocd-cm` and CRD scopes it was
//! opened with; `configure` later changes the health scripts and built-in rules it is assessed
//! with, not its comparison.
//!
//! The limits (`hello` states them, `configure`'s `limits` change them): at most
//! `maxSessions` open sessions, and at most `maxSessionObjects` objects (desired and live)
//! in one. A request that would go over either is refused with `limit_exceeded` and changes
//! nothing.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diff::Condition;
use crate::object::ObjectRef;
use crate::reconcile::{LiveChange, PreparedApp, Reconciled};

use super::output::{DiffOutputResource, HealthOutputResource};

/// The default limit on open sessions ([`Server::DEFAULT_MAX_SESSIONS`](super::Server::DEFAULT_MAX_SESSIONS)).
pub(crate) const DEFAULT_MAX_SESSIONS: u64 = 10_000;

/// The default limit on the objects of one session
/// ([`Server::DEFAULT_MAX_SESSION_OBJECTS`](super::Server::DEFAULT_MAX_SESSION_OBJECTS)).
pub(crate) const DEFAULT_MAX_SESSION_OBJECTS: u64 = 100_000;

/// `app.open` params: the app's desired and live objects, as `diff` takes them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct AppOpenParams {
    /// The objects from Git.
    #[schemars(schema_with = "super::shapes::objects_schema")]
    pub desired: Vec<Value>,
    /// The app's live objects as the host's watch cache holds them.
    #[schemars(schema_with = "super::shapes::objects_schema")]
    pub live: Vec<Value>,
    /// The Argo CD `Application`; left out, the configured one (or none). The session keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::shapes::optional_object_schema")]
    pub app: Option<Value>,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one. The session
    /// keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::shapes::optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// The time health scripts read, RFC 3339; left out, the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
    /// The app's AppProject: live objects it does not permit are left out, resources of
    /// kinds it does not permit are `Unknown` (as `gitops-core status --project`). The
    /// session keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::shapes::optional_object_schema")]
    pub project: Option<Value>,
    /// The clusters the host knows, each an Argo CD cluster Secret or a map of `name`,
    /// `server` and `project`: for the project's `permitOnlyProjectScopedClusters` and the
    /// destination's cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "super::shapes::clusters_schema")]
    pub clusters: Vec<Value>,
}

/// `app.update` params: watch events for a session's live objects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct AppUpdateParams {
    /// The handle `app.open` returned.
    pub session: String,
    /// The events, applied in order; the last one for an object wins.
    pub events: Vec<WatchEvent>,
    /// The time health scripts read, RFC 3339; left out, the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
}

/// One watch event, as the Kubernetes API server sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct WatchEvent {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    #[serde(rename = "type")]
    pub type_: WatchEventType,
    /// The object (for `DELETED`, its last known state or anything with its identity).
    #[schemars(schema_with = "super::shapes::kubernetes_object_schema")]
    pub object: Value,
}

/// The type of a watch event, spelled as Kubernetes spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
#[non_exhaustive]
pub(super) enum WatchEventType {
    /// The object appeared (or is listed again).
    Added,
    /// The object changed.
    Modified,
    /// The object is gone.
    Deleted,
}

/// `app.desired` params: a session's new desired set (a new commit).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct AppDesiredParams {
    /// The handle `app.open` returned.
    pub session: String,
    /// The objects from Git, all of them (those that did not change are kept as prepared).
    #[schemars(schema_with = "super::shapes::objects_schema")]
    pub desired: Vec<Value>,
    /// The time health scripts read, RFC 3339; left out, the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
}

/// `app.close` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct AppCloseParams {
    /// The handle `app.open` returned.
    pub session: String,
}

/// The result of `app.open`, `app.update` and `app.desired`: the session's roll-ups and the
/// rows that changed (`app.open`: every row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct SessionOutput {
    /// The app's conditions, sorted.
    #[schemars(schema_with = "super::output::conditions_schema")]
    pub conditions: Vec<Condition>,
    /// The resources whose health changed or appeared, as `health` gives them.
    pub health: Vec<HealthOutputResource>,
    /// The app's health message (`Caused by ...`).
    pub health_message: String,
    /// The app's health status.
    #[schemars(with = "crate::health::HealthStatus")]
    pub health_status: String,
    /// The notes about live objects left out, when they may have changed (`app.open`:
    /// always); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
    /// The resources that are gone, sorted.
    pub removed: Vec<ObjectRef>,
    /// The resources whose row changed or appeared, as `diff` gives them, sorted; while the
    /// comparison fails, and on the change into or out of that, every resource.
    pub resources: Vec<DiffOutputResource>,
    /// The session's handle.
    pub session: String,
    /// The app's sync status.
    #[schemars(schema_with = "super::output::sync_status_schema")]
    pub sync_status: String,
}

/// `app.close` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct AppCloseResult {
    /// The handle of the session closed.
    pub session: String,
    /// The sessions still open.
    pub open_sessions: u64,
}

/// The server's open sessions.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    open: BTreeMap<String, PreparedApp>,
    /// The number of the last handle given.
    last: u64,
}

impl Sessions {
    /// The open session of a handle.
    pub(crate) fn get(&mut self, id: &str) -> Option<&mut PreparedApp> {
        self.open.get_mut(id)
    }

    /// How many are open.
    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }

    /// The handle the next session gets.
    pub(crate) fn next_handle(&self) -> String {
        format!("s{}", self.last + 1)
    }

    /// Keeps a session under the next handle; the handle.
    pub(crate) fn insert(&mut self, prepared: PreparedApp) -> String {
        let id = self.next_handle();
        self.last += 1;
        self.open.insert(id.clone(), prepared);
        id
    }

    /// Frees a session; whether it was open.
    pub(crate) fn close(&mut self, id: &str) -> bool {
        self.open.remove(id).is_some()
    }
}

impl SessionOutput {
    /// The output of a session's answer.
    pub(crate) fn new(session: String, r: Reconciled) -> SessionOutput {
        SessionOutput {
            conditions: r.conditions,
            health: r.health.iter().map(HealthOutputResource::of).collect(),
            health_message: r.health_message,
            health_status: r.health_status.as_str().to_string(),
            notes: r.notes,
            removed: r.removed,
            resources: r.resources.iter().map(DiffOutputResource::of).collect(),
            session,
            sync_status: r.sync_status.as_str().to_string(),
        }
    }
}

impl WatchEvent {
    /// The event as the library takes it.
    pub(crate) fn change(self) -> LiveChange {
        match self.type_ {
            WatchEventType::Added => LiveChange::Added(self.object),
            WatchEventType::Modified => LiveChange::Modified(self.object),
            WatchEventType::Deleted => LiveChange::Deleted(self.object),
        }
    }
}
