//! The daemon: a warm squiggle for one workspace behind a Unix socket. It greets each
//! connection at once and answers one request per connection, only from this user, and exits
//! when idle, when asked, when its socket is removed, when its workspace root is deleted,
//! moved away or replaced, or on SIGTERM/SIGINT, waiting for each of these without polling;
//! its servers die with it (and with a SIGKILL, through their parent-death signal and the
//! watchdog).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use squiggle_actors::Squiggle;
use squiggle_protocol::paths;
use tokio::io::BufReader;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Notify;

use super::accept::Failures;
use super::budget::{physical_memory, Budget};
use super::key::DaemonKey;
use super::log::{self, note};
use super::path_watch::{Identity, PathWatch, Watched};
use super::paths::{make_private, open_private, runtime_dir, uid};
use super::process::record_pid;
use super::warm_file::{self, now_ms, WarmState};
use super::wire::{self, DaemonStatus, Reply, Request, MAX_REQUEST};
use super::{evict, memory};
use crate::check_request;

/// How a held server of the daemon is restarted, said in its reason.
const RESTART_HINT: &str = "run `squiggle restart {id}`";
/// How many connections a daemon serves at once; one more is told at once that the daemon is
/// busy (its check then runs in its own process), so that idle connections cannot take every
/// file descriptor.
const MAX_CONNECTIONS: usize = 128;
/// How long a stopping daemon lets the checks under way finish before it shuts its servers
/// down (within `squiggle daemon stop`'s wait).
const DRAIN_LIMIT: Duration = Duration::from_secs(10);
/// How long a connected client has to send its request.
const REQUEST_LIMIT: Duration = Duration::from_secs(10);
/// How long a new daemon waits for the key's lock while another holds it without serving.
const LOCK_LIMIT: Duration = Duration::from_secs(15);
/// The index of the socket among the daemon's watched paths.
const SOCKET: usize = 0;
/// The longest idle time: `daemon_idle_seconds` above it (up to `u64::MAX`) counts as this,
/// a year.
const MAX_IDLE: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// What the connections of a daemon share.
#[derive(Debug)]
struct Daemon {
    squiggle: Squiggle,
    root: PathBuf,
    /// Which folder the root was at start.
    root_identity: Option<Identity>,
    started: Instant,
    idle: Duration,
    last_request: Mutex<Instant>,
    active: AtomicUsize,
    checks: AtomicU64,
    /// How many checks are under way.
    checking: AtomicUsize,
    /// When a check last began or ended (or the daemon started), in ms since the epoch.
    last_use_ms: AtomicU64,
    /// The runtime folder, for the other daemons' warm-state files.
    dir: PathBuf,
    /// Its key's name.
    key_name: String,
    /// This user's warm budget, as its configuration says.
    budget: Budget,
    /// Held while the warm-state file is written: the state a write takes is the last written
    /// (connections write at the same time; an older state written last would show a check
    /// under way that ended).
    warm_writes: Mutex<()>,
    /// Woken when a check ends (for stopping unused servers).
    checked: Notify,
    stop: Notify,
    /// Woken each time a connection ends.
    ended: Notify,
}

/// Counts a check as under way while it lives, and tells the warm-state file.
#[derive(Debug)]
struct Checking<'a>(&'a Daemon);

impl<'a> Checking<'a> {
    /// Marks a check as begun.
    fn begin(daemon: &'a Daemon) -> Self {
        daemon.checking.fetch_add(1, Ordering::SeqCst);
        daemon.last_use_ms.store(now_ms(), Ordering::SeqCst);
        daemon.write_warm_state(None);
        Checking(daemon)
    }
}

impl Drop for Checking<'_> {
    fn drop(&mut self) {
        self.0.last_use_ms.store(now_ms(), Ordering::SeqCst);
        self.0.checking.fetch_sub(1, Ordering::SeqCst);
        self.0.write_warm_state(None);
        self.0.checked.notify_one();
    }
}

/// Counts a connection as active while it lives.
#[derive(Debug)]
struct Active<'a>(&'a Daemon);

impl<'a> Active<'a> {
    /// Marks a connection as begun.
    fn begin(daemon: &'a Daemon) -> Self {
        daemon.active.fetch_add(1, Ordering::SeqCst);
        daemon.touch();
        Active(daemon)
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.touch();
        self.0.active.fetch_sub(1, Ordering::SeqCst);
        self.0.ended.notify_waiters();
    }
}

impl Daemon {
    /// Writes this daemon's warm-state file (see [`warm_file`]), with its memory when measured.
    fn write_warm_state(&self, memory: Option<u64>) {
        let _writing = self.warm_writes.lock().unwrap_or_else(|e| e.into_inner());
        let state = WarmState {
            pid: std::process::id(),
            root: self.root.clone(),
            last_use_ms: self.last_use_ms.load(Ordering::SeqCst),
            checking: self.checking.load(Ordering::SeqCst),
            memory,
        };
        let path = warm_file::path_of(&self.dir, &self.key_name);
        if let Err(err) = warm_file::write(&path, &state) {
            note(format_args!("cannot write {}: {err}", path.display()));
        }
    }

    /// After a check: measures this daemon with its servers for its warm-state file, then
    /// stops the least recently used idle daemons of this user beyond the warm budget.
    async fn keep_budget(self: Arc<Self>) {
        let pid = std::process::id();
        let measured = tokio::task::spawn_blocking(move || memory::of_tree(pid)).await;
        self.write_warm_state(measured.ok().flatten());
        evict::keep_budget(&self.dir, &self.key_name, self.budget).await;
    }

    /// Stops the servers no check asked for within `unused_for`, looking again when the next
    /// one is due; without a timer from when none runs until a check comes.
    async fn stop_unused_servers(self: Arc<Self>, unused_for: Duration) {
        let mut next: Option<Duration> = None;
        loop {
            match next {
                Some(wait) => tokio::time::sleep(wait).await,
                None => {
                    self.checked.notified().await;
                    tokio::time::sleep(unused_for).await;
                }
            }
            let done = self.squiggle.stop_unused_servers(unused_for).await;
            for (id, root) in &done.stopped {
                note(format_args!(
                    "stopped {id} ({root}): no check asked for it in {unused_for:?}"
                ));
            }
            next = done.next;
        }
    }

    /// Whether an eviction that saw `last_use_ms` may stop this daemon: no check is under
    /// way, and none came since. (A check whose connection is open but whose request has not
    /// come yet is still answered: a stopping daemon drains its connections first.)
    fn evictable(&self, last_use_ms: u64) -> bool {
        self.checking.load(Ordering::SeqCst) == 0
            && self.last_use_ms.load(Ordering::SeqCst) <= last_use_ms
    }

    /// Notes that a request came or ended now.
    fn touch(&self) {
        if let Ok(mut last) = self.last_request.lock() {
            *last = Instant::now();
        }
    }

    /// Whether no request came for the idle time and none is under way.
    fn idle_over(&self) -> bool {
        let last = self.last_request.lock().map(|last| *last).ok();
        self.active.load(Ordering::SeqCst) == 0
            && last.is_some_and(|last| last.elapsed() >= self.idle)
    }

    /// The soonest the daemon can be idle long enough to exit: the idle time after the last
    /// request, or while one is under way, the idle time (at least a second) from now; it is
    /// looked at again then.
    fn idle_deadline(&self) -> tokio::time::Instant {
        let now = Instant::now();
        let last = self.last_request.lock().map(|last| *last).unwrap_or(now);
        let at = match self.active.load(Ordering::SeqCst) {
            0 => last.checked_add(self.idle),
            _ => now.checked_add(self.idle.max(Duration::from_secs(1))),
        };
        let at = at.unwrap_or_else(|| now + MAX_IDLE);
        tokio::time::Instant::from_std(at)
    }

    /// Waits until no connection is under way (the checks in flight answered), at most
    /// [`DRAIN_LIMIT`]; returns how many are still under way.
    async fn drain(&self) -> usize {
        let deadline = tokio::time::Instant::now() + DRAIN_LIMIT;
        loop {
            let ended = self.ended.notified();
            let active = self.active.load(Ordering::SeqCst);
            if active == 0 || tokio::time::timeout_at(deadline, ended).await.is_err() {
                return self.active.load(Ordering::SeqCst);
            }
        }
    }

    /// Tells a connection over [`MAX_CONNECTIONS`] that the daemon is busy.
    async fn refuse_busy(self: Arc<Self>, stream: UnixStream) {
        let (_, mut write) = stream.into_split();
        let hello = Reply::Hello {
            pid: std::process::id(),
            root: self.root_identity,
        };
        let busy = Reply::Failed {
            error: format!("the daemon serves {MAX_CONNECTIONS} connections already"),
        };
        if wire::write_message(&mut write, &hello).await.is_ok() {
            let _ = wire::write_message(&mut write, &busy).await;
        }
    }

    /// What `squiggle daemon status` shows.
    async fn status(&self) -> DaemonStatus {
        let rss_bytes = memory::rss(std::process::id());
        DaemonStatus {
            root: self.root.clone(),
            pid: std::process::id(),
            uptime_secs: self.started.elapsed().as_secs(),
            checks: self.checks.load(Ordering::SeqCst),
            rss_bytes,
            idle_exit_secs: self.idle.as_secs(),
            servers: self.squiggle.status().await,
            memory_with_servers: memory::of_tree(std::process::id()),
            last_use_secs: (self.checks.load(Ordering::SeqCst) > 0)
                .then(|| now_ms().saturating_sub(self.last_use_ms.load(Ordering::SeqCst)) / 1000),
            checking: self.checking.load(Ordering::SeqCst),
        }
    }

    /// Answers one connection: checks the peer is this user, greets it, reads a request,
    /// answers it.
    async fn serve(self: Arc<Self>, stream: UnixStream) {
        let peer = stream.peer_cred().map(|cred| cred.uid());
        if peer.as_ref().ok() != Some(&uid()) {
            note(format_args!("refused a connection from user {peer:?}"));
            return;
        }
        let _active = Active::begin(&self);
        let (read, mut write) = stream.into_split();
        let hello = Reply::Hello {
            pid: std::process::id(),
            root: self.root_identity,
        };
        if wire::write_message(&mut write, &hello).await.is_err() {
            return;
        }
        let mut reader = BufReader::new(read);
        let request = tokio::time::timeout(
            REQUEST_LIMIT,
            wire::read_message::<Request>(&mut reader, MAX_REQUEST),
        )
        .await;
        let request = match request {
            Ok(Ok(request)) => request,
            Ok(Err(err)) => {
                let reply = Reply::Failed {
                    error: format!("bad request: {err}"),
                };
                let _ = wire::write_message(&mut write, &reply).await;
                return;
            }
            Err(_) => return,
        };
        let checked = matches!(request, Request::Check { .. });
        let reply = match request {
            // A check whose caller hung up (a host's hook timed out, a check was interrupted)
            // is cancelled: it would hold its connection's slot for nothing.
            Request::Check { request } => tokio::select! {
                reply = self.check(&request) => reply,
                () = wire::hung_up(&mut reader) => {
                    let first = request.files.first().map(|file| file.display().to_string());
                    note(format_args!(
                        "cancelled a check of {} ({} files): its caller hung up",
                        first.unwrap_or_default(),
                        request.files.len()
                    ));
                    return;
                }
            },
            Request::Status => Reply::Status {
                status: self.status().await,
            },
            Request::Restart { server } => Reply::Restarted {
                servers: self.squiggle.restart(server.as_deref()).await,
            },
            Request::Stop => {
                self.stop.notify_one();
                Reply::Stopping
            }
            Request::Evict { last_use_ms } => match self.evictable(last_use_ms) {
                true => {
                    note(format_args!("asked to stop for the warm budget"));
                    self.stop.notify_one();
                    Reply::Stopping
                }
                false => Reply::Kept,
            },
        };
        if let Err(err) = wire::write_message(&mut write, &reply).await {
            note(format_args!("could not answer: {err}"));
        }
        if checked {
            // After the answer: a check never waits for the budget.
            tokio::spawn(self.clone().keep_budget());
        }
    }

    /// Answers a check of files inside the workspace root.
    async fn check(&self, request: &check_request::CheckRequest) -> Reply {
        if let Some(outside) = request
            .files
            .iter()
            .find(|f| !paths::is_within(&self.root, f))
        {
            return Reply::Failed {
                error: format!(
                    "{} is outside the daemon's workspace {}",
                    outside.display(),
                    self.root.display()
                ),
            };
        }
        self.checks.fetch_add(1, Ordering::SeqCst);
        let _checking = Checking::begin(self);
        match check_request::answer(&self.squiggle, request).await {
            Ok(answer) => Reply::Checked { answer },
            Err(err) => Reply::Failed {
                error: format!("{err:#}"),
            },
        }
    }
}

/// Runs the daemon for the workspace at `root` with `config`, under `expected` (the name the
/// client computed); returns the exit code.
pub async fn run(
    root: PathBuf,
    config: squiggle_actors::Config,
    expected: &str,
) -> anyhow::Result<u8> {
    let key = DaemonKey::of(&root, &config);
    anyhow::ensure!(
        key.name() == expected,
        "the configuration is not the one the daemon was started for ({} != {expected}); \
         it changed in between, or was made another way",
        key.name()
    );
    log::open(format_args!("starting for {}", root.display()));
    log::limit(log::MAX_LOG_BYTES);
    let dir = runtime_dir()?;
    let socket = dir.join(format!("{}.sock", key.name()));
    let lock_path = dir.join(format!("{}.lock", key.name()));
    let Some(mut lock) = take_lock(&lock_path, &socket).await? else {
        note(format_args!("another daemon serves {}", root.display()));
        return Ok(0);
    };
    // For clients that must find this daemon when it does not answer.
    record_pid(&mut lock).context("cannot write the pid into the lock file")?;
    let root_identity = Identity::of(&root);
    // The lock is ours, so any socket left is a dead daemon's.
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)
        .with_context(|| format!("cannot listen on {}", socket.display()))?;
    make_private(&socket)?;
    let socket_identity = Identity::of(&socket).context("the socket vanished")?;
    let idle = idle_time(config.daemon_idle_seconds);
    let budget = Budget::of(&config, physical_memory());
    let server_idle = (config.daemon_server_idle_seconds > 0)
        .then(|| idle_time(config.daemon_server_idle_seconds));
    let squiggle = Squiggle::start(&root, config).await?;
    squiggle.follow_disk();
    squiggle.search_after_answers();
    squiggle.set_restart_hint(RESTART_HINT);
    note(format_args!(
        "serving {} on {}",
        root.display(),
        socket.display()
    ));
    let daemon = Arc::new(Daemon {
        squiggle: squiggle.clone(),
        root: root.clone(),
        root_identity,
        started: Instant::now(),
        idle,
        last_request: Mutex::new(Instant::now()),
        active: AtomicUsize::new(0),
        checks: AtomicU64::new(0),
        checking: AtomicUsize::new(0),
        last_use_ms: AtomicU64::new(now_ms()),
        dir: dir.clone(),
        key_name: key.name(),
        budget,
        warm_writes: Mutex::new(()),
        checked: Notify::new(),
        stop: Notify::new(),
        ended: Notify::new(),
    });
    // Nothing polls while idle: the loop wakes for a connection, a signal, a change in the
    // socket's folder or in the root, or the idle deadline. The root itself is watched: its
    // deletion, move or replacement reaches its own watch.
    let mut watched = vec![Watched {
        path: socket.clone(),
        identity: socket_identity,
        folder: dir.clone(),
    }];
    watched.extend(root_identity.map(|identity| Watched {
        path: root.clone(),
        identity,
        folder: root.clone(),
    }));
    daemon.write_warm_state(None);
    if let Some(unused_for) = server_idle {
        tokio::spawn(daemon.clone().stop_unused_servers(unused_for));
    }
    let watch = PathWatch::new(watched);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut failures = Failures::default();
    let why = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    failures.succeeded();
                    // Counted now, before the idle deadline is looked at again: a connection
                    // accepted at the deadline is answered, not dropped by an idle exit.
                    daemon.touch();
                    if daemon.active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                        tokio::spawn(daemon.clone().refuse_busy(stream));
                    } else {
                        tokio::spawn(daemon.clone().serve(stream));
                    }
                }
                Err(err) => {
                    // Out of file descriptors, every try fails at once: wait, do not spin.
                    let after = failures.failed(Instant::now());
                    if let Some(count) = after.log {
                        note(format_args!(
                            "accept failed ({count} times since the last such line): {err}; \
                             waiting up to 500 ms between tries"
                        ));
                    }
                    tokio::time::sleep(after.wait).await;
                }
            },
            () = daemon.stop.notified() => break "asked to stop",
            _ = terminate.recv() => break "terminated",
            _ = tokio::signal::ctrl_c() => break "interrupted",
            gone = watch.gone() => match gone {
                SOCKET => break "its socket was removed",
                _ => break "its workspace root was deleted, moved or replaced",
            },
            () = tokio::time::sleep_until(daemon.idle_deadline()) => {
                if daemon.idle_over() {
                    break "idle";
                }
            }
        }
    };
    note(format_args!("exiting ({why})"));
    // No longer warm: the budget does not count it.
    let _ = std::fs::remove_file(warm_file::path_of(&dir, &key.name()));
    // New clients find no socket (and start a new daemon once this one let go of the lock).
    if watch.is_ours(SOCKET) {
        let _ = std::fs::remove_file(&socket);
    }
    drop(listener);
    // The checks under way answer before their servers go.
    let left = daemon.drain().await;
    if left > 0 {
        note(format_args!(
            "{left} connections still under way after {DRAIN_LIMIT:?}"
        ));
    }
    squiggle.shutdown().await;
    // Removed while still held: a daemon that opened it meanwhile finds, once it has the lock,
    // that the name no longer stands for it, and takes the lock anew (see `take_lock`).
    let _ = std::fs::remove_file(&lock_path);
    drop(lock);
    Ok(0)
}

/// The idle time for `daemon_idle_seconds`: at least a second, so that a new daemon outlives
/// the connect of the client that started it even with 0, and at most [`MAX_IDLE`].
fn idle_time(seconds: u64) -> Duration {
    Duration::from_secs(seconds.clamp(1, MAX_IDLE.as_secs()))
}

/// Takes the key's lock, so that two daemons never serve one key. `None` when another daemon
/// holds it and serves; a daemon that holds it without serving (one that is stopping) is
/// waited for.
async fn take_lock(path: &Path, socket: &Path) -> anyhow::Result<Option<std::fs::File>> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    let deadline = Instant::now() + LOCK_LIMIT;
    loop {
        let file = open_private(path, &mut options)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let taken =
            rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok();
        // The lock holds only if the name still stands for the file locked: a daemon that
        // exits removes its lock file before it lets go of it.
        if taken && still_named(&file, path) {
            return Ok(Some(file));
        }
        if taken {
            continue;
        }
        if UnixStream::connect(socket).await.is_ok() || Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether `path` still names the open `file` (same device and inode).
fn still_named(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_lock_file_removed_under_its_holder_is_not_named_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.lock");
        let file = std::fs::File::create(&path).unwrap();
        assert!(still_named(&file, &path));
        std::fs::remove_file(&path).unwrap();
        assert!(!still_named(&file, &path), "removed");
        std::fs::File::create(&path).unwrap();
        assert!(!still_named(&file, &path), "made again: another file");
    }

    #[test]
    fn the_idle_time_is_between_a_second_and_a_year() {
        assert_eq!(idle_time(0), Duration::from_secs(1));
        assert_eq!(idle_time(900), Duration::from_secs(900));
        assert_eq!(idle_time(u64::MAX), MAX_IDLE);
    }
}
