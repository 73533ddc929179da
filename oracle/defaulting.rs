//! Desired objects whose Kubernetes defaulting is hard to reproduce, what an API server makes
//! of them, and the drift a controller, a webhook or a person adds: pod templates of every
//! workload kind (several and duplicate containers, a container without a name, ports of one
//! number and two protocols, volumes of every defaulted source, partial probes, quantities
//! that round, images with and without tags, gRPC probes), workloads of older API versions
//! (apps/v1beta1, apps/v1beta2, extensions/v1beta1), Services of every type, Jobs, CronJobs,
//! NetworkPolicies, HorizontalPodAutoscalers, RoleBindings and ClusterRoleBindings, Namespaces,
//! PersistentVolumeClaims, Mutating and Validating WebhookConfigurations (v1 and v1beta1),
//! LimitRanges, StorageClasses, CSIDrivers and PriorityClasses; unknown fields, explicit
//! nulls, keys starting with `$` and numbers written as floats among them.

use serde_json::{Map, Value, json};

use crate::generate::Rng;

/// A field no built-in type has: the typed decode drops it, an API server prunes it.
const UNKNOWN: &str = "x-unknown";

/// Quantities as written in Git and as the API server gives them back.
fn quantities() -> [(Value, &'static str); 15] {
    [
        (json!("0.0001"), "1m"),
        (json!("1000m"), "1"),
        (json!("1.5"), "1500m"),
        (json!("100m"), "100m"),
        (json!("0.5Gi"), "512Mi"),
        (json!("1e3"), "1k"),
        (json!("128Mi"), "128Mi"),
        (json!("1G"), "1G"),
        (json!("2"), "2"),
        (json!(1.5), "1500m"),
        (json!(2), "2"),
        (json!("0.1"), "100m"),
        (json!("1.5Gi"), "1536Mi"),
        (json!("500M"), "500M"),
        (json!("0.00001"), "1m"),
    ]
}

fn quantity(rng: &mut Rng) -> Value {
    let qs = quantities();
    qs[rng.below(qs.len() as u64) as usize].0.clone()
}

const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// Images and the pull policy Kubernetes gives each when none is written.
fn images() -> [(String, &'static str); 8] {
    [
        ("nginx".into(), "Always"),
        ("nginx:latest".into(), "Always"),
        ("nginx:1.25".into(), "IfNotPresent"),
        (format!("nginx@{DIGEST}"), "IfNotPresent"),
        (format!("nginx:latest@{DIGEST}"), "Always"),
        ("registry.example.com:5000/shop/app".into(), "Always"),
        ("registry.example.com:5000/shop/app:2.1".into(), "IfNotPresent"),
        ("Shop/App:1".into(), "IfNotPresent"),
    ]
}

/// Keys starting with `$` (the spelling of strategic merge patch directives) in a map of
/// strings.
const DOLLAR_KEYS: [&str; 5] =
    ["$comment", "$retainKeys", "$setElementOrder/containers", "$x", "$patch"];

fn dollar_key(rng: &mut Rng) -> &'static str {
    DOLLAR_KEYS[rng.below(DOLLAR_KEYS.len() as u64) as usize]
}

fn labels(rng: &mut Rng, name: &str) -> Value {
    let mut l = json!({"app": name});
    if rng.chance(6) {
        l[dollar_key(rng)] = json!("replace");
    }
    l
}

fn metadata(rng: &mut Rng, name: String, namespaced: bool) -> Value {
    let mut m = json!({"name": name});
    if namespaced {
        m["namespace"] = json!("shop");
    }
    if rng.chance(40) {
        m["labels"] = labels(rng, "api");
    }
    if rng.chance(6) {
        m["annotations"] = json!({dollar_key(rng): "note"});
    }
    m
}

fn probe(rng: &mut Rng) -> Value {
    let mut p = match rng.below(5) {
        0 => json!({"httpGet": {"port": 8080}}),
        1 => json!({"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTPS"}}),
        2 => json!({"tcpSocket": {"port": 8080}, "periodSeconds": 5}),
        3 => json!({"exec": {"command": ["cat", "/tmp/ready"]}, "failureThreshold": 30}),
        _ => json!({"grpc": {"port": 9000}, "initialDelaySeconds": 10}),
    };
    if p["grpc"].is_object() && rng.chance(30) {
        p["grpc"]["service"] = json!(*rng.pick(&["liveness", ""]));
    }
    if rng.chance(15) {
        p["timeoutSeconds"] = json!(0);
    }
    if rng.chance(10) {
        p["periodSeconds"] = json!(10.0);
    }
    p
}

fn resources(rng: &mut Rng) -> Value {
    match rng.below(5) {
        0 => json!({}),
        1 => json!({"limits": {"cpu": quantity(rng), "memory": quantity(rng)}}),
        2 => json!({"requests": {"cpu": quantity(rng)}}),
        _ => json!({"requests": {"cpu": quantity(rng), "memory": quantity(rng)},
            "limits": {"cpu": quantity(rng), "memory": quantity(rng)}}),
    }
}

fn ports(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => json!([{"containerPort": 8080}]),
        1 => json!([{"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
            {"name": "dns", "containerPort": 53, "protocol": "UDP"}]),
        2 => json!([{"containerPort": 53}, {"containerPort": 53, "protocol": "UDP"}]),
        3 => json!([{"name": "http", "containerPort": 8080.0}]),
        4 => {
            json!([{"containerPort": 9090, "hostPort": 9090}, {"containerPort": 8080, "name": "http"}])
        }
        _ => json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"}]),
    }
}

fn container(rng: &mut Rng, name: Option<&str>, init: bool, volumes: &[String]) -> Value {
    let imgs = images();
    let (image, _) = &imgs[rng.below(imgs.len() as u64) as usize];
    let mut c = json!({"image": image});
    if let Some(n) = name {
        c["name"] = json!(n);
    }
    if rng.chance(15) {
        c["imagePullPolicy"] = json!(*rng.pick(&["Always", "IfNotPresent", "Never"]));
    }
    if rng.chance(60) {
        c["ports"] = ports(rng);
    } else if rng.chance(5) {
        c["ports"] = Value::Null;
    }
    if rng.chance(50) {
        let mut env = vec![json!({"name": "MODE", "value": "prod"})];
        if rng.chance(50) {
            env.push(
                json!({"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}),
            );
        }
        if rng.chance(10) {
            env.push(json!({"name": "MODE", "value": "debug"}));
        }
        c["env"] = json!(env);
    } else if init && rng.chance(10) {
        c["env"] = Value::Null;
    }
    if rng.chance(60) {
        c["resources"] = resources(rng);
    }
    if !init {
        for p in ["livenessProbe", "readinessProbe", "startupProbe"] {
            if rng.chance(25) {
                c[p] = probe(rng);
            }
        }
    }
    if !volumes.is_empty() && rng.chance(60) {
        let v = rng.pick(volumes).clone();
        let mut m = json!({"name": v, "mountPath": format!("/mnt/{v}")});
        if rng.chance(30) {
            m["readOnly"] = json!(false);
        }
        c["volumeMounts"] = json!([m]);
    }
    match rng.below(12) {
        0 => c["securityContext"] = Value::Null,
        1 => {
            c["securityContext"] = json!({"runAsNonRoot": true, "allowPrivilegeEscalation": false})
        }
        _ => {}
    }
    if rng.chance(8) {
        c[UNKNOWN] = json!("kept?");
    }
    if init && rng.chance(15) {
        c["command"] = json!(["sh", "-c", "echo ready"]);
    }
    c
}

fn volume(rng: &mut Rng, name: &str) -> Value {
    let mut v = match rng.below(9) {
        0 => json!({"configMap": {"name": "app-config"}}),
        1 => json!({"secret": {"secretName": "creds"}}),
        2 => json!({"secret": {"secretName": "creds", "defaultMode": 256}}),
        3 => json!({"projected": {"sources": [{"serviceAccountToken": {"path": "token"}},
            {"configMap": {"name": "ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}),
        4 => json!({"downwardAPI": {"items": [{"path": "labels",
            "fieldRef": {"fieldPath": "metadata.labels"}}]}}),
        5 => json!({}),
        6 => json!({"hostPath": {"path": "/var/log"}}),
        7 => json!({"emptyDir": {"medium": "Memory", "sizeLimit": quantity(rng)}}),
        _ => json!({"persistentVolumeClaim": {"claimName": "data"}}),
    };
    v["name"] = json!(name);
    if rng.chance(8) {
        v[UNKNOWN] = json!(1);
    }
    v
}

/// A pod spec: one to three containers (two of one name, or one without a name, now and
/// then), init containers, volumes.
fn pod_spec(rng: &mut Rng, job: bool) -> Value {
    let mut volumes = vec![];
    let mut vols = vec![];
    if rng.chance(50) {
        for name in ["config", "creds", "scratch", "logs"] {
            if rng.chance(45) {
                vols.push(volume(rng, name));
                volumes.push(name.to_string());
            }
        }
    }
    let mut names: Vec<Option<&str>> = vec![Some("app")];
    for extra in ["sidecar", "metrics"] {
        if rng.chance(30) {
            names.push(Some(extra));
        }
    }
    if rng.chance(8) {
        names.push(Some("app"));
    }
    if rng.chance(5) {
        names.push(None);
    }
    let containers: Vec<Value> =
        names.iter().map(|n| container(rng, *n, false, &volumes)).collect();
    let mut spec = json!({"containers": containers});
    if rng.chance(30) {
        let n = 1 + rng.below(2);
        let inits: Vec<Value> = ["init", "migrate"]
            .iter()
            .take(n as usize)
            .map(|n| container(rng, Some(n), true, &volumes))
            .collect();
        spec["initContainers"] = json!(inits);
    } else if rng.chance(5) {
        spec["initContainers"] = Value::Null;
    }
    if !vols.is_empty() {
        spec["volumes"] = json!(vols);
    }
    if job {
        spec["restartPolicy"] = json!(*rng.pick(&["Never", "OnFailure"]));
    }
    match rng.below(12) {
        0 => spec["securityContext"] = Value::Null,
        1 => spec["securityContext"] = json!({"fsGroup": 2000}),
        _ => {}
    }
    if rng.chance(10) {
        spec["terminationGracePeriodSeconds"] = json!(30.0);
    }
    if rng.chance(15) {
        spec["serviceAccountName"] = json!("api");
    }
    spec
}

fn template(rng: &mut Rng, name: &str, job: bool) -> Value {
    let mut meta = json!({"labels": labels(rng, name)});
    if rng.chance(15) {
        meta["annotations"] = json!({"prometheus.io/scrape": "true"});
    }
    json!({"metadata": meta, "spec": pod_spec(rng, job)})
}

fn replicas(rng: &mut Rng, spec: &mut Value) {
    match rng.below(5) {
        0 => {}
        1 => spec["replicas"] = json!(2.0),
        2 => spec["replicas"] = json!(0),
        _ => spec["replicas"] = json!(2),
    }
}

fn workload(rng: &mut Rng, kind: &str, i: u64) -> Value {
    let short = match kind {
        "Deployment" => "deploy",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        _ => "rs",
    };
    let name = format!("{short}-{i}");
    let mut spec = json!({"selector": {"matchLabels": {"app": name}},
        "template": template(rng, &name, false)});
    match kind {
        "Deployment" => {
            replicas(rng, &mut spec);
            match rng.below(8) {
                0 => spec["strategy"] = Value::Null,
                1 => spec["strategy"] = json!({"type": "Recreate"}),
                2 => {
                    spec["strategy"] = json!({"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
                }
                3 => spec["strategy"] = json!({"rollingUpdate": {"maxSurge": "50%"}}),
                4 => spec["strategy"] = json!({"type": "RollingUpdate", UNKNOWN: true}),
                5 => spec["strategy"] = json!({"type": "Recreate", "rollingUpdate": null}),
                6 if rng.chance(30) => {
                    spec["strategy"] = json!({"type": "Recreate", "rollingUpdate": {}})
                }
                _ => {}
            }
            if rng.chance(15) {
                spec["revisionHistoryLimit"] = json!(3);
            }
        }
        "StatefulSet" => {
            replicas(rng, &mut spec);
            spec["serviceName"] = json!(name);
            match rng.below(7) {
                0 => spec["updateStrategy"] = json!({"type": "OnDelete"}),
                1 => spec["updateStrategy"] = json!({"rollingUpdate": {"partition": 1}}),
                2 => {
                    spec["updateStrategy"] =
                        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
                }
                3 => spec["updateStrategy"] = Value::Null,
                4 => spec["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {}}),
                _ => {}
            }
            if rng.chance(70) {
                let mut pvc = json!({"metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": quantity(rng)}}}});
                if rng.chance(30) {
                    pvc["spec"]["storageClassName"] = json!("fast");
                }
                spec["volumeClaimTemplates"] = json!([pvc]);
            }
            if rng.chance(20) {
                spec["podManagementPolicy"] = json!("Parallel");
            }
            if rng.chance(15) {
                spec["persistentVolumeClaimRetentionPolicy"] = json!({"whenDeleted": "Delete"});
            }
        }
        "DaemonSet" => match rng.below(6) {
            0 => spec["updateStrategy"] = json!({"type": "OnDelete"}),
            1 => spec["updateStrategy"] = json!({"rollingUpdate": {"maxUnavailable": "10%"}}),
            2 => {
                spec["updateStrategy"] = json!({"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
            }
            3 => spec["updateStrategy"] = Value::Null,
            _ => {}
        },
        _ => replicas(rng, &mut spec),
    }
    if rng.chance(10) {
        spec["minReadySeconds"] = json!(5);
    }
    // One in ten in an older group/version, whose defaults differ (without a selector now
    // and then: apps/v1beta1 and extensions/v1beta1 default it from the template's labels).
    let mut api = "apps/v1";
    if rng.chance(10) {
        let older: &[&str] = match kind {
            "Deployment" => &["apps/v1beta1", "apps/v1beta2", "extensions/v1beta1"],
            "StatefulSet" => &["apps/v1beta1", "apps/v1beta2"],
            _ => &["apps/v1beta2", "extensions/v1beta1"],
        };
        api = *rng.pick(older);
        if api != "apps/v1beta2" && rng.chance(40) {
            spec.as_object_mut().map(|s| s.remove("selector"));
        }
    }
    json!({"apiVersion": api, "kind": kind, "metadata": metadata(rng, name, true),
        "spec": spec})
}

fn job_spec(rng: &mut Rng, name: &str) -> Value {
    let mut spec = json!({"template": template(rng, name, true)});
    match rng.below(5) {
        0 => spec["completions"] = json!(3),
        1 => spec["parallelism"] = json!(2),
        2 => {
            spec["completions"] = json!(4);
            spec["completionMode"] = json!("Indexed");
        }
        _ => {}
    }
    if rng.chance(30) {
        spec["backoffLimit"] = json!(*rng.pick(&[0, 2, 6]));
    }
    if rng.chance(20) {
        spec["ttlSecondsAfterFinished"] = json!(600);
    }
    if rng.chance(15) {
        spec["podFailurePolicy"] = json!({"rules": [{"action": "FailJob",
            "onExitCodes": {"operator": "In", "values": [42]}}]});
    }
    if rng.chance(10) {
        spec["manualSelector"] = json!(false);
    }
    if rng.chance(10) {
        spec["podReplacementPolicy"] = json!("Failed");
    }
    spec
}

fn service(rng: &mut Rng, i: u64) -> Value {
    let t = *rng.pick(&["", "ClusterIP", "NodePort", "LoadBalancer", "ExternalName", "headless"]);
    let mut spec = json!({"selector": {"app": "api"}});
    spec["ports"] = match rng.below(6) {
        0 => json!([{"port": 80}]),
        1 => json!([{"name": "dns-tcp", "port": 53, "protocol": "TCP"},
            {"name": "dns", "port": 53, "protocol": "UDP"}]),
        2 => json!([{"name": "http", "port": 80, "targetPort": "http"},
            {"name": "https", "port": 443, "targetPort": 8443}]),
        3 => json!([{"name": "http", "port": 80.0, "targetPort": 8080}]),
        4 => json!([{"name": "a", "port": 53}, {"name": "b", "port": 53, "protocol": "UDP"}]),
        _ => json!([{"name": "http", "port": 80, "targetPort": 0}]),
    };
    match t {
        "" => {}
        "headless" => {
            spec["clusterIP"] = json!("None");
        }
        "ExternalName" => {
            spec["type"] = json!(t);
            spec["externalName"] = json!("db.example.com");
            if rng.chance(50) {
                spec.as_object_mut().map(|s| s.remove("selector"));
            }
        }
        _ => {
            spec["type"] = json!(t);
            if t == "NodePort" && rng.chance(40) {
                spec["ports"][0]["nodePort"] = json!(30080);
            }
            if t == "LoadBalancer" && rng.chance(30) {
                spec["externalTrafficPolicy"] = json!("Local");
            }
        }
    }
    match rng.below(4) {
        0 => spec["sessionAffinity"] = json!("ClientIP"),
        1 => {
            spec["sessionAffinity"] = json!("ClientIP");
            spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 600}});
        }
        2 if rng.chance(30) => spec["sessionAffinity"] = json!("None"),
        _ => {}
    }
    json!({"apiVersion": "v1", "kind": "Service", "metadata": metadata(rng, format!("svc-{i}"), true),
        "spec": spec})
}

fn network_policy(rng: &mut Rng, i: u64) -> Value {
    let mut spec = json!({"podSelector": if rng.chance(30) { json!({}) } else {
        json!({"matchLabels": {"app": "api"}}) }});
    spec["ingress"] = match rng.below(3) {
        0 => json!([{}]),
        1 => json!([{"from": [{"podSelector": {"matchLabels": {"role": "frontend"}}}],
            "ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}, {"port": "http"}]}]),
        _ => json!([{"from": [{"namespaceSelector": {}}],
            "ports": [{"port": 8000, "endPort": 9000}, {"protocol": "TCP"}]}]),
    };
    if rng.chance(50) {
        spec["egress"] = json!([{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
            "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53}]}]);
    }
    match rng.below(5) {
        0 => spec["policyTypes"] = json!(["Ingress"]),
        1 => spec["policyTypes"] = json!(["Ingress", "Egress"]),
        2 => spec["policyTypes"] = json!([]),
        _ => {}
    }
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": metadata(rng, format!("netpol-{i}"), true), "spec": spec})
}

fn hpa(rng: &mut Rng, i: u64) -> Value {
    let mut spec = json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
        "name": "deploy-0"}, "maxReplicas": 10});
    if rng.chance(40) {
        spec["minReplicas"] = json!(2);
    }
    match rng.below(4) {
        0 => spec["metrics"] = json!([]),
        1 => {
            spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}])
        }
        2 => {
            spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": quantity(rng)}}}])
        }
        _ => {}
    }
    match rng.below(5) {
        0 => spec["behavior"] = json!({"scaleDown": {"stabilizationWindowSeconds": 300}}),
        1 => {
            spec["behavior"] = json!({"scaleUp": {"policies": [{"type": "Pods", "value": 2,
            "periodSeconds": 60}]}})
        }
        2 => spec["behavior"] = json!({"scaleDown": {"selectPolicy": "Disabled"}}),
        3 => spec["behavior"] = json!({}),
        _ => {}
    }
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": metadata(rng, format!("hpa-{i}"), true), "spec": spec})
}

/// A RoleBinding or ClusterRoleBinding: `roleRef.apiGroup` given, empty or left out
/// (defaulted), subjects of every kind with and without `apiGroup`.
fn role_binding(rng: &mut Rng, i: u64) -> Value {
    let mut role_ref = json!({"kind": *rng.pick(&["Role", "ClusterRole"]), "name": "view"});
    match rng.below(5) {
        0 => {}
        1 => role_ref["apiGroup"] = json!(""),
        _ => role_ref["apiGroup"] = json!("rbac.authorization.k8s.io"),
    }
    let mut subjects = vec![];
    if rng.chance(70) {
        subjects.push(json!({"kind": "User", "name": "alice"}));
    }
    if rng.chance(50) {
        subjects.push(json!({"kind": "Group", "name": "devs",
            "apiGroup": "rbac.authorization.k8s.io"}));
    }
    if rng.chance(60) {
        let mut sa = json!({"kind": "ServiceAccount", "name": "default", "namespace": "shop"});
        if rng.chance(20) {
            sa["apiGroup"] = json!("");
        }
        subjects.push(sa);
    }
    if rng.chance(15) {
        subjects.push(json!({"kind": "Group", "name": "ops"}));
    }
    let cluster = rng.chance(30);
    let kind = if cluster { "ClusterRoleBinding" } else { "RoleBinding" };
    let mut rb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
        "metadata": metadata(rng, format!("rb-{i}"), !cluster), "roleRef": role_ref});
    if !subjects.is_empty() {
        rb["subjects"] = json!(subjects);
    }
    rb
}

fn namespace(rng: &mut Rng, i: u64) -> Value {
    let mut ns = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": metadata(rng, format!("team-{i}"), false)});
    if rng.chance(20) {
        ns["spec"] = json!({"finalizers": ["kubernetes"]});
    }
    ns
}

fn pvc(rng: &mut Rng, i: u64) -> Value {
    let mut spec = json!({"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": quantity(rng)}}});
    if rng.chance(40) {
        spec["storageClassName"] = json!("fast");
    }
    if rng.chance(15) {
        spec["volumeMode"] = json!("Block");
    }
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": metadata(rng, format!("pvc-{i}"), true), "spec": spec})
}

/// A Mutating or Validating WebhookConfiguration, admissionregistration.k8s.io/v1 or (one
/// in five) v1beta1, whose defaults differ (`timeoutSeconds`, `sideEffects`,
/// `admissionReviewVersions`, `failurePolicy`, `matchPolicy`).
fn webhooks(rng: &mut Rng, i: u64) -> Value {
    let mutating = rng.chance(60);
    let version = if rng.chance(20) { "v1beta1" } else { "v1" };
    let n = 1 + rng.below(2);
    let mut hooks = vec![];
    for h in 0..n {
        let mut w = json!({"name": format!("hook{h}.example.com"),
            "clientConfig": if rng.chance(70) {
                json!({"service": {"name": "injector", "namespace": "shop", "path": "/mutate"}})
            } else { json!({"url": "https://injector.example.com/mutate"}) },
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""],
                "apiVersions": ["v1"], "resources": ["pods"]}]});
        if rng.chance(80) {
            w["sideEffects"] = json!(*rng.pick(&["None", "NoneOnDryRun"]));
        }
        if rng.chance(60) {
            w["admissionReviewVersions"] = json!(["v1"]);
        }
        if rng.chance(30) {
            w["failurePolicy"] = json!("Ignore");
        }
        if rng.chance(15) {
            w["matchPolicy"] = json!("Exact");
        }
        if rng.chance(30) {
            w["namespaceSelector"] = json!({"matchLabels": {"inject": "true"}});
        }
        if rng.chance(20) {
            w["timeoutSeconds"] = json!(*rng.pick(&[10, 30]));
        }
        if mutating && rng.chance(15) {
            w["reinvocationPolicy"] = json!("IfNeeded");
        }
        hooks.push(w);
    }
    if rng.chance(5) {
        let dup = hooks[0].clone();
        hooks.push(dup);
    }
    let kind =
        if mutating { "MutatingWebhookConfiguration" } else { "ValidatingWebhookConfiguration" };
    json!({"apiVersion": format!("admissionregistration.k8s.io/{version}"), "kind": kind,
        "metadata": metadata(rng, format!("inject-{i}"), false), "webhooks": hooks})
}

/// A LimitRange: Container limits whose `default` and `defaultRequest` Kubernetes fills from
/// `max` and `min`, and a Pod limit it leaves alone.
fn limit_range(rng: &mut Rng, i: u64) -> Value {
    let mut item = json!({"type": "Container"});
    for key in ["max", "min", "default", "defaultRequest"] {
        if rng.chance(45) {
            item[key] = json!({"cpu": quantity(rng)});
            if rng.chance(50) {
                item[key]["memory"] = json!(quantity(rng));
            }
        }
    }
    let mut limits = vec![item];
    if rng.chance(40) {
        limits.push(json!({"type": "Pod", "max": {"cpu": quantity(rng)}}));
    }
    json!({"apiVersion": "v1", "kind": "LimitRange",
        "metadata": metadata(rng, format!("limits-{i}"), true), "spec": {"limits": limits}})
}

/// A StorageClass, CSIDriver or PriorityClass: cluster-scoped kinds with pointer defaults.
fn cluster_kind(rng: &mut Rng, i: u64) -> Value {
    match rng.below(3) {
        0 => {
            let mut sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": metadata(rng, format!("fast-{i}"), false),
                "provisioner": "ebs.csi.aws.com"});
            if rng.chance(30) {
                sc["reclaimPolicy"] = json!("Retain");
            }
            if rng.chance(30) {
                sc["volumeBindingMode"] = json!("WaitForFirstConsumer");
            }
            sc
        }
        1 => {
            let mut spec = json!({});
            if rng.chance(40) {
                spec["attachRequired"] = json!(false);
            }
            if rng.chance(30) {
                spec["volumeLifecycleModes"] = json!(["Persistent", "Ephemeral"]);
            }
            if rng.chance(20) {
                spec["fsGroupPolicy"] = json!("File");
            }
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                "metadata": metadata(rng, format!("csi-{i}.example.com"), false), "spec": spec})
        }
        _ => {
            let mut pc = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": metadata(rng, format!("high-{i}"), false), "value": 1000});
            if rng.chance(30) {
                pc["preemptionPolicy"] = json!("Never");
            }
            pc
        }
    }
}

/// A desired object of one of the kinds above.
pub fn desired(rng: &mut Rng, i: u64) -> Value {
    match rng.below(18) {
        0 | 1 => workload(rng, "Deployment", i),
        2 => workload(rng, "StatefulSet", i),
        3 => workload(rng, "DaemonSet", i),
        4 => workload(rng, "ReplicaSet", i),
        5 | 6 => service(rng, i),
        7 => {
            let name = format!("job-{i}");
            json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": metadata(rng, name.clone(), true), "spec": job_spec(rng, &name)})
        }
        8 => {
            let name = format!("cron-{i}");
            let mut spec = json!({"schedule": "*/5 * * * *",
                "jobTemplate": {"spec": job_spec(rng, &name)}});
            if rng.chance(30) {
                spec["concurrencyPolicy"] = json!("Forbid");
            }
            if rng.chance(20) {
                spec["suspend"] = json!(false);
            }
            if rng.chance(20) {
                spec["timeZone"] = json!("Etc/UTC");
            }
            json!({"apiVersion": "batch/v1", "kind": "CronJob",
                "metadata": metadata(rng, name, true), "spec": spec})
        }
        9 => network_policy(rng, i),
        10 => hpa(rng, i),
        11 => role_binding(rng, i),
        12 => namespace(rng, i),
        13 => pvc(rng, i),
        14 => webhooks(rng, i),
        15 => limit_range(rng, i),
        16 => cluster_kind(rng, i),
        _ => {
            let kind = *rng.pick(&["Deployment", "StatefulSet"]);
            workload(rng, kind, i)
        }
    }
}

/// The object an earlier sync applied: the desired one, or one that differs from it in a way
/// Git changed since.
pub fn applied(rng: &mut Rng, d: &Value) -> Value {
    let mut a = d.clone();
    if rng.chance(15) {
        if !a["metadata"]["labels"].is_object() {
            a["metadata"]["labels"] = json!({});
        }
        a["metadata"]["labels"]["removed-from-git"] = json!("yes");
    }
    a
}

// What an API server makes of an applied object.

fn set(m: &mut Value, key: &str, v: Value) {
    if m.is_object() && m.get(key).is_none_or(Value::is_null) {
        m[key] = v;
    }
}

/// The group/version of a kind the structured-merge schema (the Kubernetes 1.24 OpenAPI
/// document Argo CD reads from the cluster) serves: an object of an older one (apps/v1beta1,
/// extensions/v1beta1, admissionregistration.k8s.io/v1beta1) cannot be typed there, so a
/// structured-merge app gets its served version.
pub fn served_version(v: &mut Value) {
    let served = match v["apiVersion"].as_str() {
        Some("apps/v1beta1" | "apps/v1beta2" | "extensions/v1beta1") => "apps/v1",
        Some("admissionregistration.k8s.io/v1beta1") => "admissionregistration.k8s.io/v1",
        _ => return,
    };
    v["apiVersion"] = json!(served);
}

/// Removes the fields no built-in type has.
pub fn drop_unknown(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove(UNKNOWN);
            m.values_mut().for_each(drop_unknown);
        }
        Value::Array(l) => l.iter_mut().for_each(drop_unknown),
        _ => {}
    }
}

/// What the server stores has no nulls (but `creationTimestamp: null` of templates), no
/// unknown fields and integral numbers as integers.
fn stored(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, x| !x.is_null() && k != UNKNOWN);
            m.values_mut().for_each(stored);
        }
        Value::Array(l) => l.iter_mut().for_each(stored),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0) {
                *v = json!(f as i64);
            }
        }
        _ => {}
    }
}

fn canonical_quantities(m: &mut Value) {
    let qs = quantities();
    if let Some(map) = m.as_object_mut() {
        for q in map.values_mut() {
            if let Some((_, c)) = qs.iter().find(|(w, _)| w == q) {
                *q = json!(c);
            }
        }
    }
}

fn server_probe(p: &mut Value) {
    if !p.is_object() {
        return;
    }
    for (k, d) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        if p.get(k).is_none_or(|v| v.is_null() || *v == json!(0)) {
            p[k] = json!(d);
        }
    }
    if p["httpGet"].is_object() {
        set(&mut p["httpGet"], "path", json!("/"));
        set(&mut p["httpGet"], "scheme", json!("HTTP"));
    }
    if p["grpc"].is_object() {
        set(&mut p["grpc"], "service", json!(""));
    }
}

fn server_container(c: &mut Value) {
    let image = c["image"].as_str().unwrap_or("").to_string();
    let policy = images().iter().find(|(i, _)| *i == image).map_or("IfNotPresent", |(_, p)| *p);
    set(c, "imagePullPolicy", json!(policy));
    set(c, "terminationMessagePath", json!("/dev/termination-log"));
    set(c, "terminationMessagePolicy", json!("File"));
    for p in c["ports"].as_array_mut().into_iter().flatten() {
        set(p, "protocol", json!("TCP"));
    }
    for e in c["env"].as_array_mut().into_iter().flatten() {
        if e["valueFrom"]["fieldRef"].is_object() {
            set(&mut e["valueFrom"]["fieldRef"], "apiVersion", json!("v1"));
        }
    }
    for k in ["requests", "limits"] {
        canonical_quantities(&mut c["resources"][k]);
    }
    if c["resources"].is_null() {
        c["resources"] = json!({});
    }
    for k in ["livenessProbe", "readinessProbe", "startupProbe"] {
        server_probe(&mut c[k]);
    }
}

fn server_pod_spec(s: &mut Value) {
    set(s, "restartPolicy", json!("Always"));
    set(s, "dnsPolicy", json!("ClusterFirst"));
    set(s, "schedulerName", json!("default-scheduler"));
    set(s, "terminationGracePeriodSeconds", json!(30));
    set(s, "securityContext", json!({}));
    if let Some(sa) = s["serviceAccountName"].as_str().map(str::to_string) {
        set(s, "serviceAccount", json!(sa));
    }
    for k in ["containers", "initContainers"] {
        for c in s[k].as_array_mut().into_iter().flatten() {
            server_container(c);
        }
    }
    for v in s["volumes"].as_array_mut().into_iter().flatten() {
        let Some(m) = v.as_object_mut() else { continue };
        if m.keys().all(|k| k == "name") {
            m.insert("emptyDir".into(), json!({}));
        }
        for src in ["configMap", "secret", "downwardAPI", "projected"] {
            if v[src].is_object() {
                set(&mut v[src], "defaultMode", json!(420));
            }
        }
        if v["hostPath"].is_object() {
            set(&mut v["hostPath"], "type", json!(""));
        }
        let items = v.get_mut("downwardAPI").and_then(|d| d.get_mut("items"));
        for item in items.and_then(Value::as_array_mut).into_iter().flatten() {
            set(&mut item["fieldRef"], "apiVersion", json!("v1"));
        }
        let sources = v.get_mut("projected").and_then(|p| p.get_mut("sources"));
        for src in sources.and_then(Value::as_array_mut).into_iter().flatten() {
            if src["serviceAccountToken"].is_object() {
                set(&mut src["serviceAccountToken"], "expirationSeconds", json!(3600));
            }
        }
        if v["emptyDir"]["sizeLimit"].is_string() || v["emptyDir"]["sizeLimit"].is_number() {
            canonical_quantities(&mut v["emptyDir"]);
        }
    }
}

fn server_template(t: &mut Value) {
    if t["metadata"].is_object() {
        t["metadata"]["creationTimestamp"] = Value::Null;
    }
    server_pod_spec(&mut t["spec"]);
}

fn rolling(s: &mut Value, key: &str, rolling: Value) {
    set(s, key, json!({"type": "RollingUpdate"}));
    set(&mut s[key], "type", json!("RollingUpdate"));
    if s[key]["type"] == "RollingUpdate" {
        set(&mut s[key], "rollingUpdate", json!({}));
        for (k, v) in rolling.as_object().into_iter().flatten() {
            set(&mut s[key]["rollingUpdate"], k, v.clone());
        }
    }
}

fn server_job_spec(s: &mut Value, uid: &str) {
    if s["completions"].is_null() && s["parallelism"].is_null() {
        s["completions"] = json!(1);
    }
    set(s, "parallelism", json!(1));
    set(s, "backoffLimit", json!(6));
    set(s, "completionMode", json!("NonIndexed"));
    set(s, "suspend", json!(false));
    let replacement =
        if s["podFailurePolicy"].is_object() { "Failed" } else { "TerminatingOrFailed" };
    set(s, "podReplacementPolicy", json!(replacement));
    server_template(&mut s["template"]);
    if !uid.is_empty() {
        s["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
        let l = &mut s["template"]["metadata"]["labels"];
        if !l.is_object() {
            *l = json!({});
        }
        l["batch.kubernetes.io/controller-uid"] = json!(uid);
        l["controller-uid"] = json!(uid);
    }
}

/// Removes the nulls `after` has where `before` has none (JSON indexing makes a missing key
/// null on the way), but the `creationTimestamp: null` an API server writes.
fn no_new_nulls(before: &Value, after: &mut Value) {
    match after {
        Value::Object(m) => m.retain(|k, v| {
            let was = before.get(k);
            if v.is_null() {
                return k == "creationTimestamp" || was.is_some_and(Value::is_null);
            }
            no_new_nulls(was.unwrap_or(&Value::Null), v);
            true
        }),
        Value::Array(l) => {
            for (i, v) in l.iter_mut().enumerate() {
                no_new_nulls(before.get(i).unwrap_or(&Value::Null), v);
            }
        }
        _ => {}
    }
}

/// What the API server adds to a created object of one of the kinds above: its defaults and
/// the fields its controllers allocate.
pub fn server_fill(obj: &mut Value) {
    stored(obj);
    let before = obj.clone();
    fill(obj);
    no_new_nulls(&before, obj);
}

fn fill(obj: &mut Value) {
    let kind = obj["kind"].as_str().unwrap_or("").to_string();
    let spec = &mut obj["spec"];
    match kind.as_str() {
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => {
            if kind != "ReplicaSet" {
                set(spec, "revisionHistoryLimit", json!(10));
            }
            if kind != "DaemonSet" {
                set(spec, "replicas", json!(1));
            }
            match kind.as_str() {
                "Deployment" => {
                    set(spec, "progressDeadlineSeconds", json!(600));
                    rolling(spec, "strategy", json!({"maxSurge": "25%", "maxUnavailable": "25%"}));
                }
                "StatefulSet" => {
                    set(spec, "podManagementPolicy", json!("OrderedReady"));
                    rolling(spec, "updateStrategy", json!({"partition": 0}));
                    set(spec, "persistentVolumeClaimRetentionPolicy", json!({}));
                    let p = &mut spec["persistentVolumeClaimRetentionPolicy"];
                    set(p, "whenDeleted", json!("Retain"));
                    set(p, "whenScaled", json!("Retain"));
                    for t in spec["volumeClaimTemplates"].as_array_mut().into_iter().flatten() {
                        t["apiVersion"] = json!("v1");
                        t["kind"] = json!("PersistentVolumeClaim");
                        t["metadata"]["creationTimestamp"] = Value::Null;
                        set(&mut t["spec"], "volumeMode", json!("Filesystem"));
                        canonical_quantities(&mut t["spec"]["resources"]["requests"]);
                        t["status"] = json!({"phase": "Pending"});
                    }
                }
                "DaemonSet" => {
                    rolling(spec, "updateStrategy", json!({"maxSurge": 0, "maxUnavailable": 1}))
                }
                _ => {}
            }
            server_template(&mut spec["template"]);
            obj["metadata"]["generation"] = json!(2);
            obj["status"] = json!({"observedGeneration": 2, "replicas": 2});
        }
        "Job" => {
            set(spec, "manualSelector", json!(false));
            server_job_spec(spec, "5e1c7a2b-0000-4000-8000-000000000001");
            if obj["metadata"]["labels"].as_object().is_none_or(Map::is_empty) {
                obj["metadata"]["labels"] = obj["spec"]["template"]["metadata"]["labels"].clone();
            }
            obj["status"] = json!({"active": 1, "startTime": "2024-05-01T10:00:00Z"});
        }
        "CronJob" => {
            set(spec, "concurrencyPolicy", json!("Allow"));
            set(spec, "suspend", json!(false));
            set(spec, "successfulJobsHistoryLimit", json!(3));
            set(spec, "failedJobsHistoryLimit", json!(1));
            server_job_spec(&mut spec["jobTemplate"]["spec"], "");
            obj["spec"]["jobTemplate"]["metadata"] = json!({"creationTimestamp": null});
        }
        "Service" => {
            let t = spec["type"].as_str().unwrap_or("ClusterIP").to_string();
            set(spec, "type", json!("ClusterIP"));
            set(spec, "sessionAffinity", json!("None"));
            if spec["sessionAffinity"] == "ClientIP" {
                set(spec, "sessionAffinityConfig", json!({"clientIP": {"timeoutSeconds": 10800}}));
            }
            for (n, p) in spec["ports"].as_array_mut().into_iter().flatten().enumerate() {
                set(p, "protocol", json!("TCP"));
                if p.get("targetPort").is_none_or(|v| v.is_null() || *v == json!(0)) {
                    p["targetPort"] = p["port"].clone();
                }
                if matches!(t.as_str(), "NodePort" | "LoadBalancer") {
                    set(p, "nodePort", json!(31000 + n));
                }
            }
            if t != "ExternalName" {
                set(spec, "clusterIP", json!("10.96.0.12"));
                let ip = spec["clusterIP"].clone();
                spec["clusterIPs"] = json!([ip]);
                spec["ipFamilies"] = json!(["IPv4"]);
                spec["ipFamilyPolicy"] = json!("SingleStack");
                spec["internalTrafficPolicy"] = json!("Cluster");
            }
            if matches!(t.as_str(), "NodePort" | "LoadBalancer") {
                set(spec, "externalTrafficPolicy", json!("Cluster"));
            }
            if t == "LoadBalancer" {
                set(spec, "allocateLoadBalancerNodePorts", json!(true));
                obj["status"] = json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}});
            } else {
                obj["status"] = json!({"loadBalancer": {}});
            }
        }
        "NetworkPolicy" => {
            if spec["policyTypes"].as_array().is_none_or(Vec::is_empty) {
                let mut types = vec![json!("Ingress")];
                if spec["egress"].as_array().is_some_and(|e| !e.is_empty()) {
                    types.push(json!("Egress"));
                }
                spec["policyTypes"] = json!(types);
            }
            for dir in ["ingress", "egress"] {
                for r in spec[dir].as_array_mut().into_iter().flatten() {
                    for p in r["ports"].as_array_mut().into_iter().flatten() {
                        set(p, "protocol", json!("TCP"));
                    }
                }
            }
        }
        "HorizontalPodAutoscaler" => {
            set(spec, "minReplicas", json!(1));
            if spec["metrics"].as_array().is_none_or(Vec::is_empty) {
                spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80}}}]);
            }
            if spec["behavior"].is_object() {
                let b = &mut spec["behavior"];
                set(b, "scaleUp", json!({}));
                set(&mut b["scaleUp"], "stabilizationWindowSeconds", json!(0));
                set(&mut b["scaleUp"], "selectPolicy", json!("Max"));
                set(
                    &mut b["scaleUp"],
                    "policies",
                    json!([{"type": "Pods", "value": 4,
                    "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]),
                );
                set(b, "scaleDown", json!({}));
                set(&mut b["scaleDown"], "selectPolicy", json!("Max"));
                set(
                    &mut b["scaleDown"],
                    "policies",
                    json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
                );
            }
            obj["status"] = json!({"currentReplicas": 2, "desiredReplicas": 2});
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            set(&mut obj["roleRef"], "apiGroup", json!("rbac.authorization.k8s.io"));
            for s in obj["subjects"].as_array_mut().into_iter().flatten() {
                if s["kind"] != "ServiceAccount" {
                    set(s, "apiGroup", json!("rbac.authorization.k8s.io"));
                }
            }
        }
        "Namespace" => {
            let name = obj["metadata"]["name"].clone();
            if !obj["metadata"]["labels"].is_object() {
                obj["metadata"]["labels"] = json!({});
            }
            obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
        }
        "PersistentVolumeClaim" => {
            set(spec, "volumeMode", json!("Filesystem"));
            set(spec, "storageClassName", json!("standard"));
            spec["volumeName"] = json!("pvc-7f0c2e1a-0000-4000-8000-000000000002");
            canonical_quantities(&mut spec["resources"]["requests"]);
            obj["metadata"]["finalizers"] = json!(["kubernetes.io/pvc-protection"]);
            obj["status"] = json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"]});
        }
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            let v1beta1 = obj["apiVersion"] == "admissionregistration.k8s.io/v1beta1";
            let mutating = kind == "MutatingWebhookConfiguration";
            for w in obj["webhooks"].as_array_mut().into_iter().flatten() {
                set(w, "failurePolicy", json!(if v1beta1 { "Ignore" } else { "Fail" }));
                set(w, "matchPolicy", json!(if v1beta1 { "Exact" } else { "Equivalent" }));
                set(w, "namespaceSelector", json!({}));
                set(w, "objectSelector", json!({}));
                set(w, "timeoutSeconds", json!(if v1beta1 { 30 } else { 10 }));
                if v1beta1 {
                    set(w, "sideEffects", json!("Unknown"));
                    set(w, "admissionReviewVersions", json!(["v1beta1"]));
                }
                if mutating {
                    set(w, "reinvocationPolicy", json!("Never"));
                }
                if w["clientConfig"]["service"].is_object() {
                    set(&mut w["clientConfig"]["service"], "port", json!(443));
                }
                for r in w["rules"].as_array_mut().into_iter().flatten() {
                    set(r, "scope", json!("*"));
                }
            }
        }
        "StorageClass" => {
            set(obj, "reclaimPolicy", json!("Delete"));
            set(obj, "volumeBindingMode", json!("Immediate"));
        }
        "PriorityClass" => set(obj, "preemptionPolicy", json!("PreemptLowerPriority")),
        "CSIDriver" => {
            for (k, v) in [
                ("attachRequired", json!(true)),
                ("podInfoOnMount", json!(false)),
                ("storageCapacity", json!(false)),
                ("requiresRepublish", json!(false)),
                ("seLinuxMount", json!(false)),
                ("fsGroupPolicy", json!("ReadWriteOnceWithFSType")),
                ("volumeLifecycleModes", json!(["Persistent"])),
            ] {
                set(spec, k, v);
            }
        }
        "LimitRange" => {
            for l in spec["limits"].as_array_mut().into_iter().flatten() {
                if l["type"] == "Container" {
                    for (to, from) in [
                        ("default", "max"),
                        ("defaultRequest", "default"),
                        ("defaultRequest", "min"),
                    ] {
                        let src = l[from].as_object().cloned().unwrap_or_default();
                        if src.is_empty() {
                            continue;
                        }
                        set(l, to, json!({}));
                        for (k, v) in src {
                            set(&mut l[to], &k, v);
                        }
                    }
                }
                for k in ["max", "min", "default", "defaultRequest"] {
                    canonical_quantities(&mut l[k]);
                }
            }
        }
        _ => {}
    }
}

fn pod_template_of(obj: &mut Value) -> Option<&mut Value> {
    match obj["kind"].as_str()? {
        "CronJob" => Some(&mut obj["spec"]["jobTemplate"]["spec"]["template"]),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job" => {
            Some(&mut obj["spec"]["template"])
        }
        _ => None,
    }
}

/// What a controller, a webhook or a person changed in the live object since.
pub fn drift(rng: &mut Rng, l: &mut Value) {
    let before = l.clone();
    change(rng, l);
    no_new_nulls(&before, l);
}

fn change(rng: &mut Rng, l: &mut Value) {
    let kind = l["kind"].as_str().unwrap_or("").to_string();
    if let Some(t) = pod_template_of(l) {
        let spec = &mut t["spec"];
        match rng.below(13) {
            0 => {
                // A sidecar injector's webhook.
                if let Some(cs) = spec["containers"].as_array_mut() {
                    cs.push(json!({"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.20.0",
                        "ports": [{"containerPort": 15090, "name": "http-envoy-prom", "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        "imagePullPolicy": "IfNotPresent"}));
                }
                if !spec["initContainers"].is_array() {
                    spec["initContainers"] = json!([]);
                }
                if let Some(is) = spec["initContainers"].as_array_mut() {
                    is.push(
                        json!({"name": "istio-init", "image": "docker.io/istio/proxyv2:1.20.0"}),
                    );
                }
                if !spec["volumes"].is_array() {
                    spec["volumes"] = json!([]);
                }
                if let Some(vs) = spec["volumes"].as_array_mut() {
                    vs.push(json!({"name": "istio-envoy", "emptyDir": {"medium": "Memory"}}));
                }
                t["metadata"]["annotations"] =
                    json!({"sidecar.istio.io/status": "{\"version\":\"1\"}"});
            }
            1 => spec["containers"][0]["image"] = json!("nginx:1.26"),
            2 => {
                let ports = spec["containers"][0].get_mut("ports").and_then(Value::as_array_mut);
                if let Some(ps) = ports {
                    if ps.len() > 1 {
                        ps.pop();
                    } else if let Some(p) = ps.first_mut() {
                        p["protocol"] = json!("UDP");
                    }
                }
            }
            3 => {
                let last = spec["containers"].as_array().map_or(0, |c| c.len().saturating_sub(1));
                let c = &mut spec["containers"][last];
                if !c["env"].is_array() {
                    c["env"] = json!([]);
                }
                if let Some(env) = c["env"].as_array_mut() {
                    env.push(json!({"name": "DEBUG", "value": "1"}));
                }
            }
            4 => {
                if spec["containers"][0]["readinessProbe"].is_object() {
                    spec["containers"][0]["readinessProbe"]["periodSeconds"] = json!(30);
                } else {
                    spec["containers"][0]["readinessProbe"] = json!({"httpGet": {"port": 8080}});
                }
            }
            5 => {
                let c = &mut spec["containers"][0];
                if c["resources"]["limits"]["cpu"] == "1" {
                    c["resources"]["limits"]["cpu"] = json!("1000m");
                } else if c.is_object() {
                    c["resources"]["limits"] = json!({"cpu": "1", "memory": "1Gi"});
                }
            }
            6 => {
                t["metadata"]["annotations"] =
                    json!({"kubectl.kubernetes.io/restartedAt": "2024-05-01T11:00:00Z"})
            }
            7 => {
                if let Some(v) = spec["volumes"].as_array_mut().and_then(|v| v.first_mut()) {
                    for src in ["configMap", "secret", "downwardAPI", "projected"] {
                        if v[src].is_object() {
                            v[src]["defaultMode"] = json!(384);
                        }
                    }
                }
            }
            8 if spec["containers"][0].is_object() => {
                spec["containers"][0]["imagePullPolicy"] = json!("Always");
            }
            9 => {
                if let Some(cs) = spec["containers"].as_array_mut().filter(|c| c.len() > 1) {
                    cs.pop();
                }
            }
            _ => {}
        }
    }
    let spec = &mut l["spec"];
    match (kind.as_str(), rng.below(4)) {
        ("Deployment" | "StatefulSet" | "ReplicaSet", 0) => spec["replicas"] = json!(5),
        ("Deployment", 1) => spec["strategy"] = json!({"type": "Recreate"}),
        ("StatefulSet" | "DaemonSet", 1) => spec["updateStrategy"] = json!({"type": "OnDelete"}),
        ("Job", 0) => spec["parallelism"] = json!(3),
        ("Job" | "CronJob", 1) => spec["suspend"] = json!(true),
        ("CronJob", 0) => spec["schedule"] = json!("0 * * * *"),
        ("Service", 0) => {
            if let Some(p) = spec["ports"].as_array_mut().and_then(|p| p.first_mut()) {
                if p.get("nodePort").is_some() {
                    p["nodePort"] = json!(32000);
                } else {
                    p["targetPort"] = json!(9090);
                }
            }
        }
        ("Service", 1) => spec["selector"]["tier"] = json!("web"),
        ("Service", 2) if spec["type"] == "LoadBalancer" || spec["type"] == "NodePort" => {
            spec["externalTrafficPolicy"] = json!("Local")
        }
        ("Service", 3) if spec["sessionAffinity"] == "ClientIP" => {
            spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 3600}})
        }
        ("NetworkPolicy", 0) => {
            if let Some(i) = spec["ingress"].as_array_mut() {
                i.push(json!({"from": [{"ipBlock": {"cidr": "192.168.0.0/16"}}]}));
            }
        }
        ("NetworkPolicy", 1) => spec["policyTypes"] = json!(["Ingress", "Egress"]),
        ("HorizontalPodAutoscaler", 0) => spec["maxReplicas"] = json!(20),
        ("HorizontalPodAutoscaler", 1) => spec["minReplicas"] = json!(3),
        ("RoleBinding" | "ClusterRoleBinding", 0) => {
            if !l["subjects"].is_array() {
                l["subjects"] = json!([]);
            }
            if let Some(s) = l["subjects"].as_array_mut() {
                s.push(
                    json!({"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}),
                );
            }
        }
        ("Namespace", 0) => {
            let m = &mut l["metadata"];
            if !m["labels"].is_object() {
                m["labels"] = json!({});
            }
            m["labels"]["istio-injection"] = json!("enabled");
        }
        ("PersistentVolumeClaim", 0) => {
            spec["resources"]["requests"]["storage"] = json!("20Gi");
        }
        ("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration", 0 | 1) => {
            // A CA injector fills the bundle.
            for w in l["webhooks"].as_array_mut().into_iter().flatten() {
                w["clientConfig"]["caBundle"] = json!("Y2EtYnVuZGxl");
            }
        }
        ("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration", 2) => {
            if let Some(w) = l["webhooks"].as_array_mut().and_then(|w| w.first_mut()) {
                w["timeoutSeconds"] = json!(5);
            }
        }
        _ => {}
    }
}

/// An ignoreDifferences rule for one of the kinds above, or none.
pub fn ignore_rule(rng: &mut Rng, kind: &str) -> Option<Value> {
    let group = match kind {
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => "apps",
        "Job" | "CronJob" => "batch",
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            "admissionregistration.k8s.io"
        }
        _ => return None,
    };
    Some(match (kind, rng.below(3)) {
        ("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration", _) => {
            json!({"group": group, "kind": kind,
            "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle"]})
        }
        (_, 0) => json!({"group": group, "kind": kind, "jsonPointers": ["/spec/replicas"]}),
        (_, 1) => json!({"group": group, "kind": kind,
            "jqPathExpressions": [".spec.template.spec.containers[] | select(.name == \"istio-proxy\")"]}),
        _ => json!({"group": group, "kind": kind,
            "jsonPointers": ["/spec/template/spec/containers/0/image"]}),
    })
}
