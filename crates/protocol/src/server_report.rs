//! One server's part in a check: its state, why it gave no answer, and what its answer rests
//! on. Below both the outcome of a file (which reads these) and the report of a check (which
//! holds them).

use serde::{Deserialize, Serialize};

use crate::diagnostic::ServerState;

/// One server's part in a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerReport {
    /// The server id from the configuration.
    pub id: String,
    /// The project root it served, relative to the workspace root (`.` for the root itself).
    pub root: String,
    /// Its lifecycle state at the end of the check.
    pub status: ServerState,
    /// Why it is broken, disabled or unavailable, if it is.
    pub reason: Option<String>,
    /// What its answer rests on, when it gave a final one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// Whether the file counts as checked only with its answer (its type checker): a linter's
    /// answer does not stand in for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// What a server's final answer for a document version rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The server's answer to a pull for the version.
    Pull,
    /// The server's answer to a pull for the version, and the end of the build check its save
    /// started (rust-analyzer's `cargo check`, its "flycheck") with what that check published.
    #[serde(rename = "pull+flycheck")]
    PullAndCheck,
    /// A publish naming the version, sent while the server was idle.
    Version,
    /// A quiet time after the last publish: a guess, for servers that signal nothing.
    QuietTime,
}

impl Basis {
    /// The name results use (`pull`, `pull+flycheck`, `version`, `quiet_time`).
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Pull => "pull",
            Basis::PullAndCheck => "pull+flycheck",
            Basis::Version => "version",
            Basis::QuietTime => "quiet_time",
        }
    }

    /// Whether the answer rests on a guess (a quiet time) rather than a signal.
    pub fn is_guess(self) -> bool {
        self == Basis::QuietTime
    }
}
