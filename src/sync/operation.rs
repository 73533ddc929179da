//! The controller's handling of an app's operation between passes, as decisions that take
//! `now` (Argo CD 3.6.2 `processRequestedAppOperation` and the sync wave hook): the sync
//! timeout, the wait before a retry and the retry with the latest revisions, when to look at
//! the operation again, and the pause between waves.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::backoff::{Retry, RetryOutcome};
use super::{OperationPhase, WaveEvent};
use crate::config::RetryStrategy;

/// How long the controller waits before it looks at a running operation again, at most
/// (`appOperationMaxRequeueInterval`), seconds.
pub(super) const MAX_REQUEUE_SECONDS: i64 = 30;

/// The message of an operation the sync timeout ends.
pub(super) const TIMEOUT_MESSAGE: &str = "operation is terminating due to timeout";

/// An Application's `status.operationState` that [`OperationClock::from_app`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid Application at {path}: {message}")]
#[non_exhaustive]
pub struct OperationStateError {
    /// RFC 6901 pointer into the Application.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// What the controller knows of an operation in progress when it picks it up: its
/// `status.operationState` and its own settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OperationClock {
    /// The phase (Running or Terminating: an operation in progress).
    pub phase: OperationPhase,
    /// `startedAt`, unix seconds.
    pub started_at: i64,
    /// `finishedAt`, unix seconds: on a Running operation, the failed attempt a retry waits
    /// after.
    #[serde(default)]
    pub finished_at: Option<i64>,
    /// `retryCount`.
    #[serde(default)]
    pub retry_count: i64,
    /// The operation's retry strategy.
    pub retry: Retry,
    /// `retry.refresh`: a retry syncs the latest revisions, not the operation's.
    #[serde(default)]
    pub refresh: bool,
    /// The controller's sync timeout in seconds (`--sync-timeout`,
    /// `controller.sync.timeout.seconds` of argocd-cmd-params-cm); 0 is none.
    #[serde(default)]
    pub sync_timeout_seconds: i64,
}

impl OperationClock {
    /// The operation in progress of an Application, as the controller reads it from
    /// `status.operationState`: its phase (`None` unless Running or Terminating), `startedAt`,
    /// `finishedAt`, `retryCount` and the operation's retry strategy (`operation.retry`; its
    /// `limit` unset is 0, as Go's zero value), with the controller's sync timeout.
    ///
    /// # Errors
    ///
    /// A time that is not RFC 3339, a retry backoff Argo CD cannot read, or an unknown phase,
    /// named with the pointer of the field.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::OperationClock;
    /// let app = gitops_core::config::Application::from_value(&serde_json::json!({"status": {
    ///     "operationState": {"phase": "Running", "startedAt": "2024-05-01T12:00:00Z",
    ///         "operation": {"retry": {"limit": 2, "refresh": true}}}}})).unwrap();
    /// let op = OperationClock::from_app(&app, 60).unwrap().unwrap();
    /// assert_eq!((op.started_at, op.retry.limit, op.refresh), (1_714_564_800, 2, true));
    /// ```
    pub fn from_app(
        app: &crate::config::Application,
        sync_timeout_seconds: i64,
    ) -> Result<Option<OperationClock>, OperationStateError> {
        let state = &app.status["operationState"];
        let at = |path: &str, e: &dyn std::fmt::Display| OperationStateError {
            path: format!("/status/operationState{path}"),
            message: e.to_string(),
        };
        let phase: OperationPhase = match state.get("phase") {
            None | Some(Value::Null) => return Ok(None),
            Some(p) => OperationPhase::deserialize(p).map_err(|e| at("/phase", &e))?,
        };
        if !matches!(phase, OperationPhase::Running | OperationPhase::Terminating) {
            return Ok(None);
        }
        let time = |key: &str| -> Result<Option<i64>, OperationStateError> {
            match state.get(key).and_then(Value::as_str) {
                None => Ok(None),
                Some(t) => crate::vocabulary::parse_rfc3339(t)
                    .map(Some)
                    .map_err(|e| at(&format!("/{key}"), &e)),
            }
        };
        let strategy = match state.pointer("/operation/retry") {
            None | Some(Value::Null) => RetryStrategy::default(),
            Some(r) => RetryStrategy::deserialize(r).map_err(|e| at("/operation/retry", &e))?,
        };
        let retry =
            Retry::from_strategy(Some(&strategy), 0).map_err(|e| at("/operation/retry", &e))?;
        let mut op = OperationClock::new(phase, time("startedAt")?.unwrap_or(0), retry);
        op.finished_at = time("finishedAt")?;
        op.retry_count = state.get("retryCount").and_then(Value::as_i64).unwrap_or(0);
        op.refresh = strategy.refresh;
        op.sync_timeout_seconds = sync_timeout_seconds;
        Ok(Some(op))
    }

    /// An operation in `phase` started at `started_at` with the retry strategy `retry`, no
    /// retry yet, no timeout.
    pub fn new(phase: OperationPhase, started_at: i64, retry: Retry) -> Self {
        OperationClock {
            phase,
            started_at,
            finished_at: None,
            retry_count: 0,
            retry,
            refresh: false,
            sync_timeout_seconds: 0,
        }
    }
}

/// What to do with the operation now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase", tag = "action")]
#[non_exhaustive]
pub enum PickUpAction {
    /// Go on: run the next pass (`step`, or `terminate` for a Terminating operation).
    Resume,
    /// The sync timeout passed: set the phase Terminating with `message`
    /// (`operation is terminating due to timeout`) and terminate the operation in this pick-up.
    Terminate {
        /// The operation message.
        message: String,
    },
    /// A failed attempt waits for its retry: nothing to do before `at` (unix seconds).
    WaitForRetry {
        /// When the retry starts.
        at: i64,
    },
    /// Start the retry now: clear `finishedAt` and the sync result, write `message`
    /// (`Retrying operation[ with latest revisions]. Attempt #<n>`) and run the sync again;
    /// with `latest_revisions` the operation's revisions are dropped and the latest ones
    /// of the sources synced.
    Retry {
        /// The operation message.
        message: String,
        /// Sync the latest revisions (`retry.refresh`).
        latest_revisions: bool,
    },
}

/// The decision on an operation in progress at a pick-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[must_use]
pub struct PickUp {
    /// What to do now.
    pub action: PickUpAction,
    /// When to pick the operation up again if it is still in progress after this pick-up,
    /// unix seconds: 30 seconds from now, the retry's start when waiting for it,
    /// and no later than the end of the sync timeout (while not terminating); not before now.
    pub next_pick_up_at: i64,
}

impl OperationClock {
    /// The controller picks up an operation in progress at `now`: a Terminating one goes on
    /// terminating; past the sync timeout a running one is terminated; a failed attempt waiting
    /// for its retry (Running with `finishedAt`) waits or starts the retry; anything else goes on.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::OperationPhase;
    /// use gitops_core::sync::Retry;
    /// use gitops_core::sync::{OperationClock, PickUpAction};
    /// let retry = Retry::from_strategy(None, 5).unwrap();
    /// let mut op = OperationClock::new(OperationPhase::Running, 1_000, retry);
    /// op.sync_timeout_seconds = 600;
    /// let early = op.pick_up(1_100);
    /// assert_eq!(early.action, PickUpAction::Resume);
    /// assert_eq!(early.next_pick_up_at, 1_130);
    /// assert_eq!(op.pick_up(1_590).next_pick_up_at, 1_600);
    /// assert!(matches!(op.pick_up(1_601).action, PickUpAction::Terminate { .. }));
    /// ```
    pub fn pick_up(&self, now: i64) -> PickUp {
        let op = self;
        let mut next = now.saturating_add(MAX_REQUEUE_SECONDS);
        let timeout = op.sync_timeout_seconds;
        let deadline = op.started_at.saturating_add(timeout);
        let action = if op.phase == OperationPhase::Terminating {
            PickUpAction::Resume
        } else if timeout != 0 && now > deadline {
            PickUpAction::Terminate { message: TIMEOUT_MESSAGE.to_string() }
        } else if let (OperationPhase::Running, Some(finished)) = (op.phase, op.finished_at) {
            let at = op.retry.next_retry_at(finished, op.retry_count);
            if at > now {
                next = at;
                PickUpAction::WaitForRetry { at }
            } else {
                let with = if op.refresh { " with latest revisions" } else { "" };
                PickUpAction::Retry {
                    message: format!("Retrying operation{with}. Attempt #{}", op.retry_count),
                    latest_revisions: op.refresh,
                }
            }
        } else {
            PickUpAction::Resume
        };
        let terminating = op.phase == OperationPhase::Terminating
            || matches!(action, PickUpAction::Terminate { .. });
        if timeout > 0 && !terminating {
            next = next.min(deadline);
        }
        PickUp { action, next_pick_up_at: next.max(now) }
    }
}

impl OperationClock {
    /// The end of a pass in this pick-up that left the operation Failed or Error: retry it (not
    /// after a termination) as [`Retry::after_failure`] decides, else give up; an operation the
    /// sync timeout terminated in this pick-up says so (`<message>, triggered by controller sync
    /// timeout`), before the retries are counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::OperationPhase;
    /// use gitops_core::sync::Retry;
    /// use gitops_core::sync::OperationClock;
    /// let retry = Retry::from_strategy(None, 5).unwrap();
    /// let mut op = OperationClock::new(OperationPhase::Running, 0, retry);
    /// op.sync_timeout_seconds = 60;
    /// let picked = op.pick_up(61);
    /// let end = op.after_attempt(&picked, "Operation terminated", 61);
    /// assert!(!end.retry);
    /// assert_eq!(end.message, "Operation terminated, triggered by controller sync timeout");
    /// ```
    pub fn after_attempt(&self, picked: &PickUp, message: &str, now: i64) -> RetryOutcome {
        let op = self;
        let timed_out = matches!(picked.action, PickUpAction::Terminate { .. });
        if op.phase != OperationPhase::Terminating && !timed_out {
            return op.retry.after_failure(message, op.retry_count, now);
        }
        let mut message = if timed_out {
            format!("{message}, triggered by controller sync timeout")
        } else {
            message.to_string()
        };
        if op.retry_count > 0 {
            message = format!("{message} (retried {} times).", op.retry_count);
        }
        RetryOutcome { retry: false, message, retry_count: op.retry_count, next_attempt_at: now }
    }
}

impl WaveEvent {
    /// The delay between sync waves, seconds: `ARGOCD_SYNC_WAVE_DELAY` of the controller as
    /// Go's `strconv.Atoi` reads it (`None`, empty or not a number: 2 s; a negative delay is
    /// none).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::WaveEvent;
    /// assert_eq!(WaveEvent::delay_seconds(None), 2);
    /// assert_eq!(WaveEvent::delay_seconds(Some("10")), 10);
    /// assert_eq!(WaveEvent::delay_seconds(Some("2s")), 2);
    /// assert_eq!(WaveEvent::delay_seconds(Some("-5")), 0);
    /// ```
    pub fn delay_seconds(setting: Option<&str>) -> i64 {
        match setting.filter(|s| !s.is_empty()).and_then(crate::vocabulary::go_atoi) {
            Some(n) => n.max(0),
            None => 2,
        }
    }
}

impl WaveEvent {
    /// When the next pass may run after this wave finished its wet run at `now` (unix
    /// seconds): after the wave delay ([`WaveEvent::delay_seconds`]), except after the sync's last
    /// wave, which is not followed by one.
    ///
    /// # Examples
    ///
    /// ```
    /// # use gitops_core::sync::{Phase, WaveEvent};
    /// # fn wave(last: bool) -> WaveEvent {
    /// #     serde_json::from_value(serde_json::json!({"phase": "Sync", "wave": 0, "last": last})).unwrap()
    /// # }
    /// assert_eq!(wave(false).next_pass_at(100, WaveEvent::delay_seconds(None)), 102);
    /// assert_eq!(wave(true).next_pass_at(100, WaveEvent::delay_seconds(None)), 100);
    /// ```
    pub fn next_pass_at(&self, now: i64, delay_seconds: i64) -> i64 {
        if self.last { now } else { now.saturating_add(delay_seconds.max(0)) }
    }
}
