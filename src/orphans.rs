//! Orphaned resources, as Argo CD's controller finds them for an AppProject with
//! `spec.orphanedResources`.
//!
//! An orphan is an object of the app's destination namespace that no application owns: a
//! top-level object (no `ownerReferences`) that is not one of the app's resources
//! ([`crate::ownership::ManagedLive::new`]) and whose tracking names no other application, with
//! the objects it owns (found through `ownerReferences` uids), minus
//!
//! - what every namespace holds: the `default` ServiceAccount, the `kube-root-ca.crt`
//!   ConfigMap, the `kubernetes` Service of `default`;
//! - the project's `orphanedResources.ignore` entries (`group` glob, `kind` glob or empty for
//!   any, `name` glob or empty for any);
//! - kinds the settings exclude ([`crate::config::Settings::excludes`]) and objects whose labels do
//!   not match `resource.selectors` ([`crate::config::Settings::label_selector`]), which Argo CD does
//!   not watch;
//! - what the project does not permit ([`AppProject::permits_resource`]): a top-level object
//!   whose kind the namespaced resource lists leave out, and any object (an owned one too,
//!   whose own children are then not visited) whose kind the lists leave out (a cluster-scoped
//!   child needs `clusterResourceWhitelist`) or whose namespace is not one of the project's
//!   destinations on the app's cluster.
//!
//! With `orphanedResources.warn: true` and at least one orphan, the app gets the
//! `OrphanedResourceWarning` condition "Application has N orphaned resources".
//!
//! An object whose tracking names an application belongs to it only when that application
//! exists (Argo CD 3.6.2 controller/appcontroller.go `getResourceTree`: the app informer's
//! `GetByKey(toAppKey(appName))`); the app itself always exists. The host that knows its apps
//! passes their keys (`<namespace>/<name>`, or `<name>` for an app in
//! [`Settings::namespace`]); a host that passes none gets every tracked object counted as its
//! app's, whether or not that app exists.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{Application, Settings};
use crate::diff::Condition;
use crate::glob::glob_match;
use crate::object::{ObjectRef, Scopes};
use crate::ownership::{ManagedLive, excluded, live_ref, pair_key};
use crate::project::{AppProject, OrphanedResourcesSettings};

/// The orphans of an app's namespace and the condition they raise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Orphans {
    /// The orphaned objects, sorted.
    pub resources: Vec<ObjectRef>,
    /// `OrphanedResourceWarning`, when the project warns and there are orphans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
}

/// The key Argo CD's app informer knows an app by (`toAppKey`): `<namespace>/<name>` as
/// written, `<namespace>_<name>` (an instance name) with `/`, a bare name in `controller_ns`.
fn app_key(name: &str, controller_ns: &str) -> String {
    if name.contains('/') {
        name.to_string()
    } else if name.contains('_') {
        name.replace('_', "/")
    } else {
        format!("{controller_ns}/{name}")
    }
}

/// Whether every namespace holds the object, or the project ignores it
/// (`isKnownOrphanedResourceExclusion`).
fn ignored(r: &ObjectRef, settings: &OrphanedResourcesSettings) -> bool {
    let core = r.group.is_empty();
    if (core && r.kind == "Service" && r.name == "kubernetes" && r.namespace == "default")
        || (core && r.kind == "ServiceAccount" && r.name == "default")
        || (core && r.kind == "ConfigMap" && r.name == "kube-root-ca.crt")
    {
        return true;
    }
    settings.ignore.iter().any(|i| {
        (i.kind.is_empty() || glob_match(&i.kind, &r.kind))
            && glob_match(&i.group, &r.group)
            && (i.name.is_empty() || glob_match(&i.name, &r.name))
    })
}

impl Orphans {
    /// The orphaned resources of `app`'s destination namespace among `live` (the objects the host
    /// found there and the app's own), given the app's `desired` objects and the project's
    /// `orphanedResources` and permissions (see the module documentation), and, where the host
    /// knows them, the `apps` that exist (`<namespace>/<name>` or `<name>`). A project without
    /// `orphanedResources`: no orphans.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::config::{Application, Settings};
    /// use gitops_core::object::Scopes;
    /// use gitops_core::orphans::Orphans;
    /// use serde_json::json;
    /// let app = Application::from_value(&json!({"metadata": {"name": "shop"},
    ///     "spec": {"destination": {"namespace": "shop"}}})).unwrap();
    /// let project = gitops_core::project::AppProject::from_value(&json!({"kind": "AppProject",
    ///     "spec": {"orphanedResources": {"warn": true},
    ///              "destinations": [{"server": "*", "namespace": "*"}]}})).unwrap();
    /// let live = [json!({"apiVersion": "v1", "kind": "Secret",
    ///     "metadata": {"name": "hand-made", "namespace": "shop"}})];
    /// let o = Orphans::new(&project, &app, &Settings::default(), &Scopes::builtin(), &[], &live,
    ///     None);
    /// assert_eq!(o.resources[0].name, "hand-made");
    /// assert_eq!(o.condition.unwrap().message, "Application has 1 orphaned resources");
    /// ```
    pub fn new(
        project: &AppProject,
        app: &Application,
        settings: &Settings,
        scopes: &Scopes,
        desired: &[Value],
        live: &[Value],
        apps: Option<&[String]>,
    ) -> Orphans {
        let Some(orphaned) = &project.orphaned_resources else { return Orphans::default() };
        let namespace = app.spec.destination.namespace.as_str();
        let instance = app.instance_name(settings);
        let managed_refs: Vec<ObjectRef> = ManagedLive::new(desired, live, app, settings, scopes)
            .managed
            .into_iter()
            .map(|o| live_ref(o, scopes))
            .collect();
        let managed: BTreeSet<_> = managed_refs.iter().map(pair_key).collect();
        // Whose children each object is, by owner uid.
        let mut children: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for obj in live {
            for o in obj
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(uid) = o.get("uid").and_then(Value::as_str) {
                    children.entry(uid).or_default().push(obj);
                }
            }
        }
        let known: Option<BTreeSet<String>> =
            apps.map(|list| list.iter().map(|a| app_key(a, &settings.namespace)).collect());
        let other_app = |obj: &Value| {
            settings.tracked_app(obj).is_some_and(|a| {
                a == instance
                    || known.as_ref().is_none_or(|k| k.contains(&app_key(a, &settings.namespace)))
            })
        };
        let mut found: BTreeSet<ObjectRef> = BTreeSet::new();
        let mut stack: Vec<&Value> = live
            .iter()
            .filter(|obj| {
                let r = live_ref(obj, scopes);
                !r.namespace.is_empty()
                    && r.namespace == namespace
                    && obj
                        .pointer("/metadata/ownerReferences")
                        .and_then(Value::as_array)
                        .is_none_or(Vec::is_empty)
                    && !managed.contains(&pair_key(&r))
                    && !excluded(&r, app, settings)
                    && project.permits_kind(&r.group, &r.kind, &r.name, true)
                    && !ignored(&r, orphaned)
            })
            .collect();
        let mut seen: BTreeSet<ObjectRef> = BTreeSet::new();
        while let Some(obj) = stack.pop() {
            let r = live_ref(obj, scopes);
            if !seen.insert(r.clone())
                || other_app(obj)
                || excluded(&r, app, settings)
                || settings.unwatched(obj, &app.spec.destination.server).is_some()
                || !project.permits_resource(&r.group, &r.kind, &r.name, &r.namespace, app)
            {
                continue;
            }
            if let Some(uid) = obj.pointer("/metadata/uid").and_then(Value::as_str) {
                stack.extend(children.get(uid).into_iter().flatten());
            }
            found.insert(r);
        }
        let resources: Vec<ObjectRef> = found.into_iter().collect();
        let condition = (orphaned.warn == Some(true) && !resources.is_empty()).then(|| Condition {
            type_: "OrphanedResourceWarning".into(),
            message: format!("Application has {} orphaned resources", resources.len()),
        });
        Orphans { resources, condition }
    }
}
