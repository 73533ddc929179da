//! The seam between [`assess`](super::assess) and a script engine: [`ScriptHealth`] and what
//! it returns, [`ScriptOutput`]. Public as `health::parts`.

use serde_json::Value;

use super::{HealthError, HealthResult};
use crate::object::ObjectRef;

/// What a health script returned, for [`ScriptHealth`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ScriptOutput {
    /// The health. `None` is Argo CD's *empty* health: the script returned `{}`, a list, or a
    /// table whose `status` or `message` is not a string. An empty health is final (no
    /// built-in rule or check is consulted) and counts as no health.
    pub health: Option<HealthResult>,
    /// The table's `deletionMessage`, empty when absent. Used only for an object being
    /// deleted.
    pub deletion_message: String,
    /// The script returned `nil` or nothing ([`ScriptOutput::nil`]).
    pub(crate) returned_nil: bool,
}

impl ScriptOutput {
    /// An output from its parts.
    pub fn new(health: Option<HealthResult>, deletion_message: impl Into<String>) -> Self {
        ScriptOutput { health, deletion_message: deletion_message.into(), returned_nil: false }
    }

    /// What a script that returned `nil` (or nothing) gives: no health of its own, and, as in
    /// Argo CD 3.6.2, [`assess`](super::assess) then runs the built-in check of the kind (not a built-in
    /// rule: the kind's script was found, it just gave no answer).
    pub fn nil() -> Self {
        ScriptOutput { returned_nil: true, ..ScriptOutput::default() }
    }
}

/// A source of health scripts: the seam between [`assess`](super::assess) and a script engine.
///
/// For Lua scripts (feature `lua`), the implementation is [`ScriptedHealth`](super::ScriptedHealth): its
/// [`HealthScripts`](super::HealthScripts) find the script for a kind, its [`crate::script::LuaEngine`]
/// runs it. A host with scripts of its own (another language, a precomputed answer) may
/// implement the trait too, as below.
///
/// [`health`](ScriptHealth::health) finds the script for the object's group and kind (Argo CD's
/// lookup: argocd-cm exact key, argocd-cm glob, built-in exact, built-in wildcard) and runs it
/// with `obj` as the global `obj`, its `os.time`/`os.date` reading `now`. It returns:
///
/// - `Ok(None)` when no script applies to the kind: [`assess`](super::assess) goes on to the built-in rule,
///   then the built-in check;
/// - `Ok(Some(output))` when a script ran: its result is final, even an empty one, except
///   [`ScriptOutput::nil`] (the script returned `nil`), which hands over to the built-in
///   check (not to the built-in rule), as in Argo CD;
/// - `Err(HealthError::Script { .. })` when the script failed: the object is Unknown with the
///   error's text.
///
/// It is called for objects being deleted too: a `deletionMessage` it returns is shown with
/// its status; without one, such an object is Progressing, `Pending deletion`.
///
/// # Examples
///
/// ```
/// use gitops_core::object::ObjectRef;
/// use gitops_core::health::parts::{ScriptHealth, ScriptOutput};
/// use gitops_core::health::{self, HealthContext, HealthError, HealthResult, HealthStatus};
///
/// /// Every `example.com/Widget` is Healthy.
/// struct Widgets;
/// impl ScriptHealth for Widgets {
///     fn health(&self, _obj: &serde_json::Value, object: &ObjectRef, _now: i64)
///         -> Result<Option<ScriptOutput>, HealthError> {
///         if object.group_kind() != "example.com/Widget" {
///             return Ok(None);
///         }
///         Ok(Some(ScriptOutput::new(Some(HealthResult::status(HealthStatus::Healthy)), "")))
///     }
/// }
///
/// let widget = serde_json::json!({
///     "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
/// let ctx = HealthContext::new(0).with_scripts(&Widgets);
/// let h = health::assess(&widget, &ctx).unwrap().unwrap();
/// assert_eq!(h.status, HealthStatus::Healthy);
/// ```
pub trait ScriptHealth: Send + Sync {
    /// Runs the script for `obj`, if there is one. `object` is `obj`'s identity; `now` is
    /// the time in unix seconds, as everywhere in the crate.
    fn health(
        &self,
        obj: &Value,
        object: &ObjectRef,
        now: i64,
    ) -> Result<Option<ScriptOutput>, HealthError>;
}
