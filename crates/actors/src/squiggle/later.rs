//! The search that goes on after an edit's answer. An edit's feedback looks at the files that
//! import the edited one only for `dependent_files_wait_ms`, so that the agent is not kept
//! waiting; on a much-imported file that time ends before every importer was checked, and the
//! answer says how many were not. [`Squiggle::feedback_later`] then goes on with them, for as
//! long as nothing else is asked of this runtime, and gives the errors the edit caused there
//! that the answer did not name: what a host that can be woken by a hook running in the
//! background (Claude Code's `asyncRewake`) tells the model after its answer.
//!
//! What it says holds for the texts the servers hold when it says it: it says nothing if any
//! text was handed to the servers after the edit's answer (another edit, a fix), or if a call
//! came while it searched.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use squiggle_protocol::{
    render_later, unfinished_section, unsearched_section, Diagnostic, Unsearched,
};
use tokio::sync::{watch, Notify};

use super::reach::{self, Window};
use super::{disk_stamps, Squiggle};

/// How long the search after an answer starts checks for (the last begins before two thirds of
/// it; a check begun runs to its end, bounded by its own deadlines), and then its look with the
/// text from before at the importers it found with errors.
const LATER_WAIT: Duration = Duration::from_secs(20);

/// How long a search after an answer waits for that answer (the edit's own hook runs at the
/// same time, and gives it; a daemon gives an answer a minute at most).
const ANSWER_WAIT: Duration = Duration::from_secs(20);

/// How long an edit's feedback looks at importers when a search goes on after its answer: a
/// third of the time its own answer took (so that the whole answer, with the hook's own work
/// around it, takes at most half as long again as the edited file's alone: the look uses its
/// window whole, a check it cuts short ending with it), within `configured`
/// (`dependent_files_wait_ms`).
pub(crate) fn wait_before_later(answered: Duration, configured: Duration) -> Duration {
    (answered / 3).min(configured)
}

/// How many edits' answers are kept for the searches after them.
const KEPT_ANSWERS: usize = 4;

/// The calls from outside (a check, a feedback), counted: a search after an answer stops
/// when one comes, so that it never holds up what an agent asks next.
#[derive(Debug, Default)]
pub(crate) struct Calls {
    count: AtomicU64,
    came: Notify,
}

impl Calls {
    /// Notes that a call came.
    pub(crate) fn came(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.came.notify_waiters();
    }

    /// How many came so far.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Done once the count is other than `at`.
    pub(crate) async fn after(&self, at: u64) {
        loop {
            let came = self.came.notified();
            if self.count() != at {
                return;
            }
            came.await;
        }
    }
}

/// What an edit's feedback answered, for the search after it.
#[derive(Debug, Clone)]
pub(crate) struct Answered {
    /// The edited file.
    pub path: PathBuf,
    /// The hash of the edit's text.
    pub after: u64,
    /// The texts from before the edit and after it, when its importers were searched.
    pub texts: Option<(Arc<str>, Arc<str>)>,
    /// The edited file's diagnostics.
    pub errors: Vec<Diagnostic>,
    /// The texts state the importers' answers from before the edit were kept at, if any.
    pub known_from: Option<u64>,
    /// The texts state when the feedback was answered.
    pub state: u64,
    /// The other files the answer named.
    pub named: HashSet<String>,
    /// The importers it did not check.
    pub unsearched: Unsearched,
    /// The count of calls from outside when it was answered: one since, and the search after
    /// it does not start, or stops.
    pub calls: u64,
    /// Whether a search after it was started already (one per answer: a second would tell the
    /// model the same again).
    pub taken: bool,
    /// Whether that search is under way.
    pub running: bool,
    /// Whether that search told all it should: what the edit broke in the importers left, or
    /// which of them it could not check.
    pub finished: bool,
}

/// How long a feedback waits for the search after the previous answer to end (it stops at
/// once when the feedback comes), before it says whether that search finished.
const END_WAIT: Duration = Duration::from_secs(2);

/// The last few edits' answers.
pub(crate) type Answers = watch::Sender<VecDeque<Answered>>;

impl Squiggle {
    /// Keeps what an edit's feedback answered, for the search after it.
    pub(crate) fn keep_answered(&self, answered: Answered) {
        self.inner.answered.send_modify(|kept| {
            kept.retain(|kept| kept.path != answered.path);
            kept.push_back(answered);
            if kept.len() > KEPT_ANSWERS {
                kept.pop_front();
            }
        });
    }

    /// The errors the last edit of `path` (the file holds its text) caused in the files that
    /// import it that its feedback did not check in time, found by going on with them after
    /// its answer: the text to tell the model, or `None` when there is nothing to tell. It
    /// waits for that answer first (given by a feedback at the same time, up to 20 s), and
    /// says nothing when the answer left no importer unchecked, when the servers were handed
    /// another text since, or when a call to this runtime came while it searched (it starts
    /// checks for 20 s).
    pub async fn feedback_later(&self, path: impl AsRef<Path>) -> Option<String> {
        let (located, _) = self.locate(path.as_ref());
        let text = self.text_of(&located, None).await.ok()?;
        let after = disk_stamps::hash_of(&text);
        let answered = self.answered_for(&located, after).await?;
        // Under way until it ends, or its caller gives up on it (the hook's process killed).
        let mut running = Running {
            squiggle: self,
            path: &located,
            after,
            finished: false,
        };
        let (told, finished) = self.search_later(&located, &answered).await;
        running.finished = finished;
        told
    }

    /// The search after `answered`, for [`Squiggle::feedback_later`]: what to tell, and
    /// whether it finished (else the next feedback says so).
    async fn search_later(&self, located: &Path, answered: &Answered) -> (Option<String>, bool) {
        let unsearched = answered.unsearched;
        if !unsearched.any() || unsearched.before_unknown {
            return (None, true);
        }
        let Some(told) = self.search_later_in(located, answered).await else {
            return (None, false);
        };
        (told, true)
    }

    /// The search after `answered`: `None` when it could not finish (the texts changed, a
    /// call came), else what to tell, if anything.
    async fn search_later_in(&self, located: &Path, answered: &Answered) -> Option<Option<String>> {
        let located = located.to_path_buf();
        let (before, after) = answered.texts.clone()?;
        // The edit's text handed back after the feedback's look with the text from before.
        self.restored().await;
        if self.texts_state() != answered.state {
            tracing::debug!("later: not begun, another text was handed since the answer");
            return None;
        }
        let window = Window::of(LATER_WAIT).until_called(self.inner.calls.clone(), answered.calls);
        if window.called() {
            tracing::debug!("later: not begun, a call came since the answer");
            return None;
        }
        let window_end = window.clone();
        let searched = self
            .search_importers(
                &located,
                (&before, &after),
                &answered.errors,
                answered.known_from,
                window.clone(),
            )
            .await;
        let found = reach::Found {
            importers: &searched.importers,
            after: &searched.after,
            known: searched.known.clone(),
            opened: searched.opened.clone(),
        };
        let [back, again] = self.tickets(&located);
        // The look with the text from before has a window of its own: an importer the search
        // found with errors is named, or not, only once its errors from before are known (a
        // search that took pyright 13 s for 7 of isort's importers left none of the time).
        let window = Window::of(LATER_WAIT).until_called(self.inner.calls.clone(), answered.calls);
        let answers_before =
            (self.answers_before(&located, (before, after), found, (back, again), window)).await;
        let shown = &self.inner.config.include_severities;
        let caused: BTreeMap<String, Vec<Diagnostic>> =
            reach::caused_in_importers(&answers_before, &searched.after)
                .into_iter()
                .filter(|(file, _)| !answered.named.contains(file))
                .map(|(file, list)| {
                    let errors = list.into_iter().filter(|d| shown.contains(&d.severity));
                    (file, errors.collect::<Vec<_>>())
                })
                .filter(|(_, list)| !list.is_empty())
                .collect();
        tracing::debug!(
            file = %located.display(),
            importers = searched.importers.len(),
            answered = searched.after.iter().flatten().count(),
            caused = caused.len(),
            "later: the search after an edit's answer"
        );
        // The look with the text from before hands the edit's back: the same texts again,
        // once that is answered.
        self.restored().await;
        if window_end.called() || self.texts_state() != answered.state {
            tracing::debug!(
                called = window_end.called(),
                "later: not finished, a call came or another text was handed"
            );
            return None;
        }
        // Those it had no time for either (20 s) are said.
        let left = self.unsearched(&searched, &answers_before, false).await;
        let file = self.relative_path(&located);
        let left = unsearched_section(&file, &left);
        Some(match (caused.is_empty(), left.is_empty()) {
            (true, true) => None,
            (true, false) => Some(left.trim_start().to_string() + "\n"),
            (false, _) => Some(render_later(&file, &caused, &self.inner.config.caps()) + &left),
        })
    }

    /// The searches after earlier answers that did not finish (stopped by this feedback or an
    /// earlier call, or by another text handed, or never begun), once each has ended (at most
    /// 2 s): a line for each, and they are forgotten.
    pub(crate) async fn unfinished_later(&self) -> String {
        let mut answers = self.inner.answered.subscribe();
        let ended = answers.wait_for(|kept| kept.iter().all(|kept| !kept.running));
        drop(tokio::time::timeout(END_WAIT, ended).await);
        let mut left = Vec::new();
        self.inner.answered.send_modify(|kept| {
            kept.retain(|kept| {
                let owed = kept.unsearched.later
                    && kept.unsearched.any()
                    && !kept.unsearched.before_unknown;
                match owed && !kept.finished && !kept.running {
                    true => {
                        left.push((kept.path.clone(), kept.unsearched));
                        false
                    }
                    false => true,
                }
            });
        });
        (left.iter())
            .map(|(path, unsearched)| unfinished_section(&self.relative_path(path), unsearched))
            .collect()
    }

    /// The answer kept for the edit of `path` to the text with hash `after`, waited for, and
    /// taken: `None` when a search after it was started already.
    async fn answered_for(&self, path: &Path, after: u64) -> Option<Answered> {
        let mut answers = self.inner.answered.subscribe();
        let found = answers.wait_for(|kept| {
            (kept.iter()).any(|answered| answered.path == path && answered.after == after)
        });
        drop(tokio::time::timeout(ANSWER_WAIT, found).await.ok()?.ok()?);
        let mut taken = None;
        self.inner.answered.send_if_modified(|kept| {
            let last = kept.iter_mut().rev().find(|answered| answered.path == path);
            if let Some(last) = last.filter(|last| last.after == after && !last.taken) {
                last.taken = true;
                last.running = true;
                taken = Some(last.clone());
            }
            false
        });
        taken
    }
}

/// A search after an answer under way: when it ends, or is dropped, its answer says whether
/// it finished.
struct Running<'a> {
    squiggle: &'a Squiggle,
    path: &'a Path,
    after: u64,
    finished: bool,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let (path, after, finished) = (self.path, self.after, self.finished);
        self.squiggle.inner.answered.send_modify(|kept| {
            let kept = (kept.iter_mut()).find(|kept| kept.path == path && kept.after == after);
            if let Some(kept) = kept {
                kept.running = false;
                kept.finished = finished;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_look_before_a_later_search_is_a_third_of_the_answer_within_the_configured_time() {
        let ms = Duration::from_millis;
        // (the edit's own answer, the configured time, the look)
        let table = [
            (ms(60), ms(750), ms(20)),
            (ms(0), ms(750), ms(0)),
            (ms(3000), ms(750), ms(750)),
            (ms(600), ms(0), ms(0)),
        ];
        for (answered, configured, look) in table {
            assert_eq!(
                wait_before_later(answered, configured),
                look,
                "{answered:?} {configured:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_call_ends_the_wait_for_one() {
        let calls = Calls::default();
        let at = calls.count();
        calls.came();
        // Came before the wait began: no wait.
        tokio::time::timeout(Duration::from_secs(5), calls.after(at))
            .await
            .expect("the call that came before is seen");
        let at = calls.count();
        let waiting = calls.after(at);
        tokio::pin!(waiting);
        assert!(futures::poll!(&mut waiting).is_pending(), "no call yet");
        calls.came();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the call ends the wait");
    }
}
