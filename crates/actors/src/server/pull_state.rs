//! What a server's pulled diagnostics stand at, per document: the last result id (sent with
//! the next pull), which open documents changed since the server last finished its work (each
//! pulled again, once, when it does), and what each pull's answer leads to: taken, dropped as
//! stale, asked again after the server cancelled it, or given up on. Pure: the server actor
//! sends the pulls and does what [`PullStep`] says.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_lsp::lsp_types::Diagnostic;

use super::pull::Pulled;
use super::request_error::RequestError;

/// How often a pull the server cancelled is sent again.
pub const MAX_RETRIGGERS: u8 = 3;
/// How long to wait before pulling again when a server cancelled a pull.
pub const RETRIGGER_DELAY: Duration = Duration::from_millis(100);

/// The pull state of one server's documents.
#[derive(Debug, Default)]
pub struct PullState {
    /// Per pulled document: the last result id (what it said is in the store).
    result_ids: HashMap<PathBuf, Option<String>>,
    /// The open documents changed since the server last finished work: pulled again when it
    /// does (what was pulled while it worked may be out of date).
    unrepulled: HashSet<PathBuf>,
}

/// What to do with a pull's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum PullStep {
    /// It is for a version the document no longer has (or for a closed document): dropped.
    Ignore,
    /// The server cancelled it and asked to be asked again: pull again after this long, as
    /// this attempt.
    RetryAfter(Duration, u8),
    /// The document's diagnostics now, as the server wrote them: to be published.
    Publish(Vec<Diagnostic>),
    /// Nothing changed since the last result: what the store holds stands for this version.
    StillPulled,
    /// The pull failed.
    Failed(PullFailure),
}

/// Why a pull got no diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PullFailure {
    /// The server cancelled it every time it was sent.
    #[error("the server kept cancelling the pull")]
    KeptCancelling,
    /// The server answered `unchanged` with no earlier answer to be unchanged from (a server
    /// that publishes its results instead, or one that had not taken the document in yet).
    #[error("the server answered `unchanged` with no earlier answer")]
    UnchangedFromNothing,
    /// The request failed.
    #[error(transparent)]
    Request(#[from] RequestError),
}

impl PullState {
    /// A document was synced with new text: it is pulled again when the server next finishes
    /// its work.
    pub fn changed(&mut self, path: &Path) {
        self.unrepulled.insert(path.to_path_buf());
    }

    /// The result id to send with the next pull of a document (the last one it answered).
    pub fn previous_result_id(&self, path: &Path) -> Option<String> {
        self.result_ids.get(path).cloned().flatten()
    }

    /// The server finished its work: the documents to pull again (those changed since the last
    /// time, each once; a cost per change, not per document).
    pub fn work_done(&mut self) -> Vec<PathBuf> {
        self.unrepulled.drain().collect()
    }

    /// Takes the answer to a pull of `version` (sent as `attempt`), given the version the
    /// document has now (None when it is closed), and says what to do with it.
    pub fn on_answer(
        &mut self,
        path: &Path,
        current: Option<i32>,
        version: i32,
        attempt: u8,
        answer: Result<Pulled, RequestError>,
    ) -> PullStep {
        if current != Some(version) {
            return PullStep::Ignore;
        }
        match answer {
            Ok(Pulled::Retrigger) if attempt < MAX_RETRIGGERS => {
                PullStep::RetryAfter(RETRIGGER_DELAY, attempt + 1)
            }
            Ok(Pulled::Retrigger) => PullStep::Failed(PullFailure::KeptCancelling),
            Ok(Pulled::Full { result_id, items }) => {
                self.result_ids.insert(path.to_path_buf(), result_id);
                PullStep::Publish(items)
            }
            // Not an answer: it would read as clean (and nothing else would come for the pull).
            Ok(Pulled::Unchanged) if self.previous_result_id(path).is_none() => {
                PullStep::Failed(PullFailure::UnchangedFromNothing)
            }
            Ok(Pulled::Unchanged) => PullStep::StillPulled,
            Err(error) => PullStep::Failed(error.into()),
        }
    }

    /// A document was closed: forgets it; true when diagnostics were pulled for it (what the
    /// store holds of them no longer holds and is to be cleared).
    pub fn closed(&mut self, path: &Path) -> bool {
        self.unrepulled.remove(path);
        self.result_ids.remove(path).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str) -> PathBuf {
        PathBuf::from(format!("/ws/{name}"))
    }

    /// A pull's answer.
    type Answer = Result<Pulled, RequestError>;

    fn full(id: Option<&str>) -> Answer {
        Ok(Pulled::Full {
            result_id: id.map(str::to_string),
            items: vec![Diagnostic {
                message: "bad".to_string(),
                ..Diagnostic::default()
            }],
        })
    }

    fn items() -> Vec<Diagnostic> {
        match full(None) {
            Ok(Pulled::Full { items, .. }) => items,
            _ => Vec::new(),
        }
    }

    #[test]
    fn each_answer_leads_to_its_step() {
        let late = RequestError::timeout(Duration::from_secs(10));
        // (version now, version pulled, attempt, answer, step)
        let table: Vec<(Option<i32>, i32, u8, Answer, PullStep)> = vec![
            (Some(2), 2, 0, full(Some("r")), PullStep::Publish(items())),
            (Some(3), 2, 0, full(Some("r")), PullStep::Ignore),
            (None, 2, 0, full(Some("r")), PullStep::Ignore),
            (Some(3), 2, 0, Err(late.clone()), PullStep::Ignore),
            (
                Some(2),
                2,
                0,
                Ok(Pulled::Retrigger),
                PullStep::RetryAfter(RETRIGGER_DELAY, 1),
            ),
            (
                Some(2),
                2,
                MAX_RETRIGGERS - 1,
                Ok(Pulled::Retrigger),
                PullStep::RetryAfter(RETRIGGER_DELAY, MAX_RETRIGGERS),
            ),
            (
                Some(2),
                2,
                MAX_RETRIGGERS,
                Ok(Pulled::Retrigger),
                PullStep::Failed(PullFailure::KeptCancelling),
            ),
            (
                Some(2),
                2,
                0,
                Err(late.clone()),
                PullStep::Failed(PullFailure::Request(late)),
            ),
            (
                Some(2),
                2,
                0,
                Ok(Pulled::Unchanged),
                PullStep::Failed(PullFailure::UnchangedFromNothing),
            ),
        ];
        for (current, version, attempt, answer, step) in table {
            let mut state = PullState::default();
            let case = format!("{current:?} {version} {attempt} {answer:?}");
            assert_eq!(
                state.on_answer(&p("a"), current, version, attempt, answer),
                step,
                "{case}"
            );
        }
    }

    #[test]
    fn a_failure_reads_as_before() {
        let late = RequestError::timeout(Duration::from_secs(10));
        assert_eq!(PullFailure::from(late).to_string(), "no answer within 10 s");
        assert_eq!(
            PullFailure::KeptCancelling.to_string(),
            "the server kept cancelling the pull"
        );
    }

    #[test]
    fn the_last_full_answer_names_the_result_id_sent_next() {
        let mut state = PullState::default();
        assert_eq!(state.previous_result_id(&p("a")), None);
        state.on_answer(&p("a"), Some(1), 1, 0, full(Some("r1")));
        assert_eq!(state.previous_result_id(&p("a")).as_deref(), Some("r1"));
        assert_eq!(
            state.on_answer(&p("a"), Some(2), 2, 0, Ok(Pulled::Unchanged)),
            PullStep::StillPulled,
            "unchanged from an earlier answer stands"
        );
        assert_eq!(
            state.previous_result_id(&p("a")).as_deref(),
            Some("r1"),
            "unchanged keeps the id"
        );
        state.on_answer(&p("a"), Some(3), 2, 0, full(Some("stale")));
        assert_eq!(
            state.previous_result_id(&p("a")).as_deref(),
            Some("r1"),
            "a stale answer is not taken"
        );
        state.on_answer(&p("a"), Some(3), 3, 0, full(None));
        assert_eq!(state.previous_result_id(&p("a")), None);
    }

    #[test]
    fn a_changed_document_is_repulled_once_when_work_is_done() {
        let mut state = PullState::default();
        state.changed(&p("a"));
        state.changed(&p("b"));
        state.changed(&p("a"));
        let mut again = state.work_done();
        again.sort();
        assert_eq!(again, vec![p("a"), p("b")]);
        assert!(state.work_done().is_empty(), "once per change");
        state.changed(&p("a"));
        assert_eq!(state.work_done(), vec![p("a")]);
    }

    #[test]
    fn closing_forgets_a_document_and_says_whether_it_was_pulled() {
        let mut state = PullState::default();
        state.changed(&p("a"));
        assert!(!state.closed(&p("a")), "never pulled: nothing to clear");
        assert!(
            state.work_done().is_empty(),
            "a closed document is not repulled"
        );
        // A tsserver answer has no result id, but it was pulled all the same.
        state.on_answer(&p("b"), Some(1), 1, 0, full(None));
        assert!(state.closed(&p("b")));
        assert!(!state.closed(&p("b")), "forgotten");
        state.on_answer(&p("c"), Some(1), 1, 0, full(Some("r")));
        state.closed(&p("c"));
        assert_eq!(state.previous_result_id(&p("c")), None);
    }
}
