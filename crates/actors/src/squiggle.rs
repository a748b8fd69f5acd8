//! The public handle: start a runtime for a workspace, check files, read diagnostics and
//! statuses, shut down.
//!
//! What the runtime knows of each document is owned by the workspace actor
//! ([`workspace`]); the handle sends it requests. How a file's checks keep their order
//! (serve's first poll, the actor's mailbox order, the store's epochs), what each closes and
//! the test that proves it: `docs/ordering.md`.

mod answer_times;
mod batch_deadline;
mod calls;
mod disk_stamps;
mod handed;
mod later;
mod navigation;
mod reach;
mod said_once;
mod server_use;
mod turns;
mod workspace;

pub use server_use::UnusedStopped;

pub use navigation::{ActionInfo, ActionPick, CodeActions, EditFailure, EditMode, EditOutcome};
pub use navigation::{Answer, NavError, Target};

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use ractor::{Actor, ActorRef};
use squiggle_config::{find_root, read_regular_file, Availability, Config, ReadError, ServerSpec};
use squiggle_protocol::{
    delta, merge, not_checked_section, paths, render_feedback_marked, unsearched_section, Baseline,
    Diagnostic, NewMarks, Scope, ServerReport, ServerState, ServerStatus, Unsearched,
};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::ask::ask;
use crate::check::{CheckResult, Skip};
use crate::commands::Commands;
use crate::diagnostics::{
    DiagnosticsActor, DiagnosticsArgs, DiagnosticsMsg, Freshness, List, Snapshot,
};
use crate::events::{Events, LspEvent, EVENT_CAPACITY};
use crate::feedback::{Feedback, NewErrors};
use crate::importers::Importers;
use crate::key::ServerKey;
use crate::lock::lock;
use crate::registry::restarts::Restart;
use crate::registry::{Acquired, ActiveServers, RegistryArgs, RegistryHandle, RestartHint};
use crate::server::ServerHandle;
use crate::watchdog::Watchdog;
use crate::watcher::{DiskChange, WatcherHandle};
use crate::Error;
use turns::Ticket;

/// How much of a file is looked at to decide that it is binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;
/// How many folder entries the workspace scan for languages looks at, at most.
const SCAN_LIMIT: usize = 5_000;
/// At most this many documents changed on disk are synced again at the start of one call (the
/// most recently synced first); the file watcher brings the others.
const MAX_DISK_SYNCS: usize = 64;
/// A check that counts its text as saved when the file holds it, and may be answered by one
/// of the same text under way: what most checks are.
const JOIN_IF_ON_DISK: (Saved, Join) = (Saved::IfOnDisk, Join::SameText);
/// How long a quick question to an actor may take.
const ASK_LIMIT: Duration = Duration::from_secs(5);

/// A running squiggle for one workspace; cheap to clone, all clones share one runtime.
#[derive(Debug, Clone)]
pub struct Squiggle {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    workspace_root: PathBuf,
    config: Arc<Config>,
    commands: Arc<Commands>,
    registry: RegistryHandle,
    /// The active servers, as the registry keeps them.
    active: ActiveServers,
    diagnostics: ActorRef<DiagnosticsMsg>,
    /// The file watcher.
    watcher: WatcherHandle,
    /// Where server states and changed diagnostics are announced.
    events: Events,
    /// What is known of each document, owned by the workspace actor.
    documents: workspace::Workspace,
    /// Held by a look at importers with an edited file's text from before the edit, from its
    /// start until the edit's text handed back is answered (see [`Squiggle::look_before`] and
    /// [`Squiggle::restored`]).
    restoring: Arc<tokio::sync::Mutex<()>>,
    /// Whether a check got a final answer yet: before that, the store's lists are no
    /// baseline for what an edit changed.
    warm: std::sync::atomic::AtomicBool,
    /// The files that import each file, for the errors an edit caused elsewhere.
    importers: Arc<std::sync::Mutex<Importers>>,
    /// The servers this session was told are unavailable.
    said_once: said_once::SaidOnce,
    /// How this host restarts a held server, for the reasons that say it is held.
    restart_hint: RestartHint,
    /// When a check last asked for each server.
    used: server_use::Uses,
    /// The calls from outside: a search after an edit's answer stops when one comes.
    calls: Arc<calls::Calls>,
    /// The last edits' answers, for the searches after them (see [`Squiggle::feedback_later`]).
    answered: later::Answers,
    /// Whether this runtime lives on after its answers, so that an edit's importers are
    /// searched after its answer (see [`Squiggle::search_after_answers`]).
    after_answers: std::sync::atomic::AtomicBool,
}

/// A check under way, with its text, that several callers may await; held weakly, so a check
/// every caller gave up on is dropped (and gives its turn on) rather than kept here.
type UnderWay = (
    Arc<str>,
    futures::future::WeakShared<futures::future::BoxFuture<'static, CheckResult>>,
);

/// A server found (or started) for a check, and when its answer is due.
struct Ready {
    key: ServerKey,
    server: ServerHandle,
    deadline: Instant,
}

/// A text handed to a server, and the port its final answer comes to.
struct Sent {
    ready: Ready,
    answer: ractor::concurrency::OneshotReceiver<Freshness>,
    /// When the text was handed over.
    at: Instant,
}

/// One server's part in a check.
struct ServerOutcome {
    report: ServerReport,
    diagnostics: Option<Vec<List>>,
    timed_out: bool,
}

impl Squiggle {
    /// Starts the runtime for a workspace; no language server starts until a file needs it.
    pub async fn start(workspace_root: impl AsRef<Path>, config: Config) -> Result<Self, Error> {
        let workspace_root = squiggle_protocol::paths::canonicalize(workspace_root.as_ref())
            .map_err(|source| Error::WorkspaceRoot {
                path: workspace_root.as_ref().to_path_buf(),
                source,
            })?;
        let config = Arc::new(config);
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let args = DiagnosticsArgs {
            settle: Duration::from_millis(config.settle_ms),
            workspace_root: workspace_root.clone(),
            events: events.clone(),
        };
        let (diagnostics, _) = Actor::spawn(None, DiagnosticsActor, args).await?;
        let watcher = WatcherHandle::spawn().await?;
        let commands = Arc::new(Commands::new(&workspace_root));
        let active = ActiveServers::default();
        let restart_hint = RestartHint::default();
        let args = RegistryArgs {
            config: config.clone(),
            workspace_root: workspace_root.clone(),
            diagnostics: diagnostics.clone(),
            commands: commands.clone(),
            events: events.clone(),
            watchdog: start_watchdog(),
            watcher: watcher.clone(),
            active: active.clone(),
            restart_hint: restart_hint.clone(),
        };
        let registry = RegistryHandle::spawn(args).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                workspace_root,
                config,
                commands,
                registry,
                active,
                diagnostics,
                watcher,
                events,
                documents: workspace::Workspace::spawn(),
                restoring: Arc::default(),
                warm: std::sync::atomic::AtomicBool::new(false),
                importers: Arc::default(),
                said_once: said_once::SaidOnce::default(),
                restart_hint,
                used: server_use::Uses::default(),
                calls: Arc::default(),
                answered: tokio::sync::watch::Sender::new(Default::default()),
                after_answers: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// The resolved workspace root.
    pub fn workspace_root(&self) -> &Path {
        &self.inner.workspace_root
    }

    /// The configuration this runtime runs with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Makes this runtime search an edit's importers after its answer, for a host that keeps it
    /// running between edits (a daemon, a service, an agent host): each [`Squiggle::feedback`]
    /// looks at them for a third of the time the edited file's own answer took at most (within
    /// `dependent_files_wait_ms`) and says it goes on with the rest; the runtime then checks them
    /// in the background, stopping when a call comes, and tells what the edit broke there with
    /// the next feedback (or by [`Squiggle::feedback_later`], and as [`LspEvent::Caused`]).
    /// Without it (a one-shot check, where nothing goes on after the answer), a feedback looks
    /// at them for `dependent_files_wait_ms`.
    pub fn search_after_answers(&self) {
        (self.inner.after_answers).store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Syncs a file to every server for its type and returns their fresh diagnostics (all
    /// severities). `text`, when given, is the authoritative content; otherwise the file is read.
    /// didSave follows the change only when the file on disk holds the text. Never fails:
    /// problems become an empty result that says why. Checks of one file hand their texts to
    /// the servers in the order they were asked for (their futures first polled), and each
    /// answer belongs to its own text.
    /// The file's diagnostics become its baseline: a later [`Squiggle::feedback`] marks the
    /// errors that were not among them. Each answer moves the diagnostics epoch on
    /// ([`Squiggle::epoch`]), whether a server delivered anything for it or not.
    pub async fn check_file(&self, path: impl AsRef<Path>, text: Option<String>) -> CheckResult {
        self.inner.calls.came();
        self.restored().await;
        let result = self.check(path.as_ref(), text, Saved::IfOnDisk).await;
        self.remember_shown(std::slice::from_ref(&result));
        // Whatever the servers delivered for it, or none (BR-83).
        let _ = (self.inner.diagnostics).cast(DiagnosticsMsg::CheckAnswered);
        result
    }

    /// Checks files together, as [`Squiggle::check_file`] checks each (read from disk), and
    /// returns their results in the same order. Their servers get them all at once and answer
    /// them in turn, so each check may wait its own timeout plus a little for every other file
    /// of the batch (see `batch_deadline`): a folder's deadline grows with its size. Each
    /// checked file's diagnostics become its baseline, as with [`Squiggle::check_file`].
    pub async fn check_files<P: AsRef<Path>>(&self, paths: &[P]) -> Vec<CheckResult> {
        let results = self.check_batch(paths).await;
        self.remember_shown(&results);
        results
    }

    /// [`Squiggle::check_files`] for files about to be shown among an edit's other files:
    /// their baselines stay as they were, so that the feedback can mark what is new in them.
    pub async fn check_files_for_feedback<P: AsRef<Path>>(&self, paths: &[P]) -> Vec<CheckResult> {
        self.check_batch(paths).await
    }

    /// Checks files together (see [`Squiggle::check_files`]), leaving their baselines.
    async fn check_batch<P: AsRef<Path>>(&self, paths: &[P]) -> Vec<CheckResult> {
        self.inner.calls.came();
        self.restored().await;
        let allowance = batch_deadline::allowance(paths.len());
        let checks = paths.iter().map(|path| {
            let path = path.as_ref();
            let ticket = self.ticket(path);
            self.check_in_turn(ticket, path, None, JOIN_IF_ON_DISK, allowance)
        });
        futures::future::join_all(checks).await
    }

    /// Makes each checked result's diagnostics its file's baseline: a later
    /// [`Squiggle::feedback`] marks the errors that were not among them.
    fn remember_shown(&self, results: &[CheckResult]) {
        let baselines: Vec<_> = results.iter().filter_map(shown_baseline).collect();
        (self.inner.documents).tell(move |documents| documents.shown.extend(baselines));
    }

    /// The text the servers of `path` (located) hold, if they hold one.
    async fn held(&self, path: &Path) -> Option<Arc<str>> {
        let path = path.to_path_buf();
        (self.inner.documents)
            .with(move |documents| documents.held.get(&path).cloned())
            .await
    }

    /// [`Squiggle::check_file`], with who says whether the text is saved.
    pub(crate) async fn check(
        &self,
        path: &Path,
        text: Option<String>,
        saved: Saved,
    ) -> CheckResult {
        let ticket = self.ticket(path);
        self.check_in_turn(ticket, path, text, (saved, Join::SameText), Duration::ZERO)
            .await
    }

    /// A place in the queue of `path`'s checks, taken when a check is asked for (before its
    /// first await), so its text reaches the servers after those of earlier checks.
    fn ticket(&self, path: &Path) -> Ticket {
        let [ticket] = self.tickets(path);
        ticket
    }

    /// Tickets for the next `N` checks of `path`, with no other check's between them.
    fn tickets<const N: usize>(&self, path: &Path) -> [Ticket; N] {
        (self.inner.documents).take_turns(&self.locate(path).0)
    }

    /// [`Squiggle::check`], in the turn `ticket` holds; `allowance` is added to its servers'
    /// deadlines (a check among many).
    async fn check_in_turn(
        &self,
        ticket: Ticket,
        path: &Path,
        text: Option<String>,
        (saved, join): (Saved, Join),
        allowance: Duration,
    ) -> CheckResult {
        // No server of a check under way is stopped as unused.
        let _checking = self.inner.used.checking().await;
        let started = Instant::now();
        let inner = &self.inner;
        let (path, file) = self.locate(path);
        if !inner.config.enabled {
            return CheckResult::skipped(file, Skip::Disabled);
        }
        if !path.starts_with(&inner.workspace_root) {
            return CheckResult::skipped(file, Skip::OutsideWorkspace);
        }
        if let Some(folder) = inner.config.excluded_folder(Path::new(&file)) {
            return CheckResult::skipped(file, Skip::Excluded(folder.to_string()));
        }
        let read_from_disk = text.is_none();
        let text = match self.text_of(&path, text).await {
            Ok(text) => text,
            Err(skip) => return CheckResult::skipped(file, skip),
        };
        let keys = self.keys_for(&path).await;
        if keys.is_empty() {
            let disabled: Vec<String> = inner
                .config
                .servers_matching(&path)
                .iter()
                .map(|spec| spec.id.clone())
                .collect();
            let skip = if disabled.is_empty() {
                Skip::NoServer
            } else {
                Skip::ServersDisabled(disabled)
            };
            return CheckResult::skipped(file, skip);
        }
        // didSave tells a server the file on disk holds this text; a text that is not saved
        // yet (a proposed edit) must not make it check the old file.
        let text: Arc<str> = Arc::from(text);
        let saved = match saved {
            Saved::Told => true,
            Saved::IfOnDisk => read_from_disk || file_holds(path.clone(), text.clone()).await,
        };
        // A check of the same file with the same text under way answers this one too: one
        // sync and one wait, however many callers ask at once. Found, or this one noted as
        // under way, in one request: two callers never both start their own.
        let key = (path.clone(), saved);
        let check = (self.clone())
            // The deadlines count from a moment `allowance` later than the check began.
            .sync_and_wait(
                ticket,
                keys,
                path,
                text.clone(),
                saved,
                started + allowance,
                file,
            )
            .boxed()
            .shared();
        if let Some(weak) = check.downgrade() {
            let (key, text) = (key.clone(), text.clone());
            let joined = (inner.documents)
                .with(move |documents| {
                    let under_way = (documents.in_flight.get(&key))
                        .filter(|_| join == Join::SameText)
                        .filter(|(under_way, _)| **under_way == *text)
                        .and_then(|(_, check)| check.upgrade());
                    if under_way.is_none() {
                        documents.in_flight.insert(key, (text, weak));
                    }
                    under_way
                })
                .await;
            if let Some(under_way) = joined {
                // This check, never begun, gives its turn on.
                drop(check);
                return under_way.await;
            }
        }
        let result = check.await;
        (inner.documents).tell(move |documents| {
            let this_one = (documents.in_flight.get(&key))
                .is_some_and(|(under_way, _)| Arc::ptr_eq(under_way, &text));
            if this_one {
                documents.in_flight.remove(&key);
            }
        });
        result
    }

    /// Syncs a text to every server for its file, in the file's turn, and merges their final
    /// answers.
    #[allow(clippy::too_many_arguments)]
    async fn sync_and_wait(
        self,
        mut ticket: Ticket,
        keys: Vec<ServerKey>,
        path: PathBuf,
        text: Arc<str>,
        saved: bool,
        started: Instant,
        file: String,
    ) -> CheckResult {
        let inner = &self.inner;
        let this = &self;
        // Servers are found (or started) at once, outside the turn; the texts are handed over
        // in it, so the servers see the file's texts in the order they were asked for. Each
        // server is handed the text as soon as it is ready: one still starting (or hung in
        // `initialize`) holds up no other's answer, which stands on its own deadline. The turn
        // passes on once every server took the text or gave up.
        let mut acquiring: FuturesUnordered<_> = (keys.into_iter().enumerate())
            .map(|(at, key)| async move { (at, this.acquire(key, started).await) })
            .collect();
        let count = acquiring.len();
        let mut ready_before_turn = Vec::new();
        loop {
            tokio::select! {
                biased;
                () = ticket.turn() => break,
                Some(acquired) = acquiring.next() => ready_before_turn.push(acquired),
            }
        }
        let stamp = saved.then(|| disk_stamps::stamp_of(&path, &text)).flatten();
        // What the servers hold, noted once one took the text (the next check of the file in
        // turn sees it), and, when it is what the disk holds, its stamp, to tell later whether
        // the disk changed.
        let note_handed = |any_took_it: bool| {
            let (at, handed, stamp) = (path.clone(), text.clone(), stamp.clone());
            (inner.documents)
                .with(move |documents| documents.handed_over(&at, &handed, any_took_it, stamp))
        };
        let mut noted = false;
        let mut ticket = Some(ticket);
        let mut answering = FuturesUnordered::new();
        let mut outcomes: Vec<Option<ServerOutcome>> = (0..count).map(|_| None).collect();
        let hand = |(at, acquired): (usize, Result<Ready, Box<ServerOutcome>>)| {
            let sent = acquired.and_then(|ready| this.send(ready, &path, &text, saved));
            let took_it = sent.is_ok();
            let answer = async move {
                let outcome = match sent {
                    Ok(sent) => this.answer_of(sent).await,
                    Err(outcome) => *outcome,
                };
                (at, this.with_reason(outcome).await)
            };
            (took_it, answer.boxed())
        };
        let mut handed_any = false;
        for acquired in ready_before_turn {
            let (took_it, answer) = hand(acquired);
            handed_any |= took_it;
            answering.push(answer);
        }
        loop {
            if handed_any && !noted {
                note_handed(true).await;
                noted = true;
            }
            if acquiring.is_empty() {
                if !noted {
                    note_handed(false).await;
                    noted = true;
                }
                drop(ticket.take());
            }
            tokio::select! {
                Some(acquired) = acquiring.next() => {
                    let (took_it, answer) = hand(acquired);
                    handed_any |= took_it;
                    answering.push(answer);
                }
                Some((at, outcome)) = answering.next() => outcomes[at] = Some(outcome),
                else => break,
            }
        }
        let outcomes = outcomes.into_iter().flatten();
        // Servers that watch the file hear of the change too: once, however many synced it,
        // and after the syncs (so also servers that registered their watchers while starting).
        // A text that is not on disk (a proposed edit, the text from before an edit) is no
        // change on disk: the watcher is not told, and follows what the disk holds.
        if saved {
            inner.watcher.synced(path.clone(), text.clone());
        }
        let mut result = CheckResult {
            file,
            diagnostics: Vec::new(),
            servers: Vec::new(),
            timed_out: Vec::new(),
            skipped: None,
            text: Some(text.clone()),
        };
        let mut lists = Vec::new();
        for outcome in outcomes {
            if outcome.timed_out {
                result.timed_out.push(outcome.report.id.clone());
            }
            lists.extend(outcome.diagnostics.into_iter().flatten());
            result.servers.push(outcome.report);
        }
        result.diagnostics = merge::merge(lists.iter().flat_map(|list| list.iter()));
        if result.outcome().is_checked() {
            inner.warm.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        result
    }

    /// Every file with diagnostics (relative path), merged across servers and sorted: once the
    /// servers hold the texts of the last edit again ([`Squiggle::restored`]).
    pub async fn diagnostics(&self) -> BTreeMap<String, Vec<Diagnostic>> {
        self.restored().await;
        self.store_lists().await
    }

    /// [`Squiggle::diagnostics`] as the store holds them now.
    pub(crate) async fn store_lists(&self) -> BTreeMap<String, Vec<Diagnostic>> {
        let all = ask(&self.inner.diagnostics, DiagnosticsMsg::All, ASK_LIMIT)
            .await
            .unwrap_or_default();
        self.relative(all)
    }

    /// Waits until the last look at importers with an edited file's text from before the
    /// edit handed the edit's text back and had it answered (see [`Squiggle::look_before`]):
    /// until then, the store holds what the servers said of the text from before. Each public
    /// call that checks or reads the store waits for it before it takes its turns (never in
    /// one: the hand-back waits for its own turn).
    async fn restored(&self) {
        drop(self.inner.restoring.lock().await);
    }

    /// A snapshot keyed by paths relative to the workspace root.
    fn relative(&self, snapshot: Snapshot) -> BTreeMap<String, Vec<Diagnostic>> {
        snapshot
            .into_iter()
            .map(|(path, list)| (paths::relative_to(&self.inner.workspace_root, &path), list))
            .collect()
    }

    /// A path as results name it: relative to the workspace root (relative input is taken from
    /// the workspace root).
    pub fn relative_path(&self, path: impl AsRef<Path>) -> String {
        self.locate(path.as_ref()).1
    }

    /// A path as given (relative ones are taken from the workspace root), resolved (`..` and
    /// symlinks), and relative to the workspace root; the resolved path lies inside the
    /// (resolved) root exactly when it starts with it, segment by segment.
    fn locate(&self, path: &Path) -> (PathBuf, String) {
        let root = &self.inner.workspace_root;
        let path = paths::resolve_under(root, &root.join(path));
        let file = paths::relative_to(root, &path);
        (path, file)
    }

    /// Server state changes and changed diagnostics, as they happen; a subscriber that falls
    /// more than 256 events behind loses the oldest.
    pub fn subscribe(&self) -> broadcast::Receiver<LspEvent> {
        self.inner.events.subscribe()
    }

    /// Starts (without waiting for them) the servers for the languages found in the workspace,
    /// one per project root; a broken one is restarted if the restart policy allows it.
    pub async fn start_workspace_servers(&self) {
        let keys: HashSet<ServerKey> = self
            .workspace_samples()
            .await
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        for key in keys {
            self.inner.registry.warm(key);
        }
    }

    /// One file for each (folder, extension) pair of the workspace, with each server (and
    /// project root) that would serve it.
    async fn workspace_samples(&self) -> Vec<(ServerKey, PathBuf)> {
        let root = self.inner.workspace_root.clone();
        let samples =
            tokio::task::spawn_blocking(move || squiggle_config::sample_files(&root, SCAN_LIMIT))
                .await
                .unwrap_or_default();
        let mut found = Vec::new();
        for file in samples {
            for key in self.keys_for(&file).await {
                found.push((key, file.clone()));
            }
        }
        found
    }

    /// Sends `didSave` for a file to its running servers.
    pub async fn save_file(&self, path: impl AsRef<Path>) {
        let (path, _) = self.locate(path.as_ref());
        for server in self.running_servers(&path).await {
            server.save(path.clone());
        }
    }

    /// Keeps the documents checked from now on in step with the disk: one changed on disk by
    /// anyone is synced to its servers again, one deleted is closed (for a long-lived runtime
    /// such as the `squiggle check` daemon, whose callers only ever name files on disk).
    pub fn follow_disk(&self) {
        let (changes, mut news) = tokio::sync::mpsc::unbounded_channel();
        let root = self.inner.workspace_root.clone();
        self.inner.watcher.follow(root, changes);
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            while let Some(change) = news.recv().await {
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                let squiggle = Squiggle { inner };
                match change {
                    DiskChange::Changed(path) => {
                        tokio::spawn(async move { squiggle.follow_change(&path).await });
                    }
                    DiskChange::Deleted(path) => {
                        tracing::debug!(path = %path.display(), "deleted on disk: closed");
                        squiggle.close_file(&path).await;
                    }
                    DiskChange::Written(path) => {
                        // The hook for this write may come after a server answered it.
                        tracing::debug!(path = %path.display(), "written on disk, not synced");
                        tokio::spawn(async move { squiggle.keep_store_before_write(&path).await });
                    }
                }
            }
        });
    }

    /// Syncs a document the watcher saw change on disk, unless its servers already hold what
    /// the disk holds (a hook's check synced the write before the watcher's news of it came): a
    /// second change with the same text would make them analyse it again for nothing.
    async fn follow_change(&self, path: &Path) {
        // In the file's turn: the checks asked for before this one (a hook's, for the write the
        // watcher saw) have handed their texts over first.
        let mut ticket = self.ticket(path);
        ticket.turn().await;
        let on_disk = self.text_of(path, None).await.ok();
        let held = self.held(path).await;
        if on_disk.is_some_and(|text| held.as_ref().is_some_and(|held| **held == *text)) {
            tracing::debug!(path = %path.display(), "changed on disk: its servers hold it already");
            return;
        }
        tracing::debug!(path = %path.display(), "changed on disk: synced again");
        if let Some(held) = held {
            // The hook for this write may come after the servers answered it.
            self.keep_store_before_sync(path, &held).await;
        }
        self.check_in_turn(ticket, path, None, JOIN_IF_ON_DISK, Duration::ZERO)
            .await;
    }

    /// [`Squiggle::close_file`] for each of `paths`, together.
    async fn close_files(&self, paths: &[&Path]) {
        futures::future::join_all(paths.iter().map(|path| self.close_file(path))).await;
    }

    /// Sends `didClose` for a file to its running servers, which then forget its text.
    pub async fn close_file(&self, path: impl AsRef<Path>) {
        let (path, _) = self.locate(path.as_ref());
        let closed = path.clone();
        (self.inner.documents)
            .with(move |documents| documents.closed(&closed))
            .await;
        for server in self.running_servers(&path).await {
            server.close(path.clone());
        }
    }

    /// The servers (with their roots) that handle this file. `path` is resolved (as `locate`
    /// gives it, or found below the resolved root without following links), so the roots found
    /// above it are too. Of each role, the first member whose command is found is used, found
    /// by a file lookup (once per runtime, never a probe): a later member is looked at only
    /// when those before it are not found; when none is, the first (for its install hint).
    async fn keys_for(&self, path: &Path) -> Vec<ServerKey> {
        let inner = &self.inner;
        let roles = inner.config.roles_for(path);
        let chosen = roles.iter().map(|role| async move {
            for member in role {
                if inner.commands.starts(member).await {
                    return Some(*member);
                }
            }
            role.first().copied()
        });
        let mut chosen: Vec<&ServerSpec> = futures::future::join_all(chosen)
            .await
            .into_iter()
            .flatten()
            .collect();
        chosen.sort_by(|a, b| a.id.cmp(&b.id));
        chosen
            .into_iter()
            .map(|spec| {
                let root = find_root(path, &inner.workspace_root, &spec.root_markers);
                ServerKey {
                    id: spec.id.clone(),
                    root,
                }
            })
            .collect()
    }

    /// Whether a server's command can run here (found, and its version flag works), found out
    /// once per runtime. A check does not wait for this probe.
    pub async fn availability(&self, spec: &ServerSpec) -> Availability {
        self.inner.commands.availability(spec).await
    }

    /// The active servers for a file, without starting any.
    async fn running_servers(&self, path: &Path) -> Vec<ServerHandle> {
        self.keys_for(path)
            .await
            .iter()
            .filter_map(|key| self.inner.active.get(key).map(|server| server.clone()))
            .collect()
    }

    /// The current diagnostics epoch; it advances whenever any server publishes.
    pub async fn epoch(&self) -> u64 {
        ask(&self.inner.diagnostics, DiagnosticsMsg::Epoch, ASK_LIMIT)
            .await
            .unwrap_or_default()
    }

    /// Like [`Squiggle::diagnostics`], once the epoch passed `after_epoch` and the servers went
    /// quiet, waiting at most `wait` (then with what is known).
    pub async fn diagnostics_after(
        &self,
        after_epoch: u64,
        wait: Duration,
    ) -> BTreeMap<String, Vec<Diagnostic>> {
        self.restored().await;
        self.store_lists_after(after_epoch, wait).await
    }

    /// [`Squiggle::diagnostics_after`], without waiting for [`Squiggle::restored`].
    pub(crate) async fn store_lists_after(
        &self,
        after_epoch: u64,
        wait: Duration,
    ) -> BTreeMap<String, Vec<Diagnostic>> {
        let deadline = Instant::now() + wait;
        let message = |reply| DiagnosticsMsg::AllAfter {
            after: after_epoch,
            deadline,
            reply,
        };
        let all = ask(&self.inner.diagnostics, message, wait + ASK_LIMIT)
            .await
            .unwrap_or_default();
        self.relative(all)
    }

    /// Checks an edited (or written) file and returns the text its tool result should carry:
    /// the file's errors, and the errors the edit caused in other files (for [`Scope::Write`],
    /// every other file's errors), capped; for a file that was not checked, first a line that
    /// says so and why. Never fails: the text is empty only when the file was checked and
    /// nothing is to be reported.
    ///
    /// First, the open documents changed on disk since they were synced are synced again
    /// ([`Squiggle::sync_disk`]). A file shown before (by a check or a feedback of this
    /// runtime) has a baseline: its errors that are not the same as one of then are new, come
    /// first in its block and are marked `NEW `.
    ///
    /// The files that import the edited one (TypeScript, JavaScript, Python; at most
    /// `max_dependent_files`) are checked after the edit's own answer; those with errors are
    /// compared with their answer from before the edit (their last, while the servers held
    /// the same texts, or one asked for with the text from before handed to the servers for
    /// the time of that look): what is new in them is what the edit caused there. "Before" is
    /// the text the servers last synced of the file or, when the host has it, `prior`: the
    /// file's text before the edit (Claude Code's `originalFile`). With neither, the importers
    /// are not searched. In a runtime that searches after its answers
    /// ([`Squiggle::search_after_answers`]), the answer looks at them only briefly, and the
    /// search goes on after it; what the searches after earlier answers found (errors those
    /// edits caused in other files, that still stand) comes after the edit's own blocks, once,
    /// and in [`Feedback::earlier`].
    pub async fn feedback(
        &self,
        path: impl AsRef<Path>,
        text: Option<String>,
        scope: Scope,
        prior: Option<String>,
    ) -> Feedback {
        let path = path.as_ref();
        let later = (self.inner.after_answers).load(std::sync::atomic::Ordering::Relaxed);
        let began = Instant::now();
        self.inner.calls.came();
        // Once the last look's hand-back is answered, the turns are taken before anything else
        // is awaited, as the check is asked for: the edit's, then the two a look at the
        // importers from before the edit may take (the text from before it, then the edit's
        // again).
        self.restored().await;
        let [ticket, back, again] = self.tickets(path);
        let (located, _) = self.locate(path);
        self.close_costly(&located).await;
        self.sync_disk(&[path]).await;
        // The text from before the edit: the host's copy, else what the servers hold.
        let held = self.held(&located).await;
        let before_text: Option<Arc<str>> = prior.map(Arc::from).or(held);
        // A file never opened: its servers read the text from before the edit from disk. The
        // importers' answers kept for the texts the servers hold now are theirs from before
        // the edit, unless the servers hold another text of the file than the one from before
        // (it changed on disk in between, say).
        let before_hash = before_text.as_deref().map(disk_stamps::hash_of);
        let at = located.clone();
        let (kept_hold, state_before) = (self.inner.documents)
            .with(move |documents| {
                let handed = &mut documents.handed;
                let kept_hold = before_hash.is_some_and(|hash| {
                    handed.seen_before(&at, hash);
                    handed.last(&at) == Some(hash)
                });
                (kept_hold, handed.state())
            })
            .await;
        // The store before the edit: as it is, unless the servers were handed the edit from
        // the disk already (the watcher saw the write first), or read it there while they held
        // no text of it, and it was kept before that.
        let store_before = match (kept_hold, &before_text) {
            (false, Some(before)) => self.store_before_sync(&located, before).await,
            _ => self.store_before_written(&located, text.as_deref()).await,
        };
        let kept_before = store_before.is_some();
        let store_before = match store_before {
            Some(kept) => kept,
            None => self.store_before().await,
        };
        let epoch = self.epoch().await;
        // The edit's own answer first: nothing of the search runs before it.
        let check = (self.check_in_turn(ticket, path, text, JOIN_IF_ON_DISK, Duration::ZERO)).await;
        let answered = began.elapsed();
        // The texts the edit's answer is for (a look with the text from before hands the
        // edit's back after it).
        let state_after = self.texts_state().await;
        let outcome = check.outcome();
        // Answered quickly: searched as an importer again (a busy server may have made one of
        // its checks slow, or a cold one).
        if outcome.is_checked() && answered < crate::server::COSTLY {
            let quick = located.clone();
            (self.inner.documents).tell(move |documents| {
                documents.slow_importers.remove(&quick);
            });
        }
        let mut text = match outcome.reason() {
            Some(reason) => not_checked_section(&check.file, reason),
            None => String::new(),
        };
        if check.skipped.is_some() {
            return Feedback {
                text,
                check,
                others: BTreeMap::new(),
                new: NewMarks::new(),
                unsearched: Unsearched::default(),
                earlier: Vec::new(),
                unfinished: Vec::new(),
            };
        }
        let before_unknown = before_text.is_none() && check.text.is_some();
        // The importers, when what they saw of the file changed and the edit has an answer
        // (else what it caused elsewhere is not known either).
        let texts = match (before_text, check.text.clone()) {
            (Some(before), Some(after)) if before != after => Some((before, after)),
            _ => None,
        };
        let known_from = kept_hold.then_some(state_before);
        // How long each look at the importers takes (`dependent_files_wait_ms`); when a
        // search goes on after the answer, both looks share one brief window.
        let configured = Duration::from_millis(self.inner.config.dependent_files_wait_ms);
        let brief = later.then(|| {
            let wait = later::wait_before_later(answered, configured);
            reach::Window::of(wait).handing_on()
        });
        let window = || {
            brief
                .clone()
                .unwrap_or_else(|| reach::Window::of(configured))
        };
        let mut reached = match (&texts, outcome.is_checked()) {
            (Some((before, after)), true) => {
                let errors = &check.diagnostics;
                (self.search_importers(&located, (before, after), errors, known_from, window()))
                    .await
            }
            _ => reach::Searched::default(),
        };
        let known = std::mem::take(&mut reached.known);
        let opened_here = std::mem::take(&mut reached.opened);
        let (importers, after) = (&reached.importers, &reached.after);
        let looked = began.elapsed();
        // The importers' lists in the store are no baseline (those the search opened had none
        // before), answered in time or not: only the search speaks for them.
        let searched: Vec<String> = (importers.iter()).map(|p| self.relative_path(p)).collect();
        let searched: HashSet<&str> = searched.iter().map(String::as_str).collect();
        // A call that handed the servers no new text of the file (the text they held, known,
        // checked again) changed nothing: what changed in the store meanwhile (a search after
        // an earlier answer landing) is not its doing.
        let changed = kept_before || texts.is_some() || before_unknown;
        let mut caused = match changed {
            true => (self.caused_in_store(&check, epoch, &store_before, &searched)).await,
            false => BTreeMap::new(),
        };
        let mut others = match scope {
            Scope::Edit => BTreeMap::new(),
            Scope::Write => {
                let wait = Duration::from_millis(self.inner.config.other_files_wait_ms);
                let mut all = self.store_lists_after(epoch, wait).await;
                for checked in after
                    .iter()
                    .flatten()
                    .filter(|check| check.outcome().is_checked())
                {
                    all.insert(checked.file.clone(), checked.diagnostics.clone());
                }
                all.retain(|file, diagnostics| *file != check.file && !diagnostics.is_empty());
                all
            }
        };
        let searched_texts = match outcome.is_checked() {
            true => texts.clone(),
            false => None,
        };
        // The importers with errors now whose errors from before are not known: looked at
        // with the text from before, for the time of the look.
        let before = match texts {
            Some(texts) => {
                let found = reach::Found {
                    importers,
                    after,
                    known,
                    opened: opened_here,
                };
                (self.answers_before(&located, texts, found, (back, again), window())).await
            }
            // Not searched: nothing opened, nothing known.
            None => {
                drop((back, again));
                known
            }
        };
        caused.extend(reach::caused_in_importers(&before, after));
        // A write shows every other file's errors the servers report (the open ones', the
        // importers' checked): there, what was there before is not needed to show them.
        let shows_all = scope == Scope::Write;
        let mut unsearched = match (before_unknown, outcome.is_checked()) {
            (true, true) => self.unsearched_before_unknown(&located, shows_all).await,
            _ => self.unsearched(&reached, &before, shows_all).await,
        };
        unsearched.later = later;
        tracing::debug!(
            file = %check.file,
            answered_ms = answered.as_millis() as u64,
            importers = importers.len(),
            importers_answered = after.iter().flatten().count(),
            looked_ms = looked.as_millis() as u64,
            before_known = before.iter().flatten().count(),
            unsearched = unsearched.files,
            done_ms = began.elapsed().as_millis() as u64,
            "feedback: the edit's answer, the importers after it, those looked at before it"
        );
        // What the searches after earlier answers found (this call stopped those under way),
        // before this answer is kept: its own search is told with the next.
        let news = self.earlier_news(true).await;
        if let Some(after) = check.text.as_deref() {
            self.keep_answered(later::Answered {
                path: located.clone(),
                after: disk_stamps::hash_of(after),
                texts: searched_texts,
                errors: check.diagnostics.clone(),
                known_from,
                state: state_after,
                named: caused.keys().cloned().collect(),
                unsearched,
                calls: self.inner.calls.count(),
                taken: false,
                running: false,
                found: None,
                told: false,
            });
        }
        if scope == Scope::Edit {
            others = caused.clone();
        }
        let new = self.mark_new(&check, scope, &others, &caused).await;
        let caps = self.inner.config.caps();
        text.push_str(&render_feedback_marked(
            &check.file,
            &check.diagnostics,
            &others,
            &caps,
            &new,
        ));
        text.push_str(&unsearched_section(&check.file, &unsearched));
        text.push_str(&news.text);
        Feedback {
            text,
            check,
            others,
            new,
            unsearched,
            earlier: news.earlier,
            unfinished: news.unfinished,
        }
    }

    /// Closes the documents costly to check (see the open set) on the servers of `edited`,
    /// before its edit reaches them: they would analyse those again for it. Not during the look
    /// at importers, where a close would have them analyse the importers again. A document one
    /// server closed is closed on all, and no longer held: nothing reports on it now. Nor is it
    /// searched as an importer for a while, like one a search found too slow: its check, of 1 s
    /// or more, would not end within the search's time, and its server would go on with it
    /// after, holding up the next answers (pyright spends 14 s on isort's `core.py` here).
    async fn close_costly(&self, edited: &Path) {
        let mut closed = Vec::new();
        for server in self.running_servers(edited).await {
            closed.extend(server.close_costly(edited.to_path_buf(), ASK_LIMIT).await);
        }
        closed.sort();
        closed.dedup();
        let costly = closed.clone();
        (self.inner.documents).tell(move |documents| {
            for path in costly {
                tracing::debug!(path = %path.display(), "costly to check: not searched for a while");
                documents.slow_importers.insert(path, Instant::now());
            }
        });
        let closed: Vec<&Path> = closed.iter().map(PathBuf::as_path).collect();
        self.close_files(&closed).await;
    }

    /// Which errors of a feedback are new against each file's baseline (files without one get
    /// no marks), and the baselines moved on to what this feedback shows: the edited file's
    /// when it was checked, and with [`Scope::Write`] every other file's (none: clean).
    async fn mark_new(
        &self,
        check: &CheckResult,
        scope: Scope,
        others: &BTreeMap<String, Vec<Diagnostic>>,
        caused: &BTreeMap<String, Vec<Diagnostic>>,
    ) -> NewMarks {
        let mut new = NewMarks::new();
        // What the edit caused in other files: new against each file before the edit.
        for (file, diagnostics) in others {
            if let Some(caused) = caused.get(file) {
                let flags = (diagnostics.iter()).map(|diagnostic| caused.contains(diagnostic));
                new.insert(file.clone(), flags.collect());
            }
        }
        let (check, others) = (check.clone(), others.clone());
        let shown_now = shown_baseline(&check);
        (self.inner.documents)
            .with(move |documents| {
                let shown = &mut documents.shown;
                if let Some(baseline) = shown.get(&check.file) {
                    let text = check.text.as_deref();
                    let flags = baseline.new_flags(&check.diagnostics, text);
                    new.insert(check.file.clone(), flags);
                }
                for (file, diagnostics) in &others {
                    if new.contains_key(file) {
                        continue;
                    }
                    if let Some(baseline) = shown.get(file) {
                        new.insert(file.clone(), baseline.new_flags(diagnostics, None));
                    }
                }
                shown.extend(shown_now);
                if scope == Scope::Write {
                    for (file, baseline) in shown.iter_mut() {
                        if *file != check.file && !others.contains_key(file) {
                            *baseline = Baseline::default();
                        }
                    }
                    for (file, diagnostics) in others {
                        shown.insert(file, Baseline::of(&diagnostics, None));
                    }
                }
                new
            })
            .await
    }

    /// Syncs again every open document read from the disk whose file changed since (a `sed -i`, a
    /// formatter, another tool of the agent), however shortly before this call, and waits for
    /// its servers' answers; closes those deleted. It compares size and modification time
    /// with what was synced, and the content's hash when those cannot tell; it does not wait
    /// for the file watcher. The files in `except` (those the caller checks next) are left to
    /// the caller; at most 64 are synced (the most recently synced first), the watcher brings
    /// the others.
    pub async fn sync_disk(&self, except: &[&Path]) {
        let except: HashSet<PathBuf> = except.iter().map(|path| self.locate(path).0).collect();
        let stamps: Vec<(PathBuf, disk_stamps::Stamp)> = (self.inner.documents)
            .with(move |documents| {
                (documents.stamps.iter())
                    .filter(|(path, _)| !except.contains(*path))
                    .map(|(path, stamp)| (path.clone(), stamp.clone()))
                    .collect()
            })
            .await;
        if stamps.is_empty() {
            return;
        }
        let limit = self.inner.config.max_file_bytes;
        let looked = tokio::task::spawn_blocking(move || {
            stamps
                .into_iter()
                .map(|(path, stamp)| {
                    let found = disk_stamps::look(&path, &stamp, limit);
                    (path, stamp, found)
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let mut changed = Vec::new();
        for (path, stamp, found) in looked {
            match found {
                disk_stamps::Found::Same(None) => {}
                disk_stamps::Found::Same(Some(fresh)) => {
                    (self.inner.documents).tell(move |documents| {
                        // Unless another sync stamped it in between.
                        if documents.stamps.get(&path) == Some(&stamp) {
                            documents.stamps.insert(path, fresh);
                        }
                    });
                }
                disk_stamps::Found::Changed => changed.push((path, stamp.read_at)),
                disk_stamps::Found::Gone => {
                    tracing::debug!(path = %path.display(), "gone from the disk: closed");
                    self.close_file(&path).await;
                }
            }
        }
        // The documents used last first: those are the ones a call reports on.
        changed.sort_by_key(|(_, read_at)| std::cmp::Reverse(*read_at));
        changed.truncate(MAX_DISK_SYNCS);
        let syncs = changed.iter().map(|(path, _)| {
            tracing::debug!(path = %path.display(), "changed on disk: synced again");
            self.check(path, None, Saved::IfOnDisk)
        });
        futures::future::join_all(syncs).await;
    }

    /// The errors in these files that were not there at the previous call for each file (all of
    /// a file's errors the first time), keyed by source, code, severity and message.
    pub async fn new_errors<P: AsRef<Path>>(&self, paths: &[P]) -> NewErrors {
        let snapshot = self.diagnostics().await;
        let files: Vec<String> = (paths.iter())
            .map(|path| self.locate(path.as_ref()).1)
            .collect();
        let files = (self.inner.documents)
            .with(move |documents| {
                let baselines = &mut documents.delta_baselines;
                let mut found = BTreeMap::new();
                for file in files {
                    let current = snapshot.get(&file).map(Vec::as_slice).unwrap_or_default();
                    let new = delta::new_errors(baselines.get(&file), current);
                    baselines.insert(file.clone(), delta::baseline_of(current));
                    if !new.is_empty() {
                        found.insert(file, new);
                    }
                }
                found
            })
            .await;
        NewErrors {
            text: delta::render_delta(&files),
            files,
        }
    }

    /// The status of every server squiggle has tried to use, sorted by id, with how each did
    /// this session (crashes, checks, timeouts, answer times: BR-67).
    pub async fn status(&self) -> Vec<ServerStatus> {
        let mut statuses = (self.inner.registry.status(ASK_LIMIT).await).unwrap_or_default();
        // Each status names its root relative to the workspace root, as the keys do not.
        let root = self.inner.workspace_root.clone();
        let named: Vec<(String, String)> = (statuses.iter())
            .map(|status| (status.id.clone(), status.root.clone()))
            .collect();
        let times = (self.inner.documents)
            .with(move |documents| {
                let of = |(id, at): &(String, String)| {
                    let times = (documents.answer_times.iter()).find(|(key, _)| {
                        key.id == *id && paths::relative_to(&root, &key.root) == *at
                    });
                    times.map(|(_, times)| times.clone()).unwrap_or_default()
                };
                named.iter().map(of).collect::<Vec<_>>()
            })
            .await;
        for (status, times) in statuses.iter_mut().zip(times) {
            status.metrics = times.metrics(status.metrics.crashes);
        }
        statuses
    }

    /// Says how this host restarts a server held after a crash loop (or too many restarts),
    /// for the reasons that say it is held from now on: `{id}` stands for the server's id, as
    /// in "run `squiggle restart {id}`". Unset, they say "restart it explicitly".
    pub fn set_restart_hint(&self, hint: impl Into<String>) {
        *crate::lock::lock(&self.inner.restart_hint) = Some(hint.into());
    }

    /// Restarts the broken servers with this id (every one when `None`) whose restart cooldown
    /// has passed, even those held after a crash loop, and waits for each to start (at most
    /// `first_touch_timeout_ms`). Returns the status of every server squiggle has tried with
    /// that id, afterwards: a broken one's reason says why it was not restarted.
    pub async fn restart(&self, id: Option<&str>) -> Vec<ServerStatus> {
        let inner = &self.inner;
        let keys = (inner.registry.keys(id.map(String::from), ASK_LIMIT))
            .await
            .unwrap_or_default();
        let limit = Duration::from_millis(inner.config.first_touch_timeout_ms);
        let attempts = keys.into_iter().map(|(key, state)| async move {
            if state != ServerState::Broken {
                return (key, None);
            }
            let acquired = inner
                .registry
                .acquire(key.clone(), Restart::Explicit, limit)
                .await;
            (key, Some(acquired))
        });
        let attempts = futures::future::join_all(attempts).await;
        let statuses = self.status().await;
        let mut restarted: Vec<ServerStatus> = attempts
            .into_iter()
            .filter_map(|(key, attempt)| {
                let root = paths::relative_to(&inner.workspace_root, &key.root);
                let mut status = statuses
                    .iter()
                    .find(|s| s.id == key.id && s.root == root)?
                    .clone();
                match attempt {
                    Some(Some(Acquired::Unusable { state, reason })) => {
                        (status.state, status.reason, status.pid) = (state, Some(reason), None);
                    }
                    Some(None) => status.state = ServerState::Starting,
                    Some(Some(Acquired::Ready { .. })) | None => {}
                }
                Some(status)
            })
            .collect();
        restarted.sort_by(|a, b| (&a.id, &a.root).cmp(&(&b.id, &b.root)));
        restarted
    }

    /// Shuts every server down (gracefully, then by force) and stops the runtime.
    pub async fn shutdown(&self) {
        let inner = &self.inner;
        // How each server did this session, in the log (BR-67).
        for status in self.status().await {
            let metrics = &status.metrics;
            if !metrics.is_empty() {
                tracing::info!(
                    server = %status.id,
                    root = %status.root,
                    crashes = metrics.crashes,
                    checks = metrics.checks,
                    timed_out = metrics.timed_out,
                    answer_median_ms = metrics.answer_median_ms,
                    answer_p90_ms = metrics.answer_p90_ms,
                    "server metrics for this session"
                );
            }
        }
        inner
            .registry
            .shutdown(Duration::from_secs(15), ASK_LIMIT)
            .await;
        let _ = inner.diagnostics.stop_and_wait(None, Some(ASK_LIMIT)).await;
        inner.watcher.stop(ASK_LIMIT).await;
    }

    /// The text to check: the given text, or the file's content (read off the runtime's
    /// workers), if it is not binary or too large.
    async fn text_of(&self, path: &Path, text: Option<String>) -> Result<String, Skip> {
        let limit = self.inner.config.max_file_bytes;
        match text {
            Some(text) => checkable(text, limit),
            None => {
                let path = path.to_path_buf();
                tokio::task::spawn_blocking(move || read_text(&path, limit))
                    .await
                    .unwrap_or_else(|err| Err(Skip::Unreadable(err.to_string())))
            }
        }
    }

    /// A check's server for `key`, found or started within the first-touch deadline, and when
    /// its answer is due; or the outcome that says why there is none.
    async fn acquire(&self, key: ServerKey, started: Instant) -> Result<Ready, Box<ServerOutcome>> {
        let inner = &self.inner;
        inner.used.note(&key);
        let config = &inner.config;
        // A server's own time (one whose answer waits for a build) counts when it is longer.
        let spec = config.servers.get(&key.id);
        let longer = |global: u64, own: Option<u64>| {
            Duration::from_millis(global.max(own.unwrap_or_default()))
        };
        let first_touch_limit = longer(
            config.first_touch_timeout_ms,
            spec.and_then(|spec| spec.first_touch_timeout_ms),
        );
        let later_limit = longer(
            config.diagnostic_timeout_ms,
            spec.and_then(|spec| spec.timeout_ms),
        );
        let active = inner.active.get(&key).map(|server| server.clone());
        let acquired = match active {
            Some(server) => Some(Acquired::Ready {
                server,
                first_touch: false,
            }),
            None => {
                inner
                    .registry
                    .acquire(key.clone(), Restart::Automatic, first_touch_limit)
                    .await
            }
        };
        match acquired {
            Some(Acquired::Ready {
                server,
                first_touch,
            }) => {
                let limit = if first_touch {
                    first_touch_limit
                } else {
                    later_limit
                };
                Ok(Ready {
                    key,
                    server,
                    deadline: started + limit,
                })
            }
            Some(Acquired::Unusable { state, reason }) => {
                Err(Box::new(self.outcome(&key, state, Some(reason), false)))
            }
            None => Err(Box::new(self.outcome(
                &key,
                ServerState::Starting,
                Some("still starting when the deadline passed".to_string()),
                true,
            ))),
        }
    }

    /// Hands the text to a ready server. One message: the server registers the wait with the
    /// store before it sends the change, and the store answers the returned port directly.
    fn send(
        &self,
        ready: Ready,
        path: &Path,
        text: &Arc<str>,
        saved: bool,
    ) -> Result<Sent, Box<ServerOutcome>> {
        let sync = ready
            .server
            .sync(path.to_path_buf(), text.clone(), saved, ready.deadline);
        match sync {
            Some(answer) => Ok(Sent {
                ready,
                answer,
                at: Instant::now(),
            }),
            // The reason comes with the answer (it takes asking the registry).
            None => Err(Box::new(self.outcome(
                &ready.key,
                ServerState::Broken,
                None,
                false,
            ))),
        }
    }

    /// Waits for a server's final answer to a text it was sent, within the deadline, and notes
    /// how long it took (see [`Squiggle::status`]).
    async fn answer_of(&self, sent: Sent) -> ServerOutcome {
        let (key, at) = (sent.ready.key.clone(), sent.at);
        let outcome = self.final_answer_of(sent).await;
        let (took, timed_out) = (at.elapsed(), outcome.timed_out);
        (self.inner.documents).tell(move |documents| {
            (documents.answer_times.entry(key).or_default()).note(took, timed_out);
        });
        outcome
    }

    /// [`Squiggle::answer_of`], the answer itself.
    async fn final_answer_of(&self, sent: Sent) -> ServerOutcome {
        let Sent { ready, answer, .. } = sent;
        let Ready {
            key,
            server,
            deadline,
        } = ready;
        // The store answers by the deadline itself; the extra second only guards against a lost reply.
        let limit = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
        let answer = tokio::time::timeout(limit, answer)
            .await
            .ok()
            .and_then(Result::ok);
        let active = |reason: &str| Some(reason.to_string());
        match answer {
            Some(Freshness::Final { lists, basis, note }) => {
                let mut outcome = self.outcome(&key, ServerState::Active, note, false);
                outcome.report.basis = Some(basis);
                outcome.diagnostics = Some(lists);
                outcome
            }
            Some(Freshness::Superseded) => self.outcome(
                &key,
                ServerState::Active,
                active(
                    "a later change to the file reached the server before its answer for this text",
                ),
                false,
            ),
            Some(Freshness::Failed(reason)) => {
                self.outcome(&key, ServerState::Active, Some(reason), false)
            }
            Some(Freshness::Unsettled { lists, unfinished }) => {
                // Still at work, or stopped mid-work: a live server answers the probe at once.
                server.probe();
                let reason = match unfinished {
                    Some(what) => format!("{what}; results may be incomplete"),
                    None => "still working when the deadline passed; results may be incomplete"
                        .to_string(),
                };
                let mut outcome = self.outcome(&key, ServerState::Active, Some(reason), true);
                outcome.diagnostics = Some(lists);
                outcome
            }
            Some(Freshness::ServerGone) => self.outcome(&key, ServerState::Broken, None, false),
            Some(Freshness::TimedOut) | None => {
                // Nothing at all: a hung server would make every later check wait as long.
                server.probe();
                self.outcome(
                    &key,
                    ServerState::Active,
                    active("no diagnostics before the deadline"),
                    true,
                )
            }
        }
    }

    /// The outcome, with the registry's reason when its server broke and it has none.
    async fn with_reason(&self, mut outcome: ServerOutcome) -> ServerOutcome {
        let report = &outcome.report;
        if report.status == ServerState::Broken && report.reason.is_none() {
            let reason = self
                .status()
                .await
                .into_iter()
                .find(|s| s.id == report.id && s.root == report.root)
                .and_then(|s| s.reason);
            outcome.report.reason =
                Some(reason.unwrap_or_else(|| "the server went away".to_string()));
        }
        outcome
    }

    /// A server's part in a check that brought no diagnostics (yet): its state and why.
    fn outcome(
        &self,
        key: &ServerKey,
        status: ServerState,
        reason: Option<String>,
        timed_out: bool,
    ) -> ServerOutcome {
        ServerOutcome {
            report: ServerReport {
                id: key.id.clone(),
                root: paths::relative_to(&self.inner.workspace_root, &key.root),
                status,
                reason,
                basis: None,
                required: self
                    .inner
                    .config
                    .servers
                    .get(&key.id)
                    .is_some_and(|s| s.required),
            },
            diagnostics: None,
            timed_out,
        }
    }
}

/// Makes a checked file's diagnostics its baseline (what was last shown of it): the errors a
/// later feedback finds that are not among them are new. A file that was not checked keeps
/// the baseline it had.
fn shown_baseline(result: &CheckResult) -> Option<(String, Baseline)> {
    let baseline = Baseline::of(&result.diagnostics, result.text.as_deref());
    (result.outcome().is_checked()).then(|| (result.file.clone(), baseline))
}

/// Whether a check may be answered by one of the same file and text under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Join {
    /// Yes: one sync and one wait, however many callers ask at once.
    SameText,
    /// No: the text is handed over in this check's own turn (a look at the importers hands
    /// over the text from before an edit and the edit's again, in order, whatever else runs).
    Never,
}

/// Whether a checked text counts as saved, so that didSave follows the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Saved {
    /// When the file on disk holds exactly the text (or the text was read from it).
    IfOnDisk,
    /// The host said the file was saved.
    Told,
}

/// The text of a file on disk, if it is a regular file (not a FIFO or device) and a checkable
/// text; blocking, so it runs off the runtime's workers.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, Skip> {
    let content = read_regular_file(path, limit).map_err(|err| match err {
        ReadError::TooLarge { bytes, limit } => Skip::TooLarge { bytes, limit },
        other => Skip::Unreadable(other.to_string()),
    })?;
    let text = String::from_utf8(content).map_err(|_| Skip::Binary)?;
    checkable(text, limit)
}

/// A text if it may be sent to servers: not over the limit, not binary.
fn checkable(text: String, limit: u64) -> Result<String, Skip> {
    let bytes = text.len() as u64;
    if bytes > limit {
        return Err(Skip::TooLarge { bytes, limit });
    }
    if text
        .as_bytes()
        .iter()
        .take(BINARY_SNIFF_BYTES)
        .any(|b| *b == 0)
    {
        return Err(Skip::Binary);
    }
    Ok(text)
}

/// Whether the regular file on disk holds exactly `text`. One `stat` on the worker settles
/// most cases (another size, not a regular file); only the read of a same-size file goes off
/// the runtime's workers.
async fn file_holds(path: PathBuf, text: Arc<str>) -> bool {
    let size = text.len() as u64;
    let metadata = std::fs::metadata(&path).ok().filter(|m| m.is_file());
    if metadata.map(|m| m.len()) != Some(size) {
        return false;
    }
    let read = move || read_regular_file(&path, size).is_ok_and(|c| c == text.as_bytes());
    tokio::task::spawn_blocking(read).await.unwrap_or(false)
}

/// The guard against squiggle being killed outright; without it, servers still die with
/// squiggle (parent-death signal) but what they started may not.
#[cfg(unix)]
fn start_watchdog() -> Option<Arc<Watchdog>> {
    match Watchdog::spawn() {
        Ok(watchdog) => Some(Arc::new(watchdog)),
        Err(err) => {
            tracing::warn!(%err, "no watchdog: servers' own children may outlive a killed squiggle");
            None
        }
    }
}

/// None on Windows: each server's Job Object dies with squiggle by itself.
#[cfg(windows)]
fn start_watchdog() -> Option<Arc<Watchdog>> {
    None
}
