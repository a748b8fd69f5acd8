//! The diagnostics actor: the one store of what every server last published, the epoch that
//! advances on every change, and the waits for final results. The actor is a shell: the store
//! and its waits are the pure [`store`] (which asks [`completion`] when a result is final); the
//! actor hands it each message with the time, then does what it answers: sends the replies,
//! announces changed files, and keeps the one timer task.

pub mod completion;
pub mod store;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use ractor::concurrency::JoinHandle;
use ractor::{Actor, ActorProcessingErr, ActorRef, MessagingErr, RpcReplyPort};
use squiggle_protocol::{paths, Diagnostic};
use tokio::time::Instant;

use crate::events::{Events, LspEvent};
use crate::key::ServerKey;
use completion::Traits;
use store::{Answer, Delivered, Steps, Store, WaiterId};
pub use store::{Freshness, List, Snapshot, Source};

/// Messages of the diagnostics actor.
#[derive(Debug)]
pub enum DiagnosticsMsg {
    /// A server published diagnostics for a file (replacing what it published before), for
    /// the document version it names, if it names one; `ready` is false for the answer to a
    /// pull asked while the server was still loading its project (never final).
    Publish {
        key: ServerKey,
        path: PathBuf,
        version: Option<i32>,
        source: Source,
        ready: bool,
        diagnostics: Vec<Diagnostic>,
    },
    /// A pull was answered `unchanged`: what the server last answered for the file holds, now
    /// for `version` (an answer never kept counts as empty).
    StillPulled {
        key: ServerKey,
        path: PathBuf,
        version: i32,
        ready: bool,
    },
    /// A server's build check on save (rust-analyzer's `cargo check`) began, under this title.
    CheckBegan { key: ServerKey, title: String },
    /// The server's last running build check ended: what it publishes follows right after.
    CheckEnded { key: ServerKey },
    /// A pull for `version` of a file failed with the server's error: a wait on it with
    /// nothing else delivered ends with that error.
    PullFailed {
        key: ServerKey,
        path: PathBuf,
        version: i32,
        reason: String,
    },
    /// A server started or finished work (work-done progress, or not quiescent): while it
    /// works, its results do not count as settled.
    Busy { key: ServerKey, busy: bool },
    /// A server (re)starts: what it publishes counts again. With `one_list`, what it pushes
    /// and what is pulled from it replace each other (the latest holds): its publishes say no
    /// version, so a pushed list and a pulled one may be for different texts.
    ServerStarted { key: ServerKey, one_list: bool },
    /// A server is gone: forget what it published and end the waits on it.
    ServerGone { key: ServerKey },
    /// A host's check of a file was answered: the epoch moves on (BR-83).
    CheckAnswered,
    /// The current epoch.
    Epoch(RpcReplyPort<u64>),
    /// Wait until what `key` delivers for `version` of `path` is final (the completion model
    /// decides, from the server's `traits`), or until `deadline`.
    WaitFresh {
        key: ServerKey,
        path: PathBuf,
        version: i32,
        traits: Traits,
        deadline: Instant,
        reply: RpcReplyPort<Freshness>,
    },
    /// Every file with diagnostics, once the epoch passed `after` and every server stayed quiet
    /// for the settle time, or at `deadline` with what is known then.
    AllAfter {
        after: u64,
        deadline: Instant,
        reply: RpcReplyPort<Snapshot>,
    },
    /// Every file with diagnostics, now.
    All(RpcReplyPort<Snapshot>),
    /// Timer: look again at the waits whose time came.
    Recheck,
}

/// The diagnostics actor.
#[derive(Debug)]
pub struct DiagnosticsActor;

/// What the diagnostics actor is started with.
#[derive(Debug)]
pub struct DiagnosticsArgs {
    /// How long a result must stay unchanged to count as settled.
    pub settle: Duration,
    /// The workspace root, resolved, for the relative paths of events.
    pub workspace_root: PathBuf,
    /// Where changed diagnostics are announced.
    pub events: Events,
}

/// Where the answer to one wait goes.
#[derive(Debug)]
enum Reply {
    File(RpcReplyPort<Freshness>),
    All(RpcReplyPort<Snapshot>),
}

/// The task that sends the actor its next `Recheck`.
type RecheckTask = JoinHandle<Result<(), MessagingErr<DiagnosticsMsg>>>;

/// The state of the diagnostics actor: the store, and what it needs to act on its steps.
#[derive(Debug)]
pub struct DiagnosticsState {
    store: Store,
    /// Where each open wait's answer goes.
    replies: HashMap<WaiterId, Reply>,
    workspace_root: PathBuf,
    events: Events,
    /// The task that sends `Recheck` when the store's one timer comes.
    timer: Option<RecheckTask>,
}

impl Actor for DiagnosticsActor {
    type Msg = DiagnosticsMsg;
    type State = DiagnosticsState;
    type Arguments = DiagnosticsArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: DiagnosticsArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let DiagnosticsArgs {
            settle,
            workspace_root,
            events,
        } = args;
        Ok(DiagnosticsState {
            store: Store::new(settle),
            replies: HashMap::new(),
            workspace_root,
            events,
            timer: None,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let now = Instant::now();
        let store = &mut state.store;
        let steps = match msg {
            DiagnosticsMsg::Publish {
                key,
                path,
                version,
                source,
                ready,
                diagnostics,
            } => {
                let delivered = Delivered {
                    version,
                    source,
                    ready,
                };
                store.deliver(key, path, delivered, Some(diagnostics), now)
            }
            DiagnosticsMsg::StillPulled {
                key,
                path,
                version,
                ready,
            } => {
                let delivered = Delivered {
                    version: Some(version),
                    source: Source::Pull,
                    ready,
                };
                store.deliver(key, path, delivered, None, now)
            }
            DiagnosticsMsg::CheckBegan { key, title } => store.check_began(key, title, now),
            DiagnosticsMsg::CheckEnded { key } => store.check_ended(key, now),
            DiagnosticsMsg::PullFailed {
                key,
                path,
                version,
                reason,
            } => store.pull_failed(key, path, version, reason, now),
            DiagnosticsMsg::ServerGone { key } => store.server_gone(key),
            DiagnosticsMsg::CheckAnswered => store.check_answered(now),
            DiagnosticsMsg::Busy { key, busy } => store.busy(key, busy, now),
            DiagnosticsMsg::ServerStarted { key, one_list } => {
                store.server_started(key, one_list);
                Steps::default()
            }
            DiagnosticsMsg::Epoch(reply) => {
                let _ = reply.send(store.epoch());
                Steps::default()
            }
            DiagnosticsMsg::WaitFresh {
                key,
                path,
                version,
                traits,
                deadline,
                reply,
            } => {
                let (id, steps) = store.wait_file(key, path, version, traits, deadline, now);
                state.replies.insert(id, Reply::File(reply));
                steps
            }
            DiagnosticsMsg::AllAfter {
                after,
                deadline,
                reply,
            } => {
                let (id, steps) = store.wait_all(after, deadline, now);
                state.replies.insert(id, Reply::All(reply));
                steps
            }
            DiagnosticsMsg::All(reply) => {
                let _ = reply.send(store.all());
                Steps::default()
            }
            DiagnosticsMsg::Recheck => {
                state.timer = None;
                store.timer_fired(now)
            }
        };
        state.take(&myself, steps);
        Ok(())
    }
}

impl DiagnosticsState {
    /// Does what the store said: announces the changed files, sends the answers, and moves
    /// the timer.
    fn take(&mut self, myself: &ActorRef<DiagnosticsMsg>, steps: Steps) {
        let Steps {
            changed,
            answers,
            arm,
        } = steps;
        if self.events.receiver_count() > 0 {
            for path in changed {
                let _ = self.events.send(LspEvent::Diagnostics {
                    path: paths::relative_to(&self.workspace_root, &path),
                    items: self.store.merged(&path),
                });
            }
        }
        for (id, answer) in answers {
            match (self.replies.remove(&id), answer) {
                (Some(Reply::File(reply)), Answer::File(freshness)) => {
                    let _ = reply.send(freshness);
                }
                (Some(Reply::All(reply)), Answer::All(snapshot)) => {
                    let _ = reply.send(snapshot);
                }
                _ => {} // The store answers each wait the way it was asked.
            }
        }
        if let Some(at) = arm {
            if let Some(task) = self.timer.take() {
                task.abort();
            }
            let wait = at.saturating_duration_since(Instant::now());
            self.timer = Some(myself.send_after(wait, || DiagnosticsMsg::Recheck));
        }
    }
}
