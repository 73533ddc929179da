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

use crate::config::Application;
use crate::diff::{AppDiffInput, Condition};
use crate::health::HealthContext;
use crate::object::{ObjectRef, Scopes};
use crate::reconcile::{LiveChange, PreparedApp, Reconciled};

use super::engine::{self, State};
use super::error::ProtocolError;
use super::output::{ConditionSchema, DiffOutputResource, HealthOutputResource, SyncStatusSchema};
use super::server;

/// The default limit on open sessions.
pub const DEFAULT_MAX_SESSIONS: u64 = 10_000;

/// The default limit on the objects (desired and live) of one session.
pub const DEFAULT_MAX_SESSION_OBJECTS: u64 = 100_000;

/// `app.open` params: the app's desired and live objects, as `diff` takes them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct AppOpenParams {
    /// The objects from Git.
    #[schemars(schema_with = "super::wire::objects_schema")]
    pub desired: Vec<Value>,
    /// The app's live objects as the host's watch cache holds them.
    #[schemars(schema_with = "super::wire::objects_schema")]
    pub live: Vec<Value>,
    /// The Argo CD `Application`; left out, the configured one (or none). The session keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::wire::optional_object_schema")]
    pub app: Option<Value>,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one. The session
    /// keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::wire::optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// The time health scripts read, RFC 3339; left out, the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
}

/// `app.update` params: watch events for a session's live objects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct AppUpdateParams {
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
pub struct WatchEvent {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    #[serde(rename = "type")]
    pub type_: WatchEventType,
    /// The object (for `DELETED`, its last known state or anything with its identity).
    #[schemars(schema_with = "super::wire::kubernetes_object_schema")]
    pub object: Value,
}

/// The type of a watch event, spelled as Kubernetes spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
#[non_exhaustive]
pub enum WatchEventType {
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
pub struct AppDesiredParams {
    /// The handle `app.open` returned.
    pub session: String,
    /// The objects from Git, all of them (those that did not change are kept as prepared).
    #[schemars(schema_with = "super::wire::objects_schema")]
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
pub struct AppCloseParams {
    /// The handle `app.open` returned.
    pub session: String,
}

/// The result of `app.open`, `app.update` and `app.desired`: the session's roll-ups and the
/// rows that changed (`app.open`: every row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionOutput {
    /// The app's conditions, sorted.
    #[schemars(with = "Vec<ConditionSchema>")]
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
    #[schemars(with = "SyncStatusSchema")]
    pub sync_status: String,
}

/// `app.close` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AppCloseResult {
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
    /// The open session of a handle, or the error naming it.
    fn get(&mut self, id: &str) -> Result<&mut PreparedApp, ProtocolError> {
        self.open.get_mut(id).ok_or_else(|| {
            ProtocolError::params("/params/session", format!("no open session `{id}`"))
        })
    }
}

fn max_sessions(state: &State) -> u64 {
    state.config.limits.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS)
}

fn max_objects(state: &State) -> u64 {
    state.config.limits.max_session_objects.unwrap_or(DEFAULT_MAX_SESSION_OBJECTS)
}

/// Refuses a session that would hold more objects than the limit.
fn check_objects(state: &State, session: &str, count: usize) -> Result<(), ProtocolError> {
    let max = max_objects(state);
    if count as u64 > max {
        return Err(ProtocolError::LimitExceeded {
            message: format!(
                "session `{session}` would hold {count} objects, maxSessionObjects is {max}"
            ),
        });
    }
    Ok(())
}

fn now(text: Option<&str>) -> Result<i64, ProtocolError> {
    Ok(text.map(|t| server::timestamp(t, "/params/now")).transpose()?.map_or(0, |t| t.unix_seconds))
}

/// Runs `f` on the open session `id` with the configured health context.
fn with_session<R>(
    state: &mut State,
    id: &str,
    now: i64,
    f: impl FnOnce(&mut PreparedApp, &HealthContext<'_>) -> R,
) -> Result<R, ProtocolError> {
    let State { engines, config, interrupt, sessions, .. } = state;
    let prepared = sessions.get(id)?;
    engine::with_configured_health(engines, config, interrupt.as_ref(), now, |ctx| f(prepared, ctx))
}

fn output(session: String, r: Reconciled) -> Result<Value, ProtocolError> {
    let out = SessionOutput {
        conditions: r.conditions,
        health: r.health.iter().map(HealthOutputResource::of).collect(),
        health_message: r.health_message,
        health_status: r.health_status.as_str().to_string(),
        notes: r.notes,
        removed: r.removed,
        resources: r.resources.iter().map(DiffOutputResource::of).collect(),
        session,
        sync_status: r.sync_status.as_str().to_string(),
    };
    engine::to_result(&out)
}

pub(crate) fn handle_app_open(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppOpenParams = server::parse_params(params)?;
    let desired = server::objects(p.desired, "/params/desired")?;
    let live = server::objects(p.live, "/params/live")?;
    let app = p.app.map(|a| server::application(a, "/params/app")).transpose()?;
    let settings = p.argocd_cm.map(|cm| server::settings(cm, "/params/argocdCm")).transpose()?;
    let now = now(p.now.as_deref())?;
    let max = max_sessions(state);
    if state.sessions.open.len() as u64 >= max {
        return Err(ProtocolError::LimitExceeded {
            message: format!(
                "{} sessions are open, maxSessions is {max}",
                state.sessions.open.len()
            ),
        });
    }
    let id = format!("s{}", state.sessions.last + 1);
    check_objects(state, &id, desired.len() + live.len())?;
    let default_app = Application::default();
    let app = app.as_ref().or(state.config.app.as_ref()).unwrap_or(&default_app);
    let settings = settings.as_ref().unwrap_or(&state.config.settings);
    let mut scopes = Scopes::builtin();
    scopes.add_crds(desired.iter().chain(&live));
    let input = AppDiffInput::new(&desired, &live, app, settings, &scopes).with_objects(false);
    let State { engines, config, interrupt, .. } = &*state;
    let (prepared, r) =
        engine::with_configured_health(engines, config, interrupt.as_ref(), now, |ctx| {
            let prepared = PreparedApp::new(&input, ctx);
            let (diff, health) = (prepared.diff(), prepared.health());
            let r = Reconciled::whole(&diff, &health);
            (prepared, r)
        })?;
    state.sessions.last += 1;
    state.sessions.open.insert(id.clone(), prepared);
    output(id, r)
}

pub(crate) fn handle_app_update(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppUpdateParams = server::parse_params(params)?;
    let mut changes = Vec::with_capacity(p.events.len());
    for (i, e) in p.events.into_iter().enumerate() {
        let object = e.object;
        server::check_object(&object, &format!("/params/events/{i}/object"))?;
        changes.push(match e.type_ {
            WatchEventType::Added => LiveChange::Added(object),
            WatchEventType::Modified => LiveChange::Modified(object),
            WatchEventType::Deleted => LiveChange::Deleted(object),
        });
    }
    let now = now(p.now.as_deref())?;
    let count = state.sessions.get(&p.session)?.objects_after(&changes);
    check_objects(state, &p.session, count)?;
    let r = with_session(state, &p.session, now, |prepared, ctx| prepared.apply(&changes, ctx))?;
    output(p.session, r)
}

pub(crate) fn handle_app_desired(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppDesiredParams = server::parse_params(params)?;
    let desired = server::objects(p.desired, "/params/desired")?;
    let now = now(p.now.as_deref())?;
    let prepared = state.sessions.get(&p.session)?;
    let count = prepared.objects_after(&[]) - prepared.desired_count() + desired.len();
    check_objects(state, &p.session, count)?;
    let r =
        with_session(state, &p.session, now, |prepared, ctx| prepared.set_desired(desired, ctx))?;
    output(p.session, r)
}

pub(crate) fn handle_app_close(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppCloseParams = server::parse_params(params)?;
    state.sessions.get(&p.session)?;
    state.sessions.open.remove(&p.session);
    let open_sessions = state.sessions.open.len() as u64;
    engine::to_result(&AppCloseResult { session: p.session, open_sessions })
}
