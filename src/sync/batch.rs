//! `runTasks` (gitops-engine v3.6.2 pkg/sync/sync_context.go): one batch of tasks, dry or wet,
//! in four parts that each may end it: the finalizers of pending hooks, the prunes, the
//! `BeforeHookCreation` deletes, and the applies in groups of one kind.

use std::ops::ControlFlow;

use super::pass::{Pass, PhaseFlow, RunState, TrackedTask, has_deletion_timestamp};
use super::tasks::decide_action;
use super::{ActionKind, HostAction, OutcomeStatus, ResultCode, TaskAction, TaskObject, TaskState};
use crate::vocabulary::has_hook_finalizer;

/// A batch of tasks to run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Batch<'m> {
    /// The prefix of the batch's action ids (`dry-run`, `wave`, ...).
    pub name: &'m str,
    /// The positions of its tasks.
    pub members: &'m [usize],
    /// The batch is the dry run before the wet one.
    pub dry_run: bool,
}

impl Batch<'_> {
    /// Nothing is changed: the batch's dry run, or the operation's.
    fn dry(&self, pass: &Pass<'_>) -> bool {
        self.dry_run || pass.request.dry_run
    }

    /// Results are recorded: a wet run, or any run of an operation dry run.
    fn records(&self, pass: &Pass<'_>) -> bool {
        !self.dry_run || pass.request.dry_run
    }
}

/// A result to record for a task.
struct Planned {
    member: usize,
    status: Option<ResultCode>,
    state: TaskState,
    message: String,
}

impl Planned {
    fn new(member: usize, status: ResultCode, state: TaskState, message: String) -> Self {
        Planned { member, status: Some(status), state, message }
    }
}

/// Runs the batch (`runTasks`).
pub(super) fn run_tasks(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    batch: Batch<'_>,
) -> PhaseFlow<RunState> {
    let dry = batch.dry(pass);
    if !dry && remove_pending_hook_finalizers(pass, tasks, batch)? == RunState::Failed {
        return ControlFlow::Continue(RunState::Failed);
    }
    let pruned = prune(pass, tasks, batch)?;
    if pruned != RunState::Successful {
        return ControlFlow::Continue(pruned);
    }
    if !dry {
        let deleted = delete_before_creation(pass, tasks, batch)?;
        if deleted != RunState::Successful {
            return ControlFlow::Continue(deleted);
        }
    }
    apply(pass, tasks, batch)
}

/// Step 1: the finalizers of pending hooks with a live object.
fn remove_pending_hook_finalizers(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    batch: Batch<'_>,
) -> PhaseFlow<RunState> {
    let finalized: Vec<usize> = batch
        .members
        .iter()
        .copied()
        .filter(|i| {
            let t = &tasks[*i];
            t.task.hook && t.pending() && t.task.live.as_deref().is_some_and(has_hook_finalizer)
        })
        .collect();
    let prefix = format!("{}:finalizer", batch.name);
    let actions = pass.actions_for(tasks, &finalized, ActionKind::RemoveFinalizer, &prefix);
    let outcomes = pass.execute(actions)?;
    let mut state = RunState::Successful;
    for (i, o) in finalized.iter().zip(outcomes) {
        if o.status == OutcomeStatus::Failed {
            let message = format!("failed to remove hook finalizer: {}", o.message);
            pass.keep(&mut tasks[*i], TaskState::Error, &message);
            state = RunState::Failed;
        }
    }
    ControlFlow::Continue(state)
}

/// Step 2: the prunes: skipped, dry, already going, or deleted; `Pending` while a prune waits for
/// confirmation.
fn prune(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    batch: Batch<'_>,
) -> PhaseFlow<RunState> {
    let prunes: Vec<usize> =
        batch.members.iter().copied().filter(|i| tasks[*i].task.is_prune()).collect();
    if !pass.confirmed() && prunes.iter().any(|i| tasks[*i].task.requires_confirmation) {
        return ControlFlow::Continue(RunState::Pending);
    }
    let dry = batch.dry(pass);
    let mut deletes: Vec<(usize, HostAction)> = Vec::new();
    let mut planned: Vec<Planned> = Vec::new();
    for &i in &prunes {
        let task = &tasks[i].task;
        let (pruned, succeeded) = (ResultCode::Pruned, TaskState::Succeeded);
        match &task.action {
            TaskAction::Skip { reason } => {
                planned.push(Planned::new(i, ResultCode::PruneSkipped, succeeded, reason.clone()))
            }
            _ if dry => planned.push(Planned::new(i, pruned, succeeded, "pruned (dry run)".into())),
            _ if task.live.as_deref().is_some_and(has_deletion_timestamp) => {
                planned.push(Planned::new(i, pruned, succeeded, "pruned".into()))
            }
            _ => {
                let id = format!("{}:prune:{}", batch.name, tasks[i].result_key);
                deletes.push((i, pass.action(id, ActionKind::Delete, task, 0)));
            }
        }
    }
    let (deleted, delete_actions): (Vec<usize>, Vec<HostAction>) = deletes.into_iter().unzip();
    let outcomes = pass.execute(delete_actions)?;
    for (i, o) in deleted.iter().zip(outcomes) {
        planned.push(match o.status {
            OutcomeStatus::Failed => {
                Planned::new(*i, ResultCode::SyncFailed, TaskState::Failed, o.message)
            }
            _ => Planned::new(*i, ResultCode::Pruned, TaskState::Succeeded, "pruned".into()),
        });
    }
    planned.sort_by_key(|p| p.member);
    let mut state = RunState::Successful;
    for p in planned {
        let failed = p.status == Some(ResultCode::SyncFailed);
        if failed {
            state = RunState::Failed;
        }
        if batch.records(pass) || failed {
            pass.record(&mut tasks[p.member], p.status, p.state, &p.message);
        }
    }
    ControlFlow::Continue(state)
}

/// Step 3: the `BeforeHookCreation` deletes: `Pending` while a deleted hook goes; a hook already
/// gone is created instead.
fn delete_before_creation(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    batch: Batch<'_>,
) -> PhaseFlow<RunState> {
    let recreated: Vec<usize> = batch
        .members
        .iter()
        .copied()
        .filter(|i| !tasks[*i].task.is_prune() && tasks[*i].delete_before_creation())
        .collect();
    let prefix = format!("{}:delete", batch.name);
    let actions = pass.actions_for(tasks, &recreated, ActionKind::Delete, &prefix);
    let outcomes = pass.execute(actions)?;
    let mut state = RunState::Successful;
    for (i, o) in recreated.iter().zip(outcomes) {
        let tracked = &mut tasks[*i];
        match o.status {
            OutcomeStatus::Succeeded => state = state.max(RunState::Pending),
            OutcomeStatus::NotFound => {
                tracked.task.live = None;
                let skip_dry_run = !tracked.task.flags.dry_run_first;
                decide_action(pass.request, &mut tracked.task, skip_dry_run);
            }
            OutcomeStatus::Failed => {
                let message = format!("failed to delete resource: {}", o.message);
                pass.keep(tracked, TaskState::Error, &message);
                state = RunState::Failed;
            }
        }
    }
    ControlFlow::Continue(state)
}

/// Step 4: the applies, in groups of consecutive tasks of one kind.
fn apply(
    pass: &mut Pass<'_>,
    tasks: &mut [TrackedTask<'_>],
    batch: Batch<'_>,
) -> PhaseFlow<RunState> {
    let applies = apply_actions(pass, tasks, batch);
    let kinds: Vec<(usize, ActionKind)> = applies.iter().map(|(i, a)| (*i, a.kind)).collect();
    let outcomes = pass.execute(applies.into_iter().map(|(_, a)| a).collect())?;
    let mut state = RunState::Successful;
    let op_dry = pass.request.dry_run;
    for ((i, kind), o) in kinds.iter().zip(outcomes) {
        let ok = o.status != OutcomeStatus::Failed;
        let key = &tasks[*i].task.key;
        let message = match (*kind, ok) {
            (ActionKind::Update, true) => format!("{}/{} updated", key.kind, key.name),
            // Argo CD's sync returns the error text itself (its "error when updating"
            // message is overwritten).
            _ => o.message.clone(),
        };
        if !ok {
            state = RunState::Failed;
        }
        if batch.records(pass) || !ok {
            let (code, st) = if ok {
                (ResultCode::Synced, if op_dry { TaskState::Succeeded } else { TaskState::Running })
            } else {
                (ResultCode::SyncFailed, TaskState::Failed)
            };
            pass.record(&mut tasks[*i], Some(code), st, &message);
        }
    }
    ControlFlow::Continue(state)
}

/// The apply actions of the batch, by task position. Only an action the host has not answered
/// yet is sent, so only such an action carries its object (a replayed batch needs just the ids).
fn apply_actions(
    pass: &Pass<'_>,
    tasks: &[TrackedTask<'_>],
    batch: Batch<'_>,
) -> Vec<(usize, HostAction)> {
    let dry = batch.dry(pass);
    let mut applies = Vec::new();
    let mut group = 0u32;
    let mut last_kind: Option<&str> = None;
    for &i in batch.members {
        let task = &tasks[i].task;
        if task.is_prune() || (dry && !task.flags.dry_run_first) {
            continue;
        }
        if last_kind.is_some_and(|k| k != task.key.kind) {
            group += 1;
        }
        last_kind = Some(&task.key.kind);
        let (kind, verb) = match &task.action {
            TaskAction::Create => (ActionKind::Create, "create"),
            TaskAction::Replace => (ActionKind::Replace, "replace"),
            TaskAction::Update => (ActionKind::Update, "update"),
            _ => (ActionKind::Apply, "apply"),
        };
        let id = format!("{}:{verb}:{}", batch.name, tasks[i].result_key);
        let mut a = pass.action(id, kind, task, group);
        a.dry_run = dry;
        a.validate = task.flags.validate;
        a.force = task.flags.force && matches!(kind, ActionKind::Apply | ActionKind::Replace);
        a.server_side = task.flags.server_side && !dry && kind == ActionKind::Apply;
        a.field_manager = if a.server_side { task.flags.field_manager.clone() } else { None };
        a.client_side_apply_migration = (a.server_side && task.flags.client_side_apply_migration)
            .then(|| pass.request.client_side_apply_manager.clone());
        if !pass.answered(&a.id) {
            a.object = task.target.as_ref().map(TaskObject::to_value);
        }
        applies.push((i, a));
    }
    applies
}
