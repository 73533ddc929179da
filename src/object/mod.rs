//! The object model: identities of Kubernetes objects, manifest parsing and namespace scope.
//!
//! Objects are plain [`serde_json::Value`]s, as the API server returns them. This module gives
//! them an identity ([`ObjectRef`]), reads them from YAML streams, JSON documents and `List`s
//! ([`parse_manifests`]), and knows which kinds are cluster-scoped ([`Scopes`]).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod decode;
mod index;
// Names are checked where actions make objects.
mod names;
mod resolve;
mod typed;
mod write;
mod yaml;

pub(crate) use decode::last_applied_may_hold_managed_fields;
pub use index::ObjectIndex;
pub(crate) use names::name_problem;
pub(crate) use typed::from_yaml_value;
pub use write::{WriteError, to_yaml};

/// The identity of a Kubernetes object: API group and version, kind, namespace and name.
///
/// The core group is the empty string, and so is the namespace of a cluster-scoped object.
/// Objects sort by group, kind, namespace, name and then version, the order every output of
/// this crate uses.
///
/// # Examples
///
/// ```
/// use gitops_core::object::ObjectRef;
/// let obj = serde_json::json!({
///     "apiVersion": "apps/v1", "kind": "Deployment",
///     "metadata": {"name": "api", "namespace": "bookstore"}
/// });
/// let r = ObjectRef::from_object(&obj).unwrap();
/// assert_eq!(r.to_string(), "apps/Deployment:bookstore/api");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "serve", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ObjectRef {
    /// API group, `""` for the core group.
    pub group: String,
    /// API version within the group, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
    /// Namespace, `""` for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// Builds a reference from its parts.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ObjectRef {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Reads the identity of an object. Fails when `apiVersion`, `kind` or `metadata.name`
    /// is missing or not a string (`metadata.generateName` stands in for a missing name).
    pub fn from_object(obj: &Value) -> Result<ObjectRef, ParseError> {
        identity(obj, 0, None, true)
    }

    /// Reads the identity of an object without checking it, with empty strings for what is
    /// missing. For objects already validated by [`parse_manifests`].
    pub fn from_object_lossy(obj: &Value) -> ObjectRef {
        let r = RefParts::of(obj);
        ObjectRef {
            group: r.group.to_string(),
            version: r.version.to_string(),
            kind: r.kind.to_string(),
            namespace: r.namespace.to_string(),
            name: r.name.to_string(),
        }
    }

    /// `group/Kind`, or `Kind` for the core group: the key Argo CD uses in `argocd-cm`.
    pub fn group_kind(&self) -> String {
        group_kind_key(&self.group, &self.kind)
    }

    /// The `apiVersion` string: `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Argo CD's resource key text, `group/Kind/namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}/{}", self.group, self.kind, self.namespace, self.name)
    }

    /// The identity without the version, for pairing objects of different versions.
    pub fn same_object(&self, other: &ObjectRef) -> bool {
        self.group == other.group
            && self.kind == other.kind
            && self.namespace == other.namespace
            && self.name == other.name
    }
}

/// The identity of an object borrowed from it, read as [`ObjectRef::from_object_lossy`] reads
/// it: for lookups and sorting without copying the strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct RefParts<'a> {
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub version: &'a str,
}

impl<'a> RefParts<'a> {
    /// The parts of `obj`, empty where missing.
    pub(crate) fn of(obj: &'a Value) -> Self {
        let (group, version) = split_api_version(str_at(obj, &["apiVersion"]));
        RefParts {
            group,
            kind: str_at(obj, &["kind"]),
            namespace: str_at(obj, &["metadata", "namespace"]),
            name: object_name(obj),
            version,
        }
    }

    /// The group and the kind of `obj` alone (empty where missing), for a caller that needs
    /// no more: the metadata is not read.
    pub(crate) fn group_kind_of(obj: &'a Value) -> (&'a str, &'a str) {
        (split_api_version(str_at(obj, &["apiVersion"])).0, str_at(obj, &["kind"]))
    }

    /// Group, kind, namespace and name: Argo CD's resource key.
    pub(crate) fn key(&self) -> (&'a str, &'a str, &'a str, &'a str) {
        (self.group, self.kind, self.namespace, self.name)
    }
}

impl Ord for ObjectRef {
    fn cmp(&self, other: &Self) -> Ordering {
        (&self.group, &self.kind, &self.namespace, &self.name, &self.version).cmp(&(
            &other.group,
            &other.kind,
            &other.namespace,
            &other.name,
            &other.version,
        ))
    }
}

impl PartialOrd for ObjectRef {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `group/Kind:namespace/name`, the way Argo CD names a resource in messages
/// ("Caused by apps/Deployment:bookstore-dev/api"); the core group has no `group/` prefix and a
/// cluster-scoped object no `namespace/`.
impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.group.is_empty() {
            write!(f, "{}/", self.group)?;
        }
        write!(f, "{}:", self.kind)?;
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        f.write_str(&self.name)
    }
}

/// `group/Kind`, or `Kind` when the group is empty.
pub(crate) fn group_kind_key(group: &str, kind: &str) -> String {
    if group.is_empty() { kind.to_string() } else { format!("{group}/{kind}") }
}

/// Splits an `apiVersion` into group and version: `apps/v1` gives (`apps`, `v1`), `v1` gives
/// (``, `v1`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// Where an error was found: which document of the input, which item of a `List`, and the
/// RFC 6901 pointer inside that object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Location {
    /// Index of the document in the input (0-based; every `---` starts a new one). Messages
    /// count documents from 1.
    pub document: usize,
    /// Index inside the document's `items`, when the document is a `List`.
    pub item: Option<usize>,
    /// RFC 6901 pointer inside the object (or the document, for a whole-document error).
    pub path: String,
}

impl fmt::Display for Location {
    /// `document 3 item 2`: documents counted from 1, as lines are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "document {}", self.document + 1)?;
        if let Some(item) = self.item {
            write!(f, " item {item}")?;
        }
        Ok(())
    }
}

/// An error reading manifests.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The text is not valid YAML (or JSON).
    #[error("document {}: invalid {format}: {message}", document + 1)]
    Syntax {
        /// Index of the document that failed (0-based; the message counts from 1).
        document: usize,
        /// `yaml` or `json`.
        format: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A document is not a mapping (a string, a list, a number).
    #[error("{at}: expected an object, found {found}")]
    NotAnObject {
        /// Where.
        at: Location,
        /// What was found instead: `a string`, `an array`, ...
        found: &'static str,
    },
    /// A required field is missing or empty.
    #[error("{at}: missing field `{field}`")]
    MissingField {
        /// Where; `path` points at the missing field.
        at: Location,
        /// The dotted name of the field: `apiVersion`, `kind`, `metadata.name`.
        field: &'static str,
    },
    /// A field has the wrong type.
    #[error("{at}: field `{field}` must be {expected}, found {found}")]
    WrongType {
        /// Where; `path` points at the field.
        at: Location,
        /// The dotted name of the field.
        field: &'static str,
        /// The expected type, e.g. `a string`.
        expected: &'static str,
        /// The type found.
        found: &'static str,
    },
    /// A string (value or key) longer than [`ParseOptions::max_string_bytes`].
    #[error("{at}: a string of {bytes} bytes exceeds the limit of {limit} bytes at {}", at.path)]
    TooLong {
        /// Where; `path` points at the value, or at the object holding a key too long.
        at: Location,
        /// The string's length in bytes.
        bytes: usize,
        /// The limit, [`ParseOptions::max_string_bytes`].
        limit: usize,
    },
    /// The whole text is longer than [`ParseOptions::max_bytes`].
    #[error("the input of {bytes} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The text's length in bytes.
        bytes: usize,
        /// The limit, [`ParseOptions::max_bytes`].
        limit: usize,
    },
    /// The text holds more objects than [`ParseOptions::max_objects`].
    #[error("{at}: more than {limit} objects")]
    TooManyObjects {
        /// The first object over the limit.
        at: Location,
        /// The limit, [`ParseOptions::max_objects`].
        limit: usize,
    },
    /// A mapping repeats a key, read with [`DuplicateKeys::Refuse`].
    #[error("{at}: duplicate key `{key}` at {}", at.path)]
    DuplicateKey {
        /// Where; `path` points at the repeated key.
        at: Location,
        /// The key.
        key: String,
    },
    /// A document whose aliases build too much, refused as go-yaml v2 (so Argo CD) refuses
    /// it: once more than 100 of over 1,000 values decoded come from aliases, and their share
    /// is over the allowed ratio (99% up to 400,000 values decoded, falling in a straight line
    /// to 10% at 4,000,000). Checked as the values are built, so memory stays bounded.
    #[error(
        "{at}: excessive aliasing at {}: {aliased} of the {decoded} values decoded come from aliases, over the {:.2}% allowed",
        at.path,
        yaml::allowed_alias_ratio(*decoded) * 100.0
    )]
    ExcessiveAliasing {
        /// Where the limit was passed.
        at: Location,
        /// Values decoded inside aliases so far.
        aliased: usize,
        /// Values decoded so far, aliases expanded.
        decoded: usize,
    },
    /// A value YAML can hold but JSON cannot (a null key, NaN, a tag that does not fit).
    #[error("{at}: {message} at {}", at.path)]
    Unsupported {
        /// Where.
        at: Location,
        /// What is wrong.
        message: String,
    },
}

impl ParseError {
    /// Where the error is, when it is inside a document.
    pub fn location(&self) -> Option<&Location> {
        match self {
            ParseError::Syntax { .. } | ParseError::TooLarge { .. } => None,
            ParseError::NotAnObject { at, .. }
            | ParseError::MissingField { at, .. }
            | ParseError::WrongType { at, .. }
            | ParseError::TooLong { at, .. }
            | ParseError::TooManyObjects { at, .. }
            | ParseError::DuplicateKey { at, .. }
            | ParseError::ExcessiveAliasing { at, .. }
            | ParseError::Unsupported { at, .. } => Some(at),
        }
    }
}

/// The JSON type name of a value, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How manifests are read: what a repeated key does, and the limits.
///
/// The defaults read as Argo CD reads (a repeated key keeps its last value, with a warning) and
/// fit any real application: 128 MiB of text, 50,000 objects, strings of 16 MiB. The API server
/// refuses a request over 3 MiB and etcd an object over 1.5 MiB, so a longer string is no
/// Kubernetes object; the limits keep a host's memory bounded by what it chose to read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// What a mapping that repeats a key gives.
    pub duplicate_keys: DuplicateKeys,
    /// The longest text read, in bytes.
    pub max_bytes: usize,
    /// The most objects read (after `List`s are flattened).
    pub max_objects: usize,
    /// The longest string, value or key, in bytes.
    pub max_string_bytes: usize,
    /// Whether every object needs `metadata.name` (or `generateName`). Health needs only
    /// `apiVersion` and `kind`.
    pub require_name: bool,
    /// Numbers as go-yaml v2 decodes them (a float stays a float, `1e6` too; a `uint64` stays
    /// one), for a reading into a typed structure ([`from_yaml_value`]) that takes them through
    /// JSON itself, as sigs.k8s.io/yaml's `Unmarshal` does: `1e6` where a string is wanted is
    /// `"1e+06"`, not the `1000000` of the JSON step.
    pub(crate) go_numbers: bool,
    /// Whether [`ParseOptions::parse_manifests`] may leave each object's
    /// `metadata.managedFields` out instead of building it (off by default), for a caller
    /// whose use of the objects cannot depend on the field (the diff asks
    /// `AppDiffInput::reads_live_managed_fields`): often half of a live object's values. Only
    /// a JSON text is read so, and only a field that reads cleanly and as the API server
    /// writes it (a list of entries with their known keys, strings, `time` as
    /// `2006-01-02T15:04:05Z`, a `fieldsV1` mapping) in an object whose last-applied
    /// annotation cannot hold one; otherwise, and for anything the reading would warn
    /// about or refuse, the whole text is read again with every field. The objects are then
    /// the same but for the field, and the warnings and errors are the same.
    pub leave_out_managed_fields: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            duplicate_keys: DuplicateKeys::LastWins,
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_objects: Self::DEFAULT_MAX_OBJECTS,
            max_string_bytes: Self::DEFAULT_MAX_STRING_BYTES,
            require_name: true,
            go_numbers: false,
            leave_out_managed_fields: false,
        }
    }
}

impl ParseOptions {
    /// The default of [`ParseOptions::max_bytes`]: 128 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 128 * 1024 * 1024;

    /// The default of [`ParseOptions::max_objects`]: 50,000.
    pub const DEFAULT_MAX_OBJECTS: usize = 50_000;

    /// The default of [`ParseOptions::max_string_bytes`]: 16 MiB. The API server refuses a
    /// request body over 3 MiB and etcd an object over 1.5 MiB, so a longer string is no
    /// Kubernetes object.
    pub const DEFAULT_MAX_STRING_BYTES: usize = 16 * 1024 * 1024;

    /// Deepest nesting of YAML flow collections (`[`, `{`) the parser is given, whatever the
    /// options. The parser's own limit (128) would reject deeper input anyway, but only after
    /// work that grows with the square of the depth; this scan rejects it in linear time.
    pub const MAX_FLOW_DEPTH: usize = 1000;

    /// Refuse a repeated key instead of keeping the last value.
    #[must_use]
    pub fn strict(mut self) -> Self {
        self.duplicate_keys = DuplicateKeys::Refuse;
        self
    }
    /// Sets [`ParseOptions::max_bytes`].
    #[must_use]
    pub fn with_max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }
    /// Sets [`ParseOptions::max_objects`].
    #[must_use]
    pub fn with_max_objects(mut self, n: usize) -> Self {
        self.max_objects = n;
        self
    }
    /// Sets [`ParseOptions::max_string_bytes`].
    #[must_use]
    pub fn with_max_string_bytes(mut self, n: usize) -> Self {
        self.max_string_bytes = n;
        self
    }
    /// Sets [`ParseOptions::require_name`].
    #[must_use]
    pub fn with_require_name(mut self, yes: bool) -> Self {
        self.require_name = yes;
        self
    }

    /// Sets [`ParseOptions::leave_out_managed_fields`].
    #[must_use]
    pub fn with_leave_out_managed_fields(mut self, yes: bool) -> Self {
        self.leave_out_managed_fields = yes;
        self
    }

    /// Reads Kubernetes objects from text as [`parse_manifests`] does, with the options given: by
    /// default as Argo CD reads them, a repeated key keeping its last value with a warning.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::object::ParseOptions;
    /// let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: '1', k: '2'}\n";
    /// let read = ParseOptions::default().parse_manifests(text).unwrap();
    /// assert_eq!(read.objects[0]["data"]["k"], "2");
    /// assert_eq!(
    ///     read.warnings[0].to_string(),
    ///     "document 1: duplicate key `k` at /data/k: the last value is kept"
    /// );
    ///
    /// let err = ParseOptions::default().strict().parse_manifests(text).unwrap_err();
    /// assert_eq!(err.to_string(), "document 1: duplicate key `k` at /data/k");
    /// ```
    pub fn parse_manifests(&self, text: &str) -> Result<Manifests, ParseError> {
        let read = if self.leave_out_managed_fields { json_leaving_out(text, self) } else { None };
        let (docs, warnings) = match read {
            Some(read) => read,
            None => documents(text, self, Lines::Kubernetes)?,
        };
        let mut out = Vec::new();
        let mut push = |obj: Value, document: usize, item: Option<usize>| {
            if out.len() >= self.max_objects {
                let at = Location { document, item, path: String::new() };
                return Err(ParseError::TooManyObjects { at, limit: self.max_objects });
            }
            identity(&obj, document, item, self.require_name)?;
            out.push(obj);
            Ok(())
        };
        for (index, doc) in docs.into_iter().enumerate() {
            match doc {
                Value::Null => {}
                Value::Array(items) => {
                    for (i, item) in items.into_iter().enumerate() {
                        push(item, index, Some(i))?;
                    }
                }
                Value::Object(mut doc) => {
                    let is_list = doc
                        .get("kind")
                        .and_then(Value::as_str)
                        .is_some_and(|k| k.ends_with("List"))
                        && doc.contains_key("items");
                    if !is_list {
                        push(Value::Object(doc), index, None)?;
                        continue;
                    }
                    match doc.remove("items") {
                        Some(Value::Array(items)) => {
                            for (i, item) in items.into_iter().enumerate() {
                                push(item, index, Some(i))?;
                            }
                        }
                        found => {
                            return Err(ParseError::WrongType {
                                at: Location { document: index, item: None, path: "/items".into() },
                                field: "items",
                                expected: "an array",
                                found: type_name(found.as_ref().unwrap_or(&Value::Null)),
                            });
                        }
                    }
                }
                doc => push(doc, index, None)?,
            }
        }
        Ok(Manifests { objects: out, warnings })
    }

    /// Parses text into its documents with the options given, and the warnings of the reading.
    /// A leading UTF-8 byte order mark is skipped, as kubectl skips it.
    pub fn parse_documents(
        &self,
        text: &str,
    ) -> Result<(Vec<Value>, Vec<ParseWarning>), ParseError> {
        documents(text, self, Lines::AsGiven)
    }
}

/// What a mapping that repeats a key gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DuplicateKeys {
    /// The last value is kept and a [`ParseWarning::DuplicateKey`] names the key, as Argo CD,
    /// Helm and kubectl read YAML (and Go's JSON decoder reads JSON).
    #[default]
    LastWins,
    /// The document is refused with [`ParseError::DuplicateKey`].
    Refuse,
}

/// Something read that the reader passed over or resolved a particular way, kept so that a
/// host can show it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseWarning {
    /// A mapping repeats a key; the last value is kept.
    #[error("{at}: duplicate key `{key}` at {}: the last value is kept", at.path)]
    DuplicateKey {
        /// Where; `path` points at the repeated key.
        at: Location,
        /// The key.
        key: String,
    },
}

/// Objects read from text, with what the reader has to say about them.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Manifests {
    /// The objects, in the order of the text, `List`s flattened.
    pub objects: Vec<Value>,
    /// Warnings, in the order of the text.
    pub warnings: Vec<ParseWarning>,
}

/// Reads Kubernetes objects from text: a YAML stream (documents separated by `---`), a JSON
/// document, a JSON array of objects, or any of those holding a `List` (a kind ending in `List`
/// with `items`), which is flattened into its items.
///
/// This is the strict reading: a repeated key is an error. [`ParseOptions::parse_manifests`] reads as
/// Argo CD reads (the last value wins, with a warning) and takes the limits.
///
/// Empty documents are skipped. Every object must have `apiVersion`, `kind` and
/// `metadata.name` (or `metadata.generateName`), all strings; the error names the document
/// (counted from 1), the list item and the missing field. YAML is read as Kubernetes' reader
/// (sigs.k8s.io/yaml over go-yaml v2) reads it, which is YAML 1.1: `0644` is 420, `yes` and
/// `on` are `true`, a mapping key becomes its JSON text (`yes:` is `"true"`). Anchors and merge
/// keys are expanded; a document whose aliases build more than go-yaml v2 allows is
/// [`ParseError::ExcessiveAliasing`], and nesting deeper than 128 levels is an error.
///
/// # Examples
///
/// ```
/// let objs = gitops_core::object::parse_manifests(
///     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n\
///      apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: b}}\n",
/// ).unwrap();
/// assert_eq!(objs.len(), 2);
///
/// let err = gitops_core::object::parse_manifests("apiVersion: v1\nmetadata: {name: a}\n").unwrap_err();
/// assert_eq!(err.to_string(), "document 1: missing field `kind`");
/// ```
pub fn parse_manifests(text: &str) -> Result<Vec<Value>, ParseError> {
    ParseOptions::default().strict().parse_manifests(text).map(|m| m.objects)
}

/// Reads one JSON value as `serde_json::from_slice` does (the same syntax, errors and depth
/// limit), and the keys its objects repeat, as (RFC 6901 pointer, key), in the order read
/// (the last value of a repeated key is kept). No size limit applies.
#[cfg(feature = "serve")]
pub(crate) fn parse_json_value(
    bytes: &[u8],
) -> Result<(Value, Vec<(String, String)>), serde_json::Error> {
    let options = ParseOptions::default().with_max_string_bytes(usize::MAX);
    let mut warnings = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut ctx = decode::Context::new(0, &options, &mut warnings);
    let value = DeserializeSeed::deserialize(decode::Node(&mut ctx), &mut de)?;
    de.end()?;
    let repeated = warnings
        .into_iter()
        .filter_map(|w| match w {
            ParseWarning::DuplicateKey { at, key } => Some((at.path, key)),
            #[allow(unreachable_patterns)]
            _ => None,
        })
        .collect();
    Ok((value, repeated))
}

/// Parses text into its documents, as JSON values, without checking them, the strict way (a
/// repeated key is an error). A document that is empty (or only comments) is `Value::Null`.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, ParseError> {
    ParseOptions::default().strict().parse_documents(text).map(|(docs, _)| docs)
}

/// How the last line of a YAML text is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lines {
    /// As go-yaml v2 reads the text given (sigs.k8s.io/yaml's `Unmarshal`, as Argo CD reads
    /// argocd-cm's embedded YAML and its health and action tests' fixtures).
    AsGiven,
    /// As Kubernetes' YAML reader (apimachinery's `YAMLReader`, under Argo CD's
    /// `kube.SplitYAML` and the repo-server's reading of an app's files) hands documents to
    /// go-yaml v2: line by line, each line ending in `\n`, the last one too. A block scalar on
    /// the last line of a text with no final line break then keeps one (`k: |` then `  a` is
    /// `"a\n"`).
    Kubernetes,
}

/// A JSON text's documents read with objects' `metadata.managedFields` left out
/// ([`ParseOptions::leave_out_managed_fields`]), or `None` when it is not read so: a text that
/// is not JSON, that [`documents`] refuses or warns about, or in which the field cannot be
/// left out (`decode::Skip` gave up). The caller then reads it with [`documents`].
fn json_leaving_out(text: &str, options: &ParseOptions) -> Option<(Vec<Value>, Vec<ParseWarning>)> {
    if text.len() > options.max_bytes {
        return None;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    let mut warnings = Vec::new();
    let mut de = serde_json::Deserializer::from_str(trimmed);
    let mut docs = Vec::new();
    loop {
        let mut ctx = decode::Context::new(docs.len(), options, &mut warnings);
        ctx.json_numbers = !options.go_numbers;
        ctx.leave_out = true;
        docs.push(DeserializeSeed::deserialize(decode::Node(&mut ctx), &mut de).ok()?);
        if de.end().is_ok() {
            break;
        }
    }
    // A warning read in full names what it warns about the same way.
    warnings.is_empty().then_some((docs, warnings))
}

/// [`ParseOptions::parse_documents`], the last line read as `lines` says.
fn documents(
    text: &str,
    options: &ParseOptions,
    lines: Lines,
) -> Result<(Vec<Value>, Vec<ParseWarning>), ParseError> {
    if text.len() > options.max_bytes {
        return Err(ParseError::TooLarge { bytes: text.len(), limit: options.max_bytes });
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut warnings = Vec::new();
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // JSON first: faster and with better messages. A YAML flow mapping that is not
        // JSON falls through to the YAML parser.
        let mut de = serde_json::Deserializer::from_str(trimmed);
        let mut docs = Vec::new();
        let mut fell_through = false;
        loop {
            let mut ctx = decode::Context::new(docs.len(), options, &mut warnings);
            // Argo CD reads a JSON document through go-yaml v2 too (kube.SplitYAML, then
            // sigs.k8s.io/yaml): its numbers come out as the YAML reader's do.
            ctx.json_numbers = !options.go_numbers;
            match DeserializeSeed::deserialize(decode::Node(&mut ctx), &mut de) {
                Ok(v) => docs.push(v),
                Err(e) => {
                    if let Some(error) = ctx.error {
                        return Err(error);
                    }
                    // Too deep is too deep in YAML as well: do not parse it a second time.
                    if e.to_string().starts_with("recursion limit exceeded") {
                        return Err(ParseError::Syntax {
                            document: docs.len(),
                            format: "json",
                            message: name_the_limit(e.to_string()),
                        });
                    }
                    fell_through = true;
                    break;
                }
            }
            if de.end().is_ok() {
                break;
            }
        }
        if !fell_through {
            return Ok((docs, warnings));
        }
        warnings.clear();
        if let Some(stream) = json_stream_as_yaml(trimmed) {
            check_flow_depth(&stream)?;
            let docs = yaml::read(&stream, options, lines, &mut warnings)?;
            return Ok((docs, warnings));
        }
    }
    check_flow_depth(text)?;
    let docs = yaml::read(text, options, lines, &mut warnings)?;
    Ok((docs, warnings))
}

/// Several JSON documents one after the other that serde_json does not read (a number beyond
/// float64, `-1e400`) as one YAML stream, a `---` line between each two: Kubernetes' reader
/// (`kube.SplitYAML`'s `YAMLOrJSONDecoder`, for a text that starts with `{`) splits such a
/// text by JSON syntax alone and hands each document to go-yaml v2, which reads the number as
/// a string. `None` for a single document (read as YAML as it is) or a text that is no stream
/// of JSON values.
fn json_stream_as_yaml(trimmed: &str) -> Option<String> {
    if !trimmed.starts_with('{') {
        return None;
    }
    // Skipping a value checks its syntax only, not a number's range.
    let mut stream =
        serde_json::Deserializer::from_str(trimmed).into_iter::<serde::de::IgnoredAny>();
    let mut ends = Vec::new();
    while let Some(value) = stream.next() {
        value.ok()?;
        ends.push(stream.byte_offset());
    }
    if ends.len() < 2 {
        return None;
    }
    let mut out = String::with_capacity(trimmed.len() + 5 * ends.len());
    let mut from = 0;
    for end in ends {
        if from > 0 {
            out.push_str("---\n");
        }
        out.push_str(trimmed[from..end].trim());
        out.push('\n');
        from = end;
    }
    Some(out)
}

/// The JSON parser's limit error with the limit named: it stops at 128 levels of nesting, as
/// the YAML reader does.
fn name_the_limit(message: String) -> String {
    match message.strip_prefix("recursion limit exceeded") {
        Some(rest) => format!("nesting deeper than {} levels{rest}", yaml::MAX_DEPTH),
        None => message,
    }
}

/// Scans for flow brackets outside quotes and comments, and fails on nesting deeper than
/// [`ParseOptions::MAX_FLOW_DEPTH`], naming the document.
fn check_flow_depth(text: &str) -> Result<(), ParseError> {
    let bytes = text.as_bytes();
    let (mut depth, mut document, mut line_start) = (0usize, 0usize, true);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if line_start && bytes[i..].starts_with(b"---") {
            document += 1;
            depth = 0;
        }
        line_start = b == b'\n';
        match b {
            b'[' | b'{' => {
                depth += 1;
                if depth > ParseOptions::MAX_FLOW_DEPTH {
                    return Err(ParseError::Syntax {
                        format: "yaml",
                        // The first document has no leading `---` in most streams.
                        document: document
                            .saturating_sub(usize::from(text.trim_start().starts_with("---"))),
                        message: format!(
                            "nesting deeper than {} levels",
                            ParseOptions::MAX_FLOW_DEPTH
                        ),
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' | b'\''
                if i == 0
                    || matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'[' | b'{' | b',' | b':') =>
            {
                // Skip the quoted scalar (escapes in double quotes, '' in single quotes).
                let quote = b;
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    if quote == b'"' && bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'#' if i == 0 || bytes[i - 1].is_ascii_whitespace() => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                line_start = true;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Escapes one RFC 6901 reference token (`~` as `~0`, `/` as `~1`).
pub(crate) fn escape_pointer_token(token: &str) -> String {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1")
    } else {
        token.to_string()
    }
}

/// The identity of an object read from a document; without `require_name`, an object with no
/// `metadata` or no name has the empty name.
fn identity(
    obj: &Value,
    document: usize,
    item: Option<usize>,
    require_name: bool,
) -> Result<ObjectRef, ParseError> {
    let at = |path: &str| Location { document, item, path: path.to_string() };
    let Value::Object(map) = obj else {
        return Err(ParseError::NotAnObject { at: at(""), found: type_name(obj) });
    };
    let field =
        |map: &Map<String, Value>, key: &str, name: &'static str, path: &str| match map.get(key) {
            None | Some(Value::Null) => Err(ParseError::MissingField { at: at(path), field: name }),
            Some(Value::String(s)) if s.is_empty() => {
                Err(ParseError::MissingField { at: at(path), field: name })
            }
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(ParseError::WrongType {
                at: at(path),
                field: name,
                expected: "a string",
                found: type_name(other),
            }),
        };
    let api_version = field(map, "apiVersion", "apiVersion", "/apiVersion")?;
    let kind = field(map, "kind", "kind", "/kind")?;
    let empty = Map::new();
    let metadata = match map.get("metadata") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) if !require_name => &empty,
        None | Some(Value::Null) => {
            return Err(ParseError::MissingField {
                at: at("/metadata/name"),
                field: "metadata.name",
            });
        }
        Some(other) => {
            return Err(ParseError::WrongType {
                at: at("/metadata"),
                field: "metadata",
                expected: "an object",
                found: type_name(other),
            });
        }
    };
    let name = match field(metadata, "name", "metadata.name", "/metadata/name") {
        Ok(name) => name,
        Err(ParseError::MissingField { .. }) if metadata.get("generateName").is_some() => {
            field(metadata, "generateName", "metadata.generateName", "/metadata/generateName")?
        }
        Err(ParseError::MissingField { .. }) if !require_name => String::new(),
        Err(e) => return Err(e),
    };
    let namespace = match metadata.get("namespace") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(ParseError::WrongType {
                at: at("/metadata/namespace"),
                field: "metadata.namespace",
                expected: "a string",
                found: type_name(other),
            });
        }
    };
    let (group, version) = split_api_version(&api_version);
    Ok(ObjectRef { group: group.to_string(), version: version.to_string(), kind, namespace, name })
}

fn str_at<'a>(obj: &'a Value, path: &[&str]) -> &'a str {
    let mut v = obj;
    for key in path {
        match v.get(key) {
            Some(next) => v = next,
            None => return "",
        }
    }
    v.as_str().unwrap_or("")
}

fn object_name(obj: &Value) -> &str {
    let name = str_at(obj, &["metadata", "name"]);
    if name.is_empty() { str_at(obj, &["metadata", "generateName"]) } else { name }
}

/// An annotation of an object, if it is set and a string.
pub(crate) fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

/// A label of an object, if it is set and a string.
pub(crate) fn label<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("labels")?.get(key)?.as_str()
}

/// Whether an object is namespaced or cluster-scoped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Scope {
    /// The object lives in a namespace.
    Namespaced,
    /// The object is cluster-wide (Namespace, ClusterRole, CustomResourceDefinition...).
    Cluster,
}

/// Cluster-scoped kinds of Kubernetes itself and of the API groups every cluster serves
/// (group, kind). Scope is not part of the OpenAPI definitions, so this list is kept by hand,
/// from the `kubectl api-resources --namespaced=false` output of Kubernetes 1.24 to 1.36.
const BUILTIN_CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "ComponentStatus"),
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"),
    ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("policy", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
];

/// Kinds known to be namespaced, so that their scope is not "unknown" either.
const BUILTIN_NAMESPACED_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "storage.k8s.io",
    "extensions",
];

/// The scope of each kind: the built-in table plus what the host knows (its discovery data, or
/// the `CustomResourceDefinition`s among the objects). A kind of unknown scope counts as
/// namespaced, as Argo CD counts it.
///
/// # Examples
///
/// ```
/// use gitops_core::object::{Scope, Scopes};
/// let mut scopes = Scopes::builtin();
/// assert_eq!(scopes.scope("", "Namespace"), Some(Scope::Cluster));
/// assert_eq!(scopes.scope("example.com", "Widget"), None);
/// scopes.insert("example.com", "Widget", Scope::Cluster);
/// assert!(scopes.is_cluster_scoped("example.com", "Widget"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes {
    extra: BTreeMap<(String, String), Scope>,
}

impl Scopes {
    /// The built-in table only.
    pub fn builtin() -> Self {
        Scopes::default()
    }

    /// Records the scope of a kind, overriding the built-in table.
    pub fn insert(&mut self, group: &str, kind: &str, scope: Scope) {
        self.extra.insert((group.to_string(), kind.to_string()), scope);
    }

    /// Records the scope of every kind defined by a `CustomResourceDefinition` among `objects`
    /// (`spec.group`, `spec.names.kind`, `spec.scope`).
    pub fn add_crds<'a>(&mut self, objects: impl IntoIterator<Item = &'a Value>) {
        for obj in objects {
            if obj.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
                continue;
            }
            let spec = &obj["spec"];
            let (Some(group), Some(kind)) =
                (spec["group"].as_str(), spec["names"]["kind"].as_str())
            else {
                continue;
            };
            let scope = match spec["scope"].as_str() {
                Some("Cluster") => Scope::Cluster,
                _ => Scope::Namespaced,
            };
            self.insert(group, kind, scope);
        }
    }

    /// The scope of a kind, `None` when unknown.
    pub fn scope(&self, group: &str, kind: &str) -> Option<Scope> {
        if !self.extra.is_empty()
            && let Some(s) = self.extra.get(&(group.to_string(), kind.to_string()))
        {
            return Some(*s);
        }
        if BUILTIN_CLUSTER_SCOPED.iter().any(|(g, k)| *k == kind && *g == group) {
            Some(Scope::Cluster)
        } else if BUILTIN_NAMESPACED_GROUPS.contains(&group) {
            Some(Scope::Namespaced)
        } else {
            None
        }
    }

    /// Whether the kind is known to be cluster-scoped.
    pub fn is_cluster_scoped(&self, group: &str, kind: &str) -> bool {
        self.scope(group, kind) == Some(Scope::Cluster)
    }

    /// Argo CD's namespace defaulting: a cluster-scoped object loses its namespace; a
    /// namespaced (or unknown) object without one gets `default_namespace`.
    pub fn default_namespace(&self, obj: &mut Value, default_namespace: &str) {
        let (group, _) = split_api_version(str_at(obj, &["apiVersion"]));
        let kind = str_at(obj, &["kind"]);
        let cluster = self.is_cluster_scoped(group, kind);
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            return;
        };
        let has_ns = meta.get("namespace").and_then(Value::as_str).is_some_and(|s| !s.is_empty());
        if cluster {
            if has_ns {
                meta.remove("namespace");
            }
        } else if !has_ns && !default_namespace.is_empty() {
            meta.insert("namespace".into(), Value::String(default_namespace.to_string()));
        }
    }
}
