//! The JSON Schema of the protocol, generated from the wire types.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::session::{AppCloseParams, AppDesiredParams, AppOpenParams, AppUpdateParams};
use super::wire::{
    ActionsListParams, ActionsRunParams, ConfigureParams, ConfigureResult, DecideParams,
    DiffParams, ErrorCode, HealthParams, HelloParams, Method, PROTOCOL_VERSION, PlanParams,
    Response, StepParams, result_schema_of,
};

// The server reads the same types in steps (see `server.rs`), so that each kind of mistake
// gets its own error code; this type is the shape the schema publishes.
/// One request line: `{"id": ..., "method": ..., "params": {...}}`, with the params of each
/// method. The server also takes a request without `params` (or with `"params": null`) as
/// `{}`, and refuses any other top-level field.
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "Request", extend("unevaluatedProperties" = false))]
#[allow(dead_code)] // read only by the schema generator and tests
pub(crate) struct TypedRequest {
    /// Chosen by the client and echoed in the response: a string, a number or null.
    #[schemars(schema_with = "id_schema")]
    pub(crate) id: Value,
    /// The method and its params.
    #[serde(flatten)]
    pub(crate) call: Call,
}

/// A method with its params.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "method", content = "params", rename_all = "lowercase")]
#[allow(dead_code)] // read only by the schema generator and tests
pub(crate) enum Call {
    /// `diff`.
    Diff(DiffParams),
    /// `health`.
    Health(HealthParams),
    /// `plan`.
    Plan(PlanParams),
    /// `step`.
    Step(StepParams),
    /// `decide`.
    Decide(DecideParams),
    /// `configure`. Left out or null, its params make it the handshake: it reports the server
    /// and changes no configuration. Given (`{}` too), they replace the whole configuration.
    #[schemars(transform = params_optional)]
    Configure(Option<ConfigureParams>),
    /// `hello`, the handshake; its params may be left out or null.
    #[schemars(transform = params_optional)]
    Hello(Option<HelloParams>),
    /// `actions.list`.
    #[serde(rename = "actions.list")]
    ActionsList(ActionsListParams),
    /// `actions.run`.
    #[serde(rename = "actions.run")]
    ActionsRun(ActionsRunParams),
    /// `app.open`.
    #[serde(rename = "app.open")]
    AppOpen(AppOpenParams),
    /// `app.update`.
    #[serde(rename = "app.update")]
    AppUpdate(AppUpdateParams),
    /// `app.desired`.
    #[serde(rename = "app.desired")]
    AppDesired(AppDesiredParams),
    /// `app.close`.
    #[serde(rename = "app.close")]
    AppClose(AppCloseParams),
}

/// Drops `params` from the `required` list of a method's request shape.
fn params_optional(schema: &mut schemars::Schema) {
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|v| v != "params");
    }
}

/// The schema of `method`'s params, as a reference into `$defs`.
fn params_schema_of(method: Method, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    match method {
        Method::Diff => generator.subschema_for::<DiffParams>(),
        Method::Health => generator.subschema_for::<HealthParams>(),
        Method::Plan => generator.subschema_for::<PlanParams>(),
        Method::Step => generator.subschema_for::<StepParams>(),
        Method::Decide => generator.subschema_for::<DecideParams>(),
        Method::Configure => generator.subschema_for::<ConfigureParams>(),
        Method::Hello => generator.subschema_for::<HelloParams>(),
        Method::ActionsList => generator.subschema_for::<ActionsListParams>(),
        Method::ActionsRun => generator.subschema_for::<ActionsRunParams>(),
        Method::AppOpen => generator.subschema_for::<AppOpenParams>(),
        Method::AppUpdate => generator.subschema_for::<AppUpdateParams>(),
        Method::AppDesired => generator.subschema_for::<AppDesiredParams>(),
        Method::AppClose => generator.subschema_for::<AppCloseParams>(),
    }
}

fn id_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "A string, a number or null, chosen by the client.",
        "type": ["string", "number", "null"]
    })
}

/// The JSON Schema (draft 2020-12) of the protocol: one line is a `Request` or a `Response`
/// (see `$defs`), and `$defs` also holds each method's params and result.
///
/// The same document is checked in as `schema/protocol.schema.json`.
///
/// # Examples
///
/// ```
/// let schema = gitops_core::protocol::json_schema();
/// assert_eq!(schema["x-protocolVersion"], 2);
/// assert!(schema["$defs"]["DiffParams"]["properties"]["desired"].is_object());
/// ```
pub fn json_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let request = generator.subschema_for::<TypedRequest>();
    let response = generator.subschema_for::<Response>();
    generator.subschema_for::<ConfigureResult>();
    generator.subschema_for::<super::output::DiffOutput>();
    generator.subschema_for::<super::output::HealthOutput>();
    generator.subschema_for::<super::output::PlanOutput>();
    generator.subschema_for::<super::output::DecideOutput>();
    generator.subschema_for::<super::output::ActionsListOutput>();
    generator.subschema_for::<super::output::ActionsRunOutput>();
    generator.subschema_for::<ErrorCode>();
    let methods: serde_json::Map<String, Value> = Method::ALL
        .iter()
        .map(|m| {
            let params = params_schema_of(*m, &mut generator);
            let result = result_schema_of(*m, &mut generator);
            (m.name().to_string(), json!({ "params": params, "result": result }))
        })
        .collect();
    let defs = generator.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gitops-core serve protocol",
        "description": "One JSON value per line: a Request on standard input, a Response on \
            standard output. The result of each method is the JSON the CLI command of the \
            same name prints with `--output json`.",
        "x-protocolVersion": PROTOCOL_VERSION,
        "oneOf": [request, response],
        "x-methods": methods,
        "$defs": defs,
    })
}
