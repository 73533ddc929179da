//! The JSON Schema shapes the wire types of the protocol share: objects, lists of Kubernetes
//! objects (the params of `wire` and of `session`).

/// Any JSON object.
pub(crate) fn object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "object" })
}

pub(crate) fn optional_object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["object", "null"] })
}

/// A Kubernetes object: `apiVersion`, `kind` and `metadata`, with the metadata fields the
/// engine reads typed; any other field is the object's own.
pub(crate) fn kubernetes_object_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["apiVersion", "kind", "metadata"],
        "properties": {
            "apiVersion": { "type": "string" },
            "kind": { "type": "string" },
            "metadata": {
                "type": "object",
                "properties": {
                    "name": { "type": "string" },
                    "generateName": { "type": "string" },
                    "namespace": { "type": "string" },
                    "labels": { "type": ["object", "null"], "additionalProperties": { "type": "string" } },
                    "annotations": { "type": ["object", "null"], "additionalProperties": { "type": "string" } }
                }
            }
        }
    })
}

pub(crate) fn objects_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let object = kubernetes_object_schema(generator);
    schemars::json_schema!({ "type": "array", "items": object })
}

/// The clusters a host knows: each an Argo CD cluster Secret or a map of `name`, `server` and
/// `project`.
pub(crate) fn clusters_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "server": { "type": "string" },
                "project": { "type": "string" }
            }
        }
    })
}
