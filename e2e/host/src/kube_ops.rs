//! The host's hands: discovery, listing, and each step action carried out with kube-rs the
//! way Argo CD's controller carries it out with kubectl's code.

use std::collections::{BTreeMap, BTreeSet};

use gitops_core::sync::{ActionKind, ClientSideApply, HostAction, Outcome, SyncRequest};
use gitops_core::vocabulary::PropagationPolicy;
use gitops_core::{object::ObjectRef, object::Scope, object::Scopes};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::config::KubeConfigOptions;
use kube::discovery::{ApiCapabilities, Discovery, Scope as KubeScope, verbs};
use kube::{Client, Config};
use serde_json::{Value, json};

/// Argo CD's server-side apply field manager.
const SSA_MANAGER: &str = gitops_core::diff::DiffOptions::ARGOCD_MANAGER;
/// The finalizer Argo CD puts on hooks.
const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";
/// Kinds never listed for the app: Argo CD's default resource exclusions and the API
/// server's churn.
const NOT_LISTED: &[(&str, &str)] = &[
    ("", "Event"),
    ("events.k8s.io", "Event"),
    ("", "Endpoints"),
    ("discovery.k8s.io", "EndpointSlice"),
    ("coordination.k8s.io", "Lease"),
    ("", "ComponentStatus"),
];

/// A connection to the cluster and what discovery found in it.
pub struct Cluster {
    client: Client,
    resources: BTreeMap<(String, String), (ApiResource, ApiCapabilities)>,
    by_version: BTreeMap<(String, String, String), (ApiResource, ApiCapabilities)>,
}

fn api_error(e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) => s.message,
        other => other.to_string(),
    }
}

fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

impl Cluster {
    /// Connects with the kubeconfig (`KUBECONFIG`, else `~/.kube/config`, else in-cluster),
    /// through its current context or `context`.
    pub async fn connect(context: Option<&str>) -> Result<Cluster, String> {
        let config = match context {
            None => Config::infer().await.map_err(|e| format!("kubeconfig: {e}"))?,
            Some(context) => {
                let options =
                    KubeConfigOptions { context: Some(context.into()), ..Default::default() };
                Config::from_kubeconfig(&options).await.map_err(|e| format!("kubeconfig: {e}"))?
            }
        };
        let client = Client::try_from(config).map_err(|e| format!("client: {e}"))?;
        Ok(Cluster { client, resources: BTreeMap::new(), by_version: BTreeMap::new() })
    }

    /// Runs discovery again (a CRD applied by the sync adds a kind).
    pub async fn discover(&mut self) -> Result<(), String> {
        let discovery = Discovery::new(self.client.clone())
            .run()
            .await
            .map_err(|e| format!("discovery: {e}"))?;
        self.resources.clear();
        self.by_version.clear();
        for group in discovery.groups() {
            for (ar, caps) in group.recommended_resources() {
                self.resources
                    .insert((ar.group.clone(), ar.kind.clone()), (ar.clone(), caps.clone()));
            }
            for version in group.versions() {
                for (ar, caps) in group.versioned_resources(version) {
                    self.by_version.insert(
                        (ar.group.clone(), ar.version.clone(), ar.kind.clone()),
                        (ar.clone(), caps.clone()),
                    );
                }
            }
        }
        Ok(())
    }

    /// Every kind's scope as the server serves it, over the built-in table.
    pub fn scopes(&self) -> Scopes {
        let mut scopes = Scopes::builtin();
        for ((group, kind), (_, caps)) in &self.resources {
            let scope = match caps.scope {
                KubeScope::Namespaced => Scope::Namespaced,
                KubeScope::Cluster => Scope::Cluster,
            };
            scopes.insert(group, kind, scope);
        }
        scopes
    }

    /// Kinds among `targets` the server does not serve (`group/Kind`, `Kind` for the core
    /// group), for `Observations::missing_kinds`.
    pub fn missing_kinds(&self, targets: &[Value]) -> BTreeSet<String> {
        targets
            .iter()
            .map(ObjectRef::from_object_lossy)
            .filter(|r| {
                !self.by_version.contains_key(&(r.group.clone(), r.version.clone(), r.kind.clone()))
            })
            .map(|r| if r.group.is_empty() { r.kind } else { format!("{}/{}", r.group, r.kind) })
            .collect()
    }

    fn resource(&self, r: &ObjectRef) -> Option<&(ApiResource, ApiCapabilities)> {
        self.by_version
            .get(&(r.group.clone(), r.version.clone(), r.kind.clone()))
            .or_else(|| self.resources.get(&(r.group.clone(), r.kind.clone())))
    }

    fn api(&self, ar: &ApiResource, caps: &ApiCapabilities, namespace: &str) -> Api<DynamicObject> {
        match caps.scope {
            KubeScope::Namespaced => Api::namespaced_with(self.client.clone(), namespace, ar),
            KubeScope::Cluster => Api::all_with(self.client.clone(), ar),
        }
    }

    /// Every object of every listable kind in the cluster (preferred versions), with its
    /// apiVersion and kind, as Argo CD's cluster cache holds them.
    pub async fn list_all(&self) -> Result<Vec<Value>, String> {
        let mut out = Vec::new();
        for ((group, kind), (ar, caps)) in &self.resources {
            if !caps.supports_operation(verbs::LIST)
                || NOT_LISTED.contains(&(group.as_str(), kind.as_str()))
            {
                continue;
            }
            let api: Api<DynamicObject> = Api::all_with(self.client.clone(), ar);
            let list = api
                .list(&ListParams::default())
                .await
                .map_err(|e| format!("list {}: {}", ar.plural, api_error(e)))?;
            for item in list {
                out.push(to_value(item, ar));
            }
        }
        Ok(out)
    }

    /// The namespace, for `CreateNamespace=true`.
    pub async fn namespace(&self, name: &str) -> Result<Option<Value>, String> {
        if name.is_empty() {
            return Ok(None);
        }
        let r = ObjectRef::new("", "v1", "Namespace", "", name);
        let Some((ar, caps)) = self.resource(&r) else { return Ok(None) };
        self.api(ar, caps, "")
            .get_opt(name)
            .await
            .map(|o| o.map(|o| to_value(o, ar)))
            .map_err(api_error)
    }

    /// Whether the server serves the kind (any version).
    pub fn serves(&self, group: &str, kind: &str) -> bool {
        self.resources.contains_key(&(group.to_string(), kind.to_string()))
    }

    fn api_of(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
    ) -> Result<Api<DynamicObject>, String> {
        let (ar, caps) = self
            .resources
            .get(&(group.to_string(), kind.to_string()))
            .ok_or_else(|| format!("the server does not serve {kind}.{group}"))?;
        Ok(self.api(ar, caps, namespace))
    }

    fn resource_of(&self, group: &str, kind: &str) -> Option<&ApiResource> {
        self.resources.get(&(group.to_string(), kind.to_string())).map(|(ar, _)| ar)
    }

    /// One object, `None` when it does not exist.
    pub async fn get(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, String> {
        let api = self.api_of(group, kind, namespace)?;
        let ar = self.resource_of(group, kind).cloned().ok_or("no resource")?;
        api.get_opt(name)
            .await
            .map(|o| o.map(|o| to_value(o, &ar)))
            .map_err(|e| format!("get {kind} {namespace}/{name}: {}", api_error(e)))
    }

    /// A server-side apply of `object` by `manager` (conflicts forced); the object as stored.
    pub async fn apply(&self, object: &Value, manager: &str) -> Result<Value, String> {
        let r = ObjectRef::from_object_lossy(object);
        let api = self.api_of(&r.group, &r.kind, &r.namespace)?;
        let ar = self.resource_of(&r.group, &r.kind).cloned().ok_or("no resource")?;
        api.patch(&r.name, &PatchParams::apply(manager).force(), &Patch::Apply(object))
            .await
            .map(|o| to_value(o, &ar))
            .map_err(|e| format!("apply {} {}/{}: {}", r.kind, r.namespace, r.name, api_error(e)))
    }

    /// A JSON merge patch (RFC 7386) by `manager`; the object as stored.
    pub async fn merge_patch(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
        patch: &Value,
        manager: &str,
    ) -> Result<Value, String> {
        let api = self.api_of(group, kind, namespace)?;
        let ar = self.resource_of(group, kind).cloned().ok_or("no resource")?;
        let params = PatchParams { field_manager: Some(manager.into()), ..PatchParams::default() };
        api.patch(name, &params, &Patch::Merge(patch))
            .await
            .map(|o| to_value(o, &ar))
            .map_err(|e| format!("patch {kind} {namespace}/{name}: {}", api_error(e)))
    }

    /// Server-side dry runs of the desired objects with Argo CD's field manager, for
    /// server-side diff (`kubectl apply --server-side --dry-run=server
    /// --field-manager=argocd-controller --force-conflicts`). An object whose dry run fails
    /// is left out (the comparison then says so).
    pub async fn dry_run_all(&self, desired: &[Value]) -> Vec<Value> {
        let mut out = Vec::new();
        for d in desired {
            let r = ObjectRef::from_object_lossy(d);
            let Some((ar, caps)) = self.resource(&r) else { continue };
            let mut params = PatchParams::apply(SSA_MANAGER).force();
            params.dry_run = true;
            let api = self.api(ar, caps, &r.namespace);
            if let Ok(o) = api.patch(&r.name, &params, &Patch::Apply(d)).await {
                out.push(to_value(o, ar));
            }
        }
        out
    }

    /// Carries out one step action and says how it went, with kubectl's words
    /// (`deployment.apps/api configured`).
    pub async fn carry_out(&self, a: &HostAction) -> Outcome {
        match self.try_carry_out(a).await {
            Ok(Some(message)) => Outcome::ok(&a.id, &message),
            Ok(None) => Outcome::not_found(&a.id),
            Err(message) => Outcome::failed(&a.id, &message),
        }
    }

    async fn try_carry_out(&self, a: &HostAction) -> Result<Option<String>, String> {
        let key = &a.key;
        let Some((ar, caps)) = self.resource(key) else {
            return Err(format!(
                "resource mapping not found for name: \"{}\" namespace: \"{}\" from \"\": no matches for kind \"{}\" in version \"{}\"",
                key.name,
                key.namespace,
                key.kind,
                key.api_version()
            ));
        };
        let api = self.api(ar, caps, &key.namespace);
        let what = if ar.group.is_empty() {
            format!("{}/{}", ar.kind.to_lowercase(), key.name)
        } else {
            format!("{}.{}/{}", ar.kind.to_lowercase(), ar.group, key.name)
        };
        let object = a.object.clone().unwrap_or(Value::Null);
        let typed = || {
            serde_json::from_value::<DynamicObject>(object.clone())
                .map_err(|e| format!("{what}: {e}"))
        };
        let post =
            |manager: &str| PostParams { dry_run: false, field_manager: Some(manager.into()) };
        if a.dry_run {
            return self.client_dry_run(a, &api, ar, &what).await.map(Some);
        }
        match a.kind {
            ActionKind::Get => match api.get_opt(&key.name).await.map_err(api_error)? {
                Some(_) => Ok(Some(String::new())),
                None => Ok(None),
            },
            ActionKind::Apply if a.server_side => {
                let manager = a.field_manager.as_deref().unwrap_or(SSA_MANAGER);
                // `ClientSideApplyMigration` (on by default in Argo CD 3.6): the fields that
                // `kubectl apply` (client side) set move to Argo CD's manager first, so that
                // the apply below owns them and removes those Git no longer declares.
                if let Some(csa) = &a.client_side_apply_migration {
                    self.migrate_client_side_apply(&api, ar, &key.name, csa, manager).await.map_err(
                        |e| {
                            format!(
                                "Failed to perform client-side apply migration for {}/{}/{}/{}: {e}",
                                key.group, key.kind, key.namespace, key.name
                            )
                        },
                    )?;
                }
                // Argo CD's server-side apply forces conflicts.
                let params = PatchParams::apply(manager).force();
                api.patch(&key.name, &params, &Patch::Apply(&object)).await.map_err(api_error)?;
                Ok(Some(format!("{what} serverside-applied")))
            }
            ActionKind::Apply => {
                // Read afresh: the patch is computed against what the server holds now.
                let fresh =
                    api.get_opt(&key.name).await.map_err(api_error)?.map(|o| to_value(o, ar));
                let request =
                    ClientSideApply::new(&object, fresh.as_ref()).map_err(|e| e.to_string())?;
                let params = PatchParams {
                    field_manager: Some(SyncRequest::DEFAULT_CLIENT_SIDE_APPLY_MANAGER.into()),
                    ..PatchParams::default()
                };
                let result = match &request {
                    ClientSideApply::Create(obj) => {
                        let obj = serde_json::from_value::<DynamicObject>(obj.clone())
                            .map_err(|e| format!("{what}: {e}"))?;
                        api.create(&post(SyncRequest::DEFAULT_CLIENT_SIDE_APPLY_MANAGER), &obj).await.map(|_| "created")
                    }
                    ClientSideApply::StrategicMergePatch(p) => api
                        .patch(&key.name, &params, &Patch::Strategic(p))
                        .await
                        .map(|_| "configured"),
                    ClientSideApply::MergePatch(p) => {
                        api.patch(&key.name, &params, &Patch::Merge(p)).await.map(|_| "configured")
                    }
                    _ => Ok("unchanged"),
                };
                match result {
                    Ok(verb) => Ok(Some(format!("{what} {verb}"))),
                    // `kubectl apply --force`: a patch the server refuses is done by deleting
                    // and creating the object again.
                    Err(e) if a.force && fresh.is_some() => {
                        let _ = e;
                        self.recreate(&api, &key.name, &with_last_applied(&object)).await?;
                        Ok(Some(format!("{what} replaced")))
                    }
                    Err(e) => Err(api_error(e)),
                }
            }
            ActionKind::Create => {
                api.create(&post("argocd-controller"), &typed()?).await.map_err(api_error)?;
                Ok(Some(format!("{what} created")))
            }
            ActionKind::Replace | ActionKind::Update => {
                let fresh = api.get_opt(&key.name).await.map_err(api_error)?;
                match fresh {
                    None => {
                        api.create(&post("argocd-controller"), &typed()?)
                            .await
                            .map_err(api_error)?;
                        Ok(Some(format!("{what} created")))
                    }
                    Some(_) if a.force => {
                        self.recreate(&api, &key.name, &object).await?;
                        Ok(Some(format!("{what} replaced")))
                    }
                    Some(f) => {
                        let mut obj = typed()?;
                        obj.metadata.resource_version = f.metadata.resource_version.clone();
                        api.replace(&key.name, &post("argocd-controller"), &obj)
                            .await
                            .map_err(api_error)?;
                        Ok(Some(format!("{what} replaced")))
                    }
                }
            }
            ActionKind::Delete => {
                let params = DeleteParams {
                    propagation_policy: Some(match a.propagation_policy.unwrap_or_default() {
                        PropagationPolicy::Background => kube::api::PropagationPolicy::Background,
                        PropagationPolicy::Orphan => kube::api::PropagationPolicy::Orphan,
                        _ => kube::api::PropagationPolicy::Foreground,
                    }),
                    ..DeleteParams::default()
                };
                match api.delete(&key.name, &params).await {
                    Ok(_) => Ok(Some(format!("{what} deleted"))),
                    Err(e) if is_not_found(&e) => Ok(None),
                    Err(e) => Err(api_error(e)),
                }
            }
            ActionKind::RemoveFinalizer => {
                let Some(fresh) = api.get_opt(&key.name).await.map_err(api_error)? else {
                    return Ok(None);
                };
                let kept: Vec<String> = fresh
                    .metadata
                    .finalizers
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|f| f != HOOK_FINALIZER)
                    .collect();
                let patch = json!({"metadata": {"finalizers": kept,
                    "resourceVersion": fresh.metadata.resource_version}});
                match api.patch(&key.name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                    Ok(_) => Ok(Some(String::new())),
                    Err(e) if is_not_found(&e) => Ok(None),
                    Err(e) => Err(api_error(e)),
                }
            }
            _ => Err(format!("gitops-host: action {:?} is not known to this host", a.kind)),
        }
    }

    /// gitops-engine's `performCSAUpgradeMigration`: reads the object afresh and, while a
    /// client-side apply entry of `csa` (operation `Update`) is still there, hands its fields
    /// to `ssa` as client-go's `csaupgrade.UpgradeManagedFieldsPatch` does, in one patch of
    /// `metadata.managedFields` guarded by the resource version read; a conflict reads again
    /// (five tries, as `retry.DefaultRetry`).
    async fn migrate_client_side_apply(
        &self,
        api: &Api<DynamicObject>,
        ar: &ApiResource,
        name: &str,
        csa: &str,
        ssa: &str,
    ) -> Result<(), String> {
        let mut tries = 0;
        loop {
            tries += 1;
            let fresh = match api.get(name).await {
                Ok(o) => to_value(o, ar),
                Err(e) => {
                    return Err(format!(
                        "failed to get fresh object for CSA migration: {}",
                        api_error(e)
                    ));
                }
            };
            let entries =
                fresh["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
            let needed = entries
                .iter()
                .any(|e| e["manager"] == json!(csa) && e["operation"] == json!("Update"));
            if !needed {
                return Ok(());
            }
            let upgraded = upgraded_managed_fields(&entries, csa, ssa);
            if upgraded == entries {
                return Ok(());
            }
            let patch = json!({"metadata": {
                "managedFields": upgraded,
                "resourceVersion": fresh["metadata"]["resourceVersion"],
            }});
            match api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 && tries < 5 => continue,
                Err(e) => return Err(api_error(e)),
            }
        }
    }

    /// A dry run as Argo CD makes it, always on the client (`kubectl ... --dry-run=client`,
    /// server-side apply included: the dry run checks the manifests, not the server): the
    /// kind must be served, and an apply's patch must be computable against the live object.
    async fn client_dry_run(
        &self,
        a: &HostAction,
        api: &Api<DynamicObject>,
        ar: &ApiResource,
        what: &str,
    ) -> Result<String, String> {
        let object = a.object.clone().unwrap_or(Value::Null);
        let verb = match a.kind {
            ActionKind::Apply => {
                let fresh =
                    api.get_opt(&a.key.name).await.map_err(api_error)?.map(|o| to_value(o, ar));
                match ClientSideApply::new(&object, fresh.as_ref()).map_err(|e| e.to_string())? {
                    ClientSideApply::Create(_) => "created",
                    ClientSideApply::Unchanged => "unchanged",
                    _ => "configured",
                }
            }
            ActionKind::Create => "created",
            ActionKind::Replace | ActionKind::Update => "replaced",
            ActionKind::Delete => "deleted",
            _ => "",
        };
        Ok(format!("{what} {verb} (dry run)"))
    }

    /// Deletes the object, waits until it is gone, and creates it again (`--force`).
    async fn recreate(
        &self,
        api: &Api<DynamicObject>,
        name: &str,
        object: &Value,
    ) -> Result<(), String> {
        let params = DeleteParams::foreground();
        match api.delete(name, &params).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(api_error(e)),
        }
        for _ in 0..120 {
            if api.get_opt(name).await.map_err(api_error)?.is_none() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
        let obj =
            serde_json::from_value::<DynamicObject>(object.clone()).map_err(|e| e.to_string())?;
        api.create(&PostParams::default(), &obj).await.map_err(api_error)?;
        Ok(())
    }
}

/// The managed fields after `csa`'s client-side apply entries are handed to `ssa`, as
/// client-go's `csaupgrade` computes them (main resource only, no subresource): `ssa`'s
/// `Apply` entry, else `csa`'s `Update` entry renamed to `ssa` with operation `Apply`, takes
/// the union of its fields and those of `csa`'s `Update` entry of the same apiVersion; then
/// every `Update` entry of `csa` is dropped. Without either entry nothing changes.
fn upgraded_managed_fields(entries: &[Value], csa: &str, ssa: &str) -> Vec<Value> {
    let is = |e: &Value, manager: &str, operation: &str| {
        e["manager"] == json!(manager)
            && e["operation"] == json!(operation)
            && e["subresource"].as_str().unwrap_or("").is_empty()
    };
    let mut out = entries.to_vec();
    let target = match out.iter().position(|e| is(e, ssa, "Apply")) {
        Some(i) => i,
        None => match out.iter().position(|e| is(e, csa, "Update")) {
            Some(i) => {
                out[i]["manager"] = json!(ssa);
                out[i]["operation"] = json!("Apply");
                i
            }
            None => return out,
        },
    };
    let version = out[target]["apiVersion"].clone();
    if let Some(from) = out.iter().find(|e| is(e, csa, "Update") && e["apiVersion"] == version) {
        let fields = from["fieldsV1"].clone();
        union_fields(&mut out[target]["fieldsV1"], &fields);
    }
    out.retain(|e| !is(e, csa, "Update"));
    out
}

/// The union of two `fieldsV1` trees (each a JSON object of path elements).
fn union_fields(into: &mut Value, from: &Value) {
    let Value::Object(from) = from else { return };
    if !into.is_object() {
        *into = json!({});
    }
    if let Value::Object(into) = into {
        for (k, v) in from {
            union_fields(into.entry(k.clone()).or_insert_with(|| json!({})), v);
        }
    }
}

/// The target as `kubectl apply` creates it: with its last-applied annotation.
fn with_last_applied(object: &Value) -> Value {
    match ClientSideApply::new(object, None) {
        Ok(ClientSideApply::Create(o)) => o,
        _ => object.clone(),
    }
}

/// A listed object as JSON with its apiVersion and kind (list items carry neither).
fn to_value(o: DynamicObject, ar: &ApiResource) -> Value {
    let mut v = serde_json::to_value(o).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), json!(ar.api_version));
        m.insert("kind".into(), json!(ar.kind));
    }
    v
}
