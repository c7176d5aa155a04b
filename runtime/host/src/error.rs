//! Errors as the JSON-RPC client sees them. The desktop app shows `error.message` to people
//! and never branches on codes, so every message is a readable sentence; the spec's string
//! code rides in `error.data.code`.

use agent_protocol::jsonrpc::{ErrorObject, codes};
use agent_protocol::{ErrorCode, ErrorShape};
use serde_json::json;

#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub shape: ErrorShape,
}

impl RpcError {
    /// A well-formed request the runtime refuses or fails (JSON-RPC server error range).
    pub fn domain(shape: ErrorShape) -> Self {
        Self {
            code: codes::SERVER_ERROR,
            shape,
        }
    }

    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::domain(ErrorShape::new(code, message))
    }

    pub fn invalid_params(field: Option<&str>, message: impl Into<String>) -> Self {
        let mut shape = ErrorShape::new(ErrorCode::InvalidRequest, message);
        if let Some(field) = field {
            shape = shape.with_details(json!({ "field": field }));
        }
        Self {
            code: codes::INVALID_PARAMS,
            shape,
        }
    }

    pub fn method_not_found(method: &str) -> Self {
        Self {
            code: codes::METHOD_NOT_FOUND,
            shape: ErrorShape::new(
                ErrorCode::InvalidRequest,
                format!(
                    "Unknown method \"{method}\". Supported methods: {}.",
                    agent_protocol::methods::ALL.join(", ")
                ),
            )
            .with_details(json!({ "method": method })),
        }
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self {
            code: codes::INVALID_REQUEST,
            shape: ErrorShape::new(ErrorCode::InvalidRequest, message),
        }
    }

    pub fn parse_error(message: impl Into<String>) -> Self {
        Self {
            code: codes::PARSE_ERROR,
            shape: ErrorShape::new(ErrorCode::InvalidRequest, message),
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: codes::INTERNAL_ERROR,
            shape: ErrorShape::new(ErrorCode::InternalError, message),
        }
    }

    pub fn into_object(self) -> ErrorObject {
        ErrorObject {
            code: self.code,
            message: self.shape.message.clone(),
            data: Some(self.shape),
        }
    }
}

impl From<ErrorShape> for RpcError {
    fn from(shape: ErrorShape) -> Self {
        Self::domain(shape)
    }
}
