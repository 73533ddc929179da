//! Deterministic generator of differential cases: health objects of the built-in kinds and of
//! a custom kind with a Lua script, and desired/live pairs with server defaults, status,
//! managedFields, last-applied annotations, tracking annotations and drift, with Applications
//! carrying ignoreDifferences rules (a third of them of kinds whose Kubernetes defaulting is
//! hard to reproduce, `defaulting.rs`).

use serde_json::{Value, json};

use crate::defaulting;

/// splitmix64: small, seedable, the same sequence on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[derive(Clone, Copy)]
pub enum Area {
    Health,
    Diff,
    Sync,
    Autosync,
}

impl Area {
    pub fn name(self) -> &'static str {
        match self {
            Area::Health => "health",
            Area::Diff => "diff",
            Area::Sync => "sync",
            Area::Autosync => "autosync",
        }
    }
}

/// One case: the method's area and its `params`. With `ssa`, one diff case in four is of an
/// Application that syncs with `ServerSideApply=true` (structured-merge diff). One case in
/// five is a sync operation (`sync_case`); one in ten of the rest an auto-sync decision
/// (`autosync_case`).
pub fn case(rng: &mut Rng, ssa: bool) -> (Area, Value) {
    if rng.chance(20) {
        return (Area::Sync, sync_case(rng));
    }
    if rng.chance(10) {
        return (Area::Autosync, autosync_case(rng));
    }
    if rng.chance(50) {
        let n = 1 + rng.below(3);
        let objects: Vec<Value> = (0..n).map(|i| health_object(rng, i)).collect();
        (Area::Health, json!({"objects": objects}))
    } else {
        diff_case(rng, ssa)
    }
}

fn meta(kind_name: &str, i: u64, generation: Option<u64>) -> Value {
    let mut m = json!({"name": format!("{kind_name}-{i}"), "namespace": "shop"});
    if let Some(g) = generation {
        m["generation"] = json!(g);
    }
    m
}

fn condition(t: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": t, "status": status, "reason": reason, "message": message})
}

fn health_object(rng: &mut Rng, i: u64) -> Value {
    let generation = 1 + rng.below(4);
    let observed = if rng.chance(80) { generation } else { generation - 1 };
    let replicas = rng.below(4);
    let updated = rng.below(replicas + 1);
    let available = rng.below(updated + 1);
    let ready = rng.below(replicas + 1);
    match rng.below(11) {
        0 => {
            let mut status = json!({"observedGeneration": observed, "replicas": replicas,
                "updatedReplicas": updated, "availableReplicas": available, "readyReplicas": ready});
            if rng.chance(20) {
                status["conditions"] = json!([condition(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    "ReplicaSet \"api-1\" has timed out progressing."
                )]);
            }
            if rng.chance(15) {
                status["replicas"] = json!(replicas + 1);
            }
            let mut spec = json!({"replicas": replicas});
            if rng.chance(10) {
                spec["paused"] = json!(true);
            }
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("deploy", i, Some(generation)),
                "spec": spec, "status": status})
        }
        1 => {
            let strategy = if rng.chance(20) { "OnDelete" } else { "RollingUpdate" };
            let mut status = json!({"observedGeneration": observed, "replicas": replicas,
                "readyReplicas": ready, "updatedReplicas": updated, "currentRevision": "web-1",
                "updateRevision": if rng.chance(70) { "web-1" } else { "web-2" }});
            if rng.chance(50) {
                status["availableReplicas"] = json!(available);
            }
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("sts", i, Some(generation)),
                "spec": {"replicas": replicas, "updateStrategy": {"type": strategy}}, "status": status})
        }
        2 => {
            let strategy = if rng.chance(20) { "OnDelete" } else { "RollingUpdate" };
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta("ds", i, Some(generation)),
                "spec": {"updateStrategy": {"type": strategy}},
                "status": {"observedGeneration": observed, "desiredNumberScheduled": replicas,
                    "updatedNumberScheduled": updated, "numberAvailable": available,
                    "currentNumberScheduled": replicas, "numberReady": ready}})
        }
        3 => {
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta("rs", i, Some(generation)),
            "spec": {"replicas": replicas},
            "status": {"observedGeneration": observed, "replicas": replicas, "availableReplicas": available,
                "readyReplicas": ready}})
        }
        4 => pod(rng, i),
        5 => {
            let t = *rng.pick(&["ClusterIP", "LoadBalancer", "NodePort", "ExternalName"]);
            let mut svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": meta("svc", i, None),
                "spec": {"type": t, "ports": [{"port": 80}]}});
            if rng.chance(50) {
                svc["status"] = json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}});
            } else if rng.chance(50) {
                svc["status"] = json!({"loadBalancer": {}});
            }
            svc
        }
        6 => {
            let phase = *rng.pick(&["Bound", "Pending", "Lost", "Available"]);
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta("pvc", i, None),
                "spec": {"accessModes": ["ReadWriteOnce"]}, "status": {"phase": phase}})
        }
        7 => {
            let mut status = json!({});
            match rng.below(4) {
                0 => status["conditions"] = json!([condition("Complete", "True", "", "")]),
                1 => {
                    status["conditions"] = json!([condition(
                        "Failed",
                        "True",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit"
                    )])
                }
                2 => status["active"] = json!(1),
                _ => {}
            }
            let mut job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("job", i, None),
                "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "busybox"}]}}},
                "status": status});
            if rng.chance(15) {
                job["spec"]["suspend"] = json!(true);
            }
            job
        }
        8 => {
            let mut ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": meta("ing", i, None), "spec": {"rules": [{"host": "shop.example.com"}]}});
            if rng.chance(60) {
                ing["status"] =
                    json!({"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}});
            }
            ing
        }
        9 => {
            let st = *rng.pick(&["True", "False", "Unknown"]);
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": format!("v1beta1.metrics-{i}.k8s.io")},
                "spec": {"service": {"name": "metrics", "namespace": "kube-system"}},
                "status": {"conditions": [condition("Available", st, "Passed", "all checks passed")]}})
        }
        _ => canary(rng, i),
    }
}

fn pod(rng: &mut Rng, i: u64) -> Value {
    let phase = *rng.pick(&["Pending", "Running", "Succeeded", "Failed", "Unknown"]);
    let restart = *rng.pick(&["Always", "OnFailure", "Never"]);
    let mut cs = json!({"name": "app", "ready": rng.chance(60), "restartCount": rng.below(3)});
    match rng.below(4) {
        0 => {
            cs["state"] =
                json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off restarting"}})
        }
        1 => cs["state"] = json!({"waiting": {"reason": "ContainerCreating"}}),
        2 => {
            cs["state"] =
                json!({"terminated": {"exitCode": 1, "reason": "Error", "message": "boom"}})
        }
        _ => cs["state"] = json!({"running": {"startedAt": "2024-05-01T10:00:00Z"}}),
    }
    let mut status = json!({"phase": phase, "containerStatuses": [cs]});
    if rng.chance(30) {
        status["conditions"] =
            json!([condition("Ready", if rng.chance(50) { "True" } else { "False" }, "", "")]);
    }
    if rng.chance(20) {
        status["message"] = json!("The node was low on resource: memory.");
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta("pod", i, None),
        "spec": {"restartPolicy": restart, "containers": [{"name": "app", "image": "shop/app:1"}]},
        "status": status})
}

fn canary(rng: &mut Rng, i: u64) -> Value {
    let generation = 1 + rng.below(5);
    let replicas = 1 + rng.below(4);
    let updated = rng.below(replicas + 1);
    let mut status = json!({"replicas": replicas + rng.below(2), "updatedReplicas": updated,
        "availableReplicas": rng.below(updated + 1)});
    if rng.chance(80) {
        // The Rollout controller writes observedGeneration as a string.
        status["observedGeneration"] =
            json!(format!("{}", if rng.chance(80) { generation } else { generation - 1 }));
    }
    let mut conditions = vec![];
    if rng.chance(15) {
        conditions.push(condition("InvalidSpec", "True", "InvalidSpec", "The Rollout is invalid"));
    }
    if rng.chance(15) {
        conditions.push(condition(
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
            "deadline exceeded",
        ));
    }
    if rng.chance(20) {
        conditions.push(condition("Healthy", "False", "Unhealthy", "2 replicas are unhealthy"));
    }
    if !conditions.is_empty() {
        status["conditions"] = json!(conditions);
    }
    if rng.chance(15) {
        status["pauseConditions"] = json!([{"reason": "CanaryPauseStep"}, {"reason": "Manual"}]);
    }
    let mut obj = json!({"apiVersion": "example.com/v1", "kind": "Canary", "metadata": meta("canary", i, Some(generation)),
        "spec": {"replicas": replicas}, "status": status});
    if rng.chance(10) {
        obj["spec"]["paused"] = json!(true);
    }
    if rng.chance(10) {
        obj.as_object_mut().map(|o| o.remove("status"));
    }
    obj
}

fn container(rng: &mut Rng, image_tag: &str) -> Value {
    let mut c = json!({"name": "app", "image": format!("registry.example.com/shop/app:{image_tag}"),
        "ports": [{"containerPort": 8080}],
        "env": [{"name": "MODE", "value": "prod"}, {"name": "LOG", "value": "info"}]});
    if rng.chance(60) {
        c["resources"] = json!({"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}});
    }
    c
}

fn deployment(rng: &mut Rng, i: u64) -> Value {
    let c = container(rng, "1.0");
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("api-{i}"), "namespace": "shop", "labels": {"app": "api"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}}, "spec": {"containers": [c]}}}})
}

fn configmap(_rng: &mut Rng, i: u64) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cfg-{i}"), "namespace": "shop"},
        "data": {"a": "1", "b": "two"}})
}

/// base64 of a few short values, so a Secret's data is valid.
const SECRET_VALUES: [(&str, &str); 4] =
    [("admin", "YWRtaW4="), ("s3cr3t", "czNjcjN0"), ("hunter2", "aHVudGVyMg=="), ("", "")];

fn secret(rng: &mut Rng, i: u64) -> Value {
    let mut s = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("creds-{i}"), "namespace": "shop"}});
    if rng.chance(70) {
        s["type"] = json!("Opaque");
    }
    let user = SECRET_VALUES[0];
    let pass = *rng.pick(&SECRET_VALUES[1..]);
    if rng.chance(30) {
        // Written in clear text; the API server stores it base64-encoded under `data`.
        s["stringData"] = json!({"user": user.0, "pass": pass.0});
    } else {
        s["data"] = json!({"user": user.1, "pass": pass.1});
    }
    s
}

fn service(_rng: &mut Rng, i: u64) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("svc-{i}"), "namespace": "shop"},
        "spec": {"selector": {"app": "api"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
}

/// The metadata the API server gives a created object.
fn server_metadata(obj: &mut Value) {
    obj["metadata"]["uid"] = json!("0b9a2f1e-1111-4c3d-8e2f-000000000001");
    obj["metadata"]["resourceVersion"] = json!("12345");
    obj["metadata"]["creationTimestamp"] = json!("2024-05-01T10:00:00Z");
}

/// What the API server adds to a created object.
fn server_defaults(obj: &mut Value) {
    let kind = obj["kind"].as_str().unwrap_or("").to_string();
    server_metadata(obj);
    match kind.as_str() {
        "Deployment" => {
            obj["metadata"]["generation"] = json!(3);
            obj["spec"]["revisionHistoryLimit"] = json!(10);
            obj["spec"]["progressDeadlineSeconds"] = json!(600);
            obj["spec"]["strategy"] = json!({"type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}});
            let pod = &mut obj["spec"]["template"]["spec"];
            pod["restartPolicy"] = json!("Always");
            pod["dnsPolicy"] = json!("ClusterFirst");
            pod["schedulerName"] = json!("default-scheduler");
            pod["terminationGracePeriodSeconds"] = json!(30);
            pod["securityContext"] = json!({});
            if let Some(cs) = pod["containers"].as_array_mut() {
                for c in cs {
                    c["imagePullPolicy"] = json!("IfNotPresent");
                    c["terminationMessagePath"] = json!("/dev/termination-log");
                    c["terminationMessagePolicy"] = json!("File");
                    if let Some(ps) = c["ports"].as_array_mut() {
                        for p in ps {
                            p["protocol"] = json!("TCP");
                        }
                    }
                }
            }
            obj["status"] = json!({"observedGeneration": 3, "replicas": 2, "readyReplicas": 2});
        }
        "Secret" => {
            if obj.get("type").is_none() {
                obj["type"] = json!("Opaque");
            }
            if let Some(Value::Object(clear)) =
                obj.as_object_mut().and_then(|o| o.remove("stringData"))
            {
                let data: serde_json::Map<String, Value> = clear
                    .iter()
                    .map(|(k, v)| {
                        let text = v.as_str().unwrap_or("");
                        let b64 =
                            SECRET_VALUES.iter().find(|(t, _)| *t == text).map_or("", |(_, b)| *b);
                        (k.clone(), json!(b64))
                    })
                    .collect();
                obj["data"] = Value::Object(data);
            }
        }
        "Service" => {
            obj["spec"]["clusterIP"] = json!("10.96.0.12");
            obj["spec"]["type"] = json!("ClusterIP");
            obj["spec"]["sessionAffinity"] = json!("None");
            if let Some(ps) = obj["spec"]["ports"].as_array_mut() {
                for p in ps {
                    p["protocol"] = json!("TCP");
                }
            }
        }
        _ => {}
    }
}

fn managed_fields(manager: &str, operation: &str, fields: Value) -> Value {
    json!({"manager": manager, "operation": operation, "apiVersion": "apps/v1",
        "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields})
}

/// A desired object, its live counterpart with drift, and an Application.
fn diff_case(rng: &mut Rng, ssa: bool) -> (Area, Value) {
    let n = 1 + rng.below(3);
    let mut desired = vec![];
    let mut live = vec![];
    let mut ignores = vec![];
    for i in 0..n {
        // About a third of the objects are of the kinds whose defaulting is hard to reproduce
        // (`defaulting.rs`), desired and live.
        let tricky = rng.chance(35);
        let d = if tricky {
            defaulting::desired(rng, i)
        } else {
            match rng.below(4) {
                0 => deployment(rng, i),
                1 => configmap(rng, i),
                2 => secret(rng, i),
                _ => service(rng, i),
            }
        };
        let kind = d["kind"].as_str().unwrap_or("").to_string();
        // What was applied last: the desired object or an older one.
        let mut applied = if tricky { defaulting::applied(rng, &d) } else { d.clone() };
        if rng.chance(20) && kind == "ConfigMap" {
            applied["data"]["old"] = json!("gone from git");
        }
        if rng.chance(20) && kind == "Secret" && applied.get("data").is_some() {
            applied["data"]["old"] = json!("b2xk");
        }
        let mut l = applied.clone();
        if !tricky {
            server_defaults(&mut l);
        } else if rng.chance(75) {
            server_metadata(&mut l);
            defaulting::server_fill(&mut l);
        } else {
            // Stored as written (an object of a fake or an older server): defaulting matters
            // on both sides.
            server_metadata(&mut l);
        }
        if rng.chance(85) {
            l["metadata"]["annotations"] = json!({"kubectl.kubernetes.io/last-applied-configuration":
                serde_json::to_string(&applied).unwrap_or_default()});
        }
        if rng.chance(90) {
            // The app found this object by its tracking annotation (rarely: an older app's).
            let api = d["apiVersion"].as_str().unwrap_or("");
            let group = if api.contains('/') { api.split('/').next().unwrap_or("") } else { "" };
            let app = if rng.chance(95) { "my-app" } else { "old-app" };
            let ann = format!(
                "{app}:{group}/{kind}:shop/{}",
                d["metadata"]["name"].as_str().unwrap_or("")
            );
            let anns = l["metadata"]["annotations"].as_object().cloned().unwrap_or_default();
            let mut anns = Value::Object(anns);
            anns["argocd.argoproj.io/tracking-id"] = json!(ann);
            l["metadata"]["annotations"] = anns;
        }
        match kind.as_str() {
            _ if tricky => defaulting::drift(rng, &mut l),
            "Deployment" => {
                let c = &mut l["spec"]["template"]["spec"]["containers"][0];
                match rng.below(9) {
                    0 => l["spec"]["replicas"] = json!(5),
                    1 => c["image"] = json!("registry.example.com/shop/app:1.1"),
                    2 => {
                        // env added outside Git
                        if let Some(env) = c["env"].as_array_mut() {
                            env.push(json!({"name": "DEBUG", "value": "1"}));
                        }
                    }
                    3 => {
                        // list reorder
                        if let Some(env) = c["env"].as_array_mut() {
                            env.reverse();
                        }
                    }
                    // an equal quantity in another spelling
                    4 if c.get("resources").is_some() => {
                        c["resources"]["limits"]["cpu"] = json!("1000m")
                    }
                    5 if c.get("resources").is_some() => {
                        c["resources"]["requests"]["memory"] = json!("256Mi");
                    }
                    6 => {
                        l["spec"]["template"]["metadata"]["annotations"] =
                            json!({"kubectl.kubernetes.io/restartedAt": "2024-05-01T11:00:00Z"})
                    }
                    _ => {}
                }
                if rng.chance(30) {
                    let mut mf = vec![managed_fields(
                        "argocd-controller",
                        "Apply",
                        json!({"f:spec": {"f:replicas": {}, "f:template": {}}}),
                    )];
                    if rng.chance(50) {
                        mf.push(managed_fields(
                            "kube-controller-manager",
                            "Update",
                            json!({"f:spec": {"f:replicas": {}}}),
                        ));
                    }
                    l["metadata"]["managedFields"] = json!(mf);
                }
            }
            "Secret" => match rng.below(5) {
                0 => l["data"]["pass"] = json!("Y2hhbmdlZA=="),
                1 => l["data"]["token"] = json!("dG9rZW4="),
                2 => {
                    l["data"].as_object_mut().map(|d| d.remove("user"));
                }
                _ => {}
            },
            "ConfigMap" => match rng.below(4) {
                0 => l["data"]["a"] = json!("changed"),
                1 => l["data"]["extra"] = json!("added by hand"),
                2 => l["data"]["b"] = Value::Null,
                _ => {}
            },
            _ => match rng.below(3) {
                0 => l["spec"]["ports"][0]["targetPort"] = json!(9090),
                1 => l["spec"]["selector"]["tier"] = json!("web"),
                _ => {}
            },
        }
        if tricky && rng.chance(20) {
            ignores.extend(defaulting::ignore_rule(rng, &kind));
        } else if !tricky && rng.chance(25) {
            let rule = match kind.as_str() {
                "Deployment" => match rng.below(3) {
                    0 => {
                        json!({"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]})
                    }
                    1 => json!({"group": "apps", "kind": "Deployment",
                        "jqPathExpressions": [".spec.template.spec.containers[].image"]}),
                    // By name: Argo CD's managed-fields normaliser has no type for the
                    // older Deployment versions of `defaulting.rs` (a nil parser, a panic).
                    _ => json!({"group": "apps", "kind": "Deployment",
                        "name": d["metadata"]["name"],
                        "managedFieldsManagers": ["kube-controller-manager"]}),
                },
                "ConfigMap" => json!({"kind": "ConfigMap", "jsonPointers": ["/data/a"]}),
                "Secret" => json!({"kind": "Secret", "jsonPointers": ["/data/pass"]}),
                _ => json!({"kind": "Service", "jqPathExpressions": [".spec.ports[].targetPort"]}),
            };
            ignores.push(rule);
        }
        desired.push(d);
        live.push(l);
    }
    let mut app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "my-app", "namespace": "argocd"},
        "spec": {"destination": {"namespace": "shop", "server": "https://kubernetes.default.svc"},
            "source": {"repoURL": "https://git.example.com/shop.git", "path": "shop"},
            "project": "default", "ignoreDifferences": ignores}});
    if ssa && rng.chance(25) {
        // Structured-merge diff: the app syncs with server-side apply. Argo CD refuses a
        // built-in object with a field its schema lacks; gitops-core's schema (Kubernetes
        // 1.24) cannot tell such a field from a newer one (testdata/SKIPPED.md), so the
        // unknown fields of `defaulting.rs` are left out here.
        app["spec"]["syncPolicy"] = json!({"syncOptions": ["ServerSideApply=true"]});
        // Older group/versions go to the served ones (`defaulting::served_version`), the
        // tracking id with them.
        for o in desired.iter_mut().chain(live.iter_mut()) {
            defaulting::drop_unknown(o);
            defaulting::served_version(o);
            if let Some(id) = o["metadata"]["annotations"][TRACKING].as_str() {
                let id = id.replace(":extensions/", ":apps/");
                o["metadata"]["annotations"][TRACKING] = json!(id);
            }
            if let Some(la) = o["metadata"]["annotations"][LAST_APPLIED].as_str() {
                let mut applied: Value = serde_json::from_str(la).unwrap_or(Value::Null);
                defaulting::drop_unknown(&mut applied);
                defaulting::served_version(&mut applied);
                o["metadata"]["annotations"][LAST_APPLIED] = json!(applied.to_string());
            }
        }
    }
    (Area::Diff, json!({"desired": desired, "live": live, "app": app}))
}

/// The annotations the sync cases use.
const WAVE: &str = "argocd.argoproj.io/sync-wave";
const HOOK: &str = "argocd.argoproj.io/hook";
const HOOK_DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
const SYNC_OPTIONS: &str = "argocd.argoproj.io/sync-options";
const TRACKING: &str = "argocd.argoproj.io/tracking-id";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// What the simulated cluster fails (`oracle/sync.go`).
const FAIL: &str = "oracle.gitops-core/fail";
/// The simulated health (`oracle/sync.go`).
const HEALTH: &str = "oracle.gitops-core/health";

/// A resource of a sync case: kinds built in, a CRD and its custom resources (one kind
/// namespaced, one cluster-scoped), and a custom resource whose CRD nobody serves. Names come
/// from a small pool, so objects of different kinds share names (ties in the task order).
fn sync_resource(rng: &mut Rng, crd_in_git: &mut bool) -> Value {
    let name = *rng.pick(&["a", "b", "c", "web"]);
    let meta = json!({"name": name});
    match rng.below(40) {
        0..=3 => {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}})
        }
        4..=6 => json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque"}),
        7..=9 => json!({"apiVersion": "v1", "kind": "Service", "metadata": meta,
            "spec": {"ports": [{"port": 80}]}}),
        10..=11 => json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}),
        12..=16 => json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": 1}}),
        17..=18 => {
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta})
        }
        19..=21 => json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": meta}),
        22..=24 => {
            // The app's namespace, or another one the next resources may live in.
            let ns = *rng.pick(&["shop", "other"]);
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        }
        25..=27 => {
            *crd_in_git = true;
            crd("widgets.example.com", "Widget", "widgets", "Namespaced")
        }
        28..=34 => json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta,
            "spec": {"size": 1}}),
        35..=38 => json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": meta}),
        _ => json!({"apiVersion": "unserved.example.com/v1", "kind": "Gizmo", "metadata": meta}),
    }
}

fn crd(name: &str, kind: &str, plural: &str, scope: &str) -> Value {
    let group = name.split_once('.').map_or("", |(_, g)| g);
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": group, "scope": scope, "names": {"kind": kind, "plural": plural},
            "versions": [{"name": "v1", "served": true, "storage": true}]}})
}

/// A hook: a Job or a Pod with hook types (Argo CD's, Helm's, or ones the engine ignores),
/// delete policies, a name or a generateName.
fn sync_hook(rng: &mut Rng, i: u64) -> Value {
    let (api, kind) = *rng.pick(&[("batch/v1", "Job"), ("v1", "Pod")]);
    let mut meta = if rng.chance(30) {
        json!({"generateName": format!("hook{i}-")})
    } else {
        json!({"name": format!("hook{i}")})
    };
    let mut ann = serde_json::Map::new();
    if rng.chance(90) {
        let types = *rng.pick(&[
            "PreSync",
            "PreSync",
            "Sync",
            "PostSync",
            "PostSync",
            "SyncFail",
            "PreSync,PostSync",
            "Skip",
            "Garbage",
        ]);
        ann.insert(HOOK.into(), json!(types));
    } else {
        ann.insert("helm.sh/hook".into(), json!(*rng.pick(&["pre-install", "post-upgrade"])));
    }
    if rng.chance(60) {
        let p = *rng.pick(&[
            "HookSucceeded",
            "HookFailed",
            "BeforeHookCreation",
            "HookSucceeded,HookFailed",
        ]);
        ann.insert(HOOK_DELETE_POLICY.into(), json!(p));
    }
    if rng.chance(12) {
        ann.insert(HEALTH.into(), json!("Degraded"));
    }
    meta["annotations"] = Value::Object(ann);
    json!({"apiVersion": api, "kind": kind, "metadata": meta,
        "spec": {"containers": [{"name": "m", "image": "busybox"}]}})
}

fn annotate(o: &mut Value, key: &str, value: &str) {
    let meta = &mut o["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"][key] = json!(value);
}

/// The tracking annotation the controller sets on every desired object.
fn track(o: &mut Value) {
    let r = |k: &str| o["metadata"][k].as_str().unwrap_or("").to_string();
    let api = o["apiVersion"].as_str().unwrap_or("");
    let group = api.rsplit_once('/').map_or("", |(g, _)| g).to_string();
    let id = format!(
        "my-app:{group}/{}:{}/{}",
        o["kind"].as_str().unwrap_or(""),
        r("namespace"),
        if r("name").is_empty() { r("generateName") } else { r("name") }
    );
    annotate(o, TRACKING, &id);
}

/// The live copy of an object as an earlier sync left it.
fn as_live(o: &Value, uid: u64) -> Value {
    let mut l = o.clone();
    let cluster_scoped = matches!(
        o["kind"].as_str(),
        Some("Namespace" | "ClusterRole" | "CustomResourceDefinition" | "Gadget")
    );
    if cluster_scoped {
        l["metadata"].as_object_mut().map(|m| m.remove("namespace"));
    } else if l["metadata"]["namespace"].is_null() {
        l["metadata"]["namespace"] = json!("shop");
    }
    l["metadata"]["uid"] = json!(format!("live-{uid}"));
    l
}

/// A sync operation: desired objects with waves, hooks and sync options, the live objects of
/// an earlier sync (some missing, some no longer in Git: prune candidates), the app's sync
/// options and the operation's settings; some objects fail to apply, a dry run or a prune,
/// some hooks end Degraded.
pub fn sync_case(rng: &mut Rng) -> Value {
    let mut desired = Vec::new();
    let mut live = Vec::new();
    let mut crd_in_git = false;
    let n = 1 + rng.below(6);
    let resource_options = [
        "Prune=false",
        "PruneLast=true",
        "Replace=true",
        "ServerSideApply=true",
        "SkipDryRunOnMissingResource=true",
        "Validate=false",
        "Force=true,Replace=true",
        "Prune=confirm",
    ];
    for _ in 0..n {
        let mut o = sync_resource(rng, &mut crd_in_git);
        if rng.chance(15) && o["kind"] != "Namespace" {
            o["metadata"]["namespace"] = json!("other");
        }
        if rng.chance(40) {
            let w = *rng.pick(&["-1", "0", "1", "2", "5"]);
            annotate(&mut o, WAVE, w);
        }
        if rng.chance(15) {
            let option = *rng.pick(&resource_options);
            annotate(&mut o, SYNC_OPTIONS, option);
        }
        if rng.chance(5) {
            let what = *rng.pick(&["apply", "apply", "dry-run"]);
            annotate(&mut o, FAIL, what);
        }
        track(&mut o);
        desired.push(o);
    }
    // The CRD of the custom resources is in the cluster already (or comes with the app).
    if !crd_in_git && rng.chance(60) {
        live.push(as_live(&crd("widgets.example.com", "Widget", "widgets", "Namespaced"), 900));
    }
    if rng.chance(80) {
        live.push(as_live(&crd("gadgets.example.com", "Gadget", "gadgets", "Cluster"), 901));
    }
    for i in 0..rng.below(4) {
        let mut h = sync_hook(rng, i);
        if rng.chance(40) {
            let w = *rng.pick(&["-1", "0", "1"]);
            annotate(&mut h, WAVE, w);
        }
        if rng.chance(6) {
            annotate(&mut h, FAIL, "apply");
        }
        track(&mut h);
        if h["metadata"]["name"].is_string() && rng.chance(25) {
            // A hook left by an earlier sync (with its finalizer, or already without it).
            let mut l = as_live(&h, 100 + i);
            if rng.chance(50) {
                l["metadata"]["finalizers"] = json!(["argocd.argoproj.io/hook-finalizer"]);
            }
            live.push(l);
        }
        desired.push(h);
    }
    // Some desired objects exist already, as the last of the desired objects of their key
    // was applied.
    let mut uid = 0;
    let mut seen = std::collections::BTreeSet::new();
    for d in desired.iter().rev() {
        let hook = !d["metadata"]["annotations"][HOOK].is_null()
            || !d["metadata"]["annotations"]["helm.sh/hook"].is_null();
        let l = as_live(d, 0);
        let key = (
            l["kind"].to_string(),
            l["metadata"]["namespace"].to_string(),
            l["metadata"]["name"].to_string(),
        );
        if !hook && seen.insert(key) && rng.chance(50) {
            uid += 1;
            let mut l = as_live(d, uid);
            if let Some(a) = l["metadata"]["annotations"].as_object_mut() {
                a.remove(FAIL);
            }
            live.push(l);
        }
    }
    // Prune candidates: the app's objects no longer in Git.
    for i in 0..rng.below(3) {
        let mut o = match rng.below(4) {
            0 => {
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("old{i}")}})
            }
            1 => {
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": format!("old{i}")}})
            }
            2 => json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": format!("old{i}")}}),
            _ => {
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": *rng.pick(&["a", "b"])}})
            }
        };
        if rng.chance(40) {
            let w = *rng.pick(&["-1", "1", "3"]);
            annotate(&mut o, WAVE, w);
        }
        if rng.chance(25) {
            let option = *rng.pick(&["Prune=false", "PruneLast=true", "Prune=confirm"]);
            annotate(&mut o, SYNC_OPTIONS, option);
        }
        if rng.chance(8) {
            annotate(&mut o, FAIL, "delete");
        }
        track(&mut o);
        let l = as_live(&o, 200 + i);
        // A desired object of the same key makes it no prune candidate; keep one of them.
        let key = |v: &Value| {
            (v["kind"].clone(), v["metadata"]["name"].clone(), v["metadata"]["namespace"].clone())
        };
        if !live.iter().any(|x| key(x) == key(&l)) {
            live.push(l);
        }
    }
    if rng.chance(20) {
        live.push(as_live(
            &json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "shop"}}),
            950,
        ));
    }
    let app_options = [
        "CreateNamespace=true",
        "CreateNamespace=true",
        "PruneLast=true",
        "Replace=true",
        "ServerSideApply=true",
        "PrunePropagationPolicy=background",
        "Validate=false",
        "SkipDryRunOnMissingResource=true",
    ];
    let mut options: Vec<&str> = Vec::new();
    for _ in 0..rng.below(3) {
        let o = *rng.pick(&app_options);
        if !options.contains(&o) {
            options.push(o);
        }
    }
    let mut sync = json!({"revision": "0123456789abcdef", "prune": rng.chance(70)});
    if rng.chance(5) {
        sync["dryRun"] = json!(true);
    }
    match rng.below(20) {
        0 => sync["syncStrategy"] = json!({"apply": {"force": false}}),
        1 => sync["syncStrategy"] = json!({"hook": {"force": true}}),
        2 => {
            let d = &desired[0];
            let api = d["apiVersion"].as_str().unwrap_or("");
            let group = api.rsplit_once('/').map_or("", |(g, _)| g);
            sync["resources"] =
                json!([{"group": group, "kind": d["kind"], "name": d["metadata"]["name"]}]);
        }
        _ => {}
    }
    // As an automated sync or the UI writes it: the spec's options in the operation (the
    // controller reads only the operation's).
    sync["syncOptions"] = json!(options.clone());
    let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "my-app", "namespace": "argocd"},
        "spec": {"destination": {"namespace": "shop", "server": "https://kubernetes.default.svc"},
            "source": {"repoURL": "https://git.example.com/shop.git", "path": "shop"},
            "project": "default", "syncPolicy": {"syncOptions": options}},
        "operation": {"sync": sync}});
    json!({"app": app, "desired": desired, "live": live, "startedAt": 1_700_000_000})
}

/// A sync window schedule: mostly built field by field, some whole schedules of other shapes.
fn schedule(rng: &mut Rng) -> String {
    if rng.chance(15) {
        return rng
            .pick(&[
                "0 0 31 4 *",
                "0 0 29 2 *",
                "0 0 30 2 *",
                "@daily",
                "@every 1h",
                "0 0 L * *",
                "* * * *",
                "0 * * * * *",
                "60 * * * *",
                "*/0 * * * *",
                "1-5-7 * * * *",
                "5-1 * * * *",
                "0 24 * * *",
                "0 0 0 * *",
                "0 0 * 13 *",
                "0 0 * * 7",
                "0 0 * foo *",
                "CRON_TZ=UTC */5 * * * *",
                "TZ=Etc/GMT+2 0 * * * *",
                "-1 * * * *",
                "+5 * * * *",
                "",
                "  */7   *  * * *  ",
            ])
            .to_string();
    }
    let minute = *rng.pick(&[
        "*", "?", "0", "*/5", "*/2", "*/15", "5/10", "0-29", "10-50/7", "15,45", "59", "*/1",
    ]);
    let hour = *rng.pick(&["*", "*", "*", "0", "9-17", "*/3", "22", "0,12", "23", "1-23/2"]);
    let dom = *rng.pick(&["*", "*", "*", "?", "1", "15", "*/2", "1-15", "28-31", "10,20"]);
    let month = *rng.pick(&["*", "*", "*", "*", "jan", "Dec", "1-6", "*/2", "feb-nov"]);
    let dow = *rng.pick(&["*", "*", "*", "?", "1-5", "MON-FRI", "sat,sun", "0", "3", "*/2"]);
    format!("{minute} {hour} {dom} {month} {dow}")
}

/// A sync window of an AppProject.
fn sync_window(rng: &mut Rng) -> Value {
    let kind = if rng.chance(3) {
        *rng.pick(&["", "Deny", "block"])
    } else {
        *rng.pick(&["allow", "deny"])
    };
    let duration = *rng.pick(&[
        "1h", "30m", "2m", "1m", "90s", "1h30m", "24h", "12h", "0s", "168h", "720h", "45m", "3m",
        "1d", "", "-1h", "10", "1.5h",
    ]);
    let mut w = json!({"kind": kind, "schedule": schedule(rng), "duration": duration});
    let globs = |rng: &mut Rng, pool: &[&'static str]| -> Value {
        let n = 1 + rng.below(2);
        json!((0..n).map(|_| *rng.pick(pool)).collect::<Vec<_>>())
    };
    if rng.chance(55) {
        w["applications"] = globs(
            rng,
            &[
                "*",
                "shop*",
                "shop",
                "billing",
                "web-?rontend",
                "[bs]*",
                "{shop,web}*",
                "pay*s",
                "*-api",
                "other",
                "!shop",
                "[!b]*",
                "\\*",
            ],
        );
    }
    if rng.chance(40) {
        w["namespaces"] =
            globs(rng, &["*", "shop", "prod", "prod*", "kube-*", "staging", "?hop", ""]);
    }
    if rng.chance(35) {
        w["clusters"] = globs(
            rng,
            &[
                "*",
                "in-cluster",
                "prod-*",
                "https://kubernetes.default.svc",
                "https://*.example.com:6443",
                "*prod*",
            ],
        );
    }
    if rng.chance(30) {
        w["manualSync"] = json!(true);
    }
    if rng.chance(25) {
        w["andOperator"] = json!(true);
    }
    if rng.chance(35) {
        w["timeZone"] = json!(*rng.pick(&[
            "UTC",
            "",
            "Etc/GMT+5",
            "Etc/GMT-3",
            "GMT",
            "Etc/UTC",
            "Etc/GMT-14",
            "Etc/GMT+12",
            "Europe/Paris",
            "Asia/Kolkata",
            "Nowhere/City",
            "Local",
        ]));
    }
    w
}

/// An auto-sync case: an Application (destination, automated policy, retry), its project's
/// sync windows, whether the sync is manual, and a retry to compute the next attempt of.
pub fn autosync_case(rng: &mut Rng) -> Value {
    let name = *rng.pick(&["shop", "shop-api", "billing", "web-frontend", "payments", "other"]);
    let mut destination =
        json!({"namespace": *rng.pick(&["shop", "prod", "prod-eu", "staging", "kube-system", ""])});
    match rng.below(4) {
        0 => destination["name"] = json!(*rng.pick(&["in-cluster", "prod-eu", "edge"])),
        1 => {}
        _ => {
            destination["server"] = json!(*rng.pick(&[
                "https://kubernetes.default.svc",
                "https://prod.example.com:6443",
                "https://10.0.0.1",
            ]))
        }
    }
    let mut policy = json!({});
    if rng.chance(75) {
        let mut automated = json!({});
        if rng.chance(40) {
            automated["enabled"] = json!(rng.chance(60));
        }
        if rng.chance(50) {
            automated["prune"] = json!(true);
        }
        if rng.chance(50) {
            automated["selfHeal"] = json!(true);
        }
        policy["automated"] = automated;
    }
    let mut retry = Value::Null;
    if rng.chance(70) {
        retry = json!({"limit": *rng.pick(&[0, 1, 3, 5, -1])});
        if rng.chance(80) {
            let mut backoff = json!({});
            if rng.chance(80) {
                backoff["duration"] = json!(
                    *rng.pick(&["5s", "10", "1m", "2m30s", "0", "", "1h", "250ms", "bad", "30",])
                );
            }
            if rng.chance(70) {
                backoff["factor"] = json!(*rng.pick(&[1, 2, 2, 3, 0, 10]));
            }
            if rng.chance(70) {
                backoff["maxDuration"] =
                    json!(*rng.pick(&["3m", "1h", "0", "", "600", "10m", "5s", "x1"]));
            }
            retry["backoff"] = backoff;
        }
        policy["retry"] = retry.clone();
    }
    let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"project": "default", "destination": destination,
            "source": {"repoURL": "https://git.example.com/shop.git", "path": "deploy"},
            "syncPolicy": policy}});
    let n = rng.below(5);
    let windows: Vec<Value> = (0..n).map(|_| sync_window(rng)).collect();
    let last = *rng.pick(&["2026-03-01T12:00:00Z", "2026-12-31T23:59:59Z", "2024-02-29T00:00:00Z"]);
    let count = if rng.chance(90) { rng.below(9) } else { *rng.pick(&[20, 40, 64]) };
    json!({"app": app,
        "project": {"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "default"}, "spec": {"syncWindows": windows}},
        "manual": rng.chance(30), "retry": retry, "lastAttempt": last, "retryCount": count})
}
