//! Pull diagnostics (LSP 3.17 `textDocument/diagnostic`): asking a server for a document's
//! diagnostics after each change, with result ids and the server's own cancellations.

use async_lsp::lsp_types::{
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult,
    PartialResultParams, TextDocumentIdentifier, Url, WorkDoneProgressParams,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_lsp::{ErrorCode, LanguageServer, ServerSocket};
use dashmap::DashMap;
use futures::future::BoxFuture;
use futures::FutureExt;
use squiggle_protocol::publish::PullReport;

/// The error code of a server that cancelled a request itself (LSP 3.17 `ServerCancelled`).
const SERVER_CANCELLED: ErrorCode = ErrorCode(-32802);

/// The result id that stands for an answer read on the fast path and kept in the [`Stash`].
const STASHED: &str = "squiggle-stashed:";

/// Pull answers read straight from the server's stdout, waiting for the request they answer.
/// async-lsp still matches the answer to its request, but only sees a tiny stand-in for it
/// (`unchanged` with a result id naming the stashed answer): decoding a big report through its
/// generic message type cost about two thirds of squiggle's CPU on a pull server (ruff).
#[derive(Debug, Default)]
pub struct Stash {
    answers: DashMap<u64, Pulled>,
    next: AtomicU64,
}

impl Stash {
    /// Keeps an answer and returns the result of the stand-in async-lsp gets instead.
    pub fn keep(&self, report: PullReport) -> String {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let pulled = match report {
            PullReport::Full { result_id, items } => Pulled::Full { result_id, items },
            PullReport::Unchanged { .. } => Pulled::Unchanged,
        };
        self.answers.insert(key, pulled);
        format!(r#"{{"kind":"unchanged","resultId":"{STASHED}{key}"}}"#)
    }

    /// The answer a stand-in's result id names, taken out of the stash.
    fn take(&self, result_id: &str) -> Option<Pulled> {
        let key = result_id.strip_prefix(STASHED)?.parse().ok()?;
        self.answers.remove(&key).map(|(_, pulled)| pulled)
    }
}

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
    stash: &Arc<Stash>,
    uri: Url,
    previous_result_id: Option<String>,
) -> BoxFuture<'static, Result<Pulled, String>> {
    let stash = stash.clone();
    let mut socket = socket.clone();
    socket
        .document_diagnostic(DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier { uri },
            identifier: None,
            previous_result_id,
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        })
        .map(move |answer| match answer {
            Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(full))) => {
                let report = full.full_document_diagnostic_report;
                Ok(Pulled::Full {
                    result_id: report.result_id,
                    items: report.items,
                })
            }
            Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Unchanged(
                unchanged,
            ))) => {
                let result_id = &unchanged.unchanged_document_diagnostic_report.result_id;
                Ok(stash.take(result_id).unwrap_or(Pulled::Unchanged))
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
