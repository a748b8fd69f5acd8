//! What the runtime tells subscribers as it happens: server states, new diagnostics, and the
//! errors an edit caused in other files found after its answer.

use std::collections::BTreeMap;

use squiggle_protocol::{Diagnostic, ServerState};
use tokio::sync::broadcast;

/// How many events a slow subscriber may fall behind before the oldest are dropped.
pub const EVENT_CAPACITY: usize = 256;

/// Something that changed in the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LspEvent {
    /// A server (for one root) changed state.
    Status {
        /// The server id.
        server: String,
        /// Its root, relative to the workspace root.
        root: String,
        /// The new state.
        state: ServerState,
        /// Why, when it is broken, disabled or unavailable.
        reason: Option<String>,
    },
    /// A file's diagnostics changed: all of them now, merged across servers.
    Diagnostics {
        /// The file, relative to the workspace root.
        path: String,
        /// Its diagnostics (empty when the last ones went away).
        items: Vec<Diagnostic>,
    },
    /// The search after an edit's answer found errors the edit caused in other files that the
    /// answer did not name (the next feedback tells them too, unless they were told before).
    Caused {
        /// The edited file, relative to the workspace root.
        edited: String,
        /// The new errors, per other file (relative to the workspace root).
        files: BTreeMap<String, Vec<Diagnostic>>,
    },
}

/// The sending side every actor shares.
pub type Events = broadcast::Sender<LspEvent>;
