//! Why a request to a language server got no answer squiggle can use, told apart by kind
//! (a timeout, a closed connection and the server's own refusal lead to different notes and
//! retries, so callers match on the kind, never on the text).

use std::time::Duration;

/// Why a request to a language server got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// No answer within the time limit.
    #[error("no answer within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The server answered with a JSON-RPC error.
    #[error("{message} (jsonrpc error {code})")]
    Server {
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The connection to the server ended, or the request could not be sent on it.
    #[error("{0}")]
    Connection(String),
    /// The server answered with something squiggle cannot use (undecodable, or a kind of
    /// answer it does not take, such as a partial pull result).
    #[error("{0}")]
    Unusable(String),
    /// One step of a request made of several failed (tsserver's three diagnostic kinds).
    #[error("{step}: {source}")]
    Step {
        /// The step that failed.
        step: &'static str,
        /// Why it failed.
        source: Box<RequestError>,
    },
}

impl RequestError {
    /// The error for a request that got no answer within `limit`.
    pub fn timeout(limit: Duration) -> Self {
        Self::Timeout(limit)
    }

    /// The note that tells a reader why `server` gave no answer (never an empty answer that
    /// looks like "nothing found").
    pub fn note_for(&self, server: &str) -> String {
        match self {
            Self::Timeout(limit) => format!("{server} did not answer within {} s", limit.as_secs()),
            Self::Server { .. } => format!("{server} answered with an error: {self}"),
            _ => format!("{server} gave no usable answer: {self}"),
        }
    }

    /// Names the step of a multi-request this error came from.
    pub fn in_step(self, step: &'static str) -> Self {
        Self::Step {
            step,
            source: Box::new(self),
        }
    }
}

impl From<async_lsp::Error> for RequestError {
    fn from(error: async_lsp::Error) -> Self {
        match error {
            async_lsp::Error::Response(response) => Self::Server {
                code: response.code.0,
                message: response.message,
            },
            async_lsp::Error::Deserialize(_) | async_lsp::Error::Protocol(_) => {
                Self::Unusable(error.to_string())
            }
            // The service stopped, the channel failed or ended, or a kind added later.
            _ => Self::Connection(error.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_lsp::{ErrorCode, ResponseError};

    #[test]
    fn each_kind_reads_as_async_lsp_wrote_it() {
        let refused =
            async_lsp::Error::Response(ResponseError::new(ErrorCode(-32601), "unhandled method"));
        let text = refused.to_string();
        let error = RequestError::from(refused);
        assert!(matches!(error, RequestError::Server { code: -32601, .. }));
        assert_eq!(error.to_string(), text);
        let stopped = RequestError::from(async_lsp::Error::ServiceStopped);
        assert!(matches!(stopped, RequestError::Connection(_)));
        assert_eq!(stopped.to_string(), "service stopped");
        let bad = RequestError::from(async_lsp::Error::Protocol("odd".into()));
        assert!(matches!(bad, RequestError::Unusable(_)));
    }

    #[test]
    fn a_note_tells_a_refusal_from_silence_and_a_broken_answer() {
        let refused = RequestError::Server {
            code: -32601,
            message: "no".into(),
        };
        assert_eq!(
            refused.note_for("fake"),
            "fake answered with an error: no (jsonrpc error -32601)"
        );
        let late = RequestError::timeout(Duration::from_secs(15));
        assert_eq!(late.note_for("fake"), "fake did not answer within 15 s");
        let gone = RequestError::Connection("service stopped".into());
        assert_eq!(
            gone.note_for("fake"),
            "fake gave no usable answer: service stopped"
        );
    }

    #[test]
    fn a_timeout_and_a_step_say_what_and_where() {
        let late = RequestError::timeout(Duration::from_secs(10));
        assert_eq!(late.to_string(), "no answer within 10 s");
        assert_eq!(
            late.in_step("semanticDiagnosticsSync").to_string(),
            "semanticDiagnosticsSync: no answer within 10 s"
        );
    }
}
