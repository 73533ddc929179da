//! An application's health from its resources' (Argo CD's `setApplicationHealth`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::application::{is_application, is_application_itself};
use super::{HealthContext, HealthError, HealthResult, HealthStatus, assess};
use crate::object::{ObjectRef, annotation};
use crate::vocabulary::{IGNORE_HEALTHCHECK_ANNOTATION, is_hook, is_skip};

/// One managed resource of an application, as [`AppHealth::aggregate`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceHealthInput {
    /// The resource.
    pub object: ObjectRef,
    /// Whether the live object exists. A resource without one is Missing.
    pub live: bool,
    /// Whether the resource is left out entirely: the desired manifest is only a `Skip` hook,
    /// or the live object is a hook.
    pub hook: bool,
    /// Whether the resource counts as present but its health is ignored: the live object has
    /// `argocd.argoproj.io/ignore-healthcheck: "true"`, or it is the Application itself.
    pub ignore_health: bool,
    /// The live object's health ([`assess`]); `None` for no health. Ignored when `live` is
    /// false.
    pub health: Option<HealthResult>,
    /// The error of the live object's health check, if it failed (`health` is then Unknown).
    pub error: Option<HealthError>,
}

impl ResourceHealthInput {
    /// A live resource with the given health, neither hook nor ignored.
    pub fn new(object: ObjectRef, health: Option<HealthResult>) -> Self {
        ResourceHealthInput {
            object,
            live: true,
            hook: false,
            ignore_health: false,
            health,
            error: None,
        }
    }

    /// A resource that is desired but not live.
    pub fn missing(object: ObjectRef) -> Self {
        ResourceHealthInput { live: false, ..ResourceHealthInput::new(object, None) }
    }

    /// The input for a resource from its desired manifest and its live object, assessing the
    /// live object with `ctx`. `None` when both are `None`. A live object that is the
    /// Application of `ctx.app` itself is ignored.
    ///
    /// ```
    /// use gitops_core::health::{AppHealth, HealthContext, ResourceHealthInput};
    /// use gitops_core::health::HealthStatus;
    ///
    /// let job = serde_json::json!({"apiVersion": "batch/v1", "kind": "Job",
    ///     "metadata": {"name": "migrate", "namespace": "shop"},
    ///     "status": {"conditions": [{"type": "Failed", "status": "True",
    ///                                "message": "Job has reached the specified backoff limit"}]}});
    /// let ctx = HealthContext::new(0);
    /// let input = ResourceHealthInput::from_objects(Some(&job), Some(&job), &ctx).unwrap();
    /// let app = AppHealth::aggregate(&[input]);
    /// assert_eq!(app.status, HealthStatus::Degraded);
    /// assert_eq!(app.message, "Caused by batch/Job:shop/migrate");
    /// ```
    pub fn from_objects(
        target: Option<&Value>,
        live: Option<&Value>,
        ctx: &HealthContext<'_>,
    ) -> Option<Self> {
        let object = ObjectRef::from_object_lossy(live.or(target)?);
        let mut input = ResourceHealthInput::missing(object);
        input.hook = target.is_some_and(is_skip) || live.is_some_and(is_hook);
        if let Some(live) = live {
            input.live = true;
            input.ignore_health = annotation(live, IGNORE_HEALTHCHECK_ANNOTATION) == Some("true")
                || ctx.app.is_some_and(|app| is_application_itself(app, live));
            if !input.hook && !input.ignore_health {
                match assess(live, ctx) {
                    Ok(h) => input.health = h,
                    Err(e) => {
                        input.health = Some(e.health());
                        input.error = Some(e);
                    }
                }
            }
        }
        Some(input)
    }
}

/// A resource's health as recorded on the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceHealth {
    /// The resource.
    pub object: ObjectRef,
    /// Its health; `None` when it has none (no check, a hook, ignored).
    pub health: Option<HealthResult>,
}

/// An application's health.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AppHealth {
    /// The worst status among the resources that count.
    pub status: HealthStatus,
    /// `Caused by <resource>, ...` naming up to three resources with that status, empty for a
    /// Healthy app and for an app whose resources are all missing.
    pub message: String,
    /// Every input resource with the health recorded for it, sorted by group, kind,
    /// namespace and name.
    pub resources: Vec<ResourceHealth>,
    /// The first failed health check, in that order. Argo CD turns it into a
    /// `ComparisonError` condition: see [`AppHealth::error_message`].
    #[serde(skip)]
    pub error: Option<HealthError>,
}

impl AppHealth {
    /// An application's health from its resources' (Argo CD's `setApplicationHealth`).
    ///
    /// The resources are taken sorted by group, kind, namespace, name and version, so the result
    /// does not depend on their order. For each:
    /// hooks are left out; a resource with `ignore_health` or without health counts as present
    /// but adds no status; a resource that is not live is Missing but only counts through the
    /// "everything is missing" rule; a child Application that is Missing or Unknown is ignored.
    /// The worst status wins (Healthy, Suspended, Progressing, Missing, Degraded, Unknown), and the
    /// message names the resources with that status. When no resource is live (and there is at
    /// least one that is not a hook), the app is Missing with an empty message, unless something
    /// is worse.
    ///
    /// ```
    /// use gitops_core::health::{HealthResult, HealthStatus};
    /// use gitops_core::object::ObjectRef;
    /// use gitops_core::health::{AppHealth, ResourceHealthInput};
    ///
    /// let api = ObjectRef::new("apps", "v1", "Deployment", "bookstore-dev", "api");
    /// let db = ObjectRef::new("apps", "v1", "StatefulSet", "bookstore-dev", "db");
    /// let app = AppHealth::aggregate(&[
    ///     ResourceHealthInput::new(db, Some(HealthResult::status(HealthStatus::Healthy))),
    ///     ResourceHealthInput::new(api, Some(HealthResult::new(HealthStatus::Degraded,
    ///         "Deployment \"api\" exceeded its progress deadline"))),
    /// ]);
    /// assert_eq!(app.status, HealthStatus::Degraded);
    /// assert_eq!(app.message, "Caused by apps/Deployment:bookstore-dev/api");
    /// ```
    pub fn aggregate(resources: &[ResourceHealthInput]) -> AppHealth {
        aggregate(resources)
    }

    /// The stop of a health script by the host's backstop ([`HealthError::Interrupted`]), if
    /// one was stopped: the statuses are then no verdict, and the caller reports this error
    /// instead (and may retry).
    pub fn interrupted(&self) -> Option<&HealthError> {
        self.error.as_ref().filter(|e| matches!(e, HealthError::Interrupted { .. }))
    }

    /// Argo CD's condition message for [`AppHealth::error`]:
    /// `error setting app health: failed to get resource health for "<Kind>" with name
    /// "<name>" in namespace "<ns>": failed to get resource health for <ns>/<name>: <error>`.
    pub fn error_message(&self) -> Option<String> {
        let e = self.error.as_ref()?;
        let o = e.object();
        Some(format!(
            "error setting app health: failed to get resource health for {:?} with name {:?} in namespace {:?}: failed to get resource health for {}/{}: {e}",
            o.kind, o.name, o.namespace, o.namespace, o.name
        ))
    }
}

/// Argo CD's "Caused by" message: each resource as `group/Kind:namespace/name` (no `group/`
/// for the core group, no `namespace/` when cluster-scoped), the first three joined with
/// `, `, then ` and <n> more`; empty for no resources.
pub(crate) fn format_causes(causes: &[&ObjectRef]) -> String {
    if causes.is_empty() {
        return String::new();
    }
    let named: Vec<String> = causes.iter().take(3).map(|o| o.to_string()).collect();
    let mut out = format!("Caused by {}", named.join(", "));
    if causes.len() > 3 {
        out.push_str(&format!(" and {} more", causes.len() - 3));
    }
    out
}

/// [`AppHealth::aggregate`].
fn aggregate(resources: &[ResourceHealthInput]) -> AppHealth {
    let mut sorted: Vec<&ResourceHealthInput> = resources.iter().collect();
    sorted.sort_by(|a, b| a.object.cmp(&b.object));

    let mut status = HealthStatus::Healthy;
    let mut causes: Vec<&ObjectRef> = Vec::new();
    let mut contains_resources = false;
    let mut contains_live = false;
    let mut error = None;
    let mut recorded = Vec::with_capacity(sorted.len());

    for r in sorted {
        let c = contribution(r);
        recorded.push(ResourceHealth { object: r.object.clone(), health: c.recorded });
        if !c.counts {
            continue;
        }
        contains_resources = true;
        contains_live |= c.live;
        // An interrupted check comes first: with it the answer is no verdict.
        let interrupted =
            |e: Option<&HealthError>| matches!(e, Some(HealthError::Interrupted { .. }));
        if error.is_none() || (interrupted(c.error) && !interrupted(error.as_ref())) {
            error = c.error.cloned().or(error);
        }
        let Some(s) = c.status else { continue };
        if status.is_worse(s) {
            status = s;
            causes = vec![&r.object];
        } else if s == status && status != HealthStatus::Healthy {
            causes.push(&r.object);
        }
    }

    if all_missing(contains_resources, contains_live, status) {
        status = HealthStatus::Missing;
        causes.clear();
    }
    AppHealth { status, message: format_causes(&causes), resources: recorded, error }
}

/// The "everything is missing" rule: resources that count, none live, and nothing worse than
/// Missing make the app Missing with no causes.
pub(crate) fn all_missing(
    contains_resources: bool,
    contains_live: bool,
    status: HealthStatus,
) -> bool {
    contains_resources && !contains_live && status.is_worse(HealthStatus::Missing)
}

/// What one resource adds to its app's health ([`aggregate`]'s rule for one resource).
pub(crate) struct Contribution<'r> {
    /// The health recorded for it on the app.
    pub(crate) recorded: Option<HealthResult>,
    /// Whether it counts at all (not a hook).
    pub(crate) counts: bool,
    /// Whether it counts as live.
    pub(crate) live: bool,
    /// Its failed health check, when that counts.
    pub(crate) error: Option<&'r HealthError>,
    /// The status it ranks with, when it ranks.
    pub(crate) status: Option<HealthStatus>,
}

/// One resource's [`Contribution`]: hooks are left out; a live resource with `ignore_health`
/// or without health adds no status; a resource that is not live is recorded Missing but
/// does not rank; a child Application that is Missing or Unknown does not rank.
pub(crate) fn contribution(r: &ResourceHealthInput) -> Contribution<'_> {
    let mut c =
        Contribution { recorded: None, counts: false, live: r.live, error: None, status: None };
    if r.hook {
        c.live = false;
        return c;
    }
    c.counts = true;
    if r.live && r.ignore_health {
        return c;
    }
    if r.live {
        c.error = r.error.as_ref();
    }
    c.recorded =
        if r.live { r.health.clone() } else { Some(HealthResult::status(HealthStatus::Missing)) };
    let Some(s) = c.recorded.as_ref().map(|h| h.status) else { return c };
    if !r.live && s == HealthStatus::Missing {
        return c;
    }
    if is_application(&r.object) && matches!(s, HealthStatus::Missing | HealthStatus::Unknown) {
        return c;
    }
    c.status = Some(s);
    c
}
