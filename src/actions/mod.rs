//! Resource actions: Argo CD's Lua `discovery.lua` and `action.lua` scripts, run on the health
//! sandbox, and the built-in actions of the kinds Argo CD 3.6.2 ships scripts for, with their
//! answers as data.
//!
//! A kind may offer actions (`restart` a Deployment, `resume` a Rollout, `create-job` from a
//! CronJob, `scale` with a parameter). [`ActionScripts`] finds the scripts of a kind in
//! `argocd-cm` (`resource.customizations.actions.<group_Kind>`: `discovery.lua`,
//! `definitions`, `mergeBuiltinActions`) and in a `resource_customizations/`-style directory,
//! and, where no directory folder replaces them, the built-in actions
//! ([`ActionScripts::builtin_actions`]: every action Argo CD 3.6.2 ships, in Rust, giving what its script
//! gives on every input). [`Actions`] runs them (scripts need the `lua` feature; the built-ins
//! do not):
//!
//! - [`Actions::discover`] gives the actions an object offers ([`ResourceAction`]: name,
//!   disabled, icon class, display name, parameters), sorted by name;
//! - [`Actions::run`] runs one action and gives the impacted resources
//!   ([`ImpactedResource`]): a `patch` of the object itself, as RFC 6902 operations against
//!   the input (the new object is made on demand: [`ImpactedResource::apply_to`]), or a
//!   `create` of a new object, checked against an [`ActionPolicy`]. A built-in action builds
//!   its operations from the fields it changes, without copying the object; a script's result
//!   is read once into the same type.
//!
//! Nothing is applied: the host patches or creates what it gets back. Scripts run with the
//! limits of health scripts ([`crate::script::ScriptLimits`]) and without the open libraries,
//! as Argo CD's API server runs them: `require("os")` gives the safe `os`, whose clock is the
//! `now` the host passes; parameters arrive as the `actionParams` table. A built-in reads the
//! same `now` and parameters, and its result is read exactly as a script's.
//!
//! [`Actions::run_tests`] runs an `action_test.yaml` in Argo CD's format and compares as Argo
//! CD's own test does.

mod kinds;
mod lookup;
mod result;
mod run;
mod testing;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diff::PatchOp;
use crate::object::ObjectRef;

pub use lookup::{ActionScript, ActionScripts};
pub use run::Actions;
pub use testing::{ActionTestCase, ActionTestError, ActionTestKind};

impl ActionScripts {
    /// The built-in actions, by `<group>/<Kind>` (`Kind` for the core group): every action Argo
    /// CD 3.6.2 ships a script for, in Rust (`src/actions/kinds/`). They answer where no script of
    /// `argocd-cm` or of a directory replaces them ([`ActionScripts`]) and need no Lua.
    ///
    /// ```
    /// let all = gitops_core::actions::ActionScripts::builtin_actions();
    /// assert_eq!(all["apps/Deployment"], ["pause", "restart", "resume", "scale"]);
    /// assert_eq!(all["batch/CronJob"], ["create-job", "resume", "suspend"]);
    /// ```
    pub fn builtin_actions() -> BTreeMap<String, Vec<String>> {
        kinds::all()
            .into_iter()
            .map(|k| (k.name(), k.actions.iter().map(|(n, _)| (*n).to_string()).collect()))
            .collect()
    }
}

/// An action an object offers (Argo CD's `ResourceAction`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ResourceAction {
    /// The action's name (the key of the discovery table, or its `name` field).
    pub name: String,
    /// Whether the action is offered but cannot be run now.
    pub disabled: bool,
    /// The icon's CSS class (`fa fa-fw fa-redo`).
    pub icon_class: String,
    /// The name shown to users; empty when the UI shows `name`.
    pub display_name: String,
    /// The parameters the action takes.
    pub params: Vec<ResourceActionParam>,
}

impl ResourceAction {
    /// An enabled action with nothing else set.
    pub fn named(name: impl Into<String>) -> Self {
        ResourceAction { name: name.into(), ..ResourceAction::default() }
    }
}

/// A parameter of an action (Argo CD 3.6's `ResourceActionParam`: only its name; the
/// `value`, `type` and `default` a discovery script may still return are not read, as
/// Argo CD 3.6 reads none of them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(default)]
#[non_exhaustive]
pub struct ResourceActionParam {
    /// The name the script reads it by (`actionParams[name]`).
    pub name: String,
}

/// What an action does to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Operation {
    /// Patch the object the action ran on.
    Patch,
    /// Create a new object.
    Create,
}

/// One resource an action changes, as Argo CD's API server uses it: a `patch` is the patch
/// (RFC 6902 operations against the object the action ran on), a `create` the object.
///
/// A patch does not carry the new object (Argo CD 3.6 sends the API server a patch too):
/// [`ImpactedResource::apply_to`] makes it from the input when a host wants it.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use gitops_core::actions::{ActionScripts, Actions, Operation};
///
/// let obj = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
///     "metadata": {"name": "api", "namespace": "shop"}, "spec": {"replicas": 1}});
/// let params = BTreeMap::from([("replicas".to_string(), "3".to_string())]);
/// let done = Actions::new(ActionScripts::new()).run(&obj, "scale", &params, 0).unwrap();
/// let r = &done.resources[0];
/// assert_eq!(r.operation, Operation::Patch);
/// assert_eq!(serde_json::to_value(&r.patch).unwrap(),
///     serde_json::json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]));
/// assert_eq!(r.resource, None);
/// assert_eq!(r.apply_to(&obj).unwrap()["spec"]["replicas"], 3);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ImpactedResource {
    /// `patch` or `create`.
    pub operation: Operation,
    /// For `create`, the object to create. For `patch`, `None`, except for a Secret whose
    /// values are masked ([`Actions::with_reveal_secrets`]): the masked object, which the
    /// masked patch does not give from the input.
    pub resource: Option<Value>,
    /// For `patch`, the RFC 6902 operations turning the input object into the new one;
    /// empty for `create`.
    pub patch: Vec<PatchOp>,
}

impl ImpactedResource {
    /// The resource as the action leaves it: `resource` when there is one (a `create`, a
    /// masked Secret), else `input` (the object the action ran on) with `patch` applied.
    /// `None` when the patch does not apply to `input`, which is then not that object.
    pub fn apply_to(&self, input: &Value) -> Option<Value> {
        if let Some(r) = &self.resource {
            return Some(r.clone());
        }
        let ops: json_patch::Patch =
            serde_json::from_value(serde_json::to_value(&self.patch).ok()?).ok()?;
        let mut out = input.clone();
        json_patch::patch(&mut out, &ops).ok()?;
        Some(out)
    }
}

/// The outcome of one action: the script that ran and the resources it changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ActionResult {
    /// The action's name.
    pub action: String,
    /// The script that ran (see [`ActionScript::name`]).
    pub script: String,
    /// The impacted resources, in the order the script listed them.
    pub resources: Vec<ImpactedResource>,
}

/// What an action may create: Argo CD leaves this to the project's allowed kinds and the
/// user's permissions; a host passes its own here.
///
/// # Examples
///
/// ```
/// use gitops_core::actions::ActionPolicy;
/// let p = ActionPolicy::default();
/// assert_eq!(p.creatable, ["batch/Job", "argoproj.io/Workflow"]);
/// let p = p.with_creatable(["batch/Job", "*.example.com/*"]).with_same_namespace(false);
/// assert!(!p.same_namespace);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ActionPolicy {
    /// `group/Kind` globs (`Kind` for the core group) a `create` may make. Default: the kinds
    /// Argo CD's own create actions make, `batch/Job` and `argoproj.io/Workflow`.
    pub creatable: Vec<String>,
    /// Whether a created object with a namespace must be in the source object's namespace
    /// (default true).
    pub same_namespace: bool,
}

impl Default for ActionPolicy {
    fn default() -> Self {
        ActionPolicy {
            creatable: vec!["batch/Job".into(), "argoproj.io/Workflow".into()],
            same_namespace: true,
        }
    }
}

impl ActionPolicy {
    /// The same policy with other creatable kinds.
    #[must_use]
    pub fn with_creatable<I, S>(mut self, kinds: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.creatable = kinds.into_iter().map(Into::into).collect();
        self
    }

    /// The same policy with the namespace rule on or off.
    #[must_use]
    pub fn with_same_namespace(mut self, on: bool) -> Self {
        self.same_namespace = on;
        self
    }
}

/// Why an action could not be discovered or run. Every variant names the object; script
/// variants name the script, and result variants the RFC 6901 pointer into the result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ActionError {
    /// The object's kind has no script for the action.
    #[error("no action `{action}` for {object}")]
    NotFound {
        /// The object.
        object: Box<ObjectRef>,
        /// The action asked for.
        action: String,
    },
    /// The script failed: it does not compile, raised an error or hit a limit. `reason` is
    /// the text Argo CD shows (for `error("...", 0)`, exactly the script's message).
    #[error("action script {script} on {object}: {reason}")]
    Script {
        /// The script (see [`ActionScript::name`]).
        script: String,
        /// The object.
        object: Box<ObjectRef>,
        /// What went wrong.
        reason: String,
    },
    /// The script's result cannot be used.
    #[error("action script {script} on {object}: result at `{pointer}`: {message}")]
    Result {
        /// The script.
        script: String,
        /// The object.
        object: Box<ObjectRef>,
        /// RFC 6901 pointer into the script's result (empty for the whole result).
        pointer: String,
        /// What is wrong.
        message: String,
    },
}

impl ActionError {
    /// The object the action was asked of.
    pub fn object(&self) -> &ObjectRef {
        match self {
            ActionError::NotFound { object, .. }
            | ActionError::Script { object, .. }
            | ActionError::Result { object, .. } => object,
        }
    }

    /// The error text without the script and object: what Argo CD reports (a script's own
    /// `error(...)` message, or what is wrong with the result).
    pub fn reason(&self) -> String {
        match self {
            ActionError::NotFound { action, object } => {
                format!("no action `{action}` for {}", object.group_kind())
            }
            ActionError::Script { reason, .. } => reason.clone(),
            ActionError::Result { pointer, message, .. } => {
                format!("result at `{pointer}`: {message}")
            }
        }
    }
}
