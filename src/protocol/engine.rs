//! The calls from the protocol into the engines: one function per method.
//!
//! Each takes the server state (with the configured settings and the engines' caches) and the
//! checked params, and returns the same JSON the corresponding CLI command prints with
//! `--output json` (the types of [`super::output`], which the CLI prints too).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::config::{Application, Settings};
use crate::diff::{AppDiffInput, DiffError, diff_app, diff_app_owned};
use crate::health::HealthScripts;
use crate::health::{AppHealth, HealthContext, ResourceHealthInput};
use crate::object::Scopes;

use super::error::ProtocolError;
use super::output::{DecideOutput, DiffOutput, HealthOutput, PlanOutput};
use super::wire::{DEFAULT_MAX_REQUEST_BYTES, Limits, Method};
use crate::vocabulary::Timestamp;

/// What the server keeps between requests.
#[derive(Debug)]
pub(crate) struct State {
    /// The size limit on request lines, in bytes.
    pub(crate) max_request_bytes: u64,
    /// The limit the server started with, in force when `configure` sets none.
    pub(crate) initial_max_request_bytes: u64,
    /// The configuration set by the last successful `configure`.
    pub(crate) config: Config,
    /// What was built from it: script lookup, the Lua engine.
    pub(crate) engines: Engines,
    /// The host's backstop for each script evaluation and jq rule (`Server::with_interrupt`).
    pub(crate) interrupt: Option<std::sync::Arc<dyn crate::script::Interrupt>>,
    /// The open sessions (`app.open`).
    pub(crate) sessions: super::session::Sessions,
}

impl Default for State {
    fn default() -> Self {
        crate::schema::prepare();
        State {
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            initial_max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            config: Config::default(),
            engines: Engines::default(),
            interrupt: None,
            sessions: super::session::Sessions::default(),
        }
    }
}

/// The parsed configuration.
#[derive(Debug, Default)]
pub(crate) struct Config {
    /// From `argocd-cm`.
    pub(crate) settings: Settings,
    /// The default Application, when one was configured.
    pub(crate) app: Option<Application>,
    /// Lua health scripts by `<group>/<Kind>`.
    pub(crate) customizations: BTreeMap<String, String>,
    /// Limits of the engines.
    pub(crate) limits: Limits,
    /// The built-in health rules; `None` is on.
    pub(crate) builtin_rules: Option<bool>,
}

/// `diff` params after checking.
#[derive(Debug)]
pub(crate) struct DiffInput {
    pub(crate) desired: Vec<Value>,
    pub(crate) live: Vec<Value>,
    /// Left out: the configured one.
    pub(crate) app: Option<Application>,
    /// Left out: the configured one.
    pub(crate) settings: Option<Settings>,
    /// Server-side dry-run answers; given, server-side diff.
    pub(crate) dry_runs: Vec<Value>,
    /// The request's own schema of custom resources, compiled for it alone.
    pub(crate) openapi: Option<crate::schema::OpenApiSchema>,
    /// The app's AppProject, with the clusters the host passed.
    pub(crate) project: Option<crate::project::AppProject>,
}

/// `actions.list` and `actions.run` params after checking.
#[derive(Debug)]
pub(crate) struct ActionsInput {
    pub(crate) object: Value,
    /// The action to run; `None` lists the actions.
    pub(crate) action: Option<String>,
    pub(crate) parameters: BTreeMap<String, String>,
    pub(crate) settings: Option<Settings>,
    pub(crate) customizations: Option<BTreeMap<String, String>>,
    pub(crate) now: Option<Timestamp>,
    /// Secrets in results unmasked (`showSecrets`).
    pub(crate) reveal_secrets: bool,
}

/// `health` params after checking.
#[derive(Debug)]
pub(crate) struct HealthInput {
    pub(crate) objects: Vec<Value>,
    pub(crate) settings: Option<Settings>,
    pub(crate) customizations: Option<BTreeMap<String, String>>,
    pub(crate) now: Option<Timestamp>,
    pub(crate) condition_fallback: bool,
    /// Left out, the configured setting.
    pub(crate) builtin_rules: Option<bool>,
}

/// `plan` params after checking.
#[derive(Debug)]
pub(crate) struct PlanInput {
    pub(crate) desired: Vec<Value>,
    pub(crate) live: Vec<Value>,
    pub(crate) app: Option<Application>,
    pub(crate) settings: Option<Settings>,
    pub(crate) prune: bool,
    pub(crate) revision: Option<String>,
    pub(crate) now: Option<Timestamp>,
}

/// `step` params after checking.
#[derive(Debug)]
pub(crate) struct StepInput {
    pub(crate) request: crate::sync::SyncRequest,
    pub(crate) state: crate::sync::SyncState,
    pub(crate) observations: crate::sync::Observations,
}

/// `decide` params after checking.
#[derive(Debug)]
pub(crate) struct DecideInput {
    pub(crate) app: Application,
    pub(crate) desired: Vec<Value>,
    pub(crate) live: Vec<Value>,
    pub(crate) revisions: Vec<String>,
    pub(crate) now: Timestamp,
    pub(crate) settings: Option<Settings>,
    pub(crate) guard: Option<crate::sync::BlastRadiusGuard>,
    pub(crate) claims: Vec<Value>,
    /// The project's sync windows (all of them; those matching the app are checked).
    pub(crate) windows: Vec<crate::sync::SyncWindow>,
}

/// The methods this build answers, in protocol order.
pub(crate) fn available_methods() -> Vec<Method> {
    // Resource actions answer without Lua too: the built-in ones need none.
    Method::ALL.into_iter().collect()
}

/// What `configure` builds once for every later request.
#[derive(Debug, Default)]
pub(crate) struct Engines {
    /// The health scripts of the configured `argocd-cm` and customizations.
    scripts: HealthScripts,
    /// The action scripts of the configured `argocd-cm` and customizations.
    actions: crate::actions::ActionScripts,
    /// The configured app's ignore rules, compiled once (jq filters included).
    ignore: Option<crate::ignore::IgnoreNormalizer>,
    /// The Lua engine with the configured limits (its compiled scripts are cached).
    #[cfg(feature = "lua")]
    lua: crate::script::LuaEngine,
}

/// Installs a new configuration, compiling what later requests reuse. On error the previous
/// configuration stays.
pub(crate) fn engine_configure(state: &mut State, config: Config) -> Result<(), ProtocolError> {
    // The ignore rules are compiled once here and lent to every diff that uses the configured
    // app and settings; a bad rule (a jq expression that does not parse) is reported now.
    let rules = config.app.as_ref().map_or(&[][..], |a| &a.spec.ignore_differences[..]);
    let mut ignore =
        crate::ignore::IgnoreNormalizer::new(rules, &config.settings).map_err(|e| {
            ProtocolError::Engine {
                message: format!("ignore rules: {e}"),
                object: None,
                path: None,
            }
        })?;
    if let Some(i) = &state.interrupt {
        ignore = ignore.with_interrupt(std::sync::Arc::clone(i));
    }
    let engines = Engines {
        ignore: Some(ignore),
        scripts: scripts(&config.settings, &config.customizations),
        actions: crate::actions::ActionScripts::from_settings(&config.settings)
            .with_directory(&config.customizations),
        #[cfg(feature = "lua")]
        lua: crate::script::LuaEngine::new(lua_limits(&config)),
    };
    state.max_request_bytes =
        config.limits.max_request_bytes.unwrap_or(state.initial_max_request_bytes);
    state.config = config;
    state.engines = engines;
    Ok(())
}

#[cfg(feature = "lua")]
fn lua_limits(config: &Config) -> crate::script::ScriptLimits {
    let mut limits = crate::script::ScriptLimits::default();
    if let Some(n) = config.limits.lua_instructions {
        limits = limits.with_instructions(n);
    }
    if let Some(n) = config.limits.lua_request_instructions {
        limits = limits.with_request_instructions(n);
    }
    if let Some(n) = config.limits.lua_memory_bytes {
        limits = limits.with_memory_bytes(usize::try_from(n).unwrap_or(usize::MAX));
    }
    limits
}

/// The scripts of `argocd-cm` and of a customizations map (`<group>/<Kind>` or
/// `<group>/<Kind>/health.lua` → text).
fn scripts(
    settings: &crate::config::Settings,
    customizations: &BTreeMap<String, String>,
) -> HealthScripts {
    let files: BTreeMap<String, String> = customizations
        .iter()
        .map(|(k, v)| {
            let path =
                if k.ends_with("/health.lua") { k.clone() } else { format!("{k}/health.lua") };
            (path, v.clone())
        })
        .collect();
    HealthScripts::from_settings(settings).with_directory(&files)
}

/// `actions.list` and `actions.run`: the configured action scripts, or the request's own
/// (its `argocdCm` and `customizations`, each left out taking the configured one), on the warm
/// Lua engine; the built-in actions where no script replaces them. A failing action is an
/// `engine_error` naming the script and the object.
pub(crate) fn engine_actions(
    state: &mut State,
    input: ActionsInput,
) -> Result<Value, ProtocolError> {
    use crate::actions::{ActionError, ActionScripts, Actions};

    let now = input.now.as_ref().map_or(0, |t| t.unix_seconds());
    let scripts = if input.settings.is_some() || input.customizations.is_some() {
        ActionScripts::from_settings(input.settings.as_ref().unwrap_or(&state.config.settings))
            .with_directory(input.customizations.as_ref().unwrap_or(&state.config.customizations))
    } else {
        state.engines.actions.clone()
    };
    let actions = Actions::new(scripts).with_reveal_secrets(input.reveal_secrets);
    #[cfg(feature = "lua")]
    let actions = actions.with_engine(request_engine(state));
    let failed = |e: ActionError| ProtocolError::Engine {
        message: e.to_string(),
        object: Some(Box::new(e.object().clone())),
        path: None,
    };
    match &input.action {
        None => {
            let found = actions.discover(&input.object, now).map_err(failed)?;
            to_result(&super::output::ActionsListOutput(found))
        }
        Some(name) => {
            let r = actions.run(&input.object, name, &input.parameters, now).map_err(failed)?;
            to_result(&super::output::ActionsRunOutput::new(&r, &input.object))
        }
    }
}

pub(crate) fn to_result(output: &impl Serialize) -> Result<Value, ProtocolError> {
    serde_json::to_value(output).map_err(|e| ProtocolError::Engine {
        message: format!("cannot serialize the result: {e}"),
        object: None,
        path: None,
    })
}

/// `diff`: as `gitops-core diff --output json`.
pub(crate) fn engine_diff(state: &mut State, mut input: DiffInput) -> Result<Value, ProtocolError> {
    let default_app = Application::default();
    let mut scopes = Scopes::builtin();
    scopes.add_crds(input.desired.iter().chain(&input.live));
    // Nothing reads the request's objects after the comparison: they are handed over, so
    // each is the working copy of its own comparison (`diff_app_owned`), not copied.
    let (desired, live) = (std::mem::take(&mut input.desired), std::mem::take(&mut input.live));
    let app = input.app.as_ref().or(state.config.app.as_ref()).unwrap_or(&default_app);
    let settings = input.settings.as_ref().unwrap_or(&state.config.settings);
    let mut diff_input = request_diff_input(state, &[], &[], app, settings, &scopes);
    // As `gitops-core diff --dry-run`: dry-run answers turn server-side diff on.
    if !input.dry_runs.is_empty() {
        diff_input = diff_input.with_dry_runs(&input.dry_runs);
    }
    if let Some(openapi) = &input.openapi {
        diff_input = diff_input.with_openapi(openapi);
    }
    if let Some(project) = &input.project {
        diff_input = diff_input.with_project(project);
    }
    // The compiled rules serve only requests that bring neither their own app nor settings.
    if input.app.is_none()
        && input.settings.is_none()
        && let Some(rules) = &state.engines.ignore
    {
        diff_input = diff_input.with_ignore_rules(rules);
    }
    let result = diff_app_owned(&diff_input, desired, live).map_err(diff_error)?;
    to_result(&DiffOutput::new(&result))
}

fn diff_error(e: DiffError) -> ProtocolError {
    let (object, path) = match &e {
        DiffError::Patch { object, path, .. }
        | DiffError::DryRun { object, path, .. }
        | DiffError::ManagedFields { object, path, .. }
        | DiffError::Schema { object, path, .. }
        | DiffError::Defaults { object, path, .. } => (Some(object.clone()), Some(path.clone())),
        DiffError::MissingDryRun { object } => (Some(object.clone()), None),
        _ => (None, None),
    };
    ProtocolError::Engine { message: format!("comparing objects: {e}"), object, path }
}

/// `health`: as `gitops-core health --output json`.
pub(crate) fn engine_health(state: &mut State, input: HealthInput) -> Result<Value, ProtocolError> {
    let now = input.now.as_ref().map_or(0, |t| t.unix_seconds());
    let own_scripts = (input.settings.is_some() || input.customizations.is_some()).then(|| {
        scripts(
            input.settings.as_ref().unwrap_or(&state.config.settings),
            input.customizations.as_ref().unwrap_or(&state.config.customizations),
        )
    });
    let scripts = own_scripts.as_ref().unwrap_or(&state.engines.scripts);
    let builtin_rules = input.builtin_rules.or(state.config.builtin_rules).unwrap_or(true);
    let ctx = HealthContext::new(now)
        .with_condition_fallback(input.condition_fallback)
        .with_builtin_rules(builtin_rules);
    #[cfg(feature = "lua")]
    // One request, one budget for all its scripts, and the host's backstop per evaluation.
    // A clone of the scripts is cheap: their tables are shared.
    let lua = crate::health::ScriptedHealth::new(scripts.clone(), request_engine(state));
    #[cfg(feature = "lua")]
    let ctx = if scripts.is_empty() { ctx } else { ctx.with_scripts(&lua) };
    #[cfg(not(feature = "lua"))]
    if !scripts.is_empty() {
        return Err(ProtocolError::Engine {
            message: "health scripts are not available in this build (the `lua` feature is off)"
                .into(),
            object: None,
            path: None,
        });
    }
    let inputs: Vec<ResourceHealthInput> = input
        .objects
        .iter()
        .filter_map(|obj| ResourceHealthInput::from_objects(None, Some(obj), &ctx))
        .collect();
    let app = AppHealth::aggregate(&inputs);
    if let Some(e) = app.interrupted() {
        return Err(ProtocolError::Engine {
            message: e.to_string(),
            object: Some(Box::new(e.object().clone())),
            path: None,
        });
    }
    to_result(&HealthOutput::new(&app))
}

/// `plan`: as `gitops-core plan --output json`: the app's diff (for `ApplyOutOfSyncOnly`),
/// then the ordered sync tasks.
pub(crate) fn engine_plan(state: &mut State, input: PlanInput) -> Result<Value, ProtocolError> {
    use crate::sync::{LiveObject, Observations, SyncRequest};
    let default_app = Application::default();
    let app = input.app.as_ref().or(state.config.app.as_ref()).unwrap_or(&default_app);
    let settings = input.settings.as_ref().unwrap_or(&state.config.settings);
    let mut scopes = Scopes::builtin();
    scopes.add_crds(input.desired.iter().chain(&input.live));
    let diff_input = request_diff_input(state, &input.desired, &input.live, app, settings, &scopes);
    let diff = diff_app(&diff_input).map_err(diff_error)?;
    let started_at = input.now.as_ref().map_or(0, |t| t.unix_seconds());
    let revision = input.revision.as_deref().unwrap_or("");
    let mut request = SyncRequest::for_app(app, input.desired.clone(), revision, started_at);
    request.scopes = scopes;
    request.prune |= input.prune;
    request.modified = Some(SyncRequest::modified_of(&diff));
    let observations = Observations {
        live: input.live.iter().map(|o| LiveObject::new(o.clone(), None)).collect(),
        ..Observations::default()
    };
    to_result(&PlanOutput::new(&request.plan(&observations)))
}

/// `step`: the next actions of a sync operation, or its outcome (the library's `sync::Step`
/// as JSON).
pub(crate) fn engine_step(_state: &mut State, input: StepInput) -> Result<Value, ProtocolError> {
    let step = input.request.step(&input.state, &input.observations);
    to_result(&step)
}

/// `decide`: as `gitops-core decide --output json`: the app's diff gives its sync status,
/// then Argo CD's automated-sync decision, and the blast-radius guard when the params have
/// one (reading the live objects and the claims).
pub(crate) fn engine_decide(state: &mut State, input: DecideInput) -> Result<Value, ProtocolError> {
    use crate::sync::AutoSyncInput;
    let settings = input.settings.as_ref().unwrap_or(&state.config.settings);
    let mut scopes = Scopes::builtin();
    scopes.add_crds(input.desired.iter().chain(&input.live));
    let diff_input =
        request_diff_input(state, &input.desired, &input.live, &input.app, settings, &scopes);
    let diff = diff_app(&diff_input).map_err(diff_error)?;
    // The controller does not process an app with skip-reconcile, and looks at auto-sync only
    // when the project's windows allow it.
    if crate::sync::Decision::skips_reconcile(&input.app) {
        return to_result(&DecideOutput::blocked(
            crate::sync::Decision::SKIP_RECONCILE_MESSAGE.into(),
        ));
    }
    if let Some(message) = crate::sync::SyncWindows::auto_sync_blocked(
        &input.windows,
        &input.app,
        input.now.unix_seconds(),
    ) {
        return to_result(&DecideOutput::blocked(message));
    }
    let (status, resources) = crate::sync::ResourceStatus::of_diff(&diff);
    let mut auto = AutoSyncInput::new(status, resources, input.revisions, input.now.unix_seconds());
    if input.guard.is_some() {
        auto.guard = input.guard;
        auto.live = input.live.iter().chain(&input.claims).cloned().collect();
    }
    to_result(&DecideOutput::new(&auto.decide(&input.app)))
}

/// The Lua engine for one request: one budget for all its scripts, and the host's backstop
/// per evaluation.
#[cfg(feature = "lua")]
fn request_engine(state: &State) -> crate::script::LuaEngine {
    engine_for_request(&state.engines, state.interrupt.as_ref())
}

#[cfg(feature = "lua")]
fn engine_for_request(
    engines: &Engines,
    interrupt: Option<&std::sync::Arc<dyn crate::script::Interrupt>>,
) -> crate::script::LuaEngine {
    match interrupt {
        Some(i) => engines.lua.for_request().with_interrupt(std::sync::Arc::clone(i)),
        None => engines.lua.for_request(),
    }
}

/// Runs `f` with the configured health context at `now` (unix seconds): the configured
/// scripts on the warm Lua engine (one budget for the request, the host's backstop per
/// evaluation) and the configured built-in rules. Sessions assess health with it.
pub(crate) fn with_configured_health<R>(
    engines: &Engines,
    config: &Config,
    interrupt: Option<&std::sync::Arc<dyn crate::script::Interrupt>>,
    now: i64,
    f: impl FnOnce(&HealthContext<'_>) -> R,
) -> Result<R, ProtocolError> {
    let ctx = HealthContext::new(now).with_builtin_rules(config.builtin_rules.unwrap_or(true));
    let scripts = &engines.scripts;
    if scripts.is_empty() {
        return Ok(f(&ctx));
    }
    #[cfg(feature = "lua")]
    {
        let engine = engine_for_request(engines, interrupt);
        let lua = crate::health::ScriptedHealth::new(scripts.clone(), engine);
        Ok(f(&ctx.with_scripts(&lua)))
    }
    #[cfg(not(feature = "lua"))]
    {
        let _ = interrupt;
        Err(ProtocolError::Engine {
            message: "health scripts are not available in this build (the `lua` feature is off)"
                .into(),
            object: None,
            path: None,
        })
    }
}

/// A request's comparison: the answer carries the patches and statuses, not the objects, and
/// the host's backstop watches its jq rules.
fn request_diff_input<'a>(
    state: &'a State,
    desired: &'a [Value],
    live: &'a [Value],
    app: &'a Application,
    settings: &'a Settings,
    scopes: &'a Scopes,
) -> AppDiffInput<'a> {
    let input = AppDiffInput::new(desired, live, app, settings, scopes).with_objects(false);
    match &state.interrupt {
        Some(i) => input.with_interrupt(i),
        None => input,
    }
}
