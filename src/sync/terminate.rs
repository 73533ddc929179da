//! Terminating a running operation (`syncContext.Terminate`, gitops-engine v3.6.2
//! pkg/sync/sync_context.go), replayed like a pass of [`super::step`].

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use super::messages;
use super::pass::{Pass, PhaseFlow, TrackedTask, Verdict, completed_hook_finalizers};
use super::tasks::build;
use super::{
    ActionKind, HookDeletePolicy, HostAction, Observations, OperationPhase, OutcomeStatus, Step,
    SyncRequest, SyncState, TaskState,
};
use crate::health::HealthStatus;
use crate::vocabulary::has_hook_finalizer;

impl SyncRequest {
    /// Terminates a running operation (`syncContext.Terminate`): every running hook is stopped (its finalizer
    /// removed, then deleted when still running, when its health errored, or when it has
    /// `HookFailed`), and the operation ends `Failed` "Operation terminated" (or `Error`
    /// "Operation termination had errors"). Non-hook tasks are not touched. Driven like
    /// [`step`](SyncRequest::step): carry out the actions and call again until `done`.
    pub fn terminate(&self, state: &SyncState, observations: &Observations) -> Step {
        let request = self;
        let mut pass = Pass::new(request, state, observations);
        let flow = run_terminate(&mut pass);
        pass.into_step(flow, state, OperationPhase::Terminating)
    }
}

/// How one running hook is stopped.
struct Stop {
    member: usize,
    /// Its finalizer is removed first.
    unfinalize: Option<HostAction>,
    /// Then it is deleted.
    delete: Option<HostAction>,
    /// The state and message it ends with, unless a removal or delete fails.
    state: TaskState,
    message: String,
}

fn run_terminate(pass: &mut Pass<'_>) -> PhaseFlow<Verdict> {
    let mut built = build(pass.request, pass.observations);
    let mut tasks = pass.track(&mut built);
    // Finalizers of completed hooks.
    let (_, actions) = completed_hook_finalizers(pass, &tasks, "terminate:finalizer");
    pass.execute(actions)?;
    let stops: Vec<Stop> = (0..tasks.len())
        .filter(|i| tasks[*i].task.hook && tasks[*i].running())
        .map(|i| stop_of(pass, &tasks, i))
        .collect();
    let mut clean = !stops.iter().any(|s| s.state == TaskState::Error);
    // Stop the running hooks: finalizer first, then the delete.
    let unfinalize: Vec<HostAction> = stops.iter().filter_map(|s| s.unfinalize.clone()).collect();
    let unfinalized = pass.execute(unfinalize)?;
    let mut failures: BTreeMap<usize, (TaskState, String)> = BTreeMap::new();
    let unfinalizing = stops.iter().filter(|s| s.unfinalize.is_some());
    for (stop, o) in unfinalizing.zip(unfinalized) {
        if o.status == OutcomeStatus::Failed {
            let message = format!("Failed to remove hook finalizer: {}", o.message);
            failures.insert(stop.member, (TaskState::Error, message));
            clean = false;
        }
    }
    let deleting: Vec<&Stop> =
        stops.iter().filter(|s| s.delete.is_some() && !failures.contains_key(&s.member)).collect();
    let deletes = deleting.iter().filter_map(|s| s.delete.clone()).collect();
    let deleted = pass.execute(deletes)?;
    for (stop, o) in deleting.iter().zip(deleted) {
        if o.status == OutcomeStatus::Failed {
            let message = format!("Failed to delete: {}", o.message);
            failures.insert(stop.member, (TaskState::Failed, message));
        }
    }
    for stop in stops {
        let (state, message) = failures.remove(&stop.member).unwrap_or((stop.state, stop.message));
        pass.keep(&mut tasks[stop.member], state, &message);
    }
    ControlFlow::Continue(if clean {
        Verdict::failed(messages::TERMINATED)
    } else {
        Verdict { phase: OperationPhase::Error, message: messages::TERMINATION_ERRORS.into() }
    })
}

/// How the running hook at `member` is stopped, from its live object and health.
fn stop_of(pass: &Pass<'_>, tasks: &[TrackedTask<'_>], member: usize) -> Stop {
    let tracked = &tasks[member];
    let task = &tracked.task;
    let Some(live) = task.live.as_deref() else {
        let message = "Terminated".to_string();
        return Stop {
            member,
            unfinalize: None,
            delete: None,
            state: TaskState::Succeeded,
            message,
        };
    };
    let observed = pass.observed(live);
    let health = observed.and_then(|l| l.health.as_ref());
    let health_error = observed.and_then(|l| l.health_error.as_ref());
    let unfinalize = has_hook_finalizer(live).then(|| {
        let id = format!("terminate:unfinalize:{}", tracked.result_key);
        pass.action(id, ActionKind::RemoveFinalizer, task, 0)
    });
    let (state, message) = match (health_error, health) {
        (Some(e), _) => (TaskState::Error, format!("Failed to get hook health: {e}")),
        (None, None) => (TaskState::Succeeded, format!("{} created", task.key.name)),
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
    let delete = (health_error.is_some()
        || state == TaskState::Running
        || task.has_policy(HookDeletePolicy::HookFailed))
    .then(|| {
        let id = format!("terminate:delete:{}", tracked.result_key);
        pass.action(id, ActionKind::Delete, task, 0)
    });
    let (state, message) = if state.completed() {
        (state, message)
    } else {
        (TaskState::Failed, "Terminated".to_string())
    };
    Stop { member, unfinalize, delete, state, message }
}
