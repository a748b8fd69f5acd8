//! The client side: ask the workspace's daemon, starting it when none runs. Every failure is
//! an error the caller answers by checking in its own process.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use squiggle_actors::Config;
use tokio::io::BufReader;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;

use super::key::DaemonKey;
use super::path_watch::Identity;
use super::paths::{log_dir, open_private, runtime_dir};
use super::process;
use super::wire::{self, Reply, Request, MAX_REPLY};
use crate::check_request::{CheckAnswer, CheckRequest};

/// How long a daemon has to greet a connection. It greets from its accept loop at once,
/// whatever its checks are doing, so only a hung daemon (stopped, deadlocked) or something
/// else listening on its socket misses this; a check may take longer once greeted.
pub const HELLO_LIMIT: Duration = Duration::from_secs(2);
/// How long a started daemon has to open its socket.
const START_LIMIT: Duration = Duration::from_secs(10);
/// The size over which a daemon log is started afresh, in bytes.
const MAX_LOG: u64 = 1 << 20;
/// How often the socket is tried while a daemon starts.
const START_POLL: Duration = Duration::from_millis(3);

/// A connection to a daemon that greeted it.
#[derive(Debug)]
struct Greeted {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    /// Which folder its root was when it started.
    root: Option<Identity>,
}

impl Greeted {
    /// Sends a request and reads the reply, within `limit`.
    async fn ask(mut self, request: &Request, limit: Duration) -> anyhow::Result<Reply> {
        let exchange = async {
            wire::write_message(&mut self.writer, request).await?;
            wire::read_message::<Reply>(&mut self.reader, MAX_REPLY).await
        };
        tokio::time::timeout(limit, exchange)
            .await
            .context("the daemon did not answer in time")?
            .context("the daemon's connection failed")
    }
}

/// What is found at a daemon socket.
#[derive(Debug)]
enum Reach {
    /// A daemon, which greeted the connection.
    Greeted(Greeted),
    /// Nothing: no socket, or one no one listens on (or that hung up at once).
    Absent,
    /// Something that accepts connections but did not greet one within its time: a hung
    /// daemon, or another program.
    Silent,
}

/// Connects to a socket and waits up to `limit` for the daemon's greeting.
async fn reach(socket: &Path, limit: Duration) -> Reach {
    let deadline = tokio::time::Instant::now() + limit;
    let stream = match tokio::time::timeout_at(deadline, UnixStream::connect(socket)).await {
        Ok(Ok(stream)) => stream,
        // A full backlog: a listener that does not accept.
        Ok(Err(err)) if err.kind() == std::io::ErrorKind::WouldBlock => return Reach::Silent,
        Ok(Err(_)) => return Reach::Absent,
        Err(_) => return Reach::Silent,
    };
    let (read, writer) = stream.into_split();
    let mut reader = BufReader::new(read);
    let hello = wire::read_message::<Reply>(&mut reader, MAX_REPLY);
    match tokio::time::timeout_at(deadline, hello).await {
        Ok(Ok(Reply::Hello { root, .. })) => Reach::Greeted(Greeted {
            reader,
            writer,
            root,
        }),
        Ok(Err(err)) if err.kind() == std::io::ErrorKind::UnexpectedEof => Reach::Absent,
        Ok(_) | Err(_) => Reach::Silent,
    }
}

/// Checks through the workspace's daemon, starting one (and retiring the workspace's daemons
/// of other configurations or builds) when none runs for this configuration. A daemon that
/// does not greet within [`HELLO_LIMIT`] is ended when it is this user's squiggle daemon
/// (and a fresh one started); anything else on its socket makes this check fall back.
pub async fn check(
    root: &Path,
    config: &Config,
    request: &CheckRequest,
) -> anyhow::Result<CheckAnswer> {
    let dir = runtime_dir()?;
    let key = DaemonKey::of(root, config);
    let socket = dir.join(format!("{}.sock", key.name()));
    let message = Request::Check {
        request: request.clone(),
    };
    let limit = answer_limit(config);
    let socket_then = Identity::of(&socket);
    let found = match reach(&socket, HELLO_LIMIT).await {
        Reach::Greeted(daemon) => match (daemon.root, Identity::of(root)) {
            (Some(then), Some(now)) if then != now => {
                retire_replaced(&socket, socket_then, daemon).await;
                None
            }
            _ => Some(daemon),
        },
        Reach::Absent => None,
        Reach::Silent => {
            retire_silent(&dir, &key, &socket, socket_then).await?;
            None
        }
    };
    let daemon = match found {
        Some(daemon) => daemon,
        None => {
            retire_others(&dir, &key);
            let child = start(root, &key)?;
            wait_for(&socket, child).await?
        }
    };
    match daemon.ask(&message, limit).await? {
        Reply::Checked { answer } => Ok(answer),
        Reply::Failed { error } => anyhow::bail!("the daemon could not check: {error}"),
        other => anyhow::bail!("the daemon answered {other:?}"),
    }
}

/// Retires a daemon whose workspace root was deleted and made again since it started (it
/// serves a folder that is gone): its socket is removed and it is asked to stop.
async fn retire_replaced(socket: &Path, socket_then: Option<Identity>, daemon: Greeted) {
    if socket_then.is_some() && Identity::of(socket) == socket_then {
        let _ = std::fs::remove_file(socket);
    }
    let _ = daemon.ask(&Request::Stop, HELLO_LIMIT).await;
}

/// Ends this user's daemon of `key` that did not greet in time and removes its socket, or,
/// when the socket is not such a daemon's, says so (once, on stderr) and fails, so that the
/// check runs in this process.
async fn retire_silent(
    dir: &Path,
    key: &DaemonKey,
    socket: &Path,
    socket_then: Option<Identity>,
) -> anyhow::Result<()> {
    let Some(daemon) = process::of_key(dir, key) else {
        eprintln!(
            "squiggle: {} does not answer and is not a squiggle daemon of this user; checking \
             in this process",
            socket.display()
        );
        anyhow::bail!("something else listens on the daemon's socket");
    };
    eprintln!(
        "squiggle: the daemon for {} (pid {}) did not answer within {HELLO_LIMIT:?}; ended it",
        daemon.root.display(),
        daemon.pid
    );
    // Gone (and its lock free) before a new daemon is started in its place.
    anyhow::ensure!(
        process::kill(daemon.pid).await,
        "the daemon (pid {}) did not end",
        daemon.pid
    );
    // Unless another client, quicker to retire it, already started a new daemon there.
    if socket_then.is_some() && Identity::of(socket) == socket_then {
        let _ = std::fs::remove_file(socket);
    }
    Ok(())
}

/// How long a check may take the daemon: a first touch of a server, with room to spare.
fn answer_limit(config: &Config) -> Duration {
    let ms = config.initialize_timeout_ms
        + config.first_touch_timeout_ms
        + config.other_files_wait_ms
        + config.diagnostic_timeout_ms;
    Duration::from_millis(ms * 2) + Duration::from_secs(10)
}

/// Connects to a socket and asks, the greeting within [`HELLO_LIMIT`] and the answer within
/// `limit`. `None` when nothing answers there (see [`Reach`]).
pub async fn ask(socket: &Path, request: &Request, limit: Duration) -> anyhow::Result<Reply> {
    match reach(socket, HELLO_LIMIT).await {
        Reach::Greeted(daemon) => daemon.ask(request, limit).await,
        Reach::Absent => anyhow::bail!("no daemon listens on {}", socket.display()),
        Reach::Silent => anyhow::bail!("{} does not answer", socket.display()),
    }
}

/// Whether something accepts connections on a socket (within [`HELLO_LIMIT`]).
pub async fn listens(socket: &Path) -> bool {
    matches!(
        tokio::time::timeout(HELLO_LIMIT, UnixStream::connect(socket)).await,
        Ok(Ok(_))
    )
}

/// Removes the sockets of this workspace's daemons of this environment with other
/// configurations or builds; each exits when it sees its socket gone. Another environment's
/// daemon stays (it exits when idle).
fn retire_others(dir: &Path, key: &DaemonKey) {
    for socket in sockets(dir) {
        let name = socket.file_name().map(|n| n.to_string_lossy().into_owned());
        let other = name.as_deref().and_then(DaemonKey::parse);
        if other.is_some_and(|other| key.retires(&other)) {
            let _ = std::fs::remove_file(&socket);
        }
    }
}

/// The daemon sockets in the runtime folder.
pub fn sockets(dir: &Path) -> Vec<PathBuf> {
    files(dir, "sock")
}

/// The files of the runtime folder whose names end in `.<extension>`, sorted.
pub fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    found.sort();
    found
}

/// The log file of a daemon.
pub fn log_file(key: &DaemonKey) -> anyhow::Result<PathBuf> {
    Ok(log_dir()?.join(format!("daemon-{}.log", key.name())))
}

/// Starts `squiggle daemon run` for the root, detached in its own session, its output in its
/// log file (or nowhere, when the log cannot be opened: a log is never why a daemon is not
/// started).
fn start(root: &Path, key: &DaemonKey) -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("cannot find the squiggle binary")?;
    let (stdout, stderr) = match open_log(key) {
        Ok(out) => (Stdio::from(out.try_clone()?), Stdio::from(out)),
        Err(err) => {
            tracing::info!("the daemon logs nowhere: {err:#}");
            (Stdio::null(), Stdio::null())
        }
    };
    let mut command = std::process::Command::new(exe);
    command
        .args(["daemon", "run", "--key", &key.name(), "--root"])
        .arg(root)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    if let Some(file) = crate::workspace::extra_config_file() {
        command.arg("--config").arg(file);
    }
    // SAFETY: the closure runs between fork and exec and only makes a system call (setsid),
    // which allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            let _ = rustix::process::setsid();
            Ok(())
        });
    }
    command.spawn().context("cannot start the daemon")
}

/// Opens a daemon's log for appending (several clients may start the key's daemon at once),
/// started afresh when large, this user's alone; a link, a FIFO or a device at its name is
/// refused, never followed or chmodded (see [`open_private`]).
fn open_log(key: &DaemonKey) -> anyhow::Result<std::fs::File> {
    let log = log_file(key)?;
    if std::fs::symlink_metadata(&log).is_ok_and(|meta| meta.is_file() && meta.len() > MAX_LOG) {
        let _ = std::fs::remove_file(&log);
    }
    open_private(&log, std::fs::OpenOptions::new().create(true).append(true))
        .with_context(|| format!("cannot write the daemon log {}", log.display()))
}

/// Waits for a starting daemon's socket and its greeting; gives up when the daemon failed or
/// the time is up.
async fn wait_for(socket: &Path, mut child: Child) -> anyhow::Result<Greeted> {
    let deadline = Instant::now() + START_LIMIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if let Reach::Greeted(daemon) = reach(socket, left).await {
            return Ok(daemon);
        }
        // Exit 0 means another daemon took the key first: its socket is coming.
        if let Ok(Some(status)) = child.try_wait() {
            anyhow::ensure!(status.success(), "the daemon failed to start ({status})");
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the daemon did not open {} within {START_LIMIT:?}",
            socket.display()
        );
        tokio::time::sleep(START_POLL).await;
    }
}
