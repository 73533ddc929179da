//! The host's backstop for untrusted code: whatever the deterministic counts miss (a string
//! comparison of two long strings is one VM instruction), an interrupt the host installs can
//! stop. The library reads no clock; the host decides what "too long" means.

use std::time::Duration;

/// A host's way to stop a script evaluation or a jq rule that runs too long by its own
/// measure. [`Interrupt::start`] is called when an evaluation starts; the check it returns is
/// asked now and then during it (every [`super::ScriptLimits::HOOK_INTERVAL`] Lua
/// instructions and at every charged library call).
///
/// A stop is reported apart from the deterministic budgets
/// ([`super::ScriptErrorKind::Interrupted`] for Lua), so a host can tell the two apart.
pub trait Interrupt: Send + Sync + std::fmt::Debug {
    /// A check for the evaluation that starts now.
    fn start(&self) -> Box<dyn InterruptCheck>;
}

/// The check of one evaluation: `Some(reason)` stops it. `Send`: the check is kept by the
/// Lua state running the evaluation, and a state can move to another thread between
/// evaluations.
pub trait InterruptCheck: Send {
    /// Whether to stop now, and why.
    fn stop(&self) -> Option<String>;
}

/// A wall-clock deadline per evaluation, read from a clock the host passes in (the library
/// itself never reads one). The CLI and `serve` install `Deadline::new(1 s, Instant::now)`.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::time::{Duration, Instant};
/// use gitops_core::script::{Deadline, Interrupt};
///
/// // A clock that has already run past any deadline stops at once.
/// let late = Deadline::new(Duration::from_secs(1), || Instant::now() + Duration::from_secs(5));
/// let _ = late; // `LuaEngine::with_interrupt(Arc::new(late))` installs it.
/// ```
pub struct Deadline<C> {
    limit: Duration,
    clock: C,
}

impl<C: Fn() -> std::time::Instant + Send + Sync + Clone + 'static> Deadline<C> {
    /// A deadline of `limit` after each evaluation starts, by `clock`.
    pub fn new(limit: Duration, clock: C) -> Self {
        Deadline { limit, clock }
    }
}

impl<C> std::fmt::Debug for Deadline<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deadline").field("limit", &self.limit).finish()
    }
}

impl<C: Fn() -> std::time::Instant + Send + Sync + Clone + 'static> Interrupt for Deadline<C> {
    fn start(&self) -> Box<dyn InterruptCheck> {
        let clock = self.clock.clone();
        let end = clock() + self.limit;
        Box::new(DeadlineCheck { end, clock, limit: self.limit })
    }
}

struct DeadlineCheck<C> {
    end: std::time::Instant,
    clock: C,
    limit: Duration,
}

impl<C: Fn() -> std::time::Instant + Send> InterruptCheck for DeadlineCheck<C> {
    fn stop(&self) -> Option<String> {
        ((self.clock)() >= self.end)
            .then(|| format!("deadline of {} ms exceeded", self.limit.as_millis()))
    }
}
