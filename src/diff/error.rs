//! Errors of the diff engine.

use crate::object::ObjectRef;

/// An error computing a diff. Every variant names the object and, where there is one, the
/// RFC 6901 pointer of the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// Neither a desired nor a live object was given.
    #[error("both live and config are null objects")]
    BothAbsent,
    /// A patch could not be built or applied.
    #[error("{object}: cannot patch at {path}: {message}")]
    Patch {
        /// The object.
        object: Box<ObjectRef>,
        /// RFC 6901 pointer of the field.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// Server-side diff was requested but the host passed no dry-run result for the object.
    #[error("{object}: server-side diff needs a dry-run result for this object")]
    MissingDryRun {
        /// The object.
        object: Box<ObjectRef>,
    },
    /// The dry-run result cannot be used (no managed fields of the manager, wrong shape).
    #[error("{object}: invalid dry-run result at {path}: {message}")]
    DryRun {
        /// The object.
        object: Box<ObjectRef>,
        /// RFC 6901 pointer of the field.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An object does not fit its schema the way structured merge reads it (two items of an
    /// associative list with one key); `side` is `live` or `config`.
    #[error("{object}: the {side} object does not fit its schema at {path}: {message}")]
    Schema {
        /// The object.
        object: Box<ObjectRef>,
        /// `live` or `config`.
        side: &'static str,
        /// RFC 6901 pointer of the list.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The Kubernetes defaults of a built-in object cannot be applied to one side of a
    /// structured-merge comparison: their patch, made from the object's typed copy, does not
    /// fit the object (a container without a name: the typed copy has the merge key
    /// `name: ""`); `side` is `predicted live` or `live`. Argo CD fails the comparison too.
    #[error(
        "{object}: cannot apply the Kubernetes defaults to the {side} object at {path}: {message}"
    )]
    Defaults {
        /// The object.
        object: Box<ObjectRef>,
        /// `predicted live` or `live`.
        side: &'static str,
        /// RFC 6901 pointer of the field.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The text diff of a comparison that did not keep the objects it needs.
    #[error(
        "the text diff needs the normalised and predicted objects, which this comparison did \
         not keep: compare with AppDiffInput::with_objects(true)"
    )]
    ObjectsNotKept,
    /// `metadata.managedFields` of the live object cannot be read.
    #[error("{object}: invalid managed fields at {path}: {message}")]
    ManagedFields {
        /// The object.
        object: Box<ObjectRef>,
        /// RFC 6901 pointer of the field.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The ignore rules could not be built (for example a jq expression that does not parse);
    /// the message names the rule.
    #[error("invalid ignoreDifferences: {message}")]
    IgnoreRules {
        /// What is wrong, naming the rule.
        message: String,
    },
    /// A limit stopped a jq ignore rule on an object, so the rule was not applied; the
    /// message names the rule, the object and the limit.
    #[error("{message}")]
    IgnoreLimit {
        /// The rule, the object and the limit.
        message: String,
    },
    /// The host's interrupt (its wall-clock backstop) stopped a jq ignore rule on an object.
    /// Unlike the counted limits it is not a property of the input: [`super::diff_app`]
    /// returns it as an error instead of an `Unknown` verdict, so that no answer depends on
    /// the clock; the caller may retry. The message names the rule, the object and the
    /// host's reason.
    #[error("{message}")]
    Interrupted {
        /// The rule, the object and the host's reason.
        message: String,
    },
}

/// A patch error, before the caller attaches the object: the pointer and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchFailure {
    /// RFC 6901 pointer of the field.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

impl PatchFailure {
    pub(crate) fn new(path: &str, message: impl Into<String>) -> PatchFailure {
        PatchFailure { path: path.to_owned(), message: message.into() }
    }
}
