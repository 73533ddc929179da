//! Errors of the `serve` protocol and how they go on the wire.

use crate::object::ObjectRef;

use super::wire::{ErrorCode, ErrorObject, PROTOCOL_VERSION};

/// Why a request failed. Each variant has one wire [`ErrorCode`]; its `Display` text is the
/// wire `message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub(super) enum ProtocolError {
    /// The line is not JSON.
    #[error("parse error: {message}")]
    Parse {
        /// What serde_json said.
        message: String,
    },
    /// The line is JSON but not a request.
    #[error("invalid request: {message}")]
    InvalidRequest {
        /// What is wrong.
        message: String,
    },
    /// `method` names no method of the protocol.
    #[error(
        "unknown method `{method}`: expected one of diff, health, plan, step, decide, configure"
    )]
    UnknownMethod {
        /// The method asked for.
        method: String,
    },
    /// The params do not fit the method.
    #[error("invalid params at {path}: {message}")]
    InvalidParams {
        /// RFC 6901 pointer into the request, e.g. `/params/desired/0/kind`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The line is longer than the limit.
    #[error("request too large: {len} bytes, the limit is {limit}")]
    TooLarge {
        /// Length of the line in bytes, newline excluded.
        len: u64,
        /// The limit in force.
        limit: u64,
    },
    /// `configure` asked for another protocol version.
    #[error(
        "unsupported protocol version {requested}: this server speaks version {}",
        PROTOCOL_VERSION
    )]
    UnsupportedVersion {
        /// The version asked for.
        requested: u32,
    },
    /// A bug: the engine panicked on this request. The server answers and carries on.
    #[error("internal error: {message}")]
    Internal {
        /// What panicked.
        message: String,
    },
    /// The request would go over a session limit.
    #[error("limit exceeded: {message}")]
    LimitExceeded {
        /// Which limit, and by how much.
        message: String,
    },
    /// The engine refused the input.
    #[error("engine error: {message}")]
    Engine {
        /// The engine's message.
        message: String,
        /// The object it is about, when known (boxed to keep the error small).
        object: Option<Box<ObjectRef>>,
        /// RFC 6901 pointer into `object` (or into the input the engine names), when known.
        path: Option<String>,
    },
}

impl ProtocolError {
    /// The wire code of this error.
    pub(super) fn code(&self) -> ErrorCode {
        match self {
            ProtocolError::Parse { .. } => ErrorCode::ParseError,
            ProtocolError::InvalidRequest { .. } => ErrorCode::InvalidRequest,
            ProtocolError::UnknownMethod { .. } => ErrorCode::UnknownMethod,
            ProtocolError::InvalidParams { .. } => ErrorCode::InvalidParams,
            ProtocolError::TooLarge { .. } => ErrorCode::RequestTooLarge,
            ProtocolError::UnsupportedVersion { .. } => ErrorCode::UnsupportedVersion,
            ProtocolError::Engine { .. } => ErrorCode::EngineError,
            ProtocolError::Internal { .. } => ErrorCode::InternalError,
            ProtocolError::LimitExceeded { .. } => ErrorCode::LimitExceeded,
        }
    }

    /// The error as it goes on the wire.
    pub(super) fn to_wire(&self) -> ErrorObject {
        let (object, path) = match self {
            ProtocolError::InvalidParams { path, .. } => (None, Some(path.clone())),
            ProtocolError::Engine { object, path, .. } => {
                (object.as_deref().cloned(), path.clone())
            }
            _ => (None, None),
        };
        ErrorObject { code: self.code(), message: self.to_string(), object, path }
    }

    /// An `invalid_params` error.
    pub(crate) fn params(path: impl Into<String>, message: impl Into<String>) -> ProtocolError {
        ProtocolError::InvalidParams { path: path.into(), message: message.into() }
    }

    /// An `invalid_request` error.
    pub(crate) fn request(message: impl Into<String>) -> ProtocolError {
        ProtocolError::InvalidRequest { message: message.into() }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn error_codes() {
        use super::{ErrorCode, ProtocolError};
        let e = ProtocolError::TooLarge { len: 20, limit: 10 };
        assert_eq!(e.code(), ErrorCode::RequestTooLarge);
        assert_eq!(e.to_string(), "request too large: 20 bytes, the limit is 10");
    }
}
