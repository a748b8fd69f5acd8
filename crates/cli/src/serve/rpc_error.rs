//! The errors `squiggle serve` answers requests with: a JSON-RPC error code and a message.

use squiggle_protocol::service::error_code;

use crate::tools::ToolError;

/// A JSON-RPC error code the service answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The body is not JSON.
    ParseError,
    /// The JSON is not a request or notification.
    InvalidRequest,
    /// No such method.
    MethodNotFound,
    /// The params do not fit the method (or the question they ask cannot be answered).
    InvalidParams,
    /// squiggle failed while answering.
    InternalError,
}

impl ErrorCode {
    /// The code's number on the wire.
    pub fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => error_code::PARSE_ERROR,
            ErrorCode::InvalidRequest => error_code::INVALID_REQUEST,
            ErrorCode::MethodNotFound => error_code::METHOD_NOT_FOUND,
            ErrorCode::InvalidParams => error_code::INVALID_PARAMS,
            ErrorCode::InternalError => error_code::INTERNAL_ERROR,
        }
    }
}

/// A request's error answer: its code and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: ErrorCode,
    /// What went wrong, for the client.
    pub message: String,
}

impl RpcError {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The `error` member of the answer.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"code": self.code.code(), "message": self.message})
    }
}

/// A tool's error is an invalid-params answer, whatever it is: the question was wrong or
/// could not be answered as asked.
impl From<ToolError> for RpcError {
    fn from(error: ToolError) -> Self {
        RpcError::new(ErrorCode::InvalidParams, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolError;

    #[test]
    fn an_error_has_its_code_and_message() {
        let error = RpcError::from(ToolError::Missing("file"));
        assert_eq!(
            error.to_json(),
            serde_json::json!({"code": -32602, "message": "`file` is required"})
        );
        assert_eq!(ErrorCode::ParseError.code(), -32700);
        assert_eq!(ErrorCode::MethodNotFound.code(), -32601);
    }
}
