//! Conformance of sync planning, the step function and the auto-sync decisions: every case
//! under `testdata/sync/` (see its README) is run by [`sync_conformance`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::support::{read, selected, testdata};
use crate::config::Application;
use crate::config::RetryStrategy;
use crate::diff::SyncStatus;
use crate::object::annotation;
use crate::sync::{
    ActionKind, AutoSyncInput, CascadePass, Decision, HostAction, LiveObject, Observations,
    OperationClock, Outcome, ResourceResult, ResourceStatus, Retry, SelfHealSettings, Step,
    SyncRequest, SyncState, SyncWindow, SyncWindows, Task, TaskAction, TaskObject, WaveEvent,
    WindowTarget, already_attempted,
};
use crate::vocabulary::{
    self as hooks, self as options, AppOptions, ResourceOptions, csv, first_option_value,
    format_rfc3339, parse_rfc3339,
};

fn files(dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "respect-ignore") {
                continue;
            }
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            let rel = p.strip_prefix(testdata()).unwrap().to_string_lossy().to_string();
            out.push(rel);
        }
    }
}

fn de<T: for<'a> Deserialize<'a>>(v: &Value, what: &str) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn bools(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `phase wave group/kind/namespace/name action[ flags][ "message"]`.
fn task_line(t: &Task<'_>) -> String {
    let mut s = format!(
        "{} {} {}/{}/{}/{} {}",
        t.phase,
        t.wave,
        t.key.group,
        t.key.kind,
        t.key.namespace,
        t.key.name,
        t.action.name().replace(' ', "-")
    );
    if t.target.is_some() && t.live.is_some() {
        s.push_str(" (live)");
    }
    if t.flags.force {
        s.push_str(" force");
    }
    if !t.flags.validate && !t.is_prune() && !matches!(t.action, TaskAction::Skip { .. }) {
        s.push_str(" no-validate");
    }
    if !t.flags.dry_run_first {
        s.push_str(" no-dry-run");
    }
    if t.requires_confirmation {
        s.push_str(" confirm");
    }
    if t.flags.client_side_apply_migration {
        s.push_str(" csa-migration");
    }
    if let Some(e) = &t.invalid {
        s.push_str(&format!(" invalid={e:?}"));
    }
    if !t.message.is_empty() {
        s.push_str(&format!(" {:?}", t.message));
    }
    s
}

fn action_base(a: &HostAction) -> String {
    let verb = match a.kind {
        ActionKind::Apply => "apply",
        ActionKind::Create => "create",
        ActionKind::Replace => "replace",
        ActionKind::Update => "update",
        ActionKind::Delete => "delete",
        ActionKind::RemoveFinalizer => "remove-finalizer",
        ActionKind::Get => "get",
    };
    format!(
        "{}{verb} {}/{}/{}",
        if a.dry_run { "dry-" } else { "" },
        a.key.group,
        a.key.kind,
        a.key.name
    )
}

fn action_line(a: &HostAction) -> String {
    let mut s = action_base(a);
    if a.server_side {
        s.push_str(&format!(" ssa={}", a.field_manager.as_deref().unwrap_or("")));
    }
    if let Some(m) = &a.client_side_apply_migration {
        s.push_str(&format!(" migrate={m}"));
    }
    if a.force {
        s.push_str(" force");
    }
    if matches!(a.kind, ActionKind::Apply | ActionKind::Create) && !a.validate {
        s.push_str(" no-validate");
    }
    if let Some(p) = a.propagation_policy {
        s.push_str(&format!(" {p:?}"));
    }
    s
}

fn result_line(r: &ResourceResult) -> String {
    let status = r.status.map_or("-".to_string(), |s| format!("{s:?}"));
    let mut s = format!(
        "{} {}/{}/{}/{} {status} {:?}",
        r.sync_phase, r.key.group, r.key.kind, r.key.namespace, r.key.name, r.hook_phase
    );
    if !r.message.is_empty() {
        s.push_str(&format!(" {:?}", r.message));
    }
    s
}

/// The inverse of [`result_line`], for saved results.
fn parse_result(line: &str, index: usize) -> ResourceResult {
    let mut parts = line.splitn(5, ' ');
    let phase = parts.next().unwrap();
    let key: Vec<&str> = parts.next().unwrap().split('/').collect();
    let status = parts.next().unwrap();
    let state = parts.next().unwrap();
    let message: String = parts.next().map_or(String::new(), |m| serde_json::from_str(m).unwrap());
    de(
        &json!({
            "key": {"group": key[0], "version": "v1", "kind": key[1], "namespace": key[2], "name": key[3]},
            "status": if status == "-" { Value::Null } else { json!(status) },
            "hookPhase": state,
            "syncPhase": phase,
            "message": message,
            "order": index + 1,
        }),
        "initial result",
    )
}

fn request_of(case: &Value) -> SyncRequest {
    de(&case["request"], "request")
}

fn observations_of(v: &Value) -> Observations {
    let mut obs: Observations = if v["observations"].is_null() {
        Observations::default()
    } else {
        de(&v["observations"], "observations")
    };
    if let Some(live) = v["live"].as_array() {
        obs.live = live
            .iter()
            .map(|l| {
                if l.get("object").is_some() {
                    de::<LiveObject>(l, "live")
                } else {
                    LiveObject::new(l.clone(), None)
                }
            })
            .collect();
    }
    obs
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().map(bools).collect()).unwrap_or_default()
}

/// `namespaceDump`: the case's `live` is everything in the namespace; the harness plays a
/// host that hands the plan only the app's objects (`ownership::ManagedLive::new`, with the
/// dump's `app` and `argocdCm` data), and lists the others as `group/Kind/namespace/name
/// reason` for `expect.unmanaged`.
fn managed_of(case: &Value, request: &SyncRequest, obs: &mut Observations) -> Vec<String> {
    let dump = &case["namespaceDump"];
    if dump.is_null() {
        return Vec::new();
    }
    let app = Application::from_value(&dump["app"]).expect("namespaceDump.app");
    let settings = crate::config::Settings::from_config_map(&json!({"data": dump["argocdCm"]}))
        .expect("namespaceDump.argocdCm");
    let live: Vec<Value> = obs.live.iter().map(|l| l.object.clone()).collect();
    let sorted = crate::ownership::ManagedLive::new(
        &request.targets,
        &live,
        &app,
        &settings,
        &request.scopes,
    );
    obs.live.retain(|l| sorted.managed.contains(&&l.object));
    sorted
        .unmanaged
        .iter()
        .map(|u| {
            let reason = serde_json::to_value(&u.reason).unwrap_or_default();
            format!("{} {}", u.object.key(), reason)
        })
        .collect()
}

fn check_plan(name: &str, case: &Value) -> Result<(), String> {
    let request = request_of(case);
    let mut obs = observations_of(case);
    let unmanaged = managed_of(case, &request, &mut obs);
    let p = request.plan(&obs);
    let got: Vec<String> = p.tasks().map(task_line).collect();
    let want = strings(&case["expect"]["tasks"]);
    let mut errs = Vec::new();
    if unmanaged != strings(&case["expect"]["unmanaged"]) {
        errs.push(format!(
            "unmanaged:\n  got:  {unmanaged:#?}\n  want: {:#?}",
            strings(&case["expect"]["unmanaged"])
        ));
    }
    if got != want {
        errs.push(format!("tasks:\n  got:  {got:#?}\n  want: {want:#?}"));
    }
    if let Some(valid) = case["expect"]["valid"].as_bool()
        && p.valid != valid
    {
        errs.push(format!("valid: got {}, want {valid}", p.valid));
    }
    if let Some(w) = case["expect"]["waves"].as_array() {
        let got: Vec<String> =
            p.waves.iter().map(|w| format!("{} {} {}", w.phase, w.wave, w.tasks.len())).collect();
        let want: Vec<String> = w.iter().map(bools).collect();
        if got != want {
            errs.push(format!("waves: got {got:?}, want {want:?}"));
        }
    }
    if let Some(w) = case["expect"]["warnings"].as_array() {
        let want: Vec<String> = w.iter().map(bools).collect();
        if p.warnings != want {
            errs.push(format!("warnings: got {:?}, want {want:?}", p.warnings));
        }
    }
    if let Some(objs) = case["expect"]["objects"].as_object() {
        for (line, want) in objs {
            match p.tasks().find(|t| task_line(t).starts_with(line.as_str())) {
                Some(t) if t.target.as_ref().map(TaskObject::to_value).as_ref() == Some(want) => {}
                Some(t) => errs.push(format!("object of {line}: got {:?}", t.target)),
                None => errs.push(format!("no task {line}")),
            }
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(format!("{name}: {}", errs.join("\n"))) }
}

fn check_step(name: &str, case: &Value) -> Result<(), String> {
    let request = request_of(case);
    let mut state = SyncState {
        results: strings(&case["initialResults"])
            .iter()
            .enumerate()
            .map(|(i, l)| parse_result(l, i))
            .collect(),
        ..SyncState::default()
    };
    let mut errs = Vec::new();
    for (n, pass) in case["steps"].as_array().cloned().unwrap_or_default().iter().enumerate() {
        let base = observations_of(pass);
        let rules = pass["outcomes"].as_object().cloned().unwrap_or_default();
        let mut actions = Vec::new();
        let mut outcomes: Vec<Outcome> = Vec::new();
        let mut last: Option<Step> = None;
        for _ in 0..20 {
            let mut obs = base.clone();
            obs.outcomes = std::mem::take(&mut outcomes);
            let s = if pass["terminate"].as_bool() == Some(true) {
                request.terminate(&state, &obs)
            } else {
                request.step(&state, &obs)
            };
            for a in &s.actions {
                actions.push(action_line(a));
                let o = match rules.get(&action_base(a)) {
                    Some(r) if r.get("failed").is_some() => {
                        Outcome::failed(&a.id, &bools(&r["failed"]))
                    }
                    Some(r) if r.get("notFound").is_some() => Outcome::not_found(&a.id),
                    Some(r) => Outcome::ok(&a.id, &bools(&r["ok"])),
                    None => Outcome::ok(&a.id, ""),
                };
                outcomes.push(o);
            }
            state = s.state.clone();
            let stop = s.actions.is_empty();
            last = Some(s);
            if stop {
                break;
            }
        }
        let Some(last) = last else { continue };
        let e = &pass["expect"];
        let at = format!("step {}", n + 1);
        if let Some(phase) = e["phase"].as_str() {
            let got = format!("{:?}", state.phase);
            if got != phase {
                errs.push(format!("{at}: phase: got {got}, want {phase}"));
            }
        }
        if let Some(msg) = e["message"].as_str()
            && state.message != msg
        {
            errs.push(format!("{at}: message: got {:?}, want {msg:?}", state.message));
        }
        if !e["results"].is_null() {
            let got: Vec<String> = state.results.iter().map(result_line).collect();
            let want = strings(&e["results"]);
            if got != want {
                errs.push(format!("{at}: results:\n  got:  {got:#?}\n  want: {want:#?}"));
            }
        }
        if !e["actions"].is_null() {
            let want = strings(&e["actions"]);
            if actions != want {
                errs.push(format!("{at}: actions:\n  got:  {actions:#?}\n  want: {want:#?}"));
            }
        }
        if !e["wave"].is_null() {
            let got =
                last.wave.map(|w| format!("{} {} {}", w.phase, w.wave, w.last)).unwrap_or_default();
            if got != bools(&e["wave"]) {
                errs.push(format!("{at}: wave: got {got:?}, want {}", e["wave"]));
            }
        }
        if let Some(done) = e["done"].as_bool()
            && last.done != done
        {
            errs.push(format!("{at}: done: got {}, want {done}", last.done));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(format!("{name}: {}", errs.join("\n"))) }
}

fn check_decide(name: &str, case: &Value) -> Result<(), String> {
    let app: Application = de(&case["app"], "app");
    let i = &case["input"];
    let status: SyncStatus = de(&i["syncStatus"], "syncStatus");
    let resources: Vec<ResourceStatus> =
        if i["resources"].is_null() { Vec::new() } else { de(&i["resources"], "resources") };
    let now = i["now"].as_str().map_or(0, |s| parse_rfc3339(s).unwrap());
    let mut input = AutoSyncInput::new(status, resources, strings(&i["revisions"]), now);
    if let Some(b) = i["revisionsMayHaveChanges"].as_bool() {
        input.revisions_may_have_changes = b;
    }
    if !i["selfHeal"].is_null() {
        input.self_heal = de(&i["selfHeal"], "selfHeal");
    }
    if !i["guard"].is_null() {
        input.guard = Some(de(&i["guard"], "guard"));
    }
    if let Some(live) = i["live"].as_array() {
        input.live = live.clone();
    }
    let d = input.decide(&app);
    let mut got = json!({
        "sync": d.sync,
        "message": d.message,
        "selfHeal": d.self_heal,
        "condition": d.condition,
        "nextAttemptAt": d.next_attempt_at.map(format_rfc3339),
        "guarded": d.guard.is_some(),
    });
    if let Some(op) = &d.operation {
        got["prune"] = json!(op.prune);
        got["resources"] = json!(
            op.resources
                .iter()
                .map(|r| format!("{}/{}/{}", r.group, r.kind, r.name))
                .collect::<Vec<_>>()
        );
        got["autoHealAttemptsCount"] = json!(op.auto_heal_attempts_count);
        got["retryLimit"] = json!(op.retry.limit);
    }
    if let Some(v) = &d.guard {
        got["allowed"] = json!(v.allowed);
        got["exceeded"] = json!(v.exceeded.iter().map(|l| l.code()).collect::<Vec<_>>());
        got["overridden"] = json!(v.overridden);
        got["prunes"] = json!(v.prunes.iter().map(|p| p.key()).collect::<Vec<_>>());
        got["liveResources"] = json!(v.live_resources);
        // `namespace/name survives|deleted (reason)[ expected]`
        got["claims"] = json!(
            v.claims
                .iter()
                .map(|c| format!(
                    "{}/{} {} ({}){}",
                    c.namespace,
                    c.name,
                    if c.survives { "survives" } else { "deleted" },
                    c.reason,
                    if c.found { "" } else { " expected" }
                ))
                .collect::<Vec<_>>()
        );
        got["guardMessage"] = json!(v.message);
    }
    let mut errs = Vec::new();
    for (k, want) in case["expect"].as_object().cloned().unwrap_or_default() {
        if got[&k] != want {
            errs.push(format!("{k}: got {}, want {want}", got[&k]));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(format!("{name}: {}", errs.join("; "))) }
}

/// `applyObject` of a row: the row's object is the target; `liveAnnotations` (and
/// `managedFields`) make a live object; `kind`, the operation's `force` and `csaManager`.
/// The write as `create`, `update`, `replace`, `server-side-apply` or `apply`, then ` force`
/// and ` migrate` when set.
fn apply_object_text(row: &Value, target: &Value, app: &AppOptions) -> String {
    let live = (!row["liveAnnotations"].is_null()).then(|| {
        let mut live = obj_with(&row["liveAnnotations"]);
        live["metadata"]["managedFields"] = row["managedFields"].clone();
        live
    });
    let live_options = live.as_ref().map(ResourceOptions::of);
    let write = options::apply_object(
        &ResourceOptions::of(target),
        live.as_ref().zip(live_options.as_ref()),
        row["kind"].as_str().unwrap_or("Pod"),
        app,
        row["force"].as_bool() == Some(true),
        row["csaManager"].as_str().unwrap_or(""),
    );
    let flag = |on: bool, name: &str| if on { format!(" {name}") } else { String::new() };
    match write {
        options::Write::Create => "create".into(),
        options::Write::Update => "update".into(),
        options::Write::Replace { force } => format!("replace{}", flag(force, "force")),
        options::Write::ServerSideApply { force, client_side_apply_migration: m } => {
            format!("server-side-apply{}{}", flag(force, "force"), flag(m, "migrate"))
        }
        options::Write::Apply { force } => format!("apply{}", flag(force, "force")),
    }
}

fn obj_with(annotations: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "my-pod", "annotations": annotations}})
}

/// Rows of unit facts: each row names what to compute and the expected value.
fn check_rows(name: &str, case: &Value) -> Result<(), String> {
    let mut errs = Vec::new();
    for (n, row) in case["rows"].as_array().cloned().unwrap_or_default().iter().enumerate() {
        let obj = if row["object"].is_null() {
            obj_with(&row["annotations"])
        } else {
            row["object"].clone()
        };
        let app = AppOptions::new(strings(&row["appOptions"]));
        let now = row["now"].as_str().map_or(0, |s| parse_rfc3339(s).unwrap());
        for (k, want) in row["expect"].as_object().cloned().unwrap_or_default() {
            let got = match k.as_str() {
                "isHook" => json!(hooks::is_hook(&obj)),
                "skip" => json!(hooks::is_skip(&obj)),
                "ignored" => json!(hooks::is_ignored(&obj)),
                "types" => json!(
                    hooks::hook_types(&obj).iter().map(|t| format!("{t:?}")).collect::<Vec<_>>()
                ),
                "phases" => json!(
                    crate::sync::sync_phases(&obj)
                        .iter()
                        .map(|p| p.to_string())
                        .collect::<Vec<_>>()
                ),
                "deletePolicies" => json!(
                    hooks::delete_policies(&obj)
                        .iter()
                        .map(|p| format!("{p:?}"))
                        .collect::<Vec<_>>()
                ),
                "wave" => json!(hooks::wave(&obj)),
                "csv" => json!(csv(annotation(&obj, "a").unwrap_or(""))),
                "optionValue" => json!(first_option_value(
                    &csv(annotation(&obj, "a").unwrap_or("")),
                    row["option"].as_str().unwrap_or("")
                )),
                "kindRank" => json!(Task::kind_rank_of(row["kind"].as_str().unwrap_or(""))),
                "keptAtDeletion" => json!(options::kept_at_deletion(&obj, &app)),
                "requiresConfirmation" => {
                    json!(options::requires_deletion_confirmation(&ResourceOptions::of(&obj), &app))
                }
                "propagationPolicy" => json!(format!("{:?}", app.propagation_policy())),
                "validate" => json!(options::validate(&ResourceOptions::of(&obj), &app)),
                "applyObject" => json!(apply_object_text(row, &obj, &app)),
                "pruneObject" => json!(
                    options::prune_object(
                        &ResourceOptions::of(&obj),
                        &app,
                        row["prune"].as_bool() != Some(false)
                    )
                    .unwrap_or("delete")
                ),
                "filterOutOfSync" => json!(options::filter_out_of_sync(
                    &app,
                    row["hook"].as_bool() == Some(true),
                    || row["modified"].as_bool()
                )),
                "selfHealRemaining" => {
                    let s: SelfHealSettings = de(&row["settings"], "settings");
                    let finished = row["finishedAt"].as_str().map(|f| parse_rfc3339(f).unwrap());
                    json!(s.remaining(row["attempts"].as_u64().unwrap_or(0) as u32, finished, now))
                }
                "retryDelays" => {
                    let strategy: Option<RetryStrategy> = if row["strategy"].is_null() {
                        None
                    } else {
                        Some(de(&row["strategy"], "strategy"))
                    };
                    match Retry::from_strategy(strategy.as_ref(), 5) {
                        Ok(r) => json!(
                            strings(&row["counts"])
                                .iter()
                                .map(|c| r.delay(c.parse().unwrap()).to_string())
                                .collect::<Vec<_>>()
                        ),
                        Err(e) => json!(e.to_string()),
                    }
                }
                "canSync" => {
                    let ws: Vec<SyncWindow> = de(&row["windows"], "windows");
                    let target: WindowTarget = if row["target"].is_null() {
                        WindowTarget::default()
                    } else {
                        de(&row["target"], "target")
                    };
                    let matching = SyncWindows::matching_target(&ws, &target);
                    let op_start = row["opStart"].as_str().map(|f| parse_rfc3339(f).unwrap());
                    match matching.can_sync(row["manual"].as_bool().unwrap_or(false), op_start, now)
                    {
                        Ok(b) => json!(b),
                        Err(e) => json!(e.to_string()),
                    }
                }
                "retryAfterFailure" => {
                    let strategy: Option<RetryStrategy> = if row["strategy"].is_null() {
                        None
                    } else {
                        Some(de(&row["strategy"], "strategy"))
                    };
                    let r = Retry::from_strategy(
                        strategy.as_ref(),
                        row["defaultLimit"].as_i64().unwrap_or(5),
                    )
                    .unwrap();
                    let o = r.after_failure(
                        row["message"].as_str().unwrap_or(""),
                        row["retryCount"].as_i64().unwrap_or(0),
                        now,
                    );
                    json!({"retry": o.retry, "message": o.message, "retryCount": o.retry_count, "nextAttemptAt": format_rfc3339(o.next_attempt_at)})
                }
                "operationBlocked" => {
                    let ws: Vec<SyncWindow> = de(&row["windows"], "windows");
                    let op_start = row["opStart"].as_str().map(|f| parse_rfc3339(f).unwrap());
                    json!(SyncWindows(ws).operation_blocked(
                        row["manual"].as_bool().unwrap_or(false),
                        op_start,
                        now
                    ))
                }
                "cascade" => {
                    let live: Vec<Value> = row["live"].as_array().cloned().unwrap_or_default();
                    let p = CascadePass::new(&live, &app, row["approved"].as_bool() == Some(true));
                    let names = |v: &[crate::object::ObjectRef]| {
                        v.iter().map(|r| r.name.clone()).collect::<Vec<_>>()
                    };
                    json!({"delete": names(&p.delete), "waiting": names(&p.waiting), "kept": names(&p.kept),
                           "awaitingConfirmation": p.awaiting_confirmation, "done": p.done})
                }
                "deletionStep" => {
                    let app: Application = de(&row["app"], "app");
                    let targets: Vec<Value> =
                        row["targets"].as_array().cloned().unwrap_or_default();
                    let live: Vec<LiveObject> = if row["liveObjects"].is_null() {
                        Vec::new()
                    } else {
                        de(&row["liveObjects"], "liveObjects")
                    };
                    let mut req = crate::sync::DeletionRequest::for_app(&app, targets).unwrap();
                    req.after_deletions = row["afterDeletions"].as_bool() == Some(true);
                    let s = req.step(&live);
                    let actions: Vec<String> = s
                        .actions
                        .iter()
                        .map(|a| match a.propagation_policy {
                            Some(p) => format!("{} {p:?}", a.id),
                            None => a.id.clone(),
                        })
                        .collect();
                    json!({"finalizers": s.finalizers, "actions": actions, "condition": s.condition,
                           "message": s.message, "done": s.done})
                }
                "fromOperation" => {
                    let app: Application = de(&row["app"], "app");
                    let r = SyncRequest::from_operation(&app, Vec::new(), 0);
                    json!({"revision": r.revision, "prune": r.prune, "dryRun": r.dry_run,
                           "force": r.force, "skipHooks": r.skip_hooks,
                           "syncOptions": r.sync_options.0, "namespace": r.app_namespace,
                           "resources": r.resources.iter().map(|x| format!("{}/{}/{}/{}", x.group, x.kind, x.namespace, x.name)).collect::<Vec<_>>()})
                }
                "attempted" => {
                    let app: Application = de(&row["app"], "app");
                    let (a, revs, phase) = already_attempted(
                        &app,
                        &strings(&row["revisions"]),
                        row["revisionsMayHaveChanges"].as_bool().unwrap_or(true),
                    );
                    let _ = (revs, phase);
                    json!(a)
                }
                "pickUp" | "afterAttempt" => {
                    let op = operation_clock(&row["op"]);
                    let picked = op.pick_up(now);
                    if k == "pickUp" {
                        let mut v = serde_json::to_value(&picked.action).unwrap();
                        v["nextPickUpAt"] = json!(format_rfc3339(picked.next_pick_up_at));
                        if let Some(at) = v["at"].as_i64() {
                            v["at"] = json!(format_rfc3339(at));
                        }
                        v
                    } else {
                        let o =
                            op.after_attempt(&picked, row["message"].as_str().unwrap_or(""), now);
                        json!({"retry": o.retry, "message": o.message, "retryCount": o.retry_count})
                    }
                }
                "nextPassAt" => {
                    let event: WaveEvent = de(&row["wave"], "wave");
                    let delay = WaveEvent::delay_seconds(row["ARGOCD_SYNC_WAVE_DELAY"].as_str());
                    json!(format_rfc3339(event.next_pass_at(now, delay)))
                }
                "skipsReconcile" => {
                    json!(Decision::skips_reconcile(&de::<Application>(&row["app"], "app")))
                }
                "csaManager" => {
                    let app: Application = de(&row["app"], "app");
                    json!(SyncRequest::for_app(&app, Vec::new(), "", 0).client_side_apply_manager)
                }
                other => json!(format!("unknown check {other}")),
            };
            if got != want {
                errs.push(format!("row {n} {k}: got {got}, want {want}"));
            }
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(format!("{name}: {}", errs.join("\n"))) }
}

/// An operation in progress as a row gives it: `phase`, `startedAt` and `finishedAt` (RFC
/// 3339), `retryCount`, `strategy` (`syncPolicy.retry`, none: limit 5), `refresh`,
/// `syncTimeoutSeconds`.
fn operation_clock(v: &Value) -> OperationClock {
    let strategy: Option<RetryStrategy> =
        if v["strategy"].is_null() { None } else { Some(de(&v["strategy"], "strategy")) };
    let retry = Retry::from_strategy(strategy.as_ref(), 5).unwrap();
    let phase = de(&v["phase"], "phase");
    let started = parse_rfc3339(v["startedAt"].as_str().unwrap_or("1970-01-01T00:00:00Z")).unwrap();
    let mut op = OperationClock::new(phase, started, retry);
    op.finished_at = v["finishedAt"].as_str().map(|f| parse_rfc3339(f).unwrap());
    op.retry_count = v["retryCount"].as_i64().unwrap_or(0);
    op.refresh = v["refresh"].as_bool().unwrap_or(false);
    op.sync_timeout_seconds = v["syncTimeoutSeconds"].as_i64().unwrap_or(0);
    op
}

/// Waiting messages over tasks picked by name from a plan.
fn check_waiting(name: &str, case: &Value) -> Result<(), String> {
    let (request, observations) = (request_of(case), Observations::default());
    let p = request.plan(&observations);
    let mut errs = Vec::new();
    for row in case["rows"].as_array().cloned().unwrap_or_default() {
        let tasks: Vec<&Task<'_>> = strings(&row["tasks"])
            .iter()
            .filter_map(|n| p.tasks().find(|t| &t.key.name == n))
            .collect();
        let got = crate::sync::waiting_message(&tasks, row["deletion"].as_bool() == Some(true));
        if got != bools(&row["expect"]) {
            errs.push(format!("{:?}: got {got:?}, want {}", row["tasks"], row["expect"]));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(format!("{name}: {}", errs.join("\n"))) }
}

/// `sync::ClientSideApply::new`: the request kubectl apply makes (testdata/sync/client-side-apply.yaml).
fn check_client_side_apply(name: &str, case: &Value) -> Result<(), String> {
    use crate::sync::ClientSideApply;
    let live = case.get("live").filter(|l| !l.is_null());
    let got = match ClientSideApply::new(&case["target"], live) {
        Ok(ClientSideApply::Create(o)) => serde_json::json!({"create": o}),
        Ok(ClientSideApply::StrategicMergePatch(p)) => serde_json::json!({"strategic": p}),
        Ok(ClientSideApply::MergePatch(p)) => serde_json::json!({"merge": p}),
        Ok(ClientSideApply::Unchanged) => serde_json::json!({"unchanged": true}),
        Err(e) => serde_json::json!({"error": e.to_string()}),
    };
    if got == case["expect"] {
        Ok(())
    } else {
        Err(format!("{name}: got {got}, want {}", case["expect"]))
    }
}

#[test]
fn sync_conformance() {
    let mut all = Vec::new();
    files(&testdata().join("sync"), &mut all);
    assert!(!all.is_empty(), "no cases under testdata/sync");
    let mut failures = Vec::new();
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for file in all {
        let docs =
            crate::object::parse_documents(&read(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        for doc in docs {
            for case in doc["cases"].as_array().cloned().unwrap_or_default() {
                let name = format!("{file}: {}", case["name"].as_str().unwrap_or("?"));
                if !selected(&name) {
                    continue;
                }
                let kind = case["kind"].as_str().unwrap_or("");
                *count.entry(kind.to_string()).or_default() += 1;
                let r = match kind {
                    "plan" => check_plan(&name, &case),
                    "step" => check_step(&name, &case),
                    "decide" => check_decide(&name, &case),
                    "rows" => check_rows(&name, &case),
                    "waiting" => check_waiting(&name, &case),
                    "client-side-apply" => check_client_side_apply(&name, &case),
                    other => Err(format!("{name}: unknown kind {other}")),
                };
                if let Err(e) = r {
                    failures.push(e);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases ({count:?}):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
