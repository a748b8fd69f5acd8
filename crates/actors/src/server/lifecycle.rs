//! Where a server is in its life: starting (the initialize handshake under way), ready (with
//! what it offers, known from its capabilities), or stopping. What a server offers exists only
//! once it is ready, so nothing reads a default that was never the server's answer.

use async_lsp::lsp_types::{
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncSaveOptions,
};

use std::time::Duration;

use super::navigate::Provides;
use super::request_error::RequestError;

/// A server's stage of life.
#[derive(Debug)]
pub(super) enum Lifecycle {
    /// Spawned; `initialize` is under way. A server may register pull diagnostics this early.
    Starting { pull_registered: bool },
    /// Initialized: it answers requests and takes documents.
    Ready(Offers),
    /// Shutting down, or stopped as broken: it is told nothing more.
    Stopping,
}

/// What a ready server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Offers {
    /// The navigation requests it answers.
    pub provides: Provides,
    /// Whether and how it wants `didSave`.
    pub save: Save,
    /// Whether its diagnostics are pulled (LSP pull, offered or registered).
    pub pull: bool,
}

/// Whether and how the server wants `didSave`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Save {
    /// It does not.
    Skip,
    /// It does, with or without the text.
    Send { include_text: bool },
}

/// Why the initialize handshake did not bring a server to ready.
#[derive(Debug, thiserror::Error)]
pub(super) enum HandshakeError {
    /// `initialize` got an error (or the connection failed) instead of an answer.
    #[error("initialize failed: {0}")]
    Refused(RequestError),
    /// `initialize` got no answer in time.
    #[error("initialize timed out after {} ms", .0.as_millis())]
    TimedOut(Duration),
    /// `initialized` (or the settings after it) could not be sent.
    #[error("initialized could not be sent: {0}")]
    NotSent(RequestError),
    /// A server that is ready only once it registers a capability did not register one in
    /// time.
    #[error(
        "the server did not finish starting: no capability registration within {} ms of starting",
        .0.as_millis()
    )]
    NotRegistered(Duration),
}

impl Lifecycle {
    /// A server just spawned.
    pub fn starting() -> Self {
        Lifecycle::Starting {
            pull_registered: false,
        }
    }

    /// The handshake ended: the server is ready with what its capabilities offer.
    pub fn initialized(&mut self, capabilities: &ServerCapabilities) {
        let registered = match self {
            Lifecycle::Starting { pull_registered } => *pull_registered,
            Lifecycle::Ready(offers) => offers.pull,
            Lifecycle::Stopping => return,
        };
        *self = Lifecycle::Ready(Offers {
            provides: Provides::of(capabilities),
            save: save_of(capabilities.text_document_sync.as_ref()),
            pull: registered || capabilities.diagnostic_provider.is_some(),
        });
    }

    /// The server registered pull diagnostics (at any time before it stops).
    pub fn pull_registered(&mut self) {
        match self {
            Lifecycle::Starting { pull_registered } => *pull_registered = true,
            Lifecycle::Ready(offers) => offers.pull = true,
            Lifecycle::Stopping => {}
        }
    }

    /// The server is being stopped; says whether it was ready (so it gets a graceful shutdown).
    pub fn stop(&mut self) -> bool {
        let was_ready = self.is_ready();
        *self = Lifecycle::Stopping;
        was_ready
    }

    /// Whether the server answers requests.
    pub fn is_ready(&self) -> bool {
        matches!(self, Lifecycle::Ready(_))
    }

    /// Whether the server is being stopped.
    pub fn is_stopping(&self) -> bool {
        matches!(self, Lifecycle::Stopping)
    }

    /// What the server offers; nothing until it is ready, nothing once it stops.
    pub fn offers(&self) -> Offers {
        match self {
            Lifecycle::Ready(offers) => *offers,
            Lifecycle::Starting { pull_registered } => Offers {
                provides: Provides::default(),
                save: Save::Skip,
                pull: *pull_registered,
            },
            Lifecycle::Stopping => Offers {
                provides: Provides::default(),
                save: Save::Skip,
                pull: false,
            },
        }
    }
}

/// Whether the server asked for didSave, from its text document sync capability.
fn save_of(sync: Option<&TextDocumentSyncCapability>) -> Save {
    match sync {
        Some(TextDocumentSyncCapability::Options(options)) => match &options.save {
            Some(TextDocumentSyncSaveOptions::Supported(true)) => Save::Send {
                include_text: false,
            },
            Some(TextDocumentSyncSaveOptions::SaveOptions(save)) => Save::Send {
                include_text: save.include_text.unwrap_or(false),
            },
            _ => Save::Skip,
        },
        _ => Save::Skip,
    }
}

#[cfg(test)]
mod tests {
    use async_lsp::lsp_types::{
        DiagnosticOptions, DiagnosticServerCapabilities, SaveOptions, TextDocumentSyncOptions,
    };

    use super::*;

    fn saving(include_text: Option<bool>) -> ServerCapabilities {
        ServerCapabilities {
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                        include_text,
                    })),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            ..ServerCapabilities::default()
        }
    }

    fn pulling() -> ServerCapabilities {
        ServerCapabilities {
            diagnostic_provider: Some(DiagnosticServerCapabilities::Options(
                DiagnosticOptions::default(),
            )),
            ..ServerCapabilities::default()
        }
    }

    #[test]
    fn a_starting_server_offers_nothing_but_a_registered_pull() {
        let mut life = Lifecycle::starting();
        assert!(!life.is_ready());
        assert_eq!(life.offers().save, Save::Skip);
        assert!(!life.offers().pull);
        life.pull_registered();
        assert!(
            life.offers().pull,
            "a registration before the handshake ends counts"
        );
    }

    #[test]
    fn initialized_takes_what_the_capabilities_offer() {
        let table = [
            (saving(Some(true)), Save::Send { include_text: true }, false),
            (
                saving(None),
                Save::Send {
                    include_text: false,
                },
                false,
            ),
            (ServerCapabilities::default(), Save::Skip, false),
            (pulling(), Save::Skip, true),
        ];
        for (capabilities, save, pull) in table {
            let mut life = Lifecycle::starting();
            life.initialized(&capabilities);
            assert!(life.is_ready());
            assert_eq!(life.offers().save, save, "{capabilities:?}");
            assert_eq!(life.offers().pull, pull, "{capabilities:?}");
        }
    }

    #[test]
    fn a_pull_registered_early_survives_the_handshake_and_one_later_counts_too() {
        let mut early = Lifecycle::starting();
        early.pull_registered();
        early.initialized(&ServerCapabilities::default());
        assert!(early.offers().pull);
        let mut late = Lifecycle::starting();
        late.initialized(&ServerCapabilities::default());
        late.pull_registered();
        assert!(late.offers().pull);
    }

    #[test]
    fn a_failed_handshake_reads_as_before() {
        let late = HandshakeError::TimedOut(Duration::from_millis(1500));
        assert_eq!(late.to_string(), "initialize timed out after 1500 ms");
        let gone = RequestError::from(async_lsp::Error::ServiceStopped);
        assert_eq!(
            HandshakeError::Refused(gone.clone()).to_string(),
            "initialize failed: service stopped"
        );
        assert_eq!(
            HandshakeError::NotSent(gone).to_string(),
            "initialized could not be sent: service stopped"
        );
    }

    #[test]
    fn stop_says_whether_the_server_was_ready_and_it_stays_stopped() {
        let mut starting = Lifecycle::starting();
        assert!(
            !starting.stop(),
            "a server in its handshake gets no graceful shutdown"
        );
        let mut ready = Lifecycle::starting();
        ready.initialized(&pulling());
        assert!(ready.stop());
        assert!(ready.is_stopping());
        ready.initialized(&pulling());
        ready.pull_registered();
        assert!(
            ready.is_stopping(),
            "a late handshake does not bring it back"
        );
        assert!(!ready.offers().pull);
    }
}
