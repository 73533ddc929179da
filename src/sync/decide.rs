//! The automated sync decision (Argo CD 3.6.2 controller/appcontroller.go
//! `ApplicationController.autoSync`): whether the controller starts a sync now.

use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SyncResource;
use super::backoff::{Retry, SelfHealSettings};
use super::guard::{BlastRadiusGuard, GuardVerdict};
use crate::config::Application;
use crate::vocabulary::parse_rfc3339;

use super::status::ResourceStatus;
use crate::diff::SyncStatus;

impl ResourceStatus {
    /// Whether a pruning sync would leave the app with nothing: every resource requires pruning
    /// (also when there is none, as Argo CD counts it). Argo CD refuses such an automated sync
    /// unless `syncPolicy.automated.allowEmpty` is set ("auto-sync will wipe out all resources");
    /// a host planning a sync from an empty render can ask the same.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::ResourceStatus;
    /// let r = |prune: bool| -> ResourceStatus { serde_json::from_value(serde_json::json!(
    ///     {"kind": "ConfigMap", "name": "a", "status": "OutOfSync", "requiresPruning": prune})).unwrap() };
    /// assert!(ResourceStatus::wipes_out(&[r(true), r(true)]));
    /// assert!(!ResourceStatus::wipes_out(&[r(true), r(false)]));
    /// ```
    pub fn wipes_out(resources: &[ResourceStatus]) -> bool {
        resources.iter().all(|r| r.requires_pruning)
    }
}

/// The inputs of the decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AutoSyncInput {
    /// The app's sync status from the comparison.
    pub sync_status: SyncStatus,
    /// Per-resource statuses.
    pub resources: Vec<ResourceStatus>,
    /// The desired revisions (one for a single-source app).
    pub revisions: Vec<String>,
    /// Whether the new commit may touch this app (`false` compares only the sources).
    pub revisions_may_have_changes: bool,
    /// The time, unix seconds.
    pub now: i64,
    /// The controller's self-heal settings.
    pub self_heal: SelfHealSettings,
    /// The blast-radius guard; `None` (the default) decides as Argo CD does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<BlastRadiusGuard>,
    /// Live objects the guard reads: the app's (their `Prune=` options, the StatefulSets'
    /// claim templates) and the PersistentVolumeClaims of its namespaces, which the app does
    /// not track. Not compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub live: Vec<Value>,
}

impl AutoSyncInput {
    /// An input with the default self-heal settings and `revisions_may_have_changes`.
    pub fn new(
        sync_status: SyncStatus,
        resources: Vec<ResourceStatus>,
        revisions: Vec<String>,
        now: i64,
    ) -> Self {
        AutoSyncInput {
            sync_status,
            resources,
            revisions,
            revisions_may_have_changes: true,
            now,
            self_heal: SelfHealSettings::default(),
            guard: None,
            live: Vec::new(),
        }
    }
}

/// The operation an automated sync starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AutoSyncOperation {
    /// The revisions to sync to.
    pub revisions: Vec<String>,
    /// `automated.prune`.
    pub prune: bool,
    /// The spec's sync options.
    pub sync_options: Vec<String>,
    /// For self-heal: the resources not Synced (a selective sync, so no hooks run).
    pub resources: Vec<SyncResource>,
    /// The retry strategy (`{limit: 5}` when the app has none).
    pub retry: Retry,
    /// Self-heal attempts so far, including this one.
    pub auto_heal_attempts_count: u32,
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[must_use]
pub struct Decision {
    /// Start a sync now.
    pub sync: bool,
    /// Why (the condition, the event text, or the reason for skipping).
    pub message: String,
    /// The sync (or the skip) is a self-heal.
    pub self_heal: bool,
    /// When to look again (self-heal backoff), unix seconds.
    pub next_attempt_at: Option<i64>,
    /// A `SyncError` condition to set; `None` clears it.
    pub condition: Option<String>,
    /// The operation to start.
    pub operation: Option<AutoSyncOperation>,
    /// What the blast-radius guard found, when the input has a guard and the decision got
    /// as far as the guard (after the wipe-out check). A refusal has `sync` false, a
    /// `condition` starting `Skipping sync attempt to [...]: blast-radius guard: `, and the
    /// limits exceeded in [`GuardVerdict::exceeded`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardVerdict>,
}

impl Decision {
    fn skip(message: impl Into<String>) -> Self {
        Decision {
            sync: false,
            message: message.into(),
            self_heal: false,
            next_attempt_at: None,
            condition: None,
            operation: None,
            guard: None,
        }
    }

    fn condition(message: String) -> Self {
        Decision { condition: Some(message.clone()), ..Decision::skip(message) }
    }
}

/// Go's `%s` of a string slice: `[a b]`.
fn go_list(revs: &[String]) -> String {
    format!("[{}]", revs.join(" "))
}

/// Drops what Go's zero values make equal: nulls, empty strings, arrays and objects, false.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let n = normalized(v);
                let empty = match &n {
                    Value::Null => true,
                    Value::Bool(b) => !b,
                    Value::String(s) => s.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::Object(o) => o.is_empty(),
                    Value::Number(n) => n.as_f64() == Some(0.0),
                };
                if !empty {
                    out.insert(k.clone(), n);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

fn str_list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default()
}

/// The revisions given for an application do not match its sources.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RevisionsError {
    /// Not one revision per source.
    #[error(
        "the application has {sources} source{} ({field}) but {given} revision{} {} given: give one revision per source, in spec.sources order",
        if *sources == 1 { "" } else { "s" },
        if *given == 1 { "" } else { "s" },
        if *given == 1 { "was" } else { "were" }
    )]
    Count {
        /// How many sources the application has (1 for `spec.source`).
        sources: usize,
        /// How many revisions were given.
        given: usize,
        /// `spec.sources` or `spec.source`.
        field: &'static str,
    },
}

impl AutoSyncInput {
    /// Checks that `revisions` holds one revision per source of the app, as Argo CD's
    /// `alreadyAttemptedSync` compares them: one for a single-source app, one per entry of
    /// `spec.sources`, in that order, for a multi-source app.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::AutoSyncInput;
    /// use gitops_core::config::Application;
    ///
    /// let app = Application::from_value(&serde_json::json!({
    ///     "metadata": {"name": "a"},
    ///     "spec": {"sources": [{"repoURL": "r1"}, {"repoURL": "r2"}]}
    /// })).unwrap();
    /// assert!(AutoSyncInput::check_revisions(&app, &["abc".into(), "def".into()]).is_ok());
    /// assert_eq!(
    ///     AutoSyncInput::check_revisions(&app, &["abc".into()]).unwrap_err().to_string(),
    ///     "the application has 2 sources (spec.sources) but 1 revision was given: give one revision per source, in spec.sources order"
    /// );
    /// ```
    pub fn check_revisions(app: &Application, revisions: &[String]) -> Result<(), RevisionsError> {
        let (sources, field) = if app.spec.sources.is_empty() {
            (1, "spec.source")
        } else {
            (app.spec.sources.len(), "spec.sources")
        };
        if revisions.len() == sources {
            Ok(())
        } else {
            Err(RevisionsError::Count { sources, given: revisions.len(), field })
        }
    }
}

/// `alreadyAttemptedSync`: whether the last operation already went to the desired revisions
/// with the same sources; returns (attempted, last revisions, last phase).
pub(crate) fn already_attempted(
    app: &Application,
    desired: &[String],
    revisions_may_have_changes: bool,
) -> (bool, Vec<String>, String) {
    let op = &app.status["operationState"];
    if op.is_null() {
        return (false, Vec::new(), String::new());
    }
    let phase = op["phase"].as_str().unwrap_or("").to_string();
    let result = &op["syncResult"];
    if result.is_null() {
        let completed = matches!(phase.as_str(), "Succeeded" | "Failed" | "Error");
        return (completed, Vec::new(), phase);
    }
    let multi = !app.spec.sources.is_empty();
    let last = if multi {
        str_list(&result["revisions"])
    } else {
        vec![result["revision"].as_str().unwrap_or("").to_string()]
    };
    if revisions_may_have_changes {
        let same = if multi {
            last.as_slice() == desired
        } else {
            // `last` has exactly one element in the single-source case.
            desired.len() == 1 && desired[0] == last[0]
        };
        if !same {
            return (false, last, phase);
        }
    }
    let same_source = if multi {
        let saved: Vec<Value> = result["sources"]
            .as_array()
            .map(|a| a.iter().map(normalized).collect())
            .unwrap_or_default();
        let spec: Vec<Value> = app.spec.sources.iter().map(normalized).collect();
        saved == spec
    } else {
        normalized(&result["source"]) == normalized(&app.spec.source)
    };
    (same_source, last, phase)
}

impl Decision {
    /// What Argo CD 3.6.2 logs for an app it skips (`canProcessApp`): the decision's message when
    /// `skip-reconcile` stops it before any automated sync.
    pub const SKIP_RECONCILE_MESSAGE: &str =
        "Skipping Application reconcile based on annotation argocd.argoproj.io/skip-reconcile";

    /// Whether the controller skips the app altogether (`canProcessApp`): its
    /// `argocd.argoproj.io/skip-reconcile` annotation is true as Go's `strconv.ParseBool` reads it
    /// (`true`, `True`, `TRUE`, `t`, `T`, `1`). Any other value, an unreadable one included, is
    /// not a skip (Argo CD logs it at debug level). A skipped app is not compared, not synced and
    /// its operations are not processed.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::Decision;
    /// let app = |v: &str| gitops_core::config::Application::from_value(&serde_json::json!({
    ///     "metadata": {"annotations": {"argocd.argoproj.io/skip-reconcile": v}}})).unwrap();
    /// assert!(Decision::skips_reconcile(&app("True")));
    /// assert!(!Decision::skips_reconcile(&app("yes")));
    /// ```
    pub fn skips_reconcile(app: &Application) -> bool {
        app.metadata
            .annotations
            .get(crate::vocabulary::SKIP_RECONCILE_ANNOTATION)
            .is_some_and(|v| matches!(v.as_str(), "1" | "t" | "T" | "true" | "TRUE" | "True"))
    }
}

impl AutoSyncInput {
    /// Decides whether an automated sync starts now (Argo CD's `autoSync`), in Argo CD's order of
    /// checks: automation enabled, no operation in progress, not being deleted, OutOfSync, not
    /// only prunes with prune off, not already attempted (unless self-heal is due), the
    /// wipe-out guard, and then, when the input has one, the blast-radius guard
    /// ([`BlastRadiusGuard`](super::BlastRadiusGuard)): a sync that would prune more than the guard allows is refused with a
    /// `SyncError` condition, as the wipe-out guard refuses.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::diff::SyncStatus;
    /// use gitops_core::sync::{AutoSyncInput, ResourceStatus};
    /// let app = gitops_core::config::Application::from_value(&serde_json::json!({
    ///     "spec": {"syncPolicy": {"automated": {"prune": true}}}
    /// })).unwrap();
    /// let input = AutoSyncInput::new(SyncStatus::OutOfSync, vec![], vec!["b".repeat(40)], 0);
    /// let d = input.decide(&app);
    /// assert!(!d.sync);
    /// assert_eq!(d.condition.as_deref(), Some(format!(
    ///     "Skipping sync attempt to [{}]: auto-sync will wipe out all resources", "b".repeat(40)).as_str()));
    /// ```
    pub fn decide(&self, app: &Application) -> Decision {
        let input = self;
        let policy = &app.spec.sync_policy;
        let Some(automated) = policy.automated.as_ref().filter(|a| a.enabled != Some(false)) else {
            return Decision::skip("automated sync is not enabled");
        };
        if !app.operation.is_null() {
            return Decision::skip("another operation is in progress");
        }
        if app.metadata.deletion_timestamp.is_some() {
            return Decision::skip("the application is being deleted");
        }
        if input.sync_status != SyncStatus::OutOfSync {
            return Decision::skip("the application is not OutOfSync");
        }
        if !automated.prune
            && input.resources.iter().all(|r| r.status == SyncStatus::Synced || r.requires_pruning)
        {
            return Decision::skip(
                "need to prune extra resources only but automated prune is disabled",
            );
        }
        let desired = &input.revisions;
        let retry = match Retry::from_strategy(policy.retry.as_ref(), 5) {
            Ok(r) => r,
            Err(e) => return Decision::condition(e.to_string()),
        };
        let mut op = AutoSyncOperation {
            revisions: desired.clone(),
            prune: automated.prune,
            sync_options: policy.sync_options.clone(),
            resources: Vec::new(),
            retry,
            auto_heal_attempts_count: 0,
        };
        let (attempted, last, phase) =
            already_attempted(app, desired, input.revisions_may_have_changes);
        let self_heal = attempted;
        if attempted {
            if phase != "Succeeded" {
                let msg = app.status["operationState"]["message"].as_str().unwrap_or("");
                return Decision::condition(format!(
                    "Failed last sync attempt to {}: {msg}",
                    go_list(&last)
                ));
            }
            if !automated.self_heal {
                return Decision::skip(format!("most recent sync already to {}", go_list(desired)));
            }
            if let ControlFlow::Break(backoff) = self_heal_resources(app, input, &mut op) {
                return backoff;
            }
        }
        if automated.prune && !automated.allow_empty && ResourceStatus::wipes_out(&input.resources)
        {
            return Decision::condition(format!(
                "Skipping sync attempt to {}: auto-sync will wipe out all resources",
                go_list(desired)
            ));
        }
        let verdict = match &input.guard {
            None => None,
            Some(guard) => match guard_verdict(guard, app, automated.prune, input) {
                ControlFlow::Continue(verdict) => Some(verdict),
                ControlFlow::Break(refusal) => return refusal,
            },
        };
        Decision {
            sync: true,
            message: format!("Initiated automated sync to '{}'", desired.join(", ")),
            self_heal,
            next_attempt_at: None,
            condition: None,
            operation: Some(op),
            guard: verdict,
        }
    }
}

/// A self-heal of an app already synced to the revisions: the out-of-sync resources become the
/// operation's, and its attempt count grows; or the decision to wait while the self-heal
/// backoff lasts.
fn self_heal_resources(
    app: &Application,
    input: &AutoSyncInput,
    op: &mut AutoSyncOperation,
) -> ControlFlow<Decision> {
    let state = &app.status["operationState"];
    let attempts = state["operation"]["sync"]["autoHealAttemptsCount"].as_u64().unwrap_or(0) as u32;
    let finished = state["finishedAt"].as_str().and_then(|s| parse_rfc3339(s).ok());
    let remaining = input.self_heal.remaining(attempts, finished, input.now);
    if remaining > 0 {
        return ControlFlow::Break(Decision {
            self_heal: true,
            next_attempt_at: Some(input.now.saturating_add(remaining)),
            ..Decision::skip(format!("self-heal backoff: {remaining}s remaining"))
        });
    }
    op.auto_heal_attempts_count = attempts + 1;
    let mut resources: Vec<SyncResource> = input
        .resources
        .iter()
        .filter(|r| r.status != SyncStatus::Synced)
        .map(|r| SyncResource {
            group: r.group.clone(),
            kind: r.kind.clone(),
            name: r.name.clone(),
            namespace: String::new(),
        })
        .collect();
    resources.sort_by(|a, b| (&a.group, &a.kind, &a.name).cmp(&(&b.group, &b.kind, &b.name)));
    resources.dedup();
    op.resources = resources;
    ControlFlow::Continue(())
}

/// The blast-radius guard's verdict on an automated sync, or the decision refusing it (an
/// invalid guard, or prunes beyond its limits).
fn guard_verdict(
    guard: &BlastRadiusGuard,
    app: &Application,
    prune: bool,
    input: &AutoSyncInput,
) -> ControlFlow<Decision, GuardVerdict> {
    let desired = &input.revisions;
    if let Err(e) = guard.check() {
        return ControlFlow::Break(Decision::condition(format!(
            "Skipping sync attempt to {}: blast-radius guard: {e}",
            go_list(desired)
        )));
    }
    let v = guard.assess(app, prune, &input.resources, &input.live);
    if !v.allowed {
        let message = format!(
            "Skipping sync attempt to {}: blast-radius guard: {}",
            go_list(desired),
            v.message
        );
        return ControlFlow::Break(Decision { guard: Some(v), ..Decision::condition(message) });
    }
    ControlFlow::Continue(v)
}
