//! The built-in health rules against the same kinds' scripts on the Lua engine, side by side
//! in one run, per object (issue 29: a rule must be at least 20 times faster).
//!
//! `cargo bench --bench builtin_rules`. Two kinds, cert-manager's Certificate (two loops over
//! the conditions) and Flux's Kustomization (a count over the conditions, a message built from
//! the object), are each benchmarked twice on each of Argo CD
//! 3.6.2's fixtures for it (`testdata/health/argo-cd-3.6/<group>/<Kind>/testdata/`):
//! `<kind>_builtin` runs `health::parts::builtin_rule` (the lookup in the catalog included),
//! `<kind>_lua` runs a script with the same behaviour on a warm `LuaEngine` (the compiled
//! script cached, the object converted each call, as Argo CD runs its scripts). The scripts
//! are written for this benchmark (the project holds no Argo CD script); before measuring, the
//! benchmark checks that script and rule give the same answer on every fixture.
//!
//! `every_kind_builtin` and `every_kind_lua` measure every catalog kind with fixtures (the 293
//! folders of `testdata/health/argo-cd-3.6/`): per call, all the fixtures of the kind once,
//! through the built-in rule and through Argo CD 3.6.2's own `health.lua` of the kind on the
//! warm engine. Argo CD's scripts are read at run time from a checkout of its
//! `resource_customizations/` (`ARGO_CD_RESOURCE_CUSTOMIZATIONS`, by default
//! `../shared/argo-cd-3.6/resource_customizations`, else the Go module of Argo CD 3.6.2); with
//! none, these two benchmarks have no arguments. A kind whose script and rule answer
//! differently on a fixture is reported and left out. `python3 benches/ratios.py` reads the
//! divan output and gives each kind's ratio of medians, their minimum and median.
#![allow(clippy::disallowed_methods)] // the benchmark reads its inputs from testdata/

use std::path::PathBuf;

use gitops_core::health;
use gitops_core::script::LuaEngine;
use serde_json::Value;

fn main() {
    divan::main();
}

/// A script with the behaviour of the built-in `cert-manager.io/Certificate` rule: an
/// `Issuing=True` condition first, then the first decided `Ready` condition, else waiting.
const CERTIFICATE_LUA: &str = r#"
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Issuing" and c.status == "True" then
      return {status = "Progressing", message = c.message}
    end
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      if c.status == "False" then
        return {status = "Degraded", message = c.message}
      end
      if c.status == "True" then
        return {status = "Healthy", message = c.message}
      end
    end
  end
end
return {status = "Progressing", message = "Waiting for certificate"}
"#;

/// A script with the behaviour of the built-in `kustomize.toolkit.fluxcd.io/Kustomization`
/// rule: suspended, else Flux's count of its `Ready` and `Reconciling` conditions.
const KUSTOMIZATION_LUA: &str = r#"
if obj.spec ~= nil and obj.spec.suspend == true then
  return {status = "Suspended", message = obj.kind .. " is suspended"}
end
if obj.status ~= nil and obj.status.conditions ~= nil then
  local pending, ready, message = 0, 0, ""
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      if c.status == "True" then
        ready = ready + 1
      elseif c.status == "Unknown" then
        pending = pending + 1
      end
      message = c.reason
    elseif c.type == "Reconciling" and c.status == "True" then
      pending = pending + 1
    end
  end
  local status = "Degraded"
  if pending == 2 then
    status = "Progressing"
  elseif ready == 1 then
    status = "Healthy"
  end
  return {status = status, message = message}
end
return {status = "Progressing", message = "Status unknown"}
"#;

/// The fixtures of one kind (every YAML file below its `testdata/`, the first object of each),
/// by path below it; a file that holds no object is left out with a note.
fn fixtures(kind_dir: &str) -> Vec<(String, Value)> {
    gitops_core_testkit::testdata::health_fixtures(kind_dir)
}

/// The fixtures of one kind, checked: the script is a fair stand-in only if it answers as the
/// rule does on every one.
fn checked(kind_dir: &str, script: &str) -> Vec<(String, Value)> {
    let objects = fixtures(kind_dir);
    let engine = LuaEngine::default();
    for (name, obj) in &objects {
        let rule = health::parts::builtin_rule(obj).expect("a rule").expect("no error");
        let lua = health::parts::ScriptOutput::from(
            engine.eval_health(kind_dir, script, true, obj, 0).expect("runs"),
        );
        assert_eq!(rule, lua, "{kind_dir} {name}: the script and the rule differ");
    }
    objects
}

fn fixture(kind_dir: &str, script: &str, name: &str) -> Value {
    checked(kind_dir, script).into_iter().find(|(n, _)| n == name).expect("a fixture").1
}

fn names(kind_dir: &str) -> Vec<String> {
    fixtures(kind_dir).into_iter().map(|(n, _)| n).collect()
}

/// The built-in rule on one object, per call.
fn builtin(bencher: divan::Bencher, kind_dir: &str, script: &str, file: &str) {
    let obj = fixture(kind_dir, script, file);
    bencher.bench_local(|| health::parts::builtin_rule(divan::black_box(&obj)));
}

/// The script on one object on a warm Lua engine, per call.
fn lua(bencher: divan::Bencher, kind_dir: &str, script: &str, file: &str) {
    let obj = fixture(kind_dir, script, file);
    let engine = LuaEngine::default();
    engine.eval_health(kind_dir, script, true, &obj, 0).expect("runs");
    bencher.bench_local(|| engine.eval_health(kind_dir, divan::black_box(script), true, &obj, 0));
}

const CERTIFICATE: &str = "cert-manager.io/Certificate";
const KUSTOMIZATION: &str = "kustomize.toolkit.fluxcd.io/Kustomization";

/// `cert-manager.io/Certificate`: the built-in rule.
#[divan::bench(args = names(CERTIFICATE), sample_count = 100, sample_size = 100)]
fn certificate_builtin(bencher: divan::Bencher, file: &str) {
    builtin(bencher, CERTIFICATE, CERTIFICATE_LUA, file);
}

/// `cert-manager.io/Certificate`: the same through its script.
#[divan::bench(args = names(CERTIFICATE), sample_count = 100, sample_size = 100)]
fn certificate_lua(bencher: divan::Bencher, file: &str) {
    lua(bencher, CERTIFICATE, CERTIFICATE_LUA, file);
}

/// `kustomize.toolkit.fluxcd.io/Kustomization`: the built-in rule.
#[divan::bench(args = names(KUSTOMIZATION), sample_count = 100, sample_size = 100)]
fn kustomization_builtin(bencher: divan::Bencher, file: &str) {
    builtin(bencher, KUSTOMIZATION, KUSTOMIZATION_LUA, file);
}

/// `kustomize.toolkit.fluxcd.io/Kustomization`: the same through its script.
#[divan::bench(args = names(KUSTOMIZATION), sample_count = 100, sample_size = 100)]
fn kustomization_lua(bencher: divan::Bencher, file: &str) {
    lua(bencher, KUSTOMIZATION, KUSTOMIZATION_LUA, file);
}

/// Every kind folder with fixtures (`group/Kind`, as Argo CD's folders are named).
fn kind_folders() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/health/argo-cd-3.6");
    let mut out = Vec::new();
    for group in std::fs::read_dir(&root).expect("argo-cd-3.6").filter_map(Result::ok) {
        if !group.path().is_dir() {
            continue;
        }
        for kind in std::fs::read_dir(group.path()).expect("group").filter_map(Result::ok) {
            if kind.path().join("testdata").is_dir() {
                out.push(format!(
                    "{}/{}",
                    group.file_name().to_string_lossy(),
                    kind.file_name().to_string_lossy()
                ));
            }
        }
    }
    out.sort();
    out
}

/// The kinds to measure: those with fixtures whose Argo CD script can be read, and on whose
/// every fixture the script and the rule agree (a kind that does not is printed and left out).
fn every_kind() -> Vec<String> {
    let Some(scripts) = gitops_core_testkit::testdata::argo_cd_scripts() else {
        eprintln!("every_kind: no checkout of Argo CD's resource_customizations found");
        return Vec::new();
    };
    let engine = LuaEngine::default();
    kind_folders()
        .into_iter()
        .filter(|kind| {
            let Ok(script) = std::fs::read_to_string(scripts.join(kind).join("health.lua")) else {
                eprintln!("every_kind: {kind}: no health.lua in {}", scripts.display());
                return false;
            };
            fixtures(kind).iter().all(|(name, obj)| {
                let rule = health::parts::builtin_rule(obj).map(|r| r.map_err(|e| e.to_string()));
                let lua = engine
                    .eval_health(kind, &script, true, obj, 0)
                    .map(health::parts::ScriptOutput::from)
                    .map_err(|e| e.to_string());
                // Both failing is the same answer (the texts differ: Argo CD's names the
                // script's line, the rule the field).
                let same = match (&rule, &lua) {
                    (Some(Ok(r)), Ok(l)) => r == l,
                    (Some(Err(_)), Err(_)) => true,
                    _ => false,
                };
                if !same {
                    eprintln!("every_kind: {kind} {name}: rule {rule:?}, script {lua:?}");
                }
                same
            })
        })
        .collect()
}

/// The script and fixtures of one kind.
fn kind_inputs(kind: &str) -> (String, Vec<Value>) {
    let scripts = gitops_core_testkit::testdata::argo_cd_scripts().expect("a checkout");
    let script = std::fs::read_to_string(scripts.join(kind).join("health.lua")).expect("script");
    (script, fixtures(kind).into_iter().map(|(_, o)| o).collect())
}

/// Every kind: the built-in rule on each of the kind's fixtures, per call.
#[divan::bench(args = every_kind(), sample_count = 20, sample_size = 20)]
fn every_kind_builtin(bencher: divan::Bencher, kind: &str) {
    let (_, objects) = kind_inputs(kind);
    bencher.bench_local(|| {
        for obj in &objects {
            divan::black_box(health::parts::builtin_rule(divan::black_box(obj)));
        }
    });
}

/// Every kind: Argo CD's script on each of the kind's fixtures on a warm engine, per call.
#[divan::bench(args = every_kind(), sample_count = 20, sample_size = 20)]
fn every_kind_lua(bencher: divan::Bencher, kind: &str) {
    let (script, objects) = kind_inputs(kind);
    let engine = LuaEngine::default();
    for obj in &objects {
        let _ = engine.eval_health(kind, &script, true, obj, 0);
    }
    bencher.bench_local(|| {
        for obj in &objects {
            let _ =
                divan::black_box(engine.eval_health(kind, divan::black_box(&script), true, obj, 0));
        }
    });
}
