//! Health assessment: Argo CD's built-in rules, Lua scripts and app aggregation.
//!
//! [`assess`] gives the health of one object, following Argo CD 3.6.2's `GetResourceHealth`;
//! the first of these with an answer for the kind gives it:
//!
//! 1. a health script, when the host passed a [`ScriptHealth`] engine and it has a script for
//!    the kind (with Lua, [`HealthScripts`]: `argocd-cm`'s exact key, its wildcard
//!    keys, then a `resource_customizations/` folder of the host's). Its result is final,
//!    even an empty one; a script that returns `nil` hands over to step 3;
//! 2. the built-in rule for the kinds Argo CD 3.6.2 ships a Lua health script for
//!    ([`HealthContext::builtin_kinds`], [`builtin_rule`](parts::builtin_rule): cert-manager, Argo Rollouts, Flux, Crossplane...),
//!    written in Rust, with the script's status and message on every input, unless turned
//!    off with [`HealthContext::with_builtin_rules`]; [`HealthContext::BUILTIN_RULES_ARGO_CD`] names the
//!    release they follow;
//! 3. the built-in check for the kind (Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod,
//!    Service, Ingress, PersistentVolumeClaim, Job, HorizontalPodAutoscaler, APIService and
//!    Argo Workflow), with Argo CD's exact messages;
//! 4. with [`HealthContext::with_condition_fallback`], for a custom resource (a kind that is
//!    not built into Kubernetes), its health read from its `observedGeneration` and conditions;
//! 5. otherwise no health (`None`).
//!
//! A failing script, rule or check makes the object Unknown with its error. An object being
//! deleted (`metadata.deletionTimestamp`, without Argo CD's hook finalizer) is Progressing,
//! `Pending deletion`, naming the pending finalizers when there are any, unless its script or
//! rule returned a `deletionMessage`: then that script's status with the `deletionMessage`.
//!
//! [`AppHealth::aggregate`] rolls the health of an application's resources up into the app's health,
//! the worst status winning, with Argo CD's "Caused by" message.
//!
//! Time is an argument: [`HealthContext::now`] is the only clock scripts see. The built-in
//! checks read no time at all: like Argo CD, they trust the conditions the Kubernetes
//! controllers write (a Deployment past its `progressDeadlineSeconds` is Degraded once its
//! controller sets the `ProgressDeadlineExceeded` reason, a Job past its
//! `activeDeadlineSeconds` once it has a `Failed` condition).
//!
//! # Examples
//!
//! ```
//! use gitops_core::health::{self, HealthContext, HealthStatus};
//!
//! let deployment = serde_json::json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "api", "namespace": "bookstore", "generation": 2},
//!     "spec": {"replicas": 3},
//!     "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
//!                "availableReplicas": 1},
//! });
//! let ctx = HealthContext::new(0); // the time, unix seconds
//! let h = health::assess(&deployment, &ctx).unwrap().unwrap();
//! assert_eq!(h.status, HealthStatus::Progressing);
//! assert_eq!(h.message, "Waiting for rollout to finish: 1 of 3 updated replicas are available...");
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::object::ObjectRef;

mod apiservice;
mod app;
mod application;
mod builtin;
mod daemonset;
mod deployment;
mod fallback;
mod fields;
mod hpa;
mod ingress;
mod job;
pub(crate) mod kinds;
mod pod;
mod pvc;
mod replicaset;
mod scripts;
mod seam;
mod service;
mod statefulset;
mod workflow;

// The face of `health`: every public item has this one path. The submodules are private;
// the pieces a host assembles itself are in `parts`.
pub(crate) use app::format_causes;
pub use app::{AppHealth, ResourceHealth, ResourceHealthInput};
pub(crate) use app::{all_missing, contribution};
#[cfg(test)]
pub(crate) use application::is_application_itself;
pub(crate) use builtin::builtin;
pub(crate) use fallback::condition_health;
pub use scripts::HealthScripts;
#[cfg(feature = "lua")]
#[cfg_attr(docsrs, doc(cfg(feature = "lua")))]
pub use scripts::{HealthTestCase, HealthTestError, ScriptedHealth, assess_lua};
use seam::{ScriptHealth, ScriptOutput};

/// The expert layer of `health`: the pieces [`assess`] is made of, for a host that assembles
/// its own (its own script engine, one built-in rule alone). Most hosts need only [`assess`],
/// [`assess_lua`] or [`ScriptedHealth`].
pub mod parts {
    pub use super::builtin::builtin_rule;
    pub use super::scripts::HealthScript;
    pub use super::seam::{ScriptHealth, ScriptOutput};
}

/// A health status code, ordered from most to least healthy (Argo CD's severity order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum HealthStatus {
    /// Fully healthy.
    Healthy,
    /// Paused or suspended, waiting for an outside event.
    Suspended,
    /// Not healthy yet, but may still get there.
    Progressing,
    /// Not in the cluster.
    Missing,
    /// Failed, or could not get healthy.
    Degraded,
    /// The health check itself failed.
    Unknown,
}

impl HealthStatus {
    /// Every status, from most to least healthy.
    pub const ALL: [HealthStatus; 6] = [
        HealthStatus::Healthy,
        HealthStatus::Suspended,
        HealthStatus::Progressing,
        HealthStatus::Missing,
        HealthStatus::Degraded,
        HealthStatus::Unknown,
    ];

    /// The index in Argo CD's severity order: Healthy 0, Suspended 1, Progressing 2,
    /// Missing 3, Degraded 4, Unknown 5.
    ///
    /// ```
    /// use gitops_core::health::HealthStatus;
    /// assert!(HealthStatus::Degraded.severity() > HealthStatus::Missing.severity());
    /// ```
    pub fn severity(self) -> u8 {
        match self {
            HealthStatus::Healthy => 0,
            HealthStatus::Suspended => 1,
            HealthStatus::Progressing => 2,
            HealthStatus::Missing => 3,
            HealthStatus::Degraded => 4,
            HealthStatus::Unknown => 5,
        }
    }

    /// Whether `new` is worse than `self` (Argo CD's `IsWorse`).
    pub fn is_worse(self, new: HealthStatus) -> bool {
        new.severity() > self.severity()
    }

    /// The code as Argo CD spells it: `Healthy`, `Progressing`...
    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Healthy => "Healthy",
            HealthStatus::Suspended => "Suspended",
            HealthStatus::Progressing => "Progressing",
            HealthStatus::Missing => "Missing",
            HealthStatus::Degraded => "Degraded",
            HealthStatus::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses one of the six codes, case-sensitively, as Argo CD does.
///
/// ```
/// use gitops_core::health::HealthStatus;
/// assert_eq!("Degraded".parse(), Ok(HealthStatus::Degraded));
/// assert!("degraded".parse::<HealthStatus>().is_err());
/// ```
impl FromStr for HealthStatus {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HealthStatus::ALL
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| UnknownStatus { status: s.to_string() })
    }
}

/// A string that is not one of the six health codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown health status `{status}`")]
#[non_exhaustive]
pub struct UnknownStatus {
    /// The string.
    pub status: String,
}

/// A health status with its message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct HealthResult {
    /// The status.
    pub status: HealthStatus,
    /// The message, empty when there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl HealthResult {
    /// A result with a message.
    ///
    /// ```
    /// use gitops_core::health::{HealthResult, HealthStatus};
    /// let h = HealthResult::new(HealthStatus::Suspended, "Job suspended");
    /// assert_eq!(h.to_string(), "Suspended (Job suspended)");
    /// ```
    pub fn new(status: HealthStatus, message: impl Into<String>) -> Self {
        HealthResult { status, message: message.into() }
    }

    /// A result without a message.
    pub fn status(status: HealthStatus) -> Self {
        HealthResult { status, message: String::new() }
    }
}

/// `Status`, or `Status (message)` when there is a message.
impl fmt::Display for HealthResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.status)
        } else {
            write!(f, "{} ({})", self.status, self.message)
        }
    }
}

/// A health check that failed. The object's health is then Unknown with the error's text
/// as message ([`HealthError::health`]), as in Argo CD, which reports both.
///
/// The texts of the built-in checks are Argo CD's (`unsupported HPA GVK: ...`,
/// `failed to convert unstructured Deployment to typed: ...`); the part after the colon of a
/// conversion error is this crate's own, naming the field by its RFC 6901 pointer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HealthError {
    /// A built-in check does not take this version of its kind.
    #[error("unsupported {check} GVK: {gvk}")]
    UnsupportedVersion {
        /// The object.
        object: Box<ObjectRef>,
        /// The check's name: `Deployment`, `HPA`...
        check: &'static str,
        /// `group/version, Kind=Kind`.
        gvk: String,
    },
    /// A field the check reads has the wrong type.
    #[error(
        "failed to convert unstructured {check} to typed: {pointer}: expected {expected}, found {found}"
    )]
    Convert {
        /// The object.
        object: Box<ObjectRef>,
        /// The check's name.
        check: &'static str,
        /// RFC 6901 pointer of the field.
        pointer: String,
        /// The type the field must have: `an integer`, `a string`...
        expected: &'static str,
        /// The type found.
        found: &'static str,
    },
    /// The `autoscaling.alpha.kubernetes.io/conditions` annotation of a v1 HPA is not a JSON
    /// list of conditions.
    #[error("failed to convert conditions annotation to typed: {message}")]
    HpaConditions {
        /// The object.
        object: Box<ObjectRef>,
        /// What is wrong.
        message: String,
    },
    /// A health script failed: it did not compile, raised an error, went past its limits or
    /// returned something that is not a health. `message` is the text Argo CD shows (for
    /// example `<string>:4: attempt to index a nil value`).
    #[error("{message}")]
    Script {
        /// The object.
        object: Box<ObjectRef>,
        /// Where the script comes from, e.g. `argocd-cm resource.customizations.health.argoproj.io_Rollout`
        /// or `argoproj.io/Rollout/health.lua`.
        script: String,
        /// The error text.
        message: String,
    },
    /// The host's interrupt (the CLI's and `serve`'s wall-clock backstop of 1 s) stopped a
    /// health script: a stop by the clock, not by the deterministic counts, so no health is
    /// decided from it. Callers report it as an error and may retry; [`AppHealth::aggregate`] puts it
    /// first in [`AppHealth::error`], and [`AppHealth::interrupted`] finds it.
    #[error(
        "{script} on {object}: {message}; no health was given (the host's backstop, not a limit of the input: retry)"
    )]
    Interrupted {
        /// The object.
        object: Box<ObjectRef>,
        /// Where the script comes from.
        script: String,
        /// The interrupt's reason, e.g. `stopped by the host: deadline of 1000 ms exceeded`.
        message: String,
    },
}

impl HealthError {
    /// A script failure (see [`HealthError::Script`]).
    pub fn script(
        object: &ObjectRef,
        script: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        HealthError::Script {
            object: Box::new(object.clone()),
            script: script.into(),
            message: message.into(),
        }
    }

    /// The object whose health failed.
    pub fn object(&self) -> &ObjectRef {
        match self {
            HealthError::UnsupportedVersion { object, .. }
            | HealthError::Convert { object, .. }
            | HealthError::HpaConditions { object, .. }
            | HealthError::Script { object, .. }
            | HealthError::Interrupted { object, .. } => object,
        }
    }

    /// The RFC 6901 pointer of the field at fault, when one is.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            HealthError::Convert { pointer, .. } => Some(pointer),
            HealthError::HpaConditions { .. } => {
                Some("/metadata/annotations/autoscaling.alpha.kubernetes.io~1conditions")
            }
            HealthError::UnsupportedVersion { .. } => Some("/apiVersion"),
            HealthError::Script { .. } | HealthError::Interrupted { .. } => None,
        }
    }

    /// The health Argo CD gives the object: Unknown, with this error's text.
    pub fn health(&self) -> HealthResult {
        HealthResult::new(HealthStatus::Unknown, self.to_string())
    }
}

/// What [`assess`] needs besides the object: the time and the script engine (and, for
/// [`ResourceHealthInput::from_objects`], the Application being assessed).
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct HealthContext<'a> {
    /// The current time as the host sees it, in unix seconds (the crate's one time type, as in
    /// `sync` and `sync::AutoSyncInput::decide`); scripts read it through `os.time()`.
    pub now: i64,
    /// The health scripts, if any.
    pub scripts: Option<&'a dyn ScriptHealth>,
    /// The Application whose health is being aggregated, if known: a live object that is
    /// this Application itself (same UID, name and namespace) is left out of its health.
    pub app: Option<&'a Value>,
    /// Opt-in: a custom resource with no script and no built-in check gets its health from
    /// its `observedGeneration` and conditions instead of none.
    pub condition_fallback: bool,
    /// The built-in rules for the kinds Argo CD ships a health script for ([`builtin_rule`](parts::builtin_rule)):
    /// on by default, after the host's scripts, as Argo CD's own scripts come after
    /// `argocd-cm`'s.
    pub builtin_rules: bool,
}

impl<'a> HealthContext<'a> {
    /// The Argo CD release whose health scripts the built-in rules follow
    /// ([`builtin_rule`](parts::builtin_rule), [`HealthContext::with_builtin_rules`]).
    pub const BUILTIN_RULES_ARGO_CD: &'static str = "3.6.2";

    /// The folders (`<group>/<Kind>`, `_` a wildcard) of every built-in rule, sorted: the kinds
    /// Argo CD 3.6.2 ships a health script for.
    pub fn builtin_kinds() -> Vec<String> {
        let mut names: Vec<String> =
            kinds::CATALOG.iter().flat_map(|g| g.iter()).map(|r| r.name()).collect();
        names.sort();
        names
    }

    /// A context at `now` (unix seconds), without scripts: built-in checks only.
    pub fn new(now: i64) -> Self {
        HealthContext {
            now,
            scripts: None,
            app: None,
            condition_fallback: false,
            builtin_rules: true,
        }
    }

    /// The same context with the built-in rules ([`builtin_rule`](parts::builtin_rule)) turned on or off (on by
    /// default): off, only the host's scripts and the built-in checks of Kubernetes' own kinds
    /// give health.
    pub fn with_builtin_rules(self, on: bool) -> Self {
        HealthContext { builtin_rules: on, ..self }
    }

    /// The same context with a script engine.
    pub fn with_scripts(self, scripts: &'a dyn ScriptHealth) -> Self {
        HealthContext { scripts: Some(scripts), ..self }
    }

    /// The same context with the condition-based fallback for custom resources turned on or
    /// off (off by default, as in Argo CD).
    pub fn with_condition_fallback(self, on: bool) -> Self {
        HealthContext { condition_fallback: on, ..self }
    }

    /// The same context for the health of the Application `app`.
    pub fn with_app(self, app: &'a Value) -> Self {
        HealthContext { app: Some(app), ..self }
    }
}

impl fmt::Debug for HealthContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HealthContext")
            .field("now", &self.now)
            .field("scripts", &self.scripts.map(|_| "..."))
            .field("app", &self.app.map(ObjectRef::from_object_lossy))
            .field("condition_fallback", &self.condition_fallback)
            .field("builtin_rules", &self.builtin_rules)
            .finish()
    }
}

/// `metadata.finalizers` as Go's `GetFinalizers` reads it: every item when all are strings
/// (empty ones included), none when the field is not a list of strings.
fn finalizers(obj: &Value) -> Vec<&str> {
    let Some(items) = obj.pointer("/metadata/finalizers").and_then(Value::as_array) else {
        return Vec::new();
    };
    items.iter().map(Value::as_str).collect::<Option<Vec<&str>>>().unwrap_or_default()
}

/// The health of an object being deleted that no script gave a `deletionMessage` for:
/// Progressing, `Pending deletion`, or `Pending deletion; blocked by finalizers: a, b` while
/// it has finalizers.
fn pending_deletion(obj: &Value) -> HealthResult {
    let finalizers = finalizers(obj);
    let message = if finalizers.is_empty() {
        "Pending deletion".to_string()
    } else {
        format!("Pending deletion; blocked by finalizers: {}", finalizers.join(", "))
    };
    HealthResult::new(HealthStatus::Progressing, message)
}

/// Whether the object is being deleted as Argo CD's `pendingDeletionHealth` reads it:
/// `metadata.deletionTimestamp` is an RFC 3339 time other than Go's zero time (a value that is
/// not such a string reads as no timestamp), and `metadata.finalizers` does not hold the hook
/// finalizer.
fn is_being_deleted(obj: &Value) -> bool {
    /// Go's zero `time.Time`, 0001-01-01T00:00:00Z, in unix seconds.
    const GO_ZERO_TIME: i64 = -62_135_596_800;
    let stamp = obj.pointer("/metadata/deletionTimestamp").and_then(Value::as_str);
    let set = stamp
        .and_then(crate::vocabulary::parse_rfc3339_parts)
        .is_some_and(|(secs, nanos)| (secs, nanos) != (GO_ZERO_TIME, 0));
    set && !finalizers(obj).contains(&crate::vocabulary::HOOK_FINALIZER)
}

/// The health of one object (Argo CD 3.6.2's `GetResourceHealth`).
///
/// - `Ok(Some(health))`: the object's health;
/// - `Ok(None)`: no health: no script, no built-in rule and no built-in check for the kind
///   (and no condition fallback for it), or a script returned Argo CD's empty health;
/// - `Err(e)`: the check failed; the object's health is `e.health()` (Unknown with the error
///   text).
///
/// The first of these that has an answer for the kind gives it:
///
/// 1. the host's scripts ([`HealthContext::with_scripts`]): with Lua, `argocd-cm`'s exact
///    key, then its glob keys, then a `resource_customizations/` folder the host passed
///    ([`HealthScripts`]);
/// 2. the built-in rules for the kinds Argo CD 3.6.2 ships a script for ([`builtin_rule`](parts::builtin_rule):
///    exact group and kind, then the wildcard folders), unless turned off with
///    [`HealthContext::with_builtin_rules`];
/// 3. the built-in checks of Kubernetes' kinds;
/// 4. with [`HealthContext::with_condition_fallback`], the conditions of a custom resource.
///
/// A script's answer is final, even the empty health; a script that returns `nil` gives no
/// answer and the built-in check of step 3 runs, as in Argo CD. A failing script or check is
/// an error, also for an object being deleted.
///
/// An object being deleted (a `metadata.deletionTimestamp`, without the
/// `argocd.argoproj.io/hook-finalizer`) takes, when a script or rule returned a
/// `deletionMessage`, that script's status with the `deletionMessage`; otherwise it is
/// Progressing, `Pending deletion`, or `Pending deletion; blocked by finalizers: <finalizers>`
/// while it has finalizers, whatever its kind.
///
/// Never panics, on any value.
///
/// # Examples
///
/// ```
/// use gitops_core::health::{self, HealthContext, HealthStatus};
///
/// let ctx = HealthContext::new(0);
/// let cm = serde_json::json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "c", "deletionTimestamp": "2024-01-01T00:00:00Z",
///                  "finalizers": ["example.com/cleanup"]}});
/// let h = health::assess(&cm, &ctx).unwrap().unwrap();
/// assert_eq!(h.status, HealthStatus::Progressing);
/// assert_eq!(h.message, "Pending deletion; blocked by finalizers: example.com/cleanup");
///
/// // A kind Argo CD ships a health script for, assessed by its built-in rule:
/// let certificate = serde_json::json!({
///     "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
///     "metadata": {"name": "tls"},
///     "status": {"conditions": [{"type": "Ready", "status": "True",
///                                "message": "Certificate is up to date and has not expired"}]}});
/// let h = health::assess(&certificate, &ctx).unwrap().unwrap();
/// assert_eq!(h.status, HealthStatus::Healthy);
/// // Without the built-in rules, Argo CD's kinds of Kubernetes only:
/// assert_eq!(health::assess(&certificate, &ctx.with_builtin_rules(false)), Ok(None));
///
/// let hpa = serde_json::json!({
///     "apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler",
///     "metadata": {"name": "h"}});
/// let err = health::assess(&hpa, &ctx).unwrap_err();
/// assert_eq!(err.to_string(),
///     "unsupported HPA GVK: autoscaling/v2beta2, Kind=HorizontalPodAutoscaler");
/// assert_eq!(err.health().status, HealthStatus::Unknown);
/// ```
pub fn assess(obj: &Value, ctx: &HealthContext<'_>) -> Result<Option<HealthResult>, HealthError> {
    let object = ObjectRef::from_object_lossy(obj);
    let deleting = is_being_deleted(obj);
    match scripted(obj, &object, ctx)? {
        Scripted::Answer(out) if deleting => {
            return Ok(Some(match out.health {
                Some(h) if !out.deletion_message.is_empty() => {
                    HealthResult::new(h.status, out.deletion_message)
                }
                _ => pending_deletion(obj),
            }));
        }
        Scripted::Answer(out) => return Ok(out.health),
        Scripted::Nil => {
            let health = builtin(obj, &object)?;
            return Ok(if deleting { Some(pending_deletion(obj)) } else { health });
        }
        Scripted::None => {}
    }
    let health = match builtin(obj, &object)? {
        Some(h) => Some(h),
        None if ctx.condition_fallback
            && !crate::schema::is_builtin(&object.group, &object.version, &object.kind) =>
        {
            // The fallback is this crate's own: an object being deleted is pending deletion
            // before its conditions are read.
            if deleting {
                return Ok(Some(pending_deletion(obj)));
            }
            Some(condition_health(obj, &object)?)
        }
        None => None,
    };
    Ok(if deleting { Some(pending_deletion(obj)) } else { health })
}

/// What the scripts say about an object.
enum Scripted {
    /// A script ran and answered (the empty health included): final.
    Answer(ScriptOutput),
    /// A script ran and returned `nil`: no answer, and no other script either; the built-in
    /// check decides.
    Nil,
    /// No script for the kind.
    None,
}

/// The answer of a script for the object: the host's scripts first, then the built-in rules
/// (when on). Like Argo CD, which finds one script per kind, a host script that returns `nil`
/// does not hand over to the built-in rule.
fn scripted(
    obj: &Value,
    object: &ObjectRef,
    ctx: &HealthContext<'_>,
) -> Result<Scripted, HealthError> {
    if let Some(scripts) = ctx.scripts
        && let Some(out) = scripts.health(obj, object, ctx.now)?
    {
        return Ok(if out.returned_nil { Scripted::Nil } else { Scripted::Answer(out) });
    }
    if ctx.builtin_rules
        && let Some(out) = kinds::evaluate(obj, object)
    {
        return out.map(Scripted::Answer);
    }
    Ok(Scripted::None)
}
