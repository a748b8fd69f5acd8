//! The client side: ask the workspace's daemon, starting it when none runs. Every failure is
//! an error the caller answers by checking in its own process.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use squiggle_actors::Config;
use tokio::io::BufReader;
use tokio::net::UnixStream;

use super::key::DaemonKey;
use super::paths::{log_dir, runtime_dir};
use super::wire::{self, Reply, Request, MAX_REPLY};
use crate::check::{CheckAnswer, CheckRequest};

/// How long a started daemon has to open its socket.
const START_LIMIT: Duration = Duration::from_secs(10);
/// The size over which a daemon log is started afresh, in bytes.
const MAX_LOG: u64 = 1 << 20;
/// How often the socket is tried while a daemon starts.
const START_POLL: Duration = Duration::from_millis(3);

/// Checks through the workspace's daemon, starting one (and retiring the workspace's daemons
/// of other configurations or builds) when none runs for this configuration.
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
    let stream = match UnixStream::connect(&socket).await {
        Ok(stream) => stream,
        Err(_) => {
            retire_others(&dir, &key);
            let child = start(root, &key)?;
            wait_for(&socket, child).await?
        }
    };
    match ask_on(stream, &message, limit).await? {
        Reply::Checked { answer } => Ok(answer),
        Reply::Failed { error } => anyhow::bail!("the daemon could not check: {error}"),
        other => anyhow::bail!("the daemon answered {other:?}"),
    }
}

/// How long a check may take the daemon: a first touch of a server, with room to spare.
fn answer_limit(config: &Config) -> Duration {
    let ms = config.initialize_timeout_ms
        + config.first_touch_timeout_ms
        + config.other_files_wait_ms
        + config.diagnostic_timeout_ms;
    Duration::from_millis(ms * 2) + Duration::from_secs(10)
}

/// Sends a request on a connection and reads the reply, within `limit`.
async fn ask_on(stream: UnixStream, request: &Request, limit: Duration) -> anyhow::Result<Reply> {
    let exchange = async {
        let (read, mut write) = stream.into_split();
        wire::write_message(&mut write, request).await?;
        let mut reader = BufReader::new(read);
        wire::read_message::<Reply>(&mut reader, MAX_REPLY).await
    };
    tokio::time::timeout(limit, exchange)
        .await
        .context("the daemon did not answer in time")?
        .context("the daemon's connection failed")
}

/// Connects to a socket and asks, within `limit`.
pub async fn ask(socket: &Path, request: &Request, limit: Duration) -> anyhow::Result<Reply> {
    let stream = tokio::time::timeout(limit, UnixStream::connect(socket))
        .await
        .context("connecting timed out")??;
    ask_on(stream, request, limit).await
}

/// Removes the sockets of this workspace's daemons of other configurations or builds; each
/// exits when it sees its socket gone.
fn retire_others(dir: &Path, key: &DaemonKey) {
    for socket in sockets(dir) {
        let name = socket.file_name().map(|n| n.to_string_lossy().into_owned());
        let other = name.as_deref().and_then(DaemonKey::parse);
        if other.is_some_and(|other| other.root == key.root && other != *key) {
            let _ = std::fs::remove_file(&socket);
        }
    }
}

/// The daemon sockets in the runtime folder.
pub fn sockets(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sock"))
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
    // SAFETY: setsid is async-signal-safe and touches no memory of this process.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    command.spawn().context("cannot start the daemon")
}

/// Opens a daemon's log for appending (several clients may start the key's daemon at once),
/// started afresh when large, this user's alone when it is a plain file.
fn open_log(key: &DaemonKey) -> anyhow::Result<std::fs::File> {
    let log = log_file(key)?;
    if std::fs::metadata(&log).is_ok_and(|meta| meta.is_file() && meta.len() > MAX_LOG) {
        let _ = std::fs::remove_file(&log);
    }
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("cannot write the daemon log {}", log.display()))?;
    // Through the open file, never a link's target (a log linked to a device stays as it is).
    if out.metadata()?.is_file() {
        out.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(out)
}

/// Waits for a starting daemon's socket; gives up when the daemon failed or the time is up.
async fn wait_for(socket: &Path, mut child: Child) -> anyhow::Result<UnixStream> {
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if let Ok(stream) = UnixStream::connect(socket).await {
            return Ok(stream);
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
