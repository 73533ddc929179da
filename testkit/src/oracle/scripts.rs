//! gitops-core's side of the `scripts` area (`oracle/scripts.rs`), shared with the replay of
//! its recorded divergences (`src/tests/oracle_replay.rs`). Needs the library's `lua` feature:
//! the kit's own `lua` feature, which gitops-core's `lua` feature turns on.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use gitops_core as engine;

/// gitops-core's side, in process through the library: the built-in rules alone, or the
/// scripts of Argo CD's folder on the Lua engine (`--scripts-from-module`).
pub struct Ours {
    scripts: Option<engine::health::ScriptedHealth>,
    actions: engine::actions::Actions,
}

impl Ours {
    pub fn new(files: Option<&BTreeMap<String, String>>) -> Ours {
        use engine::actions::{ActionScripts, Actions};
        use engine::health::{HealthScripts, ScriptedHealth};
        Ours {
            scripts: files.map(|f| {
                ScriptedHealth::new(
                    HealthScripts::new().with_directory(f),
                    engine::script::LuaEngine::default(),
                )
            }),
            actions: Actions::new(
                files.map_or_else(ActionScripts::new, |f| ActionScripts::new().with_directory(f)),
            )
            .with_reveal_secrets(true),
        }
    }

    /// The health as `health::assess` gives it (a failure is `Unknown` with its message).
    pub fn health(&self, obj: &Value, now: i64) -> Value {
        let ctx = engine::health::HealthContext::new(now);
        let ctx = match &self.scripts {
            Some(s) => ctx.with_scripts(s),
            None => ctx,
        };
        match engine::health::assess(obj, &ctx) {
            Ok(Some(h)) => json!({"status": h.status.as_str(), "message": h.message}),
            Ok(None) => json!({"status": null, "message": ""}),
            Err(e) => {
                let h = e.health();
                json!({"status": h.status.as_str(), "message": h.message})
            }
        }
    }

    pub fn list(&self, obj: &Value, now: i64) -> Value {
        match self.actions.discover(obj, now) {
            Ok(found) => serde_json::to_value(found).unwrap_or(Value::Null),
            Err(e) => json!({"error": e.to_string()}),
        }
    }

    pub fn run(&self, obj: &Value, name: &str, parameters: &Value, now: i64) -> Value {
        let params: BTreeMap<String, String> = parameters
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        match self.actions.run(obj, name, &params, now) {
            Ok(r) => json!({"resources": r.resources.iter()
                .map(|x| json!({"operation": x.operation, "resource": x.apply_to(obj)}))
                .collect::<Vec<_>>()}),
            Err(e) => json!({"error": e.to_string()}),
        }
    }
}

/// gitops-core's value at a recorded `scripts` case's check pointer (`/health/message`,
/// `/actions`, `/runs/<name>`): the message or error text the runner compared, with the
/// scripts the case names (`scriptPaths`, read by the caller) or the built-in rules.
pub fn answer_at(
    params: &Value,
    pointer: &str,
    scripts: Option<&BTreeMap<String, String>>,
) -> Value {
    let ours = Ours::new(scripts);
    let (obj, now) = (&params["object"], params["now"].as_i64().unwrap_or(0));
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    if let Some(field) = pointer.strip_prefix("/health/") {
        return ours.health(obj, now)[field].clone();
    }
    if pointer == "/actions" {
        return json!(text(&ours.list(obj, now)["error"]));
    }
    match pointer.strip_prefix("/runs/") {
        Some(name) => json!(text(&ours.run(obj, name, &params["parameters"], now)["error"])),
        None => Value::Null,
    }
}
