//! The LSP handshake: `initialize` within the time limit, the negotiated position encoding
//! set before `initialized` (the server may publish right after it), then the server's
//! settings, and for a server that is ready only once it registers a capability (Biome loads
//! its configuration in `initialized`), that registration; the outcome goes to the server
//! actor as [`ServerMsg::Initialized`], and no document is sent before it.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_lsp::lsp_types::{DidChangeConfigurationParams, InitializeParams, InitializedParams};
use async_lsp::{LanguageServer, ServerSocket};
use ractor::ActorRef;
use squiggle_protocol::PositionEncoding;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use super::ends::exits_soon;
use super::lifecycle::HandshakeError;
use super::ServerMsg;

/// One server's handshake, all of it within `limit`.
pub struct Handshake {
    /// The connection.
    pub socket: ServerSocket,
    /// What `initialize` sends.
    pub params: InitializeParams,
    /// The time the whole handshake may take.
    pub limit: Duration,
    /// The settings sent after `initialized`, if any.
    pub settings: Option<serde_json::Value>,
    /// Where the negotiated position encoding goes.
    pub encoding: Arc<OnceLock<PositionEncoding>>,
    /// For a server that is ready only once it registers a capability: woken by registrations.
    pub registered: Option<Arc<Notify>>,
}

impl Handshake {
    /// Starts the handshake; a failure is reported unless the process is exiting (its exit
    /// status is the better reason).
    pub fn start(self, exited: watch::Receiver<bool>, me: ActorRef<ServerMsg>) {
        tokio::spawn(async move {
            let outcome = self.run().await;
            if outcome.is_err() && exits_soon(exited).await {
                return;
            }
            let _ = me.cast(ServerMsg::Initialized(outcome));
        });
    }

    /// The handshake itself.
    async fn run(mut self) -> Result<Box<async_lsp::lsp_types::InitializeResult>, HandshakeError> {
        let deadline = Instant::now() + self.limit;
        let result =
            match tokio::time::timeout_at(deadline, self.socket.initialize(self.params)).await {
                Ok(Ok(result)) => result,
                Ok(Err(err)) => return Err(HandshakeError::Refused(err.into())),
                Err(_) => return Err(HandshakeError::TimedOut(self.limit)),
            };
        let kind = result.capabilities.position_encoding.as_ref();
        let _ = self.encoding.set(PositionEncoding::from_kind(kind));
        let socket = &mut self.socket;
        let settled = socket
            .initialized(InitializedParams {})
            .and_then(|()| match self.settings {
                Some(settings) => {
                    socket.did_change_configuration(DidChangeConfigurationParams { settings })
                }
                None => Ok(()),
            });
        settled.map_err(|err| HandshakeError::NotSent(err.into()))?;
        if let Some(registered) = &self.registered {
            tokio::time::timeout_at(deadline, registered.notified())
                .await
                .map_err(|_| HandshakeError::NotRegistered(self.limit))?;
        }
        Ok(Box::new(result))
    }
}
