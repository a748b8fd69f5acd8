//! squiggle-actors: the squiggle runtime (ractor actors over tokio and async-lsp) and its
//! public Rust API, the [`Squiggle`] handle.
//!
//! ```text
//! Squiggle (handle; LspManager wraps one for hosts that poll)
//!  ├─ Diagnostics actor ─ the one store: per (file, server) lists, epochs, waiters
//!  ├─ Watcher actor ─ one OS watcher; file events to the servers whose globs match
//!  ├─ Registry actor ─ which servers run for which roots; starts and restarts them
//!  │   └─ Server actor (server id, root) ─ one per pair, owns the process;
//!  │      publishes to Diagnostics, registers its globs with the Watcher
//!  └─ watchdog ─ a guard process that kills the servers' process groups if squiggle is killed
//! ```
//!
//! The registry's, a server's and the watcher's messages are private to their modules; the rest
//! of the runtime drives each through its handle (`RegistryHandle`, `ServerHandle`,
//! `WatcherHandle`). Imports run one way: squiggle -> registry -> server -> watcher, and down to
//! the diagnostics store (still sent its `DiagnosticsMsg`) and the watchdog, which import no
//! actor. A server tells its registry through the `server::Supervisor` trait the registry's
//! handle implements; the watcher tells a server through the `watcher::Listener` trait the
//! server's handle implements.
//!
//! # Layout
//!
//! - `squiggle`: the public handle: start, check, navigate (`squiggle/navigation`), shut down
//!   (`squiggle/turns`: each file's checks in arrival order; `squiggle/reach`: the errors an
//!   edit caused in other files; `squiggle/handed`: the texts the servers were handed, as one
//!   state; `squiggle/said_once`: which
//!   unavailable servers a session was told about already).
//! - `manager`: `LspManager`, the runtime for tick-driven hosts that must never block.
//! - `forge`: the forge-lsp API of the reference design (its `LspManager`, `LspConfig` and
//!   `[lsp]` TOML, `LspState`, `ForgeDiagnostic`), over `manager` (`forge/config`,
//!   `forge/types`).
//! - `check`: what one check of a file produced, and why a file was not checked.
//! - `feedback`: the text an edit tool appends after an edit; the new errors it introduced.
//! - `importers`: the files that import a file (a reverse-import index of the workspace), for
//!   the errors an edit caused elsewhere (`squiggle/reach`; `importers/scan`: what each
//!   language's imports name; `importers/changed`: the names an edit changed, and which
//!   importers name them).
//! - `events`: what the runtime tells subscribers as it happens.
//! - `registry`: the registry actor (`registry/entries`: each server starting, with who waits
//!   for it, active or unusable; `registry/restarts`: when a broken server may restart).
//! - `server`: the server actor (its handle, messages, start and forwarding) and, under
//!   `server/`, the process, its I/O and its documents (`server/connection`: what each message
//!   does; `server/handshake`: initialize and initialized; `server/ends`: how the connection and
//!   the process end; `server/document_sync`: versions and what each sync sends;
//!   `server/pull_state`: result ids, repulls and what each pull's answer leads to;
//!   `server/request_error`: why a request got no usable answer).
//! - `diagnostics`: the store actor (`diagnostics/store`: the store and its waits, pure;
//!   `diagnostics/completion`: when results are final).
//! - `watcher`: the watcher actor.
//! - `watchdog`: the guard process that kills the servers' process groups if squiggle is killed.
//! - `commands`: whether each server's command can run, probed once per runtime.
//! - `ask`: asking an actor a question with a time limit.
//! - `key`: the identity of one running server (server id, root).
//! - `lock`: locking a mutex that a panicking thread may have poisoned.
//! - `edit_files`: applying a workspace edit to files on disk, only inside the workspace.

#![warn(missing_docs)]
#![deny(clippy::print_stdout)]

mod ask;
mod check;
mod commands;
mod diagnostics;
mod edit_files;
mod events;
mod feedback;
pub mod forge;
mod importers;
mod key;
mod lock;
mod manager;
mod registry;
mod server;
mod squiggle;
mod watchdog;
mod watcher;

pub use check::{CheckResult, Skip};
pub use events::LspEvent;
pub use feedback::{Earlier, Feedback, NewErrors};
pub use manager::{DiagnosticsSnapshot, LspManager, COALESCE};
pub use server::request_error::RequestError;
pub use squiggle::{ActionInfo, ActionPick, CodeActions, EditFailure, EditMode, EditOutcome};
pub use squiggle::{Answer, NavError, Squiggle, Target, UnusedStopped};
pub use squiggle_config::Config;
pub use squiggle_protocol::folder_report::FolderReport;
pub use squiggle_protocol::navigation::{Body, Call, Direction};
pub use squiggle_protocol::{
    Basis, Diagnostic, Location, Outcome, OutcomeKind, Scope, ServerMetrics, ServerReport,
    ServerState, ServerStatus, Severity, Symbol, Unsearched,
};

/// Errors starting the runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace root does not exist or cannot be resolved.
    #[error("workspace root {}: {source}", path.display())]
    WorkspaceRoot {
        /// The root given.
        path: std::path::PathBuf,
        /// Why it cannot be resolved.
        source: std::io::Error,
    },
    /// An actor could not be spawned.
    #[error("cannot start the runtime: {0}")]
    Spawn(#[from] ractor::SpawnErr),
}
