//! What one check of a file produced, and why a file was not checked.

use std::fmt;

use squiggle_protocol::{Diagnostic, Outcome, ServerReport};

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
    /// The text that was checked (none when the file was not checked at all).
    pub text: Option<std::sync::Arc<str>>,
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
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The file lies in a folder that is not analysed (`excluded_folders`): its name.
    Excluded(String),
    /// No configured server handles this file's extension.
    NoServer,
    /// Every server for this file's extension is turned off (`enabled = false`); their ids.
    ServersDisabled(Vec<String>),
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
            Skip::Excluded(folder) => write!(
                f,
                "in {folder}, which squiggle does not analyse (configuration key excluded_folders)"
            ),
            Skip::NoServer => f.write_str("no language server handles this file type"),
            Skip::ServersDisabled(ids) => write!(
                f,
                "its language servers are disabled by configuration ({})",
                ids.join(", ")
            ),
        }
    }
}

impl CheckResult {
    /// Whether the file was checked: skipped, or checked when at least one of its servers
    /// gave its final answer for this text (the others are named), else not checked and why.
    pub fn outcome(&self) -> Outcome {
        match &self.skipped {
            Some(skip) => Outcome::not_checked(skip),
            None => Outcome::of_servers(&self.servers, &self.timed_out),
        }
    }

    /// A result for a file that was not checked.
    pub(crate) fn skipped(file: String, skip: Skip) -> Self {
        Self {
            file,
            diagnostics: Vec::new(),
            servers: Vec::new(),
            timed_out: Vec::new(),
            skipped: Some(skip),
            text: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use squiggle_protocol::ServerState;

    fn result(servers: Vec<ServerReport>, timed_out: &[&str]) -> CheckResult {
        CheckResult {
            file: "a.py".to_string(),
            diagnostics: Vec::new(),
            servers,
            timed_out: timed_out.iter().map(|id| id.to_string()).collect(),
            skipped: None,
            text: None,
        }
    }

    fn server(id: &str, status: ServerState, reason: Option<&str>) -> ServerReport {
        ServerReport {
            id: id.to_string(),
            root: ".".to_string(),
            status,
            reason: reason.map(str::to_string),
            basis: None,
            required: false,
        }
    }

    #[test]
    fn a_skipped_file_is_not_checked_for_the_skip_reason() {
        let skipped = CheckResult::skipped(
            "a.py".to_string(),
            Skip::ServersDisabled(vec!["pyright".to_string(), "ruff".to_string()]),
        );
        assert_eq!(
            skipped.outcome().reason(),
            Some("its language servers are disabled by configuration (pyright, ruff)")
        );
    }

    #[test]
    fn one_final_answer_checks_the_file_and_names_the_server_that_timed_out() {
        let checked = result(
            vec![
                server("pyright", ServerState::Active, None),
                server(
                    "ruff",
                    ServerState::Active,
                    Some("no diagnostics before the deadline"),
                ),
            ],
            &["ruff"],
        );
        assert_eq!(
            checked.outcome(),
            Outcome::Checked {
                missing: vec!["ruff timed out: no diagnostics before the deadline".to_string()]
            }
        );
    }

    #[test]
    fn no_final_answer_leaves_the_file_not_checked() {
        let unsettled = result(
            vec![server(
                "pyright",
                ServerState::Active,
                Some("still working when the deadline passed; results may be incomplete"),
            )],
            &["pyright"],
        );
        assert!(!unsettled.outcome().is_checked());
    }
}
