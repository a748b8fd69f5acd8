//! The workspace actor: the one owner of what the runtime knows of each document. The text
//! its servers were handed, its disk stamp, the baseline last shown, the check of it under
//! way, an importer's kept answers: all of it is the state of one task, which runs the
//! requests sent to it one at a time, in the order they were sent. A request reads and
//! changes several of these facts at once (a hand-over notes the text held, the texts' state
//! and the stamp together), so no caller ever sees half of a change, and no lock is held
//! across an await: requests are plain functions of the state.
//!
//! The task lives exactly as long as its handles: it ends when the last [`Workspace`] (the
//! last clone of the `Squiggle` that owns it) is dropped.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use squiggle_protocol::{Baseline, DeltaKey};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::answer_times::AnswerTimes;
use super::disk_stamps::{Stamp, Stamps};
use super::handed::Handed;
use super::reach::SyncedOver;
use super::turns::{Numbers, Turns};
use super::UnderWay;
use crate::check::CheckResult;
use crate::key::ServerKey;

/// A request: a function the actor runs on the documents' state, in mailbox order.
type Request = Box<dyn FnOnce(&mut Documents) + Send>;

/// Everything the runtime knows of the workspace's documents, owned by the workspace actor.
#[derive(Debug, Default)]
pub(crate) struct Documents {
    /// The text the servers were last handed of each open document.
    pub held: HashMap<PathBuf, Arc<str>>,
    /// The texts the servers were handed, as one state: the other files' answers given at
    /// one state hold while it is the state again.
    pub handed: Handed,
    /// What was last synced of each document read from the disk, to find those changed on
    /// disk since.
    pub stamps: Stamps,
    /// Each file's diagnostics as last shown by a check or a feedback, to mark what the next
    /// edit's feedback finds new.
    pub shown: HashMap<String, Baseline>,
    /// Each file's errors at the previous `new_errors` call (`--format delta`).
    pub delta_baselines: HashMap<String, HashSet<DeltaKey>>,
    /// Each importer's last final answers in a feedback (the newest last, a few), with the
    /// [`Documents::handed`] state each was given at: still its answer at that state.
    pub importer_answers: HashMap<PathBuf, Vec<(u64, CheckResult)>>,
    /// The importers a server took too long over to look at within an edit's search, or closed
    /// as costly to check, and when: not searched again for a while.
    pub slow_importers: HashMap<PathBuf, Instant>,
    /// The store as it was before the last few documents changed on disk were synced (the
    /// watcher saw an agent's write before its hook came), with the text each replaced.
    pub synced_over: SyncedOver,
    /// The store as it was right after the last few files no server held were written on
    /// disk, with the text written.
    pub written_over: SyncedOver,
    /// The checks under way, by file and whether the text is saved, with their text.
    pub in_flight: HashMap<(PathBuf, bool), UnderWay>,
    /// Each document's checks in the order they were asked for (see [`super::turns`]).
    pub turns: Turns<oneshot::Sender<()>>,
    /// How each server answered this session's checks (not a document's fact: kept here, as
    /// every check's outcome passes by).
    pub answer_times: HashMap<ServerKey, AnswerTimes>,
}

impl Documents {
    /// Notes what a check handed to the servers of `path` (when any server took it), and the
    /// disk's stamp when the text is what the disk holds: one change, as the next request sees
    /// it.
    pub fn handed_over(
        &mut self,
        path: &Path,
        text: &Arc<str>,
        any_took_it: bool,
        stamp: Option<Stamp>,
    ) {
        if any_took_it {
            self.held.insert(path.to_path_buf(), text.clone());
            // Against the text last handed over, open or since closed: a file reopened with
            // another text changed too.
            (self.handed).hand(path, super::disk_stamps::hash_of(text));
        }
        // A text that is not saved must never be replaced by the disk's.
        match stamp {
            Some(stamp) => self.stamps.insert(path.to_path_buf(), stamp),
            None => self.stamps.remove(path),
        };
    }

    /// Forgets the text and stamp of a document its servers closed.
    pub fn closed(&mut self, path: &Path) {
        self.stamps.remove(path);
        self.held.remove(path);
    }
}

/// The handle of the workspace actor; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    mailbox: mpsc::UnboundedSender<Request>,
    /// The numbers of the tickets for turns taken through this handle.
    pub(super) numbers: Arc<Numbers>,
}

impl Workspace {
    /// Starts the actor, with no document known.
    pub fn spawn() -> Self {
        let (mailbox, mut requests) = mpsc::unbounded_channel::<Request>();
        tokio::spawn(async move {
            let mut documents = Documents::default();
            while let Some(request) = requests.recv().await {
                request(&mut documents);
            }
        });
        Self {
            mailbox,
            numbers: Arc::default(),
        }
    }

    /// Runs `request` on the documents' state after every request sent before it, and returns
    /// its answer. A request that panics panics its caller, and the actor goes on with the
    /// state as the request left it (as a poisoned lock's data is carried on with).
    pub async fn with<R: Send + 'static>(
        &self,
        request: impl FnOnce(&mut Documents) -> R + Send + 'static,
    ) -> R {
        let (reply, answer) = oneshot::channel();
        let run: Request = Box::new(move |documents| {
            let answer = std::panic::catch_unwind(AssertUnwindSafe(|| request(documents)));
            // The caller may have given up waiting.
            let _ = reply.send(answer);
        });
        if self.mailbox.send(run).is_ok() {
            match answer.await {
                Ok(Ok(answer)) => return answer,
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(_) => {}
            }
        }
        // The actor's task is gone only when the runtime drops its tasks (it shuts down), and
        // this caller's with it: there is no answer to wait for.
        std::future::pending().await
    }

    /// Sends `request` without waiting for it: it runs after every request sent before it.
    pub fn tell(&self, request: impl FnOnce(&mut Documents) + Send + 'static) {
        let _ = self.mailbox.send(Box::new(request));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn requests_run_in_the_order_they_were_sent_told_or_asked() {
        let workspace = Workspace::spawn();
        let path = PathBuf::from("/w/a.ts");
        // (what is sent, told without waiting or asked)
        for (n, told) in [(1u64, true), (2, false), (3, true), (4, true)] {
            let path = path.clone();
            let hand = move |documents: &mut Documents| {
                documents.handed.hand(&path, n);
            };
            match told {
                true => workspace.tell(hand),
                false => workspace.with(hand).await,
            }
        }
        let changes = workspace
            .with(move |documents| documents.handed.changes(&path))
            .await;
        assert_eq!(changes, 4, "each of the four hand-overs, in turn");
    }

    #[tokio::test]
    async fn a_request_that_panics_panics_its_caller_and_the_actor_goes_on() {
        let workspace = Workspace::spawn();
        let path = PathBuf::from("/w/a.ts");
        let held = path.clone();
        workspace
            .with(move |documents| {
                documents.held.insert(held, Arc::from("x"));
            })
            .await;
        let caller = tokio::spawn({
            let workspace = workspace.clone();
            async move { workspace.with(|_| panic!("a bug in a request")).await }
        });
        assert!(caller.await.unwrap_err().is_panic());
        let held = workspace
            .with(move |documents| documents.held.get(&path).cloned())
            .await;
        assert_eq!(held.as_deref(), Some("x"), "the state is kept");
    }

    #[tokio::test]
    async fn a_hand_over_that_no_server_took_keeps_only_the_stamp() {
        let workspace = Workspace::spawn();
        let path = PathBuf::from("/w/a.ts");
        let stamp = Stamp {
            len: 1,
            modified: None,
            read_at: std::time::SystemTime::now(),
            hash: 7,
        };
        let facts = {
            let path = path.clone();
            move |documents: &mut Documents| {
                documents.handed_over(&path, &Arc::from("x"), false, Some(stamp));
                let facts = (
                    documents.held.contains_key(&path),
                    documents.handed.changes(&path),
                    documents.stamps.contains_key(&path),
                );
                documents.handed_over(&path, &Arc::from("y"), true, None);
                let after = (
                    documents.held.contains_key(&path),
                    documents.handed.changes(&path),
                    documents.stamps.contains_key(&path),
                );
                (facts, after)
            }
        };
        let (not_taken, taken) = workspace.with(facts).await;
        assert_eq!(not_taken, (false, 0, true));
        assert_eq!(taken, (true, 1, false), "an unsaved text drops the stamp");
    }
}
