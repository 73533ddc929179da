//! The sans-IO server: request lines in, response lines out, with the configured state kept
//! between requests.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::config::{Application, ConfigError, Settings};
use crate::diff::AppDiffInput;
use crate::health::HealthContext;
use crate::object::{ObjectRef, ParseError, escape_pointer_token, type_name};
use crate::reconcile::{PreparedApp, Reconciled};

use super::controller;
use super::engine::{
    self, ActionsInput, Config, DecideInput, DiffInput, HealthInput, PlanInput, State, StepInput,
};
use super::error::ProtocolError;
use super::session::{
    AppCloseParams, AppCloseResult, AppDesiredParams, AppOpenParams, AppUpdateParams,
    DEFAULT_MAX_SESSION_OBJECTS, DEFAULT_MAX_SESSIONS, SessionOutput,
};
use super::wire::{
    ActionsListParams, ActionsRunParams, BuiltinHealth, ConfigureParams, ConfigureResult,
    DecideParams, DiffParams, HealthParams, HelloParams, HelloResult, Method, PROTOCOL_VERSION,
    PlanParams, Request, Response, StepParams,
};
use crate::vocabulary::Timestamp;

/// A `serve` protocol server without I/O: give it each line read, write out each line it
/// returns.
///
/// It keeps what `configure` set (the parsed `argocd-cm`, the default Application, the
/// scripts and limits, and the engines' caches) for every later request.
///
/// # Examples
///
/// ```
/// use gitops_core::protocol::Server;
///
/// let mut server = Server::new();
/// let out = server.handle_line(br#"{"id": 1, "method": "configure", "params": {}}"#).unwrap();
/// let response: serde_json::Value = serde_json::from_str(&out).unwrap();
/// assert_eq!(response["result"]["protocolVersion"], 2);
///
/// // A bad line gets an error response, and the server carries on.
/// let out = server.handle_line(b"{not json").unwrap();
/// assert!(out.starts_with(r#"{"id":null,"error":{"code":"parse_error","#));
///
/// // Blank lines get no response.
/// assert_eq!(server.handle_line(b"  \r"), None);
/// ```
#[derive(Debug, Default)]
pub struct Server {
    state: State,
}

/// A method handler: reads the params, answers with the result.
type Handler = fn(&mut State, Value) -> Result<Value, ProtocolError>;

fn handler(method: Method) -> Handler {
    match method {
        Method::Diff => handle_diff,
        Method::Health => handle_health,
        Method::Plan => handle_plan,
        Method::Step => handle_step,
        Method::Decide => handle_decide,
        Method::Configure => handle_configure,
        Method::Hello => handle_hello,
        Method::ActionsList => handle_actions_list,
        Method::ActionsRun => handle_actions_run,
        Method::AppOpen => handle_app_open,
        Method::AppUpdate => handle_app_update,
        Method::AppDesired => handle_app_desired,
        Method::AppClose => handle_app_close,
        Method::Orphans => handle_orphans,
        Method::NeedsRefresh => handle_needs_refresh,
        Method::DeletionStep => handle_deletion_step,
        Method::Operation => handle_operation,
    }
}

impl Server {
    /// The version of the protocol this build speaks. See the module docs for what changes it.
    pub const PROTOCOL_VERSION: u32 = super::wire::PROTOCOL_VERSION;

    /// The default limit on the size of one request line, in bytes (16 MiB), newline excluded.
    pub const DEFAULT_MAX_REQUEST_BYTES: u64 = super::wire::DEFAULT_MAX_REQUEST_BYTES;

    /// The default limit on open sessions.
    pub const DEFAULT_MAX_SESSIONS: u64 = super::session::DEFAULT_MAX_SESSIONS;

    /// The default limit on the objects (desired and live) of one session.
    pub const DEFAULT_MAX_SESSION_OBJECTS: u64 = super::session::DEFAULT_MAX_SESSION_OBJECTS;

    /// The JSON Schema (draft 2020-12) of the protocol: one line is a `Request` or a `Response`
    /// (see `$defs`), and `$defs` also holds each method's params and result.
    ///
    /// The same document is checked in as `schema/protocol.schema.json`.
    ///
    /// # Examples
    ///
    /// ```
    /// let schema = gitops_core::protocol::Server::json_schema();
    /// assert_eq!(schema["x-protocolVersion"], 2);
    /// assert!(schema["$defs"]["DiffParams"]["properties"]["desired"].is_object());
    /// ```
    pub fn json_schema() -> Value {
        super::schema::json_schema()
    }

    /// A server with the default configuration and size limit.
    pub fn new() -> Server {
        Server::default()
    }

    /// A server whose request lines may be at most `limit` bytes long (newline excluded;
    /// at least 1). `configure` can change the limit later.
    pub fn with_max_request_bytes(limit: u64) -> Server {
        let mut server = Server::default();
        server.state.max_request_bytes = limit.max(1);
        server.state.initial_max_request_bytes = limit.max(1);
        server
    }

    /// The same server with the host's backstop for untrusted code: asked during every Lua
    /// script evaluation, which it may stop (`gitops-core serve` installs a 1 s wall-clock
    /// [`crate::script::Deadline`]). The library reads no clock itself.
    #[must_use]
    pub fn with_interrupt(
        mut self,
        interrupt: std::sync::Arc<dyn crate::script::Interrupt>,
    ) -> Server {
        self.state.interrupt = Some(interrupt);
        self
    }

    /// The size limit now in force: a host reading lines discards a longer one and answers it
    /// with [`Server::too_large`].
    pub fn max_request_bytes(&self) -> u64 {
        self.state.max_request_bytes
    }

    /// Answers one line (with or without its `\n`, a trailing `\r` is ignored). Returns the
    /// response line without a newline, or `None` for a blank line, which gets no response.
    ///
    /// A line over the size limit is answered with `request_too_large` without being parsed.
    pub fn handle_line(&mut self, line: &[u8]) -> Option<String> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let len = line.len() as u64;
        if len > self.state.max_request_bytes {
            return Some(self.too_large(len));
        }
        let response = match crate::object::parse_json_value(line) {
            Err(e) => error_response(Value::Null, &ProtocolError::Parse { message: e.to_string() }),
            Ok((value, repeated)) => match read_envelope(value) {
                Err((id, e)) => error_response(id, &e),
                Ok(Request { id, method, params }) => match repeated.first() {
                    Some(w) => error_response(id, &repeated_key(w)),
                    None => self.answer(id, method, params),
                },
            },
        };
        Some(response.to_line())
    }

    /// The response to a line of `len` bytes that was over the limit and discarded.
    pub fn too_large(&self, len: u64) -> String {
        let e = ProtocolError::TooLarge { len, limit: self.state.max_request_bytes };
        error_response(Value::Null, &e).to_line()
    }

    fn answer(&mut self, id: Value, method: Method, params: Value) -> Response {
        // A panic is a bug; it costs this request, not the whole session.
        let state = &mut self.state;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            handler(method)(state, params)
        }));
        match outcome.unwrap_or_else(|panic| Err(internal_error(method, panic.as_ref()))) {
            Ok(result) => Response::result(id, result),
            Err(e) => error_response(id, &e),
        }
    }
}

/// The error answered for a request on which the engine panicked.
fn internal_error(method: Method, panic: &(dyn std::any::Any + Send)) -> ProtocolError {
    let what = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message");
    ProtocolError::Internal {
        message: format!("{method} panicked: {what}; please report this with the request"),
    }
}

fn error_response(id: Value, e: &ProtocolError) -> Response {
    Response::error(id, e.to_wire())
}

/// Splits a request into id, method and params, or says why it is not one (with the id when
/// it could be read).
/// A request line whose JSON repeats a key is refused, as `gitops-core --strict-keys` refuses
/// a manifest that does: which value a host meant cannot be known. In the params it is an
/// `invalid_params` error at the repeated key's pointer, in the envelope an `invalid_request`.
fn repeated_key((path, key): &(String, String)) -> ProtocolError {
    let message = format!("duplicate key `{key}`: a JSON object may hold a key once");
    if path.starts_with("/params/") {
        ProtocolError::params(path.clone(), message)
    } else {
        ProtocolError::request(format!("{message} (at {path})"))
    }
}

fn read_envelope(value: Value) -> Result<Request, (Value, ProtocolError)> {
    let Value::Object(mut map) = value else {
        let e = ProtocolError::request(format!("expected an object, found {}", type_name(&value)));
        return Err((Value::Null, e));
    };
    let id = match map.remove("id") {
        None => return Err((Value::Null, ProtocolError::request("missing field `id`"))),
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id,
        Some(other) => {
            let e = ProtocolError::request(format!(
                "field `id` must be a string, a number or null, found {}",
                type_name(&other)
            ));
            return Err((Value::Null, e));
        }
    };
    if let Some(key) = map.keys().find(|k| !matches!(k.as_str(), "method" | "params")) {
        let e = ProtocolError::request(format!(
            "unknown field `{key}`, expected `id`, `method` or `params`"
        ));
        return Err((id, e));
    }
    let method = match map.remove("method") {
        None => return Err((id, ProtocolError::request("missing field `method`"))),
        Some(Value::String(name)) => match Method::from_name(&name) {
            Some(m) => m,
            None => return Err((id, ProtocolError::UnknownMethod { method: name })),
        },
        Some(other) => {
            let e = ProtocolError::request(format!(
                "field `method` must be a string, found {}",
                type_name(&other)
            ));
            return Err((id, e));
        }
    };
    let params = match map.remove("params") {
        // `configure` without params is the handshake: it reports and changes nothing.
        None | Some(Value::Null) if method == Method::Configure => Value::Null,
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(p @ Value::Object(_)) => p,
        Some(other) => {
            let e = ProtocolError::params(
                "/params",
                format!("expected an object, found {}", type_name(&other)),
            );
            return Err((id, e));
        }
    };
    Ok(Request { id, method, params })
}

/// Deserializes a method's params, with the RFC 6901 path of the first mistake.
fn parse_params<T: DeserializeOwned>(params: Value) -> Result<T, ProtocolError> {
    deserialize_at(params, "/params")
}

/// Deserializes `value`, found at pointer `base` of the request, naming the path of the
/// first mistake.
fn deserialize_at<T: DeserializeOwned>(value: Value, base: &str) -> Result<T, ProtocolError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let mut path = base.to_string();
        for segment in e.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => {
                    path.push('/');
                    path.push_str(&index.to_string());
                }
                serde_path_to_error::Segment::Map { key } => {
                    path.push('/');
                    path.push_str(&escape_pointer_token(key));
                }
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => {}
            }
        }
        ProtocolError::params(path, enum_hint(e.into_inner().to_string()))
    })
}

/// Serde's "unknown variant `x`, expected one of `A`, `B`" already lists the accepted
/// spellings; when one of them differs from the value only in case or in `-`, `_` and spaces
/// (`succeeded`, `not-found`), the message also names it.
fn enum_hint(message: String) -> String {
    let Some(rest) = message.strip_prefix("unknown variant `") else {
        return message;
    };
    let Some((value, expected)) = rest.split_once("`, expected ") else {
        return message;
    };
    let fold = |s: &str| -> String {
        s.chars().filter(|c| !matches!(c, '-' | '_' | ' ')).flat_map(char::to_lowercase).collect()
    };
    let wanted = fold(value);
    let suggestion =
        expected.split('`').skip(1).step_by(2).find(|accepted| fold(accepted) == wanted);
    match suggestion {
        Some(accepted) => {
            format!("{message}; did you mean `{accepted}`? (values are case-sensitive)")
        }
        None => message,
    }
}

/// Checks that each item is a Kubernetes object with an identity, and flattens a `List` (a
/// kind ending in `List`, with `items`) into its items, as the CLI does with files.
fn objects(items: Vec<Value>, base: &str) -> Result<Vec<Value>, ProtocolError> {
    let mut out = Vec::with_capacity(items.len());
    for (i, obj) in items.into_iter().enumerate() {
        let is_list = obj.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"))
            && obj.get("items").is_some();
        if !is_list {
            check_object(&obj, &format!("{base}/{i}"))?;
            out.push(obj);
            continue;
        }
        let Some(Value::Array(list)) = obj.get("items") else {
            let found = obj.get("items").map_or("null", type_name);
            let message = format!("field `items` must be an array, found {found}");
            return Err(ProtocolError::params(format!("{base}/{i}/items"), message));
        };
        for (j, item) in list.iter().enumerate() {
            check_object(item, &format!("{base}/{i}/items/{j}"))?;
            out.push(item.clone());
        }
    }
    Ok(out)
}

fn check_object(obj: &Value, at: &str) -> Result<(), ProtocolError> {
    let Err(e) = ObjectRef::from_object(obj) else {
        return Ok(());
    };
    let inner = e.location().map(|l| l.path.as_str()).unwrap_or("");
    let message = match &e {
        ParseError::NotAnObject { found, .. } => format!("expected an object, found {found}"),
        ParseError::MissingField { field, .. } => format!("missing field `{field}`"),
        ParseError::WrongType { field, expected, found, .. } => {
            format!("field `{field}` must be {expected}, found {found}")
        }
        other => other.to_string(),
    };
    Err(ProtocolError::params(format!("{at}{inner}"), message))
}

/// Reads an Application found at pointer `base`.
fn application(value: Value, base: &str) -> Result<Application, ProtocolError> {
    if !value.is_object() {
        let message = format!("expected an object, found {}", type_name(&value));
        return Err(ProtocolError::params(base, message));
    }
    deserialize_at(value, base)
}

/// Reads `argocd-cm` found at pointer `base`: the ConfigMap (it has `apiVersion`, `kind`,
/// `metadata` or `data`) or its `data` map.
fn settings(value: Value, base: &str) -> Result<Settings, ProtocolError> {
    let Value::Object(map) = value else {
        let message = format!("expected an object, found {}", type_name(&value));
        return Err(ProtocolError::params(base, message));
    };
    let is_config_map =
        ["apiVersion", "kind", "metadata", "data"].iter().any(|k| map.contains_key(*k));
    let (cm, data_base) = if is_config_map {
        (Value::Object(map), format!("{base}/data"))
    } else {
        let mut cm = Map::new();
        cm.insert("data".to_string(), Value::Object(map));
        (Value::Object(cm), base.to_string())
    };
    Settings::from_config_map(&cm).map_err(|e| {
        let path = match &e {
            ConfigError::Key { key, .. } => {
                // `resource.customizations[<kind>]` names an entry of the legacy key.
                let key = key.split('[').next().unwrap_or(key);
                format!("{data_base}/{}", escape_pointer_token(key))
            }
            ConfigError::Shape { path, .. } => {
                let rest = path.strip_prefix("/data").unwrap_or(path);
                if is_config_map && !path.starts_with("/data") {
                    format!("{base}{path}")
                } else {
                    format!("{data_base}{rest}")
                }
            }
            _ => base.to_string(),
        };
        ProtocolError::params(path, e.to_string())
    })
}

fn timestamp(text: &str, path: &str) -> Result<Timestamp, ProtocolError> {
    Timestamp::parse(text).map_err(|e| ProtocolError::params(path, e.to_string()))
}

fn handle_configure(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    if !params.is_null() {
        replace_configuration(state, params)?;
    }
    let result = ConfigureResult {
        protocol_version: PROTOCOL_VERSION,
        engine_version: env!("CARGO_PKG_VERSION").to_string(),
        methods: engine::available_methods(),
        max_request_bytes: state.max_request_bytes,
    };
    serde_json::to_value(result).map_err(|e| ProtocolError::Engine {
        message: format!("cannot serialize the result: {e}"),
        object: None,
        path: None,
    })
}

/// `hello`: the handshake. Reads no configuration and changes none.
fn handle_hello(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let HelloParams {} = parse_params(params)?;
    let features = [("lua", cfg!(feature = "lua")), ("jq", cfg!(feature = "jq"))];
    let mut limits = state.config.limits.clone();
    limits.max_request_bytes = Some(state.max_request_bytes);
    limits.max_sessions.get_or_insert(DEFAULT_MAX_SESSIONS);
    limits.max_session_objects.get_or_insert(DEFAULT_MAX_SESSION_OBJECTS);
    let result = HelloResult {
        protocol_version: PROTOCOL_VERSION,
        engine_version: env!("CARGO_PKG_VERSION").to_string(),
        methods: engine::available_methods(),
        features: features.iter().filter(|(_, on)| *on).map(|(f, _)| f.to_string()).collect(),
        limits,
        builtin_health: BuiltinHealth::of_this_build(),
        builtin_action_kinds: crate::actions::ActionScripts::builtin_actions()
            .into_keys()
            .collect(),
    };
    serde_json::to_value(result).map_err(|e| ProtocolError::Engine {
        message: format!("cannot serialize the result: {e}"),
        object: None,
        path: None,
    })
}

/// `configure` with params: the new configuration replaces the whole previous one (a field
/// left out takes its default).
fn replace_configuration(state: &mut State, params: Value) -> Result<(), ProtocolError> {
    let p: ConfigureParams = parse_params(params)?;
    if let Some(requested) = p.protocol_version
        && requested != PROTOCOL_VERSION
    {
        return Err(ProtocolError::UnsupportedVersion { requested });
    }
    let settings = p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?;
    let app = p.app.map(|a| application(a, "/params/app")).transpose()?;
    let limits = p.limits.unwrap_or_default();
    if limits.max_request_bytes == Some(0) {
        return Err(ProtocolError::params("/params/limits/maxRequestBytes", "must be at least 1"));
    }
    let config = Config {
        settings: settings.unwrap_or_default(),
        app,
        customizations: p.customizations,
        limits,
        builtin_rules: p.builtin_rules,
    };
    engine::engine_configure(state, config)
}

fn handle_diff(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: DiffParams = parse_params(params)?;
    let input = DiffInput {
        desired: objects(p.desired, "/params/desired")?,
        live: objects(p.live, "/params/live")?,
        app: p.app.map(|a| application(a, "/params/app")).transpose()?,
        settings: p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?,
        dry_runs: objects(p.dry_runs, "/params/dryRuns")?,
        openapi: p
            .openapi
            .map(|doc| object_param(doc, "/params/openapi"))
            .transpose()?
            .map(|doc| crate::schema::OpenApiSchema::compile(&doc)),
        project: project_param(p.project, &p.clusters)?,
    };
    engine::engine_diff(state, input)
}

fn handle_health(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: HealthParams = parse_params(params)?;
    let input = HealthInput {
        objects: objects(p.objects, "/params/objects")?,
        settings: p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?,
        customizations: p.customizations,
        now: p.now.as_deref().map(|t| timestamp(t, "/params/now")).transpose()?,
        condition_fallback: p.condition_fallback,
        builtin_rules: p.builtin_rules,
    };
    engine::engine_health(state, input)
}

fn handle_actions_list(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: ActionsListParams = parse_params(params)?;
    let input = ActionsInput {
        object: action_object(p.object)?,
        action: None,
        parameters: BTreeMap::new(),
        settings: p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?,
        customizations: p.customizations,
        now: p.now.as_deref().map(|t| timestamp(t, "/params/now")).transpose()?,
        reveal_secrets: false,
    };
    engine::engine_actions(state, input)
}

fn handle_actions_run(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: ActionsRunParams = parse_params(params)?;
    if p.action.is_empty() {
        return Err(ProtocolError::params("/params/action", "must not be empty"));
    }
    let input = ActionsInput {
        object: action_object(p.object)?,
        action: Some(p.action),
        parameters: p.parameters,
        settings: p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?,
        customizations: p.customizations,
        now: p.now.as_deref().map(|t| timestamp(t, "/params/now")).transpose()?,
        reveal_secrets: p.show_secrets,
    };
    engine::engine_actions(state, input)
}

/// The object of an action: an object with `apiVersion` and `kind`, as any other object.
fn action_object(value: Value) -> Result<Value, ProtocolError> {
    let value = object_param(value, "/params/object")?;
    check_object(&value, "/params/object")?;
    Ok(value)
}

fn handle_plan(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: PlanParams = parse_params(params)?;
    let input = PlanInput {
        desired: objects(p.desired, "/params/desired")?,
        live: objects(p.live, "/params/live")?,
        app: p.app.map(|a| application(a, "/params/app")).transpose()?,
        settings: p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?,
        prune: p.prune,
        revision: p.revision,
        now: p.now.as_deref().map(|t| timestamp(t, "/params/now")).transpose()?,
    };
    engine::engine_plan(state, input)
}

fn handle_step(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: StepParams = parse_params(params)?;
    let now = timestamp(&p.now, "/params/now")?;
    let request = object_param(p.request, "/params/request")?;
    let mut request: crate::sync::SyncRequest = deserialize_at(request, "/params/request")?;
    objects(request.targets.clone(), "/params/request/targets")?;
    let sync_state = match p.state {
        Some(s) => deserialize_at(object_param(s, "/params/state")?, "/params/state")?,
        None => crate::sync::SyncState::default(),
    };
    let mut observations: crate::sync::Observations = match p.observations {
        Some(o) => {
            deserialize_at(object_param(o, "/params/observations")?, "/params/observations")?
        }
        None => crate::sync::Observations::default(),
    };
    observations.now = now.unix_seconds();
    request
        .scopes
        .add_crds(request.targets.iter().chain(observations.live.iter().map(|l| &l.object)));
    engine::engine_step(state, StepInput { request, state: sync_state, observations })
}

fn handle_orphans(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: controller::OrphansParams = parse_params(params)?;
    let app = application(p.app, "/params/app")?;
    let project = object_param(p.project, "/params/project")?;
    let project = controller::project(&project, &p.clusters)?;
    let desired = objects(p.desired, "/params/desired")?;
    let live = objects(p.live, "/params/live")?;
    let cm = p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?;
    let settings = cm.as_ref().unwrap_or(&state.config.settings);
    let apps = p.apps.as_deref();
    engine::to_result(&controller::orphans(&app, &project, &desired, &live, apps, settings)?)
}

fn handle_needs_refresh(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: controller::NeedsRefreshParams = parse_params(params)?;
    check_object(&p.old, "/params/old")?;
    check_object(&p.new, "/params/new")?;
    let cm = p.argocd_cm.clone().map(|cm| settings(cm, "/params/argocdCm")).transpose()?;
    let settings = cm.as_ref().unwrap_or(&state.config.settings);
    engine::to_result(&controller::needs_refresh(&p, settings)?)
}

fn handle_deletion_step(_: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: controller::DeletionStepParams = parse_params(params)?;
    let app = application(p.app, "/params/app")?;
    let targets = objects(p.targets, "/params/targets")?;
    engine::to_result(&controller::deletion_step(&app, targets, &p.live, p.after_deletions)?)
}

fn handle_operation(_: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: controller::OperationParams = parse_params(params)?;
    let app = application(p.app.clone(), "/params/app")?;
    let now = timestamp(&p.now, "/params/now")?;
    engine::to_result(&controller::operation(&app, &p, now)?)
}

/// A param that must be an object.
/// The optional `project` param, with the `clusters` the host knows.
fn project_param(
    value: Option<Value>,
    clusters: &[Value],
) -> Result<Option<crate::project::AppProject>, ProtocolError> {
    let Some(value) = value else {
        if clusters.is_empty() {
            return Ok(None);
        }
        let message = "clusters are read for a project: pass `project` too";
        return Err(ProtocolError::params("/params/clusters", message));
    };
    let value = object_param(value, "/params/project")?;
    controller::project(&value, clusters).map(Some)
}

fn object_param(value: Value, path: &str) -> Result<Value, ProtocolError> {
    if value.is_object() {
        Ok(value)
    } else {
        Err(ProtocolError::params(path, format!("expected an object, found {}", type_name(&value))))
    }
}

fn handle_decide(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: DecideParams = parse_params(params)?;
    let app = application(p.app, "/params/app")?;
    let revisions = match (p.revision, p.revisions) {
        (Some(r), None) => vec![r],
        (None, Some(list)) => list,
        (Some(_), Some(_)) => {
            return Err(ProtocolError::params(
                "/params/revisions",
                "give `revision` or `revisions`, not both",
            ));
        }
        (None, None) => {
            return Err(ProtocolError::params(
                "/params",
                "missing `revision` (or `revisions`, one per source of a multi-source app)",
            ));
        }
    };
    crate::sync::AutoSyncInput::check_revisions(&app, &revisions)
        .map_err(|e| ProtocolError::params("/params/revisions", e.to_string()))?;
    let input = DecideInput {
        app,
        desired: objects(p.desired, "/params/desired")?,
        live: objects(p.live, "/params/live")?,
        revisions,
        now: timestamp(&p.now, "/params/now")?,
        settings: p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?,
        guard: p.guard,
        claims: objects(p.claims, "/params/claims")?,
        windows: match p.project {
            Some(project) => {
                let project = object_param(project, "/params/project")?;
                match project.get("spec").and_then(|s| s.get("syncWindows")) {
                    Some(w) if !w.is_null() => {
                        deserialize_at(w.clone(), "/params/project/spec/syncWindows")?
                    }
                    _ => Vec::new(),
                }
            }
            None => Vec::new(),
        },
    };
    if let Some(Err(e)) = input.guard.as_ref().map(|g| g.check()) {
        return Err(ProtocolError::params(format!("/params/guard{}", e.pointer()), e.to_string()));
    }
    engine::engine_decide(state, input)
}

fn max_sessions(state: &State) -> u64 {
    state.config.limits.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS)
}

/// Refuses a session that would hold more objects than `maxSessionObjects`.
fn check_session_objects(state: &State, session: &str, count: usize) -> Result<(), ProtocolError> {
    let max = state.config.limits.max_session_objects.unwrap_or(DEFAULT_MAX_SESSION_OBJECTS);
    if count as u64 > max {
        return Err(ProtocolError::LimitExceeded {
            message: format!(
                "session `{session}` would hold {count} objects, maxSessionObjects is {max}"
            ),
        });
    }
    Ok(())
}

/// The open session of a handle, or the `invalid_params` error naming it.
fn session<'s>(state: &'s mut State, id: &str) -> Result<&'s mut PreparedApp, ProtocolError> {
    state.sessions.get(id).ok_or_else(|| no_session(id))
}

fn no_session(id: &str) -> ProtocolError {
    ProtocolError::params("/params/session", format!("no open session `{id}`"))
}

/// `now` of a session request, in unix seconds (left out, the Unix epoch).
fn session_now(text: Option<&str>) -> Result<i64, ProtocolError> {
    Ok(text.map(|t| timestamp(t, "/params/now")).transpose()?.map_or(0, |t| t.unix_seconds()))
}

/// Runs `f` on the open session `id` with the configured health context at `now`.
fn with_session<R>(
    state: &mut State,
    id: &str,
    now: i64,
    f: impl FnOnce(&mut PreparedApp, &HealthContext<'_>) -> R,
) -> Result<R, ProtocolError> {
    let State { engines, config, interrupt, sessions, .. } = state;
    let prepared = sessions.get(id).ok_or_else(|| no_session(id))?;
    engine::with_configured_health(engines, config, interrupt.as_ref(), now, |ctx| f(prepared, ctx))
}

fn handle_app_open(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppOpenParams = parse_params(params)?;
    let desired = objects(p.desired, "/params/desired")?;
    let live = objects(p.live, "/params/live")?;
    let app = p.app.map(|a| application(a, "/params/app")).transpose()?;
    let settings = p.argocd_cm.map(|cm| settings(cm, "/params/argocdCm")).transpose()?;
    let project = project_param(p.project, &p.clusters)?;
    let now = session_now(p.now.as_deref())?;
    let max = max_sessions(state);
    let open = state.sessions.len();
    if open as u64 >= max {
        let message = format!("{open} sessions are open, maxSessions is {max}");
        return Err(ProtocolError::LimitExceeded { message });
    }
    check_session_objects(state, &state.sessions.next_handle(), desired.len() + live.len())?;
    let default_app = Application::default();
    let app = app.as_ref().or(state.config.app.as_ref()).unwrap_or(&default_app);
    let settings = settings.as_ref().unwrap_or(&state.config.settings);
    let mut scopes = crate::object::Scopes::builtin();
    scopes.add_crds(desired.iter().chain(&live));
    let mut input = AppDiffInput::new(&desired, &live, app, settings, &scopes).with_objects(false);
    if let Some(project) = &project {
        input = input.with_project(project);
    }
    let State { engines, config, interrupt, .. } = &*state;
    let (prepared, whole) =
        engine::with_configured_health(engines, config, interrupt.as_ref(), now, |ctx| {
            let prepared = PreparedApp::new(&input, ctx);
            let whole = Reconciled::whole(&prepared.diff(), &prepared.health());
            (prepared, whole)
        })?;
    let id = state.sessions.insert(prepared);
    engine::to_result(&SessionOutput::new(id, whole))
}

fn handle_app_update(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppUpdateParams = parse_params(params)?;
    let mut changes = Vec::with_capacity(p.events.len());
    for (i, event) in p.events.into_iter().enumerate() {
        check_object(&event.object, &format!("/params/events/{i}/object"))?;
        changes.push(event.change());
    }
    let now = session_now(p.now.as_deref())?;
    let count = session(state, &p.session)?.objects_after(&changes);
    check_session_objects(state, &p.session, count)?;
    let r = with_session(state, &p.session, now, |prepared, ctx| prepared.apply(&changes, ctx))?;
    engine::to_result(&SessionOutput::new(p.session, r))
}

fn handle_app_desired(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppDesiredParams = parse_params(params)?;
    let desired = objects(p.desired, "/params/desired")?;
    let now = session_now(p.now.as_deref())?;
    let prepared = session(state, &p.session)?;
    let count = prepared.objects_after(&[]) - prepared.desired_count() + desired.len();
    check_session_objects(state, &p.session, count)?;
    let r =
        with_session(state, &p.session, now, |prepared, ctx| prepared.set_desired(desired, ctx))?;
    engine::to_result(&SessionOutput::new(p.session, r))
}

fn handle_app_close(state: &mut State, params: Value) -> Result<Value, ProtocolError> {
    let p: AppCloseParams = parse_params(params)?;
    session(state, &p.session)?;
    state.sessions.close(&p.session);
    let open_sessions = state.sessions.len() as u64;
    engine::to_result(&AppCloseResult { session: p.session, open_sessions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_enum_values_name_the_near_spelling() {
        let hint = |m: &str| enum_hint(m.to_string());
        assert_eq!(
            hint("unknown variant `succeeded`, expected one of `Succeeded`, `Failed`, `NotFound`"),
            "unknown variant `succeeded`, expected one of `Succeeded`, `Failed`, `NotFound`; did \
             you mean `Succeeded`? (values are case-sensitive)"
        );
        assert_eq!(
            hint("unknown variant `not_found`, expected one of `Succeeded`, `Failed`, `NotFound`"),
            "unknown variant `not_found`, expected one of `Succeeded`, `Failed`, `NotFound`; did \
             you mean `NotFound`? (values are case-sensitive)"
        );
        assert_eq!(
            hint("unknown variant `Ok`, expected `A` or `B`"),
            "unknown variant `Ok`, expected `A` or `B`"
        );
        assert_eq!(hint("missing field `id`"), "missing field `id`");
    }

    #[test]
    fn panics_become_internal_errors() {
        let e = internal_error(Method::Diff, &"index out of bounds");
        assert_eq!(
            e.to_wire(),
            crate::protocol::wire::ErrorObject {
                code: crate::protocol::wire::ErrorCode::InternalError,
                message: "internal error: diff panicked: index out of bounds; please report this \
                    with the request"
                    .into(),
                object: None,
                path: None,
            }
        );
        let e = internal_error(Method::Plan, &String::from("boom"));
        assert_eq!(
            e.to_string(),
            "internal error: plan panicked: boom; please report this with the request"
        );
        let e = internal_error(Method::Step, &42);
        assert_eq!(
            e.to_string(),
            "internal error: step panicked: a panic without a message; please report this with \
             the request"
        );
    }
}
