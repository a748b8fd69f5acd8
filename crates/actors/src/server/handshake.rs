//! The LSP handshake: `initialize` within the time limit, the negotiated position encoding
//! set before `initialized` (the server may publish right after it), then the server's
//! settings; the outcome goes to the server actor as [`ServerMsg::Initialized`].

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_lsp::lsp_types::{DidChangeConfigurationParams, InitializeParams, InitializedParams};
use async_lsp::{LanguageServer, ServerSocket};
use ractor::ActorRef;
use squiggle_protocol::PositionEncoding;
use tokio::sync::watch;

use super::ends::exits_soon;
use super::lifecycle::HandshakeError;
use super::ServerMsg;

/// Starts the handshake on `socket`; a failure is reported unless the process is exiting
/// (its exit status is the better reason).
pub fn start(
    mut socket: ServerSocket,
    params: InitializeParams,
    limit: Duration,
    settings: Option<serde_json::Value>,
    encoding: Arc<OnceLock<PositionEncoding>>,
    exited: watch::Receiver<bool>,
    me: ActorRef<ServerMsg>,
) {
    tokio::spawn(async move {
        let outcome = match tokio::time::timeout(limit, socket.initialize(params)).await {
            Ok(Ok(result)) => {
                let kind = result.capabilities.position_encoding.as_ref();
                let _ = encoding.set(PositionEncoding::from_kind(kind));
                let settled =
                    socket
                        .initialized(InitializedParams {})
                        .and_then(|()| match settings {
                            Some(settings) => {
                                socket.did_change_configuration(DidChangeConfigurationParams {
                                    settings,
                                })
                            }
                            None => Ok(()),
                        });
                match settled {
                    Ok(()) => Ok(Box::new(result)),
                    Err(err) => Err(HandshakeError::NotSent(err.into())),
                }
            }
            Ok(Err(err)) => Err(HandshakeError::Refused(err.into())),
            Err(_) => Err(HandshakeError::TimedOut(limit)),
        };
        if outcome.is_err() && exits_soon(exited).await {
            return;
        }
        let _ = me.cast(ServerMsg::Initialized(outcome));
    });
}
