//! The controller's decisions around the comparison, each its own method: `orphans` (the
//! namespace's objects no app owns), `needsRefresh` (whether a watch event needs the app
//! refreshed), `deletion.step` (one pass of an Application's deletion) and `operation` (the
//! timing of an operation in progress: the sync timeout, the retry and its wait,
//! `retry.refresh`, the wave delay, and `skip-reconcile`). Their params and results live
//! here; `server.rs` reads the params and calls the functions below.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ProtocolError;
use super::output::{AttemptResult, NeedsRefreshResult, OperationResult};
use super::shapes::{clusters_schema, object_schema, objects_schema, optional_object_schema};
use crate::config::{Application, Settings};
use crate::health::HealthStatus;
use crate::object::Scopes;
use crate::sync::{LiveObject, OperationClock, PickUpAction, WaveEvent};
use crate::vocabulary::{Timestamp, format_rfc3339};

/// `orphans` params: what `gitops-core status --project` reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct OrphansParams {
    /// The Argo CD `Application` (its destination and name).
    #[schemars(schema_with = "object_schema")]
    pub app: Value,
    /// The AppProject manifest: `spec.orphanedResources`, the resource lists and
    /// destinations.
    #[schemars(schema_with = "object_schema")]
    pub project: Value,
    /// The clusters the host knows (cluster Secrets or `name`, `server`, `project` maps), for
    /// `permitOnlyProjectScopedClusters`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "clusters_schema")]
    pub clusters: Vec<Value>,
    /// The objects from Git.
    #[schemars(schema_with = "objects_schema")]
    pub desired: Vec<Value>,
    /// The objects of the destination namespace (the app's own among them), and the objects
    /// they own.
    #[schemars(schema_with = "objects_schema")]
    pub live: Vec<Value>,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// The applications that exist (`<namespace>/<name>`, or `<name>` in Argo CD's
    /// namespace): an object tracked by an app not listed is an orphan. Left out, any
    /// tracking counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apps: Option<Vec<String>>,
}

/// `needsRefresh` params: one watch event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct NeedsRefreshParams {
    /// The object before the event.
    #[schemars(schema_with = "object_schema")]
    pub old: Value,
    /// The object after the event.
    #[schemars(schema_with = "object_schema")]
    pub new: Value,
    /// The old object's health status; left out when its kind has no health check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_health: Option<HealthStatus>,
    /// The new object's health status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_health: Option<HealthStatus>,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
}

/// `deletion.step` params: an Application being deleted and what one pass reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct DeletionStepParams {
    /// The Argo CD `Application`, with `metadata.deletionTimestamp` and `finalizers`.
    #[schemars(schema_with = "object_schema")]
    pub app: Value,
    /// The objects from Git, where the PreDelete and PostDelete hooks come from.
    #[serde(default)]
    #[schemars(schema_with = "objects_schema")]
    pub targets: Vec<Value>,
    /// The app's live objects, with their health.
    #[serde(default)]
    pub live: Vec<LiveObject>,
    /// `live` is read again after this pass's cascade deletions
    /// ([`crate::sync::DeletionRequest::after_deletions`]).
    #[serde(default)]
    pub after_deletions: bool,
}

/// `operation` params: an Application whose operation the controller picks up at `now`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct OperationParams {
    /// The Argo CD `Application`: its `argocd.argoproj.io/skip-reconcile` annotation and
    /// `status.operationState` (phase, `startedAt`, `finishedAt`, `retryCount`,
    /// `operation.retry` with `refresh`).
    #[schemars(schema_with = "object_schema")]
    pub app: Value,
    /// The current time, RFC 3339.
    #[schemars(extend("format" = "date-time"))]
    pub now: String,
    /// The controller's sync timeout, seconds (`controller.sync.timeout.seconds`); 0 or left
    /// out is none.
    #[serde(default)]
    pub sync_timeout_seconds: i64,
    /// The message of a pass in this pick-up that left the operation Failed or Error: the
    /// result then says whether and when it is retried (`afterAttempt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_attempt: Option<String>,
    /// A wave that finished its wet run in this pick-up (`step`'s `wave`): the result then
    /// says when the next pass may run (`nextPassAt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave: Option<WaveEvent>,
    /// The controller's `ARGOCD_SYNC_WAVE_DELAY` as written (seconds; left out, 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_wave_delay: Option<String>,
}

/// Reads the `project` param and the `clusters` the host knows.
pub(super) fn project(
    project: &Value,
    clusters: &[Value],
) -> Result<crate::project::AppProject, ProtocolError> {
    let at = |base: &str, e: crate::config::ConfigError| {
        let path = match &e {
            crate::config::ConfigError::Project { path, .. }
            | crate::config::ConfigError::Cluster { path, .. } => format!("{base}{path}"),
            _ => base.to_string(),
        };
        ProtocolError::params(path, e.to_string())
    };
    let mut p =
        crate::project::AppProject::from_value(project).map_err(|e| at("/params/project", e))?;
    for (i, c) in clusters.iter().enumerate() {
        let c = crate::project::Cluster::from_value(c)
            .map_err(|e| at(&format!("/params/clusters/{i}"), e))?;
        p.clusters.push(c);
    }
    Ok(p)
}

/// `orphans`: [`crate::orphans::Orphans::new`].
pub(super) fn orphans(
    app: &Application,
    project: &crate::project::AppProject,
    desired: &[Value],
    live: &[Value],
    apps: Option<&[String]>,
    settings: &Settings,
) -> Result<crate::orphans::Orphans, ProtocolError> {
    let mut scopes = Scopes::builtin();
    scopes.add_crds(desired.iter().chain(live));
    Ok(crate::orphans::Orphans::new(project, app, settings, &scopes, desired, live, apps))
}

/// `needsRefresh`: [`crate::ignore::ResourceUpdate::needs_refresh`].
pub(super) fn needs_refresh(
    p: &NeedsRefreshParams,
    settings: &Settings,
) -> Result<NeedsRefreshResult, ProtocolError> {
    let update = crate::ignore::ResourceUpdate::new(&p.old, &p.new, p.old_health, p.new_health);
    let needs_refresh = update.needs_refresh(settings).map_err(|e| ProtocolError::Engine {
        message: e.to_string(),
        object: None,
        path: None,
    })?;
    Ok(NeedsRefreshResult { needs_refresh })
}

/// `deletion.step`: [`crate::sync::DeletionRequest::step`].
pub(super) fn deletion_step(
    app: &Application,
    targets: Vec<Value>,
    live: &[LiveObject],
    after_deletions: bool,
) -> Result<crate::sync::DeletionStep, ProtocolError> {
    let at = "/params/app/metadata/deletionTimestamp";
    if app.metadata.deletion_timestamp.is_none() {
        return Err(ProtocolError::params(at, "the Application is not being deleted"));
    }
    let mut request = crate::sync::DeletionRequest::for_app(app, targets)
        .map_err(|e| ProtocolError::params(at, e.to_string()))?;
    request.after_deletions = after_deletions;
    request.scopes.add_crds(request.targets.iter().chain(live.iter().map(|l| &l.object)));
    Ok(request.step(live))
}

/// `operation`: [`crate::sync::Decision::skips_reconcile`], then [`OperationClock::pick_up`] and, where
/// asked, [`OperationClock::after_attempt`] and [`WaveEvent::next_pass_at`].
pub(super) fn operation(
    app: &Application,
    p: &OperationParams,
    now: Timestamp,
) -> Result<OperationResult, ProtocolError> {
    if crate::sync::Decision::skips_reconcile(app) {
        return Ok(OperationResult { skip_reconcile: true, ..OperationResult::default() });
    }
    let now = now.unix_seconds();
    let mut out = OperationResult::default();
    let op = OperationClock::from_app(app, p.sync_timeout_seconds)
        .map_err(|e| ProtocolError::params(format!("/params/app{}", e.path), e.to_string()))?;
    if op.is_none() && p.failed_attempt.is_some() {
        return Err(ProtocolError::params(
            "/params/failedAttempt",
            "no operation in progress (status.operationState.phase is not Running or Terminating)",
        ));
    }
    if let Some(op) = &op {
        let picked = op.pick_up(now);
        out.next_pick_up_at = Some(format_rfc3339(picked.next_pick_up_at));
        let (action, message, at, latest) = match &picked.action {
            PickUpAction::Resume => ("resume", None, None, None),
            PickUpAction::Terminate { message } => ("terminate", Some(message.clone()), None, None),
            PickUpAction::WaitForRetry { at } => ("waitForRetry", None, Some(*at), None),
            PickUpAction::Retry { message, latest_revisions } => {
                ("retry", Some(message.clone()), None, Some(*latest_revisions))
            }
        };
        out.action = Some(action.to_string());
        out.message = message;
        out.at = at.map(format_rfc3339);
        out.latest_revisions = latest;
        if let Some(failed) = &p.failed_attempt {
            let end = op.after_attempt(&picked, failed, now);
            out.after_attempt = Some(AttemptResult {
                retry: end.retry,
                message: end.message,
                retry_count: end.retry_count,
                next_attempt_at: format_rfc3339(end.next_attempt_at),
            });
        }
    }
    if let Some(wave) = &p.wave {
        let delay = WaveEvent::delay_seconds(p.sync_wave_delay.as_deref());
        out.next_pass_at = Some(format_rfc3339(wave.next_pass_at(now, delay)));
    }
    Ok(out)
}
