//! The state of one replayed pass of the sync loop: the results recorded so far, the outcomes
//! the host gave, and the tasks with their recorded state.
//!
//! Argo CD's `Sync()` calls the cluster in the middle of a pass. Here a pass is replayed: each
//! call runs the pass from its start with the outcomes gathered so far; where it needs the
//! outcome of an action it does not have yet, the pass ends with [`PassEnd::Awaiting`] and the
//! actions. The results as they were at the start of the pass are kept in
//! [`SyncState::step_base`] until the pass ends, so a replay sees what the first try saw.

use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;

use serde_json::Value;

use super::reconcile::{RefKey, ref_key};
use super::tasks::Built;
use super::{
    ActionKind, HookDeletePolicy, HostAction, LiveObject, Observations, OperationPhase, Outcome,
    ResourceResult, ResultCode, Step, SyncRequest, SyncState, Task, TaskState, WaveEvent,
};
use crate::object::ObjectRef;
use crate::vocabulary::has_hook_finalizer;

/// How a pass ends: it waits for the outcomes of actions, or the operation has a new phase
/// and message.
#[derive(Debug)]
pub(super) enum PassEnd {
    /// The host carries out these actions and calls again with their outcomes.
    Awaiting(Vec<HostAction>),
    /// The pass is over with this verdict.
    Settled(Verdict),
}

/// The operation's phase and message at the end of a pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Verdict {
    pub phase: OperationPhase,
    pub message: String,
}

impl Verdict {
    pub(super) fn running(message: impl Into<String>) -> Self {
        Verdict { phase: OperationPhase::Running, message: message.into() }
    }

    pub(super) fn failed(message: impl Into<String>) -> Self {
        Verdict { phase: OperationPhase::Failed, message: message.into() }
    }

    pub(super) fn succeeded(message: impl Into<String>) -> Self {
        Verdict { phase: OperationPhase::Succeeded, message: message.into() }
    }

    /// Ends the pass with this verdict.
    pub(super) fn settle<T>(self) -> ControlFlow<PassEnd, T> {
        ControlFlow::Break(PassEnd::Settled(self))
    }
}

/// What a phase (or a part of one) hands on: the next part runs, or the pass ends.
pub(super) type PhaseFlow<T = ()> = ControlFlow<PassEnd, T>;

/// How a batch of tasks went (`runTasks`'s result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum RunState {
    Successful,
    Pending,
    Failed,
}

/// One pass: the request, the observations, and what the pass has recorded so far.
pub(super) struct Pass<'a> {
    pub request: &'a SyncRequest,
    pub observations: &'a Observations,
    /// The live objects by key (lookups only).
    live_by_key: HashMap<RefKey<'a>, &'a LiveObject>,
    pub results: Vec<ResourceResult>,
    /// Position of each result by result key.
    result_index: HashMap<String, usize>,
    /// Every outcome the host gave in this pass, by action id.
    pub outcomes: BTreeMap<String, Outcome>,
    /// The message the state carries while the pass waits for outcomes.
    pub message: String,
    /// The (phase, wave) that ran its wet run in this pass.
    pub wave: Option<WaveEvent>,
}

/// A task with its recorded state.
#[derive(Debug, Clone)]
pub(super) struct TrackedTask<'a> {
    pub task: Task<'a>,
    /// [`Task::result_key`].
    pub result_key: String,
    pub status: Option<ResultCode>,
    pub state: TaskState,
    pub message: String,
    /// The failure set when the task list was built (namespace auto-creation).
    pub preset_failure: Option<String>,
}

impl TrackedTask<'_> {
    pub(super) fn running(&self) -> bool {
        self.state == TaskState::Running
    }

    pub(super) fn pending(&self) -> bool {
        self.state == TaskState::Pending
    }

    pub(super) fn completed(&self) -> bool {
        self.state.completed()
    }

    pub(super) fn sync_failed(&self) -> bool {
        self.status == Some(ResultCode::SyncFailed)
    }

    /// A hook whose live object is deleted before it is created again.
    pub(super) fn delete_before_creation(&self) -> bool {
        self.task.live.is_some()
            && self.pending()
            && self.task.has_policy(HookDeletePolicy::BeforeHookCreation)
    }
}

/// The messages of the tasks at `members` that failed to sync, in order.
pub(super) fn failure_messages(tasks: &[TrackedTask<'_>], members: &[usize]) -> Vec<String> {
    members.iter().filter(|i| tasks[**i].sync_failed()).map(|i| tasks[*i].message.clone()).collect()
}

/// The tasks at `members`.
pub(super) fn tasks_at<'t, 'a>(
    tasks: &'t [TrackedTask<'a>],
    members: &[usize],
) -> Vec<&'t Task<'a>> {
    members.iter().map(|i| &tasks[*i].task).collect()
}

pub(super) fn has_deletion_timestamp(obj: &Value) -> bool {
    obj.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|v| !v.is_null())
}

/// The results as they were when the pass began (what [`Pass::new`] starts from).
fn pass_base(state: &SyncState) -> Vec<ResourceResult> {
    state.step_base.clone().unwrap_or_else(|| state.results.clone())
}

impl<'a> Pass<'a> {
    pub(super) fn new(
        request: &'a SyncRequest,
        state: &SyncState,
        observations: &'a Observations,
    ) -> Self {
        let mut outcomes = state.outcomes.clone();
        for o in &observations.outcomes {
            outcomes.insert(o.id.clone(), o.clone());
        }
        let results = pass_base(state);
        let live_by_key = observations.live.iter().map(|l| (ref_key(&l.object), l)).collect();
        Pass {
            request,
            observations,
            live_by_key,
            result_index: results.iter().enumerate().map(|(i, r)| (r.result_key(), i)).collect(),
            results,
            outcomes,
            message: state.message.clone(),
            wave: None,
        }
    }

    /// The built tasks with the results recorded for them so far (a repeated result key points
    /// at its last result).
    pub(super) fn track(&self, built: &mut Built<'a>) -> Vec<TrackedTask<'a>> {
        let presets = std::mem::take(&mut built.preset_failures);
        std::mem::take(&mut built.tasks)
            .into_iter()
            .map(|task| {
                let result_key = task.result_key();
                let r = self.result_index.get(&result_key).and_then(|i| self.results.get(*i));
                TrackedTask {
                    preset_failure: presets
                        .iter()
                        .find(|(k, _)| *k == result_key)
                        .map(|(_, m)| m.clone()),
                    task,
                    result_key,
                    status: r.and_then(|r| r.status),
                    state: r.map(|r| r.hook_phase).unwrap_or_default(),
                    message: r.map(|r| r.message.clone()).unwrap_or_default(),
                }
            })
            .collect()
    }

    /// Records a result (`setResourceResult`): a new result gets the next order; a message is
    /// only replaced by a non-empty one.
    pub(super) fn record(
        &mut self,
        tracked: &mut TrackedTask<'_>,
        status: Option<ResultCode>,
        state: TaskState,
        message: &str,
    ) {
        tracked.status = status;
        tracked.state = state;
        if !message.is_empty() {
            tracked.message = message.to_string();
        }
        let index = self.result_index.get(&tracked.result_key).copied();
        if let Some(result) = index.and_then(|i| self.results.get_mut(i)) {
            result.status = status;
            result.hook_phase = state;
            if !message.is_empty() {
                result.message = message.to_string();
            }
            return;
        }
        let task = &tracked.task;
        self.result_index.insert(tracked.result_key.clone(), self.results.len());
        self.results.push(ResourceResult {
            key: task.key.clone(),
            status,
            hook_phase: state,
            sync_phase: task.phase,
            hook_type: task.hook_type(),
            message: message.to_string(),
            order: self.results.len() + 1,
        });
    }

    /// Records a new task state, keeping the result code.
    pub(super) fn keep(&mut self, tracked: &mut TrackedTask<'_>, state: TaskState, message: &str) {
        let status = tracked.status;
        self.record(tracked, status, state, message);
    }

    /// The outcomes of a batch, or the end of the pass asking for the missing ones.
    pub(super) fn execute(&mut self, actions: Vec<HostAction>) -> PhaseFlow<Vec<Outcome>> {
        if actions.iter().any(|a| !self.outcomes.contains_key(&a.id)) {
            let missing =
                actions.into_iter().filter(|a| !self.outcomes.contains_key(&a.id)).collect();
            return ControlFlow::Break(PassEnd::Awaiting(missing));
        }
        ControlFlow::Continue(
            actions.iter().filter_map(|a| self.outcomes.get(&a.id).cloned()).collect(),
        )
    }

    /// The step a pass ends with: the actions it awaits (the state keeps the outcomes so far,
    /// the results the pass began with, and the phase `awaiting_phase`), or its verdict.
    pub(super) fn into_step(
        self,
        flow: PhaseFlow<Verdict>,
        state: &SyncState,
        awaiting_phase: OperationPhase,
    ) -> Step {
        let end = match flow {
            ControlFlow::Break(end) => end,
            ControlFlow::Continue(verdict) => PassEnd::Settled(verdict),
        };
        match end {
            PassEnd::Settled(verdict) => Step {
                done: verdict.phase.completed(),
                state: SyncState {
                    phase: verdict.phase,
                    message: verdict.message,
                    results: self.results,
                    outcomes: BTreeMap::new(),
                    step_base: None,
                },
                actions: Vec::new(),
                wave: self.wave,
            },
            PassEnd::Awaiting(actions) => Step {
                state: SyncState {
                    phase: awaiting_phase,
                    message: self.message,
                    results: self.results,
                    outcomes: self.outcomes,
                    step_base: Some(pass_base(state)),
                },
                actions,
                done: false,
                wave: None,
            },
        }
    }

    /// Whether the host has answered the action with this id.
    pub(super) fn answered(&self, id: &str) -> bool {
        self.outcomes.contains_key(id)
    }

    pub(super) fn action(
        &self,
        id: String,
        kind: ActionKind,
        task: &Task<'_>,
        group: u32,
    ) -> HostAction {
        let mut a = HostAction::new(id, kind, task.key.clone());
        a.propagation_policy = (kind == ActionKind::Delete).then_some(task.propagation_policy);
        a.group = group;
        a
    }

    /// One action of `kind` per task at `members`, with the id `<prefix>:<result key>`.
    pub(super) fn actions_for(
        &self,
        tasks: &[TrackedTask<'_>],
        members: &[usize],
        kind: ActionKind,
        prefix: &str,
    ) -> Vec<HostAction> {
        members
            .iter()
            .map(|i| {
                let id = format!("{prefix}:{}", tasks[*i].result_key);
                self.action(id, kind, &tasks[*i].task, 0)
            })
            .collect()
    }

    /// What the host observed of a live object (its health).
    pub(super) fn observed(&self, live: &Value) -> Option<&'a LiveObject> {
        self.live_by_key.get(&ref_key(live)).copied()
    }

    /// Deletion was approved after the operation started (`Prune=confirm`).
    pub(super) fn confirmed(&self) -> bool {
        self.observations.deletion_approved_at.is_some_and(|at| at >= self.request.started_at)
    }
}

/// The completed hooks whose live object still carries the hook finalizer, and the actions
/// that remove it (ids `<prefix>:<result key>`).
pub(super) fn completed_hook_finalizers(
    pass: &Pass<'_>,
    tasks: &[TrackedTask<'_>],
    prefix: &str,
) -> (Vec<usize>, Vec<HostAction>) {
    // A hook with several phases has one live object: its finalizer is removed once, by its
    // first task (Argo CD's tasks share the object, so the later ones find nothing to remove).
    let mut seen = std::collections::HashSet::new();
    let members: Vec<usize> = (0..tasks.len())
        .filter(|i| {
            let t = &tasks[*i];
            t.task.hook
                && t.completed()
                && t.task.live.as_ref().is_some_and(|l| {
                    has_hook_finalizer(l) && seen.insert(ObjectRef::from_object_lossy(l).key())
                })
        })
        .collect();
    let actions = pass.actions_for(tasks, &members, ActionKind::RemoveFinalizer, prefix);
    (members, actions)
}
