//! The diagnostics actor: the one store of what every server last published, the epoch that
//! advances on every change, and the waits for fresh results.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ractor::concurrency::JoinHandle;
use ractor::{Actor, ActorProcessingErr, ActorRef, MessagingErr, RpcReplyPort};
use squiggle_protocol::{merge, paths, Diagnostic};
use tokio::time::Instant;

use crate::events::{Events, LspEvent};
use crate::key::ServerKey;

/// Every file with diagnostics, merged across servers.
pub type Snapshot = BTreeMap<PathBuf, Vec<Diagnostic>>;

/// What one server delivered for one file, shared by the store and the checks that read it
/// (a check copies only the diagnostics its merge keeps).
pub type List = Arc<Vec<Diagnostic>>;

/// How a server delivered diagnostics: pushed (`publishDiagnostics`) or pulled
/// (`textDocument/diagnostic`); each is kept apart and merged when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// Published by the server.
    Push,
    /// Answered to a pull.
    Pull,
}

/// Messages of the diagnostics actor.
#[derive(Debug)]
pub enum DiagnosticsMsg {
    /// A server published diagnostics for a file (replacing what it published before), for
    /// the document version it names, if it names one.
    Publish {
        key: ServerKey,
        path: PathBuf,
        version: Option<i32>,
        source: Source,
        diagnostics: Vec<Diagnostic>,
    },
    /// A pull was answered `unchanged`: what the server last answered for the file holds, now
    /// for `version` (an answer never kept counts as empty).
    StillPulled {
        key: ServerKey,
        path: PathBuf,
        version: i32,
    },
    /// A server started or finished work (work-done progress, or not quiescent): while it
    /// works, its results do not count as settled.
    Busy { key: ServerKey, busy: bool },
    /// A server (re)starts: what it publishes counts again.
    ServerStarted { key: ServerKey },
    /// A server is gone: forget what it published and end the waits on it.
    ServerGone { key: ServerKey },
    /// The current epoch.
    Epoch(RpcReplyPort<u64>),
    /// Wait until `key` publishes for `path` (from now on, for at least `version` when the
    /// server names versions) and then stays quiet for the settle time, or until `deadline`.
    WaitFresh {
        key: ServerKey,
        path: PathBuf,
        version: i32,
        settle: Duration,
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

/// How a wait for fresh diagnostics ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// The server published for the file after the touch and then went quiet; this is what it
    /// published (its pushed and its pulled list).
    Fresh(Vec<List>),
    /// The server published for the file after the touch, but the deadline came while it was
    /// still working (or before its quiet time ended): what it had published by then, which
    /// may be incomplete.
    Unsettled(Vec<List>),
    /// The deadline passed before the server published for the file.
    TimedOut,
    /// The server went away during the wait.
    ServerGone,
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

/// What one server last published for one file.
#[derive(Debug)]
struct Published {
    diagnostics: List,
    version: Option<i32>,
    epoch: u64,
    at: Instant,
}

/// What a waiter waits for, and where its answer goes.
#[derive(Debug)]
enum Wait {
    /// One server's fresh result for one file.
    File {
        key: ServerKey,
        path: PathBuf,
        version: i32,
        /// The quiet time for this server.
        settle: Duration,
        reply: RpcReplyPort<Freshness>,
    },
    /// A quiet store after some change.
    All { reply: RpcReplyPort<Snapshot> },
}

/// One caller waiting.
#[derive(Debug)]
struct Waiter {
    wait: Wait,
    after: u64,
    deadline: Instant,
    /// When it is to be looked at again, if a look is due.
    recheck_at: Option<Instant>,
}

/// The task that sends the store its next `Recheck`.
type RecheckTask = JoinHandle<Result<(), MessagingErr<DiagnosticsMsg>>>;

/// The state of the diagnostics actor.
#[derive(Debug)]
pub struct Store {
    files: HashMap<PathBuf, HashMap<(ServerKey, Source), Published>>,
    /// Servers that are working (indexing, checking) right now.
    busy: HashSet<ServerKey>,
    /// When each server last stopped working: the quiet time counts from then too, since a
    /// server often sends more (a refresh, a last publish) right after.
    idle_since: HashMap<ServerKey, Instant>,
    workspace_root: PathBuf,
    events: Events,
    epoch: u64,
    /// When anything was last published.
    last_publish: Option<Instant>,
    settle: Duration,
    /// Servers that went away; late publishes from them are dropped.
    gone: HashSet<ServerKey>,
    waiters: HashMap<u64, Waiter>,
    /// The waiters for one file's result, by file: a publish looks only at these (and at the
    /// waits for a quiet store), not at every waiter.
    waiting_on: HashMap<PathBuf, Vec<u64>>,
    /// The waiters for a quiet store.
    waiting_on_all: Vec<u64>,
    next_waiter: u64,
    /// The one timer for every wait: when it fires, and the task that will send `Recheck`.
    timer: Option<(Instant, RecheckTask)>,
}

impl Actor for DiagnosticsActor {
    type Msg = DiagnosticsMsg;
    type State = Store;
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
        Ok(Store {
            files: HashMap::new(),
            busy: HashSet::new(),
            idle_since: HashMap::new(),
            workspace_root,
            events,
            epoch: 0,
            last_publish: None,
            settle,
            gone: HashSet::new(),
            waiters: HashMap::new(),
            waiting_on: HashMap::new(),
            waiting_on_all: Vec::new(),
            next_waiter: 0,
            timer: None,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        store: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            DiagnosticsMsg::Publish {
                key,
                path,
                version,
                source,
                diagnostics,
            } => store.record(&myself, key, path, version, source, Some(diagnostics)),
            DiagnosticsMsg::StillPulled { key, path, version } => {
                store.record(&myself, key, path, Some(version), Source::Pull, None);
            }
            DiagnosticsMsg::ServerGone { key } => {
                store.gone.insert(key.clone());
                store.busy.remove(&key);
                store.epoch += 1;
                let mut touched = Vec::new();
                for (path, published) in store.files.iter_mut() {
                    let before = published.len();
                    published.retain(|(k, _), _| *k != key);
                    if published.len() != before {
                        touched.push(path.clone());
                    }
                }
                for path in &touched {
                    store.announce(path);
                }
                store.files.retain(|_, p| !p.is_empty());
                let gone: Vec<u64> = store
                    .waiters
                    .iter()
                    .filter(|(_, w)| matches!(&w.wait, Wait::File { key: k, .. } if *k == key))
                    .map(|(id, _)| *id)
                    .collect();
                for id in gone {
                    if let Some(Waiter {
                        wait: Wait::File { reply, .. },
                        ..
                    }) = store.take_waiter(id)
                    {
                        let _ = reply.send(Freshness::ServerGone);
                    }
                }
            }
            DiagnosticsMsg::Busy { key, busy } => {
                if busy {
                    store.busy.insert(key);
                } else if store.busy.remove(&key) {
                    store.idle_since.insert(key, Instant::now());
                    let ids: Vec<u64> = store.waiters.keys().copied().collect();
                    for id in ids {
                        store.check(&myself, id);
                    }
                }
            }
            DiagnosticsMsg::ServerStarted { key } => {
                store.gone.remove(&key);
            }
            DiagnosticsMsg::Epoch(reply) => {
                let _ = reply.send(store.epoch);
            }
            DiagnosticsMsg::WaitFresh {
                key,
                path,
                version,
                settle,
                deadline,
                reply,
            } => {
                let after = store.epoch;
                if store.gone.contains(&key) {
                    let _ = reply.send(Freshness::ServerGone);
                    return Ok(());
                }
                let wait = Wait::File {
                    key,
                    path,
                    version,
                    settle,
                    reply,
                };
                store.add_waiter(&myself, wait, after, deadline);
            }
            DiagnosticsMsg::AllAfter {
                after,
                deadline,
                reply,
            } => {
                store.add_waiter(&myself, Wait::All { reply }, after, deadline);
            }
            DiagnosticsMsg::All(reply) => {
                let _ = reply.send(store.all());
            }
            DiagnosticsMsg::Recheck => {
                store.timer = None;
                let now = Instant::now();
                let due: Vec<u64> = store
                    .waiters
                    .iter()
                    .filter(|(_, w)| w.recheck_at.is_some_and(|at| at <= now))
                    .map(|(id, _)| *id)
                    .collect();
                for id in due {
                    if let Some(waiter) = store.waiters.get_mut(&id) {
                        waiter.recheck_at = None;
                    }
                    store.check(&myself, id);
                }
                let next = store.waiters.values().filter_map(|w| w.recheck_at).min();
                if let Some(at) = next {
                    store.arm(&myself, at);
                }
            }
        }
        Ok(())
    }
}

impl Store {
    /// Records what a server delivered for a file (`None`: what it delivered last time, again)
    /// and looks at the waits it may end.
    fn record(
        &mut self,
        myself: &ActorRef<DiagnosticsMsg>,
        key: ServerKey,
        path: PathBuf,
        version: Option<i32>,
        source: Source,
        diagnostics: Option<Vec<Diagnostic>>,
    ) {
        if self.gone.contains(&key) {
            return; // Frames a dead server sent before it died.
        }
        self.epoch += 1;
        let now = Instant::now();
        self.last_publish = Some(now);
        let by_server = self.files.entry(path.clone()).or_default();
        let slot = (key.clone(), source);
        let diagnostics = match diagnostics {
            Some(diagnostics) => Arc::new(diagnostics),
            None => by_server
                .remove(&slot)
                .map(|last| last.diagnostics)
                .unwrap_or_default(),
        };
        let published = Published {
            diagnostics,
            version,
            epoch: self.epoch,
            at: now,
        };
        by_server.insert(slot, published);
        self.announce(&path);
        let on_file = self.waiting_on.get(&path).into_iter().flatten();
        let ids: Vec<u64> = on_file
            .filter(|id| {
                self.waiters
                    .get(id)
                    .is_some_and(|w| matches!(&w.wait, Wait::File { key: k, .. } if *k == key))
            })
            .chain(&self.waiting_on_all)
            .copied()
            .collect();
        for id in ids {
            self.check(myself, id);
        }
    }

    fn add_waiter(
        &mut self,
        myself: &ActorRef<DiagnosticsMsg>,
        wait: Wait,
        after: u64,
        deadline: Instant,
    ) {
        let id = self.next_waiter;
        self.next_waiter += 1;
        match &wait {
            Wait::File { path, .. } => self.waiting_on.entry(path.clone()).or_default().push(id),
            Wait::All { .. } => self.waiting_on_all.push(id),
        }
        self.waiters.insert(
            id,
            Waiter {
                wait,
                after,
                deadline,
                recheck_at: None,
            },
        );
        self.check(myself, id);
    }

    /// Removes a waiter (and its place in the index by file).
    fn take_waiter(&mut self, id: u64) -> Option<Waiter> {
        let waiter = self.waiters.remove(&id)?;
        match &waiter.wait {
            Wait::File { path, .. } => {
                if let Some(ids) = self.waiting_on.get_mut(path) {
                    ids.retain(|other| *other != id);
                    if ids.is_empty() {
                        self.waiting_on.remove(path);
                    }
                }
            }
            Wait::All { .. } => self.waiting_on_all.retain(|other| *other != id),
        }
        Some(waiter)
    }

    /// When what a waiter waits for last changed after its touch (a publish, or its server
    /// going idle), if it did.
    fn fresh_at(&self, waiter: &Waiter) -> Option<Instant> {
        match &waiter.wait {
            Wait::File {
                key, path, version, ..
            } => {
                let published = self
                    .files
                    .get(path)?
                    .iter()
                    .filter(|((k, _), p)| {
                        k == key
                            && p.epoch > waiter.after
                            && p.version.is_none_or(|v| v >= *version)
                    })
                    .map(|(_, p)| p.at)
                    .max()?;
                Some(
                    self.idle_since
                        .get(key)
                        .map_or(published, |idle| published.max(*idle)),
                )
            }
            Wait::All { .. } => {
                let published = self.last_publish.filter(|_| self.epoch > waiter.after)?;
                Some(
                    self.idle_since
                        .values()
                        .fold(published, |latest, idle| latest.max(*idle)),
                )
            }
        }
    }

    /// Answers a waiter if it is done, or schedules a look at it for when it could be.
    fn check(&mut self, myself: &ActorRef<DiagnosticsMsg>, id: u64) {
        let Some(waiter) = self.waiters.get(&id) else {
            return;
        };
        let now = Instant::now();
        let (working, settle) = match &waiter.wait {
            Wait::File { key, settle, .. } => (self.busy.contains(key), *settle),
            Wait::All { .. } => (!self.busy.is_empty(), self.settle),
        };
        let next = match self.fresh_at(waiter) {
            // A server at work will publish again: wait for it to finish (or the deadline).
            _ if working => Some(waiter.deadline),
            Some(at) if now >= at + settle => None,
            Some(at) => Some((at + settle).min(waiter.deadline)),
            None => Some(waiter.deadline),
        };
        match next {
            Some(at) if now < at => {
                let Some(waiter) = self.waiters.get_mut(&id) else {
                    return;
                };
                if waiter.recheck_at.is_some_and(|scheduled| scheduled <= at) {
                    return;
                }
                waiter.recheck_at = Some(at);
                self.arm(myself, at);
            }
            // The deadline came first.
            Some(_) => self.answer(id, false),
            None => self.answer(id, true),
        }
    }

    /// Makes sure the timer fires by `at`: one timer serves every wait, so a burst of checks
    /// does not leave a sleeping task per wait until its deadline.
    fn arm(&mut self, myself: &ActorRef<DiagnosticsMsg>, at: Instant) {
        if self.timer.as_ref().is_some_and(|(armed, _)| *armed <= at) {
            return;
        }
        if let Some((_, task)) = self.timer.take() {
            task.abort();
        }
        let wait = at.saturating_duration_since(Instant::now());
        let task = myself.send_after(wait, || DiagnosticsMsg::Recheck);
        self.timer = Some((at, task));
    }

    /// Ends a wait with what is known now; `settled` when the server went quiet before the
    /// deadline.
    fn answer(&mut self, id: u64, settled: bool) {
        let Some(waiter) = self.take_waiter(id) else {
            return;
        };
        let fresh = self.fresh_at(&waiter).is_some();
        match waiter.wait {
            Wait::File {
                key, path, reply, ..
            } => {
                // Shared, not merged: the check merges every server's lists at once.
                let published: Vec<List> = self
                    .files
                    .get(&path)
                    .into_iter()
                    .flatten()
                    .filter(|((k, _), _)| *k == key)
                    .map(|(_, p)| p.diagnostics.clone())
                    .collect();
                let outcome = match (fresh, settled) {
                    (true, true) => Freshness::Fresh(published),
                    (true, false) => Freshness::Unsettled(published),
                    (false, _) => Freshness::TimedOut,
                };
                let _ = reply.send(outcome);
            }
            Wait::All { reply } => {
                let _ = reply.send(self.all());
            }
        }
    }

    /// Tells subscribers a file's diagnostics now.
    fn announce(&self, path: &Path) {
        if self.events.receiver_count() == 0 {
            return;
        }
        let lists = self
            .files
            .get(path)
            .into_iter()
            .flat_map(|p| p.values().flat_map(|p| p.diagnostics.iter()));
        let _ = self.events.send(LspEvent::Diagnostics {
            path: paths::relative_to(&self.workspace_root, path),
            items: merge::merge(lists),
        });
    }

    /// Every file with non-empty diagnostics, merged across servers.
    fn all(&self) -> Snapshot {
        self.files
            .iter()
            .map(|(path, by_server)| {
                let lists = by_server.values().flat_map(|p| p.diagnostics.iter());
                (path.clone(), merge::merge(lists))
            })
            .filter(|(_, diagnostics)| !diagnostics.is_empty())
            .collect()
    }
}
