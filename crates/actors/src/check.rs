//! What one check of a file produced, and why a file was not checked.

use std::fmt;

use squiggle_protocol::{Diagnostic, ServerReport};

/// The outcome of [`crate::Squiggle::check_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    /// The file, relative to the workspace root (absolute if it lies outside).
    pub file: String,
    /// The file's diagnostics from every server that answered in time, merged and sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// Each server the file needed, with its state (and reason when it did not answer).
    pub servers: Vec<ServerReport>,
    /// The ids of servers that did not answer before the deadline, or were still working when
    /// it passed (their diagnostics so far are in `diagnostics`, and may be incomplete).
    pub timed_out: Vec<String>,
    /// Why the file was not checked at all, if it was not.
    pub skipped: Option<Skip>,
}

/// Why a file was not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// The configuration says `lsp = false`.
    Disabled,
    /// The file lies outside the workspace root.
    OutsideWorkspace,
    /// The file could not be read (deleted, renamed, unreadable).
    Unreadable(String),
    /// The file looks binary (a NUL byte in its first 8 KiB).
    Binary,
    /// The file is larger than `max_file_bytes`.
    TooLarge { bytes: u64, limit: u64 },
    /// No configured server handles this file's extension.
    NoServer,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::Disabled => f.write_str("LSP disabled by configuration"),
            Skip::OutsideWorkspace => f.write_str("outside the workspace root"),
            Skip::Unreadable(why) => write!(f, "cannot be read: {why}"),
            Skip::Binary => f.write_str("looks binary"),
            Skip::TooLarge { bytes, limit } => {
                write!(f, "too large ({bytes} bytes, limit {limit})")
            }
            Skip::NoServer => f.write_str("no language server handles this file type"),
        }
    }
}

impl CheckResult {
    /// A result for a file that was not checked.
    pub(crate) fn skipped(file: String, skip: Skip) -> Self {
        Self {
            file,
            diagnostics: Vec::new(),
            servers: Vec::new(),
            timed_out: Vec::new(),
            skipped: Some(skip),
        }
    }
}
