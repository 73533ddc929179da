//! One pass of the sync loop as a pure function (`syncContext.Sync` and `runTasks`,
//! gitops-engine v3.6.2 pkg/sync/sync_context.go), as a sequence of phases.
//!
//! A pass runs its phases in order: the shared-resource check, the task list, the namespace
//! and the dry run (first pass only), the health of running tasks, the waits for health and
//! deletion, the finalizers of completed hooks, SyncFail after a failed task, then the next
//! wave. Each phase returns a [`PhaseFlow`]: the next phase runs, or the pass ends with the
//! actions it awaits or with its verdict. See [`super::pass`] for how a pass is replayed.

use std::ops::ControlFlow;

use super::batch::{Batch, run_tasks};
use super::messages::{self, Wait};
use super::pass::{
    Pass, PhaseFlow, RunState, TrackedTask, Verdict, completed_hook_finalizers, failure_messages,
    has_deletion_timestamp, tasks_at,
};
use super::tasks::build;
use super::{
    ActionKind, HealthResult, HookDeletePolicy, Observations, OperationPhase, Outcome,
    OutcomeStatus, Phase, ResultCode, Step, SyncRequest, SyncState, Task, TaskState, WaveEvent,
};
use crate::health::HealthStatus;
use crate::object::ObjectRef;
use crate::vocabulary::{drop_hook_finalizer, has_hook_finalizer};

impl SyncRequest {
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
    /// use gitops_core::sync::{Observations, Outcome, SyncRequest, SyncState, OperationPhase};
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
    /// let s = request.step(&SyncState::default(), &Observations::default());
    /// assert_eq!(s.actions.len(), 1);
    /// assert!(s.actions[0].dry_run);
    /// let obs = reply(&s.actions[0].id, "");
    /// // Then the wet apply.
    /// let s = request.step(&s.state, &obs);
    /// assert!(!s.actions[0].dry_run);
    /// let obs = reply(&s.actions[0].id, "service/web created");
    /// let s = request.step(&s.state, &obs);
    /// assert!(s.done);
    /// assert_eq!(s.state.phase, OperationPhase::Succeeded);
    /// assert_eq!(s.state.message, "successfully synced (all tasks run)");
    /// assert_eq!(s.state.results[0].message, "service/web created");
    /// ```
    pub fn step(&self, state: &SyncState, observations: &Observations) -> Step {
        let request = self;
        let mut pass = Pass::new(request, state, observations);
        let flow = run_pass(&mut pass);
        pass.into_step(flow, state, OperationPhase::Running)
    }
}

/// The phases of one pass (Argo CD's `Sync()`), in order.
fn run_pass(pass: &mut Pass<'_>) -> PhaseFlow<Verdict> {
    fail_on_shared_resource(pass.request)?;
    let mut built = build(pass.request, pass.observations);
    let mut tasks = pass.track(&mut built);
    record_preset_failures(pass, &mut tasks);
    if !built.valid {
        return invalid_tasks(pass, &mut tasks).settle();
    }
    if pass.results.is_empty() {
        let namespace = create_namespace(pass, &mut tasks)?;
        dry_run(pass, &mut tasks, namespace)?;
    }
    update_from_health(pass, &mut tasks);
    wait_for_running(pass, &mut tasks)?;
    wait_for_deletion(&tasks)?;
    remove_completed_hook_finalizers(pass, &mut tasks)?;
    let layout = Layout::of(&tasks);
    fail_after_failed_task(pass, &mut tasks, &layout)?;
    run_next_wave(pass, &mut tasks, &layout)
}

/// `FailOnSharedResource=true` with a shared resource ends the sync.
fn fail_on_shared_resource(request: &SyncRequest) -> PhaseFlow {
    match &request.shared_resource_warning {
        Some(warning) if request.sync_options.fail_on_shared_resource() => {
            Verdict::failed(format!("Shared resource found: {warning}")).settle()
        }
        _ => ControlFlow::Continue(()),
    }
}

/// The failures set when the task list was built, recorded once.
fn record_preset_failures(pass: &mut Pass<'_>, tasks: &mut [TrackedTask<'_>]) {
    for tracked in tasks.iter_mut() {
        if let Some(message) = tracked.preset_failure.clone()
            && tracked.pending()
            && tracked.status.is_none()
        {
            pass.record(tracked, Some(ResultCode::SyncFailed), TaskState::Error, &message);
        }
    }
}

/// Step 0: the task list could not be built: each invalid task's error is recorded.
fn invalid_tasks(pass: &mut Pass<'_>, tasks: &mut [TrackedTask<'_>]) -> Verdict {
    let mut errors = Vec::new();
    for tracked in tasks.iter_mut() {
        if let Some(error) = tracked.task.invalid.clone() {
            pass.record(tracked, Some(ResultCode::SyncFailed), TaskState::Pending, &error);
            errors.push(error);
        }
    }
    Verdict::failed(messages::not_valid(&errors))
}

/// Step 1: the first pass creates the app's namespace (`CreateNamespace=true`) before the dry run;
/// the position of its task, if any.
fn create_namespace(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
) -> PhaseFlow<Option<usize>> {
    let namespace = pass.request.app_namespace.as_str();
    let found = tasks.iter().position(|t| {
        let key = &t.task.key;
        t.task.live.is_none()
            && t.task.target.is_some()
            && key.group.is_empty()
            && key.kind == "Namespace"
            && key.name == namespace
    });
    let Some(member) = found else { return ControlFlow::Continue(None) };
    let batch = Batch { name: "namespace", members: &[member], dry_run: false };
    if run_tasks(pass, tasks, batch)? == RunState::Failed {
        let failures = failure_messages(tasks, &[member]);
        return Verdict::failed(messages::with_reasons(messages::NAMESPACE_FAILED, &failures))
            .settle();
    }
    ControlFlow::Continue(Some(member))
}

/// Step 1: the first pass's dry run of every task but the namespace's.
fn dry_run(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    namespace: Option<usize>,
) -> PhaseFlow {
    let out_of_sync_only = pass.request.sync_options.apply_out_of_sync_only();
    let members: Vec<usize> = (0..tasks.len())
        .filter(|i| Some(*i) != namespace && !(out_of_sync_only && tasks[*i].task.unmodified))
        .collect();
    let batch = Batch { name: "dry-run", members: &members, dry_run: true };
    if run_tasks(pass, tasks, batch)? == RunState::Failed {
        return Verdict::failed(messages::FAILED_DRY_RUN).settle();
    }
    ControlFlow::Continue(())
}

/// Step 2: the running tasks take the state their health says.
fn update_from_health(pass: &mut Pass<'_>, tasks: &mut [TrackedTask<'_>]) {
    for tracked in tasks.iter_mut() {
        let Some(live) = tracked.task.live.as_deref().filter(|_| tracked.running()) else {
            continue;
        };
        let observed = pass.observed(live);
        let mut health = observed.and_then(|l| l.health.clone());
        let health_error = observed.and_then(|l| l.health_error.clone());
        if has_deletion_timestamp(live) && !has_hook_finalizer(live) {
            health = serde_json::from_value(
                serde_json::json!({"status": "Progressing", "message": "Pending deletion"}),
            )
            .ok();
        }
        let update = if tracked.task.hook {
            Some(hook_health_state(&tracked.task, health, health_error))
        } else {
            resource_health_state(health, health_error)
        };
        if let Some((state, message)) = update {
            pass.keep(tracked, state, &message);
        }
    }
}

/// A running hook's state from its health. A hook keeps its result code when its health is
/// taken (Argo CD 3.6; 3.2 cleared it).
fn hook_health_state(
    task: &Task<'_>,
    health: Option<HealthResult>,
    health_error: Option<String>,
) -> (TaskState, String) {
    if let Some(error) = health_error {
        return (TaskState::Error, format!("failed to get resource health: {error}"));
    }
    let created = || format!("{} created", task.key.name);
    let Some(health) = health else { return (TaskState::Succeeded, created()) };
    let state = match health.status {
        HealthStatus::Missing => TaskState::Succeeded,
        HealthStatus::Unknown | HealthStatus::Degraded => TaskState::Failed,
        HealthStatus::Progressing | HealthStatus::Suspended => TaskState::Running,
        _ => TaskState::Succeeded,
    };
    let message = if health.status == HealthStatus::Missing { created() } else { health.message };
    (state, message)
}

/// A running resource's state from its health, when its health decides one.
fn resource_health_state(
    health: Option<HealthResult>,
    health_error: Option<String>,
) -> Option<(TaskState, String)> {
    if health_error.is_some() {
        return None;
    }
    match health {
        None => Some((TaskState::Succeeded, String::new())),
        Some(h) if h.status == HealthStatus::Healthy => Some((TaskState::Succeeded, h.message)),
        Some(h) if h.status == HealthStatus::Degraded => Some((TaskState::Failed, h.message)),
        Some(_) => None,
    }
}

/// Step 3: running tasks are waited for (resources only when the sync has more than one step); a
/// running task without a live object is looked up.
fn wait_for_running(pass: &mut Pass<'_>, tasks: &mut [TrackedTask<'_>]) -> PhaseFlow {
    let multi_step = match (tasks.first(), tasks.last()) {
        (Some(a), Some(b)) => a.task.phase != b.task.phase || a.task.wave != b.task.wave,
        _ => false,
    };
    let running: Vec<usize> = (0..tasks.len())
        .filter(|i| tasks[*i].running() && (multi_step || tasks[*i].task.hook))
        .collect();
    if running.is_empty() {
        return ControlFlow::Continue(());
    }
    let missing: Vec<usize> =
        running.iter().copied().filter(|i| tasks[*i].task.live.is_none()).collect();
    let actions = pass.actions_for(tasks, &missing, ActionKind::Get, "get");
    let outcomes = pass.execute(actions)?;
    for (i, o) in missing.iter().zip(outcomes) {
        let tracked = &mut tasks[*i];
        match o.status {
            OutcomeStatus::Succeeded => {}
            OutcomeStatus::Failed => {
                let message = format!("Failed to get live resource {}", o.message);
                pass.keep(tracked, TaskState::Error, &message);
            }
            OutcomeStatus::NotFound => {
                let key = &tracked.task.key;
                let message = format!(
                    "Resource {}/{}/{} is missing, it might have been deleted",
                    key.group, key.kind, key.name
                );
                pass.record(tracked, Some(ResultCode::SyncFailed), TaskState::Error, &message);
            }
        }
    }
    Verdict::running(messages::waiting(&tasks_at(tasks, &running), Wait::Health, &[])).settle()
}

/// Step 4: pruned objects still being deleted are waited for.
fn wait_for_deletion(tasks: &[TrackedTask<'_>]) -> PhaseFlow {
    let deleting: Vec<&Task<'_>> = tasks
        .iter()
        .filter(|t| {
            t.status == Some(ResultCode::Pruned)
                && t.task.live.as_deref().is_some_and(has_deletion_timestamp)
        })
        .map(|t| &t.task)
        .collect();
    if deleting.is_empty() {
        return ControlFlow::Continue(());
    }
    Verdict::running(messages::waiting(&deleting, Wait::Deletion, &[])).settle()
}

/// Step 5: the finalizer of completed hooks is removed (in an operation dry run too, as Argo CD
/// does: the dry run records its hooks as completed). A completed hook without a live object
/// is looked up first (Argo CD 3.6: the cache may lack it): not found, it has no finalizer to
/// remove; found, its finalizer is removed. The removals and the lookups go in one batch
/// (Argo CD takes the hooks one by one in task order); a found hook's removal follows in the
/// next.
fn remove_completed_hook_finalizers(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
) -> PhaseFlow {
    let lookups: Vec<usize> = (0..tasks.len())
        .filter(|i| {
            let t = &tasks[*i];
            t.task.hook && t.completed() && t.task.live.is_none()
        })
        .collect();
    let (mut members, mut actions) = completed_hook_finalizers(pass, tasks, "finalizer");
    let removals = actions.len();
    actions.extend(pass.actions_for(tasks, &lookups, ActionKind::Get, "finalizer:get"));
    let mut outcomes = pass.execute(actions)?;
    let looked_up = outcomes.split_off(removals);
    let found = found_hooks(pass, tasks, &lookups, looked_up);
    if !found.is_empty() {
        let more = pass.actions_for(tasks, &found, ActionKind::RemoveFinalizer, "finalizer");
        outcomes.extend(pass.execute(more)?);
        members.extend(found);
    }
    record_finalizer_removals(pass, tasks, &members, outcomes);
    ControlFlow::Continue(())
}

/// The looked-up hooks that exist; a failed lookup is recorded on its hook.
fn found_hooks(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    lookups: &[usize],
    outcomes: Vec<Outcome>,
) -> Vec<usize> {
    let mut found = Vec::new();
    for (i, o) in lookups.iter().zip(outcomes) {
        match o.status {
            OutcomeStatus::Succeeded => found.push(*i),
            OutcomeStatus::NotFound => {}
            OutcomeStatus::Failed => {
                let message = format!(
                    "Failed to remove hook finalizer: failed to get resource: {}",
                    o.message
                );
                pass.keep(&mut tasks[*i], TaskState::Error, &message);
            }
        }
    }
    found
}

/// Records the finalizer removals: a failure on its hook; a success takes the finalizer off
/// every task of the hook's live object (a hook's other phases share it).
fn record_finalizer_removals(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    members: &[usize],
    outcomes: Vec<Outcome>,
) {
    // The keys of the hooks whose finalizer is gone, in one set, so that the tasks are walked
    // once whatever the number of hooks.
    let mut unfinalized = std::collections::HashSet::new();
    for (i, o) in members.iter().zip(outcomes) {
        if o.status == OutcomeStatus::Failed {
            let message = format!("Failed to remove hook finalizer: {}", o.message);
            pass.keep(&mut tasks[*i], TaskState::Error, &message);
        } else if let Some(live) = &tasks[*i].task.live {
            unfinalized.insert(ObjectRef::from_object_lossy(live).key());
        }
    }
    if unfinalized.is_empty() {
        return;
    }
    for tracked in tasks.iter_mut() {
        if let Some(live) = &mut tracked.task.live
            && unfinalized.contains(&ObjectRef::from_object_lossy(live).key())
        {
            drop_hook_finalizer(live.to_mut());
        }
    }
}

/// The tasks of the sync sorted for what comes after the waits.
struct Layout {
    /// The SyncFail tasks (6).
    sync_fail: Vec<usize>,
    /// Every other task.
    rest: Vec<usize>,
    /// Hooks deleted at the end of a successful sync (7).
    delete_on_success: Vec<usize>,
    /// Hooks deleted at the end of a failed sync.
    delete_on_failure: Vec<usize>,
}

impl Layout {
    fn of(tasks: &[TrackedTask<'_>]) -> Self {
        let delete_on = |policy: HookDeletePolicy| -> Vec<usize> {
            (0..tasks.len())
                .filter(|i| {
                    let t = &tasks[*i];
                    t.task.live.is_some() && !t.running() && t.task.has_policy(policy)
                })
                .collect()
        };
        let (sync_fail, rest) =
            (0..tasks.len()).partition(|i| tasks[*i].task.phase == Phase::SyncFail);
        Layout {
            sync_fail,
            rest,
            delete_on_success: delete_on(HookDeletePolicy::HookSucceeded),
            delete_on_failure: delete_on(HookDeletePolicy::HookFailed),
        }
    }
}

/// Step 8: a task completed unsuccessfully: the hooks to delete on failure go, then the SyncFail
/// phase runs.
fn fail_after_failed_task(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    layout: &Layout,
) -> PhaseFlow {
    let failed = |i: &usize| tasks[*i].completed() && tasks[*i].state != TaskState::Succeeded;
    if !layout.rest.iter().any(failed) {
        return ControlFlow::Continue(());
    }
    let failures = failure_messages(tasks, &layout.rest);
    delete_hooks(pass, tasks, &layout.delete_on_failure, "on-fail")?;
    let base = messages::COMPLETED_UNSUCCESSFULLY;
    run_sync_fail(pass, tasks, &layout.sync_fail, &failures, base)?.settle()
}

/// Step 9-13: the wet run of the next (phase, wave), or the end of a sync with nothing left.
fn run_next_wave(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    layout: &Layout,
) -> PhaseFlow<Verdict> {
    let out_of_sync_only = pass.request.sync_options.apply_out_of_sync_only();
    let pending: Vec<usize> = layout
        .rest
        .iter()
        .copied()
        .filter(|i| tasks[*i].pending() && !(out_of_sync_only && tasks[*i].task.unmodified))
        .collect();
    let (Some(&first), Some(&last)) = (pending.first(), pending.last()) else {
        delete_hooks(pass, tasks, &layout.delete_on_success, "on-success")?;
        return ControlFlow::Continue(Verdict::succeeded(messages::SUCCEEDED_NO_MORE_TASKS));
    };
    let (phase, wave) = (tasks[first].task.phase, tasks[first].task.wave);
    let last_wave = phase == tasks[last].task.phase && wave == tasks[last].task.wave;
    let (members, later): (Vec<usize>, Vec<usize>) = pending
        .iter()
        .partition(|i| tasks[**i].task.phase == phase && tasks[**i].task.wave == wave);
    pass.message = messages::TASKS_RUNNING.to_string();
    let batch = Batch { name: "wave", members: &members, dry_run: false };
    let state = run_tasks(pass, tasks, batch)?;
    if state != RunState::Failed {
        pass.wave = Some(WaveEvent { phase, wave, last: last_wave });
    }
    match state {
        RunState::Failed => wave_failed(pass, tasks, &members, layout),
        RunState::Successful
            if later.is_empty() && !members.iter().any(|i| tasks[*i].task.hook) =>
        {
            delete_hooks(pass, tasks, &layout.delete_on_success, "on-success")?;
            ControlFlow::Continue(Verdict::succeeded(messages::SUCCEEDED_ALL_TASKS_RUN))
        }
        RunState::Successful => ControlFlow::Continue(Verdict::running(messages::waiting(
            &tasks_at(tasks, &members),
            Wait::Health,
            &[],
        ))),
        RunState::Pending => ControlFlow::Continue(wave_waits_for_deletion(pass, tasks, &members)),
    }
}

/// Step 13: the wave failed to apply: its running tasks are waited for (with the SyncFail tasks
/// started), else the SyncFail phase runs and, once it is over, the hooks to delete on failure
/// go.
fn wave_failed(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    members: &[usize],
    layout: &Layout,
) -> PhaseFlow<Verdict> {
    let failures = failure_messages(tasks, members);
    let mut running: Vec<usize> = members.iter().copied().filter(|i| tasks[*i].running()).collect();
    let base = messages::FAILED_TO_APPLY;
    if running.is_empty() {
        let verdict = run_sync_fail(pass, tasks, &layout.sync_fail, &failures, base)?;
        if verdict.phase.completed() {
            // Waiting on the deletes, the state says the failure already.
            pass.message.clone_from(&verdict.message);
            delete_hooks(pass, tasks, &layout.delete_on_failure, "on-fail")?;
        }
        return ControlFlow::Continue(verdict);
    }
    if !layout.sync_fail.is_empty() {
        let verdict = run_sync_fail(pass, tasks, &layout.sync_fail, &failures, base)?;
        if !verdict.phase.completed() {
            running.extend(&layout.sync_fail);
        }
    }
    let message = messages::waiting(&tasks_at(tasks, &running), Wait::Health, &[]);
    ControlFlow::Continue(Verdict::running(message))
}

/// Step 13: the wave waits for deletes: its hooks deleted before creation and its prunes (naming
/// those that wait for confirmation while deletion is not approved).
fn wave_waits_for_deletion(
    pass: &Pass<'_>,
    tasks: &[TrackedTask<'_>],
    members: &[usize],
) -> Verdict {
    let deleting: Vec<&Task<'_>> = members
        .iter()
        .map(|i| &tasks[*i])
        .filter(|t| t.delete_before_creation() || (t.task.is_prune() && t.pending()))
        .map(|t| &t.task)
        .collect();
    let confirm: Vec<&Task<'_>> = if pass.confirmed() {
        Vec::new()
    } else {
        deleting.iter().copied().filter(|t| t.requires_confirmation).collect()
    };
    Verdict::running(messages::waiting(&deleting, Wait::Deletion, &confirm))
}

/// The SyncFail phase (`executeSyncFailPhase`) after a failure described by `base` and
/// `failures`: failed at once without SyncFail tasks or once they completed, else they run
/// and the verdict waits for them.
fn run_sync_fail(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    members: &[usize],
    failures: &[String],
    base: &str,
) -> PhaseFlow<Verdict> {
    let mut message = messages::with_reasons(base, failures);
    if members.is_empty() {
        return ControlFlow::Continue(Verdict::failed(message));
    }
    if members.iter().all(|i| tasks[*i].completed()) {
        if members.iter().any(|i| tasks[*i].sync_failed()) {
            let hook_failures = failure_messages(tasks, members);
            message.push('\n');
            message.push_str(&messages::with_reasons(
                "one or more SyncFail hooks failed",
                &hook_failures,
            ));
        }
        return ControlFlow::Continue(Verdict::failed(message));
    }
    let to_run: Vec<usize> = members
        .iter()
        .copied()
        .filter(|i| !tasks[*i].completed() && !tasks[*i].running())
        .collect();
    run_tasks(pass, tasks, Batch { name: "sync-fail", members: &to_run, dry_run: false })?;
    let message = messages::waiting(&tasks_at(tasks, &to_run), Wait::Health, &[]);
    ControlFlow::Continue(Verdict::running(message))
}

/// Deletes hooks by policy; an error is recorded on the hook.
fn delete_hooks(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    members: &[usize],
    batch: &str,
) -> PhaseFlow {
    let prefix = format!("{batch}:delete");
    let actions = pass.actions_for(tasks, members, ActionKind::Delete, &prefix);
    let outcomes = pass.execute(actions)?;
    for (i, o) in members.iter().zip(outcomes) {
        if o.status == OutcomeStatus::Failed {
            let message = format!("failed to delete resource: {}", o.message);
            pass.keep(&mut tasks[*i], TaskState::Error, &message);
        }
    }
    ControlFlow::Continue(())
}
