//! The wire types of the `serve` protocol: what goes on one line in each direction.
//!
//! These are the serde types the server reads and writes, and the types the JSON Schema in
//! `schema/protocol.schema.json` is generated from.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::object::ObjectRef;

use super::shapes::{
    clusters_schema, kubernetes_object_schema, object_schema, objects_schema,
    optional_object_schema,
};

/// The version of the protocol this build speaks ([`Server::PROTOCOL_VERSION`](super::Server::PROTOCOL_VERSION)).
pub(crate) const PROTOCOL_VERSION: u32 = 2;

/// The default limit on the size of one request line ([`Server::DEFAULT_MAX_REQUEST_BYTES`](super::Server::DEFAULT_MAX_REQUEST_BYTES)).
pub(crate) const DEFAULT_MAX_REQUEST_BYTES: u64 = 16 * 1024 * 1024;

/// A method of the protocol.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub(super) enum Method {
    /// Compare desired and live objects, as `gitops-core diff --output json`.
    Diff,
    /// Assess the health of objects, as `gitops-core health --output json`.
    Health,
    /// The ordered sync tasks, as `gitops-core plan --output json`.
    Plan,
    /// One step of a sync operation: the next batch of actions or the final outcome.
    Step,
    /// Whether an automated sync runs now, as `gitops-core decide --output json`.
    Decide,
    /// Set the engine's settings once, for every later request.
    Configure,
    /// The handshake: protocol and engine version, features, limits. Changes nothing.
    Hello,
    /// The resource actions an object offers, as `gitops-core actions list --output json`.
    #[serde(rename = "actions.list")]
    ActionsList,
    /// Run one resource action, as `gitops-core actions run --output json`.
    #[serde(rename = "actions.run")]
    ActionsRun,
    /// Open a session: an app prepared once from its desired and live objects.
    #[serde(rename = "app.open")]
    AppOpen,
    /// Watch events for a session's live objects: what changed.
    #[serde(rename = "app.update")]
    AppUpdate,
    /// A session's new desired set (a new commit): what changed.
    #[serde(rename = "app.desired")]
    AppDesired,
    /// Close a session and free it.
    #[serde(rename = "app.close")]
    AppClose,
    /// The orphaned resources of an app's namespace, with `OrphanedResourceWarning`.
    Orphans,
    /// Whether a watch event needs the app refreshed (`ignoreResourceUpdates`).
    #[serde(rename = "needsRefresh")]
    NeedsRefresh,
    /// One pass of an Application's deletion: hooks, cascade, finalizers.
    #[serde(rename = "deletion.step")]
    DeletionStep,
    /// The timing of an operation in progress: sync timeout, retries, wave delay,
    /// skip-reconcile.
    Operation,
}

impl Method {
    /// Every method, in the order of the protocol docs.
    pub(super) const ALL: [Method; 17] = [
        Method::Diff,
        Method::Health,
        Method::Plan,
        Method::Step,
        Method::Decide,
        Method::Configure,
        Method::Hello,
        Method::ActionsList,
        Method::ActionsRun,
        Method::AppOpen,
        Method::AppUpdate,
        Method::AppDesired,
        Method::AppClose,
        Method::Orphans,
        Method::NeedsRefresh,
        Method::DeletionStep,
        Method::Operation,
    ];

    /// The method's name on the wire.
    pub(super) fn name(self) -> &'static str {
        match self {
            Method::Diff => "diff",
            Method::Health => "health",
            Method::Plan => "plan",
            Method::Step => "step",
            Method::Decide => "decide",
            Method::Configure => "configure",
            Method::Hello => "hello",
            Method::ActionsList => "actions.list",
            Method::ActionsRun => "actions.run",
            Method::AppOpen => "app.open",
            Method::AppUpdate => "app.update",
            Method::AppDesired => "app.desired",
            Method::AppClose => "app.close",
            Method::Orphans => "orphans",
            Method::NeedsRefresh => "needsRefresh",
            Method::DeletionStep => "deletion.step",
            Method::Operation => "operation",
        }
    }

    /// The method with this wire name (exact, case-sensitive).
    pub(super) fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One request line: `{"id": ..., "method": ..., "params": {...}}`.
///
/// `params` may be left out, which is the same as `{}`. The server reads a line in steps (JSON,
/// then the envelope, then the method's params) so that each kind of mistake gets its own
/// error code; this type is the envelope once it is known to be well formed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct Request {
    /// Chosen by the client and echoed in the response: a string, a number or null.
    #[schemars(schema_with = "id_schema")]
    pub id: Value,
    /// The method.
    pub method: Method,
    /// The method's parameters, an object (see the `*Params` definitions).
    #[serde(default = "empty_object")]
    #[schemars(schema_with = "object_schema")]
    pub params: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// One response line: `{"id": ..., "result": ...}` or `{"id": ..., "error": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(crate) struct Response {
    /// The request's `id`, or null when the request was too malformed to have one.
    #[schemars(schema_with = "id_schema")]
    pub id: Value,
    /// The result or the error.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What a response carries besides its `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub(crate) enum Outcome {
    /// The method's result: the same JSON as the CLI command's `--output json`. Which of
    /// the result types it is follows from the request's method (the schema's `x-methods`).
    #[schemars(schema_with = "result_schema")]
    Result(Value),
    /// Why the request failed.
    Error(ErrorObject),
}

impl Response {
    /// A successful response.
    pub(super) fn result(id: Value, result: Value) -> Response {
        Response { id, outcome: Outcome::Result(result) }
    }

    /// An error response.
    pub(super) fn error(id: Value, error: ErrorObject) -> Response {
        Response { id, outcome: Outcome::Error(error) }
    }

    /// The response as one line of JSON, without the newline.
    pub(super) fn to_line(&self) -> String {
        // Serializing a tree of strings, numbers and maps with string keys cannot fail.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                r#"{{"id":null,"error":{{"code":"internal_error","message":"cannot serialize the response: {e}","object":null,"path":null}}}}"#
            )
        })
    }
}

/// The error of an error response. Every field is always present (null when empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub(crate) struct ErrorObject {
    /// A stable machine-readable code.
    pub code: ErrorCode,
    /// A lowercase, specific message for people; its wording may improve between releases.
    pub message: String,
    /// The Kubernetes object the error is about, when there is one.
    #[schemars(schema_with = "nullable_object_ref", required)]
    pub object: Option<ObjectRef>,
    /// An RFC 6901 pointer: into the request (`/params/desired/2/kind`) for `invalid_params`,
    /// into `object` for `engine_error`; null when the error has no place.
    #[schemars(schema_with = "nullable_string", required)]
    pub path: Option<String>,
}

/// The stable error codes. New codes may be added in a minor release (clients treat an unknown
/// code as a failed request); a code never changes meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub(crate) enum ErrorCode {
    /// The line is not JSON (or not UTF-8). `id` is null.
    ParseError,
    /// The line is JSON but not a request: not an object, `id` or `method` missing or of the
    /// wrong type, or an unknown top-level field. `id` is null unless it could be read.
    InvalidRequest,
    /// `method` is a string but not a method of this protocol.
    UnknownMethod,
    /// `params` do not fit the method; `path` points into the request.
    InvalidParams,
    /// The line is longer than the size limit; it was discarded unread. `id` is null.
    RequestTooLarge,
    /// `configure` asked for a protocol version this server does not speak.
    UnsupportedVersion,
    /// The engine refused the input (a bad object, rule or script, a method this build does
    /// not offer); `object` and `path` say where when the engine knows.
    EngineError,
    /// A bug in the server; please report it with the request.
    InternalError,
    /// The request would go over a limit `hello` states (`maxSessions`,
    /// `maxSessionObjects`); it changed nothing.
    LimitExceeded,
}

impl ErrorCode {
    /// The code's name on the wire.
    pub(super) fn name(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "parse_error",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::UnknownMethod => "unknown_method",
            ErrorCode::InvalidParams => "invalid_params",
            ErrorCode::RequestTooLarge => "request_too_large",
            ErrorCode::UnsupportedVersion => "unsupported_version",
            ErrorCode::EngineError => "engine_error",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::LimitExceeded => "limit_exceeded",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `configure` params. Every field is optional; what is left out takes its default (an empty
/// `argocd-cm`, no scripts, the default limits). A `configure` replaces the whole previous
/// configuration: it does not merge with it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct ConfigureParams {
    /// The protocol version the client speaks; the server refuses any other with
    /// `unsupported_version`. Left out, the server's version is assumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "protocol_version_schema")]
    pub protocol_version: Option<u32>,
    /// The `argocd-cm` ConfigMap, or its `data` map, used by every request that does not pass
    /// its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// An Argo CD `Application`, used by every request that does not pass its own (its
    /// destination namespace, `ignoreDifferences`, sync policy and compare options).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub app: Option<Value>,
    /// Lua health scripts as `<group>/<Kind>` (the layout of Argo CD's
    /// `resource_customizations/` folder, `_` standing for `*`) to the text of `health.lua`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub customizations: BTreeMap<String, String>,
    /// Limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// The built-in health rules for the kinds Argo CD ships a script for (`hello` lists
    /// them), for every `health` request that does not set its own; left out, on. Off, only
    /// scripts and the checks of Kubernetes' own kinds give health.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin_rules: Option<bool>,
}

/// Limits set by `configure`. Left out, each keeps its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct Limits {
    /// The largest request line accepted, in bytes, newline excluded (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_request_bytes: Option<u64>,
    /// The instruction budget of one Lua health script evaluation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lua_instructions: Option<u64>,
    /// The instruction budget all the Lua health scripts of one request share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lua_request_instructions: Option<u64>,
    /// The memory limit of one Lua health script evaluation, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lua_memory_bytes: Option<u64>,
    /// The most sessions open at once (`app.open`); `hello` states the one in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<u64>,
    /// The most objects, desired and live, one session holds; `hello` states the one in
    /// force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_session_objects: Option<u64>,
}

/// `configure` result: what the server speaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct ConfigureResult {
    /// The protocol version the server speaks ([`PROTOCOL_VERSION`]).
    pub protocol_version: u32,
    /// The version of the gitops-core engine (the crate version).
    pub engine_version: String,
    /// The methods this build answers, in the order of the protocol docs.
    pub methods: Vec<Method>,
    /// The size limit now in force, in bytes.
    pub max_request_bytes: u64,
}

/// `hello` params: none (an empty object, or left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct HelloParams {}

/// `hello` result: what the server speaks and what is in force. The handshake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct HelloResult {
    /// The protocol version the server speaks (see CHANGELOG.md for each version's changes).
    pub protocol_version: u32,
    /// The version of the gitops-core engine (the crate version).
    pub engine_version: String,
    /// The methods this build answers, in the order of the protocol docs.
    pub methods: Vec<Method>,
    /// The optional features this build has: `lua` (Lua health scripts), `jq` (jq paths in
    /// `ignoreDifferences`).
    pub features: Vec<String>,
    /// The limits in force: `maxRequestBytes` always, the others when configured.
    pub limits: Limits,
    /// The built-in health rules: the kinds Argo CD ships a health script for, assessed
    /// without Lua (on unless `configure` or the request sets `builtinRules: false`).
    pub builtin_health: BuiltinHealth,
    /// The kinds with built-in resource actions (`<group>/<Kind>`, sorted): those Argo CD
    /// 3.6.2 ships action scripts for (see `actions::ActionScripts::builtin_actions`).
    pub builtin_action_kinds: Vec<String>,
}

/// The built-in health rules of this build, as `hello` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub(super) struct BuiltinHealth {
    /// The Argo CD release whose health scripts the rules follow
    /// ([`crate::health::HealthContext::BUILTIN_RULES_ARGO_CD`]).
    pub argo_cd: String,
    /// Each kind as its script folder, `<group>/<Kind>` (`_` a wildcard), sorted
    /// ([`crate::health::HealthContext::builtin_kinds`]).
    pub kinds: Vec<String>,
}

impl BuiltinHealth {
    /// The rules of this build.
    pub(super) fn of_this_build() -> Self {
        BuiltinHealth {
            argo_cd: crate::health::HealthContext::BUILTIN_RULES_ARGO_CD.to_string(),
            kinds: crate::health::HealthContext::builtin_kinds(),
        }
    }
}

/// `diff` params: the inputs of `gitops-core diff`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct DiffParams {
    /// The objects from Git, each a Kubernetes object (`apiVersion`, `kind`, `metadata.name`).
    #[schemars(schema_with = "objects_schema")]
    pub desired: Vec<Value>,
    /// The app's live objects as the host found them.
    #[schemars(schema_with = "objects_schema")]
    pub live: Vec<Value>,
    /// The Argo CD `Application`; left out, the configured one (or none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub app: Option<Value>,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one. Passing it
    /// per request costs a parse each time: prefer `configure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// The API server's answers to `kubectl apply --server-side --dry-run=server` of desired
    /// objects, matched by identity, for server-side diff (as `gitops-core diff --dry-run`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "objects_schema")]
    pub dry_runs: Vec<Value>,
    /// The cluster's OpenAPI v2 document (or its CRDs' `definitions`), the schema of custom
    /// resources for server-side diff. Compiled for this request only and dropped with it:
    /// the server keeps no schema between requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub openapi: Option<Value>,
    /// The app's AppProject: live objects it does not permit are left out, resources of
    /// kinds it does not permit are `Unknown` (as `gitops-core status --project`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub project: Option<Value>,
    /// The clusters the host knows, each an Argo CD cluster Secret or a map of `name`,
    /// `server` and `project`: for the project's `permitOnlyProjectScopedClusters` and the
    /// destination's cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "clusters_schema")]
    pub clusters: Vec<Value>,
}

/// `health` params: the inputs of `gitops-core health`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct HealthParams {
    /// The objects to assess.
    #[schemars(schema_with = "objects_schema")]
    pub objects: Vec<Value>,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// Lua health scripts, as in `configure`; left out, the configured ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customizations: Option<BTreeMap<String, String>>,
    /// The time Lua's `os.time()` and `os.date()` read, RFC 3339; left out, the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
    /// Opt-in, as `gitops-core health --condition-fallback`: a custom resource with no
    /// built-in check and no script gets its health from its `observedGeneration` and
    /// conditions instead of none. Left out, off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub condition_fallback: bool,
    /// The built-in health rules, as `gitops-core health` without `--no-builtin-health`;
    /// left out, the configured setting (on unless `configure` turned them off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin_rules: Option<bool>,
}

/// `actions.list` params: the inputs of `gitops-core actions list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct ActionsListParams {
    /// The object.
    #[schemars(schema_with = "kubernetes_object_schema")]
    pub object: Value,
    /// The `argocd-cm` ConfigMap or its `data` map, for its
    /// `resource.customizations.actions.<group>_<Kind>`; left out, the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// Scripts in the layout of Argo CD's `resource_customizations/` folder, by path:
    /// `<group>/<Kind>/actions/discovery.lua` and `<group>/<Kind>/actions/<name>/action.lua`
    /// (other keys are health scripts, as in `configure`); left out, the configured ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customizations: Option<BTreeMap<String, String>>,
    /// The time Lua's `os.time()` and `os.date()` read, RFC 3339; left out, the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
}

/// `actions.run` params: the inputs of `gitops-core actions run`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct ActionsRunParams {
    /// The object the action runs on.
    #[schemars(schema_with = "kubernetes_object_schema")]
    pub object: Value,
    /// The action's name.
    pub action: String,
    /// The action's parameters, the script's `actionParams` (as `--param NAME=VALUE`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// As in `actions.list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// As in `actions.list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customizations: Option<BTreeMap<String, String>>,
    /// As in `actions.list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
    /// As `gitops-core actions run --show-secrets`: a Secret the action patches or creates
    /// comes back with its values. Left out, off: its `data` values and last-applied
    /// annotation are masked as `diff` masks them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub show_secrets: bool,
}

/// `plan` params: the inputs of `gitops-core plan`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct PlanParams {
    /// The objects from Git.
    #[schemars(schema_with = "objects_schema")]
    pub desired: Vec<Value>,
    /// The live objects.
    #[schemars(schema_with = "objects_schema")]
    pub live: Vec<Value>,
    /// The Argo CD `Application`; left out, the configured one (or none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub app: Option<Value>,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// Delete live objects no longer in Git (as `--prune`), besides the app's
    /// `automated.prune`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prune: bool,
    /// The revision, which names hooks that use `generateName` (as `--revision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The operation start, RFC 3339, which names hooks that use `generateName` (as `--now`);
    /// left out, the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub now: Option<String>,
}

/// `step` params: one pass of a running sync operation (there is no CLI command for it). The
/// host keeps `request` and the `state` of the last result between passes, as Argo CD keeps
/// `status.operationState`, and reports what it observed since.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct StepParams {
    /// The sync operation, the JSON form of the library's `sync::SyncRequest`:
    /// `appNamespace`, `targets` (the desired objects), `syncOptions`, `prune`, `dryRun`,
    /// `revision`, `startedAt`, ...
    #[schemars(with = "crate::sync::SyncRequest")]
    pub request: Value,
    /// The `state` of the previous step's result (`sync::SyncState`); left out for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::sync::SyncState>")]
    pub state: Option<Value>,
    /// What the host observed since (`sync::Observations`): the live objects with their
    /// health, the outcomes of the previous step's actions by id, ... Its `now` is replaced
    /// by the `now` param.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::sync::Observations>")]
    pub observations: Option<Value>,
    /// The current time, RFC 3339.
    #[schemars(extend("format" = "date-time"))]
    pub now: String,
}

/// `decide` params: the inputs of `gitops-core decide`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub(super) struct DecideParams {
    /// The Argo CD `Application` with its `status` (operationState, sync, history).
    #[schemars(schema_with = "object_schema")]
    pub app: Value,
    /// The objects from Git.
    #[schemars(schema_with = "objects_schema")]
    pub desired: Vec<Value>,
    /// The live objects.
    #[schemars(schema_with = "objects_schema")]
    pub live: Vec<Value>,
    /// The revision Git resolved to, for a single-source app (or give `revisions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The revisions Git resolved to, one per entry of `spec.sources` in that order, for a
    /// multi-source app (a single-source app may give its one revision here too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Vec<String>>,
    /// The current time, RFC 3339. Unlike the CLI, the server reads no clock: it is required.
    #[schemars(extend("format" = "date-time"))]
    pub now: String,
    /// The `argocd-cm` ConfigMap or its `data` map; left out, the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "optional_object_schema")]
    pub argocd_cm: Option<Value>,
    /// The AppProject (the manifest, as `gitops-core decide --project`): its sync windows
    /// that match the app are checked first, and while they block, no automated sync runs
    /// (`Sync prevented by sync window`). Left out, no window applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "project_schema")]
    pub project: Option<Value>,
    /// The blast-radius guard (`sync::BlastRadiusGuard`): `{}` turns it on with its
    /// defaults (`maxPruneFraction` 0.5, no `maxPruneCount`, StatefulSets,
    /// PersistentVolumeClaims, Namespaces and CustomResourceDefinitions protected). Left out,
    /// the decision is Argo CD's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "guard_schema")]
    pub guard: Option<crate::sync::BlastRadiusGuard>,
    /// Live objects the app does not track that the guard reads: the PersistentVolumeClaims
    /// of the app's namespaces, to name those a pruned StatefulSet leaves behind. Not
    /// compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "objects_schema")]
    pub claims: Vec<Value>,
}

fn guard_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "The blast-radius guard; every field is optional.",
        "type": ["object", "null"],
        "additionalProperties": false,
        "properties": {
            "maxPruneFraction": {
                "description": "Refuse pruning more than this fraction of the app's live resources; null: no limit.",
                "type": ["number", "null"],
                "minimum": 0,
                "maximum": 1,
                "default": 0.5
            },
            "maxPruneCount": {
                "description": "Refuse pruning more than this many resources; null: no limit.",
                "type": ["integer", "null"],
                "minimum": 0,
                "default": null
            },
            "protectedKinds": {
                "description": "Kinds never pruned by an automated sync, as `group/Kind` (`Kind` for the core group); each part a name or a glob.",
                "type": "array",
                "items": { "type": "string" },
                "default": [
                    "apps/StatefulSet",
                    "PersistentVolumeClaim",
                    "Namespace",
                    "apiextensions.k8s.io/CustomResourceDefinition"
                ]
            }
        }
    })
}

/// An AppProject manifest, of which `decide` reads `spec.syncWindows`.
fn project_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let window = generator.subschema_for::<crate::sync::SyncWindow>();
    schemars::json_schema!({
        "description": "An AppProject manifest; `spec.syncWindows` is read.",
        "type": ["object", "null"],
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "syncWindows": { "type": ["array", "null"], "items": window }
                }
            }
        }
    })
}

fn id_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "A string, a number or null, chosen by the client.",
        "type": ["string", "number", "null"]
    })
}

/// `null` or an `ObjectRef`: the error's `object`, which is always present.
fn nullable_object_ref(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let object = generator.subschema_for::<ObjectRef>();
    schemars::json_schema!({ "anyOf": [object, { "type": "null" }] })
}

/// `null` or a string: the error's `path`, which is always present.
fn nullable_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "null"] })
}

/// The result of one of the methods (see `x-methods` in the schema for which one).
fn result_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let results: Vec<schemars::Schema> =
        Method::ALL.iter().map(|m| result_schema_of(*m, generator)).collect();
    schemars::json_schema!({ "anyOf": results })
}

/// The schema of `method`'s result, as a reference into `$defs`.
pub(crate) fn result_schema_of(
    method: Method,
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    match method {
        Method::Diff => generator.subschema_for::<super::output::DiffOutput>(),
        Method::Health => generator.subschema_for::<super::output::HealthOutput>(),
        Method::Plan => generator.subschema_for::<super::output::PlanOutput>(),
        Method::Step => generator.subschema_for::<crate::sync::Step>(),
        Method::Decide => generator.subschema_for::<super::output::DecideOutput>(),
        Method::Configure => generator.subschema_for::<ConfigureResult>(),
        Method::Hello => generator.subschema_for::<HelloResult>(),
        Method::ActionsList => generator.subschema_for::<super::output::ActionsListOutput>(),
        Method::ActionsRun => generator.subschema_for::<super::output::ActionsRunOutput>(),
        Method::AppOpen | Method::AppUpdate | Method::AppDesired => {
            generator.subschema_for::<super::session::SessionOutput>()
        }
        Method::AppClose => generator.subschema_for::<super::session::AppCloseResult>(),
        Method::Orphans => generator.subschema_for::<crate::orphans::Orphans>(),
        Method::NeedsRefresh => generator.subschema_for::<super::output::NeedsRefreshResult>(),
        Method::DeletionStep => generator.subschema_for::<crate::sync::DeletionStep>(),
        Method::Operation => generator.subschema_for::<super::output::OperationResult>(),
    }
}

/// `protocolVersion` in `configure`: this server's version, or null (left out: the server's).
fn protocol_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "enum": [PROTOCOL_VERSION, null] })
}

#[cfg(test)]
mod tests {
    #[test]
    fn method_names() {
        use super::Method;
        assert_eq!(Method::Configure.name(), "configure");
        assert_eq!(Method::from_name("diff"), Some(Method::Diff));
        assert_eq!(Method::from_name("Diff"), None);
    }
}
