//! The diagnostics actor: the one store of what every server last published, the epoch that
//! advances on every change, and the waits for final results (decided by [`completion`]).

pub mod completion;

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
use completion::{Basis, CheckPart, CheckSeen, Decision, Delivery, Seen, Traits};

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

/// How a wait for fresh diagnostics ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// The server's answer for the version is final, on `basis`; this is what it delivered
    /// (its pushed and its pulled list), and what the answer could not see, if anything.
    Final {
        lists: Vec<List>,
        basis: Basis,
        note: Option<String>,
    },
    /// The server published for the file after the touch, but the deadline came while it was
    /// still working (or before its quiet time ended): what it had published by then, which
    /// may be incomplete, and what the answer still lacked (`cargo check did not finish`).
    Unsettled {
        lists: Vec<List>,
        unfinished: Option<String>,
    },
    /// The deadline passed before the server published for the file.
    TimedOut,
    /// The server's pull failed, with this error, and it delivered nothing else.
    Failed(String),
    /// A later change to the file reached the server before its answer for this text.
    Superseded,
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

/// What one server delivered for one file one way (pushed or pulled).
#[derive(Debug)]
struct Published {
    diagnostics: List,
    version: Option<i32>,
    ready: bool,
    epoch: u64,
    at: Instant,
}

impl Published {
    /// The delivery, if it came after the epoch `after`.
    fn since(&self, after: u64) -> Option<Delivery> {
        (self.epoch > after).then_some(Delivery {
            version: self.version,
            at: self.at,
            ready: self.ready,
        })
    }
}

/// Where one server's build checks on save stand, numbered by the store's check sequence (its
/// own count, apart from the diagnostics epoch: a check beginning changes no diagnostics).
#[derive(Debug, Default)]
struct Checks {
    /// The number and title of the last check that began.
    began: Option<(u64, String)>,
    /// Whether a check runs now.
    running: bool,
    /// The number and moment of the last end of the running checks.
    ended: Option<(u64, Instant)>,
}

impl Checks {
    /// Where the checks begun after the number `after` stand.
    fn since(&self, after: u64) -> CheckSeen {
        match (&self.began, self.ended) {
            (Some((began, title)), _) if *began > after && self.running => {
                CheckSeen::Running(title.clone())
            }
            (Some((began, _)), Some((ended, at))) if *began > after && ended > *began => {
                CheckSeen::Ended(at)
            }
            _ => CheckSeen::NotBegun,
        }
    }
}

/// What one server said of one file: its lists and a failed pull.
#[derive(Debug, Default)]
struct Said {
    push: Option<Published>,
    pull: Option<Published>,
    /// The version whose pull failed, the error, and the epoch it came at.
    pull_failed: Option<(i32, String, u64)>,
}

impl Said {
    /// The lists it holds, shared.
    fn lists(&self) -> impl Iterator<Item = &List> {
        [&self.push, &self.pull]
            .into_iter()
            .flatten()
            .map(|published| &published.diagnostics)
    }

    /// The lists that answer a wait. Where the server runs a build check on save, what it
    /// publishes is the check's (rust-analyzer publishes nothing else to a client that pulls):
    /// once the check for the text is done (`checked`), the answer is the check's list alone,
    /// the build's verdict (the server's own analysis may place one problem elsewhere, or see
    /// one the build does not have); for a text the check cannot see, it is the server's own
    /// analysis alone (the check's list is about the disk's text).
    fn lists_for(&self, check: CheckPart, checked: bool) -> impl Iterator<Item = &List> {
        let (push, pull) = match check {
            CheckPart::Awaited if checked => (true, false),
            CheckPart::Unseen => (false, true),
            _ => (true, true),
        };
        [push.then_some(&self.push), pull.then_some(&self.pull)]
            .into_iter()
            .flatten()
            .flatten()
            .map(|published| &published.diagnostics)
    }

    /// Whether it holds no list (what is left is only about waits).
    fn has_no_list(&self) -> bool {
        self.push.is_none() && self.pull.is_none()
    }

    /// What was seen since the epoch `after`, for a wait on `version`.
    fn seen_since(&self, after: u64, version: i32) -> Seen {
        Seen {
            push: self.push.as_ref().and_then(|p| p.since(after)),
            pull: self.pull.as_ref().and_then(|p| p.since(after)),
            pull_failed: (self.pull_failed.as_ref())
                .filter(|(v, _, epoch)| *epoch > after && *v == version)
                .map(|(_, reason, _)| reason.clone()),
            ..Seen::default()
        }
    }
}

/// What a waiter waits for, and where its answer goes.
#[derive(Debug)]
enum Wait {
    /// One server's final result for one version of one file.
    File {
        key: ServerKey,
        path: PathBuf,
        version: i32,
        traits: Traits,
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
    /// The check sequence when the wait began: only checks begun after count for it.
    checks_after: u64,
    /// When the wait began (for the time a deadline gave it).
    began: Instant,
    deadline: Instant,
    /// When it is to be looked at again, if a look is due.
    recheck_at: Option<Instant>,
}

impl Waiter {
    /// Where the store stood when the wait began: its epoch and its check sequence.
    fn since(&self) -> (u64, u64) {
        (self.after, self.checks_after)
    }
}

/// How a delivery came: the version it names, pushed or pulled, and whether the server was
/// ready when asked.
struct Delivered {
    version: Option<i32>,
    source: Source,
    ready: bool,
}

/// How a wait ends.
enum Ending {
    /// The answer is final.
    Final(Basis),
    /// The server's pull failed and nothing else came.
    Failed(String),
    /// The server answered for a later version.
    Superseded,
    /// The deadline came first.
    Deadline,
}

/// The task that sends the store its next `Recheck`.
type RecheckTask = JoinHandle<Result<(), MessagingErr<DiagnosticsMsg>>>;

/// The state of the diagnostics actor.
#[derive(Debug)]
pub struct Store {
    files: HashMap<PathBuf, HashMap<ServerKey, Said>>,
    /// Servers that are working (indexing, checking) right now.
    busy: HashSet<ServerKey>,
    /// Where each server's build checks on save stand.
    checks: HashMap<ServerKey, Checks>,
    /// Counts every begin and end of a build check (see [`Checks`]).
    check_seq: u64,
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
    /// Servers whose pushed and pulled lists replace each other.
    one_list: HashSet<ServerKey>,
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
            checks: HashMap::new(),
            check_seq: 0,
            idle_since: HashMap::new(),
            workspace_root,
            events,
            epoch: 0,
            last_publish: None,
            settle,
            gone: HashSet::new(),
            one_list: HashSet::new(),
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
                ready,
                diagnostics,
            } => {
                let delivered = Delivered {
                    version,
                    source,
                    ready,
                };
                store.record(&myself, key, path, delivered, Some(diagnostics));
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
                store.record(&myself, key, path, delivered, None);
            }
            DiagnosticsMsg::CheckBegan { key, title } => {
                if !store.gone.contains(&key) {
                    store.check_seq += 1;
                    let checks = store.checks.entry(key.clone()).or_default();
                    checks.began = Some((store.check_seq, title));
                    checks.running = true;
                    store.check_server_waits(&myself, &key);
                }
            }
            DiagnosticsMsg::CheckEnded { key } => {
                if !store.gone.contains(&key) {
                    store.check_seq += 1;
                    let checks = store.checks.entry(key.clone()).or_default();
                    checks.running = false;
                    checks.ended = Some((store.check_seq, Instant::now()));
                    store.check_server_waits(&myself, &key);
                }
            }
            DiagnosticsMsg::PullFailed {
                key,
                path,
                version,
                reason,
            } => {
                if !store.gone.contains(&key) {
                    store.epoch += 1;
                    let epoch = store.epoch;
                    store.said(&key, &path).pull_failed = Some((version, reason, epoch));
                    store.check_file_waits(&myself, &key, &path);
                }
            }
            DiagnosticsMsg::ServerGone { key } => {
                store.gone.insert(key.clone());
                store.busy.remove(&key);
                store.checks.remove(&key);
                store.epoch += 1;
                let mut touched = Vec::new();
                for (path, said) in store.files.iter_mut() {
                    if said.remove(&key).is_some_and(|said| !said.has_no_list()) {
                        touched.push(path.clone());
                    }
                }
                for path in &touched {
                    store.announce(path);
                }
                store.files.retain(|_, said| !said.is_empty());
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
            DiagnosticsMsg::ServerStarted { key, one_list } => {
                store.gone.remove(&key);
                if one_list {
                    store.one_list.insert(key);
                } else {
                    store.one_list.remove(&key);
                }
            }
            DiagnosticsMsg::Epoch(reply) => {
                let _ = reply.send(store.epoch);
            }
            DiagnosticsMsg::WaitFresh {
                key,
                path,
                version,
                traits,
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
                    traits,
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
    /// What a server said of a file, made empty on first use.
    fn said(&mut self, key: &ServerKey, path: &Path) -> &mut Said {
        let by_server = self.files.entry(path.to_path_buf()).or_default();
        by_server.entry(key.clone()).or_default()
    }

    /// Records what a server delivered for a file (`None`: what it delivered last time, again)
    /// and looks at the waits it may end.
    fn record(
        &mut self,
        myself: &ActorRef<DiagnosticsMsg>,
        key: ServerKey,
        path: PathBuf,
        delivered: Delivered,
        diagnostics: Option<Vec<Diagnostic>>,
    ) {
        let Delivered {
            version,
            source,
            ready,
        } = delivered;
        if self.gone.contains(&key) {
            return; // Frames a dead server sent before it died.
        }
        self.epoch += 1;
        let now = Instant::now();
        self.last_publish = Some(now);
        let epoch = self.epoch;
        let one_list = self.one_list.contains(&key);
        let said = self.said(&key, &path);
        let (slot, other) = match source {
            Source::Push => (&mut said.push, &mut said.pull),
            Source::Pull => (&mut said.pull, &mut said.push),
        };
        if one_list {
            *other = None;
        }
        let diagnostics = match diagnostics {
            Some(diagnostics) => Arc::new(diagnostics),
            None => slot.take().map(|last| last.diagnostics).unwrap_or_default(),
        };
        *slot = Some(Published {
            diagnostics,
            version,
            ready,
            epoch,
            at: now,
        });
        self.announce(&path);
        self.check_file_waits(myself, &key, &path);
    }

    /// Looks at the waits on `key`'s result for `path`, and at the waits for a quiet store.
    fn check_file_waits(
        &mut self,
        myself: &ActorRef<DiagnosticsMsg>,
        key: &ServerKey,
        path: &Path,
    ) {
        let on_file = self.waiting_on.get(path).into_iter().flatten();
        let ids: Vec<u64> = on_file
            .filter(|id| {
                self.waiters
                    .get(id)
                    .is_some_and(|w| matches!(&w.wait, Wait::File { key: k, .. } if k == key))
            })
            .chain(&self.waiting_on_all)
            .copied()
            .collect();
        for id in ids {
            self.check(myself, id);
        }
    }

    /// Looks at every wait on `key` (its work or its check changed).
    fn check_server_waits(&mut self, myself: &ActorRef<DiagnosticsMsg>, key: &ServerKey) {
        let ids: Vec<u64> = (self.waiters.iter())
            .filter(|(_, w)| matches!(&w.wait, Wait::File { key: k, .. } if k == key))
            .map(|(id, _)| *id)
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
                checks_after: self.check_seq,
                began: Instant::now(),
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

    /// What a server said of a file since a wait began (the epoch and check sequence it
    /// began at), with its work now.
    fn seen(
        &self,
        key: &ServerKey,
        path: &Path,
        (after, checks_after): (u64, u64),
        version: i32,
    ) -> Seen {
        let said = self
            .files
            .get(path)
            .and_then(|by_server| by_server.get(key));
        let checks = self.checks.get(key);
        Seen {
            busy: self.busy.contains(key),
            idle_since: self.idle_since.get(key).copied(),
            check: checks.map_or_else(CheckSeen::default, |c| c.since(checks_after)),
            ..said.map_or_else(Seen::default, |said| said.seen_since(after, version))
        }
    }

    /// When the store last changed after the epoch `after` (a publish, or a server going
    /// idle), if it did: the quiet time of a wait for a quiet store counts from then.
    fn quiet_from(&self, after: u64) -> Option<Instant> {
        let published = self.last_publish.filter(|_| self.epoch > after)?;
        Some(
            self.idle_since
                .values()
                .fold(published, |latest, idle| latest.max(*idle)),
        )
    }

    /// Answers a waiter if it is done, or schedules a look at it for when it could be.
    fn check(&mut self, myself: &ActorRef<DiagnosticsMsg>, id: u64) {
        let Some(waiter) = self.waiters.get(&id) else {
            return;
        };
        let now = Instant::now();
        let decision = match &waiter.wait {
            Wait::File {
                key,
                path,
                version,
                traits,
                ..
            } => {
                let seen = self.seen(key, path, waiter.since(), *version);
                completion::decide(*version, *traits, &seen, now)
            }
            Wait::All { .. } => match self.quiet_from(waiter.after) {
                _ if !self.busy.is_empty() => Decision::Waiting,
                Some(at) if now >= at + self.settle => Decision::Final(Basis::QuietTime),
                Some(at) => Decision::LookAt(at + self.settle),
                None => Decision::Waiting,
            },
        };
        let look_at = match decision {
            Decision::Final(basis) => return self.answer(id, Ending::Final(basis)),
            Decision::Failed(reason) => return self.answer(id, Ending::Failed(reason)),
            Decision::Superseded => return self.answer(id, Ending::Superseded),
            Decision::LookAt(at) => at.min(waiter.deadline),
            Decision::Waiting => waiter.deadline,
        };
        if now >= look_at {
            return self.answer(id, Ending::Deadline);
        }
        let Some(waiter) = self.waiters.get_mut(&id) else {
            return;
        };
        if waiter
            .recheck_at
            .is_some_and(|scheduled| scheduled <= look_at)
        {
            return;
        }
        waiter.recheck_at = Some(look_at);
        self.arm(myself, look_at);
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

    /// Ends a wait.
    fn answer(&mut self, id: u64, ending: Ending) {
        let Some(waiter) = self.take_waiter(id) else {
            return;
        };
        let since = waiter.since();
        match waiter.wait {
            Wait::File {
                key,
                path,
                version,
                traits,
                reply,
            } => {
                let said = self
                    .files
                    .get(&path)
                    .and_then(|by_server| by_server.get(&key));
                // Shared, not merged: the check merges every server's lists at once.
                let lists = |checked: bool| -> Vec<List> {
                    let lists =
                        (said.into_iter()).flat_map(|said| said.lists_for(traits.check, checked));
                    lists.cloned().collect()
                };
                let outcome = match ending {
                    Ending::Final(basis) => Freshness::Final {
                        lists: lists(true),
                        basis,
                        note: (traits.check == CheckPart::Unseen).then(|| {
                            "its check on save did not see this text (it is not on disk): \
                             this is its own analysis only"
                                .to_string()
                        }),
                    },
                    Ending::Failed(reason) => Freshness::Failed(reason),
                    Ending::Superseded => Freshness::Superseded,
                    Ending::Deadline => {
                        let seen = self.seen(&key, &path, since, version);
                        if seen.has_any_for(version) {
                            let gave = waiter.deadline.saturating_duration_since(waiter.began);
                            let seconds = gave.as_secs_f64().round();
                            let unfinished = completion::unfinished(traits, &seen)
                                .map(|what| format!("{what} within {seconds} s"));
                            Freshness::Unsettled {
                                lists: lists(false),
                                unfinished,
                            }
                        } else {
                            Freshness::TimedOut
                        }
                    }
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
            .flat_map(|by_server| by_server.values().flat_map(Said::lists))
            .flat_map(|list| list.iter());
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
                let lists = by_server.values().flat_map(Said::lists);
                (
                    path.clone(),
                    merge::merge(lists.flat_map(|list| list.iter())),
                )
            })
            .filter(|(_, diagnostics)| !diagnostics.is_empty())
            .collect()
    }
}
