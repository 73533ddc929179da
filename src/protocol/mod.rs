//! The `serve` protocol: the engine as a long-running process that controllers in any
//! language drive over JSON lines.
//!
//! `gitops-core serve` reads one JSON request per line on standard input and writes one JSON
//! response per line on standard output, in order, flushing after each. A process that stays
//! up keeps its caches warm: the parsed `argocd-cm`, compiled jq filters and Lua scripts are
//! built once by `configure` and reused by every later request. This module holds the wire
//! types, their JSON Schema and a [`Server`] that does the work without any I/O (lines in,
//! lines out), so a Rust host can embed it behind any transport.
//!
//! # Requests and responses
//!
//! ```text
//! → {"id": 1, "method": "configure", "params": {"argocdCm": {...}, "customizations": {...}}}
//! ← {"id":1,"result":{"protocolVersion":2,"engineVersion":"0.1.0","methods":[...],"maxRequestBytes":16777216}}
//! → {"id": 2, "method": "diff", "params": {"desired": [...], "live": [...], "app": {...}}}
//! ← {"id":2,"result":{"syncStatus":"OutOfSync","resources":[...]}}
//! → {"id": 3, "method": "dif"}
//! ← {"id":3,"error":{"code":"unknown_method","message":"unknown method `dif`: ...","object":null,"path":null}}
//! ```
//!
//! - `id` is chosen by the client (a string, a number or null) and echoed unchanged. Responses
//!   come in the order of the requests, one per non-blank line, so a client may also pipeline.
//! - `method` is one of `diff`, `health`, `plan`, `step`, `decide`, `configure`, `hello`,
//!   `actions.list`, `actions.run`, `app.open`, `app.update`, `app.desired`, `app.close`,
//!   `orphans`, `needsRefresh`, `deletion.step`, `operation` (`Method`).
//! - `params` is an object (`DiffParams`, `HealthParams`, `PlanParams`, `StepParams`,
//!   `DecideParams`, `ConfigureParams`); left out or null it is `{}`. Params carry the same
//!   inputs as the CLI commands: objects inline as JSON arrays, `app` as the `Application`
//!   manifest (JSON), `argocdCm` as the ConfigMap or its `data` map, `customizations` as a map
//!   of `<group>/<Kind>` to the text of `health.lua`, and `now` as RFC 3339 where time matters
//!   (the server reads no clock). Unknown fields are refused, so a client never silently sends
//!   something an older server ignores.
//! - `result` is the same JSON the CLI command of the same name prints with `--output json`
//!   (compact, on one line).
//! - `error` always has the four fields `code`, `message`, `object` and `path` (`ErrorObject`).
//!
//! # Methods
//!
//! | method | params | result |
//! |---|---|---|
//! | `diff` | `desired`, `live`, `app`?, `argocdCm`?, `dryRuns`?, `openapi`?, `project`?, `clusters`? (`DiffParams`) | what `gitops-core diff --output json` prints (`DiffOutput`) |
//! | `health` | `objects`, `argocdCm`?, `customizations`?, `now`?, `conditionFallback`?, `builtinRules`? (`HealthParams`) | what `gitops-core health --output json` prints (`HealthOutput`) |
//! | `plan` | `desired`, `live`, `app`?, `argocdCm`? (`PlanParams`) | what `gitops-core plan --output json` prints |
//! | `decide` | `app`, `desired`, `live`, `revision`, `now`, `argocdCm`?, `guard`?, `claims`? (`DecideParams`) | what `gitops-core decide --output json` prints (`DecideOutput`; `guard` only with a guard) |
//! | `step` | `request` (`sync::SyncRequest`), `state`? (`sync::SyncState`), `observations`? (`sync::Observations`), `now` (`StepParams`) | the library's `sync::Step`: `state` (pass it back next time), `actions`, `done`, `wave` |
//! | `configure` | `protocolVersion`?, `argocdCm`?, `app`?, `customizations`?, `limits`?, `builtinRules`? (`ConfigureParams`); params given (`{}` too) replace the whole configuration, params left out or null change nothing | `ConfigureResult` |
//! | `actions.list` | `object`, `argocdCm`?, `customizations`?, `now`? (`ActionsListParams`) | what `gitops-core actions list --output json` prints (`ActionsListOutput`) |
//! | `actions.run` | `object`, `action`, `parameters`?, `argocdCm`?, `customizations`?, `now`?, `showSecrets`? (`ActionsRunParams`) | what `gitops-core actions run --output json` prints (`ActionsRunOutput`), a Secret's values masked unless `showSecrets`; a failing action is an `engine_error` naming the script and the object |
//! | `hello` | none | the handshake: `protocolVersion`, `engineVersion`, `methods`, `features`, `limits`, `builtinActionKinds`, `builtinHealth` (the Argo CD release the built-in health rules follow and their kinds, `BuiltinHealth`) (`HelloResult`) |
//!
//! | `app.open` | `desired`, `live`, `app`?, `argocdCm`?, `now`?, `project`?, `clusters`? (`AppOpenParams`) | a session: its handle, every row of `diff` and of `health`, the roll-ups (`SessionOutput`) |
//! | `app.update` | `session`, `events` (watch events: `type` `ADDED`, `MODIFIED` or `DELETED`, `object`), `now`? (`AppUpdateParams`) | what changed (`SessionOutput`) |
//! | `app.desired` | `session`, `desired` (the whole new set), `now`? (`AppDesiredParams`) | what changed (`SessionOutput`) |
//! | `app.close` | `session` (`AppCloseParams`) | `AppCloseResult` |
//!
//! The controller's other decisions:
//!
//! | method | params | result |
//! |---|---|---|
//! | `orphans` | `app`, `project`, `clusters`?, `desired`, `live`, `argocdCm`?, `apps`? (`OrphansParams`) | the orphaned resources and `OrphanedResourceWarning` (`orphans::Orphans`), what `gitops-core status --project` lists |
//! | `needsRefresh` | `old`, `new`, `oldHealth`?, `newHealth`?, `argocdCm`? (`NeedsRefreshParams`) | whether the watch event needs the app refreshed (`output::NeedsRefreshResult`) |
//! | `deletion.step` | `app` (with `deletionTimestamp` and `finalizers`), `targets`, `live` (`sync::LiveObject`), `afterDeletions` (`live` read again after this pass's cascade deletions) (`DeletionStepParams`) | one pass of the app's deletion: `finalizers`, `actions`, `condition` (`DeletionError`), `message`, `done` (`sync::DeletionStep`) |
//! | `operation` | `app`, `now`, `syncTimeoutSeconds`?, `failedAttempt`?, `wave`?, `syncWaveDelay`? (`OperationParams`) | `skipReconcile`, what to do with the operation in progress now and when to look again, the answer to a failed attempt, when the next wave may run (`output::OperationResult`) |
//!
//! # Sessions
//!
//! A controller refreshes an app on every watch event that touches it. `app.open` prepares
//! the app once and keeps it in the server (a [`crate::reconcile::PreparedApp`]); `app.update`
//! forwards the watch events of its objects and `app.desired` a new commit, and each answers
//! only what changed, byte for byte what `diff` and `health` would say of the whole state.
//! `app.close` frees it. A session keeps the app, `argocd-cm` and CRD scopes it was opened
//! with. `hello` states the limits: `maxSessions` open at once and `maxSessionObjects`
//! (desired and live) in one (`configure`'s `limits` change them); a request that would go
//! over one is refused with `limit_exceeded` and changes nothing. An unknown or closed handle
//! is an `invalid_params` error at `/params/session`.
//!
//! `step` has no CLI command: it is the sync step function of `gitops_core::sync` over the
//! wire. The host keeps `request` and the returned `state` between passes (as Argo CD keeps
//! `status.operationState`), carries out the `actions`, and reports their outcomes by id in
//! the next pass's `observations`, until `done`.
//!
//! # configure
//!
//! `configure` is optional; without it every request runs with the defaults (an empty
//! `argocd-cm`, no Application, no scripts, default limits). It parses `argocd-cm` and the
//! Application once, checks the ignore rules of both (a jq expression that does not parse is
//! an `engine_error` naming the rule), builds the table of health scripts, and sets up the
//! Lua engine with its limits; the engine keeps its Lua states and compiled scripts between
//! requests. Each `configure` replaces the whole configuration
//! (nothing merges with the previous one) and checks it entirely first: when it fails, the
//! previous configuration stays. A request may still pass its own `app` or `argocdCm`, which
//! then wins for that request only (and costs a parse each time).
//!
//! # Enum values
//!
//! Every value of an enum the engine defines is spelled in PascalCase, in every method, as
//! Argo CD spells its own: `Synced`, `OutOfSync`, `Healthy`, `PreSync`, `Running`,
//! `Succeeded`, `NotFound`, and plan actions `Apply`, `ServerSideApply`, `Skip`. Spellings are
//! case-sensitive; a value that is not one of them is an `invalid_params` error that lists
//! the accepted spellings and, for a near miss (`succeeded`, `not_found`), names the one
//! meant. The schema gives each as an `enum`. Six kinds of names follow their own standard
//! instead: method names (lowercase), error codes (`snake_case`), RFC 6902 `op`s, the values
//! of Argo CD's own manifests and scripts (`kind: allow` of a sync window, the `operation`
//! `patch` or `create` of a resource action), the guard's `exceeded`
//! codes, which name the guard's own fields (`maxPruneFraction`), and the watch event types of
//! `app.update` (`ADDED`, `MODIFIED`, `DELETED`), as the Kubernetes API server sends them.
//!
//! # Versioning
//!
//! The protocol has one integer version, [`Server::PROTOCOL_VERSION`] (now 2), returned by `hello`
//! and `configure` as `protocolVersion`, next to `engineVersion` (the crate version) and the
//! `methods` this build answers. A client may send `"protocolVersion": N` in `configure`: a
//! server that does not speak N answers `unsupported_version`, so a mismatch shows at
//! start-up rather than as a wrong answer later.
//!
//! Within a version, changes are additive only: new methods, new optional params, new result
//! fields and new error codes. Clients ignore result fields they do not know and treat an
//! unknown error code as a failed request. Renaming or removing anything, making an optional
//! param required, or changing what a field or code means takes a new version. The schema in
//! `schema/protocol.schema.json` (also [`Server::json_schema`]) is generated from these types and a
//! test keeps the checked-in copy identical.
//!
//! # Errors
//!
//! One bad request gets one error response and the server carries on with the next line.
//!
//! | `code` | when | `id` |
//! |---|---|---|
//! | `parse_error` | the line is not JSON, or not UTF-8 | null |
//! | `invalid_request` | JSON but not a request: not an object, `id` missing or not a string, number or null, `method` missing or not a string, an unknown top-level field | the request's, when it could be read; else null |
//! | `unknown_method` | `method` is not a method of the protocol (names are case-sensitive) | the request's |
//! | `invalid_params` | `params` do not fit the method; `path` is the RFC 6901 pointer into the request, e.g. `/params/desired/2/kind` | the request's |
//! | `request_too_large` | the line is longer than the size limit (the server discards it without keeping it in memory) | null |
//! | `unsupported_version` | `configure` asked for another `protocolVersion` | the request's |
//! | `engine_error` | the engine refused the input (a bad object, rule or script) or the method is not in this build; `object` and `path` say where when the engine knows (`path` points into `object`) | the request's |
//! | `internal_error` | a bug; please report it | the request's, or null |
//! | `limit_exceeded` | `app.open`, `app.update` or `app.desired` would go over `maxSessions` or `maxSessionObjects` | the request's |
//!
//! Codes are stable (`ErrorCode`); messages are lowercase and specific, meant for people.
//!
//! # Limits and the end of input
//!
//! A request line may be at most `maxRequestBytes` long, newline excluded (16 MiB by default,
//! [`Server::DEFAULT_MAX_REQUEST_BYTES`]; `gitops-core serve --max-request-bytes N` or `configure`'s
//! `limits.maxRequestBytes` change it). Blank lines (only spaces, tabs, `\r`) are skipped and
//! get no response; a trailing `\r` is ignored, so CRLF clients work. The end of standard
//! input ends the server with exit status 0 once every response is written; a last line
//! without a newline is answered first. Nothing is read from or written to any file, and
//! standard error stays silent unless standard input or output fail (exit status 2), except
//! that a closed standard output ends the server quietly with status 0.
//!
//! Between requests the server keeps only its configuration: nothing of a request, its line
//! or its answer. `gitops-core serve` answers a request line of 1 MiB or more on a thread
//! that ends with the request, so that the memory it took goes back to the system (a
//! 50,000-object `diff` peaks at about 450 MB and leaves the process at 10 MB, near its 9 MB
//! at start; `benches/serve_memory.py` measures it).
//!
//! A panic in the engine is a bug: the request gets `internal_error` (the panic message is
//! also printed on standard error) and the server carries on with the next line.

mod controller;
mod engine;
mod error;
mod output;
pub(crate) mod schema;
mod server;
mod session;
mod shapes;
mod wire;

pub use output::Document;
pub use server::Server;

// The wire types are private: the protocol's contract is the JSON Schema generated from them
// (`Server::json_schema`), not the Rust types; a Rust host calls the library directly.
#[cfg(test)]
pub(crate) use wire::Response;
