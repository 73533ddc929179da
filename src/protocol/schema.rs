//! The JSON Schema of the protocol, generated from the wire types.

use serde_json::{Value, json};

use super::controller::{DeletionStepParams, NeedsRefreshParams, OperationParams, OrphansParams};
use super::output::defined;
use super::session::{AppCloseParams, AppDesiredParams, AppOpenParams, AppUpdateParams};
use super::wire::{
    ActionsListParams, ActionsRunParams, ConfigureParams, ConfigureResult, DecideParams,
    DiffParams, ErrorCode, HealthParams, HelloParams, Method, PROTOCOL_VERSION, PlanParams,
    Response, StepParams, result_schema_of,
};

/// The `Request` definition: one request line, `{"id": ..., "method": ..., "params": {...}}`,
/// with the params of each method. The server reads the same types in steps (see
/// `server.rs`), so that each kind of mistake gets its own error code; this is the shape the
/// schema publishes, one branch per method in the order of [`Method::ALL`].
fn request_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let branches: Vec<Value> = Method::ALL
        .iter()
        .map(|&m| {
            let params = params_schema_of(m, generator);
            // `configure` and `hello` take their params left out or null.
            let (description, params, required) = match m {
                Method::Configure => (
                    "`configure`. Left out or null, its params make it the handshake: it reports \
                     the server\nand changes no configuration. Given (`{}` too), they replace \
                     the whole configuration."
                        .to_owned(),
                    json!({"anyOf": [params, {"type": "null"}]}),
                    json!(["method"]),
                ),
                Method::Hello => (
                    "`hello`, the handshake; its params may be left out or null.".to_owned(),
                    json!({"anyOf": [params, {"type": "null"}]}),
                    json!(["method"]),
                ),
                _ => (format!("`{}`.", m.name()), json!(params), json!(["method", "params"])),
            };
            json!({
                "description": description,
                "properties": {"method": {"const": m.name(), "type": "string"}, "params": params},
                "required": required,
                "type": "object",
            })
        })
        .collect();
    let id = json!({
        "description": "Chosen by the client and echoed in the response: a string, a number or null.",
        "type": ["string", "number", "null"],
    });
    defined(generator, "Request", || {
        json!({
            "description": "One request line: `{\"id\": ..., \"method\": ..., \"params\": {...}}`, \
                with the params of each\nmethod. The server also takes a request without \
                `params` (or with `\"params\": null`) as\n`{}`, and refuses any other top-level \
                field.",
            "oneOf": branches,
            "properties": {"id": id},
            "required": ["id"],
            "type": "object",
            "unevaluatedProperties": false,
        })
    })
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
        Method::Orphans => generator.subschema_for::<OrphansParams>(),
        Method::NeedsRefresh => generator.subschema_for::<NeedsRefreshParams>(),
        Method::DeletionStep => generator.subschema_for::<DeletionStepParams>(),
        Method::Operation => generator.subschema_for::<OperationParams>(),
    }
}

/// The protocol's JSON Schema ([`Server::json_schema`](super::Server::json_schema)).
pub(crate) fn json_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let request = request_schema(&mut generator);
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
