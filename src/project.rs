//! What an AppProject permits, as Argo CD 3.6.2 reads it (pkg/apis/application/v1alpha1
//! app_project_types.go `IsGroupKindNamePermitted`, `IsResourcePermitted`,
//! `isDestinationMatched`; types.go `isResourceInList`, `isNamedResourceInList`), and its
//! `spec.orphanedResources`.
//!
//! - A namespaced kind is permitted when `namespaceResourceWhitelist` is absent or lists it,
//!   and `namespaceResourceBlacklist` does not; an empty whitelist (`[]`) permits none.
//! - A cluster-scoped kind is permitted only when `clusterResourceWhitelist` lists it (by
//!   group, kind and, where the entry has one, name) and `clusterResourceBlacklist` does not:
//!   no whitelist permits none.
//! - The lists match with Go's `filepath.Match` (`*`, `?`, `[a-z]`, `[^a-z]`; no `{a,b}`).
//! - A namespaced object is also permitted only in a namespace of the project's
//!   `destinations` (server or name, and namespace, globs with `!` for a deny entry).
//!
//! `permitOnlyProjectScopedClusters` needs the project's cluster Secrets, which the engine is
//! not given: it is read and not applied (listed in `docs/behaviours.md`).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{Application, ConfigError, check_kind};
use crate::glob::{glob_match, path_match};

/// The server URL and name Argo CD gives its own cluster.
const IN_CLUSTER: (&str, &str) = ("https://kubernetes.default.svc", "in-cluster");

/// An AppProject: the parts the engine decides with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct AppProject {
    /// `metadata.name`.
    pub(crate) name: String,
    /// `spec.orphanedResources`; `None` when the project does not monitor orphans.
    pub(crate) orphaned_resources: Option<OrphanedResourcesSettings>,
    /// `spec.namespaceResourceWhitelist`; `None` (absent) permits every namespaced kind.
    pub(crate) namespace_resource_whitelist: Option<Vec<GroupKind>>,
    /// `spec.namespaceResourceBlacklist`.
    pub(crate) namespace_resource_blacklist: Vec<GroupKind>,
    /// `spec.clusterResourceWhitelist`: the only cluster-scoped kinds permitted.
    pub(crate) cluster_resource_whitelist: Vec<ClusterResourceItem>,
    /// `spec.clusterResourceBlacklist`.
    pub(crate) cluster_resource_blacklist: Vec<ClusterResourceItem>,
    /// `spec.destinations`.
    pub(crate) destinations: Vec<ProjectDestination>,
    /// `spec.permitOnlyProjectScopedClusters` (read, not applied: see the module
    /// documentation).
    pub(crate) permit_only_project_scoped_clusters: bool,
}

/// An AppProject's `spec.orphanedResources`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub(crate) struct OrphanedResourcesSettings {
    /// Whether orphans raise `OrphanedResourceWarning` (off unless `true`).
    pub(crate) warn: Option<bool>,
    /// Objects never counted as orphans.
    pub(crate) ignore: Vec<OrphanedResourceKey>,
}

/// An entry of `orphanedResources.ignore`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(default)]
#[non_exhaustive]
pub(crate) struct OrphanedResourceKey {
    /// API group glob (`""` is the core group, matched exactly).
    pub(crate) group: String,
    /// Kind glob; empty matches any kind.
    pub(crate) kind: String,
    /// Name glob; empty matches any name.
    pub(crate) name: String,
}

/// An entry of a namespaced resource list (`metav1.GroupKind`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(default)]
#[non_exhaustive]
pub(crate) struct GroupKind {
    /// API group pattern.
    pub(crate) group: String,
    /// Kind pattern.
    pub(crate) kind: String,
}

/// An entry of a cluster resource list (`ClusterResourceRestrictionItem`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(default)]
#[non_exhaustive]
pub(crate) struct ClusterResourceItem {
    /// API group pattern.
    pub(crate) group: String,
    /// Kind pattern.
    pub(crate) kind: String,
    /// Name pattern; empty matches any name.
    pub(crate) name: String,
}

/// An entry of `spec.destinations`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(default)]
#[non_exhaustive]
pub(crate) struct ProjectDestination {
    /// Server URL glob (`!` denies).
    pub(crate) server: String,
    /// Cluster name glob (`!` denies).
    pub(crate) name: String,
    /// Namespace glob (`!` denies).
    pub(crate) namespace: String,
}

/// One field of the spec: absent or null is `None`.
fn field<T: DeserializeOwned>(project: &Value, key: &str) -> Result<Option<T>, ConfigError> {
    let path = format!("/spec/{key}");
    match project.pointer(&path) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => T::deserialize(v).map(Some).map_err(|e| ConfigError::Project {
            project: name(project).to_string(),
            path,
            message: e.to_string(),
        }),
    }
}

fn name(project: &Value) -> &str {
    project.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
}

impl AppProject {
    /// Reads an AppProject manifest.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Kind`] for a document of another kind, [`ConfigError::Project`] (naming
    /// the project and the pointer of the field, e.g. `/spec/orphanedResources`) for a field
    /// of the wrong shape.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::project::AppProject;
    /// let p = AppProject::from_value(&serde_json::json!({"kind": "AppProject",
    ///     "metadata": {"name": "shop"}, "spec": {"namespaceResourceBlacklist":
    ///     [{"group": "", "kind": "Secret"}]}})).unwrap();
    /// assert!(!p.permits_kind("", "Secret", "db", true));
    /// assert!(p.permits_kind("apps", "Deployment", "web", true));
    /// assert!(!p.permits_kind("", "Namespace", "shop", false));
    /// ```
    pub fn from_value(project: &Value) -> Result<AppProject, ConfigError> {
        check_kind(project, "AppProject")?;
        Ok(AppProject {
            name: name(project).to_string(),
            orphaned_resources: field(project, "orphanedResources")?,
            namespace_resource_whitelist: field(project, "namespaceResourceWhitelist")?,
            namespace_resource_blacklist: field(project, "namespaceResourceBlacklist")?
                .unwrap_or_default(),
            cluster_resource_whitelist: field(project, "clusterResourceWhitelist")?
                .unwrap_or_default(),
            cluster_resource_blacklist: field(project, "clusterResourceBlacklist")?
                .unwrap_or_default(),
            destinations: field(project, "destinations")?.unwrap_or_default(),
            permit_only_project_scoped_clusters: field(project, "permitOnlyProjectScopedClusters")?
                .unwrap_or(false),
        })
    }

    /// Whether the project permits an object of this group and kind named `name`, namespaced
    /// or cluster-scoped (`IsGroupKindNamePermitted`; see the module documentation).
    pub fn permits_kind(&self, group: &str, kind: &str, name: &str, namespaced: bool) -> bool {
        if namespaced {
            let listed = |l: &[GroupKind]| {
                l.iter().any(|i| path_match(&i.kind, kind) && path_match(&i.group, group))
            };
            let white = self.namespace_resource_whitelist.as_deref().is_none_or(listed);
            return white && !listed(&self.namespace_resource_blacklist);
        }
        let listed = |l: &[ClusterResourceItem]| {
            l.iter().any(|i| {
                path_match(&i.kind, kind)
                    && path_match(&i.group, group)
                    && (i.name.is_empty() || path_match(&i.name, name))
            })
        };
        listed(&self.cluster_resource_whitelist) && !listed(&self.cluster_resource_blacklist)
    }

    /// Whether the project permits an object in `namespace` (`""` for a cluster-scoped one) on
    /// the app's destination cluster (`IsResourcePermitted`): its kind, and for a namespaced
    /// object the destination.
    pub fn permits_resource(
        &self,
        group: &str,
        kind: &str,
        name: &str,
        namespace: &str,
        app: &Application,
    ) -> bool {
        if !self.permits_kind(group, kind, name, !namespace.is_empty()) {
            return false;
        }
        if namespace.is_empty() {
            return true;
        }
        let (server, cluster) = destination_cluster(&app.spec.destination);
        self.permits_destination(server, cluster, namespace)
    }

    /// Why a sync may not touch an object (`validateSyncPermissions`), in Argo CD's words:
    /// `resource <group>:<Kind> is not permitted in project <name>`, or for a namespaced object
    /// outside the project's destinations on `destination`'s cluster `namespace <ns> is not
    /// permitted in project '<name>'`; `None` when it may.
    pub fn sync_denial(
        &self,
        r: &crate::object::ObjectRef,
        namespaced: bool,
        destination: &crate::config::Destination,
    ) -> Option<String> {
        if !self.permits_kind(&r.group, &r.kind, &r.name, namespaced) {
            return Some(format!(
                "resource {}:{} is not permitted in project {}",
                r.group, r.kind, self.name
            ));
        }
        let (server, cluster) = destination_cluster(destination);
        (namespaced && !self.permits_destination(server, cluster, &r.namespace)).then(|| {
            format!("namespace {} is not permitted in project '{}'", r.namespace, self.name)
        })
    }

    /// Whether a destination (cluster server URL, cluster name, namespace) is one of the
    /// project's (`isDestinationMatched`): a deny entry (`!`) that matches the namespace and
    /// the server or name vetoes it.
    pub fn permits_destination(&self, server: &str, name: &str, namespace: &str) -> bool {
        let deny = |p: &str| p.starts_with('!');
        let matches = |p: &str, v: &str| match p.strip_prefix('!') {
            Some(rest) => !glob_match(rest, v),
            None => p == "*" || glob_match(p, v),
        };
        let mut any = false;
        for d in &self.destinations {
            let name_ok = !name.is_empty() && matches(&d.name, name);
            let server_ok = !server.is_empty() && matches(&d.server, server);
            let namespace_ok = matches(&d.namespace, namespace);
            if namespace_ok
                && ((deny(&d.name) && !name.is_empty() && glob_match(&d.name[1..], name))
                    || (deny(&d.server)
                        && !server.is_empty()
                        && glob_match(&d.server[1..], server)))
            {
                return false;
            }
            if (server_ok || name_ok) && namespace_ok {
                any = true;
            } else if (((!name_ok && deny(&d.name)) || (!server_ok && deny(&d.server)))
                && namespace_ok)
                || (!namespace_ok && deny(&d.namespace) && server_ok)
            {
                return false;
            }
        }
        any
    }
}

/// The app's destination cluster as (server, name): what the Application gives, with Argo
/// CD's own cluster (`https://kubernetes.default.svc`, `in-cluster`) filling in the other
/// half when one half names it, and standing for a destination that names no cluster.
fn destination_cluster(d: &crate::config::Destination) -> (&str, &str) {
    match (d.server.as_str(), d.name.as_str()) {
        ("", "") => IN_CLUSTER,
        (s, "") if s == IN_CLUSTER.0 => IN_CLUSTER,
        ("", n) if n == IN_CLUSTER.1 => IN_CLUSTER,
        (s, n) => (s, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project(spec: Value) -> AppProject {
        AppProject::from_value(&json!({"kind": "AppProject", "spec": spec})).unwrap()
    }

    #[test]
    fn destinations_as_argo_cd_matches_them() {
        let p = project(json!({"destinations": [
            {"server": "*", "namespace": "shop-*"},
            {"server": "!https://prod.example", "namespace": "*"}]}));
        assert!(p.permits_destination("https://kubernetes.default.svc", "", "shop-a"));
        assert!(!p.permits_destination("https://prod.example", "", "shop-a"));
        let p = project(json!({"destinations": [{"server": "*", "namespace": "!kube-*"},
            {"name": "*", "namespace": "*"}]}));
        assert!(p.permits_destination("https://a", "in-cluster", "shop"));
        assert!(!p.permits_destination("https://a", "in-cluster", "kube-system"));
        // A namespace deny vetoes only where the entry's server matched, as in Go.
        assert!(p.permits_destination("", "in-cluster", "kube-system"));
        assert!(!project(json!({})).permits_destination("", "in-cluster", "shop"));
    }

    #[test]
    fn an_empty_namespace_whitelist_permits_nothing() {
        let p = project(json!({"namespaceResourceWhitelist": []}));
        assert!(!p.permits_kind("", "ConfigMap", "a", true));
        let p = project(json!({"clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
            "clusterResourceBlacklist": [{"group": "", "kind": "Namespace", "name": "kube-*"}]}));
        assert!(p.permits_kind("", "Namespace", "shop", false));
        assert!(!p.permits_kind("", "Namespace", "kube-system", false));
    }

    #[test]
    fn fields_of_the_wrong_shape_name_their_pointer() {
        let err = AppProject::from_value(
            &json!({"metadata": {"name": "p"}, "spec": {"destinations": {"a": 1}}}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid AppProject `p` at /spec/destinations: invalid type: map, expected a sequence"
        );
    }
}
