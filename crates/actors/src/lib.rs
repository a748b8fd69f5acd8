//! squiggle-actors: the squiggle runtime (ractor actors over tokio and async-lsp) and its
//! public Rust API, the [`Squiggle`] handle.
//!
//! ```text
//! Squiggle (handle)
//!  └─ Registry actor ─ one per Squiggle
//!      ├─ Server actor (server id, root) ─ one per pair, owns the process
//!      └─ Diagnostics actor ─ the one store: per (file, server) lists, epochs, waiters
//! ```

#![deny(clippy::print_stdout)]

mod check;
mod commands;
mod diagnostics;
mod edit_files;
mod events;
mod feedback;
mod key;
mod manager;
mod registry;
mod server;
mod squiggle;
mod watcher;

pub use check::{CheckResult, Skip};
pub use events::LspEvent;
pub use feedback::{Feedback, NewErrors};
pub use manager::{DiagnosticsSnapshot, LspManager, COALESCE};
pub use squiggle::{ActionInfo, ActionPick, CodeActions, EditFailure, EditMode, EditOutcome};
pub use squiggle::{Answer, NavError, Squiggle, Target};
pub use squiggle_config::Config;
pub use squiggle_protocol::{
    Basis, Diagnostic, Location, Outcome, OutcomeKind, Scope, ServerReport, ServerState,
    ServerStatus, Severity, Symbol,
};

/// Errors starting the runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace root does not exist or cannot be resolved.
    #[error("workspace root {}: {source}", path.display())]
    WorkspaceRoot {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// An actor could not be spawned.
    #[error("cannot start the runtime: {0}")]
    Spawn(#[from] ractor::SpawnErr),
}
