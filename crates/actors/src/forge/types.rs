//! The forge design's events, diagnostics and snapshot, made from squiggle's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use squiggle_protocol::{Diagnostic, ServerState, Severity};

/// A server's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LspState {
    /// Spawn and initialize in progress.
    Starting,
    /// Initialized: serving.
    Running,
    /// Exited or failed; why, for people.
    Stopped(String),
}

/// What the manager tells as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LspEvent {
    /// A server changed state.
    Status {
        /// The server's name.
        server: String,
        /// Its new state.
        state: LspState,
    },
    /// A file's diagnostics changed: all of them now.
    Diagnostics {
        /// The file, absolute.
        path: PathBuf,
        /// Its diagnostics, errors first (empty when the last went away).
        items: Vec<ForgeDiagnostic>,
    },
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiagnosticSeverity {
    /// Must be fixed.
    Error,
    /// Likely wrong.
    Warning,
    /// Information.
    Information,
    /// A hint.
    Hint,
}

/// Where a diagnostic is: 0-based lines and columns (characters), the end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiagnosticRange {
    /// The first line.
    pub start_line: u32,
    /// The first column.
    pub start_col: u32,
    /// The last line.
    pub end_line: u32,
    /// The column after the last.
    pub end_col: u32,
}

/// One diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgeDiagnostic {
    /// How serious it is.
    pub severity: DiagnosticSeverity,
    /// What the server said.
    pub message: String,
    /// Where, 0-based.
    pub range: DiagnosticRange,
    /// The tool that found it (`rustc`, `clippy`).
    pub source: Option<String>,
    /// Its code (`E0308`).
    pub code: Option<String>,
}

/// Every file's diagnostics, for a problems panel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiagnosticsSnapshot {
    /// Errors in all files.
    pub total_errors: usize,
    /// Warnings in all files.
    pub total_warnings: usize,
    /// Each file with diagnostics, by absolute path, errors first.
    pub by_file: BTreeMap<PathBuf, Vec<ForgeDiagnostic>>,
}

impl LspEvent {
    /// The design's event for one of squiggle's, paths made absolute under `root`; `None` for
    /// what the design has no event for (a server not started yet, the other files an edit
    /// broke).
    pub(super) fn from(event: crate::LspEvent, root: &Path) -> Option<LspEvent> {
        match event {
            crate::LspEvent::Status {
                server,
                state,
                reason,
                ..
            } => {
                let state = match state {
                    ServerState::Idle => return None,
                    ServerState::Starting => LspState::Starting,
                    ServerState::Active => LspState::Running,
                    ServerState::Broken | ServerState::Disabled | ServerState::Unavailable => {
                        LspState::Stopped(reason.unwrap_or_else(|| state.as_str().to_string()))
                    }
                };
                Some(LspEvent::Status { server, state })
            }
            crate::LspEvent::Diagnostics { path, items } => Some(LspEvent::Diagnostics {
                path: root.join(path),
                items: forge_diagnostics(items),
            }),
            crate::LspEvent::Caused { .. } => None,
        }
    }
}

impl DiagnosticsSnapshot {
    /// The design's snapshot of squiggle's, paths made absolute under `root`.
    pub(super) fn from(snapshot: crate::DiagnosticsSnapshot, root: &Path) -> DiagnosticsSnapshot {
        DiagnosticsSnapshot {
            total_errors: snapshot.total_errors,
            total_warnings: snapshot.total_warnings,
            by_file: (snapshot.by_file.into_iter())
                .map(|(file, items)| (root.join(file), forge_diagnostics(items)))
                .collect(),
        }
    }
}

/// squiggle's diagnostics (1-based) as the design's (0-based), errors first, then by place.
fn forge_diagnostics(items: Vec<Diagnostic>) -> Vec<ForgeDiagnostic> {
    let mut items: Vec<ForgeDiagnostic> = (items.into_iter())
        .map(|d| ForgeDiagnostic {
            severity: match d.severity {
                Severity::Error => DiagnosticSeverity::Error,
                Severity::Warning => DiagnosticSeverity::Warning,
                Severity::Info => DiagnosticSeverity::Information,
                Severity::Hint => DiagnosticSeverity::Hint,
            },
            message: d.message,
            range: DiagnosticRange {
                start_line: d.line.saturating_sub(1),
                start_col: d.column.saturating_sub(1),
                end_line: d.end_line.saturating_sub(1),
                end_col: d.end_column.saturating_sub(1),
            },
            source: d.source,
            code: d.code,
        })
        .collect();
    items.sort_by_key(|d| (d.severity, d.range.start_line, d.range.start_col));
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(severity: Severity, line: u32) -> Diagnostic {
        Diagnostic {
            file: "src/a.rs".into(),
            line,
            column: 5,
            end_line: line,
            end_column: 9,
            severity,
            message: "m".into(),
            code: Some("E0308".into()),
            source: Some("rustc".into()),
            also: Vec::new(),
        }
    }

    #[test]
    fn ranges_are_zero_based_and_errors_come_first() {
        let items = forge_diagnostics(vec![
            diagnostic(Severity::Warning, 1),
            diagnostic(Severity::Error, 3),
            diagnostic(Severity::Info, 2),
        ]);
        let seen: Vec<_> = items.iter().map(|d| (d.severity, d.range)).collect();
        let range = |line| DiagnosticRange {
            start_line: line,
            start_col: 4,
            end_line: line,
            end_col: 8,
        };
        assert_eq!(
            seen,
            [
                (DiagnosticSeverity::Error, range(2)),
                (DiagnosticSeverity::Warning, range(0)),
                (DiagnosticSeverity::Information, range(1)),
            ]
        );
        assert_eq!(items[0].code.as_deref(), Some("E0308"));
    }

    #[test]
    fn states_map_to_the_designs_three() {
        let root = Path::new("/w");
        let status = |state, reason: Option<&str>| {
            LspEvent::from(
                crate::LspEvent::Status {
                    server: "ra".into(),
                    root: ".".into(),
                    state,
                    reason: reason.map(String::from),
                },
                root,
            )
        };
        let state = |state| {
            Some(LspEvent::Status {
                server: "ra".into(),
                state,
            })
        };
        assert_eq!(status(ServerState::Idle, None), None);
        assert_eq!(
            status(ServerState::Starting, None),
            state(LspState::Starting)
        );
        assert_eq!(status(ServerState::Active, None), state(LspState::Running));
        assert_eq!(
            status(ServerState::Broken, Some("exited with status 3")),
            state(LspState::Stopped("exited with status 3".into()))
        );
        assert_eq!(
            status(ServerState::Unavailable, None),
            state(LspState::Stopped("unavailable".into()))
        );
    }
}
