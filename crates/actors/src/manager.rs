//! `LspManager`: the runtime for tick-driven hosts (a TUI or an event loop that must never
//! block): fire-and-forget notifications in, polled events and snapshots out.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use squiggle_config::Config;
use squiggle_protocol::{Diagnostic, Severity};
use tokio::sync::{broadcast, mpsc, watch};

use crate::events::{LspEvent, EVENT_CAPACITY};
use crate::lock::lock;
use crate::squiggle::Saved;
use crate::Squiggle;

/// How long changes to one file are coalesced before anything is sent.
pub const COALESCE: Duration = Duration::from_millis(200);

/// Error and warning counts and every file's diagnostics, for a problems panel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiagnosticsSnapshot {
    /// Errors across all files.
    pub total_errors: usize,
    /// Warnings across all files.
    pub total_warnings: usize,
    /// Files (relative paths, sorted) with their diagnostics, errors first.
    pub by_file: Vec<(String, Vec<Diagnostic>)>,
}

/// A non-blocking handle on squiggle for hosts that poll once per tick.
#[derive(Debug)]
pub struct LspManager {
    runtime: Option<tokio::runtime::Runtime>,
    config: Config,
    shared: Arc<Shared>,
}

/// A change waiting out the coalescing time.
#[derive(Debug, Default)]
struct Pending {
    /// Which change this is; a newer one replaces it.
    generation: u64,
    /// The file's text.
    text: String,
    /// The host said the file was saved while the change waited: didSave goes with it.
    saved: bool,
}

/// What the manager's tasks and its host share.
#[derive(Debug)]
struct Shared {
    /// The runtime for the current root, once started.
    squiggle: watch::Sender<Option<Squiggle>>,
    /// Held while the runtime starts, so that it starts once.
    starting: tokio::sync::Mutex<()>,
    /// Events not polled yet, oldest first, at most `EVENT_CAPACITY`.
    events: Mutex<VecDeque<LspEvent>>,
    /// Every file's diagnostics as last announced.
    diagnostics: Mutex<BTreeMap<String, Vec<Diagnostic>>>,
    /// Changes waiting out the coalescing time, per file.
    pending: Mutex<HashMap<PathBuf, Pending>>,
    /// Per file, how many notifications are still being worked on.
    busy: Mutex<HashMap<PathBuf, usize>>,
    /// Signalled whenever a file's work ends.
    idle: Condvar,
    /// Files whose check ended, told to the event pump: it keeps the events the check caused
    /// before it counts the file as settled.
    ended: mpsc::UnboundedSender<PathBuf>,
    /// The other end, taken by the pump when the runtime starts.
    ended_rx: Mutex<Option<mpsc::UnboundedReceiver<PathBuf>>>,
}

impl LspManager {
    /// A manager with its own small runtime; nothing starts until [`LspManager::ensure_started`].
    pub fn new(config: Config) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("squiggle")
            .enable_all()
            .build()?;
        let (ended, ended_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            squiggle: watch::channel(None).0,
            starting: tokio::sync::Mutex::new(()),
            events: Mutex::default(),
            diagnostics: Mutex::default(),
            pending: Mutex::default(),
            busy: Mutex::default(),
            idle: Condvar::new(),
            ended,
            ended_rx: Mutex::new(Some(ended_rx)),
        });
        Ok(Self {
            runtime: Some(runtime),
            config,
            shared,
        })
    }

    /// Starts squiggle for a workspace root and the servers for the languages in it. Calling it
    /// again is cheap; it also restarts a broken server the restart policy allows.
    pub fn ensure_started(&self, root: impl AsRef<Path>) {
        let Some(runtime) = &self.runtime else { return };
        let root = root.as_ref().to_path_buf();
        let shared = self.shared.clone();
        let config = self.config.clone();
        runtime.spawn(async move {
            let _starting = shared.starting.lock().await;
            let current = shared.squiggle.borrow().clone();
            let squiggle = match current {
                Some(squiggle) => squiggle,
                None => match Squiggle::start(&root, config).await {
                    Ok(squiggle) => {
                        let ended = lock(&shared.ended_rx).take();
                        tokio::spawn(pump(squiggle.subscribe(), ended, shared.clone()));
                        shared.squiggle.send_replace(Some(squiggle.clone()));
                        squiggle
                    }
                    Err(err) => {
                        tracing::warn!(%err, "squiggle did not start");
                        return;
                    }
                },
            };
            squiggle.start_workspace_servers().await;
        });
    }

    /// Restarts the servers that broke, once their cooldown has passed (an explicit restart,
    /// which `max_automatic_restarts = 0` waits for). Returns at once.
    pub fn restart_stopped(&self) {
        self.on_runtime(|squiggle| async move {
            squiggle.restart(None).await;
        });
    }

    /// A file's new text: the first call opens it, later calls change it; calls within 200 ms
    /// of each other are coalesced into one. Returns at once.
    pub fn notify_file_changed(&self, path: impl AsRef<Path>, text: impl Into<String>) {
        let Some(runtime) = &self.runtime else { return };
        let path = path.as_ref().to_path_buf();
        let generation = {
            let mut pending = lock(&self.shared.pending);
            let entry = pending.entry(path.clone()).or_default();
            entry.generation += 1;
            entry.text = text.into();
            entry.generation
        };
        self.shared.begin(&path);
        let shared = self.shared.clone();
        runtime.spawn(async move {
            tokio::time::sleep(COALESCE).await;
            let change = {
                let mut pending = lock(&shared.pending);
                match pending.get(&path) {
                    Some(latest) if latest.generation == generation => pending.remove(&path),
                    _ => None, // A newer change will be sent instead.
                }
            };
            if let (Some(change), Some(squiggle)) = (change, shared.runtime().await) {
                let saved = if change.saved {
                    Saved::Told
                } else {
                    Saved::IfOnDisk
                };
                squiggle.check(&path, Some(change.text), saved).await;
                // Through the pump, which keeps the events the check caused first.
                if shared.ended.send(path.clone()).is_ok() {
                    return;
                }
            }
            shared.end(&path);
        });
    }

    /// A file was saved (a pending change is sent with its didSave). Returns at once.
    pub fn notify_file_saved(&self, path: impl AsRef<Path>) {
        let path = path.as_ref().to_path_buf();
        if let Some(pending) = lock(&self.shared.pending).get_mut(&path) {
            pending.saved = true;
            return;
        }
        self.on_runtime(|squiggle| async move { squiggle.save_file(&path).await });
    }

    /// A file was closed: a pending change is dropped and the servers forget it. Returns at once.
    pub fn notify_file_closed(&self, path: impl AsRef<Path>) {
        let path = path.as_ref().to_path_buf();
        lock(&self.shared.pending).remove(&path);
        self.on_runtime(|squiggle| async move { squiggle.close_file(&path).await });
    }

    /// Up to `budget` events, oldest first, without waiting.
    pub fn poll_events(&self, budget: usize) -> Vec<LspEvent> {
        let mut events = lock(&self.shared.events);
        let take = budget.min(events.len());
        events.drain(..take).collect()
    }

    /// The diagnostics known now, without waiting.
    pub fn snapshot(&self) -> DiagnosticsSnapshot {
        let diagnostics = lock(&self.shared.diagnostics);
        let count = |severity| {
            diagnostics
                .values()
                .flatten()
                .filter(|d| d.severity == severity)
                .count()
        };
        let by_file = diagnostics
            .iter()
            .map(|(file, items)| {
                let mut items = items.clone();
                items.sort_by(|a, b| {
                    (a.severity, a.line, a.column).cmp(&(b.severity, b.line, b.column))
                });
                (file.clone(), items)
            })
            .collect();
        DiagnosticsSnapshot {
            total_errors: count(Severity::Error),
            total_warnings: count(Severity::Warning),
            by_file,
        }
    }

    /// Blocks the calling thread until the changes notified for `paths` were sent and their
    /// diagnostics settled, or `timeout` passed; returns whether they settled. For the end of a
    /// tool batch, not for a render loop.
    pub fn wait_for_settle<P: AsRef<Path>>(&self, paths: &[P], timeout: Duration) -> bool {
        let busy = lock(&self.shared.busy);
        let waiting = |busy: &mut HashMap<PathBuf, usize>| {
            paths.iter().any(|p| busy.contains_key(p.as_ref()))
        };
        match self.shared.idle.wait_timeout_while(busy, timeout, waiting) {
            Ok((_, result)) => !result.timed_out(),
            Err(_) => false,
        }
    }

    /// Shuts every server down and stops the runtime; blocks for at most a few seconds.
    pub fn shutdown(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        let squiggle = self.shared.squiggle.send_replace(None);
        if let Some(squiggle) = squiggle {
            let (done, stopped) = std::sync::mpsc::channel();
            runtime.spawn(async move {
                squiggle.shutdown().await;
                let _ = done.send(());
            });
            let _ = stopped.recv_timeout(Duration::from_secs(15));
        }
        runtime.shutdown_background();
    }

    /// Runs `work` with the runtime once it has started, without waiting for it.
    fn on_runtime<F, Fut>(&self, work: F)
    where
        F: FnOnce(Squiggle) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let Some(runtime) = &self.runtime else { return };
        let shared = self.shared.clone();
        runtime.spawn(async move {
            if let Some(squiggle) = shared.runtime().await {
                work(squiggle).await;
            }
        });
    }
}

impl Drop for LspManager {
    fn drop(&mut self) {
        // Dropping the runtime drops the server actors, whose process groups are killed.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Shared {
    /// The runtime, waiting for `ensure_started` if it has not finished yet.
    async fn runtime(&self) -> Option<Squiggle> {
        let mut receiver = self.squiggle.subscribe();
        let started = receiver.wait_for(Option::is_some).await.ok()?;
        started.clone()
    }

    fn begin(&self, path: &Path) {
        *lock(&self.busy).entry(path.to_path_buf()).or_default() += 1;
    }

    fn end(&self, path: &Path) {
        let mut busy = lock(&self.busy);
        if let Some(count) = busy.get_mut(path) {
            *count -= 1;
            if *count == 0 {
                busy.remove(path);
            }
        }
        self.idle.notify_all();
    }

    /// Keeps an event for the host, dropping the oldest when full, and tracks diagnostics.
    fn keep(&self, event: LspEvent) {
        if let LspEvent::Diagnostics { path, items } = &event {
            let mut diagnostics = lock(&self.diagnostics);
            if items.is_empty() {
                diagnostics.remove(path);
            } else {
                diagnostics.insert(path.clone(), items.clone());
            }
        }
        let mut events = lock(&self.events);
        if events.len() == EVENT_CAPACITY {
            events.pop_front();
        }
        events.push_back(event);
    }
}

/// Moves the runtime's events into the host's queue, and counts a checked file as settled once
/// the events its check caused are kept (the store announces them before it answers a check,
/// so they are in the channel by the time the check's end is told here).
async fn pump(
    mut events: broadcast::Receiver<LspEvent>,
    ended: Option<mpsc::UnboundedReceiver<PathBuf>>,
    shared: Arc<Shared>,
) {
    let Some(mut ended) = ended else {
        return; // A pump runs already.
    };
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Ok(event) => shared.keep(event),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "event subscriber fell behind");
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            Some(path) = ended.recv() => {
                loop {
                    match events.try_recv() {
                        Ok(event) => shared.keep(event),
                        Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                        Err(_) => break,
                    }
                }
                shared.end(&path);
            }
        }
    }
}
