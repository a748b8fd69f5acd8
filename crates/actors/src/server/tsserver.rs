//! Pulling typescript-language-server's diagnostics through tsserver. The server publishes a
//! file's syntax, semantic and suggestion diagnostics as they come, unversioned, with no
//! signal that the last has come (an empty publish after project loading, then the real error
//! up to a second later, is common). Its documented `typescript.tsserverRequest` command runs
//! tsserver's `syntacticDiagnosticsSync` and `semanticDiagnosticsSync`, which tsserver answers
//! in order after the change queued before them: an exact answer for the synced text, used
//! as a pull report (and the server's publishes for open documents are left aside).

use async_lsp::lsp_types::{
    Diagnostic, DiagnosticSeverity, ExecuteCommandParams, NumberOrString, Position, Range, Url,
    WorkDoneProgressParams,
};
use async_lsp::{LanguageServer, ServerSocket};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Deserialize;
use serde_json::{json, Value};

use super::pull::Pulled;
use super::request_error::RequestError;

/// The command typescript-language-server offers for raw tsserver requests.
const COMMAND: &str = "typescript.tsserverRequest";

/// The tsserver requests that make up a file's diagnostics, in the order they are sent.
const KINDS: [&str; 3] = [
    "syntacticDiagnosticsSync",
    "semanticDiagnosticsSync",
    "suggestionDiagnosticsSync",
];

/// Queues the requests for `uri`'s diagnostics now and returns the future of all of them.
pub fn request(
    socket: &ServerSocket,
    uri: &Url,
) -> BoxFuture<'static, Result<Pulled, RequestError>> {
    let answers: Vec<_> = KINDS
        .iter()
        .map(|kind| {
            let mut socket = socket.clone();
            socket.execute_command(ExecuteCommandParams {
                command: COMMAND.to_string(),
                arguments: vec![json!(kind), json!({"file": uri.as_str()})],
                work_done_progress_params: WorkDoneProgressParams::default(),
            })
        })
        .collect();
    async move {
        let mut items = Vec::new();
        for (kind, answer) in KINDS.iter().zip(answers) {
            let answer = answer
                .await
                .map_err(|err| RequestError::from(err).in_step(kind))?;
            let diagnostics = diagnostics_of(answer.unwrap_or_default())
                .map_err(|reason| RequestError::Unusable(reason).in_step(kind))?;
            items.extend(diagnostics);
        }
        Ok(Pulled::Full {
            result_id: None,
            items,
        })
    }
    .boxed()
}

/// One of tsserver's diagnostics (the part squiggle reads).
#[derive(Deserialize)]
struct TsDiagnostic {
    start: TsPosition,
    end: TsPosition,
    text: String,
    #[serde(default)]
    code: Option<i32>,
    #[serde(default)]
    category: String,
    #[serde(default)]
    source: Option<String>,
}

/// A tsserver position: 1-based line, 1-based offset in UTF-16 code units.
#[derive(Deserialize)]
struct TsPosition {
    line: u32,
    offset: u32,
}

impl TsPosition {
    fn lsp(&self) -> Position {
        Position::new(self.line.saturating_sub(1), self.offset.saturating_sub(1))
    }
}

/// tsserver's response to a diagnostics request.
#[derive(Deserialize)]
struct TsResponse {
    #[serde(default)]
    success: bool,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    body: Vec<TsDiagnostic>,
}

/// The LSP diagnostics (UTF-16 positions) of a tsserver diagnostics response.
fn diagnostics_of(answer: Value) -> Result<Vec<Diagnostic>, String> {
    let response: TsResponse =
        serde_json::from_value(answer).map_err(|err| format!("not a tsserver answer: {err}"))?;
    if !response.success {
        return Err(response
            .message
            .unwrap_or_else(|| "tsserver said it failed".to_string()));
    }
    Ok(response
        .body
        .into_iter()
        .map(|diagnostic| Diagnostic {
            range: Range::new(diagnostic.start.lsp(), diagnostic.end.lsp()),
            severity: Some(match diagnostic.category.as_str() {
                "error" => DiagnosticSeverity::ERROR,
                "warning" => DiagnosticSeverity::WARNING,
                "suggestion" => DiagnosticSeverity::HINT,
                _ => DiagnosticSeverity::INFORMATION,
            }),
            code: diagnostic.code.map(NumberOrString::Number),
            source: Some(
                diagnostic
                    .source
                    .unwrap_or_else(|| "typescript".to_string()),
            ),
            message: diagnostic.text,
            ..Diagnostic::default()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_semantic_answer_becomes_lsp_diagnostics() {
        let answer = json!({"seq": 0, "type": "response", "command": "semanticDiagnosticsSync",
            "request_seq": 6, "success": true, "body": [
                {"start": {"line": 255, "offset": 32}, "end": {"line": 255, "offset": 37},
                 "text": "Cannot find name 'reasn'. Did you mean 'reason'?", "code": 2552,
                 "category": "error"},
                {"start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 4},
                 "text": "deprecated", "code": 6385, "category": "suggestion",
                 "reportsDeprecated": {}}]});
        let items = diagnostics_of(answer).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0].range,
            Range::new(Position::new(254, 31), Position::new(254, 36))
        );
        assert_eq!(items[0].severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(items[0].code, Some(NumberOrString::Number(2552)));
        assert_eq!(items[0].source.as_deref(), Some("typescript"));
        assert_eq!(items[1].severity, Some(DiagnosticSeverity::HINT));
    }

    #[test]
    fn a_failed_or_strange_answer_is_an_error() {
        let failed = json!({"success": false, "message": "No Project."});
        assert_eq!(diagnostics_of(failed).unwrap_err(), "No Project.");
        assert!(diagnostics_of(json!([1, 2])).is_err());
        assert_eq!(
            diagnostics_of(json!({"success": true})).unwrap(),
            Vec::new()
        );
    }
}
