//! Differential runner: generated cases through `gitops-core serve` and through the Go oracle
//! (Argo CD's own packages, `oracle/main.go`), compared field by field.
//!
//! `cargo run --example oracle -- --gitops-core PATH --oracle PATH [--cases N] [--seed S]
//! [--save DIR]`; `oracle/run` builds both programs and calls this. Every case is generated
//! from the seed alone, so a run is reproducible. A divergence whose signature is listed in
//! `testdata/oracle/explained.txt` (each with its entry in `testdata/SKIPPED.md`) is counted
//! as explained; any other is unexplained and makes the exit status 1.
#![allow(missing_docs)]
#![allow(clippy::disallowed_methods)] // a host program: it reads testdata and runs processes

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

#[path = "gen.rs"]
mod generate;
use generate::{Area, Rng};

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

    fn call(&mut self, method: &str, params: &Value) -> Result<Value, String> {
        self.next_id += 1;
        let line = json!({"id": self.next_id, "method": method, "params": params}).to_string();
        writeln!(self.stdin, "{line}").map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())?;
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).map_err(|e| e.to_string())?;
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
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        cases: 1000,
        seed: 1,
        gitops_core: PathBuf::new(),
        oracle: PathBuf::new(),
        save: None,
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
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(o)
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

fn key(r: &Value) -> String {
    format!(
        "{}/{}/{}/{}",
        r["group"].as_str().unwrap_or(""),
        r["kind"].as_str().unwrap_or(""),
        r["namespace"].as_str().unwrap_or(""),
        r["name"].as_str().unwrap_or("")
    )
}

/// A divergence: the RFC 6901 pointer into gitops-core's answer, its value and Argo CD's.
type Found = (String, Value, Value);

/// What both sides answer, reduced to the compared fields: signature → divergence.
fn compare(area: Area, ours: &Value, argo: &Value) -> BTreeMap<String, Found> {
    let mut out = BTreeMap::new();
    if ours.get("error").is_some() || argo.get("error").is_some() {
        out.insert(format!("{}:error", area.name()), (String::new(), ours.clone(), argo.clone()));
        return out;
    }
    let top = match area {
        Area::Health => "status",
        Area::Diff => "syncStatus",
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
        let fields: &[&str] = match area {
            Area::Health => &["status", "message"],
            Area::Diff => &["modified", "status"],
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

/// The compared fields of an answer both sides agree on: every one becomes a recorded check.
fn checks(area: Area, ours: &Value) -> Vec<Value> {
    let (top, fields): (&str, &[&str]) = match area {
        Area::Health => ("status", &["status", "message"]),
        Area::Diff => ("syncStatus", &["modified", "status"]),
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
            Area::Diff => format!(
                "{}{}",
                r["kind"].as_str().unwrap_or(""),
                if r["modified"] == true { "Modified" } else { "Same" }
            ),
        })
        .take(1)
        .collect();
    per.join("-")
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

fn run(o: &Options) -> Result<u64, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let known = explained(root);
    let canary = std::fs::read_to_string(
        root.join("testdata/health/customizations/example.com/Canary/health.lua"),
    )
    .map_err(|e| format!("Canary script: {e}"))?;
    let configure = json!({"customizations": {"example.com/Canary": canary}});
    let mut ours = Peer::spawn(&o.gitops_core, &["serve"])?;
    let mut argo = Peer::spawn(&o.oracle, &[])?;
    ours.call("configure", &configure)?;
    argo.call("configure", &configure)?;

    let mut rng = Rng::new(o.seed);
    let mut per_area: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    let mut examples: BTreeMap<String, (&str, Value, Found)> = BTreeMap::new();
    let mut unexplained = 0;
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut recorded = std::collections::BTreeSet::new();
    for _ in 0..o.cases {
        let (area, params) = generate::case(&mut rng);
        let (a, b) = (ours.call(area.name(), &params)?, argo.call(area.name(), &params)?);
        for r in a["resources"].as_array().into_iter().flatten() {
            let outcome = match area {
                Area::Health => format!("{}", r["status"]),
                Area::Diff => format!("modified={}", r["modified"]),
            };
            *outcomes.entry(format!("{} {outcome}", area.name())).or_default() += 1;
        }
        let entry = per_area.entry(area.name()).or_default();
        entry.0 += 1;
        let found = compare(area, &a, &b);
        if found.is_empty() {
            // One agreed answer per class of outcome is kept as a recorded oracle answer.
            let class = format!("{}-agree-{}", area.name(), outcome_class(area, &a));
            if let (Some(dir), true) = (&o.save, recorded.insert(class.clone())) {
                save(
                    dir,
                    &class,
                    &json!({"method": area.name(), "params": params, "checks": checks(area, &a)}),
                )?;
            }
            continue;
        }
        let mut case_unexplained = false;
        for (sig, divergence) in found {
            let is_known = known.iter().any(|k| sig.starts_with(k.as_str()));
            if !is_known {
                case_unexplained = true;
            }
            examples.entry(sig).or_insert_with(|| (area.name(), params.clone(), divergence));
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
    for (sig, (method, params, (pointer, x, y))) in &examples {
        let is_known = known.iter().any(|k| sig.starts_with(k.as_str()));
        println!(
            "  {} {sig}: gitops-core {x} / Argo CD {y}",
            if is_known { "explained" } else { "UNEXPLAINED" }
        );
        if let Some(dir) = &o.save {
            let body = json!({"signature": sig, "method": method, "params": params,
                "checks": [{"pointer": pointer, "gitopsCore": x, "argo": y}]});
            save(dir, sig, &body)?;
        }
    }
    println!("{total} cases, {unexplained} unexplained divergences");
    Ok(unexplained)
}

fn main() {
    let code = match parse_args().and_then(|o| run(&o)) {
        Ok(0) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("oracle runner: {e}");
            2
        }
    };
    std::process::exit(code);
}
