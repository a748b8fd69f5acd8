//! Whether a file was checked. A file is checked when at least one of its servers gave its
//! final answer for the checked text; otherwise it is *not checked*, and the reason says why,
//! so that a file no server looked at never passes for a clean one.

use serde::{Deserialize, Serialize};

use crate::diagnostic::ServerState;
use crate::render::one_line;
use crate::server_report::ServerReport;

/// What became of one file in a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// At least one server gave its final answer; `missing` says which did not, and why.
    Checked {
        /// One short phrase per server that gave no final answer (`ruff: ... not installed`).
        missing: Vec<String>,
    },
    /// No server gave a final answer, so the file's diagnostics are unknown.
    NotChecked {
        /// Why, in one line (with the install command when a server is missing).
        reason: String,
    },
}

/// The name of an outcome in JSON: checked with diagnostics, checked clean, or not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// Checked, with diagnostics at the reported severities.
    Diagnostics,
    /// Checked, with no diagnostics at the reported severities.
    Clean,
    /// Not checked: see the reason.
    NotChecked,
}

impl Outcome {
    /// The outcome of a file from its servers' reports: checked when at least one answered
    /// and every required one that runs (its type checker) did, and, when its required ones
    /// cannot run (not installed, or one that does not start), another required one answered
    /// in their place; a linter's answer never stands in for a type checker. A required
    /// server turned off by the configuration is the user's choice, and asks nothing.
    pub fn of_servers(servers: &[ServerReport], timed_out: &[String]) -> Self {
        let missing: Vec<String> = servers
            .iter()
            .filter(|server| !answered(server, timed_out))
            .map(|server| problem(server, timed_out))
            .collect();
        let checker_answered =
            (servers.iter()).any(|server| server.required && answered(server, timed_out));
        let unanswered: Vec<String> = servers
            .iter()
            .filter(|server| server.required && !answered(server, timed_out))
            .filter(|server| {
                runs(server) || (server.status == ServerState::Unavailable && !checker_answered)
            })
            .map(|server| problem(server, timed_out))
            .collect();
        if !unanswered.is_empty() {
            let others: Vec<&str> = servers
                .iter()
                .filter(|server| answered(server, timed_out))
                .map(|server| server.id.as_str())
                .collect();
            let others = match others.as_slice() {
                [] => String::new(),
                ids => format!(
                    " ({} answered, but only for what it checks)",
                    ids.join(", ")
                ),
            };
            return Outcome::NotChecked {
                reason: format!("not type-checked: {}{others}", unanswered.join("; ")),
            };
        }
        if missing.len() < servers.len() {
            Outcome::Checked { missing }
        } else if missing.is_empty() {
            Outcome::NotChecked {
                reason: "no language server handles this file type".to_string(),
            }
        } else {
            Outcome::NotChecked {
                reason: missing.join("; "),
            }
        }
    }

    /// A file that was not checked, for this reason.
    pub fn not_checked(reason: impl std::fmt::Display) -> Self {
        Outcome::NotChecked {
            reason: one_line(&reason.to_string()),
        }
    }

    /// Whether at least one server gave its final answer.
    pub fn is_checked(&self) -> bool {
        matches!(self, Outcome::Checked { .. })
    }

    /// Why the file was not checked, if it was not.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Checked { .. } => None,
            Outcome::NotChecked { reason } => Some(reason),
        }
    }

    /// The servers that gave no final answer for a checked file, and why (none otherwise).
    pub fn missing(&self) -> &[String] {
        match self {
            Outcome::Checked { missing } => missing,
            Outcome::NotChecked { .. } => &[],
        }
    }

    /// Its name, given whether diagnostics are reported for the file.
    pub fn kind(&self, has_diagnostics: bool) -> OutcomeKind {
        match (self, has_diagnostics) {
            (Outcome::NotChecked { .. }, _) => OutcomeKind::NotChecked,
            (Outcome::Checked { .. }, true) => OutcomeKind::Diagnostics,
            (Outcome::Checked { .. }, false) => OutcomeKind::Clean,
        }
    }
}

/// Whether a server's report is its final answer for the checked text: active, with no
/// reason given, and not among those that timed out (still working at the deadline counts).
pub fn answered(server: &ServerReport, timed_out: &[String]) -> bool {
    server.status == ServerState::Active
        && server.reason.is_none()
        && !timed_out.contains(&server.id)
}

/// Whether a server runs for the file (it is not missing or turned off): one that runs and does
/// not answer leaves its part of the file unknown.
fn runs(server: &ServerReport) -> bool {
    !matches!(
        server.status,
        ServerState::Unavailable | ServerState::Disabled
    )
}

/// Why one server gave no final answer, in a short phrase on one line.
fn problem(server: &ServerReport, timed_out: &[String]) -> String {
    let id = &server.id;
    let reason = one_line(server.reason.as_deref().unwrap_or("no reason given"));
    if timed_out.contains(id) {
        return format!("{id} timed out: {reason}");
    }
    match server.status {
        ServerState::Unavailable | ServerState::Disabled => format!("{id}: {reason}"),
        status => format!("{id} is {status}: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A type checker's report.
    fn checker(id: &str, status: ServerState, reason: Option<&str>) -> ServerReport {
        ServerReport {
            required: true,
            ..server(id, status, reason)
        }
    }

    #[test]
    fn a_linters_answer_does_not_stand_in_for_a_type_checker_that_ran() {
        let rows: [(&str, Vec<ServerReport>, &[&str], Outcome); 7] = [
            (
                "the type checker timed out, the linter answered",
                vec![
                    checker("pyright", ServerState::Active, Some("still working")),
                    server("ruff", ServerState::Active, None),
                ],
                &["pyright"],
                Outcome::NotChecked {
                    reason: "not type-checked: pyright timed out: still working (ruff answered, but only for what it checks)".to_string(),
                },
            ),
            (
                "the type checker broke, nothing else ran",
                vec![checker("pyright", ServerState::Broken, Some("it exited"))],
                &[],
                Outcome::NotChecked {
                    reason: "not type-checked: pyright is broken: it exited".to_string(),
                },
            ),
            (
                "both answered",
                vec![
                    checker("pyright", ServerState::Active, None),
                    server("ruff", ServerState::Active, None),
                ],
                &[],
                Outcome::Checked { missing: vec![] },
            ),
            (
                "a type checker that is not installed leaves the file not type-checked (issue 42)",
                vec![
                    checker("pyright", ServerState::Unavailable, Some("not installed")),
                    server("ruff", ServerState::Active, None),
                ],
                &[],
                Outcome::NotChecked {
                    reason: "not type-checked: pyright: not installed (ruff answered, but only for what it checks)".to_string(),
                },
            ),
            (
                "another type checker answered in place of one not installed",
                vec![
                    checker("pyright", ServerState::Unavailable, Some("not installed")),
                    checker("basedpyright", ServerState::Active, None),
                    server("ruff", ServerState::Active, None),
                ],
                &[],
                Outcome::Checked {
                    missing: vec!["pyright: not installed".to_string()],
                },
            ),
            (
                "a type checker the configuration turned off asks nothing",
                vec![
                    checker("pyright", ServerState::Disabled, Some("disabled")),
                    server("ruff", ServerState::Active, None),
                ],
                &[],
                Outcome::Checked {
                    missing: vec!["pyright: disabled".to_string()],
                },
            ),
            (
                "a linter that did not answer leaves the file checked",
                vec![
                    checker("pyright", ServerState::Active, None),
                    server("ruff", ServerState::Broken, Some("it exited")),
                ],
                &[],
                Outcome::Checked {
                    missing: vec!["ruff is broken: it exited".to_string()],
                },
            ),
        ];
        for (name, servers, late, expected) in rows {
            assert_eq!(
                Outcome::of_servers(&servers, &timed_out(late)),
                expected,
                "{name}"
            );
        }
    }

    fn timed_out(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    #[test]
    fn one_final_answer_makes_a_file_checked() {
        let servers = [server("pyright", ServerState::Active, None)];
        let outcome = Outcome::of_servers(&servers, &[]);
        assert_eq!(outcome, Outcome::Checked { missing: vec![] });
        assert_eq!(outcome.kind(false), OutcomeKind::Clean);
        assert_eq!(outcome.kind(true), OutcomeKind::Diagnostics);
        assert_eq!(outcome.reason(), None);
    }

    #[test]
    fn a_checked_file_names_the_servers_that_did_not_answer() {
        let servers = [
            server("pyright", ServerState::Active, None),
            server(
                "ruff",
                ServerState::Unavailable,
                Some("`ruff` is not installed (install: pip install ruff)"),
            ),
        ];
        assert_eq!(
            Outcome::of_servers(&servers, &[]),
            Outcome::Checked {
                missing: vec!["ruff: `ruff` is not installed (install: pip install ruff)".into()]
            }
        );
    }

    #[test]
    fn no_server_installed_is_not_checked_with_the_install_commands() {
        let servers = [
            server(
                "pyright",
                ServerState::Unavailable,
                Some("`pyright-langserver` is not installed (install: npm install -g pyright)"),
            ),
            server(
                "ruff",
                ServerState::Unavailable,
                Some("`ruff` is not installed (install: pip install ruff)"),
            ),
        ];
        let outcome = Outcome::of_servers(&servers, &[]);
        assert_eq!(
            outcome.reason(),
            Some(
                "pyright: `pyright-langserver` is not installed (install: npm install -g pyright); \
                 ruff: `ruff` is not installed (install: pip install ruff)"
            )
        );
        assert_eq!(outcome.kind(false), OutcomeKind::NotChecked);
        assert!(!outcome.is_checked());
    }

    #[test]
    fn a_server_still_working_at_the_deadline_gave_no_final_answer() {
        let servers = [server(
            "fake",
            ServerState::Active,
            Some("still working when the deadline passed"),
        )];
        let outcome = Outcome::of_servers(&servers, &timed_out(&["fake"]));
        assert_eq!(
            outcome.reason(),
            Some("fake timed out: still working when the deadline passed")
        );
        assert_eq!(outcome.kind(true), OutcomeKind::NotChecked);
    }

    #[test]
    fn a_listed_timeout_counts_even_without_a_reason() {
        let servers = [server("fake", ServerState::Active, None)];
        assert!(!Outcome::of_servers(&servers, &timed_out(&["fake"])).is_checked());
    }

    #[test]
    fn an_active_server_with_a_reason_gave_no_final_answer() {
        let servers = [server("fake", ServerState::Active, Some("unsure"))];
        assert_eq!(
            Outcome::of_servers(&servers, &[]).reason(),
            Some("fake is active: unsure")
        );
    }

    #[test]
    fn a_broken_server_says_why_on_one_line() {
        let servers = [server(
            "fake",
            ServerState::Broken,
            Some("exited with status 3\nstderr: boom"),
        )];
        assert_eq!(
            Outcome::of_servers(&servers, &[]).reason(),
            Some("fake is broken: exited with status 3; stderr: boom")
        );
    }

    #[test]
    fn no_server_at_all_is_not_checked() {
        assert!(!Outcome::of_servers(&[], &[]).is_checked());
        assert_eq!(
            Outcome::not_checked("looks\nbinary").reason(),
            Some("looks; binary")
        );
    }

    #[test]
    fn kinds_serialize_in_snake_case() {
        assert_eq!(
            serde_json::to_string(&[
                OutcomeKind::Diagnostics,
                OutcomeKind::Clean,
                OutcomeKind::NotChecked
            ])
            .ok(),
            Some(r#"["diagnostics","clean","not_checked"]"#.to_string())
        );
    }
}
