//! Differential runner: generated cases through `gitops-core serve` and through the Go oracle
//! (Argo CD's own packages, `oracle/main.go`), compared field by field.
//!
//! `cargo run --example oracle -- --gitops-core PATH --oracle PATH [--cases N] [--seed S]
//! [--save DIR] [--ssa] [--only AREA] [--scripts-from-module]`, or `--case FILE [--show] [--save DIR]` (one saved
//! request; with `--save`, an agreed answer is recorded as `DIR/<FILE's name>`), or `--bench ROUNDS`
//! (`--only tick`: only the steady-state tick of 100 apps);
//! `oracle/run` builds both programs and calls this. Every case is generated from the seed
//! alone, so a run is reproducible. A divergence whose signature is listed in
//! `testdata/oracle/explained.txt` (each with its entry in `testdata/SKIPPED.md`) is counted
//! as explained; any other is unexplained and makes the exit status 1.
#![allow(missing_docs)]
#![allow(clippy::disallowed_methods)] // a host program: it reads testdata and runs processes

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use gitops_core_testkit::workload;

use gitops_core_testkit::oracle::{autosync, deletion, jq, normalize, objects, syncsim, tracking};

// The runner's own modules, beside it in oracle/ (the example's root).
mod defaulting;
mod generate;
mod scripts;
mod tracking_cases;
mod yaml;

use generate::{Area, Rng};
use objects::{key, with_objects};

/// One long-running JSON-lines peer.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Peer {
    fn spawn(program: &Path, args: &[&str]) -> Result<Self, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Peer { child, stdin, stdout, next_id: 0 })
    }

    fn request(&mut self, method: &str, params: &Value) -> String {
        self.next_id += 1;
        json!({"id": self.next_id, "method": method, "params": params}).to_string()
    }

    /// Sends one request line and reads the answer line, unparsed.
    fn exchange(&mut self, line: &str) -> Result<String, String> {
        writeln!(self.stdin, "{line}").map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())?;
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).map_err(|e| e.to_string())?;
        Ok(answer)
    }

    fn call(&mut self, method: &str, params: &Value) -> Result<Value, String> {
        let line = self.request(method, params);
        let answer = self.exchange(&line)?;
        let v: Value =
            serde_json::from_str(&answer).map_err(|e| format!("bad answer {answer:?}: {e}"))?;
        match v.get("result") {
            Some(r) => Ok(r.clone()),
            None => Ok(json!({"error": v.get("error").cloned().unwrap_or(Value::Null)})),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Options {
    cases: u64,
    seed: u64,
    gitops_core: PathBuf,
    oracle: PathBuf,
    save: Option<PathBuf>,
    bench: Option<usize>,
    case: Option<PathBuf>,
    ssa: bool,
    only: Option<String>,
    show: bool,
    scripts_from_module: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        cases: 1000,
        seed: 1,
        gitops_core: PathBuf::new(),
        oracle: PathBuf::new(),
        save: None,
        bench: None,
        case: None,
        ssa: false,
        only: None,
        show: false,
        scripts_from_module: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--cases" => o.cases = value()?.parse().map_err(|e| format!("--cases: {e}"))?,
            "--seed" => o.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--gitops-core" => o.gitops_core = value()?.into(),
            "--oracle" => o.oracle = value()?.into(),
            "--save" => o.save = Some(value()?.into()),
            "--bench" => o.bench = Some(value()?.parse().map_err(|e| format!("--bench: {e}"))?),
            "--case" => o.case = Some(value()?.into()),
            "--ssa" => o.ssa = true,
            "--only" => o.only = Some(value()?),
            "--show" => o.show = true,
            "--scripts-from-module" => o.scripts_from_module = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(o)
}

/// The OpenAPI v2 document the oracle builds its GVK parser from (server-side diff's
/// webhook-mutation removal): Kubernetes 1.37, as Argo CD 3.6 runs against it.
fn openapi(root: &Path) -> String {
    root.join("testdata/k8s/openapi-v2-k8s-1.37.json").to_string_lossy().into_owned()
}

/// Lower-cased status spelling, so both `OutOfSync` and `out_of_sync` compare equal.
fn spelling(v: &Value) -> Value {
    match v.as_str() {
        Some(s) => {
            Value::String(s.chars().filter(|c| *c != '_').collect::<String>().to_lowercase())
        }
        None => v.clone(),
    }
}

/// The RFC 6901 pointer of the first place where two JSON values differ, if any.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(u), Some(v)) => first_difference(u, v, &format!("{at}/{}", escape(k))),
                _ => Some(format!("{at}/{}", escape(k))),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, &format!("{at}/{i}"))),
        // Numbers compare by value: 2 and 2.0 are the same JSON number.
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ if a == b => None,
        _ => Some(at.to_string()),
    }
}

/// The class of a pointer: the path with list indices as `*`, so one divergence signature
/// covers every resource and list position it shows up at.
fn pointer_class(pointer: &str) -> String {
    pointer
        .split('/')
        .map(
            |part| {
                if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                    "*"
                } else {
                    part
                }
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

/// A divergence: the RFC 6901 pointer into gitops-core's answer, its value and Argo CD's.
type Found = (String, Value, Value);

/// What both sides answer, reduced to the compared fields: signature → divergence.
fn compare(area: Area, params: &Value, ours: &Value, argo: &Value) -> BTreeMap<String, Found> {
    let mut out = BTreeMap::new();
    if let Area::Diff = area
        && both_fail(ours, argo)
    {
        return out;
    }
    if ours.get("error").is_some() || argo.get("error").is_some() {
        out.insert(format!("{}:error", area.name()), (String::new(), ours.clone(), argo.clone()));
        return out;
    }
    let top = match area {
        Area::Health => "status",
        Area::Diff => "syncStatus",
        Area::Sync => return syncsim::compare(params, ours, argo),
        Area::Autosync => return autosync::compare(params, ours, argo),
    };
    if spelling(&ours[top]) != spelling(&argo[top]) {
        out.insert(
            format!("{}:app-{top}", area.name()),
            (format!("/{top}"), ours[top].clone(), argo[top].clone()),
        );
    }
    let theirs: BTreeMap<String, &Value> =
        argo["resources"].as_array().into_iter().flatten().map(|r| (key(r), r)).collect();
    for (i, r) in ours["resources"].as_array().into_iter().flatten().enumerate() {
        let kind = r["kind"].as_str().unwrap_or("");
        let Some(a) = theirs.get(&key(r)) else {
            out.insert(
                format!("{}:{kind}:missing", area.name()),
                (format!("/resources/{i}"), r.clone(), Value::Null),
            );
            continue;
        };
        if let Area::Diff = area {
            for f in OBJECT_FIELDS {
                // Argo CD leaves out an object it has not got (`null`).
                if let Some(at) = first_difference(&r[f], &a[f], "") {
                    let (x, y) = (r[f].pointer(&at), a[f].pointer(&at));
                    out.insert(
                        format!("{}:{kind}:{f}{}", area.name(), pointer_class(&at)),
                        (
                            format!("/resources/{i}/{f}{at}"),
                            x.cloned().unwrap_or(Value::Null),
                            y.cloned().unwrap_or(Value::Null),
                        ),
                    );
                }
            }
        }
        let fields: &[&str] = match area {
            Area::Health => &["status", "message"],
            Area::Diff | Area::Sync | Area::Autosync => &["modified", "status"],
        };
        for f in fields {
            let (x, y) = (spelling_if_status(f, &r[f]), spelling_if_status(f, &a[f]));
            if x != y {
                out.insert(
                    format!("{}:{kind}:{f}", area.name()),
                    (format!("/resources/{i}/{f}"), r[f].clone(), a[f].clone()),
                );
            }
        }
    }
    out
}

/// Whether a `diff` failed on both sides: Argo CD's `StateDiffs` returns an error,
/// gitops-core the app's `ComparisonError` condition with every resource `Unknown`. The
/// messages are not compared (each names the step it failed in, in its own words); the runner
/// counts these cases apart.
fn both_fail(ours: &Value, argo: &Value) -> bool {
    argo["error"]["message"].is_string()
        && ours["syncStatus"] == "Unknown"
        && ours["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "ComparisonError")
}

/// The objects compared per resource of a `diff` answer.
const OBJECT_FIELDS: [&str; 2] = ["normalizedLive", "predictedLive"];

/// The compared fields of an answer both sides agree on: every one becomes a recorded check.
fn checks(area: Area, ours: &Value) -> Vec<Value> {
    let (top, fields): (&str, &[&str]) = match area {
        Area::Health => ("status", &["status", "message"]),
        Area::Diff | Area::Sync | Area::Autosync => {
            ("syncStatus", &["modified", "status", OBJECT_FIELDS[0], OBJECT_FIELDS[1]])
        }
    };
    let mut out = vec![json!({"pointer": format!("/{top}"), "argo": ours[top]})];
    for (i, r) in ours["resources"].as_array().into_iter().flatten().enumerate() {
        for f in fields {
            out.push(json!({"pointer": format!("/resources/{i}/{f}"), "argo": r[*f]}));
        }
    }
    out
}

fn save(dir: &Path, name: &str, body: &Value) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{}.json", name.replace([':', '/', ' ', '"', '='], "-")));
    let text = serde_json::to_string_pretty(body).map_err(|e| e.to_string())?;
    std::fs::write(&file, text + "\n").map_err(|e| format!("{}: {e}", file.display()))
}

fn spelling_if_status(field: &str, v: &Value) -> Value {
    if field == "status" { spelling(v) } else { v.clone() }
}

/// The class of an answer: the kind and outcome of its first resource.
fn outcome_class(area: Area, ours: &Value) -> String {
    let per: Vec<String> = ours["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| match area {
            Area::Health => format!(
                "{}{}",
                r["kind"].as_str().unwrap_or(""),
                r["status"].as_str().unwrap_or("none")
            ),
            Area::Diff | Area::Sync | Area::Autosync => format!(
                "{}{}",
                r["kind"].as_str().unwrap_or(""),
                if r["modified"] == true { "Modified" } else { "Same" }
            ),
        })
        .take(1)
        .collect();
    if let Area::Autosync = area {
        // Whether a sync may run and whether a window is active.
        let active =
            ours["matching"].as_array().is_some_and(|ws| ws.iter().any(|w| w["active"] == true));
        return format!(
            "{}{}",
            match ours["canSync"].as_bool() {
                Some(true) => "CanSync",
                Some(false) => "Blocked",
                None => "Error",
            },
            if active { "-active" } else { "" }
        );
    }
    if let Area::Sync = area {
        // The final phase and whether hooks ran.
        let hooks = ours["results"].as_array().is_some_and(|rs| {
            rs.iter().any(|r| r["hookType"].as_str().is_some_and(|h| !h.is_empty()))
        });
        return format!(
            "{}{}",
            ours["phase"].as_str().unwrap_or("Error"),
            if hooks { "-hooks" } else { "" }
        );
    }
    per.join("-")
}

/// Whether divergence signature `sig` is one an `explained.txt` line covers: the line is a
/// prefix of it, where `%` in the line stands for any run of characters.
fn covers(line: &str, sig: &str) -> bool {
    let mut parts = line.split('%');
    let Some(rest) = sig.strip_prefix(parts.next().unwrap_or("")) else { return false };
    let mut rest = rest;
    for part in parts {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

fn explained(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("testdata/oracle/explained.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

/// Both programs started and configured with the Canary health script.
fn start(o: &Options, root: &Path, serve: &[&str]) -> Result<(Peer, Peer), String> {
    let canary = std::fs::read_to_string(
        root.join("testdata/health/customizations/example.com/Canary/health.lua"),
    )
    .map_err(|e| format!("Canary script: {e}"))?;
    let configure = json!({"customizations": {"example.com/Canary": canary}});
    let mut ours = Peer::spawn(&o.gitops_core, serve)?;
    let mut argo = Peer::spawn(&o.oracle, &[&openapi(root)])?;
    ours.call("configure", &configure)?;
    argo.call("configure", &configure)?;
    Ok((ours, argo))
}

/// Whether an app syncs by server-side apply (Argo CD 3.6 then compares it by server-side
/// diff, which asks the API server for a dry run of every desired object).
fn server_side(params: &Value) -> bool {
    params["app"]["spec"]["syncPolicy"]["syncOptions"]
        .as_array()
        .is_some_and(|os| os.iter().any(|o| o == "ServerSideApply=true"))
}

/// A server-side `diff` case gets the API server's dry-run answers (`dryRuns`), from the
/// oracle's field manager (`oracle/dryrun.go`), so that both sides compare the same predicted
/// live objects. Returns why the field manager refused objects (no dry run: both sides fail
/// that case), each message with its object's name left out.
fn with_dry_runs(params: &mut Value, argo: &mut Peer) -> Result<Vec<String>, String> {
    if !server_side(params) || params.get("dryRuns").is_some() {
        return Ok(vec![]);
    }
    let answer = argo.call("dryruns", params)?;
    let Some(runs) = answer.get("dryRuns") else {
        return Err(format!("dryruns: {answer}"));
    };
    params["dryRuns"] = runs.clone();
    // The live objects as the server stores them (port protocols defaulted).
    if let Some(live) = answer.get("live").filter(|l| l.is_array()) {
        params["live"] = live.clone();
    }
    let errors = answer["errors"].as_object().into_iter().flatten();
    Ok(errors
        .map(|(i, e)| {
            let name = params["desired"][i.parse::<usize>().unwrap_or(0)]["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string();
            e.as_str().unwrap_or("").replace(&name, "<name>")
        })
        .collect())
}

/// Both answers to one case: gitops-core's from `serve` (a sync case: from driving the
/// library's `step`, `syncsim.rs`), Argo CD's from the oracle.
fn answers(
    area: Area,
    params: &Value,
    ours: &mut Peer,
    argo: &mut Peer,
) -> Result<(Value, Value), String> {
    let a = match area {
        Area::Sync => syncsim::run(params).unwrap_or_else(|e| json!({"error": e})),
        Area::Autosync => {
            // Argo CD's window functions read the clock: gitops-core is given the second used.
            let b = argo.call(area.name(), params)?;
            let now = b["now"].as_str().unwrap_or("").to_string();
            let mut decide = |p: &Value| ours.call("decide", p);
            let a =
                autosync::run(params, &now, &mut decide).unwrap_or_else(|e| json!({"error": e}));
            return Ok((a, b));
        }
        _ => {
            let mut a = ours.call(area.name(), params)?;
            if let (Area::Diff, None) = (area, a.get("error")) {
                with_objects(params, &mut a)?;
            }
            a
        }
    };
    Ok((a, argo.call(area.name(), params)?))
}

fn run(o: &Options) -> Result<u64, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let known = explained(root);
    let (mut ours, mut argo) = start(o, root, &["serve"])?;

    let mut rng = Rng::new(o.seed);
    let mut per_area: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    let mut examples: BTreeMap<String, (&str, Value, Found, Value)> = BTreeMap::new();
    let mut unexplained = 0;
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut recorded = std::collections::BTreeSet::new();
    let mut failed_both = 0;
    if o.only.as_deref().is_none_or(|only| only == "yaml") {
        // YAML texts through both readers: all the cases with `--only yaml`, a quarter more
        // in a run of every area.
        let n = if o.only.is_some() { o.cases } else { o.cases / 4 };
        let (n, explained, unexp, found) = yaml::run(n, o.seed, &mut argo, &known)?;
        per_area.insert("yaml", (n, explained, unexp));
        unexplained += unexp;
        for (sig, pointer, x, y, text, argo_answer) in found {
            let is_known = known.iter().any(|k| covers(k, &sig));
            println!(
                "  {} {sig} at {pointer:?}: gitops-core {x} / Argo CD {y}\n    text: {text:?}",
                if is_known { "explained" } else { "UNEXPLAINED" }
            );
            if let Some(dir) = &o.save {
                save(
                    dir,
                    &sig,
                    &yaml::recorded(Some((&sig, &pointer, &x, &y)), &text, &argo_answer),
                )?;
            }
        }
    }
    for area in ["tracking", "normalize", "jq", "deletion"] {
        if o.only.as_deref().is_some_and(|only| only != area) {
            continue;
        }
        // Resource tracking, the controller's preparation of desired objects and jq rules
        // through both: all the cases with `--only AREA`, a tenth more each in a run of every
        // area.
        let n = if o.only.is_some() { o.cases } else { o.cases / 10 };
        let (n, explained, unexp, found, agreed) = match area {
            "tracking" => tracking_cases::run(n, o.seed, &mut argo, &known)?,
            "normalize" => tracking_cases::run_normalize(n, o.seed, &mut argo, &known)?,
            "deletion" => tracking_cases::run_deletion(n, o.seed, &mut argo, &known)?,
            _ => tracking_cases::run_jq(n, o.seed, &mut argo, &known)?,
        };
        per_area.insert(area, (n, explained, unexp));
        unexplained += unexp;
        if let Some(dir) = &o.save {
            for (i, (params, argo_answer)) in agreed.iter().enumerate() {
                let body = json!({"method": area, "params": params, "argo": argo_answer});
                save(dir, &format!("{area}-agree-{i}"), &body)?;
            }
        }
        for (sig, field, x, y, params) in found {
            let is_known = known.iter().any(|k| covers(k, &sig));
            println!(
                "  {} {sig} at {field:?}: gitops-core {x} / Argo CD {y}",
                if is_known { "explained" } else { "UNEXPLAINED" }
            );
            if let Some(dir) = &o.save {
                let body = json!({"signature": sig, "method": area, "params": params,
                    "checks": [{"pointer": field, "gitopsCore": x, "argo": y}]});
                save(dir, &sig, &body)?;
            }
        }
    }
    if o.only.as_deref().is_none_or(|only| only == "scripts") {
        // Argo CD's shipped health and action scripts against the built-in rules: as many
        // objects as cases, besides the cases of the other areas (an object takes ~3 ms).
        let n = o.cases;
        let save = o.save.as_deref();
        let r = scripts::run(n, o.seed, &mut argo, &known, o.scripts_from_module, save)?;
        per_area.insert("scripts", (r.cases, r.explained, r.unexplained));
        unexplained += r.unexplained;
    }
    let mut refused_dry_runs = 0;
    let mut refusals: BTreeMap<String, u64> = BTreeMap::new();
    for _ in 0..o.cases {
        let (area, mut params) = generate::case(&mut rng, o.ssa);
        if o.only.as_deref().is_some_and(|only| only != area.name()) {
            continue;
        }
        if let Area::Diff = area {
            for why in with_dry_runs(&mut params, &mut argo)? {
                refused_dry_runs += 1;
                *refusals.entry(why).or_default() += 1;
            }
        }
        let (a, b) = answers(area, &params, &mut ours, &mut argo)?;
        for r in a["resources"].as_array().into_iter().flatten() {
            let outcome = match area {
                Area::Health => format!("{}", r["status"]),
                Area::Diff | Area::Sync | Area::Autosync => {
                    format!("modified={}", r["modified"])
                }
            };
            *outcomes.entry(format!("{} {outcome}", area.name())).or_default() += 1;
        }
        if let Area::Autosync = area {
            *outcomes.entry(format!("autosync {}", outcome_class(area, &a))).or_default() += 1;
        }
        if let Area::Sync = area {
            let passes = a["passes"].as_array().map_or(0, Vec::len);
            let outcome = format!("sync {} after {passes} passes", a["phase"]);
            *outcomes.entry(outcome).or_default() += 1;
        }
        if let Area::Diff = area
            && both_fail(&a, &b)
        {
            failed_both += 1;
        }
        let entry = per_area.entry(area.name()).or_default();
        entry.0 += 1;
        let found = compare(area, &params, &a, &b);
        if found.is_empty() {
            // One agreed answer per class of outcome is kept as a recorded oracle answer.
            let class = format!("{}-agree-{}", area.name(), outcome_class(area, &a));
            if let (Some(dir), true) = (&o.save, recorded.insert(class.clone())) {
                let body = match area {
                    Area::Sync | Area::Autosync => {
                        json!({"method": area.name(), "params": params, "argo": b})
                    }
                    _ => json!({"method": area.name(), "params": params,
                        "checks": checks(area, &a)}),
                };
                save(dir, &class, &body)?;
            }
            continue;
        }
        let mut case_unexplained = false;
        for (sig, divergence) in found {
            let is_known = known.iter().any(|k| covers(k, &sig));
            if !is_known {
                case_unexplained = true;
            }
            examples
                .entry(sig)
                .or_insert_with(|| (area.name(), params.clone(), divergence, b.clone()));
        }
        if case_unexplained {
            entry.2 += 1;
            unexplained += 1;
        } else {
            entry.1 += 1;
        }
    }
    let mut total = 0;
    for (area, (n, explained, unexp)) in &per_area {
        total += n;
        println!("{area}: {n} cases, {explained} explained divergences, {unexp} unexplained");
    }
    let spread: Vec<String> = outcomes.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    println!("resources by gitops-core's answer: {}", spread.join(", "));
    if failed_both > 0 {
        println!(
            "diff: {failed_both} cases failed on both sides (a patch neither could build, or \
             {refused_dry_runs} objects the API server's field manager refused to dry-run)"
        );
    }
    for (why, n) in &refusals {
        println!("  dry run refused {n} times: {why}");
    }
    for (sig, (method, params, (pointer, x, y), argo_answer)) in &examples {
        let is_known = known.iter().any(|k| covers(k, sig));
        println!(
            "  {} {sig}: gitops-core {x} / Argo CD {y}",
            if is_known { "explained" } else { "UNEXPLAINED" }
        );
        if let Some(dir) = &o.save {
            let mut body = json!({"signature": sig, "method": method, "params": params,
                "checks": [{"pointer": pointer, "gitopsCore": x, "argo": y}]});
            if *method == "sync" || *method == "autosync" {
                // The replay compares the whole operation again.
                body["argo"] = argo_answer.clone();
            }
            save(dir, sig, &body)?;
        }
    }
    println!("{total} cases, {unexplained} unexplained divergences");
    Ok(unexplained)
}

/// One request from a file (`{"method": ..., "params": ...}`, as `--save` writes them) through
/// both sides: prints every divergence with both values, exit status 1 when there is one.
fn one_case(o: &Options, file: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let case: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let name = file.file_stem().and_then(|n| n.to_str()).ok_or("a case file name")?;
    let known = explained(Path::new(env!("CARGO_MANIFEST_DIR")));
    if case["method"] == "scripts" {
        let (_, mut argo) = start(o, Path::new(env!("CARGO_MANIFEST_DIR")), &["serve"])?;
        return scripts::one(
            &case["params"],
            &mut argo,
            o.scripts_from_module,
            &known,
            o.save.as_deref(),
        );
    }
    if case["method"] == "yaml" {
        let (_, mut argo) = start(o, Path::new(env!("CARGO_MANIFEST_DIR")), &["serve"])?;
        return yaml::one(&case["params"], &mut argo, &known, o.save.as_deref().map(|d| (d, name)));
    }
    let area = match case["method"].as_str() {
        Some("diff") => Area::Diff,
        Some("sync") => Area::Sync,
        Some("autosync") => Area::Autosync,
        _ => Area::Health,
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut ours, mut argo) = start(o, root, &["serve"])?;
    let mut params = case["params"].clone();
    if let Area::Diff = area {
        with_dry_runs(&mut params, &mut argo)?;
    }
    let (a, b) = answers(area, &params, &mut ours, &mut argo)?;
    let found = compare(area, &params, &a, &b);
    if o.show {
        let text = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
        println!("gitops-core: {}\nArgo CD: {}", text(&a), text(&b));
    }
    for (sig, (pointer, x, y)) in &found {
        println!("{sig} at {pointer}: gitops-core {x} / Argo CD {y}");
    }
    println!("{} divergences", found.len());
    if let (Some(dir), true, Area::Diff | Area::Health) = (&o.save, found.is_empty(), area) {
        // The request again, with the checks of the agreed answer (a fixed divergence).
        let mut body = json!({"method": case["method"], "params": params,
            "checks": checks(area, &a)});
        if let Area::Diff = area
            && both_fail(&a, &b)
        {
            // Both fail: gitops-core's failure is pinned, with Argo CD's error beside it.
            body["checks"] = json!([{"pointer": "/syncStatus", "argo": a["syncStatus"]},
                {"pointer": "/conditions", "argo": a["conditions"]}]);
            body["argoError"] = b["error"].clone();
        }
        save(dir, name, &body)?;
    }
    Ok(found.len() as u64)
}

/// Median, fastest and slowest wall time of `rounds` answers to the same request, after one
/// warm-up: from writing the request line (serialised beforehand) to reading the whole answer
/// line (parsed after).
fn median_ms(
    peer: &mut Peer,
    method: &str,
    params: &Value,
    rounds: usize,
) -> Result<([f64; 3], Value), String> {
    let line = peer.request(method, params);
    peer.exchange(&line)?;
    let mut times = Vec::new();
    let mut last = Value::Null;
    for _ in 0..rounds {
        let start = std::time::Instant::now();
        let answer = peer.exchange(&line)?;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        let mut answer: Value = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
        match answer.get_mut("result") {
            Some(result) => last = result.take(),
            None => return Err(format!("{method}: {answer}")),
        }
    }
    times.sort_by(f64::total_cmp);
    let slowest = times.last().copied().unwrap_or(f64::NAN);
    Ok(([times[times.len() / 2], times.first().copied().unwrap_or(f64::NAN), slowest], last))
}

/// The same requests through both peers, side by side in one run: the benches' 1,000- and
/// 10,000-resource applications, Lua health of one Rollout-style object, and the 1,000-resource
/// application with a jq ignore rule on every object.
fn bench(o: &Options, rounds: usize) -> Result<u64, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let object = std::fs::read_to_string(
        root.join("testdata/health/customizations/example.com/Canary/testdata/healthy.yaml"),
    )
    .map_err(|e| e.to_string())?;
    let object: Value = serde_norway::from_str(&object).map_err(|e| e.to_string())?;
    let (mut ours, mut argo) = start(o, root, &["serve", "--max-request-bytes", "268435456"])?;
    // The benches' Application, named so that both sides set its tracking annotation.
    let mut app = workload::app_document();
    app["metadata"]["name"] = json!("bench");
    let mut jq_app = app.clone();
    jq_app["spec"]["ignoreDifferences"] = json!([{"group": "*", "kind": "*",
        "jqPathExpressions": [".metadata.labels.\"app.kubernetes.io/version\""]}]);
    // The 10,000-resource app last: the longest, so the others are printed before it.
    let w = workload::workload_of(1_000);
    let mut cases = vec![
        (
            "diff, 1000-resource app".to_string(),
            "diff",
            json!({"desired": w.desired, "live": w.live, "app": app}),
        ),
        (
            "diff, 1,000 resources, a jq rule on every object".into(),
            "diff",
            json!({"desired": w.desired, "live": w.live, "app": jq_app}),
        ),
        ("Lua health, one Rollout-style object".into(), "health", json!({"objects": [object]})),
    ];
    let w = workload::workload_of(10_000);
    cases.push((
        "diff, 10000-resource app".into(),
        "diff",
        json!({"desired": w.desired, "live": w.live, "app": app}),
    ));
    println!(
        "median (fastest to slowest) of {rounds} rounds after one warm-up, the same request line to both"
    );
    // `--only tick`: the steady-state tick alone.
    if o.only.as_deref() == Some("tick") {
        cases.clear();
    }
    for (name, method, params) in &cases {
        let ([a, a_min, a_max], mut x) = median_ms(&mut ours, method, params, rounds)?;
        let ([b, b_min, b_max], y) = median_ms(&mut argo, method, params, rounds)?;
        let area = if *method == "diff" { Area::Diff } else { Area::Health };
        if let Area::Diff = area {
            with_objects(params, &mut x)?;
        }
        let found = compare(area, params, &x, &y);
        // What each side answered, so the timings are known to be of the same work.
        let summary = |v: &Value| {
            let rs = v["resources"].as_array().map_or(&[][..], Vec::as_slice);
            let modified = rs.iter().filter(|r| r["modified"] == true).count();
            match *method {
                "diff" => {
                    format!("{} resources, {modified} modified, {}", rs.len(), v["syncStatus"])
                }
                _ => format!(
                    "{} {}",
                    v["status"],
                    rs.first().map_or(&Value::Null, |r| &r["message"])
                ),
            }
        };
        println!(
            "{name}: gitops-core {a:.2} ms ({a_min:.2} to {a_max:.2}), Argo CD {b:.2} ms \
             ({b_min:.2} to {b_max:.2}), Argo CD / gitops-core {:.2} (gitops-core: {}; Argo CD: {})",
            b / a,
            summary(&x),
            summary(&y)
        );
        for (sig, (pointer, u, v)) in found.iter().take(5) {
            println!("  divergence {sig} at {pointer}: gitops-core {u} / Argo CD {v}");
        }
    }
    if o.only.as_deref().is_none_or(|only| only == "tick") {
        tick(&mut ours, &mut argo, &app, 100, rounds)?;
    }
    Ok(0)
}

/// A steady-state tick of a controller (issue 30): `apps` apps of the benches' 100-resource
/// application, one live object of each changed per tick (1 % of the objects). gitops-core
/// re-decides each app from a `serve` session (`app.update` with one watch event) and, the
/// same tick again, by a full `diff` of the app; Argo CD by its full comparison (the oracle's
/// `diff`, without health). Prints the median tick of `rounds` after one warm-up tick, and the
/// decisions per second of each, from writing the request lines (serialised beforehand) to
/// reading the answers. Each app's session and full `diff` of gitops-core must agree on its sync
/// status.
fn tick(
    ours: &mut Peer,
    argo: &mut Peer,
    app: &Value,
    apps: usize,
    rounds: usize,
) -> Result<(), String> {
    let w = workload::workload_of(100);
    let mut sessions = Vec::with_capacity(apps);
    for _ in 0..apps {
        let params = json!({"desired": w.desired, "live": w.live, "app": app});
        let opened = ours.call("app.open", &params)?;
        let session = opened["session"].as_str().ok_or_else(|| format!("app.open: {opened}"))?;
        sessions.push(session.to_string());
    }
    let mut lives = vec![w.live.clone(); apps];
    let (mut updates, mut fulls, mut argos) = (Vec::new(), Vec::new(), Vec::new());
    for t in 0..=rounds {
        let (mut update_lines, mut diff_lines_ours, mut diff_lines_argo) =
            (Vec::new(), Vec::new(), Vec::new());
        for (a, session) in sessions.iter().enumerate() {
            let i = (a * 7 + t) % lives[a].len();
            lives[a][i]["metadata"]["labels"]["bench/tick"] = json!(t.to_string());
            let event = json!({"type": "MODIFIED", "object": lives[a][i]});
            update_lines
                .push(ours.request("app.update", &json!({"session": session, "events": [event]})));
            let params = json!({"desired": w.desired, "live": lives[a], "app": app});
            diff_lines_ours.push(ours.request("diff", &params));
            diff_lines_argo.push(argo.request("diff", &params));
        }
        let timed = |peer: &mut Peer, lines: &[String]| -> Result<(f64, Vec<String>), String> {
            let start = std::time::Instant::now();
            let mut answers = Vec::with_capacity(lines.len());
            for line in lines {
                answers.push(peer.exchange(line)?);
            }
            Ok((start.elapsed().as_secs_f64() * 1000.0, answers))
        };
        let (u, delta) = timed(ours, &update_lines)?;
        let (f, full) = timed(ours, &diff_lines_ours)?;
        let (g, _) = timed(argo, &diff_lines_argo)?;
        for (d, f) in delta.iter().zip(&full) {
            let status = |line: &str| {
                let v: Value = serde_json::from_str(line).unwrap_or_default();
                v["result"]["syncStatus"].clone()
            };
            if status(d) != status(f) || status(d).is_null() {
                return Err(format!("tick {t}: app.update {d} / diff {f}"));
            }
        }
        if t > 0 {
            updates.push(u);
            fulls.push(f);
            argos.push(g);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (u, f, g) = (median(&mut updates), median(&mut fulls), median(&mut argos));
    let rate = |ms: f64| apps as f64 / ms * 1000.0;
    println!(
        "tick, {apps} apps of 100 resources, one object of each changed: gitops-core sessions {u:.1} ms ({:.0} decisions/s), gitops-core full diff {f:.1} ms ({:.0}/s), Argo CD full comparison {g:.1} ms ({:.0}/s); Argo CD / sessions {:.1}, Argo CD / gitops-core full {:.2}, full / sessions {:.1}",
        rate(u),
        rate(f),
        rate(g),
        g / u,
        g / f,
        f / u
    );
    Ok(())
}

fn main() {
    let code = match parse_args().and_then(|o| match o.bench {
        Some(rounds) => bench(&o, rounds),
        None => match &o.case {
            Some(file) => one_case(&o, file),
            None => run(&o),
        },
    }) {
        Ok(0) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("oracle runner: {e}");
            2
        }
    };
    std::process::exit(code);
}
