//! Sync options (gitops-engine pkg/sync/common/types.go, the `SyncOption*` constants): app-level
//! (`syncPolicy.syncOptions` or the operation's list) and per resource
//! (`argocd.argoproj.io/sync-options`), resolved the way Argo CD resolves each.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hooks::{annotation_option_value, has_annotation_option};
use crate::config::SYNC_OPTIONS_ANNOTATION;

/// The field manager of server-side applies.
pub const FIELD_MANAGER: &str = "argocd-controller";

/// How deletes (prunes and hook deletes) propagate to dependents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum PropagationPolicy {
    /// Delete dependents first (Argo CD's default).
    #[default]
    Foreground,
    /// Delete the owner now and the dependents in the background.
    Background,
    /// Leave the dependents.
    Orphan,
}

/// The app-level sync options, an exact-match list (`HasOption`: no trimming, case-sensitive).
///
/// # Examples
///
/// ```
/// use gitops_core::sync::options::{AppOptions, PropagationPolicy};
/// let o = AppOptions::new(vec!["PrunePropagationPolicy=orphan".into(),
///                              "PrunePropagationPolicy=background".into(), "Prune=false".into()]);
/// assert_eq!(o.propagation_policy(), PropagationPolicy::Background);
/// assert_eq!(o.value("Prune"), Some("false"));
/// assert!(!o.has(" Prune=false"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct AppOptions(pub Vec<String>);

impl AppOptions {
    /// Wraps a list.
    pub fn new(options: Vec<String>) -> Self {
        AppOptions(options)
    }

    /// Whether the list holds exactly `option`.
    pub fn has(&self, option: &str) -> bool {
        self.0.iter().any(|o| o == option)
    }

    /// The remainder of the first item starting with `key=` (`GetOptionValue`).
    pub fn value(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|o| o.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }

    /// `PrunePropagationPolicy`: the first of background, foreground, orphan present; else
    /// foreground.
    pub fn propagation_policy(&self) -> PropagationPolicy {
        if self.has("PrunePropagationPolicy=background") {
            PropagationPolicy::Background
        } else if self.has("PrunePropagationPolicy=foreground") {
            PropagationPolicy::Foreground
        } else if self.has("PrunePropagationPolicy=orphan") {
            PropagationPolicy::Orphan
        } else {
            PropagationPolicy::Foreground
        }
    }
}

/// Whether a resource annotation holds `option` exactly.
pub fn resource_has(obj: Option<&Value>, option: &str) -> bool {
    obj.is_some_and(|o| has_annotation_option(o, SYNC_OPTIONS_ANNOTATION, option))
}

/// The resolved `Prune=` value of a prune candidate: the live annotation's value, else the
/// app-level value.
pub fn prune_value<'a>(live: Option<&'a Value>, app: &'a AppOptions) -> Option<&'a str> {
    live.and_then(|l| annotation_option_value(l, SYNC_OPTIONS_ANNOTATION, "Prune"))
        .or_else(|| app.value("Prune"))
}

/// `Prune=false` resolved (gitops-engine pkg/sync/sync_context.go `getSyncTasks`): only the exact
/// value `false` disables pruning.
pub fn prune_disabled(live: Option<&Value>, app: &AppOptions) -> bool {
    prune_value(live, app) == Some("false")
}

/// `Prune=confirm` resolved the same way.
pub fn prune_requires_confirmation(live: Option<&Value>, app: &AppOptions) -> bool {
    prune_value(live, app) == Some("confirm")
}

/// The resolved `Delete=` value: the object's annotation, else the app-level value.
pub fn delete_value<'a>(obj: Option<&'a Value>, app: &'a AppOptions) -> Option<&'a str> {
    obj.and_then(|l| annotation_option_value(l, SYNC_OPTIONS_ANNOTATION, "Delete"))
        .or_else(|| app.value("Delete"))
}

/// At cascade deletion, whether the object is kept (`Delete=false` resolved, or
/// `helm.sh/resource-policy: keep`).
///
/// # Examples
///
/// ```
/// use gitops_core::sync::options::{kept_at_deletion, AppOptions};
/// let obj = |v: &str| serde_json::json!({"metadata": {"annotations":
///     {"argocd.argoproj.io/sync-options": v}}});
/// let app = AppOptions::new(vec!["Delete=false".into()]);
/// assert!(kept_at_deletion(&obj(""), &app));
/// assert!(!kept_at_deletion(&obj("Delete=foo"), &app));
/// ```
pub fn kept_at_deletion(obj: &Value, app: &AppOptions) -> bool {
    delete_value(Some(obj), app) == Some("false")
        || crate::object::annotation(obj, "helm.sh/resource-policy") == Some("keep")
}

/// `isObjRequiresDeletionConfirmation`: `Delete=confirm` or `Prune=confirm`, each resolved
/// from the object's annotation, else the app-level value.
pub fn requires_deletion_confirmation(obj: &Value, app: &AppOptions) -> bool {
    delete_value(Some(obj), app) == Some("confirm")
        || prune_value(Some(obj), app) == Some("confirm")
}

/// `PruneLast=true` for a prune task: app level or the live annotation.
pub fn prune_last(live: Option<&Value>, app: &AppOptions) -> bool {
    app.has("PruneLast=true") || resource_has(live, "PruneLast=true")
}

/// `Replace=true`: app level, target or live annotation. `Replace=false` is not read.
pub fn replace(target: Option<&Value>, live: Option<&Value>, app: &AppOptions) -> bool {
    app.has("Replace=true")
        || resource_has(target, "Replace=true")
        || resource_has(live, "Replace=true")
}

/// `Force=true`: target or live annotation, or the operation's force flag. The app-level
/// option is not read.
pub fn force(target: Option<&Value>, live: Option<&Value>, op_force: bool) -> bool {
    op_force || resource_has(target, "Force=true") || resource_has(live, "Force=true")
}

/// `ServerSideApply`: app level or the target annotation `=true`; a target annotation
/// `ServerSideApply=false` turns it off.
pub fn server_side(target: Option<&Value>, app: &AppOptions) -> bool {
    if resource_has(target, "ServerSideApply=false") {
        return false;
    }
    app.has("ServerSideApply=true") || resource_has(target, "ServerSideApply=true")
}

/// `Validate`: app-level validation unless the target says `Validate=false`.
pub fn validate(target: Option<&Value>, app: &AppOptions) -> bool {
    !app.has("Validate=false") && !resource_has(target, "Validate=false")
}

/// `SkipDryRunOnMissingResource=true`: app level or the target annotation.
pub fn skip_dry_run_on_missing(target: Option<&Value>, app: &AppOptions) -> bool {
    app.has("SkipDryRunOnMissingResource=true")
        || resource_has(target, "SkipDryRunOnMissingResource=true")
}
