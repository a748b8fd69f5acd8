//! Pull diagnostics (LSP 3.17 `textDocument/diagnostic`): asking a server for a document's
//! diagnostics after each change, with result ids and the server's own cancellations.

use async_lsp::lsp_types::{
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult,
    PartialResultParams, TextDocumentIdentifier, Url, WorkDoneProgressParams,
};
use async_lsp::{ErrorCode, LanguageServer, ServerSocket};
use futures::future::BoxFuture;
use futures::FutureExt;

/// The error code of a server that cancelled a request itself (LSP 3.17 `ServerCancelled`).
const SERVER_CANCELLED: ErrorCode = ErrorCode(-32802);

/// A server's answer to a pull.
#[derive(Debug, Clone)]
pub enum Pulled {
    /// The document's diagnostics now, with the id to send next time.
    Full {
        result_id: Option<String>,
        items: Vec<async_lsp::lsp_types::Diagnostic>,
    },
    /// Nothing changed since the result with this id.
    Unchanged,
    /// The server cancelled and asks to be asked again.
    Retrigger,
}

/// Queues a pull for `uri` now and returns the future of the server's answer.
pub fn request(
    socket: &ServerSocket,
    uri: Url,
    previous_result_id: Option<String>,
) -> BoxFuture<'static, Result<Pulled, String>> {
    let mut socket = socket.clone();
    socket
        .document_diagnostic(DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier { uri },
            identifier: None,
            previous_result_id,
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .map(|answer| match answer {
            Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(full))) => {
                let report = full.full_document_diagnostic_report;
                Ok(Pulled::Full {
                    result_id: report.result_id,
                    items: report.items,
                })
            }
            Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Unchanged(_))) => {
                Ok(Pulled::Unchanged)
            }
            Ok(DocumentDiagnosticReportResult::Partial(_)) => {
                Err("a partial pull result".to_string())
            }
            Err(async_lsp::Error::Response(error))
                if error.code == SERVER_CANCELLED && retrigger(&error.data) =>
            {
                Ok(Pulled::Retrigger)
            }
            Err(err) => Err(err.to_string()),
        })
        .boxed()
}

/// Whether a ServerCancelled error asks for the request to be sent again.
fn retrigger(data: &Option<serde_json::Value>) -> bool {
    data.as_ref()
        .and_then(|d| d.get("retriggerRequest"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true)
}
