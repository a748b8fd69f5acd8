//! Pull diagnostics (LSP 3.17 `textDocument/diagnostic`): asking a server for a document's
//! diagnostics after each change, with result ids and the server's own cancellations.

use async_lsp::lsp_types::request::Request;
use async_lsp::lsp_types::{
    DocumentDiagnosticReport, DocumentDiagnosticReportResult, TextDocumentIdentifier, Url,
};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_lsp::{ErrorCode, ServerSocket};
use dashmap::DashMap;
use futures::future::BoxFuture;
use futures::FutureExt;
use squiggle_protocol::publish::PullReport;

use super::request_error::RequestError;

/// The error code of a server that cancelled a request itself (LSP 3.17 `ServerCancelled`).
const SERVER_CANCELLED: ErrorCode = ErrorCode(-32802);

/// The result id that stands for an answer read on the fast path and kept in the [`Stash`].
const STASHED: &str = "squiggle-stashed:";

/// How long a stashed answer may wait for its request to take it. An answer that came after
/// its request gave up (requests time out after 10 s) is never taken; past this it is dropped.
const STALE: Duration = Duration::from_secs(60);

/// The stash is swept of stale answers once every this many answers.
const SWEEP_EVERY: u64 = 64;

/// Pull answers read straight from the server's stdout, waiting for the request they answer.
/// async-lsp still matches the answer to its request, but only sees a tiny stand-in for it
/// (`unchanged` with a result id naming the stashed answer): decoding a big report through its
/// generic message type cost about two thirds of squiggle's CPU on a pull server (ruff).
#[derive(Debug, Default)]
pub struct Stash {
    /// Each answer, with when it was kept.
    answers: DashMap<u64, (Instant, Pulled)>,
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
        let now = Instant::now();
        if key % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.sweep(now);
        }
        self.answers.insert(key, (now, pulled));
        format!(r#"{{"kind":"unchanged","resultId":"{STASHED}{key}"}}"#)
    }

    /// The answer a stand-in's result id names, taken out of the stash.
    fn take(&self, result_id: &str) -> Option<Pulled> {
        let key = result_id.strip_prefix(STASHED)?.parse().ok()?;
        self.answers.remove(&key).map(|(_, (_, pulled))| pulled)
    }

    /// Drops the answers kept longer than [`STALE`] before `now`.
    fn sweep(&self, now: Instant) {
        self.answers
            .retain(|_, (kept, _)| now.saturating_duration_since(*kept) < STALE);
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
                Ok(stash.take(result_id).unwrap_or(Pulled::Unchanged))
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

    fn full(id: &str) -> PullReport {
        PullReport::Full {
            result_id: Some(id.to_string()),
            items: Vec::new(),
        }
    }

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

    #[test]
    fn a_stand_in_names_the_answer_it_stands_for_once() {
        let stash = Stash::default();
        let stand_in = stash.keep(full("r1"));
        let value: serde_json::Value = serde_json::from_str(&stand_in).unwrap();
        assert_eq!(value["kind"], "unchanged");
        let id = value["resultId"].as_str().unwrap();
        assert!(
            matches!(stash.take(id), Some(Pulled::Full { result_id: Some(r), .. }) if r == "r1")
        );
        assert!(stash.take(id).is_none());
    }

    #[test]
    fn an_answer_nobody_took_is_dropped_once_stale() {
        let stash = Stash::default();
        stash.keep(full("late"));
        stash.sweep(Instant::now());
        assert_eq!(stash.answers.len(), 1, "a fresh answer is kept");
        stash.sweep(Instant::now() + STALE);
        assert_eq!(stash.answers.len(), 0);
    }

    #[test]
    fn keeping_answers_sweeps_now_and_then() {
        let stash = Stash::default();
        stash.keep(full("late"));
        // Make the first answer stale, then keep enough answers to trigger a sweep.
        stash
            .answers
            .alter(&0, |_, (kept, pulled)| (kept - STALE, pulled));
        for n in 1..SWEEP_EVERY {
            stash.keep(full(&n.to_string()));
        }
        assert!(!stash.answers.contains_key(&0));
        assert_eq!(stash.answers.len() as u64, SWEEP_EVERY - 1);
    }
}
