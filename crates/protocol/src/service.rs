//! The contract of `squiggle serve`: JSON-RPC 2.0 over LSP-framed stdio, for agent hosts written
//! in other languages. Method names, params and results, with the JSON field names hosts expect.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::feedback::Scope;
use crate::outcome::OutcomeKind;
use crate::render::llm::escape_owned;
use crate::{Diagnostic, Origin, ServerMetrics, ServerReport, ServerState, Severity};

/// Method names of the service.
pub mod method {
    /// Notification sent once set-up is complete, before anything is answered.
    pub const READY: &str = "lsp/ready";
    /// Check one file: `CheckFileParams` -> `Vec<ServiceDiagnostic>`.
    pub const CHECK_FILE: &str = "lsp/checkFile";
    /// Every known file's diagnostics: `{}` -> `{ path: Vec<ServiceDiagnostic> }`.
    pub const DIAGNOSTICS: &str = "lsp/diagnostics";
    /// The runtime's diagnostics epoch: `{}` -> number.
    pub const GET_DIAGNOSTIC_EPOCH: &str = "lsp/getDiagnosticEpoch";
    /// Diagnostics once the epoch passed a value: `DiagnosticsAfterParams` -> like DIAGNOSTICS.
    pub const DIAGNOSTICS_AFTER: &str = "lsp/diagnosticsAfter";
    /// Every configured server's state: `{}` -> `Vec<ServiceStatus>`.
    pub const STATUS: &str = "lsp/status";
    /// Stop every server and exit: `{}` -> null.
    pub const SHUTDOWN: &str = "lsp/shutdown";
    /// Check one file and say whether it was checked: `CheckFileParams` -> `CheckFileResult`.
    pub const SQUIGGLE_CHECK_FILE: &str = "squiggle/checkFile";
    /// Edit-tool feedback: `FeedbackParams` -> `FeedbackResult`.
    pub const FEEDBACK: &str = "squiggle/feedback";
    /// Restart broken servers: `RestartParams` -> `Vec<RestartedServer>`.
    pub const RESTART: &str = "squiggle/restart";
    /// Ends the wait of a request early with what is known so far.
    pub const CANCEL: &str = "$/cancelRequest";
    /// Notification: the search after an edit's answer found errors the edit caused in other
    /// files, `{edited, files: { path: Vec<ServiceDiagnostic> }}` (the next feedback tells them
    /// too).
    pub const CAUSED_ELSEWHERE: &str = "squiggle/causedElsewhere";
}

/// JSON-RPC error codes the service answers with.
pub mod error_code {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a request or notification.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params do not fit the method.
    pub const INVALID_PARAMS: i64 = -32602;
    /// squiggle failed while answering.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// Params of `lsp/checkFile`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckFileParams {
    /// The file, absolute or relative to the workspace root.
    pub file_path: String,
    /// The authoritative content, when given.
    #[serde(default)]
    pub text: Option<String>,
}

/// Params of `lsp/diagnosticsAfter`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsAfterParams {
    /// The epoch taken before the change.
    pub after_epoch: u64,
    /// How long to wait at most, in milliseconds (default 250).
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// Params of `squiggle/feedback`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackParams {
    /// The edited or written file.
    pub file_path: String,
    /// The authoritative content, when given.
    #[serde(default)]
    pub text: Option<String>,
    /// `edit` or `write`.
    pub scope: Scope,
}

/// Params of `squiggle/restart`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestartParams {
    /// Only this server (every broken one when absent).
    #[serde(default)]
    pub server_id: Option<String>,
}

/// One server in the answer to `squiggle/restart`: its state after the restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartedServer {
    /// The server id.
    pub id: String,
    /// Its project root, relative to the workspace root.
    pub root: String,
    /// Its state now: `active` when it runs again.
    pub status: ServerState,
    /// Why it is not active (for a broken one, also why it was not restarted).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// The process id while it runs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server_pid: Option<u32>,
}

/// Params of `$/cancelRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelParams {
    /// The id of the request to end early.
    pub id: Value,
}

/// A diagnostic as the service sends it: 1-based, message escaped for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceDiagnostic {
    /// The file, relative to the workspace root.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub character: u32,
    /// `error`, `warning`, `info` or `hint`.
    pub severity: Severity,
    /// The message with `<`, `>` and `&` escaped.
    pub message: String,
    /// The diagnostic code, if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub code: Option<String>,
    /// The tool that reported it, if known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source: Option<String>,
    /// The codes and sources of other servers that reported the same problem, if any.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub also: Vec<Origin>,
}

/// Diagnostics in the service's shape, only the severities kept, ordered by line then column.
pub fn service_diagnostics(
    diagnostics: Vec<Diagnostic>,
    keep: &[Severity],
) -> Vec<ServiceDiagnostic> {
    let mut kept: Vec<Diagnostic> = diagnostics
        .into_iter()
        .filter(|d| keep.contains(&d.severity))
        .collect();
    kept.sort_by_key(|d| (d.line, d.column));
    kept.into_iter()
        .map(|d| ServiceDiagnostic {
            message: escape_owned(d.message),
            file: d.file,
            line: d.line,
            character: d.column,
            severity: d.severity,
            code: d.code,
            source: d.source,
            also: d.also,
        })
        .collect()
}

/// One server in `lsp/status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    /// The server id.
    pub id: String,
    /// Its state.
    pub status: ServerState,
    /// The language it serves.
    pub language: String,
    /// The process id while it runs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server_pid: Option<u32>,
    /// Why it is broken, disabled or unavailable, or that it starts on demand.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// How it did this session (BR-67): crashes, checks, timeouts, answer times.
    #[serde(skip_serializing_if = "ServerMetrics::is_empty", default)]
    pub metrics: ServerMetrics,
}

/// The result of `squiggle/checkFile`: `lsp/checkFile`'s diagnostics, and whether the file
/// was checked at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckFileResult {
    /// The file's diagnostics at the configured severities (as `lsp/checkFile` answers them).
    pub diagnostics: Vec<ServiceDiagnostic>,
    /// `diagnostics`, `clean`, or `not_checked` (no server gave its final answer).
    pub outcome: OutcomeKind,
    /// Why the file was not checked (null when it was).
    pub reason: Option<String>,
    /// Each server the file needed, with its state and, when it gave no answer, why.
    pub servers: Vec<ServerReport>,
}

/// The result of `squiggle/feedback`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackResult {
    /// The text to append to the tool result: "" when the file was checked and nothing is to
    /// be reported; a line saying so and why when it was not checked.
    pub text: String,
    /// The edited file's diagnostics at the configured severities.
    pub diagnostics: Vec<ServiceDiagnostic>,
    /// `diagnostics`, `clean`, or `not_checked`.
    pub outcome: OutcomeKind,
    /// Why the file was not checked (null when it was).
    #[serde(default)]
    pub reason: Option<String>,
}

/// The `LSP_BOOTSTRAP` environment variable: where to work and how.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// The workspace root.
    #[serde(default)]
    pub workspace_root: Option<String>,
    /// The `lsp` configuration object, or `false` to disable everything.
    #[serde(default)]
    pub config: Option<Value>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn diagnostic(
        line: u32,
        column: u32,
        severity: Severity,
        message: &str,
        code: Option<&str>,
    ) -> Diagnostic {
        Diagnostic::at(line, column, severity, message)
            .in_file("src/a.ts")
            .with_code(code)
            .with_source("ts")
    }

    #[test]
    fn service_diagnostics_filter_order_escape_and_skip_absent_fields() {
        let diagnostics = vec![
            diagnostic(9, 1, Severity::Error, "b", None),
            diagnostic(2, 5, Severity::Warning, "w", Some("W1")),
            diagnostic(2, 3, Severity::Error, "a <T> & b", Some("2322")),
        ];
        let out = service_diagnostics(diagnostics, &[Severity::Error]);
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            json!([
                {"file": "src/a.ts", "line": 2, "character": 3, "severity": "error", "message": "a &lt;T&gt; &amp; b", "code": "2322", "source": "ts"},
                {"file": "src/a.ts", "line": 9, "character": 1, "severity": "error", "message": "b", "source": "ts"}
            ])
        );
    }

    #[test]
    fn service_diagnostics_name_the_other_servers_of_one_problem() {
        let diagnostics =
            vec![
                diagnostic(1, 1, Severity::Error, "Cannot find name 'x'.", Some("2304"))
                    .also(Some("no-undef"), Some("eslint")),
            ];
        let out = service_diagnostics(diagnostics, &[Severity::Error]);
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            json!([{
                "file": "src/a.ts", "line": 1, "character": 1, "severity": "error",
                "message": "Cannot find name 'x'.", "code": "2304", "source": "ts",
                "also": [{"code": "no-undef", "source": "eslint"}]
            }])
        );
    }

    #[test]
    fn params_use_camel_case_and_optional_fields() {
        let check: CheckFileParams =
            serde_json::from_value(json!({"filePath": "/w/a.py"})).unwrap();
        assert_eq!(
            check,
            CheckFileParams {
                file_path: "/w/a.py".to_string(),
                text: None
            }
        );
        let after: DiagnosticsAfterParams =
            serde_json::from_value(json!({"afterEpoch": 3})).unwrap();
        assert_eq!(after.wait_ms, None);
        let feedback: FeedbackParams =
            serde_json::from_value(json!({"filePath": "a.py", "text": "x", "scope": "write"}))
                .unwrap();
        assert_eq!(feedback.scope, Scope::Write);
        let bootstrap: Bootstrap =
            serde_json::from_value(json!({"workspaceRoot": "/w", "config": false})).unwrap();
        assert_eq!(bootstrap.config, Some(json!(false)));
    }

    #[test]
    fn check_file_result_says_whether_the_file_was_checked() {
        let result = CheckFileResult {
            diagnostics: vec![],
            outcome: OutcomeKind::NotChecked,
            reason: Some("fake timed out: no diagnostics before the deadline".to_string()),
            servers: vec![ServerReport {
                id: "fake".to_string(),
                root: ".".to_string(),
                status: ServerState::Active,
                reason: Some("no diagnostics before the deadline".to_string()),
                basis: None,
                required: false,
            }],
        };
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({
                "diagnostics": [],
                "outcome": "not_checked",
                "reason": "fake timed out: no diagnostics before the deadline",
                "servers": [{"id": "fake", "root": ".", "status": "active",
                             "reason": "no diagnostics before the deadline"}]
            })
        );
    }

    #[test]
    fn status_uses_server_pid_in_camel_case() {
        let status = ServiceStatus {
            id: "pyright".to_string(),
            status: ServerState::Active,
            language: "python".to_string(),
            server_pid: Some(42),
            reason: None,
            metrics: ServerMetrics::default(),
        };
        assert_eq!(
            serde_json::to_value(&status).unwrap(),
            json!({"id": "pyright", "status": "active", "language": "python", "serverPid": 42})
        );
    }
}
