//! Argo CD's own `argoproj.io` Application kind.
//!
//! Argo CD has no built-in check for an Application (the one it had was removed in 1.8), so an
//! Application's health comes only from a script an operator adds in `argocd-cm` (the
//! documented one reads `obj.status.health`). Two rules of app aggregation concern the kind:
//! a child Application that is Missing or Unknown does not count, and the Application being
//! assessed is left out when it manages itself ([`is_application_itself`]).

use serde_json::Value;

use crate::object::{ObjectRef, split_api_version};

/// The API group of Argo CD's Application.
pub(crate) const GROUP: &str = "argoproj.io";
/// The kind of Argo CD's Application.
pub(crate) const KIND: &str = "Application";

/// Whether a resource is an Argo CD Application.
pub(crate) fn is_application(o: &ObjectRef) -> bool {
    o.group == GROUP && o.kind == KIND
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Whether `live` is the Application `app` itself (same UID, name and namespace, and of group
/// `argoproj.io` and kind `Application`): Argo CD leaves it out of its own health.
pub(crate) fn is_application_itself(app: &Value, live: &Value) -> bool {
    let (group, _) = split_api_version(text(live, "/apiVersion"));
    group == GROUP
        && text(live, "/kind") == KIND
        && text(live, "/metadata/uid") == text(app, "/metadata/uid")
        && text(live, "/metadata/name") == text(app, "/metadata/name")
        && text(live, "/metadata/namespace") == text(app, "/metadata/namespace")
}
