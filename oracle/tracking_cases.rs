//! The generated cases of the `tracking` (`testkit/src/oracle/tracking.rs`), `normalize`
//! (`testkit/src/oracle/normalize.rs`), `jq` (`testkit/src/oracle/jq.rs`) and `deletion`
//! (`testkit/src/oracle/deletion.rs`) areas, and their runs through both sides.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::generate::Rng;
use super::tracking::{compare, ours};

const METHODS: [&str; 4] = ["", "annotation", "label", "annotation+label"];
const TRACKING: &str = "argocd.argoproj.io/tracking-id";
const INSTALLATION: &str = "argocd.argoproj.io/installation-id";

/// A divergence: signature, the compared field, gitops-core's value, Argo CD's, the case.
pub type Example = (String, String, Value, Value, Value);

/// An app name: short, dotted, or long enough for the label cut (ending in a character the cut
/// strips, or not).
fn app_name(rng: &mut Rng) -> String {
    match rng.below(7) {
        0 => "shop".into(),
        1 => "my-app".into(),
        2 => "team.shop".into(),
        3 => format!("{}-{}", "x".repeat(62), "tail"),
        4 => format!("{}.{}", "payments".repeat(8), "eu"),
        5 => "a".repeat(63),
        _ => format!("app-{}", rng.below(5)),
    }
}

/// (apiVersion, kind, cluster-scoped).
const KINDS: [(&str, &str, bool); 5] = [
    ("v1", "ConfigMap", false),
    ("apps/v1", "Deployment", false),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", true),
    ("v1", "Namespace", true),
    ("networking.k8s.io/v1", "Ingress", false),
];

/// One case's request.
pub fn case(rng: &mut Rng) -> Value {
    let name = app_name(rng);
    let app_ns = *rng.pick(&["argocd", "argocd", "team-a", ""]);
    let dest_ns = *rng.pick(&["shop", "shop", "other", ""]);
    let method = *rng.pick(&METHODS);
    let installation = if rng.chance(25) { "inst-1" } else { "" };
    let label_key =
        if rng.chance(80) { "app.kubernetes.io/instance" } else { "argocd.argoproj.io/instance" };
    let (api, kind, cluster) = *rng.pick(&KINDS);
    let obj_name = *rng.pick(&["web", "cfg", "web-2"]);
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    let mut meta = json!({"name": obj_name});
    match rng.below(4) {
        0 => meta["namespace"] = json!("shop"),
        1 => meta["namespace"] = json!("elsewhere"),
        _ => {}
    }
    if rng.chance(20) {
        meta["labels"] = json!({label_key: "stale", "tier": "web"});
    }
    if rng.chance(20) {
        meta["annotations"] =
            json!({TRACKING: "stale:/ConfigMap:x/y", INSTALLATION: "inst-0", "note": "kept"});
    }
    let desired = json!({"apiVersion": api, "kind": kind, "metadata": meta});
    let instance = if app_ns.is_empty() || app_ns == "argocd" {
        name.clone()
    } else {
        format!("{app_ns}_{name}")
    };
    let live = if rng.chance(15) {
        Value::Null
    } else {
        let mut l = desired.clone();
        let ns = if cluster {
            None
        } else {
            Some(desired["metadata"]["namespace"].as_str().unwrap_or(dest_ns).to_string())
        };
        l["metadata"] = json!({"name": obj_name, "uid": "u-1"});
        if let Some(ns) = &ns {
            l["metadata"]["namespace"] = json!(ns);
        }
        if rng.chance(25) {
            // Not the desired object: another name (a live-only object of the app or not).
            l["metadata"]["name"] = json!("left-over");
        }
        let lname = l["metadata"]["name"].as_str().unwrap_or("").to_string();
        let id_ns = ns.clone().unwrap_or_else(|| dest_ns.to_string());
        let own = format!("{instance}:{group}/{kind}:{id_ns}/{lname}");
        let id = match rng.below(9) {
            0 => format!("other:{group}/{kind}:{id_ns}/{lname}"),
            1 => format!("{instance}:{group}/{kind}:{id_ns}/someone-else"),
            2 => format!("{instance}:extensions/{kind}:{id_ns}/{lname}"),
            3 => rng.pick(&["shop", "a:b:c", "shop:/ConfigMap/x:y/z", ""]).to_string(),
            4 => format!("{instance}:{group}/{kind}:nowhere/{lname}"),
            _ => own,
        };
        let mut anns = serde_json::Map::new();
        if rng.chance(85) {
            anns.insert(TRACKING.into(), json!(id));
        }
        if rng.chance(30) {
            anns.insert(INSTALLATION.into(), json!(*rng.pick(&["inst-1", "inst-2"])));
        }
        if !anns.is_empty() {
            l["metadata"]["annotations"] = Value::Object(anns);
        }
        if rng.chance(50) {
            let value = match rng.below(3) {
                0 => instance.clone(),
                1 => "other".into(),
                _ => instance.chars().take(63).collect(),
            };
            l["metadata"]["labels"] = json!({label_key: value});
        }
        if rng.chance(10) {
            l["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u-0"}]);
        }
        l
    };
    let mut app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"destination": {"server": "https://kubernetes.default.svc"},
            "project": "default"}});
    if !app_ns.is_empty() {
        app["metadata"]["namespace"] = json!(app_ns);
    }
    if !dest_ns.is_empty() {
        app["spec"]["destination"]["namespace"] = json!(dest_ns);
    }
    let mut params = json!({"app": app, "controllerNamespace": "argocd", "method": method,
        "installationID": installation, "labelKey": label_key, "clusterScoped": cluster,
        "desired": desired, "live": live});
    if rng.chance(15) {
        // A live object alone (the desired one gone from Git).
        params["desired"] = Value::Null;
    }
    params
}

/// What one case found: (signature, compared field, gitops-core's value, Argo CD's).
pub type Found = Vec<(String, String, Value, Value)>;

/// What an area's run gives: (cases, explained, unexplained, one example per signature, the
/// first agreed cases with Argo CD's answer, to be recorded).
pub type Tally = (u64, u64, u64, Vec<Example>, Vec<(Value, Value)>);

/// One case compared: what it found, and Argo CD's answer.
pub type CompareOne<'a> =
    dyn FnMut(&Value, &mut super::Peer) -> Result<(Found, Value), String> + 'a;

/// How many agreed cases of an area a run keeps for recording.
const RECORDED: usize = 12;

/// `cases` generated cases through both sides, each compared by `one` (what it found and Argo
/// CD's answer).
pub fn tally(
    cases: u64,
    rng: &mut Rng,
    argo: &mut super::Peer,
    known: &[String],
    generate: fn(&mut Rng) -> Value,
    one: &mut CompareOne<'_>,
) -> Result<Tally, String> {
    let (mut explained, mut unexplained) = (0, 0);
    let mut examples: Vec<Example> = Vec::new();
    let mut agreed = Vec::new();
    let mut classes = Vec::new();
    for _ in 0..cases {
        let params = generate(rng);
        let (found, answer) = one(&params, argo)?;
        if found.is_empty() {
            // One agreed case per class of answer: the method, whether the live object is the
            // app's and self-referenced, whether objects repeat.
            let class = json!([
                params["method"],
                answer["live"]["managed"],
                answer["live"]["selfReferenced"],
                answer["conditions"].as_array().map(Vec::len),
                answer["delete"].as_array().map(Vec::len)
            ]);
            if agreed.len() < RECORDED && !classes.contains(&class) {
                classes.push(class);
                agreed.push((params, answer));
            }
            continue;
        }
        if found.iter().all(|(sig, ..)| known.iter().any(|k| super::covers(k, sig))) {
            explained += 1;
        } else {
            unexplained += 1;
        }
        for (sig, field, x, y) in found {
            if !examples.iter().any(|e| e.0 == sig) {
                examples.push((sig, field, x, y, params.clone()));
            }
        }
    }
    Ok((cases, explained, unexplained, examples, agreed))
}

/// The `tracking` cases through both sides.
pub fn run(
    cases: u64,
    seed: u64,
    argo: &mut super::Peer,
    known: &[String],
) -> Result<Tally, String> {
    // A stream of its own, so that the other areas' cases stay those of the seed.
    let mut rng = Rng::new(seed ^ 0x7472_6163);
    tally(cases, &mut rng, argo, known, case, &mut |params, argo| {
        let a = ours(params).unwrap_or_else(|e| json!({"error": e}));
        let b = argo.call("tracking", params)?;
        Ok((compare(&a, &b), b))
    })
}

/// (apiVersion, kind, cluster-scoped) of the `normalize` cases.
const NORMALIZE_KINDS: [(&str, &str, bool); 4] = [
    ("v1", "ConfigMap", false),
    ("apps/v1", "Deployment", false),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", true),
    ("v1", "Namespace", true),
];

/// One `normalize` case: 1 to 6 desired objects from a small pool of names, so repeats and
/// `generateName` objects whose index-made names meet named ones are common.
pub fn normalize_case(rng: &mut Rng) -> Value {
    let n = 1 + rng.below(6);
    let mut desired = vec![];
    for i in 0..n {
        let (api, kind, _) = *rng.pick(&NORMALIZE_KINDS);
        let mut meta = json!({});
        if rng.chance(15) {
            meta["generateName"] = json!("web-");
        } else {
            let name = rng.pick(&["web", "web-1", "web-2", "cfg"]).to_string();
            meta["name"] = json!(name);
        }
        match rng.below(3) {
            0 => meta["namespace"] = json!("shop"),
            1 => meta["namespace"] = json!("other"),
            _ => {}
        }
        desired.push(json!({"apiVersion": api, "kind": kind, "metadata": meta, "data": {"i": i.to_string()}}));
    }
    let dest = *rng.pick(&["shop", "shop", ""]);
    let mut app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "my-app", "namespace": "argocd"},
        "spec": {"destination": {"server": "https://kubernetes.default.svc"}, "project": "default"}});
    if !dest.is_empty() {
        app["spec"]["destination"]["namespace"] = json!(dest);
    }
    let cluster: Vec<Value> = NORMALIZE_KINDS
        .iter()
        .filter(|k| k.2)
        .map(|(api, kind, _)| {
            let group = api.rsplit_once('/').map_or("", |(g, _)| g);
            json!({"Group": group, "Kind": kind})
        })
        .collect();
    json!({"app": app, "controllerNamespace": "argocd", "clusterScoped": cluster, "desired": desired})
}

/// `cases` generated `normalize` cases through both sides.
pub fn run_normalize(
    cases: u64,
    seed: u64,
    argo: &mut super::Peer,
    known: &[String],
) -> Result<Tally, String> {
    let mut rng = Rng::new(seed ^ 0x6e6f_726d);
    tally(cases, &mut rng, argo, known, normalize_case, &mut |params, argo| {
        let answer = argo.call("normalize", params)?;
        Ok((super::normalize::compare(params, &answer), answer))
    })
}

/// The object every expression runs on.
pub fn jq_object(rng: &mut Rng) -> Value {
    let env = |n: &str, v: &str| json!({"name": n, "value": v});
    let mut c0 = json!({"name": "app", "image": "registry.example.com/shop/app:1.0",
        "env": [env("MODE", "prod"), env("DEBUG", "1")],
        "ports": [{"containerPort": 8080, "protocol": "TCP"}, {"containerPort": 9090, "name": "metrics"}],
        "resources": {"limits": {"cpu": "1"}}});
    if rng.chance(40)
        && let Some(e) = c0["env"].as_array_mut()
    {
        e.push(env("TEAM", "web"));
    }
    let c1 = json!({"name": "sidecar", "image": "nginx:1.25", "env": [env("LOG", "info")],
        "ports": [{"containerPort": 80}]});
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop",
            "labels": {"app": "web", "team-a": "x", "tier": "web"},
            "annotations": {"note": "n", "team-owner": "a"}},
        "spec": {"replicas": 2, "paused": false, "template": {"spec": {"containers": [c0, c1]}}}})
}

/// Expressions, from the path subset to whole jq programs.
const TEMPLATES: &[&str] = &[
    ".metadata.labels.app",
    ".spec.template.spec.containers[].image",
    ".spec.template.spec.containers[] | select(.name == \"NAME\") | .env",
    ".. | select(type == \"object\" and has(\"image\")) | .image",
    ".spec.replicas // .spec.paused",
    ".spec.template.spec.containers[] | select(.env | map(.name) | contains([\"VAR\"])) | .env",
    ".spec.template.spec.containers[] | select(.ports | map(.containerPort) | any(. > 8000)) | .ports",
    ".spec.template.spec.containers[] | select(.env | map(select(.name == \"VAR\")) | length > 0) | .image",
    ".metadata | select(.labels | to_entries | length > 2) | .annotations",
    ".metadata | select(.labels | to_entries | any(.value == \"web\")) | .labels.tier",
    ".metadata.labels | select(with_entries(select(.key | startswith(\"team\"))) | length > 0) | .app",
    ".metadata.annotations | select(to_entries | map(.key) | contains([\"note\"])) | .note",
    ".spec | select([paths] | length > 10) | .replicas",
    ".spec | select(paths | length > 6) | .paused",
    ".metadata.labels | to_entries",
    ".metadata.labels | with_entries(select(.key | startswith(\"team\")))",
    ".spec.template.spec.containers | map(select(.name == \"NAME\"))",
    ".metadata.labels | to_entries[] | select(.value == \"web\") | .key",
    "paths",
    ".spec | paths",
    ".spec.template.spec.containers[] | select([.ports[].containerPort] | length > 1) | .ports",
    ".metadata.annotations | keys[] as $k | .[$k]",
    "getpath([\"spec\", \"replicas\"])",
    "limit(1; .spec.template.spec.containers[]) | .image",
    ".spec.template.spec.containers[] | select(.image | ascii_downcase | contains(\"nginx\")) | .image",
    ".spec.template.spec.containers[] | .env[]? | select(.value | tostring | startswith(\"1\"))",
    ".spec.template.spec.containers[] | select(.name | test(\"^side\")) | .resources",
    ".metadata.labels | del(.app)",
    ".spec.template.spec.containers[] | select(.env | map(.value) | add | length > 3) | .env",
    ".metadata | select(.labels | keys | map(startswith(\"team\")) | any) | .labels",
    "(.metadata.labels.missing // .metadata.labels.tier)",
    ".spec.template.spec.containers[] | select(.env | map(.name) | index(\"VAR\")) | .env",
    ".spec.template.spec.containers[] | select(.ports | map(.name // \"none\") | contains([\"metrics\"])) | .ports[] | select(.name == \"metrics\")",
    ".metadata.labels | select(to_entries | map(select(.value == \"x\")) | length == 1) | .\"team-a\"",
];

/// One case: an expression (names drawn) and the object.
pub fn jq_case(rng: &mut Rng) -> Value {
    let t = *rng.pick(TEMPLATES);
    let name: &&str = rng.pick(&["app", "sidecar", "none"]);
    let var: &&str = rng.pick(&["DEBUG", "TEAM", "LOG"]);
    let e = t.replace("NAME", name).replace("VAR", var);
    json!({"expression": e, "object": jq_object(rng)})
}

/// Runs `cases` generated expressions through both sides.
pub fn run_jq(
    cases: u64,
    seed: u64,
    argo: &mut super::Peer,
    known: &[String],
) -> Result<Tally, String> {
    let mut rng = Rng::new(seed ^ 0x6a71);
    let (mut explained, mut unexplained) = (0, 0);
    let mut examples = Vec::new();
    let mut gap: BTreeMap<String, u64> = BTreeMap::new();
    let (mut both_refuse, mut accepted) = (0, 0);
    let mut agreed = Vec::new();
    for _ in 0..cases {
        let params = jq_case(&mut rng);
        let a = super::jq::ours(&params);
        let b = argo.call("jq", &params)?;
        if super::jq::agree(&a, &b) && agreed.len() < 3 && b.get("object").is_some() {
            agreed.push((params.clone(), b.clone()));
        }
        let sig = match (a.get("refused"), b.get("refused")) {
            (Some(_), Some(_)) => {
                both_refuse += 1;
                continue;
            }
            (Some(r), None) => {
                let what = super::jq::construct(r.as_str().unwrap_or(""));
                *gap.entry(what.clone()).or_default() += 1;
                Some(format!("jq:refused-by-gitops-core:{}", super::jq::slug(&what)))
            }
            (None, Some(_)) => Some("jq:refused-by-argo-cd".to_string()),
            (None, None) => {
                accepted += 1;
                (!super::jq::agree(&a, &b)).then(|| "jq:object".to_string())
            }
        };
        let Some(sig) = sig else { continue };
        if known.iter().any(|k| super::covers(k, &sig)) {
            explained += 1;
        } else {
            unexplained += 1;
        }
        if !examples.iter().any(|e: &Example| e.0 == sig) {
            examples.push((sig, "/".into(), a, b, params));
        }
    }
    println!(
        "jq: {cases} expressions: {accepted} accepted by both, {both_refuse} refused by both, {} accepted by Argo CD and refused by gitops-core",
        gap.values().sum::<u64>()
    );
    for (what, n) in &gap {
        println!("  refused by gitops-core only, {n}: {what}");
    }
    Ok((cases, explained, unexplained, examples, agreed))
}

/// Wave annotation values: Go's `strconv.Atoi` takes a sign and nothing else around the
/// digits, and refuses what overflows 64 bits (the object then falls back to the next source).
const WAVES: [&str; 12] = [
    "0",
    "1",
    "-1",
    "5",
    "+3",
    " 2",
    "2 ",
    "x",
    "",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
];

/// One `deletion` case: 1 to 7 live objects (no deletion timestamps, none kept), each with a
/// sync wave, a Helm hook weight, both or neither.
pub fn deletion_case(rng: &mut Rng) -> Value {
    let n = 1 + rng.below(7);
    let mut objects = vec![];
    for i in 0..n {
        let (api, kind, _) = *rng.pick(&NORMALIZE_KINDS);
        let mut annotations = serde_json::Map::new();
        if rng.chance(60) {
            annotations.insert("argocd.argoproj.io/sync-wave".into(), json!(rng.pick(&WAVES)));
        }
        if rng.chance(30) {
            annotations.insert("helm.sh/hook-weight".into(), json!(rng.pick(&WAVES)));
        }
        let mut meta = json!({"name": format!("obj-{i}"), "annotations": annotations});
        if kind == "ConfigMap" || kind == "Deployment" {
            meta["namespace"] = json!("shop");
        }
        objects.push(json!({"apiVersion": api, "kind": kind, "metadata": meta}));
    }
    json!({"objects": objects})
}

/// `cases` generated `deletion` cases through both sides.
pub fn run_deletion(
    cases: u64,
    seed: u64,
    argo: &mut super::Peer,
    known: &[String],
) -> Result<Tally, String> {
    let mut rng = Rng::new(seed ^ 0x6465_6c65);
    tally(cases, &mut rng, argo, known, deletion_case, &mut |params, argo| {
        let answer = argo.call("deletion", params)?;
        Ok((super::deletion::compare(params, &answer), answer))
    })
}
