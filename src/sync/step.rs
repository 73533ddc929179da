//! One pass of the sync loop as a pure function (§6.3, §6.4) and termination (§6.6).
//!
//! Argo CD's `Sync()` calls the cluster in the middle of a pass. Here a pass is replayed: each
//! call runs the pass from its start with the outcomes gathered so far; where it needs the
//! outcome of an action it does not have yet, it stops and returns the actions. The results as
//! they were at the start of the pass are kept in [`SyncState::step_base`] until the pass ends,
//! so a replay sees what the first try saw. Within one pass the host should pass the same
//! live objects (it may refresh them between passes).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::messages::{self, Wait};
use super::reconcile::{RefKey, ref_key};
use super::tasks::{Built, build, decide_action};
use super::{
    ActionKind, HookDeletePolicy, HostAction, LiveObject, Observations, OperationPhase, Outcome,
    OutcomeStatus, Phase, ResourceResult, ResultCode, Step, SyncRequest, SyncState, Task,
    TaskAction, TaskState, WaveEvent,
};
use crate::health::HealthStatus;
use crate::object::ObjectRef;
use crate::vocabulary::{drop_hook_finalizer, has_hook_finalizer};

/// The pass needs outcomes it does not have yet.
struct Suspend;

type R<T> = Result<T, Suspend>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum RunState {
    Successful,
    Pending,
    Failed,
}

struct Ctx<'a> {
    req: &'a SyncRequest,
    obs: &'a Observations,
    /// The live objects by key (lookups only).
    live_by_key: HashMap<RefKey<'a>, &'a LiveObject>,
    results: Vec<ResourceResult>,
    /// Position of each result by result key.
    result_index: HashMap<String, usize>,
    outcomes: BTreeMap<String, Outcome>,
    requested: Vec<HostAction>,
    phase: OperationPhase,
    message: String,
    wave: Option<WaveEvent>,
}

/// A task with its recorded state.
#[derive(Debug, Clone)]
struct RTask<'a> {
    t: Task<'a>,
    /// [`Task::result_key`].
    key: String,
    status: Option<ResultCode>,
    state: TaskState,
    message: String,
    preset: Option<String>,
}

impl RTask<'_> {
    fn running(&self) -> bool {
        self.state == TaskState::Running
    }
    fn pending(&self) -> bool {
        self.state == TaskState::Pending
    }
    fn completed(&self) -> bool {
        self.state.completed()
    }
    fn delete_before_creation(&self) -> bool {
        self.t.live.is_some()
            && self.pending()
            && self.t.has_policy(HookDeletePolicy::BeforeHookCreation)
    }
}

fn has_deletion_timestamp(obj: &Value) -> bool {
    obj.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|v| !v.is_null())
}

impl<'a> Ctx<'a> {
    fn new(req: &'a SyncRequest, state: &SyncState, obs: &'a Observations) -> Self {
        let mut outcomes = state.outcomes.clone();
        for o in &obs.outcomes {
            outcomes.insert(o.id.clone(), o.clone());
        }
        let results = pass_base(state);
        let live_by_key = obs.live.iter().map(|l| (ref_key(&l.object), l)).collect();
        Ctx {
            req,
            obs,
            live_by_key,
            result_index: results.iter().enumerate().map(|(i, r)| (r.result_key(), i)).collect(),
            results,
            outcomes,
            requested: Vec::new(),
            phase: OperationPhase::Running,
            message: state.message.clone(),
            wave: None,
        }
    }

    fn set(&mut self, phase: OperationPhase, message: impl Into<String>) {
        self.phase = phase;
        self.message = message.into();
    }

    /// Records a result (`setResourceResult`): a new result gets the next order; a message is
    /// only replaced by a non-empty one.
    fn record(
        &mut self,
        t: &mut RTask<'_>,
        status: Option<ResultCode>,
        state: TaskState,
        msg: &str,
    ) {
        t.status = status;
        t.state = state;
        if !msg.is_empty() {
            t.message = msg.to_string();
        }
        if let Some(r) = self.result_index.get(&t.key).and_then(|i| self.results.get_mut(*i)) {
            r.status = status;
            r.hook_phase = state;
            if !msg.is_empty() {
                r.message = msg.to_string();
            }
        } else {
            let order = self.results.len() + 1;
            self.result_index.insert(t.key.clone(), self.results.len());
            self.results.push(ResourceResult {
                key: t.t.key.clone(),
                status,
                hook_phase: state,
                sync_phase: t.t.phase,
                hook_type: t.t.hook_type(),
                message: msg.to_string(),
                order,
            });
        }
    }

    /// Records a new task state, keeping the result code.
    fn keep(&mut self, t: &mut RTask<'_>, state: TaskState, msg: &str) {
        let status = t.status;
        self.record(t, status, state, msg);
    }

    /// The outcomes of a batch, or a suspension asking for the missing ones.
    fn execute(&mut self, actions: Vec<HostAction>) -> R<Vec<Outcome>> {
        if actions.iter().any(|a| !self.outcomes.contains_key(&a.id)) {
            self.requested =
                actions.into_iter().filter(|a| !self.outcomes.contains_key(&a.id)).collect();
            return Err(Suspend);
        }
        Ok(actions.iter().filter_map(|a| self.outcomes.get(&a.id).cloned()).collect())
    }

    fn action(&self, id: String, kind: ActionKind, t: &Task<'_>, group: u32) -> HostAction {
        let mut a = HostAction::new(id, kind, t.key.clone());
        a.propagation_policy = (kind == ActionKind::Delete).then_some(t.propagation_policy);
        a.group = group;
        a
    }

    fn health(&self, live: &Value) -> Option<&'a LiveObject> {
        self.live_by_key.get(&ref_key(live)).copied()
    }

    fn confirmed(&self) -> bool {
        self.obs.deletion_approved_at.is_some_and(|at| at >= self.req.started_at)
    }
}

/// The results as they were when the pass began (what [`Ctx::new`] starts from).
fn pass_base(state: &SyncState) -> Vec<ResourceResult> {
    state.step_base.clone().unwrap_or_else(|| state.results.clone())
}

/// The built tasks with the results recorded for them so far (`results`, indexed by result
/// key in `index`; a repeated key points at its last result).
fn load<'a>(
    built: &mut Built<'a>,
    results: &[ResourceResult],
    index: &HashMap<String, usize>,
) -> Vec<RTask<'a>> {
    let presets = std::mem::take(&mut built.preset_failures);
    std::mem::take(&mut built.tasks)
        .into_iter()
        .map(|t| {
            let key = t.result_key();
            let r = index.get(&key).and_then(|i| results.get(*i));
            RTask {
                preset: presets.iter().find(|(k, _)| *k == key).map(|(_, m)| m.clone()),
                t,
                key,
                status: r.and_then(|r| r.status),
                state: r.map(|r| r.hook_phase).unwrap_or_default(),
                message: r.map(|r| r.message.clone()).unwrap_or_default(),
            }
        })
        .collect()
}

/// Runs one pass of the sync (Argo CD's `Sync()`), or the part of it that the outcomes so far
/// allow.
///
/// `state` is what the previous call returned ([`SyncState::default`] to start);
/// `observations` holds the live objects with health, the time, and the outcomes of the
/// previous call's actions. The answer holds the new state, the actions to carry out (report
/// each outcome by its id in the next call), and whether the operation is over. When there
/// are no actions and the operation is not over, the sync is waiting for the cluster: observe
/// again (Argo CD waits 2 s after a wave, see [`Step::wave`]) and call again.
///
/// # Examples
///
/// ```
/// use gitops_core::sync::{step, Observations, Outcome, SyncRequest, SyncState, OperationPhase};
/// use serde_json::json;
/// let mut request = SyncRequest::default();
/// request.app_namespace = "shop".into();
/// request.targets = vec![json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}})];
/// let reply = |id: &str, msg: &str| {
///     let mut obs = Observations::default();
///     obs.outcomes = vec![Outcome::ok(id, msg)];
///     obs
/// };
/// // First the dry run.
/// let s = step(&request, &SyncState::default(), &Observations::default());
/// assert_eq!(s.actions.len(), 1);
/// assert!(s.actions[0].dry_run);
/// let obs = reply(&s.actions[0].id, "");
/// // Then the wet apply.
/// let s = step(&request, &s.state, &obs);
/// assert!(!s.actions[0].dry_run);
/// let obs = reply(&s.actions[0].id, "service/web created");
/// let s = step(&request, &s.state, &obs);
/// assert!(s.done);
/// assert_eq!(s.state.phase, OperationPhase::Succeeded);
/// assert_eq!(s.state.message, "successfully synced (all tasks run)");
/// assert_eq!(s.state.results[0].message, "service/web created");
/// ```
pub fn step(request: &SyncRequest, state: &SyncState, observations: &Observations) -> Step {
    let mut ctx = Ctx::new(request, state, observations);
    match run_pass(&mut ctx) {
        Ok(()) => Step {
            done: ctx.phase.completed(),
            state: SyncState {
                phase: ctx.phase,
                message: ctx.message,
                results: ctx.results,
                outcomes: BTreeMap::new(),
                step_base: None,
            },
            actions: Vec::new(),
            wave: ctx.wave,
        },
        Err(Suspend) => Step {
            state: SyncState {
                phase: OperationPhase::Running,
                message: ctx.message,
                results: ctx.results,
                outcomes: ctx.outcomes,
                step_base: Some(pass_base(state)),
            },
            actions: ctx.requested,
            done: false,
            wave: None,
        },
    }
}

fn run_pass(ctx: &mut Ctx<'_>) -> R<()> {
    let app = &ctx.req.sync_options;
    if app.fail_on_shared_resource()
        && let Some(msg) = &ctx.req.shared_resource_warning
    {
        ctx.set(OperationPhase::Failed, format!("Shared resource found: {msg}"));
        return Ok(());
    }
    let mut built = build(ctx.req, ctx.obs);
    let mut tasks = load(&mut built, &ctx.results, &ctx.result_index);
    for t in tasks.iter_mut() {
        if let Some(msg) = t.preset.clone()
            && t.pending()
            && t.status.is_none()
        {
            ctx.record(t, Some(ResultCode::SyncFailed), TaskState::Error, &msg);
        }
    }
    // 0. The task list could not be built.
    if !built.valid {
        let mut msgs = Vec::new();
        for t in tasks.iter_mut() {
            if let Some(err) = t.t.invalid.clone() {
                let tt = &mut *t;
                ctx.record(tt, Some(ResultCode::SyncFailed), TaskState::Pending, &err);

                msgs.push(err);
            }
        }
        ctx.set(OperationPhase::Failed, messages::not_valid(&msgs));
        return Ok(());
    }
    let out_of_sync_only = app.apply_out_of_sync_only();
    // 1. The first pass: namespace creation, then the dry run.
    if ctx.results.is_empty() {
        let ns = ctx.req.app_namespace.as_str();
        let ns_task = tasks.iter().position(|t| {
            t.t.live.is_none()
                && t.t.target.is_some()
                && t.t.key.group.is_empty()
                && t.t.key.kind == "Namespace"
                && t.t.key.name == ns
        });
        if let Some(i) = ns_task {
            let st = run_tasks(ctx, &mut tasks, &[i], false, "namespace")?;
            if st == RunState::Failed {
                let msgs: Vec<String> = [&tasks[i]]
                    .iter()
                    .filter(|t| t.status == Some(ResultCode::SyncFailed))
                    .map(|t| t.message.clone())
                    .collect();
                sync_fail(ctx, &mut tasks, &[], &msgs, messages::NAMESPACE_FAILED)?;
                return Ok(());
            }
        }
        let dry: Vec<usize> = (0..tasks.len())
            .filter(|i| Some(*i) != ns_task && !(out_of_sync_only && tasks[*i].t.unmodified))
            .collect();
        if run_tasks(ctx, &mut tasks, &dry, true, "dry-run")? == RunState::Failed {
            ctx.set(OperationPhase::Failed, messages::FAILED_DRY_RUN);
            return Ok(());
        }
    }
    // 2. Update the running tasks from health.
    for t in tasks.iter_mut() {
        let Some(live) = t.t.live.as_ref().filter(|_| t.running()) else { continue };
        let observed = ctx.health(live);
        let mut health = observed.and_then(|l| l.health.clone());
        let health_error = observed.and_then(|l| l.health_error.clone());
        if has_deletion_timestamp(live) && !has_hook_finalizer(live) {
            health = serde_json::from_value(
                serde_json::json!({"status": "Progressing", "message": "Pending deletion"}),
            )
            .ok();
        }
        let tt = &mut *t;
        if tt.t.hook {
            // A hook keeps its result code when its health is taken (Argo CD 3.6; 3.2 cleared
            // it).
            if let Some(e) = health_error {
                let msg = format!("failed to get resource health: {e}");
                ctx.keep(tt, TaskState::Error, &msg);
            } else {
                match health {
                    None => {
                        let msg = format!("{} created", tt.t.key.name);
                        ctx.keep(tt, TaskState::Succeeded, &msg);
                    }
                    Some(h) => {
                        let state = match h.status {
                            HealthStatus::Missing => TaskState::Succeeded,
                            HealthStatus::Unknown | HealthStatus::Degraded => TaskState::Failed,
                            HealthStatus::Progressing | HealthStatus::Suspended => {
                                TaskState::Running
                            }
                            _ => TaskState::Succeeded,
                        };
                        let msg = if h.status == HealthStatus::Missing {
                            format!("{} created", tt.t.key.name)
                        } else {
                            h.message.clone()
                        };
                        ctx.keep(tt, state, &msg);
                    }
                }
            }
        } else if health_error.is_none() {
            match health {
                None => ctx.keep(tt, TaskState::Succeeded, ""),
                Some(h) if h.status == HealthStatus::Healthy => {
                    ctx.keep(tt, TaskState::Succeeded, &h.message)
                }
                Some(h) if h.status == HealthStatus::Degraded => {
                    ctx.keep(tt, TaskState::Failed, &h.message)
                }
                Some(_) => {}
            }
        }
    }
    // 3. Wait for running tasks.
    let multi_step = match (tasks.first(), tasks.last()) {
        (Some(a), Some(b)) => a.t.phase != b.t.phase || a.t.wave != b.t.wave,
        _ => false,
    };
    let running: Vec<usize> = (0..tasks.len())
        .filter(|i| tasks[*i].running() && (multi_step || tasks[*i].t.hook))
        .collect();
    if !running.is_empty() {
        let missing: Vec<usize> =
            running.iter().copied().filter(|i| tasks[*i].t.live.is_none()).collect();
        let actions = task_actions(ctx, &tasks, &missing, ActionKind::Get, "get");
        let outcomes = ctx.execute(actions)?;
        for (i, o) in missing.iter().zip(outcomes) {
            let tt = &mut tasks[*i];
            match o.status {
                OutcomeStatus::Succeeded => {}
                OutcomeStatus::Failed => {
                    let msg = format!("Failed to get live resource {}", o.message);
                    ctx.keep(tt, TaskState::Error, &msg);
                }
                OutcomeStatus::NotFound => {
                    let msg = format!(
                        "Resource {}/{}/{} is missing, it might have been deleted",
                        tt.t.key.group, tt.t.key.kind, tt.t.key.name
                    );
                    ctx.record(tt, Some(ResultCode::SyncFailed), TaskState::Error, &msg);
                }
            }
        }
        let list: Vec<&Task<'_>> = running.iter().map(|i| &tasks[*i].t).collect();
        let msg = messages::waiting(&list, Wait::Health, &[]);
        ctx.set(OperationPhase::Running, msg);
        return Ok(());
    }
    // 4. Wait for pruned objects to go.
    let deleting: Vec<&Task<'_>> = tasks
        .iter()
        .filter(|t| {
            t.status == Some(ResultCode::Pruned)
                && t.t.live.as_deref().is_some_and(has_deletion_timestamp)
        })
        .map(|t| &t.t)
        .collect();
    if !deleting.is_empty() {
        let msg = messages::waiting(&deleting, Wait::Deletion, &[]);
        ctx.set(OperationPhase::Running, msg);
        return Ok(());
    }
    // 5. Remove the finalizer of completed hooks (in an operation dry run too, as Argo CD
    // does: the dry run records its hooks as completed). A completed hook without a live
    // object is looked up first (Argo CD 3.6: the cache may lack it): not found, it has no
    // finalizer to remove; found, its finalizer is removed.
    // The removals and the lookups go in one batch (Argo CD takes the hooks one by one in
    // task order); a found hook's removal follows in the next.
    let lookups = completed_hooks_without_live(&tasks);
    let (mut idx, mut actions) = completed_hook_finalizers(ctx, &tasks, "finalizer");
    let removals = actions.len();
    actions.extend(task_actions(ctx, &tasks, &lookups, ActionKind::Get, "finalizer:get"));
    let mut outcomes = ctx.execute(actions)?;
    let got = outcomes.split_off(removals);
    let mut found = Vec::new();
    for (i, o) in lookups.iter().zip(got) {
        match o.status {
            OutcomeStatus::Succeeded => found.push(*i),
            OutcomeStatus::NotFound => {}
            OutcomeStatus::Failed => {
                let tt = &mut tasks[*i];
                let msg = format!(
                    "Failed to remove hook finalizer: failed to get resource: {}",
                    o.message
                );
                ctx.keep(tt, TaskState::Error, &msg);
            }
        }
    }
    if !found.is_empty() {
        let more = task_actions(ctx, &tasks, &found, ActionKind::RemoveFinalizer, "finalizer");
        outcomes.extend(ctx.execute(more)?);
        idx.extend(found);
    }
    // The keys of the hooks whose finalizer is gone, in one set, so that the tasks are walked
    // once whatever the number of hooks.
    let mut unfinalized = std::collections::HashSet::new();
    for (i, o) in idx.iter().zip(outcomes) {
        if o.status == OutcomeStatus::Failed {
            let tt = &mut tasks[*i];
            let msg = format!("Failed to remove hook finalizer: {}", o.message);
            ctx.keep(tt, TaskState::Error, &msg);
        } else if let Some(live) = &tasks[*i].t.live {
            unfinalized.insert(ObjectRef::from_object_lossy(live).key());
        }
    }
    if !unfinalized.is_empty() {
        // The hook's other phases share the live object: it has no finalizer now.
        for t in tasks.iter_mut() {
            if let Some(l) = &mut t.t.live
                && unfinalized.contains(&ObjectRef::from_object_lossy(l).key())
            {
                drop_hook_finalizer(l.to_mut());
            }
        }
    }
    // 6. Hooks to delete at the end.
    let del_on = |tasks: &[RTask<'_>], p: HookDeletePolicy| -> Vec<usize> {
        (0..tasks.len())
            .filter(|i| {
                let t = &tasks[*i];
                t.t.live.is_some() && !t.running() && t.t.has_policy(p)
            })
            .collect()
    };
    let del_on_success = del_on(&tasks, HookDeletePolicy::HookSucceeded);
    let del_on_fail = del_on(&tasks, HookDeletePolicy::HookFailed);
    // 7. SyncFail tasks apart.
    let sync_fail_idx: Vec<usize> =
        (0..tasks.len()).filter(|i| tasks[*i].t.phase == Phase::SyncFail).collect();
    let rest: Vec<usize> =
        (0..tasks.len()).filter(|i| tasks[*i].t.phase != Phase::SyncFail).collect();
    let failed_msgs: Vec<String> = rest
        .iter()
        .filter(|i| tasks[**i].status == Some(ResultCode::SyncFailed))
        .map(|i| tasks[*i].message.clone())
        .collect();
    // 8. A task failed: SyncFail phase.
    if rest.iter().any(|i| tasks[*i].completed() && tasks[*i].state != TaskState::Succeeded) {
        delete_hooks(ctx, &mut tasks, &del_on_fail, "on-fail")?;
        sync_fail(
            ctx,
            &mut tasks,
            &sync_fail_idx,
            &failed_msgs,
            messages::COMPLETED_UNSUCCESSFULLY,
        )?;
        return Ok(());
    }
    // 9. Nothing left to run.
    let pending: Vec<usize> = rest
        .iter()
        .copied()
        .filter(|i| tasks[*i].pending() && !(out_of_sync_only && tasks[*i].t.unmodified))
        .collect();
    let (Some(&first), Some(&last)) = (pending.first(), pending.last()) else {
        delete_hooks(ctx, &mut tasks, &del_on_success, "on-success")?;
        ctx.set(OperationPhase::Succeeded, messages::SUCCEEDED_NO_MORE_TASKS);
        return Ok(());
    };
    // 10. The next (phase, wave).
    let (phase, wave) = (tasks[first].t.phase, tasks[first].t.wave);
    let last_wave = phase == tasks[last].t.phase && wave == tasks[last].t.wave;
    let (w, rem): (Vec<usize>, Vec<usize>) =
        pending.iter().partition(|i| tasks[**i].t.phase == phase && tasks[**i].t.wave == wave);
    // 11. The wet run.
    ctx.set(OperationPhase::Running, messages::TASKS_RUNNING);
    let st = run_tasks(ctx, &mut tasks, &w, false, "wave")?;
    // 12. The wave hook.
    if st != RunState::Failed {
        ctx.wave = Some(WaveEvent { phase, wave, last: last_wave });
    }
    // 13.
    match st {
        RunState::Failed => {
            let failed_w: Vec<String> = w
                .iter()
                .filter(|i| tasks[**i].status == Some(ResultCode::SyncFailed))
                .map(|i| tasks[*i].message.clone())
                .collect();
            let mut running_w: Vec<usize> =
                w.iter().copied().filter(|i| tasks[*i].running()).collect();
            if !running_w.is_empty() {
                if !sync_fail_idx.is_empty() {
                    let done = sync_fail(
                        ctx,
                        &mut tasks,
                        &sync_fail_idx,
                        &failed_w,
                        messages::FAILED_TO_APPLY,
                    )?;
                    if !done {
                        running_w.extend(&sync_fail_idx);
                    }
                }
                let list: Vec<&Task<'_>> = running_w.iter().map(|i| &tasks[*i].t).collect();
                let msg = messages::waiting(&list, Wait::Health, &[]);
                ctx.set(OperationPhase::Running, msg);
            } else {
                let done = sync_fail(
                    ctx,
                    &mut tasks,
                    &sync_fail_idx,
                    &failed_w,
                    messages::FAILED_TO_APPLY,
                )?;
                if done {
                    delete_hooks(ctx, &mut tasks, &del_on_fail, "on-fail")?;
                }
            }
        }
        RunState::Successful => {
            if rem.is_empty() && !w.iter().any(|i| tasks[*i].t.hook) {
                delete_hooks(ctx, &mut tasks, &del_on_success, "on-success")?;
                ctx.set(OperationPhase::Succeeded, messages::SUCCEEDED_ALL_TASKS_RUN);
            } else {
                let list: Vec<&Task<'_>> = w.iter().map(|i| &tasks[*i].t).collect();
                let msg = messages::waiting(&list, Wait::Health, &[]);
                ctx.set(OperationPhase::Running, msg);
            }
        }
        RunState::Pending => {
            let confirmed = ctx.confirmed();
            let list: Vec<&Task<'_>> = w
                .iter()
                .map(|i| &tasks[*i])
                .filter(|t| t.delete_before_creation() || (t.t.is_prune() && t.pending()))
                .map(|t| &t.t)
                .collect();
            let confirm: Vec<&Task<'_>> = if confirmed {
                Vec::new()
            } else {
                list.iter().copied().filter(|t| t.requires_confirmation).collect()
            };
            let msg = messages::waiting(&list, Wait::Deletion, &confirm);
            ctx.set(OperationPhase::Running, msg);
        }
    }
    Ok(())
}

/// The SyncFail helper (`executeSyncFailPhase`); returns whether the operation completed.
fn sync_fail(
    ctx: &mut Ctx<'_>,
    tasks: &mut [RTask<'_>],
    f: &[usize],
    failed: &[String],
    base: &str,
) -> R<bool> {
    let mut msg = messages::with_reasons(base, failed);
    if f.is_empty() {
        ctx.set(OperationPhase::Failed, msg);
        return Ok(true);
    }
    if f.iter().all(|i| tasks[*i].completed()) {
        let hook_msgs: Vec<String> = f
            .iter()
            .filter(|i| tasks[**i].status == Some(ResultCode::SyncFailed))
            .map(|i| tasks[*i].message.clone())
            .collect();
        if f.iter().any(|i| tasks[*i].status == Some(ResultCode::SyncFailed)) {
            msg.push('\n');
            msg.push_str(&messages::with_reasons("one or more SyncFail hooks failed", &hook_msgs));
        }
        ctx.set(OperationPhase::Failed, msg);
        return Ok(true);
    }
    let to_run: Vec<usize> =
        f.iter().copied().filter(|i| !tasks[*i].completed() && !tasks[*i].running()).collect();
    run_tasks(ctx, tasks, &to_run, false, "sync-fail")?;
    let list: Vec<&Task<'_>> = to_run.iter().map(|i| &tasks[*i].t).collect();
    let msg = messages::waiting(&list, Wait::Health, &[]);
    ctx.set(OperationPhase::Running, msg);
    Ok(false)
}

/// Deletes hooks by policy; an error is recorded on the hook.
fn delete_hooks(ctx: &mut Ctx<'_>, tasks: &mut [RTask<'_>], idx: &[usize], batch: &str) -> R<()> {
    let actions = task_actions(ctx, tasks, idx, ActionKind::Delete, &format!("{batch}:delete"));
    let outcomes = ctx.execute(actions)?;
    for (i, o) in idx.iter().zip(outcomes) {
        if o.status == OutcomeStatus::Failed {
            let tt = &mut tasks[*i];
            let msg = format!("failed to delete resource: {}", o.message);
            ctx.keep(tt, TaskState::Error, &msg);
        }
    }
    Ok(())
}

/// `runTasks` (§6.4) over the tasks at `idx`.
fn run_tasks(
    ctx: &mut Ctx<'_>,
    tasks: &mut [RTask<'_>],
    idx: &[usize],
    dry_run: bool,
    batch: &str,
) -> R<RunState> {
    let op_dry = ctx.req.dry_run;
    let dry = dry_run || op_dry;
    let mut state = RunState::Successful;
    // 1. Finalizers of pending hooks with a live object.
    if !dry {
        let fin: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|i| {
                let t = &tasks[*i];
                t.t.hook && t.pending() && t.t.live.as_deref().is_some_and(has_hook_finalizer)
            })
            .collect();
        let actions: Vec<HostAction> = fin
            .iter()
            .map(|i| {
                let id = format!("{batch}:finalizer:{}", tasks[*i].key);
                ctx.action(id, ActionKind::RemoveFinalizer, &tasks[*i].t, 0)
            })
            .collect();
        let outcomes = ctx.execute(actions)?;
        let mut failed = false;
        for (i, o) in fin.iter().zip(outcomes) {
            if o.status == OutcomeStatus::Failed {
                let tt = &mut tasks[*i];
                let msg = format!("failed to remove hook finalizer: {}", o.message);
                ctx.keep(tt, TaskState::Error, &msg);

                failed = true;
            }
        }
        if failed {
            return Ok(RunState::Failed);
        }
    }
    // 2. Prunes.
    let prunes: Vec<usize> = idx.iter().copied().filter(|i| tasks[*i].t.is_prune()).collect();
    if !ctx.confirmed() && prunes.iter().any(|i| tasks[*i].t.requires_confirmation) {
        return Ok(RunState::Pending);
    }
    let mut deletes = Vec::new();
    let mut planned: Vec<(usize, Option<ResultCode>, TaskState, String)> = Vec::new();
    for &i in &prunes {
        let t = &tasks[i].t;
        match &t.action {
            TaskAction::Skip { reason } => planned.push((
                i,
                Some(ResultCode::PruneSkipped),
                TaskState::Succeeded,
                reason.clone(),
            )),
            _ if dry => planned.push((
                i,
                Some(ResultCode::Pruned),
                TaskState::Succeeded,
                "pruned (dry run)".into(),
            )),
            _ if t.live.as_deref().is_some_and(has_deletion_timestamp) => {
                planned.push((i, Some(ResultCode::Pruned), TaskState::Succeeded, "pruned".into()))
            }
            _ => {
                let id = format!("{batch}:prune:{}", tasks[i].key);
                deletes.push((i, ctx.action(id, ActionKind::Delete, t, 0)));
            }
        }
    }
    let (delete_idx, delete_actions): (Vec<usize>, Vec<HostAction>) = deletes.into_iter().unzip();
    let outcomes = ctx.execute(delete_actions)?;
    for (i, o) in delete_idx.iter().zip(outcomes) {
        match o.status {
            OutcomeStatus::Failed => {
                planned.push((*i, Some(ResultCode::SyncFailed), TaskState::Failed, o.message))
            }
            _ => {
                planned.push((*i, Some(ResultCode::Pruned), TaskState::Succeeded, "pruned".into()))
            }
        }
    }
    planned.sort_by_key(|p| p.0);
    for (i, status, st, msg) in planned {
        let failed = status == Some(ResultCode::SyncFailed);
        if failed {
            state = RunState::Failed;
        }
        if !dry_run || op_dry || failed {
            let tt = &mut tasks[i];
            ctx.record(tt, status, st, &msg);
        }
    }
    if state == RunState::Failed {
        return Ok(state);
    }
    // 3. BeforeHookCreation deletes.
    if !dry {
        let bhc: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|i| !tasks[*i].t.is_prune() && tasks[*i].delete_before_creation())
            .collect();
        let actions =
            task_actions(ctx, tasks, &bhc, ActionKind::Delete, &format!("{batch}:delete"));
        let outcomes = ctx.execute(actions)?;
        for (i, o) in bhc.iter().zip(outcomes) {
            match o.status {
                OutcomeStatus::Succeeded => state = state.max(RunState::Pending),
                OutcomeStatus::NotFound => {
                    tasks[*i].t.live = None;
                    let skip_dry_run = !tasks[*i].t.flags.dry_run_first;
                    decide_action(ctx.req, &mut tasks[*i].t, skip_dry_run);
                }
                OutcomeStatus::Failed => {
                    let tt = &mut tasks[*i];
                    let msg = format!("failed to delete resource: {}", o.message);
                    ctx.keep(tt, TaskState::Error, &msg);

                    state = RunState::Failed;
                }
            }
        }
        if state != RunState::Successful {
            return Ok(state);
        }
    }
    // 4. Applies, in groups of consecutive tasks of one kind.
    let mut applies: Vec<(usize, HostAction)> = Vec::new();
    let mut group = 0u32;
    let mut last_kind: Option<&str> = None;
    for &i in idx {
        let t = &tasks[i].t;
        if t.is_prune() || (dry && !t.flags.dry_run_first) {
            continue;
        }
        if last_kind.is_some_and(|k| k != t.key.kind) {
            group += 1;
        }
        last_kind = Some(&t.key.kind);
        let (kind, verb) = match &t.action {
            TaskAction::Create => (ActionKind::Create, "create"),
            TaskAction::Replace => (ActionKind::Replace, "replace"),
            TaskAction::Update => (ActionKind::Update, "update"),
            _ => (ActionKind::Apply, "apply"),
        };
        let mut a = ctx.action(format!("{batch}:{verb}:{}", tasks[i].key), kind, t, group);
        a.dry_run = dry;
        a.validate = t.flags.validate;
        a.force = t.flags.force && matches!(kind, ActionKind::Apply | ActionKind::Replace);
        a.server_side = t.flags.server_side && !dry && kind == ActionKind::Apply;
        a.field_manager = if a.server_side { t.flags.field_manager.clone() } else { None };
        a.client_side_apply_migration = (a.server_side && t.flags.client_side_apply_migration)
            .then(|| ctx.req.client_side_apply_manager.clone());
        applies.push((i, a));
    }
    // Only an action the host has not answered yet is sent, so only such an action carries
    // its object (a replayed batch needs just the ids).
    for (i, a) in applies.iter_mut() {
        if !ctx.outcomes.contains_key(&a.id) {
            a.object = tasks[*i].t.target.as_ref().map(super::TaskObject::to_value);
        }
    }
    let kinds: Vec<(usize, ActionKind)> = applies.iter().map(|(i, a)| (*i, a.kind)).collect();
    let outcomes = ctx.execute(applies.into_iter().map(|(_, a)| a).collect())?;
    for ((i, kind), o) in kinds.iter().zip(outcomes) {
        let ok = o.status != OutcomeStatus::Failed;
        let msg = match (*kind, ok) {
            (ActionKind::Update, true) => {
                format!("{}/{} updated", tasks[*i].t.key.kind, tasks[*i].t.key.name)
            }
            // Argo CD's sync returns the error text itself (its "error when updating"
            // message is overwritten).
            _ => o.message.clone(),
        };
        if !ok {
            state = RunState::Failed;
        }
        if !dry_run || op_dry || !ok {
            let (code, st) = if ok {
                (ResultCode::Synced, if op_dry { TaskState::Succeeded } else { TaskState::Running })
            } else {
                (ResultCode::SyncFailed, TaskState::Failed)
            };
            let tt = &mut tasks[*i];
            ctx.record(tt, Some(code), st, &msg);
        }
    }
    Ok(state)
}

/// Terminates a running operation (§6.6): every running hook is stopped (its finalizer
/// removed, then deleted when still running, when its health errored, or when it has
/// `HookFailed`), and the operation ends `Failed` "Operation terminated" (or `Error`
/// "Operation termination had errors"). Non-hook tasks are not touched. Driven like
/// [`step`]: carry out the actions and call again until `done`.
pub fn terminate(request: &SyncRequest, state: &SyncState, observations: &Observations) -> Step {
    let mut ctx = Ctx::new(request, state, observations);
    match run_terminate(&mut ctx) {
        Ok(()) => Step {
            done: true,
            state: SyncState {
                phase: ctx.phase,
                message: ctx.message,
                results: ctx.results,
                outcomes: BTreeMap::new(),
                step_base: None,
            },
            actions: Vec::new(),
            wave: None,
        },
        Err(Suspend) => Step {
            state: SyncState {
                phase: OperationPhase::Terminating,
                message: ctx.message,
                results: ctx.results,
                outcomes: ctx.outcomes,
                step_base: Some(pass_base(state)),
            },
            actions: ctx.requested,
            done: false,
            wave: None,
        },
    }
}

/// One action of `kind` per task of `idx`, with the id `<prefix>:<result key>`.
fn task_actions(
    ctx: &Ctx<'_>,
    tasks: &[RTask<'_>],
    idx: &[usize],
    kind: ActionKind,
    prefix: &str,
) -> Vec<HostAction> {
    idx.iter()
        .map(|i| ctx.action(format!("{prefix}:{}", tasks[*i].key), kind, &tasks[*i].t, 0))
        .collect()
}

/// The completed hooks whose live object still carries the hook finalizer, and the actions
/// that remove it (ids `<prefix>:<result key>`).
fn completed_hook_finalizers(
    ctx: &Ctx<'_>,
    tasks: &[RTask<'_>],
    prefix: &str,
) -> (Vec<usize>, Vec<HostAction>) {
    // A hook with several phases has one live object: its finalizer is removed once, by its
    // first task (Argo CD's tasks share the object, so the later ones find nothing to remove).
    let mut seen = std::collections::HashSet::new();
    let idx: Vec<usize> = (0..tasks.len())
        .filter(|i| {
            let t = &tasks[*i];
            t.t.hook
                && t.completed()
                && t.t.live.as_ref().is_some_and(|l| {
                    has_hook_finalizer(l) && seen.insert(ObjectRef::from_object_lossy(l).key())
                })
        })
        .collect();
    let actions = task_actions(ctx, tasks, &idx, ActionKind::RemoveFinalizer, prefix);
    (idx, actions)
}

/// The completed hooks without a live object, each task (a hook of several phases is looked
/// up by each of its tasks, as Argo CD's tasks each look).
fn completed_hooks_without_live(tasks: &[RTask<'_>]) -> Vec<usize> {
    (0..tasks.len())
        .filter(|i| {
            let t = &tasks[*i];
            t.t.hook && t.completed() && t.t.live.is_none()
        })
        .collect()
}

fn run_terminate(ctx: &mut Ctx<'_>) -> R<()> {
    let mut built = build(ctx.req, ctx.obs);
    let mut tasks = load(&mut built, &ctx.results, &ctx.result_index);
    let mut clean = true;
    // Finalizers of completed hooks.
    let (_, actions) = completed_hook_finalizers(ctx, &tasks, "terminate:finalizer");
    ctx.execute(actions)?;
    let running: Vec<usize> =
        (0..tasks.len()).filter(|i| tasks[*i].t.hook && tasks[*i].running()).collect();
    // Stop the running hooks: finalizer first, then the delete.
    let mut fin = Vec::new();
    let mut dels = Vec::new();
    let mut verdicts: Vec<(usize, TaskState, String)> = Vec::new();
    for &i in &running {
        let t = &tasks[i];
        let Some(live) = t.t.live.clone() else {
            verdicts.push((i, TaskState::Succeeded, "Terminated".into()));
            continue;
        };
        let observed = ctx.health(&live);
        let health = observed.and_then(|l| l.health.clone());
        let health_error = observed.and_then(|l| l.health_error.clone());
        if has_hook_finalizer(&live) {
            let id = format!("terminate:unfinalize:{}", t.key);
            fin.push((i, ctx.action(id, ActionKind::RemoveFinalizer, &t.t, 0)));
        }
        let (state, msg) = match (&health_error, &health) {
            (Some(e), _) => (TaskState::Error, format!("Failed to get hook health: {e}")),
            (None, None) => (TaskState::Succeeded, format!("{} created", t.t.key.name)),
            (None, Some(h)) => match h.status {
                HealthStatus::Progressing | HealthStatus::Suspended => {
                    (TaskState::Running, String::new())
                }
                HealthStatus::Unknown | HealthStatus::Degraded => {
                    (TaskState::Failed, h.message.clone())
                }
                _ => (TaskState::Succeeded, h.message.clone()),
            },
        };
        if health_error.is_some()
            || state == TaskState::Running
            || t.t.has_policy(HookDeletePolicy::HookFailed)
        {
            let id = format!("terminate:delete:{}", t.key);
            dels.push((i, ctx.action(id, ActionKind::Delete, &t.t, 0)));
        }
        if state.completed() && state != TaskState::Error {
            verdicts.push((i, state, msg));
        } else if state == TaskState::Error {
            clean = false;
            verdicts.push((i, TaskState::Error, msg));
        } else {
            verdicts.push((i, TaskState::Failed, "Terminated".into()));
        }
    }
    let fin_out = ctx.execute(fin.iter().map(|(_, a)| a.clone()).collect())?;
    let mut fin_failed = Vec::new();
    for ((i, _), o) in fin.iter().zip(fin_out) {
        if o.status == OutcomeStatus::Failed {
            fin_failed.push((*i, format!("Failed to remove hook finalizer: {}", o.message)));
            clean = false;
        }
    }
    let dels: Vec<(usize, HostAction)> =
        dels.into_iter().filter(|(i, _)| !fin_failed.iter().any(|(j, _)| j == i)).collect();
    let del_out = ctx.execute(dels.iter().map(|(_, a)| a.clone()).collect())?;
    let mut del_failed = Vec::new();
    for ((i, _), o) in dels.iter().zip(del_out) {
        if o.status == OutcomeStatus::Failed {
            del_failed.push((*i, format!("Failed to delete: {}", o.message)));
        }
    }
    for (i, state, msg) in verdicts {
        let tt = &mut tasks[i];
        if let Some((_, m)) = fin_failed.iter().find(|(j, _)| *j == i) {
            ctx.keep(tt, TaskState::Error, m);
        } else if let Some((_, m)) = del_failed.iter().find(|(j, _)| *j == i) {
            ctx.keep(tt, TaskState::Failed, m);
        } else {
            ctx.keep(tt, state, &msg);
        }
    }
    if clean {
        ctx.set(OperationPhase::Failed, messages::TERMINATED);
    } else {
        ctx.set(OperationPhase::Error, messages::TERMINATION_ERRORS);
    }
    Ok(())
}
