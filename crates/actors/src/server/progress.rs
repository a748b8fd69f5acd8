//! Work-done progress a server reports (`$/progress` begin/end), to tell callers it is busy;
//! whether it is ready (rust-analyzer's `experimental/serverStatus`); and its build check on
//! save (rust-analyzer's flycheck, under its own progress token).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_lsp::lsp_types::{NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress};
use ractor::ActorRef;

use crate::diagnostics::DiagnosticsMsg;
use crate::key::ServerKey;

/// What a server is working on: its running work-done progress (titles by token), whether it
/// said it is not quiescent (rust-analyzer's `experimental/serverStatus`), and the pulls
/// squiggle has in flight. Every change between busy and idle, and every start and end of a
/// build check, is told to the diagnostics store while the lock is held, so the store sees
/// the changes in the order they happened.
#[derive(Debug, Clone, Default)]
pub struct Busy {
    work: Arc<Mutex<Work>>,
    store: Option<(ServerKey, ActorRef<DiagnosticsMsg>)>,
    /// The progress token prefix of the server's build check on save, if it runs one.
    check_prefix: Option<Arc<str>>,
}

#[derive(Debug, Default)]
struct Work {
    running: HashMap<String, String>,
    not_quiescent: bool,
    /// Pull requests squiggle has sent and not seen answered.
    pulls: usize,
}

impl Work {
    fn busy(&self) -> bool {
        self.not_quiescent || !self.running.is_empty() || self.pulls > 0
    }
}

impl Busy {
    /// The work of server `key`, told to the diagnostics store. A server that is
    /// `ready_on_quiescent` is not ready until it says it is quiescent; `check_prefix` is its
    /// build check's progress token prefix.
    pub fn new(
        key: ServerKey,
        store: ActorRef<DiagnosticsMsg>,
        ready_on_quiescent: bool,
        check_prefix: Option<&str>,
    ) -> Self {
        let work = Work {
            not_quiescent: ready_on_quiescent,
            ..Work::default()
        };
        let busy = Self {
            work: Arc::new(Mutex::new(work)),
            store: Some((key, store)),
            check_prefix: check_prefix.map(Arc::from),
        };
        if ready_on_quiescent {
            // Busy from the start (loading its project): the store hears of it like any change.
            busy.tell(|key| DiagnosticsMsg::Busy { key, busy: true });
        }
        busy
    }

    /// Whether the server is ready: it has not said that it is still loading its project (a
    /// `ready_on_quiescent` server: it has said that it is done). A pull asked before is not
    /// its answer for the text.
    pub fn ready(&self) -> bool {
        self.work.lock().is_ok_and(|work| !work.not_quiescent)
    }

    /// Tells the store, if there is one.
    fn tell(&self, msg: impl FnOnce(ServerKey) -> DiagnosticsMsg) {
        if let Some((key, store)) = &self.store {
            let _ = store.cast(msg(key.clone()));
        }
    }

    /// Whether `token` is one of the server's build checks.
    fn is_check(&self, token: &str) -> bool {
        self.check_prefix
            .as_ref()
            .is_some_and(|prefix| token.starts_with(&**prefix))
    }

    /// Applies a change; returns the new busy state when it changed (and tells the store).
    fn change(&self, apply: impl FnOnce(&mut Work)) -> Option<bool> {
        let mut work = self.work.lock().ok()?;
        let before = work.busy();
        apply(&mut work);
        let busy = work.busy();
        if busy == before {
            return None;
        }
        if let Some((key, _)) = &self.store {
            tracing::debug!(server = %key.id, busy, "server work changed");
        }
        self.tell(|key| DiagnosticsMsg::Busy { key, busy });
        Some(busy)
    }

    /// Records rust-analyzer's `experimental/serverStatus`; returns the new busy state when it
    /// changed.
    pub fn set_quiescent(&self, quiescent: bool) -> Option<bool> {
        self.change(|work| work.not_quiescent = !quiescent)
    }

    /// Records a pull sent (`true`) or answered (`false`); returns the new busy state when it
    /// changed.
    pub fn pulling(&self, sent: bool) -> Option<bool> {
        self.change(|work| {
            if sent {
                work.pulls += 1;
            } else {
                work.pulls = work.pulls.saturating_sub(1);
            }
        })
    }

    /// Records a `$/progress` notification; returns the new busy state when it changed. The
    /// begin of a build check, and the end of the last one running, are told to the store.
    pub fn update(&self, params: ProgressParams) -> Option<bool> {
        let token = match params.token {
            NumberOrString::Number(n) => n.to_string(),
            NumberOrString::String(s) => s,
        };
        let check = self.is_check(&token);
        let ProgressParamsValue::WorkDone(progress) = params.value;
        self.change(|work| match progress {
            WorkDoneProgress::Begin(begin) => {
                if check {
                    let title = begin.title.clone();
                    self.tell(|key| DiagnosticsMsg::CheckBegan { key, title });
                }
                work.running.insert(token, begin.title);
            }
            WorkDoneProgress::Report(_) => {}
            WorkDoneProgress::End(_) => {
                let ended = work.running.remove(&token).is_some();
                if check && ended && !work.running.keys().any(|token| self.is_check(token)) {
                    self.tell(|key| DiagnosticsMsg::CheckEnded { key });
                }
            }
        })
    }

    /// What the server is busy with, if anything (the titles of running progress).
    pub fn doing(&self) -> Option<String> {
        let work = self.work.lock().ok()?;
        let mut titles: Vec<&str> = work.running.values().map(String::as_str).collect();
        if titles.is_empty() && work.not_quiescent {
            titles.push("working");
        }
        titles.sort_unstable();
        titles.dedup();
        (!titles.is_empty()).then(|| titles.join(", "))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn progress(value: serde_json::Value) -> ProgressParams {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn begin_makes_busy_and_end_makes_idle() {
        let busy = Busy::default();
        busy.update(progress(
            json!({"token": "t1", "value": {"kind": "begin", "title": "Indexing"}}),
        ));
        busy.update(progress(
            json!({"token": 2, "value": {"kind": "begin", "title": "cargo check"}}),
        ));
        busy.update(progress(
            json!({"token": "t1", "value": {"kind": "report", "percentage": 50}}),
        ));
        assert_eq!(busy.doing().as_deref(), Some("Indexing, cargo check"));
        busy.update(progress(json!({"token": "t1", "value": {"kind": "end"}})));
        busy.update(progress(json!({"token": 2, "value": {"kind": "end"}})));
        assert_eq!(busy.doing(), None);
    }
}
