//! What one frame read by `squiggle serve` holds: a request, a notification, a cancel, a response
//! to ignore, or something to refuse with a JSON-RPC error. Ids are kept as the exact JSON text
//! the client sent, so an id of 2^70 comes back as 2^70, not as a float.

use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use squiggle_protocol::service::method;

use super::rpc_error::{ErrorCode, RpcError};

/// A request id exactly as the client wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawId(String);

impl RawId {
    /// `null`: the id of an answer to a message whose id is unknown.
    pub fn null() -> Self {
        Self("null".to_string())
    }

    /// The id as JSON text.
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// What finds the request again from a cancel: strings by their value (however escaped),
    /// numbers by their text.
    pub fn key(&self) -> String {
        match serde_json::from_str::<String>(&self.0) {
            Ok(text) => Value::String(text).to_string(),
            Err(_) => self.0.clone(),
        }
    }
}

/// A message from the client.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A request, to answer.
    Request {
        /// Its id.
        id: RawId,
        /// Its method.
        method: String,
        /// Its params (null when absent).
        params: Value,
    },
    /// `$/cancelRequest` for the request with this id.
    Cancel(RawId),
    /// Any other notification (nothing answers it).
    Notification,
    /// A response, to nothing squiggle asked: ignored.
    Response,
}

/// A message refused with a JSON-RPC error.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The id to answer with: the message's, or null.
    pub id: RawId,
    /// The error to answer with.
    pub error: RpcError,
}

impl Refusal {
    /// Whether the body was not JSON at all (so its frame's length may have been wrong).
    pub fn not_json(&self) -> bool {
        self.error.code == ErrorCode::ParseError
    }

    /// A refusal of the message with this id.
    fn new(id: RawId, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            id,
            error: RpcError::new(code, message),
        }
    }
}

/// The members of a message that decide what it is; params are built as a value, the id and
/// a cancel's target are kept as text.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    error: Option<IgnoredAny>,
}

/// The params of `$/cancelRequest`, with the id as text.
#[derive(Deserialize)]
struct CancelEnvelope<'a> {
    #[serde(borrow)]
    params: CancelTarget<'a>,
}

#[derive(Deserialize)]
struct CancelTarget<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
}

/// A member that is there, even as `null` (which `Option` alone would read as absent).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Reads one frame's body.
pub fn read(body: &[u8]) -> Result<Incoming, Refusal> {
    let envelope = envelope(body)?;
    let id = match envelope.id {
        Some(raw) if is_id(raw) => Some(RawId(raw.get().to_string())),
        Some(_) => {
            let reason = "not a JSON-RPC request: `id` must be a string, a number or null";
            return Err(Refusal::new(
                RawId::null(),
                ErrorCode::InvalidRequest,
                reason,
            ));
        }
        None => None,
    };
    let Some(Value::String(name)) = envelope.method else {
        if id.is_some() && (envelope.result.is_some() || envelope.error.is_some()) {
            return Ok(Incoming::Response);
        }
        let reason = "not a JSON-RPC request: `method` is missing";
        return Err(Refusal::new(
            id.unwrap_or_else(RawId::null),
            ErrorCode::InvalidRequest,
            reason,
        ));
    };
    Ok(match id {
        Some(id) => Incoming::Request {
            id,
            method: name,
            params: envelope.params.unwrap_or(Value::Null),
        },
        None if name == method::CANCEL => match serde_json::from_slice::<CancelEnvelope>(body) {
            Ok(cancel) => Incoming::Cancel(RawId(cancel.params.id.get().to_string())),
            Err(_) => Incoming::Notification,
        },
        None => Incoming::Notification,
    })
}

/// The envelope of a body, or the refusal that says why there is none.
fn envelope(body: &[u8]) -> Result<Envelope<'_>, Refusal> {
    let starts_object = body
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{');
    let parsed = match starts_object {
        // Only an object is a message (serde would also read a struct from an array).
        true => serde_json::from_slice::<Envelope>(body).map_err(Some),
        false => match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => Err(None),
            Err(err) => Err(Some(err)),
        },
    };
    parsed.map_err(|err| match err {
        Some(err) if err.is_syntax() || err.is_eof() => Refusal::new(
            RawId::null(),
            ErrorCode::ParseError,
            format!("not JSON: {err}"),
        ),
        Some(err) => Refusal::new(
            RawId::null(),
            ErrorCode::InvalidRequest,
            format!("not a JSON-RPC request: {err}"),
        ),
        None => Refusal::new(
            RawId::null(),
            ErrorCode::InvalidRequest,
            "not a JSON-RPC request: not an object",
        ),
    })
}

/// Whether a raw value may be a request id: a string, a number or null.
fn is_id(raw: &RawValue) -> bool {
    matches!(
        raw.get().as_bytes().first(),
        Some(b'"' | b'-' | b'0'..=b'9' | b'n')
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn request_id(body: &str) -> String {
        match read(body.as_bytes()) {
            Ok(Incoming::Request { id, .. }) => id.as_json().to_string(),
            other => panic!("not a request: {other:?}"),
        }
    }

    fn refusal(body: &[u8]) -> (String, ErrorCode) {
        let refusal = read(body).unwrap_err();
        (refusal.id.as_json().to_string(), refusal.error.code)
    }

    #[test]
    fn ids_are_kept_byte_for_byte() {
        for id in [
            "1180591620717411303424",
            "-0",
            "1.50",
            "1e3",
            "18446744073709551616",
            r#""abc""#,
            r#""\u00e9\n""#,
            "null",
            "7",
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"lsp/status"}}"#);
            assert_eq!(request_id(&body), id);
        }
        assert_eq!(
            request_id(r#"{"method":"m","id" :  42 ,"jsonrpc":"2.0"}"#),
            "42",
            "without the whitespace around it"
        );
    }

    #[test]
    fn a_request_has_its_method_and_params() {
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":1,"method":"lsp/checkFile","params":{"filePath":"a"}}"#),
            Ok(Incoming::Request {
                id: RawId("1".into()),
                method: "lsp/checkFile".into(),
                params: json!({"filePath": "a"}),
            })
        );
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":"x","method":"m","params":null}"#),
            Ok(Incoming::Request {
                id: RawId(r#""x""#.into()),
                method: "m".into(),
                params: Value::Null,
            })
        );
    }

    #[test]
    fn a_cancel_names_its_request_exactly() {
        let cancel = |id: &str| {
            read(
                format!(r#"{{"jsonrpc":"2.0","method":"$/cancelRequest","params":{{"id":{id}}}}}"#)
                    .as_bytes(),
            )
        };
        assert_eq!(
            cancel("1180591620717411303424"),
            Ok(Incoming::Cancel(RawId("1180591620717411303424".into())))
        );
        let Ok(Incoming::Cancel(escaped)) = cancel(r#""\u0061""#) else {
            panic!("not a cancel")
        };
        assert_eq!(escaped.key(), RawId(r#""a""#.into()).key());
        assert_ne!(RawId("1".into()).key(), RawId(r#""1""#.into()).key());
        assert_eq!(
            cancel("{}").map(|_| ()),
            Ok(()),
            "an odd id cancels nothing"
        );
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","method":"$/cancelRequest"}"#),
            Ok(Incoming::Notification)
        );
    }

    #[test]
    fn notifications_and_responses_are_not_answered() {
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","method":"x"}"#),
            Ok(Incoming::Notification)
        );
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":3,"result":null}"#),
            Ok(Incoming::Response)
        );
        assert_eq!(
            read(br#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}"#),
            Ok(Incoming::Response)
        );
    }

    #[test]
    fn what_is_not_json_is_a_parse_error_with_id_null() {
        for body in [
            &b"{not json"[..],
            b"",
            b"{\"id\":1",
            b"\xff",
            b"{} x",
            b"[1,",
        ] {
            assert_eq!(
                refusal(body),
                ("null".into(), ErrorCode::ParseError),
                "{body:?}"
            );
            assert!(read(body).unwrap_err().not_json());
        }
    }

    #[test]
    fn json_that_is_no_request_is_an_invalid_request() {
        for (body, id) in [
            (&br#"[1, "lsp/status"]"#[..], "null"),
            (b"42", "null"),
            (b"null", "null"),
            (br#"{"jsonrpc":"2.0","id":7}"#, "7"),
            (br#"{"id":7,"method":5}"#, "7"),
            (br#"{"id":{"a":1},"method":"m"}"#, "null"),
            (br#"{"id":[1],"method":"m"}"#, "null"),
            (br#"{"id":true,"method":"m"}"#, "null"),
            (br#"{"id":1,"id":2,"method":"m"}"#, "null"),
        ] {
            assert_eq!(
                refusal(body),
                (id.to_string(), ErrorCode::InvalidRequest),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
