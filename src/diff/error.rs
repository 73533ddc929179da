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
        object: ObjectRef,
        /// RFC 6901 pointer of the field.
        path: String,
        /// What went wrong.
        message: String,
    },
}
