//! gitops-host: a reference host for gitops-core. The library decides (diff, health, plan,
//! `step`, `decide`); this program is its hands against a real API server through kube-rs:
//! it lists the app's live objects by tracking, carries out each step action as Argo CD
//! does, waits by reading the objects again, and prints what `argocd app get` and
//! `argocd app sync` print. The cluster comes from the kubeconfig (`KUBECONFIG`, or
//! `~/.kube/config`). Where the cluster serves Argo CD's Application and AppProject kinds, the
//! app's status and operation live on its Application object and the sync windows come from
//! its AppProject, as in Argo CD.

// The host is where files, the clock and the network are touched; the library never does.
#![allow(clippy::disallowed_methods)]

mod kube_ops;
mod print;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gitops_core::diff::{AppDiff, AppDiffInput, diff_app};
use gitops_core::health::{AppHealth, HealthContext, ResourceHealthInput, assess};
use gitops_core::ignore::IgnoreNormalizer;
use gitops_core::ownership::ManagedLive;
use gitops_core::sync::{AutoSyncInput, ResourceStatus, SyncWindow};
use gitops_core::sync::{LiveObject, NamespaceLookup, Observations, OperationPhase, SyncRequest, SyncState};
use gitops_core::sync::SyncWindows;
use gitops_core::vocabulary::Timestamp;
use gitops_core::{
    config::Application, config::Settings, object::ObjectRef, object::Scopes,
    object::parse_manifests,
};
use serde_json::{Value, json};

use kube_ops::Cluster;

const USAGE: &str = "usage: gitops-host get|sync|reconcile --app APP.yaml --manifests PATH...
                   [--argocd-cm CM.yaml] [--project PROJECT.yaml] [--status STATUS.json]
                   [--revision REV] [--prune] [--dry-run] [--force] [--sync-option OPT]...
                   [--timeout SECONDS] [--context NAME]

  get        what `argocd app get` prints: the app's sync and health status and one row per
             resource (status, health, hook, message)
  sync       a manual sync (`argocd app sync`): plan and `step` carried out against the
             cluster until the operation ends; prints the operation and its results
  reconcile  one pass of the controller: an operation set on the Application runs first;
             else compare, then the automated sync or self-heal that `decide` starts (or why
             none runs), as `argocd app get` would show afterwards

--app          the Argo CD Application (destination namespace, sync policy and options,
               ignoreDifferences). When the cluster serves Argo CD's Application kind
               (argoproj.io/v1alpha1), the app lives there: sync and reconcile apply the
               file's metadata and spec to it, and the host keeps the app's `status` (sync,
               health, resources, operationState) and `operation` on it, as Argo CD does
--manifests    the rendered manifests: a file (YAML stream, JSON or List) or a folder of
               .yaml/.yml/.json files; repeatable. An empty folder is an empty render.
--argocd-cm    the argocd-cm ConfigMap (tracking method, customizations)
--project      the app's AppProject (its sync windows); else the AppProject named by
               spec.project in the Application's namespace, when the cluster serves the kind
--status       for a cluster without the Application kind: a JSON file holding the
               Application's `status` between runs (read when it exists, written by sync
               and reconcile)
--revision     the revision the manifests were rendered from (default: manual)
--prune, --dry-run, --force, --sync-option OPT
               the options of `argocd app sync` (sync only); --sync-option replaces the app's
               syncOptions for this operation, as the operation's syncOptions do
--timeout      give up waiting after this many seconds (default 300)
--context      the kubeconfig context to use (default: its current-context); the kubeconfig
               is KUBECONFIG's, else ~/.kube/config, else the pod's service account

exit status: 0 synced and (for sync) succeeded, 1 out of sync or the operation failed,
2 an error (a manual sync a sync window blocks included)";

/// What the command line asks for.
struct Args {
    command: String,
    app: PathBuf,
    manifests: Vec<PathBuf>,
    argocd_cm: Option<PathBuf>,
    project: Option<PathBuf>,
    status: Option<PathBuf>,
    revision: String,
    prune: bool,
    dry_run: bool,
    force: bool,
    sync_options: Option<Vec<String>>,
    timeout: u64,
    context: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let command = it.next().ok_or_else(|| USAGE.to_string())?;
    if command == "--help" || command == "help" {
        println!("{USAGE}");
        std::process::exit(0);
    }
    let mut a = Args {
        command,
        app: PathBuf::new(),
        manifests: Vec::new(),
        argocd_cm: None,
        project: None,
        status: None,
        revision: "manual".into(),
        prune: false,
        dry_run: false,
        force: false,
        sync_options: None,
        timeout: 300,
        context: None,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--app" => a.app = value()?.into(),
            "--manifests" => a.manifests.push(value()?.into()),
            "--argocd-cm" => a.argocd_cm = Some(value()?.into()),
            "--context" => a.context = Some(value()?),
            "--project" => a.project = Some(value()?.into()),
            "--status" => a.status = Some(value()?.into()),
            "--revision" => a.revision = value()?,
            "--timeout" => a.timeout = value()?.parse().map_err(|e| format!("--timeout: {e}"))?,
            "--sync-option" => a.sync_options.get_or_insert_with(Vec::new).push(value()?),
            "--prune" => a.prune = true,
            "--dry-run" => a.dry_run = true,
            "--force" => a.force = true,
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if !matches!(a.command.as_str(), "get" | "sync" | "reconcile") {
        return Err(format!("unknown command {}\n{USAGE}", a.command));
    }
    if a.app.as_os_str().is_empty() || a.manifests.is_empty() {
        return Err(format!("--app and --manifests are required\n{USAGE}"));
    }
    Ok(a)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The objects of a file or of a folder's .yaml/.yml/.json files (sorted by name).
fn read_manifests(path: &Path) -> Result<Vec<Value>, String> {
    let mut files = Vec::new();
    if path.is_dir() {
        let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for e in entries {
            let p = e.map_err(|e| format!("{}: {e}", path.display()))?.path();
            if p.extension().is_some_and(|x| x == "yaml" || x == "yml" || x == "json") {
                files.push(p);
            }
        }
        files.sort();
    } else {
        files.push(path.to_path_buf());
    }
    let mut out = Vec::new();
    for f in files {
        out.extend(parse_manifests(&read(&f)?).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    Ok(out)
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The group of Argo CD's kinds.
const ARGOPROJ: &str = "argoproj.io";
/// The field manager the host writes the Application's spec with (what a user's apply of the
/// Application file would be).
const HOST_MANAGER: &str = "gitops-host";
/// The field manager of Argo CD's controller, which writes `status` and `operation`.
const CONTROLLER_MANAGER: &str = "argocd-application-controller";

/// The app, its settings and its desired objects, stamped with the app's tracking id.
struct App {
    app: Application,
    app_value: Value,
    settings: Settings,
    desired: Vec<Value>,
    revision: String,
    /// Where the status lives: the Application object in the cluster, or a file.
    store: Store,
}

/// Where the Application's status is kept between runs.
enum Store {
    /// The Application resource (`argoproj.io/v1alpha1`), as Argo CD keeps it.
    Cluster { namespace: String, name: String },
    /// A JSON file, for a cluster that does not serve the Application kind.
    File(PathBuf),
    /// Nowhere.
    None,
}

impl App {
    /// Reads the Application file, the settings and the manifests. When the cluster serves
    /// Argo CD's Application kind, the app lives there: `write` applies the file's metadata and
    /// spec to it (as a user's `kubectl apply` of the file), and the app is read back with the
    /// `status` and `operation` the controller keeps on it.
    async fn load(args: &Args, cluster: &Cluster, write: bool) -> Result<App, String> {
        let mut app_value = parse_manifests(&read(&args.app)?)
            .map_err(|e| format!("{}: {e}", args.app.display()))?
            .into_iter()
            .next()
            .ok_or_else(|| format!("{}: no Application", args.app.display()))?;
        let store = if cluster.serves(ARGOPROJ, "Application") {
            if let Value::Object(m) = &mut app_value {
                m.remove("status");
                m.remove("operation");
            }
            if app_value["metadata"]["namespace"].as_str().unwrap_or("").is_empty() {
                app_value["metadata"]["namespace"] = json!("argocd");
            }
            let namespace = app_value["metadata"]["namespace"].as_str().unwrap_or("").to_string();
            let name = app_value["metadata"]["name"].as_str().unwrap_or("").to_string();
            let stored = if write {
                Some(cluster.apply(&app_value, HOST_MANAGER).await?)
            } else {
                cluster.get(ARGOPROJ, "Application", &namespace, &name).await?
            };
            if let Some(stored) = stored {
                app_value["status"] = stored["status"].clone();
                app_value["operation"] = stored["operation"].clone();
                app_value["metadata"] = stored["metadata"].clone();
                if let Value::Object(m) = &mut app_value["metadata"] {
                    m.remove("managedFields");
                }
            }
            Store::Cluster { namespace, name }
        } else if let Some(p) = &args.status {
            if p.exists() {
                let status: Value =
                    serde_json::from_str(&read(p)?).map_err(|e| format!("{}: {e}", p.display()))?;
                app_value["status"] = status;
            }
            Store::File(p.clone())
        } else {
            Store::None
        };
        let app = Application::from_value(&app_value).map_err(|e| e.to_string())?;
        let settings = match &args.argocd_cm {
            Some(p) => Settings::from_config_map(
                parse_manifests(&read(p)?)
                    .map_err(|e| e.to_string())?
                    .first()
                    .unwrap_or(&Value::Null),
            )
            .map_err(|e| e.to_string())?,
            None => Settings::default(),
        };
        let mut desired = Vec::new();
        for m in &args.manifests {
            desired.extend(read_manifests(m)?);
        }
        Ok(App { app, app_value, settings, desired, revision: args.revision.clone(), store })
    }

    /// The sync windows of the app's project that match the app: from `--project`, else from
    /// the AppProject in the cluster (in the Application's namespace), as the controller reads
    /// them. A cluster without the AppProject kind has no windows; so has a `default` project
    /// not created (Argo CD creates it itself).
    async fn windows(&self, args: &Args, cluster: &Cluster) -> Result<SyncWindows, String> {
        let all = if let Some(p) = &args.project {
            let project = parse_manifests(&read(p)?)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .into_iter()
                .next()
                .unwrap_or(Value::Null);
            SyncWindow::of_project(&project).map_err(|e| format!("{}: {e}", p.display()))?
        } else if cluster.serves(ARGOPROJ, "AppProject") {
            let name = &self.app.spec.project;
            let ns = match &self.store {
                Store::Cluster { namespace, .. } => namespace.clone(),
                _ => self.app.metadata.namespace.clone(),
            };
            match cluster.get(ARGOPROJ, "AppProject", &ns, name).await? {
                Some(project) => {
                    SyncWindow::of_project(&project).map_err(|e| format!("AppProject {ns}/{name}: {e}"))?
                }
                None if name.is_empty() || name == "default" => Vec::new(),
                None => {
                    return Err(format!(
                        "Application referencing project {name} which does not exist"
                    ));
                }
            }
        } else {
            Vec::new()
        };
        Ok(SyncWindows::matching(&all, &self.app))
    }

    /// The desired objects with the app's tracking id (annotation tracking, Argo CD 3's
    /// default), as the controller stamps them before it compares and syncs.
    fn stamped(&self, scopes: &Scopes) -> Vec<Value> {
        let instance = self.app.instance_name(&self.settings);
        let dest = &self.app.spec.destination.namespace;
        self.desired
            .iter()
            .cloned()
            .map(|mut obj| {
                let r = ObjectRef::from_object_lossy(&obj);
                let ns = if scopes.is_cluster_scoped(&r.group, &r.kind) {
                    String::new()
                } else if r.namespace.is_empty() {
                    dest.clone()
                } else {
                    r.namespace.clone()
                };
                let id = format!("{instance}:{}/{}:{ns}/{}", r.group, r.kind, r.name);
                if !ns.is_empty() && r.namespace.is_empty() {
                    obj["metadata"]["namespace"] = json!(ns);
                }
                if !obj["metadata"]["annotations"].is_object() {
                    obj["metadata"]["annotations"] = json!({});
                }
                obj["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!(id);
                obj
            })
            .collect()
    }

    /// Whether the app compares by server-side diff (Argo CD 3.6: `ServerSideApply=true` or the
    /// compare option `ServerSideDiff=true`), so the host runs the dry runs.
    fn server_side_diff(&self) -> bool {
        let options = &self.app.spec.sync_policy.sync_options;
        let compare = self
            .app
            .metadata
            .annotations
            .get("argocd.argoproj.io/compare-options")
            .cloned()
            .unwrap_or_default();
        (options.iter().any(|o| o == "ServerSideApply=true")
            && !compare.contains("ServerSideDiff=false"))
            || compare.contains("ServerSideDiff=true")
    }

    /// Sets the operation on the Application (what `argocd app sync` and an automated sync
    /// write before the controller runs it). Only an app kept in the cluster has one.
    async fn start_operation(&self, cluster: &Cluster, operation: &Value) -> Result<(), String> {
        if let Store::Cluster { namespace, name } = &self.store {
            let patch = json!({"operation": operation});
            cluster
                .merge_patch(ARGOPROJ, "Application", namespace, name, &patch, CONTROLLER_MANAGER)
                .await?;
        }
        Ok(())
    }

    /// Writes the Application's `status` (and clears `operation`, as the controller does when
    /// an operation ends): on the Application object, as a merge patch from the status read
    /// (keys gone are removed), or into the status file.
    async fn save_status(&self, cluster: &Cluster, status: &Value) -> Result<(), String> {
        match &self.store {
            Store::Cluster { namespace, name } => {
                // `operation: null` removes an operation this run set or ran (no-op otherwise).
                let patch =
                    json!({"status": merge_patch(&self.app.status, status), "operation": null});
                cluster
                    .merge_patch(
                        ARGOPROJ,
                        "Application",
                        namespace,
                        name,
                        &patch,
                        CONTROLLER_MANAGER,
                    )
                    .await?;
            }
            Store::File(p) => {
                let text = serde_json::to_string_pretty(status).map_err(|e| e.to_string())? + "\n";
                std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))?;
            }
            Store::None => {}
        }
        Ok(())
    }
}

/// The JSON merge patch (RFC 7386) that turns `from` into `to`.
fn merge_patch(from: &Value, to: &Value) -> Value {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = serde_json::Map::new();
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                out.insert(k.clone(), Value::Null);
            }
            for (k, v) in b {
                match a.get(k) {
                    Some(old) if old == v => {}
                    Some(old) if old.is_object() && v.is_object() => {
                        out.insert(k.clone(), merge_patch(old, v));
                    }
                    _ => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(out)
        }
        _ => to.clone(),
    }
}

/// One look at the cluster: the app's live objects, the comparison and the health.
struct Seen {
    live: Vec<Value>,
    desired: Vec<Value>,
    scopes: Scopes,
    diff: AppDiff,
    health: gitops_core::health::AppHealth,
    health_of: BTreeMap<String, gitops_core::health::HealthResult>,
}

async fn observe(cluster: &mut Cluster, app: &App, now: i64) -> Result<Seen, String> {
    cluster.discover().await?;
    let scopes = cluster.scopes();
    let desired = app.stamped(&scopes);
    let instance = app.app.instance_name(&app.settings);
    let wanted: std::collections::BTreeSet<String> = desired
        .iter()
        .map(|d| {
            let r = ObjectRef::from_object_lossy(d);
            format!("{}/{}/{}/{}", r.group, r.kind, r.namespace, r.name)
        })
        .collect();
    let live: Vec<Value> = cluster
        .list_all()
        .await?
        .into_iter()
        .filter(|o| {
            let r = ObjectRef::from_object_lossy(o);
            app.settings.tracked_app(o) == Some(instance.as_str())
                || wanted.contains(&format!("{}/{}/{}/{}", r.group, r.kind, r.namespace, r.name))
        })
        .collect();
    // The app's own: what it tracks without an owner (a ReplicaSet carries its Deployment's
    // tracking annotation, but its owner makes it the Deployment's), and the desired objects.
    let live: Vec<Value> = ManagedLive::new(&desired, &live, &app.app, &app.settings, &scopes)
        .managed
        .into_iter()
        .cloned()
        .collect();
    let dry_runs;
    let mut input =
        AppDiffInput::new(&desired, &live, &app.app, &app.settings, &scopes).with_objects(true);
    if app.server_side_diff() {
        dry_runs = cluster.dry_run_all(&desired).await;
        input = input.with_dry_runs(&dry_runs);
    }
    let diff = diff_app(&input).map_err(|e| e.to_string())?;
    let ctx = HealthContext::new(now).with_app(&app.app_value);
    let mut inputs = Vec::new();
    let mut health_of = BTreeMap::new();
    for r in &diff.resources {
        let l = live.iter().find(|o| ObjectRef::from_object_lossy(o).same_object(&r.object));
        let d = desired.iter().find(|o| ObjectRef::from_object_lossy(o).same_object(&r.object));
        if r.requires_pruning && l.is_none() {
            continue;
        }
        if let Some(input) = ResourceHealthInput::from_objects(d, l, &ctx) {
            if let Some(h) = &input.health {
                health_of.insert(r.object.key(), h.clone());
            }
            if !r.requires_pruning {
                inputs.push(input);
            }
        }
    }
    let health = AppHealth::aggregate(&inputs);
    Ok(Seen { live, desired, scopes, diff, health, health_of })
}

/// The live objects with their health, for `step`.
fn live_objects(seen: &Seen, now: i64) -> Vec<LiveObject> {
    let ctx = HealthContext::new(now);
    seen.live
        .iter()
        .map(|o| match assess(o, &ctx) {
            Ok(h) => LiveObject::new(o.clone(), h),
            Err(e) => {
                let mut l = LiveObject::new(o.clone(), Some(e.health()));
                l.health_error = Some(e.to_string());
                l
            }
        })
        .collect()
}

/// Drives one sync operation to its end with `step`, carrying out every action.
async fn run_sync(
    cluster: &mut Cluster,
    app: &App,
    mut request: SyncRequest,
    op: &Op<'_>,
    timeout: Duration,
) -> Result<SyncState, String> {
    let deadline = Instant::now() + timeout;
    let mut state = SyncState::default();
    loop {
        let now = now();
        // The controller's gate on a running operation: while the windows block it, it stays
        // Running with the window's message (a terminate aside).
        if let Some(message) = op.windows.operation_blocked(op.manual, Some(op.started), now) {
            state.message = message;
        } else if pass(cluster, app, &mut request, &mut state, now).await? {
            return Ok(state);
        }
        if Instant::now() >= deadline {
            state.phase = OperationPhase::Failed;
            state.message =
                format!("gitops-host: no end after {} s: {}", timeout.as_secs(), state.message);
            return Ok(state);
        }
        // Argo CD looks again after a wave (2 s by default); this host re-reads every second.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// One pass of the sync loop: observe, then `step` and carry out its actions until the pass
/// ends. True when the operation is over.
async fn pass(
    cluster: &mut Cluster,
    app: &App,
    request: &mut SyncRequest,
    state: &mut SyncState,
    now: i64,
) -> Result<bool, String> {
    let seen = observe(cluster, app, now).await?;
    request.scopes = seen.scopes.clone();
    if request.modified.is_none() {
        request.modified = Some(SyncRequest::modified_of(&seen.diff));
    }
    if request.sync_options.has("RespectIgnoreDifferences=true") {
        let normalizer = IgnoreNormalizer::new(&app.app.spec.ignore_differences, &app.settings)
            .map_err(|e| e.to_string())?;
        let lives: Vec<Option<Value>> = request
            .targets
            .iter()
            .map(|t| {
                let r = ObjectRef::from_object_lossy(t);
                seen.live.iter().find(|l| ObjectRef::from_object_lossy(l).same_object(&r)).cloned()
            })
            .collect();
        let targets: Vec<Option<Value>> = request.targets.iter().cloned().map(Some).collect();
        let respected =
            normalizer.respect_ignore_differences(&targets, &lives).map_err(|e| e.to_string())?;
        request.normalized_targets = Some(respected.into_iter().filter_map(|r| r.object).collect());
    }
    let mut observations = Observations::default();
    observations.live = live_objects(&seen, now);
    observations.now = now;
    observations.missing_kinds = cluster.missing_kinds(&request.targets);
    observations.namespace = match cluster.namespace(&request.app_namespace).await {
        Ok(Some(object)) => NamespaceLookup::Found { object },
        Ok(None) => NamespaceLookup::NotFound,
        Err(message) => NamespaceLookup::Error { message },
    };
    let next = loop {
        let next = request.step(state, &observations);
        *state = next.state.clone();
        if next.actions.is_empty() {
            break next;
        }
        let mut actions = next.actions.clone();
        actions.sort_by_key(|a| a.group);
        let mut outcomes = Vec::new();
        for a in &actions {
            outcomes.push(cluster.carry_out(a).await);
        }
        observations.outcomes = outcomes;
    };
    Ok(next.done)
}

/// An operation under way: the windows that gate it, who started it, when.
struct Op<'a> {
    windows: &'a SyncWindows,
    /// Not started by an automated sync (`initiatedBy.automated` false).
    manual: bool,
    started: i64,
    /// Self-heal attempts so far, this one included.
    attempts: u32,
}

/// `operation` as the Application carries it while the controller runs it.
fn operation_value(request: &SyncRequest, manual: bool, attempts: u32) -> Value {
    let mut sync = json!({
        "revision": request.revision,
        "prune": request.prune,
        "syncOptions": request.sync_options.0,
    });
    if request.dry_run {
        sync["dryRun"] = json!(true);
    }
    if request.force {
        sync["syncStrategy"] = json!({"hook": {"force": true}});
    }
    if !request.resources.is_empty() {
        sync["resources"] = json!(
            request
                .resources
                .iter()
                .map(|r| json!({
                    "group": r.group, "kind": r.kind, "name": r.name, "namespace": r.namespace,
                }))
                .collect::<Vec<_>>()
        );
    }
    if attempts > 0 {
        sync["autoHealAttemptsCount"] = json!(attempts);
    }
    let initiated_by =
        if manual { json!({"username": HOST_MANAGER}) } else { json!({"automated": true}) };
    json!({"sync": sync, "initiatedBy": initiated_by})
}

/// The Application's status after a comparison, as the controller writes it at each refresh:
/// `sync` (status, what was compared, the revision), `health`, one `resources` entry per
/// managed resource (hooks and ignored objects left out), the comparison's `conditions` and
/// `extra` ones (a `SyncError`), `reconciledAt`; the last operation's `operationState` is kept.
fn compared_status(app: &App, seen: &Seen, now: i64, extra: &[(&str, String)]) -> Value {
    let mut status = if app.app.status.is_object() { app.app.status.clone() } else { json!({}) };
    let resources: Vec<Value> = seen
        .diff
        .resources
        .iter()
        .filter_map(|r| {
            let o = &r.object;
            let mut e = json!({"version": o.version, "kind": o.kind, "name": o.name,
                "status": r.status?.as_str()});
            if !o.group.is_empty() {
                e["group"] = json!(o.group);
            }
            if !o.namespace.is_empty() {
                e["namespace"] = json!(o.namespace);
            }
            if let Some(h) = seen.health_of.get(&o.key()) {
                e["health"] = json!({"status": h.status.as_str()});
                if !h.message.is_empty() {
                    e["health"]["message"] = json!(h.message);
                }
            }
            if r.requires_pruning {
                e["requiresPruning"] = json!(true);
            }
            Some(e)
        })
        .collect();
    status["resources"] = json!(resources);
    status["sync"] = json!({
        "status": seen.diff.sync_status.as_str(),
        "comparedTo": {
            "source": app.app_value["spec"]["source"],
            "destination": app.app_value["spec"]["destination"],
        },
        "revision": app.revision,
    });
    status["health"] = json!({"status": seen.health.status.as_str()});
    if !seen.health.message.is_empty() {
        status["health"]["message"] = json!(seen.health.message);
    }
    let stamp = Timestamp::from_unix_seconds(now).to_string();
    let conditions: Vec<Value> = seen
        .diff
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.message.clone()))
        .chain(extra.iter().cloned())
        .map(|(t, m)| json!({"type": t, "message": m, "lastTransitionTime": stamp}))
        .collect();
    if conditions.is_empty() {
        if let Value::Object(m) = &mut status {
            m.remove("conditions");
        }
    } else {
        status["conditions"] = json!(conditions);
    }
    status["reconciledAt"] = json!(stamp);
    status
}

/// The `operationState` of an ended operation, as Argo CD records it.
fn operation_state(
    app: &App,
    request: &SyncRequest,
    state: &SyncState,
    started: i64,
    operation: &Value,
) -> Value {
    let results: Vec<Value> =
        state.results.iter().map(|r| serde_json::to_value(r).unwrap_or(Value::Null)).collect();
    let phase = serde_json::to_value(state.phase).unwrap_or(Value::Null);
    json!({
        "phase": phase,
        "message": state.message,
        "startedAt": Timestamp::from_unix_seconds(started).to_string(),
        "finishedAt": Timestamp::from_unix_seconds(now()).to_string(),
        "operation": operation,
        "syncResult": {
            "revision": request.revision,
            "source": app.app_value["spec"]["source"],
            "resources": results,
        },
    })
}

/// Runs an operation to its end, then writes the status: the comparison after it and its
/// `operationState` (a dry run leaves the status as it was). Prints what `argocd app sync`
/// prints; the exit status says whether it succeeded.
async fn operate(
    cluster: &mut Cluster,
    app: &App,
    request: SyncRequest,
    op: &Op<'_>,
    requested: Option<&Value>,
    timeout: Duration,
) -> Result<i32, String> {
    // An operation already on the Application is recorded as it was requested.
    let operation = match requested {
        Some(operation) => operation.clone(),
        None => operation_value(&request, op.manual, op.attempts),
    };
    if !request.dry_run && requested.is_none() {
        app.start_operation(cluster, &operation).await?;
    }
    let state = run_sync(cluster, app, request.clone(), op, timeout).await?;
    let after = observe(cluster, app, now()).await?;
    if !request.dry_run {
        let mut status = compared_status(app, &after, now(), &[]);
        status["operationState"] = operation_state(app, &request, &state, op.started, &operation);
        app.save_status(cluster, &status).await?;
    }
    print!("{}", print::app_sync(&app.app, &request, &state, &after.health_of));
    Ok(i32::from(state.phase != OperationPhase::Succeeded))
}

async fn run(args: Args) -> Result<i32, String> {
    let mut cluster = Cluster::connect(args.context.as_deref()).await?;
    cluster.discover().await?;
    let app = App::load(&args, &cluster, args.command != "get").await?;
    let windows = app.windows(&args, &cluster).await?;
    let timeout = Duration::from_secs(args.timeout);
    match args.command.as_str() {
        "get" => {
            let seen = observe(&mut cluster, &app, now()).await?;
            print!("{}", print::app_get(&app.app, &seen.diff, &seen.health, &seen.health_of));
            Ok(i32::from(seen.diff.sync_status != gitops_core::diff::SyncStatus::Synced))
        }
        "sync" => {
            let started = now();
            // The API server's check before it sets the operation (a manual sync).
            match windows.can_sync(true, None, started) {
                Ok(true) => {}
                Ok(false) => return Err("cannot sync: blocked by sync window".into()),
                Err(e) => return Err(format!("cannot sync: invalid sync window: {e}")),
            }
            let seen = observe(&mut cluster, &app, started).await?;
            let mut request =
                SyncRequest::for_app(&app.app, seen.desired.clone(), &app.revision, started);
            request.prune = args.prune;
            request.dry_run = args.dry_run;
            request.force = args.force;
            if let Some(options) = &args.sync_options {
                request.sync_options = gitops_core::vocabulary::AppOptions::new(options.clone());
            }
            let op = Op { windows: &windows, manual: true, started, attempts: 0 };
            operate(&mut cluster, &app, request, &op, None, timeout).await
        }
        _ => {
            let started = now();
            let seen = observe(&mut cluster, &app, started).await?;
            // An operation already set on the Application (by `argocd app sync`, a `kubectl
            // patch`, or a pass that did not finish) is run first, as the controller does.
            if !app.app.operation.is_null() {
                let manual = app.app.operation["initiatedBy"]["automated"] != json!(true);
                let mut request =
                    SyncRequest::from_operation(&app.app, seen.desired.clone(), started);
                request.modified = Some(SyncRequest::modified_of(&seen.diff));
                println!("Decision:           run the requested operation");
                println!();
                let op = Op { windows: &windows, manual, started, attempts: 0 };
                let requested = app.app.operation.clone();
                return operate(&mut cluster, &app, request, &op, Some(&requested), timeout).await;
            }
            let (status, resources) = ResourceStatus::of_diff(&seen.diff);
            let decision = match SyncWindows::auto_sync_blocked(&windows.0, &app.app, started) {
                // The controller does not look at automated sync while a window forbids it.
                Some(message) => {
                    println!("Decision:           no sync");
                    println!("Reason:             {message}");
                    None
                }
                None => {
                    let mut input =
                        AutoSyncInput::new(status, resources, vec![app.revision.clone()], started);
                    input.live = seen.live.clone();
                    let decision = input.decide(&app.app);
                    println!(
                        "Decision:           {}",
                        if decision.sync { "sync" } else { "no sync" }
                    );
                    println!("Reason:             {}", decision.message);
                    if let Some(c) = &decision.condition {
                        println!("Condition:          SyncError: {c}");
                    }
                    Some(decision)
                }
            };
            let op = match decision.map(|d| (d.sync, d.operation, d.condition)) {
                Some((true, Some(op), _)) => op,
                other => {
                    // No sync: the refresh's status, with the decision's SyncError condition.
                    let extra: Vec<(&str, String)> = other
                        .and_then(|(_, _, c)| c)
                        .map(|c| ("SyncError", c))
                        .into_iter()
                        .collect();
                    let status = compared_status(&app, &seen, started, &extra);
                    app.save_status(&cluster, &status).await?;
                    print!(
                        "\n{}",
                        print::app_get(&app.app, &seen.diff, &seen.health, &seen.health_of)
                    );
                    return Ok(i32::from(
                        seen.diff.sync_status != gitops_core::diff::SyncStatus::Synced,
                    ));
                }
            };
            let mut with_op = app.app.clone();
            with_op.operation = json!({"sync": {
                "revision": op.revisions.first().cloned().unwrap_or_default(),
                "prune": op.prune,
                "syncOptions": op.sync_options,
                "resources": op.resources.iter().map(|r| json!({
                    "group": r.group, "kind": r.kind, "name": r.name, "namespace": r.namespace,
                })).collect::<Vec<_>>(),
            }});
            let mut request = SyncRequest::from_operation(&with_op, seen.desired.clone(), started);
            request.modified = Some(SyncRequest::modified_of(&seen.diff));
            println!();
            let attempts = op.auto_heal_attempts_count;
            let op_info = Op { windows: &windows, manual: false, started, attempts };
            operate(&mut cluster, &app, request, &op_info, None, timeout).await
        }
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gitops-host: {e}");
            std::process::exit(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gitops-host: {e}");
            std::process::exit(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("gitops-host: {e}");
            std::process::exit(2);
        }
    }
}
