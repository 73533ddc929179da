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
//! - With `permitOnlyProjectScopedClusters`, a destination the list matches is permitted
//!   only on a cluster scoped to the project (`IsDestinationPermitted`): one of the clusters
//!   the host passes ([`AppProject::clusters`], cluster Secrets or [`Cluster`] values) whose
//!   `project` is this project's name and whose name or server is the destination's. A host
//!   that passes none: no cluster is the project's, as in Argo CD for a project without
//!   scoped clusters.
//!
//! The destination's cluster is the app's `destination.server` or `destination.name`, the
//! other half filled in from the clusters the host passes (Argo CD's
//! `GetDestinationCluster`), or from Argo CD's own cluster (`https://kubernetes.default.svc`,
//! `in-cluster`).

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
    /// `spec.permitOnlyProjectScopedClusters`: destinations only on the project's clusters.
    pub(crate) permit_only_project_scoped_clusters: bool,
    /// The clusters the host knows (not read from the manifest): those whose `project` is
    /// this project's name are its clusters; all of them resolve a destination's cluster.
    pub clusters: Vec<Cluster>,
}

/// A cluster Argo CD deploys to, as its cluster Secret says (`name`, `server`, `project`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(default)]
#[non_exhaustive]
pub struct Cluster {
    /// The cluster's name.
    pub name: String,
    /// The API server URL.
    pub server: String,
    /// The project the cluster is scoped to; empty for a cluster of every project.
    pub project: String,
}

/// The label of an Argo CD cluster Secret (`argocd.argoproj.io/secret-type: cluster`).
const SECRET_TYPE_LABEL: &str = "argocd.argoproj.io/secret-type";

impl Cluster {
    /// Reads a cluster: an Argo CD cluster Secret (labelled
    /// `argocd.argoproj.io/secret-type: cluster`; `stringData`, else base64 `data`, keys
    /// `name`, `server`, `project`), or a map of `name`, `server` and `project` without a
    /// `kind`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Kind`] for another kind, [`ConfigError::Cluster`] (naming the cluster
    /// and the pointer) for a Secret that is not a cluster's, a field that is not a string,
    /// data that is not base64, or a cluster without a server.
    ///
    /// # Examples
    ///
    /// ```
    /// let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
    ///     "metadata": {"name": "prod", "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
    ///     "stringData": {"name": "prod", "server": "https://prod.example", "project": "shop"}});
    /// let c = gitops_core::project::Cluster::from_value(&secret).unwrap();
    /// assert_eq!((c.name.as_str(), c.project.as_str()), ("prod", "shop"));
    /// ```
    pub fn from_value(doc: &Value) -> Result<Cluster, ConfigError> {
        let secret = doc.get("kind").and_then(Value::as_str) == Some("Secret");
        if !secret {
            check_kind(doc, "Secret")?;
        }
        let id = doc.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        let err = |path: String, message: String| ConfigError::Cluster {
            cluster: id.to_string(),
            path,
            message,
        };
        let label =
            doc.pointer(&format!("/metadata/labels/{}", SECRET_TYPE_LABEL.replace('/', "~1")));
        if secret && label.and_then(Value::as_str) != Some("cluster") {
            return Err(err(
                "/metadata/labels".into(),
                format!("not a cluster Secret (no label {SECRET_TYPE_LABEL}: cluster)"),
            ));
        }
        let read = |key: &str| -> Result<String, ConfigError> {
            if !secret {
                return match doc.get(key) {
                    None | Some(Value::Null) => Ok(String::new()),
                    Some(Value::String(v)) => Ok(v.clone()),
                    Some(_) => Err(err(format!("/{key}"), "expected a string".into())),
                };
            }
            if let Some(v) = doc.pointer(&format!("/stringData/{key}")) {
                return v
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| err(format!("/stringData/{key}"), "expected a string".into()));
            }
            match doc.pointer(&format!("/data/{key}")) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(v)) => decode(v)
                    .ok_or_else(|| err(format!("/data/{key}"), "invalid base64 data".into())),
                Some(_) => Err(err(format!("/data/{key}"), "expected a string".into())),
            }
        };
        let cluster =
            Cluster { name: read("name")?, server: read("server")?, project: read("project")? };
        if cluster.server.is_empty() {
            let at = if secret { "/data/server" } else { "/server" };
            return Err(err(at.into(), "a cluster needs a server".into()));
        }
        Ok(cluster)
    }
}

/// Standard base64 (Kubernetes Secret data) as UTF-8 text.
fn decode(v: &str) -> Option<String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(v.trim()).ok()?;
    String::from_utf8(bytes).ok()
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
            clusters: Vec::new(),
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
        let (server, cluster) = self.destination_cluster(&app.spec.destination);
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
        let (server, cluster) = self.destination_cluster(destination);
        (namespaced && !self.permits_destination(server, cluster, &r.namespace)).then(|| {
            format!("namespace {} is not permitted in project '{}'", r.namespace, self.name)
        })
    }

    /// Whether a destination (cluster server URL, cluster name, namespace) is permitted
    /// (`IsDestinationPermitted`): it is one of the project's (`isDestinationMatched`: a deny
    /// entry, `!`, that matches the namespace and the server or name vetoes it) and, with
    /// `permitOnlyProjectScopedClusters`, one of the project's [`AppProject::clusters`] has
    /// its name or server.
    pub fn permits_destination(&self, server: &str, name: &str, namespace: &str) -> bool {
        self.destination_matched(server, name, namespace)
            && (!self.permit_only_project_scoped_clusters
                || self
                    .clusters
                    .iter()
                    .filter(|c| c.project == self.name)
                    .any(|c| c.name == name || c.server == server))
    }

    /// `isDestinationMatched`.
    fn destination_matched(&self, server: &str, name: &str, namespace: &str) -> bool {
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

impl AppProject {
    /// The app's destination cluster as (server, name): what the Application gives, the
    /// other half from the first of the host's [`AppProject::clusters`] with that server or
    /// name, else from Argo CD's own cluster (`https://kubernetes.default.svc`, `in-cluster`)
    /// when one half names it; Argo CD's own cluster for a destination that names none.
    fn destination_cluster<'d>(&'d self, d: &'d crate::config::Destination) -> (&'d str, &'d str) {
        match (d.server.as_str(), d.name.as_str()) {
            ("", "") => IN_CLUSTER,
            (s, "") => match self.clusters.iter().find(|c| c.server == s) {
                Some(c) => (s, c.name.as_str()),
                None if s == IN_CLUSTER.0 => IN_CLUSTER,
                None => (s, ""),
            },
            ("", n) => match self.clusters.iter().find(|c| c.name == n) {
                Some(c) => (c.server.as_str(), n),
                None if n == IN_CLUSTER.1 => IN_CLUSTER,
                None => ("", n),
            },
            (s, n) => (s, n),
        }
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
    fn permit_only_project_scoped_clusters_needs_a_cluster_of_the_project() {
        // util/argo and app_project_types.go IsDestinationPermitted (3.6.2): a matched
        // destination is permitted only when a cluster of the project has its name or server.
        let spec = json!({"destinations": [{"server": "*", "name": "*", "namespace": "*"}],
            "permitOnlyProjectScopedClusters": true});
        let mut p = AppProject::from_value(
            &json!({"kind": "AppProject", "metadata": {"name": "shop"}, "spec": spec}),
        )
        .unwrap();
        assert!(!p.permits_destination("https://prod.example", "prod", "web"));
        let cluster = |name: &str, server: &str, project: &str| Cluster {
            name: name.into(),
            server: server.into(),
            project: project.into(),
        };
        p.clusters = vec![cluster("prod", "https://prod.example", "billing")];
        assert!(!p.permits_destination("https://prod.example", "prod", "web"));
        p.clusters.push(cluster("prod-shop", "https://prod.example", "shop"));
        assert!(p.permits_destination("https://prod.example", "prod", "web"));
        assert!(p.permits_destination("https://other.example", "prod-shop", "web"));
        assert!(!p.permits_destination("https://other.example", "other", "web"));
        // The destination's name comes from the clusters the host passes.
        let mut app = Application::default();
        app.spec.destination.server = "https://prod.example".into();
        assert!(p.permits_resource("", "ConfigMap", "a", "web", &app));
        app.spec.destination.server = "https://kubernetes.default.svc".into();
        assert!(!p.permits_resource("", "ConfigMap", "a", "web", &app));
        let r = crate::object::ObjectRef::new("", "v1", "ConfigMap", "web", "a");
        assert_eq!(
            p.sync_denial(&r, true, &app.spec.destination).as_deref(),
            Some("namespace web is not permitted in project 'shop'")
        );
        // Without the switch, any cluster the destinations match.
        p.permit_only_project_scoped_clusters = false;
        assert!(p.permits_resource("", "ConfigMap", "a", "web", &app));
    }

    #[test]
    fn clusters_are_read_from_their_secrets() {
        let secret = |data: Value| {
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c1",
                "labels": {"argocd.argoproj.io/secret-type": "cluster"}}, "data": data})
        };
        // base64 of `prod`, `https://prod.example`, `shop`.
        let c = Cluster::from_value(&secret(json!({"name": "cHJvZA==",
            "server": "aHR0cHM6Ly9wcm9kLmV4YW1wbGU=", "project": "c2hvcA=="})))
        .unwrap();
        assert_eq!(
            c,
            Cluster {
                name: "prod".into(),
                server: "https://prod.example".into(),
                project: "shop".into()
            }
        );
        let plain = json!({"name": "prod", "server": "https://prod.example"});
        assert_eq!(Cluster::from_value(&plain).unwrap().project, "");
        let errors = [
            (json!({"kind": "ConfigMap"}), "expected kind Secret, found kind ConfigMap"),
            (
                json!({"kind": "Secret", "metadata": {"name": "db"}}),
                "invalid cluster `db` at /metadata/labels: not a cluster Secret (no label \
                 argocd.argoproj.io/secret-type: cluster)",
            ),
            (
                secret(json!({"server": "%%%"})),
                "invalid cluster `c1` at /data/server: invalid base64 data",
            ),
            (secret(json!({})), "invalid cluster `c1` at /data/server: a cluster needs a server"),
            (json!({"server": 3}), "invalid cluster `` at /server: expected a string"),
        ];
        for (doc, want) in errors {
            assert_eq!(Cluster::from_value(&doc).unwrap_err().to_string(), want);
        }
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
