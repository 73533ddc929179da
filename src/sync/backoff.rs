//! The self-heal backoff (Argo CD 3.6.2 controller/appcontroller.go
//! `selfHealRemainingBackoff`) and the retry strategy (pkg/apis/application/v1alpha1/types.go
//! `RetryStrategy.NextRetryAt`).

use serde::{Deserialize, Serialize};

use crate::config::RetryStrategy;
use crate::vocabulary::{GoDuration, TimeError, format_rfc3339};

/// The controller's self-heal settings (`controller.self.heal.*` in `argocd-cmd-params-cm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct SelfHealSettings {
    /// `controller.self.heal.timeout.seconds`: the fixed delay used when the backoff is off.
    pub timeout_seconds: i64,
    /// `controller.self.heal.backoff.timeout.seconds`: the first delay; 0 turns the backoff off.
    pub backoff_timeout_seconds: i64,
    /// `controller.self.heal.backoff.factor`.
    pub backoff_factor: i64,
    /// `controller.self.heal.backoff.cap.seconds`.
    pub backoff_cap_seconds: i64,
}

impl Default for SelfHealSettings {
    fn default() -> Self {
        SelfHealSettings {
            timeout_seconds: 0,
            backoff_timeout_seconds: 2,
            backoff_factor: 3,
            backoff_cap_seconds: 300,
        }
    }
}

impl SelfHealSettings {
    /// The delay before the self-heal attempt after `attempts` earlier ones, in seconds:
    /// 0, then the k8s `Backoff.Step()` sequence D, D·F, D·F², … where a value above the cap
    /// becomes the cap (only values after the first are capped).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::SelfHealSettings;
    /// let s = SelfHealSettings::default();
    /// let delays: Vec<i64> = (0..8).map(|n| s.delay(n)).collect();
    /// assert_eq!(delays, [0, 2, 6, 18, 54, 162, 300, 300]);
    /// ```
    pub fn delay(&self, attempts: u32) -> i64 {
        if self.backoff_timeout_seconds == 0 {
            return self.timeout_seconds;
        }
        if attempts == 0 {
            return 0;
        }
        let mut d = self.backoff_timeout_seconds;
        let cap = self.backoff_cap_seconds;
        let mut capped = false;
        for _ in 1..attempts {
            if capped {
                break;
            }
            if self.backoff_factor == 0 {
                break;
            }
            let next = d.saturating_mul(self.backoff_factor);
            if cap > 0 && next > cap {
                d = cap;
                capped = true;
            } else if next == d {
                // A factor of 1 (or saturation): the value no longer changes, so stop early
                // rather than loop over a large attempt count.
                break;
            } else {
                d = next;
            }
        }
        d
    }

    /// `selfHealRemainingBackoff`: seconds left before self-heal may run, `delay(attempts)`
    /// minus the time since the last operation finished (0 when it has not finished).
    /// Self-heal runs when this is ≤ 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::SelfHealSettings;
    /// let mut s = SelfHealSettings::default();
    /// s.backoff_cap_seconds = 120;
    /// assert_eq!(s.remaining(5, Some(100), 100), 120);
    /// assert_eq!(s.remaining(40, Some(40), 100), 60);
    /// ```
    pub fn remaining(&self, attempts: u32, finished_at: Option<i64>, now: i64) -> i64 {
        let elapsed = finished_at.map_or(0, |f| now.saturating_sub(f));
        self.delay(attempts).saturating_sub(elapsed)
    }
}

/// The controller's answer to a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
#[must_use]
pub struct RetryOutcome {
    /// Retry (the phase goes back to Running) or give up (the phase stays Failed/Error).
    pub retry: bool,
    /// The operation message.
    pub message: String,
    /// The retry count after this decision.
    pub retry_count: i64,
    /// When the retry really starts (unix seconds), for `retry`.
    pub next_attempt_at: i64,
}

/// A retry strategy with its defaults applied (duration 5 s, factor 2, max 3 min).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Retry {
    /// Retries allowed; negative is unlimited.
    pub limit: i64,
    /// The first delay, nanoseconds.
    pub duration_ns: i64,
    /// The multiplier.
    pub factor: i64,
    /// The largest delay, nanoseconds; ≤ 0 is no cap.
    pub max_duration_ns: i64,
}

impl Retry {
    /// Reads `syncPolicy.retry`. `None` gives limit `default_limit` (5 for an automated sync,
    /// 0 for a manual one).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::Retry;
    /// let r = Retry::from_strategy(None, 5).unwrap();
    /// let delays: Vec<i64> = [0, 1, 2, 3, 4, 80].iter().map(|n| r.delay_seconds(*n)).collect();
    /// assert_eq!(delays, [5, 10, 20, 40, 80, 180]);
    /// assert_eq!(r.limit, 5);
    /// ```
    pub fn from_strategy(
        s: Option<&RetryStrategy>,
        default_limit: i64,
    ) -> Result<Retry, TimeError> {
        let mut r = Retry {
            limit: default_limit,
            duration_ns: 5_000_000_000,
            factor: 2,
            max_duration_ns: 180_000_000_000,
        };
        if let Some(s) = s {
            r.limit = s.limit.unwrap_or(0);
            if let Some(b) = &s.backoff {
                // An empty string is unset, as Argo CD reads it.
                if let Some(d) = b.duration.as_deref().filter(|d| !d.is_empty()) {
                    r.duration_ns = GoDuration::parse_retry(d)?.0;
                }
                if let Some(f) = b.factor {
                    r.factor = f;
                }
                if let Some(m) = b.max_duration.as_deref().filter(|m| !m.is_empty()) {
                    r.max_duration_ns = GoDuration::parse_retry(m)?.0;
                }
            }
        }
        Ok(r)
    }

    /// Whether another retry is allowed after `retry_count` retries.
    pub fn allows(&self, retry_count: i64) -> bool {
        self.limit < 0 || retry_count < self.limit
    }

    /// `min(maxDuration, duration · factor^count)`, nanoseconds (a float power, truncated).
    pub fn delay(&self, count: i64) -> GoDuration {
        let raw = self.duration_ns as f64 * (self.factor as f64).powf(count as f64);
        let raw = if raw.is_finite() && raw < i64::MAX as f64 { raw as i64 } else { i64::MAX };
        if self.max_duration_ns > 0 && raw > self.max_duration_ns {
            GoDuration(self.max_duration_ns)
        } else {
            GoDuration(raw)
        }
    }

    /// [`Retry::delay`] in whole seconds.
    pub fn delay_seconds(&self, count: i64) -> i64 {
        self.delay(count).seconds()
    }

    /// What the controller does when an attempt ends Failed or Error after `retry_count`
    /// retries (not for terminated operations): retry (phase back to Running, the count
    /// incremented, `finishedAt = now`) with the message
    /// `<msg>. Retrying attempt #<n> at <time>.` (the time in RFC 3339, UTC, as Argo CD 3.6.2
    /// writes it, computed with the old count), or give up, adding
    /// ` (retried <n> times).` when there were retries.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::sync::Retry;
    /// let r = Retry::from_strategy(None, 5).unwrap();
    /// let next = r.after_failure("boom", 0, 1_700_000_000);
    /// assert!(next.retry);
    /// assert_eq!(next.message, "boom. Retrying attempt #1 at 2023-11-14T22:13:25Z.");
    /// assert_eq!(next.retry_count, 1);
    /// // The controller waits for the incremented count: 10 s, not the 5 s of the message.
    /// assert_eq!(next.next_attempt_at, 1_700_000_010);
    /// let last = r.after_failure("boom", 5, 1_700_000_000);
    /// assert_eq!((last.retry, last.message.as_str()), (false, "boom (retried 5 times)."));
    /// ```
    pub fn after_failure(&self, message: &str, retry_count: i64, now: i64) -> RetryOutcome {
        if self.allows(retry_count) {
            let shown = self.next_retry_at(now, retry_count);
            let count = retry_count + 1;
            RetryOutcome {
                retry: true,
                message: format!(
                    "{message}. Retrying attempt #{count} at {}.",
                    format_rfc3339(shown)
                ),
                retry_count: count,
                next_attempt_at: self.next_retry_at(now, count),
            }
        } else {
            let message = if retry_count > 0 {
                format!("{message} (retried {retry_count} times).")
            } else {
                message.to_string()
            };
            RetryOutcome { retry: false, message, retry_count, next_attempt_at: now }
        }
    }

    /// `NextRetryAt(base, count)` in unix seconds. The controller gates the n-th retry with the
    /// already incremented count, so it really waits one factor step longer than its message.
    pub fn next_retry_at(&self, base: i64, count: i64) -> i64 {
        base.saturating_add(self.delay_seconds(count))
    }
}
