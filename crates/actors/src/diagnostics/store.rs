//! The diagnostics store as a pure state machine: what every server last delivered per file
//! (pushed and pulled apart), the epoch that advances on every change, each server's work and
//! build checks, the servers that went away, and the waits for final results, indexed by file,
//! with one timer for all of them. Pure: every event comes with the time (`now`), and each
//! returns the [`Steps`] to take: the waits it ended with their answers, the files whose
//! diagnostics changed (to announce), and when the one timer must fire (to look again at waits
//! whose quiet time or deadline comes). The diagnostics actor does what the steps say.
//!
//! Whether one server's answer for one version is final is [`completion`]'s to decide; this
//! holds what it decides from and what a wait answers with. The rules this core keeps:
//!
//! - A wait counts only what came after it began (the epoch and the build-check count then);
//!   a delivery naming a later version ends it as superseded.
//! - One timer serves every wait: it is moved only earlier, and when it fires, the waits whose
//!   look is due are looked at and it is armed again for the earliest look left.
//! - A server that is gone answers its waits at once (`ServerGone`), is forgotten, and what it
//!   sent before it died is dropped until it starts again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use squiggle_protocol::{merge, Diagnostic};
use tokio::time::Instant;

use super::completion::{self, Basis, CheckPart, CheckSeen, Decision, Delivery, Seen, Traits};
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

/// How a delivery came: the version it names, pushed or pulled, and whether the server was
/// ready when asked (always, for a publish).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// The document version it names, if any.
    pub version: Option<i32>,
    /// Pushed or pulled.
    pub source: Source,
    /// False for the answer to a pull asked while the server was still loading its project.
    pub ready: bool,
}

/// The number of one wait, given when it begins; its answer comes back under it.
pub type WaiterId = u64;

/// How a wait ended: one server's answer for a file, or the whole store once quiet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The answer to [`Store::wait_file`].
    File(Freshness),
    /// The answer to [`Store::wait_all`].
    All(Snapshot),
}

/// What the actor is to do after an event.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Steps {
    /// Files whose diagnostics changed, in order: announce each (before the answers).
    pub changed: Vec<PathBuf>,
    /// Waits that ended, in order, with their answers.
    pub answers: Vec<(WaiterId, Answer)>,
    /// Arm the one timer to fire at this moment, in place of the one armed (which fires
    /// later, or not at all): then call [`Store::timer_fired`].
    pub arm: Option<Instant>,
}

/// How long after a publish an earlier one of the same check may still arrive. rust-analyzer
/// sends each publish from a worker thread, so two it sends a moment apart can reach squiggle
/// the other way round: seen, the list with the check's last error, then, 0.3 ms later, the
/// list from the turn before without it, which was the last thing heard.
const CROSSING: Duration = Duration::from_millis(50);

/// What one server delivered for one file one way (pushed or pulled).
#[derive(Debug)]
struct Published {
    diagnostics: List,
    version: Option<i32>,
    ready: bool,
    epoch: u64,
    at: Instant,
    /// The number of the server's last build check begun when it came, if it runs any.
    check: Option<u64>,
    /// Whether it grew out of the push before it, in the same check and for the same version:
    /// that list was a strict prefix of this one.
    grew: bool,
}

impl Published {
    /// Whether it came during the build check `check` (one there is) for `version`.
    fn same_check(&self, version: Option<i32>, check: Option<u64>) -> bool {
        check.is_some() && self.check == check && self.version == version
    }

    /// Whether `list`, pushed for `version` during the check `check`, grows out of this one.
    fn grows_into(&self, list: &[Diagnostic], version: Option<i32>, check: Option<u64>) -> bool {
        self.same_check(version, check) && extends(list, &self.diagnostics)
    }

    /// Whether `list`, pushed `now`, is one the server sent before this one that reached
    /// squiggle after it. rust-analyzer adds a check's errors for a package one by one, after
    /// it cleared the package's old ones (at its first error or artifact in the check, once):
    /// once a file's list grew in a check, it only grows in that check, and an earlier list is
    /// a strict prefix of a later one. So a strict prefix of a list that grew, for the same
    /// version and the same check, within [`CROSSING`], is late, not new. (A list that did not
    /// grow, say the check before's list published again, may be followed by the clear.)
    fn came_after(
        &self,
        list: &[Diagnostic],
        version: Option<i32>,
        check: Option<u64>,
        now: Instant,
    ) -> bool {
        self.grew
            && self.same_check(version, check)
            && now.saturating_duration_since(self.at) <= CROSSING
            && extends(&self.diagnostics, list)
    }

    /// The delivery, if it came after the epoch `after`.
    fn since(&self, after: u64) -> Option<Delivery> {
        (self.epoch > after).then_some(Delivery {
            version: self.version,
            at: self.at,
            ready: self.ready,
        })
    }
}

/// Whether `longer` is `shorter` and more after it.
fn extends(longer: &[Diagnostic], shorter: &[Diagnostic]) -> bool {
    shorter.len() < longer.len() && longer.starts_with(shorter)
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
            pull_failed: self
                .pull_failed
                .as_ref()
                .filter(|(v, _, epoch)| *epoch > after && *v == version)
                .map(|(_, reason, _)| reason.clone()),
            ..Seen::default()
        }
    }
}

/// What a waiter waits for.
#[derive(Debug)]
enum Wait {
    /// One server's final result for one version of one file.
    File {
        key: ServerKey,
        path: PathBuf,
        version: i32,
        traits: Traits,
    },
    /// A quiet store after some change.
    All,
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

/// The store: what every server delivered, and who waits for what.
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
    epoch: u64,
    /// When anything was last published.
    last_publish: Option<Instant>,
    settle: Duration,
    /// Servers that went away; late publishes from them are dropped.
    gone: HashSet<ServerKey>,
    /// Servers whose pushed and pulled lists replace each other.
    one_list: HashSet<ServerKey>,
    waiters: HashMap<WaiterId, Waiter>,
    /// The waiters for one file's result, by file: a publish looks only at these (and at the
    /// waits for a quiet store), not at every waiter.
    waiting_on: HashMap<PathBuf, Vec<WaiterId>>,
    /// The waiters for a quiet store.
    waiting_on_all: Vec<WaiterId>,
    next_waiter: WaiterId,
    /// When the one timer for every wait fires, if it is armed.
    timer: Option<Instant>,
}

impl Store {
    /// An empty store; `settle` is how long the store must stay unchanged for a wait for a
    /// quiet store to end.
    pub fn new(settle: Duration) -> Self {
        Store {
            files: HashMap::new(),
            busy: HashSet::new(),
            checks: HashMap::new(),
            check_seq: 0,
            idle_since: HashMap::new(),
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
        }
    }

    /// The current epoch: it advances on every delivery, failed pull and server gone.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A server delivered diagnostics for a file (`None`: what it delivered last time the
    /// same way, again, now for the version `delivered` names; a list never kept counts as
    /// empty). Dropped if the server is gone.
    pub fn deliver(
        &mut self,
        key: ServerKey,
        path: PathBuf,
        delivered: Delivered,
        diagnostics: Option<Vec<Diagnostic>>,
        now: Instant,
    ) -> Steps {
        let mut steps = Steps::default();
        let Delivered {
            version,
            source,
            ready,
        } = delivered;
        if self.gone.contains(&key) {
            return steps; // Frames a dead server sent before it died.
        }
        let check = (self.checks.get(&key))
            .and_then(|checks| checks.began.as_ref())
            .map(|(number, _)| *number);
        let mut grew = false;
        if let (Source::Push, Some(list)) = (source, &diagnostics) {
            let last = (self.files.get(&path))
                .and_then(|by_server| by_server.get(&key))
                .and_then(|said| said.push.as_ref());
            if last.is_some_and(|last| last.came_after(list, version, check, now)) {
                tracing::debug!(server = %key.id, file = %path.display(), count = list.len(), "a publish sent before the last one came after it: kept the last");
                return steps;
            }
            grew = last.is_some_and(|last| last.grows_into(list, version, check));
        }
        self.epoch += 1;
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
            check,
            grew,
        });
        steps.changed.push(path.clone());
        self.check_file_waits(&key, &path, now, &mut steps);
        steps
    }

    /// A pull for `version` of a file failed with the server's error: a wait on it with
    /// nothing else delivered ends with that error.
    pub fn pull_failed(
        &mut self,
        key: ServerKey,
        path: PathBuf,
        version: i32,
        reason: String,
        now: Instant,
    ) -> Steps {
        let mut steps = Steps::default();
        if !self.gone.contains(&key) {
            self.epoch += 1;
            let epoch = self.epoch;
            self.said(&key, &path).pull_failed = Some((version, reason, epoch));
            self.check_file_waits(&key, &path, now, &mut steps);
        }
        steps
    }

    /// A server's build check on save began, under this title.
    pub fn check_began(&mut self, key: ServerKey, title: String, now: Instant) -> Steps {
        let mut steps = Steps::default();
        if !self.gone.contains(&key) {
            self.check_seq += 1;
            let checks = self.checks.entry(key.clone()).or_default();
            checks.began = Some((self.check_seq, title));
            checks.running = true;
            self.check_server_waits(&key, now, &mut steps);
        }
        steps
    }

    /// The server's last running build check ended.
    pub fn check_ended(&mut self, key: ServerKey, now: Instant) -> Steps {
        let mut steps = Steps::default();
        if !self.gone.contains(&key) {
            self.check_seq += 1;
            let checks = self.checks.entry(key.clone()).or_default();
            checks.running = false;
            checks.ended = Some((self.check_seq, now));
            self.check_server_waits(&key, now, &mut steps);
        }
        steps
    }

    /// A server started or finished work.
    pub fn busy(&mut self, key: ServerKey, busy: bool, now: Instant) -> Steps {
        let mut steps = Steps::default();
        if busy {
            self.busy.insert(key);
        } else if self.busy.remove(&key) {
            self.idle_since.insert(key, now);
            let mut ids: Vec<WaiterId> = self.waiters.keys().copied().collect();
            ids.sort_unstable();
            for id in ids {
                self.check(id, now, &mut steps);
            }
        }
        steps
    }

    /// A server (re)starts: what it delivers counts again. With `one_list`, what it pushes
    /// and what is pulled from it replace each other.
    pub fn server_started(&mut self, key: ServerKey, one_list: bool) {
        self.gone.remove(&key);
        if one_list {
            self.one_list.insert(key);
        } else {
            self.one_list.remove(&key);
        }
    }

    /// A server is gone: what it delivered is forgotten, and the waits on it end.
    pub fn server_gone(&mut self, key: ServerKey) -> Steps {
        let mut steps = Steps::default();
        self.gone.insert(key.clone());
        self.busy.remove(&key);
        self.checks.remove(&key);
        self.epoch += 1;
        for (path, said) in self.files.iter_mut() {
            if said.remove(&key).is_some_and(|said| !said.has_no_list()) {
                steps.changed.push(path.clone());
            }
        }
        self.files.retain(|_, said| !said.is_empty());
        let mut gone: Vec<WaiterId> = self
            .waiters
            .iter()
            .filter(|(_, w)| matches!(&w.wait, Wait::File { key: k, .. } if *k == key))
            .map(|(id, _)| *id)
            .collect();
        gone.sort_unstable();
        for id in gone {
            if self.take_waiter(id).is_some() {
                steps
                    .answers
                    .push((id, Answer::File(Freshness::ServerGone)));
            }
        }
        steps
    }

    /// A host's check of a file was answered (`lsp/checkFile`, BR-83): the epoch moves on, as
    /// with a delivery, so a wait for a quiet store that began before it ends a quiet time
    /// later even when no server delivered anything for that check (a file no server
    /// handles, a server that did not answer).
    pub fn check_answered(&mut self, now: Instant) -> Steps {
        let mut steps = Steps::default();
        self.epoch += 1;
        self.last_publish = Some(now);
        let ids: Vec<WaiterId> = self.waiting_on_all.to_vec();
        for id in ids {
            self.check(id, now, &mut steps);
        }
        steps
    }

    /// Begins a wait until what `key` delivers for `version` of `path` after now is final
    /// (the completion model decides, from the server's `traits`), or until `deadline`. The
    /// answer comes under the returned number, in these steps or later ones.
    pub fn wait_file(
        &mut self,
        key: ServerKey,
        path: PathBuf,
        version: i32,
        traits: Traits,
        deadline: Instant,
        now: Instant,
    ) -> (WaiterId, Steps) {
        let after = self.epoch;
        if self.gone.contains(&key) {
            let id = self.next_id();
            let steps = Steps {
                answers: vec![(id, Answer::File(Freshness::ServerGone))],
                ..Steps::default()
            };
            return (id, steps);
        }
        let wait = Wait::File {
            key,
            path,
            version,
            traits,
        };
        self.add_waiter(wait, after, deadline, now)
    }

    /// Begins a wait for every file's diagnostics, once the epoch passed `after` and every
    /// server stayed quiet for the settle time, or at `deadline` with what is known then.
    pub fn wait_all(&mut self, after: u64, deadline: Instant, now: Instant) -> (WaiterId, Steps) {
        self.add_waiter(Wait::All, after, deadline, now)
    }

    /// The timer fired: the waits whose look is due are looked at, and the timer is armed
    /// again for the earliest look left.
    pub fn timer_fired(&mut self, now: Instant) -> Steps {
        let mut steps = Steps::default();
        self.timer = None;
        let mut due: Vec<WaiterId> = self
            .waiters
            .iter()
            .filter(|(_, w)| w.recheck_at.is_some_and(|at| at <= now))
            .map(|(id, _)| *id)
            .collect();
        due.sort_unstable();
        for id in due {
            if let Some(waiter) = self.waiters.get_mut(&id) {
                waiter.recheck_at = None;
            }
            self.check(id, now, &mut steps);
        }
        let next = self.waiters.values().filter_map(|w| w.recheck_at).min();
        if let Some(at) = next {
            self.arm(at, &mut steps);
        }
        steps
    }

    /// A file's diagnostics now, merged across servers.
    pub fn merged(&self, path: &Path) -> Vec<Diagnostic> {
        let lists = self
            .files
            .get(path)
            .into_iter()
            .flat_map(|by_server| by_server.values().flat_map(Said::lists))
            .flat_map(|list| list.iter());
        merge::merge(lists)
    }

    /// Every file with non-empty diagnostics, merged across servers.
    pub fn all(&self) -> Snapshot {
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

    /// What a server said of a file, made empty on first use.
    fn said(&mut self, key: &ServerKey, path: &Path) -> &mut Said {
        let by_server = self.files.entry(path.to_path_buf()).or_default();
        by_server.entry(key.clone()).or_default()
    }

    fn next_id(&mut self) -> WaiterId {
        let id = self.next_waiter;
        self.next_waiter += 1;
        id
    }

    /// Looks at the waits on `key`'s result for `path`, and at the waits for a quiet store.
    fn check_file_waits(&mut self, key: &ServerKey, path: &Path, now: Instant, steps: &mut Steps) {
        let on_file = self.waiting_on.get(path).into_iter().flatten();
        let ids: Vec<WaiterId> = on_file
            .filter(|id| {
                self.waiters
                    .get(id)
                    .is_some_and(|w| matches!(&w.wait, Wait::File { key: k, .. } if k == key))
            })
            .chain(&self.waiting_on_all)
            .copied()
            .collect();
        for id in ids {
            self.check(id, now, steps);
        }
    }

    /// Looks at every wait on `key` (its work or its check changed).
    fn check_server_waits(&mut self, key: &ServerKey, now: Instant, steps: &mut Steps) {
        let mut ids: Vec<WaiterId> = self
            .waiters
            .iter()
            .filter(|(_, w)| matches!(&w.wait, Wait::File { key: k, .. } if k == key))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            self.check(id, now, steps);
        }
    }

    fn add_waiter(
        &mut self,
        wait: Wait,
        after: u64,
        deadline: Instant,
        now: Instant,
    ) -> (WaiterId, Steps) {
        let id = self.next_id();
        match &wait {
            Wait::File { path, .. } => self.waiting_on.entry(path.clone()).or_default().push(id),
            Wait::All => self.waiting_on_all.push(id),
        }
        self.waiters.insert(
            id,
            Waiter {
                wait,
                after,
                checks_after: self.check_seq,
                began: now,
                deadline,
                recheck_at: None,
            },
        );
        let mut steps = Steps::default();
        self.check(id, now, &mut steps);
        (id, steps)
    }

    /// Removes a waiter (and its place in the index by file).
    fn take_waiter(&mut self, id: WaiterId) -> Option<Waiter> {
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
            Wait::All => self.waiting_on_all.retain(|other| *other != id),
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
    fn check(&mut self, id: WaiterId, now: Instant, steps: &mut Steps) {
        let Some(waiter) = self.waiters.get(&id) else {
            return;
        };
        let decision = match &waiter.wait {
            Wait::File {
                key,
                path,
                version,
                traits,
            } => {
                let seen = self.seen(key, path, waiter.since(), *version);
                completion::decide(*version, *traits, &seen, now)
            }
            Wait::All => match self.quiet_from(waiter.after) {
                _ if !self.busy.is_empty() => Decision::Waiting,
                Some(at) if now >= at + self.settle => Decision::Final(Basis::QuietTime),
                Some(at) => Decision::LookAt(at + self.settle),
                None => Decision::Waiting,
            },
        };
        let look_at = match decision {
            Decision::Final(basis) => return self.answer(id, Ending::Final(basis), steps),
            Decision::Failed(reason) => return self.answer(id, Ending::Failed(reason), steps),
            Decision::Superseded => return self.answer(id, Ending::Superseded, steps),
            Decision::LookAt(at) => at.min(waiter.deadline),
            Decision::Waiting => waiter.deadline,
        };
        if now >= look_at {
            return self.answer(id, Ending::Deadline, steps);
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
        self.arm(look_at, steps);
    }

    /// Makes sure the timer fires by `at`: one timer serves every wait, so a burst of checks
    /// does not leave a sleeping task per wait until its deadline.
    fn arm(&mut self, at: Instant, steps: &mut Steps) {
        if self.timer.is_some_and(|armed| armed <= at) {
            return;
        }
        self.timer = Some(at);
        steps.arm = Some(at);
    }

    /// Ends a wait.
    fn answer(&mut self, id: WaiterId, ending: Ending, steps: &mut Steps) {
        let Some(waiter) = self.take_waiter(id) else {
            return;
        };
        let since = waiter.since();
        let answer = match waiter.wait {
            Wait::File {
                key,
                path,
                version,
                traits,
            } => {
                let said = self
                    .files
                    .get(&path)
                    .and_then(|by_server| by_server.get(&key));
                // Shared, not merged: the check merges every server's lists at once.
                let lists = |checked: bool| -> Vec<List> {
                    let lists = said
                        .into_iter()
                        .flat_map(|said| said.lists_for(traits.check, checked));
                    lists.cloned().collect()
                };
                Answer::File(match ending {
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
                })
            }
            Wait::All => Answer::All(self.all()),
        };
        steps.answers.push((id, answer));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use completion::tests::{CHECKED, PUSHED, SETTLE};
    use completion::Stages;
    use squiggle_protocol::Severity;

    /// A server whose publishes name no version, or come in stages with no end: a quiet time.
    const QUIET: Traits = Traits {
        stages: Stages::Unsignalled,
        ..PUSHED
    };

    /// A pulled server.
    const PULLED: Traits = Traits {
        pull: true,
        ..PUSHED
    };

    /// rust-analyzer on a text not on disk: its own analysis only.
    const UNSEEN: Traits = Traits {
        check: CheckPart::Unseen,
        ..CHECKED
    };

    /// One thing that happens to the store (servers and files by name).
    #[derive(Debug, Clone, Copy)]
    enum Do {
        /// The server publishes this many diagnostics for the file, naming the version.
        Push(&'static str, &'static str, Option<i32>, usize),
        /// A pull of the version is answered with this many diagnostics.
        Pull(&'static str, &'static str, i32, usize),
        /// The same, asked while the server was still loading its project.
        Unready(&'static str, &'static str, i32, usize),
        /// A pull of the version is answered `unchanged`.
        Still(&'static str, &'static str, i32),
        /// A pull of the version failed.
        PullFails(&'static str, &'static str, i32),
        /// A wait on the server's answer for the version, with a deadline in ms from t0.
        Wait(&'static str, &'static str, i32, Traits, u64),
        /// A wait for a quiet store after the epoch, with a deadline in ms from t0.
        WaitAll(u64, u64),
        Busy(&'static str, bool),
        CheckBegan(&'static str),
        CheckEnded(&'static str),
        /// The server (re)starts; with one list or not.
        Started(&'static str, bool),
        Gone(&'static str),
        /// The timer fires: it must be armed for exactly this moment.
        Fire,
        /// Read the epoch.
        Epoch,
        /// Read every file's diagnostics.
        All,
    }

    fn key(server: &str) -> ServerKey {
        ServerKey {
            id: server.to_string(),
            root: PathBuf::from("/ws"),
        }
    }

    fn path(file: &str) -> PathBuf {
        Path::new("/ws").join(file)
    }

    /// `count` distinct diagnostics from `from` in `file`.
    fn diagnostics(from: &str, file: &str, count: usize) -> Vec<Diagnostic> {
        (0..count)
            .map(|i| Diagnostic {
                file: file.to_string(),
                line: i as u32 + 1,
                column: 1,
                end_line: i as u32 + 1,
                end_column: 2,
                severity: Severity::Error,
                message: format!("{from} {i}"),
                code: None,
                source: Some(from.to_string()),
                also: Vec::new(),
            })
            .collect()
    }

    fn lengths(lists: &[List]) -> String {
        let lengths: Vec<String> = lists.iter().map(|list| list.len().to_string()).collect();
        format!("[{}]", lengths.join(","))
    }

    fn snapshot(all: &Snapshot) -> String {
        let files = all.iter().map(|(path, diagnostics)| {
            let name = path.file_name().unwrap().to_string_lossy();
            format!(" {name}:{}", diagnostics.len())
        });
        files.collect()
    }

    fn answer(answer: &Answer) -> String {
        match answer {
            Answer::File(Freshness::Final { lists, basis, note }) => {
                let note = if note.is_some() { " +note" } else { "" };
                format!("final {} {}{note}", basis.as_str(), lengths(lists))
            }
            Answer::File(Freshness::Unsettled { lists, unfinished }) => {
                let lacked = unfinished.as_deref().map(|u| format!(": {u}"));
                format!("unsettled {}{}", lengths(lists), lacked.unwrap_or_default())
            }
            Answer::File(Freshness::TimedOut) => "timed out".to_string(),
            Answer::File(Freshness::Failed(reason)) => format!("failed: {reason}"),
            Answer::File(Freshness::Superseded) => "superseded".to_string(),
            Answer::File(Freshness::ServerGone) => "server gone".to_string(),
            Answer::All(all) => format!("all{}", snapshot(all)),
        }
    }

    /// What `server` delivered for `file`: `count` diagnostics (apart from what it delivered
    /// the other way), or none (the last list again).
    fn deliver(
        store: &mut Store,
        server: &str,
        file: &str,
        delivered: Delivered,
        count: Option<usize>,
        now: Instant,
    ) -> Steps {
        let from = format!("{server} {:?}", delivered.source);
        let list = count.map(|count| diagnostics(&from, file, count));
        store.deliver(key(server), path(file), delivered, list, now)
    }

    /// Plays `script` (times in ms from t0) on a fresh store, and writes down what it said:
    /// `ms: changed FILE`, `ms: wN ANSWER`, `ms: arm MS`, `ms: epoch N`, `ms: all ...`.
    fn play(name: &str, script: &[(u64, Do)]) -> Vec<String> {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let ms = |instant: Instant| instant.duration_since(t0).as_millis();
        let mut store = Store::new(SETTLE);
        let mut armed: Option<Instant> = None;
        let mut said = Vec::new();
        for &(t, what) in script {
            let now = at(t);
            let delivered = |version, source, ready| Delivered {
                version,
                source,
                ready,
            };
            let steps = match what {
                Do::Push(server, file, version, count) => {
                    let how = delivered(version, Source::Push, true);
                    deliver(&mut store, server, file, how, Some(count), now)
                }
                Do::Pull(server, file, version, count) => {
                    let how = delivered(Some(version), Source::Pull, true);
                    deliver(&mut store, server, file, how, Some(count), now)
                }
                Do::Unready(server, file, version, count) => {
                    let how = delivered(Some(version), Source::Pull, false);
                    deliver(&mut store, server, file, how, Some(count), now)
                }
                Do::Still(server, file, version) => {
                    let how = delivered(Some(version), Source::Pull, true);
                    deliver(&mut store, server, file, how, None, now)
                }
                Do::PullFails(server, file, version) => {
                    let reason = "boom".to_string();
                    store.pull_failed(key(server), path(file), version, reason, now)
                }
                Do::Wait(server, file, version, traits, deadline) => {
                    let (id, steps) = store.wait_file(
                        key(server),
                        path(file),
                        version,
                        traits,
                        at(deadline),
                        now,
                    );
                    said.push(format!("{t}: w{id} waits"));
                    steps
                }
                Do::WaitAll(after, deadline) => {
                    let (id, steps) = store.wait_all(after, at(deadline), now);
                    said.push(format!("{t}: w{id} waits"));
                    steps
                }
                Do::Busy(server, busy) => store.busy(key(server), busy, now),
                Do::CheckBegan(server) => {
                    store.check_began(key(server), "cargo check".to_string(), now)
                }
                Do::CheckEnded(server) => store.check_ended(key(server), now),
                Do::Started(server, one_list) => {
                    store.server_started(key(server), one_list);
                    Steps::default()
                }
                Do::Gone(server) => store.server_gone(key(server)),
                Do::Fire => {
                    let due = armed.map(ms);
                    assert_eq!(due, Some(u128::from(t)), "{name}: the timer fires at {t}");
                    armed = None;
                    store.timer_fired(now)
                }
                Do::Epoch => {
                    said.push(format!("{t}: epoch {}", store.epoch()));
                    Steps::default()
                }
                Do::All => {
                    said.push(format!("{t}: all{}", snapshot(&store.all())));
                    Steps::default()
                }
            };
            for changed in &steps.changed {
                let name = changed.file_name().unwrap().to_string_lossy();
                said.push(format!("{t}: changed {name}"));
            }
            for (id, ending) in &steps.answers {
                said.push(format!("{t}: w{id} {}", answer(ending)));
            }
            if let Some(arm) = steps.arm {
                assert!(
                    armed.is_none_or(|armed| arm < armed),
                    "the timer only moves earlier"
                );
                armed = Some(arm);
                said.push(format!("{t}: arm {}", ms(arm)));
            }
        }
        said
    }

    /// One row: what happens, and what the store says, in order.
    struct Row {
        name: &'static str,
        script: &'static [(u64, Do)],
        said: &'static [&'static str],
    }

    #[test]
    fn the_table() {
        use Do::*;
        let rows = [
            Row {
                name: "a pull answer for the version ends the wait at once",
                script: &[
                    (0, Wait("ra", "a.rs", 2, PULLED, 3000)),
                    (5, Pull("ra", "a.rs", 2, 1)),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 3000",
                    "5: changed a.rs",
                    "5: w0 final pull [1]",
                ],
            },
            Row {
                name: "what came before the wait does not count for it",
                script: &[
                    (0, Push("py", "a.py", Some(2), 1)),
                    (1, Wait("py", "a.py", 2, PUSHED, 3000)),
                    (3000, Fire),
                ],
                said: &[
                    "0: changed a.py",
                    "1: w0 waits",
                    "1: arm 3000",
                    "3000: w0 timed out",
                ],
            },
            Row {
                name: "an unversioned publish from before the wait (the old text's) is not its \
                       answer",
                script: &[
                    (0, Push("ts", "a.ts", None, 1)),
                    (1, Wait("ts", "a.ts", 2, QUIET, 3000)),
                    (3000, Fire),
                ],
                said: &[
                    "0: changed a.ts",
                    "1: w0 waits",
                    "1: arm 3000",
                    "3000: w0 timed out",
                ],
            },
            Row {
                name: "waits across versions: a later version supersedes, its own ends",
                script: &[
                    (0, Wait("py", "a.py", 2, PUSHED, 1000)),
                    (1, Wait("py", "a.py", 3, PUSHED, 1000)),
                    (10, Push("py", "a.py", Some(3), 1)),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 1000",
                    "1: w1 waits",
                    "10: changed a.py",
                    "10: w0 superseded",
                    "10: w1 final version [1]",
                ],
            },
            Row {
                name: "a wait is on one server: another's publish for the file does not end it",
                script: &[
                    (0, Wait("py", "a.py", 2, PUSHED, 1000)),
                    (5, Push("ruff", "a.py", Some(2), 1)),
                    (6, Push("py", "a.py", Some(2), 0)),
                    (7, All),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 1000",
                    "5: changed a.py",
                    "6: changed a.py",
                    "6: w0 final version [0]",
                    "7: all a.py:1",
                ],
            },
            Row {
                name: "a publish for another file does not end a wait",
                script: &[
                    (0, Wait("py", "a.py", 2, PUSHED, 1000)),
                    (5, Push("py", "b.py", Some(2), 1)),
                    (1000, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 1000",
                    "5: changed b.py",
                    "1000: w0 timed out",
                ],
            },
            Row {
                name: "the one timer is moved to the earliest deadline, and re-armed when it fires",
                script: &[
                    (0, Wait("py", "a.py", 2, PUSHED, 1000)),
                    (1, Wait("py", "b.py", 2, PUSHED, 500)),
                    (2, Wait("py", "c.py", 2, PUSHED, 800)),
                    (500, Fire),
                    (800, Fire),
                    (1000, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 1000",
                    "1: w1 waits",
                    "1: arm 500",
                    "2: w2 waits",
                    "500: w1 timed out",
                    "500: arm 800",
                    "800: w2 timed out",
                    "800: arm 1000",
                    "1000: w0 timed out",
                ],
            },
            Row {
                name: "a quiet time is looked at when it ends, before the deadline",
                script: &[
                    (0, Wait("ts", "a.ts", 2, QUIET, 3000)),
                    (10, Push("ts", "a.ts", None, 1)),
                    (110, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 3000",
                    "10: changed a.ts",
                    "10: arm 110",
                    "110: w0 final quiet_time [1]",
                ],
            },
            Row {
                name: "a publish during the quiet time moves its end: the timer looks again",
                script: &[
                    (0, Wait("ts", "a.ts", 2, QUIET, 3000)),
                    (10, Push("ts", "a.ts", None, 1)),
                    (60, Push("ts", "a.ts", None, 2)),
                    (110, Fire),
                    (160, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 3000",
                    "10: changed a.ts",
                    "10: arm 110",
                    "60: changed a.ts",
                    "110: arm 160",
                    "160: w0 final quiet_time [2]",
                ],
            },
            Row {
                name: "a deadline before the quiet time ends gives what came, unsettled",
                script: &[
                    (0, Wait("ts", "a.ts", 2, QUIET, 50)),
                    (10, Push("ts", "a.ts", None, 1)),
                    (50, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 50",
                    "10: changed a.ts",
                    "50: w0 unsettled [1]",
                ],
            },
            Row {
                name: "work holds the quiet time, and its end starts it again",
                script: &[
                    (0, Wait("ts", "a.ts", 2, QUIET, 3000)),
                    (1, Busy("ts", true)),
                    (10, Push("ts", "a.ts", None, 1)),
                    (300, Busy("ts", false)),
                    (400, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 3000",
                    "10: changed a.ts",
                    "300: arm 400",
                    "400: w0 final quiet_time [1]",
                ],
            },
            Row {
                name: "a server gone while waited on answers its waits, and its lists go",
                script: &[
                    (0, Push("py", "a.py", Some(1), 2)),
                    (0, Push("ruff", "a.py", Some(1), 1)),
                    (1, Wait("py", "a.py", 2, PUSHED, 1000)),
                    (2, Wait("ruff", "a.py", 2, PUSHED, 1000)),
                    (3, Epoch),
                    (10, Gone("py")),
                    (11, Epoch),
                    (12, All),
                    (20, Push("ruff", "a.py", Some(2), 0)),
                ],
                said: &[
                    "0: changed a.py",
                    "0: changed a.py",
                    "1: w0 waits",
                    "1: arm 1000",
                    "2: w1 waits",
                    "3: epoch 2",
                    "10: changed a.py",
                    "10: w0 server gone",
                    "11: epoch 3",
                    "12: all a.py:1",
                    "20: changed a.py",
                    "20: w1 final version [0]",
                ],
            },
            Row {
                name: "a gone server's late frames are dropped, and a wait on it ends at once, \
                       until it starts again",
                script: &[
                    (0, Gone("py")),
                    (1, Push("py", "a.py", Some(1), 2)),
                    (2, PullFails("py", "a.py", 1)),
                    (3, Epoch),
                    (4, Wait("py", "a.py", 2, PUSHED, 1000)),
                    (5, Started("py", false)),
                    (6, Wait("py", "a.py", 2, PUSHED, 1000)),
                    (7, Push("py", "a.py", Some(2), 2)),
                ],
                said: &[
                    "3: epoch 1",
                    "4: w0 waits",
                    "4: w0 server gone",
                    "6: w1 waits",
                    "6: arm 1000",
                    "7: changed a.py",
                    "7: w1 final version [2]",
                ],
            },
            Row {
                name: "a failed pull for the version ends the wait with the error",
                script: &[
                    (0, Wait("ra", "a.rs", 2, PULLED, 1000)),
                    (1, PullFails("ra", "a.rs", 1)),
                    (5, PullFails("ra", "a.rs", 2)),
                ],
                said: &["0: w0 waits", "0: arm 1000", "5: w0 failed: boom"],
            },
            Row {
                name: "an answer from a server still loading is not final; the deadline gives it",
                script: &[
                    (0, Wait("ra", "a.rs", 2, PULLED, 1000)),
                    (5, Unready("ra", "a.rs", 2, 1)),
                    (1000, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 1000",
                    "5: changed a.rs",
                    "1000: w0 unsettled [1]: the server had not finished loading the project \
                     within 1 s",
                ],
            },
            Row {
                name: "`unchanged` keeps the last pulled list, now for the version",
                script: &[
                    (0, Pull("ra", "a.rs", 1, 2)),
                    (1, Wait("ra", "a.rs", 2, PULLED, 1000)),
                    (5, Still("ra", "a.rs", 2)),
                ],
                said: &[
                    "0: changed a.rs",
                    "1: w0 waits",
                    "1: arm 1000",
                    "5: changed a.rs",
                    "5: w0 final pull [2]",
                ],
            },
            Row {
                name: "a saved file waits for the check on save and takes its list alone",
                script: &[
                    (0, Wait("ra", "a.rs", 2, CHECKED, 5000)),
                    (5, CheckBegan("ra")),
                    (6, Pull("ra", "a.rs", 2, 1)),
                    (50, CheckEnded("ra")),
                    (60, Push("ra", "a.rs", None, 3)),
                    (150, Fire),
                    (160, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 5000",
                    "6: changed a.rs",
                    "50: arm 150",
                    "60: changed a.rs",
                    "150: arm 160",
                    "160: w0 final pull+flycheck [3]",
                ],
            },
            Row {
                name: "a check begun before the wait does not count for it",
                script: &[
                    (0, CheckBegan("ra")),
                    (1, Wait("ra", "a.rs", 2, CHECKED, 1000)),
                    (2, Pull("ra", "a.rs", 2, 1)),
                    (10, CheckEnded("ra")),
                    (1000, Fire),
                ],
                said: &[
                    "1: w0 waits",
                    "1: arm 1000",
                    "2: changed a.rs",
                    "1000: w0 unsettled [1]: its check on save did not start within 1 s",
                ],
            },
            Row {
                name: "a check cut short by the deadline is named",
                script: &[
                    (0, Wait("ra", "a.rs", 2, CHECKED, 2000)),
                    (1, CheckBegan("ra")),
                    (2, Pull("ra", "a.rs", 2, 1)),
                    (2000, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 2000",
                    "2: changed a.rs",
                    "2000: w0 unsettled [1]: cargo check did not finish within 2 s",
                ],
            },
            Row {
                name: "a list the check published before the last, come a moment after it, is late: the last stays",
                script: &[
                    (0, Wait("ra", "a.rs", 2, CHECKED, 5000)),
                    (5, CheckBegan("ra")),
                    (6, Pull("ra", "a.rs", 2, 0)),
                    (39, Push("ra", "a.rs", None, 1)),
                    (40, Push("ra", "a.rs", None, 3)),
                    (41, Push("ra", "a.rs", None, 2)),
                    (50, CheckEnded("ra")),
                    (150, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 5000",
                    "6: changed a.rs",
                    "39: changed a.rs",
                    "40: changed a.rs",
                    "50: arm 150",
                    "150: w0 final pull+flycheck [3]",
                ],
            },
            Row {
                name: "a list that did not grow in the check may be followed by the clear",
                script: &[
                    (0, Push("ra", "a.rs", Some(1), 3)),
                    (10, CheckBegan("ra")),
                    (20, Push("ra", "a.rs", Some(2), 3)),
                    (21, Push("ra", "a.rs", Some(2), 0)),
                    (22, Push("ra", "a.rs", Some(2), 1)),
                    (23, Push("ra", "a.rs", Some(2), 0)),
                    (24, All),
                ],
                said: &[
                    "0: changed a.rs",
                    "20: changed a.rs",
                    "21: changed a.rs",
                    "22: changed a.rs",
                    "24: all a.rs:1",
                ],
            },
            Row {
                name: "a shorter list after the crossing time, or from a later check, is the server's",
                script: &[
                    (0, CheckBegan("ra")),
                    (9, Push("ra", "a.rs", None, 1)),
                    (10, Push("ra", "a.rs", None, 3)),
                    (61, Push("ra", "a.rs", None, 2)),
                    (70, All),
                    (80, CheckEnded("ra")),
                    (90, CheckBegan("ra")),
                    (91, Push("ra", "a.rs", None, 1)),
                    (92, All),
                ],
                said: &[
                    "9: changed a.rs",
                    "10: changed a.rs",
                    "61: changed a.rs",
                    "70: all a.rs:2",
                    "91: changed a.rs",
                    "92: all a.rs:1",
                ],
            },
            Row {
                name: "only a server with a check on save has its shorter lists taken as late",
                script: &[
                    (10, Push("ts", "a.ts", Some(1), 3)),
                    (11, Push("ts", "a.ts", Some(1), 2)),
                    (12, All),
                ],
                said: &["10: changed a.ts", "11: changed a.ts", "12: all a.ts:2"],
            },
            Row {
                name: "a text the check cannot see gets the pulled list alone, with a note",
                script: &[
                    (0, Push("ra", "a.rs", None, 3)),
                    (1, Wait("ra", "a.rs", 2, UNSEEN, 1000)),
                    (2, Pull("ra", "a.rs", 2, 1)),
                ],
                said: &[
                    "0: changed a.rs",
                    "1: w0 waits",
                    "1: arm 1000",
                    "2: changed a.rs",
                    "2: w0 final pull [1] +note",
                ],
            },
            Row {
                name: "a wait for a quiet store ends a quiet time after the last change",
                script: &[
                    (0, Epoch),
                    (0, WaitAll(0, 1000)),
                    (10, Push("py", "a.py", Some(1), 1)),
                    (50, Push("ruff", "b.py", Some(1), 2)),
                    (110, Fire),
                    (150, Fire),
                ],
                said: &[
                    "0: epoch 0",
                    "0: w0 waits",
                    "0: arm 1000",
                    "10: changed a.py",
                    "10: arm 110",
                    "50: changed b.py",
                    "110: arm 150",
                    "150: w0 all a.py:1 b.py:2",
                ],
            },
            Row {
                name: "a wait for a quiet store after a change long past ends at once",
                script: &[
                    (0, Push("py", "a.py", Some(1), 1)),
                    (200, WaitAll(0, 1000)),
                    (201, WaitAll(1, 1000)),
                    (1000, Fire),
                ],
                said: &[
                    "0: changed a.py",
                    "200: w0 waits",
                    "200: w0 all a.py:1",
                    "201: w1 waits",
                    "201: arm 1000",
                    "1000: w1 all a.py:1",
                ],
            },
            Row {
                name: "a working server holds a wait for a quiet store",
                script: &[
                    (0, WaitAll(0, 1000)),
                    (1, Busy("ra", true)),
                    (10, Push("py", "a.py", Some(1), 1)),
                    (500, Busy("ra", false)),
                    (600, Fire),
                ],
                said: &[
                    "0: w0 waits",
                    "0: arm 1000",
                    "10: changed a.py",
                    "500: arm 600",
                    "600: w0 all a.py:1",
                ],
            },
            Row {
                name: "a server with one list: a pull replaces what it pushed",
                script: &[
                    (0, Started("ts", true)),
                    (0, Push("ts", "a.ts", None, 2)),
                    (1, Pull("ts", "a.ts", 1, 1)),
                    (2, All),
                    (3, Push("py", "a.py", None, 2)),
                    (4, Pull("py", "a.py", 1, 1)),
                    (5, All),
                ],
                said: &[
                    "0: changed a.ts",
                    "1: changed a.ts",
                    "2: all a.ts:1",
                    "3: changed a.py",
                    "4: changed a.py",
                    "5: all a.py:3 a.ts:1",
                ],
            },
        ];
        for row in rows {
            assert_eq!(play(row.name, row.script), row.said, "{}", row.name);
        }
    }
}
