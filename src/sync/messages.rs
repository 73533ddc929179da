//! Argo CD's operation messages (gitops-engine pkg/sync/sync_context.go, `syncContext.Sync` and its
//! `setOperationPhase` calls).

use super::Task;

/// `successfully synced (no more tasks)`.
pub(super) const SUCCEEDED_NO_MORE_TASKS: &str = "successfully synced (no more tasks)";
/// `successfully synced (all tasks run)`.
pub(super) const SUCCEEDED_ALL_TASKS_RUN: &str = "successfully synced (all tasks run)";
/// The base message when a wave failed to apply.
pub(super) const FAILED_TO_APPLY: &str = "one or more objects failed to apply";
/// The message when the dry run failed.
pub(super) const FAILED_DRY_RUN: &str = "one or more objects failed to apply (dry run)";
/// The base message when a task completed unsuccessfully.
pub(super) const COMPLETED_UNSUCCESSFULLY: &str =
    "one or more synchronization tasks completed unsuccessfully";
/// The base message when the task list could not be built.
pub(super) const NOT_VALID: &str = "one or more synchronization tasks are not valid";
/// The base message when the namespace could not be created.
pub(super) const NAMESPACE_FAILED: &str = "the namespace failed to apply";
/// Set just before a wet run.
pub(super) const TASKS_RUNNING: &str = "one or more tasks are running";
/// A terminated operation.
pub(super) const TERMINATED: &str = "Operation terminated";
/// A termination that had errors.
pub(super) const TERMINATION_ERRORS: &str = "Operation termination had errors";

/// What a waiting message waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    Health,
    Deletion,
}

/// `setRunningPhase`: `waiting for <reason> <group>/<kind>/<name>[ and <N> more <noun>]`.
/// `confirm` lists the prune tasks that wait for confirmation, if any.
pub(crate) fn waiting(tasks: &[&Task<'_>], wait: Wait, confirm: &[&Task<'_>]) -> String {
    if tasks.is_empty() {
        return String::new();
    }
    let any_hook = tasks.iter().any(|t| t.hook);
    let all_hooks = tasks.iter().all(|t| t.hook);
    let noun = if all_hooks { "hooks" } else { "resources" };
    // `confirm[0]` and `tasks[0]` exist: both lists are checked non-empty.
    let (reason, first, n) = if !confirm.is_empty() {
        ("pruning confirmation of".to_string(), confirm[0], confirm.len() - 1)
    } else {
        let first = tasks.iter().find(|t| t.hook).copied().unwrap_or(tasks[0]);
        let reason = match (wait, any_hook) {
            (Wait::Health, true) => "completion of hook",
            (Wait::Health, false) => "healthy state of",
            (Wait::Deletion, true) => "deletion of hook",
            (Wait::Deletion, false) => "deletion of",
        };
        (reason.to_string(), first, tasks.len() - 1)
    };
    let mut msg =
        format!("waiting for {reason} {}/{}/{}", first.key.group, first.key.kind, first.key.name);
    if n > 0 {
        msg.push_str(&format!(" and {n} more {noun}"));
    }
    msg
}

/// Argo CD's waiting message for a list of tasks (`setRunningPhase`): `waiting for
/// healthy state of …`, `waiting for completion of hook …`, or with `deletion` `waiting for
/// deletion of [hook ]…`, naming the first hook (else the first task) and how many more.
#[cfg(test)]
pub(crate) fn waiting_message(tasks: &[&Task<'_>], deletion: bool) -> String {
    waiting(tasks, if deletion { Wait::Deletion } else { Wait::Health }, &[])
}

/// `<base>[, reason: <m1>,<m2>]` with the distinct messages in first-seen order (Argo CD's
/// order is a Go map's, i.e. undefined; this crate keeps task order).
pub(crate) fn with_reasons(base: &str, messages: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in messages {
        if !m.is_empty() && !seen.contains(&m.as_str()) {
            seen.push(m);
        }
    }
    if seen.is_empty() { base.to_string() } else { format!("{base}, reason: {}", seen.join(",")) }
}

/// `one or more synchronization tasks are not valid[: m1; m2]`, messages distinct and sorted.
pub(crate) fn not_valid(messages: &[String]) -> String {
    let mut ms: Vec<&str> = messages.iter().map(String::as_str).filter(|m| !m.is_empty()).collect();
    ms.sort_unstable();
    ms.dedup();
    if ms.is_empty() { NOT_VALID.to_string() } else { format!("{NOT_VALID}: {}", ms.join("; ")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Observations, SyncRequest};

    #[test]
    fn waiting_message_names_the_first_and_counts_the_rest() {
        let pod = |i| serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("pod-{i}")}});
        let request = SyncRequest { targets: (1..=3).map(pod).collect(), ..SyncRequest::default() };
        let observations = Observations::default();
        let p = request.plan(&observations);
        let tasks: Vec<_> = p.tasks().collect();
        assert_eq!(
            waiting_message(&tasks, false),
            "waiting for healthy state of /Pod/pod-1 and 2 more resources"
        );
        assert_eq!(waiting_message(&tasks[..1], true), "waiting for deletion of /Pod/pod-1");
    }
}
