//! The `jq` area: generated `jqPathExpressions` through Argo CD's ignore normalizer (gojq runs
//! `del(E)`: a rule that does not compile fails the comparison, one that fails on an object is
//! skipped for it) and through gitops-core's (`IgnoreNormalizer`: the bounded jq subset of
//! `script::jq`), on one Deployment. The expressions go beyond paths: `select` with `map`,
//! `to_entries`, `with_entries`, `paths`, `..`, alternatives, array construction, variables,
//! and filters outside the subset (cases: `tracking_cases.rs`). Counted apart: what Argo CD
//! accepts and gitops-core refuses (by the construct its refusal names); compared: the objects
//! both normalize.

use serde_json::{Value, json};

use gitops_core::config::IgnoreDifferences;
use gitops_core::config::Settings;
use gitops_core::ignore::IgnoreNormalizer;

/// gitops-core's answer in the oracle's shape: `refused`, `error` or the normalized object.
pub fn ours(params: &Value) -> Value {
    let rule = json!({"group": "*", "kind": "*", "jqPathExpressions": [params["expression"]]});
    let rule: IgnoreDifferences = match serde_json::from_value(rule) {
        Ok(r) => r,
        Err(e) => return json!({"refused": e.to_string()}),
    };
    let n = match IgnoreNormalizer::new(&[rule], &Settings::default()) {
        Ok(n) => n,
        Err(e) => return json!({"refused": e.to_string()}),
    };
    let mut obj = params["object"].clone();
    match n.normalize(&mut obj) {
        Ok(()) => json!({"object": obj}),
        Err(e) => json!({"error": e.to_string()}),
    }
}

/// The construct a refusal names (`` `map/1` ``, `array construction`, ...).
pub fn construct(refusal: &str) -> String {
    let r = refusal.rsplit(": ").next().unwrap_or(refusal);
    r.split(" is not allowed").next().unwrap_or(r).to_string()
}

/// Whether both answers agree: both refuse, or both normalize the object alike (an error of
/// gitops-core's, a limit, is no agreement).
pub fn agree(ours: &Value, argo: &Value) -> bool {
    match (ours.get("refused"), argo.get("refused")) {
        (Some(_), Some(_)) => true,
        (None, None) => ours.get("object").is_some() && ours.get("object") == argo.get("object"),
        _ => false,
    }
}

/// A construct as one word of a signature: `` `as` binding `` is `as-binding`.
pub fn slug(construct: &str) -> String {
    construct.replace('`', "").split_whitespace().collect::<Vec<_>>().join("-")
}
