//! The forge-lsp API of the reference design (`000`, "Forge consumes LSP diagnostics"), with its
//! own names and shapes, over [`crate::LspManager`] and so over the same runtime: a host written
//! against that design compiles and runs unchanged.
//!
//! ```no_run
//! use std::path::Path;
//! use squiggle_actors::forge::{LspConfig, LspEvent, LspManager, LspState};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let toml = r#"
//! [lsp]
//! enabled = true
//!
//! [lsp.servers.rust]
//! command = "rust-analyzer"
//! args = []
//! language_id = "rust"
//! file_extensions = ["rs"]
//! root_markers = ["Cargo.toml", ".git"]
//! "#;
//! // `None`: `[lsp]` is absent or `enabled = false`, and nothing runs.
//! let Some(config) = LspConfig::from_toml(toml)? else { return Ok(()) };
//! let mut lsp = LspManager::new(config);
//! lsp.ensure_started(Path::new("/work/project"))?;
//! // After a tool wrote a file: fire and forget.
//! lsp.notify_file_changed(Path::new("/work/project/src/main.rs"), "fn main() {}\n")?;
//! lsp.notify_file_saved(Path::new("/work/project/src/main.rs"))?;
//! // Each tick: at most 32 events, never blocking.
//! for event in lsp.poll_events(32) {
//!     match event {
//!         LspEvent::Status { server, state: LspState::Stopped(reason) } => {
//!             eprintln!("{server} stopped: {reason}");
//!         }
//!         LspEvent::Status { .. } => {}
//!         LspEvent::Diagnostics { path, items } => {
//!             eprintln!("{}: {} diagnostics", path.display(), items.len());
//!         }
//!     }
//! }
//! let snapshot = lsp.snapshot();
//! eprintln!("{} errors, {} warnings", snapshot.total_errors, snapshot.total_warnings);
//! lsp.shutdown();
//! # Ok(())
//! # }
//! ```
//!
//! What squiggle adds under the same calls: the servers' diagnostics merged and with the
//! build's severity, `didChange` coalesced per file for 200 ms, every server's process tree
//! ended with squiggle. As the design says, a crashed server is not restarted automatically:
//! the next [`LspManager::ensure_started`] after its cooldown (30 s) restarts it.

mod config;
mod types;

use std::path::{Path, PathBuf};

pub use config::{LspConfig, ServerConfig};
pub use types::{
    DiagnosticRange, DiagnosticSeverity, DiagnosticsSnapshot, ForgeDiagnostic, LspEvent, LspState,
};

/// Why a call of the forge API failed.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// `ensure_started` was given a folder that is not there.
    #[error("workspace root {}: not a folder", .0.display())]
    WorkspaceRoot(PathBuf),
    /// The runtime's threads could not be made.
    #[error("cannot start squiggle's runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// A file was notified before `ensure_started`, or after `shutdown`.
    #[error("the LSP manager is not started: call ensure_started first")]
    NotStarted,
    /// The `[lsp]` configuration could not be read.
    #[error("{0}")]
    Config(String),
}

/// What the forge API's calls return.
pub type Result<T> = std::result::Result<T, LspError>;

/// The forge design's manager: notifications in, polled events and snapshots out, never
/// blocking but in [`LspManager::shutdown`].
#[derive(Debug)]
pub struct LspManager {
    config: LspConfig,
    /// The runtime, from the first `ensure_started` to `shutdown`.
    inner: Option<crate::LspManager>,
    /// The workspace root it was started for: events' paths are absolute under it.
    root: PathBuf,
}

impl LspManager {
    /// A manager for these servers; nothing runs before [`LspManager::ensure_started`].
    pub fn new(config: LspConfig) -> LspManager {
        LspManager {
            config,
            inner: None,
            root: PathBuf::new(),
        }
    }

    /// Starts the runtime for `workspace_root` and the servers for its languages. Idempotent;
    /// a server that stopped is restarted once its cooldown (30 s) has passed.
    pub fn ensure_started(&mut self, workspace_root: &Path) -> Result<()> {
        if !workspace_root.is_dir() {
            return Err(LspError::WorkspaceRoot(workspace_root.to_path_buf()));
        }
        let inner = match &mut self.inner {
            Some(inner) => inner,
            None => {
                self.root = squiggle_protocol::paths::canonicalize(workspace_root)
                    .unwrap_or_else(|_| workspace_root.to_path_buf());
                self.inner
                    .insert(crate::LspManager::new(self.config.to_squiggle())?)
            }
        };
        inner.ensure_started(&self.root);
        inner.restart_stopped();
        Ok(())
    }

    /// A file's new text (the first call opens it, later ones change it; changes within 200 ms
    /// are coalesced). Returns at once.
    pub fn notify_file_changed(&self, path: &Path, text_utf8: &str) -> Result<()> {
        self.started()?.notify_file_changed(path, text_utf8);
        Ok(())
    }

    /// The file was saved (`didSave`). Returns at once.
    pub fn notify_file_saved(&self, path: &Path) -> Result<()> {
        self.started()?.notify_file_saved(path);
        Ok(())
    }

    /// The file was closed (`didClose`). Returns at once.
    pub fn notify_file_closed(&self, path: &Path) -> Result<()> {
        self.started()?.notify_file_closed(path);
        Ok(())
    }

    /// At most `budget` events, oldest first, without waiting (the oldest are dropped when the
    /// host falls 256 behind).
    pub fn poll_events(&mut self, budget: usize) -> Vec<LspEvent> {
        let Some(inner) = &self.inner else {
            return Vec::new();
        };
        let mut events = Vec::new();
        // Events with no counterpart in the design (the other files an edit broke) use no
        // budget; ask again while some were passed over.
        while events.len() < budget {
            let polled = inner.poll_events(budget - events.len());
            if polled.is_empty() {
                break;
            }
            events.extend(
                polled
                    .into_iter()
                    .filter_map(|e| LspEvent::from(e, &self.root)),
            );
        }
        events
    }

    /// The diagnostics known now, by absolute path, errors first in each file.
    pub fn snapshot(&self) -> DiagnosticsSnapshot {
        match &self.inner {
            Some(inner) => DiagnosticsSnapshot::from(inner.snapshot(), &self.root),
            None => DiagnosticsSnapshot::default(),
        }
    }

    /// Shuts every server down (`shutdown`, then `exit`, then a kill for one that does not
    /// end) and stops the runtime; blocks for a few seconds at most.
    pub fn shutdown(&mut self) {
        if let Some(mut inner) = self.inner.take() {
            inner.shutdown();
        }
    }

    fn started(&self) -> Result<&crate::LspManager> {
        self.inner.as_ref().ok_or(LspError::NotStarted)
    }
}
