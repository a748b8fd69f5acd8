//! Whether a frame's body is a message async-lsp's strict decoder accepts.

use serde::Deserialize;
use serde_json::Value;

use super::BadFrame;

/// Checks that a body is a JSON-RPC 2.0 message async-lsp's decoder accepts.
pub(super) fn check_body(body: &[u8]) -> Result<(), BadFrame> {
    if body.is_empty() {
        return Err(BadFrame::EmptyBody);
    }
    let envelope = match serde_json::from_slice::<Envelope>(body) {
        Ok(envelope) => envelope,
        Err(error) if error.is_data() => return Err(BadFrame::NotJsonRpc),
        Err(_) => return Err(BadFrame::NotJson),
    };
    if envelope.jsonrpc != "2.0" {
        return Err(BadFrame::NotJsonRpc);
    }
    // async-lsp tries, in order: request (id + method), response (id), notification (method).
    let method = matches!(envelope.method, Some(Value::String(_)));
    let id = envelope.id.as_ref().is_some_and(is_request_id);
    match (id, method) {
        (true, true) | (false, true) => Ok(()),
        (true, false) if envelope.error.as_ref().is_none_or(is_response_error) => Ok(()),
        _ => Err(BadFrame::NotJsonRpc),
    }
}

/// The fields of a message that decide whether async-lsp 0.2.4 can decode it; everything else
/// (params, result) is skipped without being built.
#[derive(Deserialize)]
struct Envelope {
    /// Must be exactly `"2.0"`.
    jsonrpc: String,
    /// A request's or response's id.
    #[serde(default)]
    id: Option<Value>,
    /// A request's or notification's method.
    #[serde(default)]
    method: Option<Value>,
    /// A failed response's error.
    #[serde(default)]
    error: Option<Value>,
}

/// An id async-lsp accepts: a number that fits an i32, or a string.
fn is_request_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
        _ => false,
    }
}

/// An error object async-lsp accepts: an i32 `code` and a string `message`.
fn is_response_error(error: &Value) -> bool {
    error
        .get("code")
        .and_then(Value::as_i64)
        .is_some_and(|c| i32::try_from(c).is_ok())
        && error.get("message").is_some_and(Value::is_string)
}
