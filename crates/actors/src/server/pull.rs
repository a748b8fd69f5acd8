//! Pull diagnostics (LSP 3.17 `textDocument/diagnostic`): asking a server for a document's
//! diagnostics after each change, with result ids and the server's own cancellations. The
//! answer async-lsp hands back may be a stand-in for one the pump read itself: the real one is
//! then taken from the stash (`pull_stash`).

use async_lsp::lsp_types::request::Request;
use async_lsp::lsp_types::{
    DocumentDiagnosticReport, DocumentDiagnosticReportResult, TextDocumentIdentifier, Url,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use async_lsp::{ErrorCode, ServerSocket};
use futures::future::BoxFuture;
use futures::FutureExt;
use squiggle_protocol::publish::PullReport;

use super::pull_stash::Stash;
use super::request_error::RequestError;

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

impl From<PullReport> for Pulled {
    fn from(report: PullReport) -> Self {
        match report {
            PullReport::Full { result_id, items } => Pulled::Full { result_id, items },
            PullReport::Unchanged { .. } => Pulled::Unchanged,
        }
    }
}

/// `textDocument/diagnostic` with params that leave out what is absent: lsp-types writes its
/// optional `identifier` and `previousResultId` as `null`, which strict servers (TypeScript 7's
/// `tsc --lsp`) refuse with -32602.
enum DocumentDiagnostic {}

impl Request for DocumentDiagnostic {
    type Params = PullParams;
    type Result = DocumentDiagnosticReportResult;
    const METHOD: &'static str = "textDocument/diagnostic";
}

/// The params of a pull, as sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullParams {
    text_document: TextDocumentIdentifier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_result_id: Option<String>,
}

/// Queues a pull for `uri` now and returns the future of the server's answer.
pub fn request(
    socket: &ServerSocket,
    stash: &Arc<Stash>,
    uri: Url,
    previous_result_id: Option<String>,
) -> BoxFuture<'static, Result<Pulled, RequestError>> {
    let stash = stash.clone();
    let params = PullParams {
        text_document: TextDocumentIdentifier { uri },
        previous_result_id,
    };
    let socket = socket.clone();
    let answer = async move { socket.request::<DocumentDiagnostic>(params).await };
    crate::server::queued::queue_now(answer)
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
                Ok(stash
                    .take(result_id)
                    .map_or(Pulled::Unchanged, Pulled::from))
            }
            Ok(DocumentDiagnosticReportResult::Partial(_)) => {
                Err(RequestError::Unusable("a partial pull result".to_string()))
            }
            Err(async_lsp::Error::Response(error))
                if error.code == SERVER_CANCELLED && retrigger(&error.data) =>
            {
                Ok(Pulled::Retrigger)
            }
            Err(err) => Err(RequestError::from(err)),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_pull_without_a_previous_result_names_no_absent_field() {
        let params = PullParams {
            text_document: TextDocumentIdentifier {
                uri: Url::parse("file:///w/a.ts").unwrap(),
            },
            previous_result_id: None,
        };
        assert_eq!(
            serde_json::to_value(params).unwrap(),
            serde_json::json!({"textDocument": {"uri": "file:///w/a.ts"}})
        );
    }
}
