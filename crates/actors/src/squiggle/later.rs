//! The search that goes on after an edit's answer. In a runtime that lives on after its answers
//! (the daemon, `serve`, `mcp`: see [`Squiggle::search_after_answers`]), an edit's feedback
//! looks at the files that import the edited one only briefly, so that the edited file's verdict
//! comes at its own speed, and says how many it did not check; the runtime then goes on with
//! them in a task of its own, for as long as nothing else is asked of it, and keeps the errors
//! the edit caused there that the answer did not name. They are told once: by Claude Code's
//! background hook ([`Squiggle::feedback_later`], `asyncRewake`), which wakes the model, or
//! else with the next feedback of any door (`LSP errors your earlier edit of a.ts caused in
//! other files:`), and never once the edited file or that other file was handed another text.
//!
//! What it finds holds for the texts the servers hold when it ends: it keeps nothing if any
//! text was handed to the servers after the edit's answer (another edit, a fix); the next
//! feedback then says it did not finish. A call that came while it searched (one that hands
//! no other text: a read, a question, a hook on an unchanged file) stops it, and it keeps what
//! it found before, saying which importers it had no time for.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use squiggle_protocol::{render_earlier, render_later, unfinished_section, Diagnostic, Unsearched};
use tokio::sync::watch;

use super::reach::{self, Window};
use super::{disk_stamps, Squiggle};
use crate::events::LspEvent;
use crate::feedback::Earlier;
/// How long the search after an answer starts checks for (the last begins before two thirds of
/// it; a check begun runs to its end, bounded by its own deadlines), and then its look with the
/// text from before at the importers it found with errors.
const LATER_WAIT: Duration = Duration::from_secs(20);

/// How long [`Squiggle::feedback_later`] waits for the edit's answer (the edit's own hook runs
/// at the same time, and gives it; a daemon gives an answer a minute at most) and the end of
/// the search after it (two windows of [`LATER_WAIT`], and the checks the first began).
const LATER_END_WAIT: Duration = Duration::from_secs(55);

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
    /// Whether the search after it was started already (one per answer: a second would tell
    /// the model the same again).
    pub taken: bool,
    /// Whether that search is under way.
    pub running: bool,
    /// What it found, once it finished (none when it did not: the next feedback says so).
    pub found: Option<Found>,
    /// Whether what it had to say was said (by [`Squiggle::feedback_later`] or a feedback).
    pub told: bool,
}

impl Answered {
    /// Whether a search goes on after this answer: it left importers unchecked, for the search
    /// after it, and knew the edit's text from before (else none can tell what it caused).
    fn owed(&self) -> bool {
        let unsearched = &self.unsearched;
        unsearched.later && unsearched.any() && !unsearched.before_unknown
    }
}

/// What a search after an answer found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Found {
    /// The errors the edit caused in the importers the answer did not name (relative paths).
    pub caused: BTreeMap<String, Vec<Diagnostic>>,
    /// Each of those importers' count of hand-overs when the search ended (see
    /// [`super::handed::Handed::changes`]): another since, and its errors are not told.
    pub changes: BTreeMap<String, u64>,
    /// The importers it had no time for.
    pub left: Unsearched,
}

/// How long a feedback waits for the search after the previous answer to end (it stops at
/// once when the feedback comes), before it says whether that search finished.
const END_WAIT: Duration = Duration::from_secs(2);

/// The last few edits' answers.
pub(crate) type Answers = watch::Sender<VecDeque<Answered>>;

/// What the searches after earlier answers have for the next feedback.
#[derive(Debug, Default)]
pub(crate) struct EarlierNews {
    /// The text: what the earlier edits caused in other files, and the searches that did not
    /// finish or had no time for some importers.
    pub text: String,
    /// What the earlier edits caused, by edit.
    pub earlier: Vec<Earlier>,
    /// The searches that did not finish or had no time for some importers: the edited file
    /// and the importers left (the text's lines for them, as [`unfinished_section`] says).
    pub unfinished: Vec<(String, Unsearched)>,
}

impl Squiggle {
    /// Keeps what an edit's feedback answered, for the search after it, and starts that search
    /// when the answer owes one.
    pub(crate) fn keep_answered(&self, answered: Answered) {
        let search = answered
            .owed()
            .then(|| (answered.path.clone(), answered.after));
        self.inner.answered.send_modify(|kept| {
            kept.retain(|kept| kept.path != answered.path);
            kept.push_back(answered);
            if kept.len() > KEPT_ANSWERS {
                kept.pop_front();
            }
        });
        if let Some((path, after)) = search {
            let squiggle = self.clone();
            tokio::spawn(async move { squiggle.search_after(&path, after).await });
        }
    }

    /// The search after the answer kept for the edit of `path` to the text with hash `after`:
    /// what it finds is kept with that answer, for [`Squiggle::feedback_later`] or the next
    /// feedback to tell.
    async fn search_after(&self, path: &Path, after: u64) {
        let Some(answered) = self.take_answered(path, after) else {
            return;
        };
        // Under way until it ends, or the runtime stops it.
        let mut running = Running {
            squiggle: self,
            path,
            after,
            found: None,
        };
        let found = self.search_later_in(path, &answered).await;
        if let Some(found) = found.as_ref().filter(|found| !found.caused.is_empty()) {
            tracing::info!(
                file = %path.display(),
                files = found.caused.len(),
                "the search after an edit's answer found errors the edit caused in other files"
            );
            let _ = self.inner.events.send(LspEvent::Caused {
                edited: self.relative_path(path),
                files: found.caused.clone(),
            });
        }
        running.found = found;
    }

    /// The errors the last edit of `path` (the file holds its text) caused in the files that
    /// import it that its feedback did not check in time, found by the search after its
    /// answer: the text to tell the model, or `None` when there is nothing to tell (what it had
    /// no time for is said with the next feedback). It waits for that answer (given by a
    /// feedback at the same time) and the search's end, 55 s at most; what it tells, the next
    /// feedback does not.
    pub async fn feedback_later(&self, path: impl AsRef<Path>) -> Option<String> {
        let (located, file) = self.locate(path.as_ref());
        let text = self.text_of(&located, None).await.ok()?;
        let after = disk_stamps::hash_of(&text);
        let mut answers = self.inner.answered.subscribe();
        let ended = answers.wait_for(|kept| {
            (kept.iter()).any(|answered| {
                answered.path == located
                    && answered.after == after
                    && (!answered.owed() || answered.told || (answered.taken && !answered.running))
            })
        });
        drop(
            tokio::time::timeout(LATER_END_WAIT, ended)
                .await
                .ok()?
                .ok()?,
        );
        let answered = (self.inner.answered.borrow().iter())
            .find(|answered| answered.path == located && answered.after == after)
            .cloned()?;
        let caused = self.still_caused(&answered).await;
        if caused.is_empty() {
            return None;
        }
        self.told(&[(located, after)]);
        Some(render_later(&file, &caused, &self.inner.config.caps()))
    }

    /// The search after `answered`: `None` when it could not finish (the texts changed, a
    /// call came), else what it found.
    async fn search_later_in(&self, located: &Path, answered: &Answered) -> Option<Found> {
        let located = located.to_path_buf();
        let (before, after) = answered.texts.clone()?;
        // The edit's text handed back after the feedback's look with the text from before.
        self.restored().await;
        if self.texts_state().await != answered.state {
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
        // once that is answered. What it found holds for the texts of the answer while the
        // servers hold those: a call that came stopped the rest (said below as not checked),
        // not what was found before it.
        self.restored().await;
        if self.texts_state().await != answered.state {
            tracing::debug!("later: not finished, another text was handed");
            return None;
        }
        // Those it had no time for (20 s, or a call came) are said.
        let mut left = self.unsearched(&searched, &answers_before, false).await;
        if window_end.called() {
            tracing::debug!("later: stopped by a call; what it found before is kept");
            // Stopped before it found them all: those it never came to are not known either,
            // however many of them the answer left to it.
            let known = searched.found.len().saturating_sub(left.files);
            left.files = (left.files).max(answered.unsearched.files.saturating_sub(known));
            left.more |= answered.unsearched.more;
        }
        let root = self.inner.workspace_root.clone();
        let files: Vec<String> = caused.keys().cloned().collect();
        let changes = (self.inner.documents)
            .with(move |documents| {
                (files.into_iter())
                    .map(|file| {
                        let changes = documents.handed.changes(&root.join(&file));
                        (file, changes)
                    })
                    .collect()
            })
            .await;
        Some(Found {
            caused,
            changes,
            left,
        })
    }

    /// What the searches after earlier answers found and nobody told yet, as the text a tool
    /// result appends (empty when there is nothing): the errors their edits caused in other
    /// files that still stand, and a line for each search that did not finish or had no time
    /// for some importers. Told once, here or in the next [`Squiggle::feedback`]; a search
    /// under way is not waited for (it tells later). For a host's tool results other than an
    /// edit's (MCP's `lsp_hover`, say), so that the agent hears of it with the next answer it
    /// gets.
    pub async fn earlier_caused(&self) -> String {
        self.earlier_news(false).await.text
    }

    /// What the searches after earlier answers have to tell, once each has ended when `wait`
    /// (a feedback stops them; at most 2 s): the errors their edits caused in other files that
    /// are still so (see [`Squiggle::still_caused`]), and a line for each search that did not
    /// finish (stopped by a call, by another text handed, or never begun) or had no time for
    /// some importers. Each is told once.
    pub(crate) async fn earlier_news(&self, wait: bool) -> EarlierNews {
        if wait {
            let mut answers = self.inner.answered.subscribe();
            let ended = answers.wait_for(|kept| kept.iter().all(|kept| !kept.running));
            drop(tokio::time::timeout(END_WAIT, ended).await);
        }
        let kept: Vec<Answered> = self.inner.answered.borrow().iter().cloned().collect();
        let mut news = EarlierNews::default();
        let mut told = Vec::new();
        let caps = self.inner.config.caps();
        for answered in kept {
            if !answered.owed() || answered.running || answered.told {
                continue;
            }
            let file = self.relative_path(&answered.path);
            let left = match &answered.found {
                None => answered.unsearched,
                Some(found) => {
                    let caused = self.still_caused(&answered).await;
                    news.text.push_str(&render_earlier(&file, &caused, &caps));
                    if !caused.is_empty() {
                        news.earlier.push(Earlier {
                            edited: file.clone(),
                            caused,
                        });
                    }
                    found.left
                }
            };
            news.text.push_str(&unfinished_section(&file, &left));
            if left.any() {
                news.unfinished.push((file, left));
            }
            told.push((answered.path, answered.after));
        }
        self.told(&told);
        news
    }

    /// What the search after `answered` found that still holds: nothing when it was told, or
    /// the edited file was handed another text since; of each other file, nothing when that
    /// file was handed another text since the search ended. (The store is no judge: a pulled
    /// server's list for an importer is its answer to the look with the text from before.)
    async fn still_caused(&self, answered: &Answered) -> BTreeMap<String, Vec<Diagnostic>> {
        let Some(found) = answered.found.clone().filter(|_| !answered.told) else {
            return BTreeMap::new();
        };
        let root = self.inner.workspace_root.clone();
        let (edited, after) = (answered.path.clone(), answered.after);
        (self.inner.documents)
            .with(move |documents| {
                let handed = &documents.handed;
                if handed.last(&edited) != Some(after) {
                    return BTreeMap::new();
                }
                let Found {
                    caused, changes, ..
                } = found;
                (caused.into_iter())
                    .filter(|(file, _)| {
                        let then = changes.get(file).copied();
                        then == Some(handed.changes(&root.join(file)))
                    })
                    .collect()
            })
            .await
    }

    /// Marks the answers kept for these edits (path, hash of the edit's text) as told.
    fn told(&self, edits: &[(PathBuf, u64)]) {
        if edits.is_empty() {
            return;
        }
        self.inner.answered.send_modify(|kept| {
            for answered in kept.iter_mut() {
                if edits.contains(&(answered.path.clone(), answered.after)) {
                    answered.told = true;
                }
            }
        });
    }

    /// The answer kept for the edit of `path` to the text with hash `after`, taken for the
    /// search after it: `None` when a search after it was started already, or it is gone.
    fn take_answered(&self, path: &Path, after: u64) -> Option<Answered> {
        let mut taken = None;
        self.inner.answered.send_if_modified(|kept| {
            let last = kept.iter_mut().rev().find(|answered| answered.path == path);
            let free = |last: &&mut Answered| last.after == after && !last.taken && !last.told;
            if let Some(last) = last.filter(free) {
                last.taken = true;
                last.running = true;
                taken = Some(last.clone());
                return true;
            }
            false
        });
        taken
    }
}

/// A search after an answer under way: when it ends, or is dropped, its answer says whether
/// it finished, and what it found.
struct Running<'a> {
    squiggle: &'a Squiggle,
    path: &'a Path,
    after: u64,
    found: Option<Found>,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let (path, after, found) = (self.path, self.after, self.found.take());
        self.squiggle.inner.answered.send_modify(|kept| {
            let kept = (kept.iter_mut()).find(|kept| kept.path == path && kept.after == after);
            if let Some(kept) = kept {
                kept.running = false;
                kept.found = found;
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
}
