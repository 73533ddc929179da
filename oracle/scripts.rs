//! The `scripts` area: the health checks and resource actions Argo CD 3.6.2 ships as Lua scripts
//! (its `resource_customizations` folder), compared with gitops-core's built-in rules.
//!
//! The objects are the fixtures of that folder (every `testdata/**/*.yaml` holding Kubernetes
//! objects), taken as the oracle's copy of Argo CD's module has them (`scripts.files`: the
//! folder util/lua embeds, compiled from the Go module cache; nothing of it is in this
//! repository), first as they are, then with seeded mutations at paths of the fixture: a field
//! deleted, or set to null, a number, a string, a boolean, an empty list, an empty object or a
//! list of one string. The identity (`apiVersion`, `kind`) is left alone, so the same script
//! stays in charge.
//!
//! For each object, Argo CD (the oracle's `scripts` method) gives the health as the application
//! controller computes it, the actions as the API server lists them, and each listed action's
//! result; gitops-core gives the same through `serve` (`health`, `actions.list`, `actions.run`)
//! with no script loaded: the built-in rules answer. With `--scripts-from-module` gitops-core is
//! configured with the very scripts instead, run on its Lua engine: that path is checked
//! against Argo CD already, so this mode proves the harness and guards the Lua engine.
//!
//! Compared: health status and message; the action list (names, `disabled`, icon class,
//! display name, params); each action's impacted resources (operation and object; numbers by
//! value). Agreement is exact, or both sides failing. Two failing pairs are explained classes
//! (testdata/oracle/explained.txt): `raise-vs-fault` (Argo CD's script raised a Lua runtime
//! error, `<string>:N: ...`, and the built-in rule stopped at the same input with a fault named
//! in its own words) and `lua-error-text` (both Lua engines raised at the same script line;
//! gopher-lua and LuaJIT word the error differently).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::generate::Rng;
use super::{Peer, covers, first_difference, pointer_class, save, spelling};
use gitops_core as engine;

use gitops_core_testkit::oracle::scripts::{self as ours, Ours};

/// The action parameters Argo CD 3.6.2's scripts read (`actionParams[...]`), with values a
/// user may type: the same map goes to every action on both sides.
const PARAMETERS: &[(&str, &[&str])] =
    &[("replicas", &["3", "0", "-1", "abc", "2.5", ""]), ("instance", &["1", "2", "pod-1", ""])];

/// What the area found: counts for the run's summary, and one example per signature.
pub struct Outcome {
    pub cases: u64,
    pub explained: u64,
    pub unexplained: u64,
}

/// One fixture: its path in Argo CD's folder and the object.
struct Fixture {
    path: String,
    object: Value,
}

/// The fixtures and (for `--scripts-from-module`) the scripts, from the oracle.
struct Corpus {
    fixtures: Vec<Fixture>,
    scripts: BTreeMap<String, String>,
    /// Files or documents that are not one object (an action's expected list of results):
    /// counted and named in the summary, not compared.
    left_out: Vec<String>,
}

fn corpus(argo: &mut Peer) -> Result<Corpus, String> {
    let files = argo.call("scripts.files", &json!({"suffixes": [".yaml", ".lua"]}))?;
    let files = files["files"].as_object().ok_or_else(|| format!("scripts.files: {files}"))?;
    let mut out = Corpus { fixtures: vec![], scripts: BTreeMap::new(), left_out: vec![] };
    for (path, text) in files {
        let text = text.as_str().unwrap_or_default();
        if path.ends_with(".lua") {
            out.scripts.insert(path.clone(), text.to_string());
            continue;
        }
        if !path.contains("/testdata/") {
            continue;
        }
        for (i, doc) in serde_norway::Deserializer::from_str(text).enumerate() {
            let object = <Value as serde::Deserialize>::deserialize(doc);
            match object {
                Ok(o) if o["kind"].is_string() && o["apiVersion"].is_string() => {
                    out.fixtures.push(Fixture { path: format!("{path}#{i}"), object: o })
                }
                _ => out.left_out.push(format!("{path}#{i}")),
            }
        }
    }
    if out.fixtures.is_empty() {
        return Err("scripts.files: the oracle holds no fixtures".into());
    }
    Ok(out)
}

/// `<group>/<Kind>` of an object, as Argo CD's folders name it.
fn kind_key(o: &Value) -> String {
    let api = o["apiVersion"].as_str().unwrap_or("");
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    format!("{group}/{}", o["kind"].as_str().unwrap_or(""))
}

/// A step into an object: a field or a list index.
#[derive(Clone)]
enum Step {
    Field(String),
    Index(usize),
}

/// Whether the field at `at` + `k` is one the API server never serves malformed, left alone:
/// the identity (`apiVersion`, `kind`, `metadata` itself, its `name` and `namespace`).
/// A malformed identity tests how each side reads an object, not the rules: gitops-core
/// refuses an action result without a valid name, where Argo CD's Lua path leaves that to the
/// API server.
fn identity(at: &[Step], k: &str) -> bool {
    match at {
        [] => k == "apiVersion" || k == "kind" || k == "metadata",
        [Step::Field(m)] => m == "metadata" && (k == "name" || k == "namespace"),
        _ => false,
    }
}

fn paths(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if identity(at, k) {
                    if at.is_empty() && k == "metadata" {
                        // Its fields are mutated; the map itself stays.
                        at.push(Step::Field(k.clone()));
                        paths(x, at, out);
                        at.pop();
                    }
                    continue;
                }
                at.push(Step::Field(k.clone()));
                out.push(at.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                at.push(Step::Index(i));
                out.push(at.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// Mutates `obj` at `path`: deletes the field (or list item), or replaces it.
fn mutate(obj: &mut Value, path: &[Step], rng: &mut Rng) -> String {
    let Some((last, parent)) = path.split_last() else { return String::new() };
    let mut here = obj;
    for s in parent {
        here = match (s, here) {
            (Step::Field(k), Value::Object(m)) => match m.get_mut(k) {
                Some(x) => x,
                None => return String::new(),
            },
            (Step::Index(i), Value::Array(xs)) => match xs.get_mut(*i) {
                Some(x) => x,
                None => return String::new(),
            },
            _ => return String::new(),
        };
    }
    let deletion = matches!(path, [Step::Field(m), Step::Field(d)]
        if m == "metadata" && d == "deletionTimestamp");
    let replacement = match rng.below(10) {
        // A deletion timestamp is a time or absent (Go reads a malformed one as absent).
        _ if deletion => rng.chance(50).then(|| json!("2024-01-01T00:00:00Z")),
        0 | 1 => None,
        2 => Some(Value::Null),
        3 => Some(json!(*rng.pick(&[0, 1, -1, 2, 3]))),
        4 => Some(json!(*rng.pick(&[0.5, 2.5, 1e3]))),
        5 => Some(json!(*rng.pick(&["", "x", "True", "False", "Healthy", "1"]))),
        6 => Some(json!(rng.chance(50))),
        7 => Some(json!([])),
        8 => Some(json!({})),
        _ => Some(json!(["x"])),
    };
    let shown = replacement.as_ref().map_or("deleted".to_string(), Value::to_string);
    match (last, here, replacement) {
        (Step::Field(k), Value::Object(m), None) => {
            m.remove(k);
        }
        (Step::Field(k), Value::Object(m), Some(v)) => {
            m.insert(k.clone(), v);
        }
        (Step::Index(i), Value::Array(xs), None) if *i < xs.len() => {
            xs.remove(*i);
        }
        (Step::Index(i), Value::Array(xs), Some(v)) if *i < xs.len() => xs[*i] = v,
        _ => return String::new(),
    }
    let pointer: String = path
        .iter()
        .map(|s| match s {
            Step::Field(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => format!("/{i}"),
        })
        .collect();
    format!("{pointer} {shown}")
}

/// The object of case `i`: fixture `i` modulo their number, as it is on the first pass over
/// them, with one to three seeded mutations after.
fn object(corpus: &Corpus, i: usize, rng: &mut Rng) -> (String, Value, Vec<String>) {
    let f = &corpus.fixtures[i % corpus.fixtures.len()];
    let mut obj = f.object.clone();
    let mut done = vec![];
    if i >= corpus.fixtures.len() {
        for _ in 0..1 + rng.below(3) {
            let mut all = vec![];
            paths(&obj, &mut vec![], &mut all);
            if all.is_empty() {
                break;
            }
            let path = rng.pick(&all).clone();
            let m = mutate(&mut obj, &path, rng);
            if !m.is_empty() {
                done.push(m);
            }
        }
    }
    (f.path.clone(), obj, done)
}

/// `<string>:N:` of a gopher-lua or LuaJIT runtime error in `text`, if it holds one.
fn lua_position(text: &str) -> Option<&str> {
    let start = text.find("<string>:")?;
    let rest = &text[start + "<string>:".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && rest[digits..].starts_with(": "))
        .then(|| &text[start..start + "<string>:".len() + digits + 1])
}

/// The signature of two failures: `raise-vs-fault` when Argo CD's script raised a Lua runtime
/// error and gitops-core's built-in (no script loaded) failed in its own words; `lua-error-text`
/// when both Lua engines raised at the same line (`lua-concat-line`: a concatenation over
/// several lines, which each engine places on another of them); `encode-vs-fault` when
/// gopher-json cannot encode the script's table and the built-in refuses it for the same
/// reason; `result-type` when both refuse a value of the
/// wrong type in the script's result; otherwise `None` (an unexplained pair).
fn failure_class(ours: &str, argo: &str, builtin_fault: bool) -> Option<&'static str> {
    // The script's result has a value of the wrong type: Go's JSON reading refuses it, and
    // gitops-core names the pointer of the value.
    if argo.contains("json: cannot unmarshal") && ours.contains(": result at `") {
        return Some("result-type");
    }
    // gopher-json could not encode the script's table (`cannot encode mixed or invalid key
    // types`); the built-in refuses the same table, naming the field, without Go's wrapping.
    if let Some((_, reason)) = argo.rsplit_once("json.jsonValue: ")
        && builtin_fault
        && lua_position(ours).is_none()
        && ours.contains(reason)
    {
        return Some("encode-vs-fault");
    }
    match (lua_position(argo), lua_position(ours)) {
        (Some(_), None) if builtin_fault => Some("raise-vs-fault"),
        (Some(a), Some(b)) if a == b => Some("lua-error-text"),
        // A concatenation written over several lines: LuaJIT runs it as one instruction and
        // names its last line, gopher-lua the line of the operation that failed.
        (Some(_), Some(_))
            if argo.contains("cannot perform concat operation")
                && ours.contains("attempt to concatenate") =>
        {
            Some("lua-concat-line")
        }
        _ => None,
    }
}

type Found = BTreeMap<String, (String, Value, Value)>;

/// One signature's count and its first case: fixture, mutations, object, divergence.
type Example = (u64, String, Vec<String>, Value, (String, Value, Value));

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(m) if m.contains_key("message") => text(&v["message"]),
        Value::Object(m) if m.contains_key("error") => text(&v["error"]),
        other => other.to_string(),
    }
}

/// The health of one object on both sides.
fn health(
    key: &str,
    obj: &Value,
    ours: &Value,
    argo: &Value,
    from_module: bool,
    found: &mut Found,
) {
    let r = ours;
    let (status, message) = (&r["status"], &r["message"]);
    // Argo CD's empty health (a script's `{}`, a list, a status or message not a string) has
    // the blank status; gitops-core's is no health (testdata/SKIPPED.md, "The empty health").
    let theirs = if argo["status"] == "" { &Value::Null } else { &argo["status"] };
    let same_status = spelling(status) == spelling(theirs);
    if same_status && message == &argo["message"] {
        return;
    }
    if same_status && status == "Unknown" {
        // The built-in rule alone failing (not the deletion rule, not a Go check).
        let builtin_fault = !from_module
            && matches!(engine::health::parts::builtin_rule(obj), Some(Err(e)) if e.to_string() == text(message));
        let argo_text = argo["message"].as_str().unwrap_or("");
        if let Some(class) = failure_class(&text(message), argo_text, builtin_fault) {
            found.insert(
                format!("scripts:health:{class}:{key}"),
                ("/health/message".into(), message.clone(), argo["message"].clone()),
            );
            return;
        }
    }
    let field = if same_status { "message" } else { "status" };
    found.insert(
        format!("scripts:health:{key}:{field}"),
        (format!("/health/{field}"), r[field].clone(), argo[field].clone()),
    );
}

/// The resources of an action's result as compared: operation and object.
fn impacted(v: &Value) -> Value {
    let rs = v["resources"].as_array().map_or(&[][..], Vec::as_slice);
    Value::Array(
        rs.iter()
            .map(|r| json!({"operation": r["operation"], "resource": r["resource"]}))
            .collect(),
    )
}

/// Both sides' answers for one object, compared.
fn compare_case(
    key: &str,
    obj: &Value,
    parameters: &Value,
    ours: &Ours,
    argo: &mut Peer,
    from_module: bool,
) -> Result<(Found, Value), String> {
    let b = argo.call("scripts", &json!({"object": obj, "parameters": parameters}))?;
    if b.get("error").is_some() {
        return Err(format!("the oracle failed on {key}: {b}"));
    }
    let now = b["now"].as_i64().unwrap_or(0);
    let mut found = Found::new();
    // Health where one of Argo CD's scripts is in charge; a kind it checks in Go is the
    // `health` area's.
    if b["scripted"] == true {
        health(key, obj, &ours.health(obj, now), &b["health"], from_module, &mut found);
    }

    let list = ours.list(obj, now);
    let (ours_error, argo_error) = (list.get("error"), b.get("actionsError"));
    match (ours_error, argo_error) {
        (None, None) => {
            if let Some(at) = first_difference(&list, &b["actions"], "") {
                found.insert(
                    format!("scripts:actions:{key}:list"),
                    (format!("/actions{at}"), list.clone(), b["actions"].clone()),
                );
            }
        }
        (Some(x), Some(y)) => {
            let (x, y) = (text(x), text(y));
            if !x.ends_with(&y) {
                let class = failure_class(&x, &y, !from_module).unwrap_or("error");
                found.insert(
                    format!("scripts:actions:{class}:{key}"),
                    ("/actions".into(), json!(x), json!(y)),
                );
            }
        }
        _ => {
            found.insert(
                format!("scripts:actions:{key}:list"),
                ("/actions".into(), list.clone(), b["actions"].clone()),
            );
        }
    }
    let runs = b["runs"].as_object().cloned().unwrap_or_default();
    for (name, theirs) in &runs {
        let r = ours.run(obj, name, parameters, now);
        let at = format!("{key}/{name}");
        match (r.get("error"), theirs.get("error")) {
            (None, None) => {
                let (x, y) = (impacted(&r), impacted(theirs));
                if let Some(p) = first_difference(&x, &y, "") {
                    found.insert(
                        format!("scripts:action:{at}:result{}", pointer_class(&p)),
                        (
                            format!("/runs/{name}{p}"),
                            x.pointer(&p).cloned().unwrap_or(json!("(absent)")),
                            y.pointer(&p).cloned().unwrap_or(json!("(absent)")),
                        ),
                    );
                }
            }
            (Some(x), Some(y)) => {
                let (x, y) = (text(x), text(y));
                // gitops-core's message names the script and object before Argo CD's text.
                if !x.ends_with(&y) {
                    let class = if x.starts_with("no action `") && y == NO_SCRIPT {
                        "no-script"
                    } else {
                        let builtin = !from_module && !x.starts_with("no action `");
                        failure_class(&x, &y, builtin).unwrap_or("error")
                    };
                    found.insert(
                        format!("scripts:action:{class}:{at}"),
                        (format!("/runs/{name}"), json!(x), json!(y)),
                    );
                }
            }
            _ => {
                found.insert(
                    format!("scripts:action:{at}:outcome"),
                    (format!("/runs/{name}"), r.clone(), theirs.clone()),
                );
            }
        }
    }
    Ok((found, b))
}

/// Argo CD's error for an action its discovery script lists and its folder lacks.
const NO_SCRIPT: &str = "built-in script does not exist";

/// Runs `n` objects through both sides and prints per-kind agreement.
pub fn run(
    n: u64,
    seed: u64,
    argo: &mut Peer,
    known: &[String],
    from_module: bool,
    save_to: Option<&Path>,
) -> Result<Outcome, String> {
    let corpus = corpus(argo)?;
    let ours = Ours::new(from_module.then_some(&corpus.scripts));
    let mut rng = Rng::new(seed ^ 0x5c21_9f7d);
    // Kinds whose health no script of Argo CD's decides (a Go check, or none).
    let mut go_checked = std::collections::BTreeSet::new();
    let mut params = serde_json::Map::new();
    let mut out = Outcome { cases: 0, explained: 0, unexplained: 0 };
    // Per kind: objects, agreeing exactly, explained, unexplained.
    let mut kinds: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    let mut examples: BTreeMap<String, Example> = BTreeMap::new();
    for i in 0..n as usize {
        let (path, obj, mutations) = object(&corpus, i, &mut rng);
        for (name, values) in PARAMETERS {
            params.insert(name.to_string(), json!(rng.pick(values)));
        }
        let parameters = Value::Object(params.clone());
        let key = kind_key(&obj);
        let (found, argo_answer) = compare_case(&key, &obj, &parameters, &ours, argo, from_module)?;
        out.cases += 1;
        if argo_answer["scripted"] != true {
            go_checked.insert(key.clone());
        }
        let row = kinds.entry(key).or_default();
        row[0] += 1;
        if found.is_empty() {
            row[1] += 1;
            continue;
        }
        let unexplained = found.keys().any(|sig| !known.iter().any(|k| covers(k, sig)));
        if unexplained {
            row[3] += 1;
            out.unexplained += 1;
        } else {
            row[2] += 1;
            out.explained += 1;
        }
        for (sig, d) in found {
            let e = examples
                .entry(sig.clone())
                .or_insert_with(|| (0, path.clone(), mutations.clone(), obj.clone(), d.clone()));
            e.0 += 1;
            if let (1, Some(dir)) = (e.0, save_to) {
                let scripts = from_module.then(|| kind_scripts(&corpus.scripts, &obj));
                let body = saved(&sig, &obj, &parameters, &argo_answer, &d, scripts.as_ref());
                // What `cargo test` will answer again must be what was compared here.
                if body["method"] == "scripts"
                    && ours::answer_at(&body["params"], &d.0, scripts.as_ref())
                        != body["checks"][0]["gitopsCore"]
                {
                    println!("  {sig}: the recorded case does not replay gitops-core's answer");
                }
                save(dir, &sig, &body)?;
            }
        }
    }
    let (all, exact) = kinds.values().fold((0, 0), |(a, b), r| (a + r[0], b + r[1]));
    let full = kinds.values().filter(|r| r[1] + r[2] == r[0]).count();
    println!(
        "scripts: {all} objects ({} fixtures of Argo CD 3.6.2, then seeded mutations), {} agree \
         ({:.2}%): {exact} exactly, {} both failing (explained); {full} of {} kinds agree on \
         every object{}",
        corpus.fixtures.len(),
        exact + out.explained,
        100.0 * (exact + out.explained) as f64 / all.max(1) as f64,
        out.explained,
        kinds.len(),
        if from_module { "; gitops-core ran the same scripts (--scripts-from-module)" } else { "" }
    );
    if !go_checked.is_empty() {
        println!(
            "scripts: health not compared for {} kinds no script of Argo CD's decides (Go checks \
             or none; the health area's), their actions compared: {}",
            go_checked.len(),
            go_checked.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    if !corpus.left_out.is_empty() {
        println!(
            "scripts: {} fixture documents are not one object (an action's expected results), \
             not compared: {}",
            corpus.left_out.len(),
            corpus.left_out.join(", ")
        );
    }
    for (kind, r) in &kinds {
        if r[1] + r[2] < r[0] {
            println!("  {kind}: {} of {} agree ({} explained)", r[1] + r[2], r[0], r[2]);
        }
    }
    for (sig, (count, path, mutations, _, (pointer, x, y))) in &examples {
        let is_known = known.iter().any(|k| covers(k, sig));
        let cut = |v: &Value| {
            let s = v.to_string();
            if s.chars().count() > 300 {
                format!("{}...", s.chars().take(300).collect::<String>())
            } else {
                s
            }
        };
        println!(
            "  {} {sig} ({count} objects), e.g. {path} [{}] at {pointer}: gitops-core {} / Argo CD {}",
            if is_known { "explained" } else { "UNEXPLAINED" },
            mutations.join("; "),
            cut(x),
            cut(y)
        );
    }
    Ok(out)
}

/// Whether a folder name of Argo CD's layout (`_` for any run of characters) names `name`.
fn folder_matches(folder: &str, name: &str) -> bool {
    match folder.split_once('_') {
        None => folder == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len())
                    .any(|i| name.get(i..).is_some_and(|rest| folder_matches(tail, rest)))
        }
    }
}

/// The scripts of `files` (Argo CD's `resource_customizations` layout) whose folders name the
/// group and kind of `obj`, exact or wildcard.
fn kind_scripts(files: &BTreeMap<String, String>, obj: &Value) -> BTreeMap<String, String> {
    let api = obj["apiVersion"].as_str().unwrap_or("");
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = obj["kind"].as_str().unwrap_or("");
    files
        .iter()
        .filter(|(path, _)| {
            let mut parts = path.trim_start_matches("./").split('/');
            match (parts.next(), parts.next()) {
                (Some(g), Some(k)) => folder_matches(g, group) && folder_matches(k, kind),
                _ => false,
            }
        })
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect()
}

/// A divergence as `--save` records it, for `cargo test` to replay
/// (`src/tests/oracle_replay.rs`): a health one of the built-in rules as a `health` request; any
/// other as a `scripts` request (the object, the parameters, the second Argo CD's answer used
/// and, from `--scripts-from-module`, the paths of the kind's scripts in Argo CD's folder, not
/// their text: Argo CD's code is not copied here), which `ours::answer_at` answers again at the
/// check's pointer.
fn saved(
    sig: &str,
    obj: &Value,
    parameters: &Value,
    argo: &Value,
    (pointer, x, y): &(String, Value, Value),
    scripts: Option<&BTreeMap<String, String>>,
) -> Value {
    let now = argo["now"].as_i64().unwrap_or(0);
    let t = jiff::Timestamp::from_second(now).map(|t| t.to_string()).unwrap_or_default();
    if let (Some(field), None) = (pointer.strip_prefix("/health/"), &scripts) {
        return json!({"signature": sig, "method": "health",
            "params": {"objects": [obj], "now": t},
            "checks": [{"pointer": format!("/resources/0/{field}"), "gitopsCore": x, "argo": y}]});
    }
    json!({"signature": sig, "method": "scripts",
        "params": {"object": obj, "parameters": parameters, "now": now,
            "scriptPaths": scripts.map(|s| s.keys().collect::<Vec<_>>())},
        "checks": [{"pointer": pointer, "gitopsCore": x, "argo": y}]})
}

/// `--case FILE` of a `scripts` request: both sides, every divergence printed (explained or
/// not); with `--save DIR`, each recorded as a run records its first case of a signature.
pub fn one(
    params: &Value,
    argo: &mut Peer,
    from_module: bool,
    known: &[String],
    save_to: Option<&Path>,
) -> Result<u64, String> {
    let corpus = corpus(argo)?;
    let ours = Ours::new(from_module.then_some(&corpus.scripts));
    let obj = &params["object"];
    let (found, argo_answer) =
        compare_case(&kind_key(obj), obj, &params["parameters"], &ours, argo, from_module)?;
    for (sig, d) in &found {
        let (pointer, x, y) = d;
        let is_known = known.iter().any(|k| covers(k, sig));
        println!(
            "{} {sig} at {pointer}: gitops-core {x} / Argo CD {y}",
            if is_known { "explained" } else { "UNEXPLAINED" }
        );
        if let Some(dir) = save_to {
            let scripts = from_module.then(|| kind_scripts(&corpus.scripts, obj));
            save(
                dir,
                sig,
                &saved(sig, obj, &params["parameters"], &argo_answer, d, scripts.as_ref()),
            )?;
        }
    }
    println!("{} divergences", found.len());
    Ok(found.len() as u64)
}
