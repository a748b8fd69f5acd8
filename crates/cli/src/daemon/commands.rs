//! The daemon commands on Unix, where daemons run: `squiggle daemon status|stop|run`,
//! `squiggle restart`, and a check through the workspace's daemon.

use std::path::{Path, PathBuf};
use std::time::Duration;

use squiggle_actors::Config;

use super::key::DaemonKey;
use super::process::DaemonProcess;
use super::wire::{DaemonStatus, Reply, Request};
use super::{
    budget, client, paths, process, server, DaemonArgs, DaemonCommand, RestartArgs, ASK_LIMIT,
    EXIT_LIMIT,
};
use crate::check_request::{CheckAnswer, CheckRequest};
use crate::workspace::WorkspaceArgs;

/// Checks through the workspace's daemon, starting one when none runs (see
/// [`client::check`]).
pub async fn check(
    root: &Path,
    config: &Config,
    request: &CheckRequest,
) -> anyhow::Result<CheckAnswer> {
    client::check(root, config, request).await
}

/// Runs `squiggle restart [SERVER]`: asks this workspace's daemon to restart its broken
/// servers (those held after a crash loop too) and prints each one's state afterwards. Exit
/// code 0, or 1 when one is still broken (its cooldown has not passed), 2 for an id that is
/// not configured.
pub async fn restart(args: RestartArgs) -> anyhow::Result<u8> {
    let (root, config) = args.workspace.load()?;
    if let Some(id) = args
        .server
        .as_deref()
        .filter(|id| !config.servers.contains_key(*id))
    {
        eprintln!(
            "squiggle: no server `{id}` is configured for {}",
            root.display()
        );
        return Ok(2);
    }
    let socket =
        paths::runtime_dir()?.join(format!("{}.sock", DaemonKey::of(&root, &config).name()));
    let request = Request::Restart {
        server: args.server.clone(),
    };
    let limit = Duration::from_millis(config.first_touch_timeout_ms) + ASK_LIMIT;
    let servers = match client::ask(&socket, &request, limit).await {
        Ok(Reply::Restarted { servers }) => servers,
        Ok(other) => anyhow::bail!("the daemon answered {other:?}"),
        Err(err) => {
            tracing::debug!("no daemon to ask: {err:#}");
            println!(
                "no daemon runs for {} with this configuration: nothing to restart (the next \
                 check starts its servers afresh)",
                root.display()
            );
            return Ok(0);
        }
    };
    if servers.is_empty() {
        match &args.server {
            Some(id) => println!("{id} has not run in the daemon for {}", root.display()),
            None => println!("no server has run in the daemon for {}", root.display()),
        }
    }
    let mut broken = false;
    for server in &servers {
        broken |= server.state == squiggle_protocol::ServerState::Broken;
        let pid = server.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
        let reason = server
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        println!(
            "{} ({}): {}{pid}{reason}",
            server.id, server.root, server.state
        );
    }
    Ok(u8::from(broken))
}

/// Runs `squiggle daemon ...`; returns the exit code.
pub async fn run(args: DaemonArgs) -> anyhow::Result<u8> {
    match args.command {
        DaemonCommand::Status { workspace } => status(&workspace).await,
        DaemonCommand::Stop { workspace, all } => stop(&workspace, all).await,
        DaemonCommand::Run { workspace, key } => {
            let (root, config) = workspace.load()?;
            server::run(root, config, &key).await
        }
    }
}

/// The daemons found in the runtime folder.
#[derive(Debug, Default)]
struct Found {
    /// Those that answer, with their sockets.
    answering: Vec<(PathBuf, DaemonStatus)>,
    /// This user's daemons that do not answer (hung or stopped), with their sockets, and
    /// those without a socket (starting, stopping, or hung after another retired them).
    silent: Vec<(PathBuf, DaemonProcess)>,
    /// Sockets nothing of squiggle answers on.
    strangers: Vec<PathBuf>,
}

/// Every daemon in the runtime folder, asked in turn.
async fn running() -> anyhow::Result<Found> {
    let dir = paths::runtime_dir()?;
    let mut found = Found::default();
    for socket in client::sockets(&dir) {
        match client::ask(&socket, &Request::Status, ASK_LIMIT).await {
            Ok(Reply::Status { status }) => found.answering.push((socket, status)),
            _ => {
                let name = socket.file_name().map(|n| n.to_string_lossy().into_owned());
                let key = name.as_deref().and_then(DaemonKey::parse);
                match key.and_then(|key| process::of_key(&dir, &key)) {
                    Some(daemon) => found.silent.push((socket, daemon)),
                    None if client::listens(&socket).await => found.strangers.push(socket),
                    // A dead daemon's socket, removed by the next daemon of its key.
                    None => {}
                }
            }
        }
    }
    // A daemon is listed by its lock when its socket is gone (removed by a client that
    // retired it, and it has not left: hung, or still stopping).
    for lock in client::files(&dir, "lock") {
        let socket = lock.with_extension("sock");
        let name = lock.file_name().map(|n| n.to_string_lossy().into_owned());
        let key = name.as_deref().and_then(DaemonKey::parse);
        if socket.exists() {
            continue;
        }
        if let Some(daemon) = key.and_then(|key| process::of_key(&dir, &key)) {
            found.silent.push((socket, daemon));
        }
    }
    Ok(found)
}

/// Prints the running daemons, and their total against the warm budget of this workspace's
/// configuration.
async fn status(workspace: &WorkspaceArgs) -> anyhow::Result<u8> {
    let found = running().await?;
    if found.answering.is_empty() && found.silent.is_empty() {
        println!("no squiggle daemon runs");
    }
    let mut total = 0;
    let workspaces = found.answering.len() + found.silent.len();
    for (socket, daemon) in found.answering {
        let memory = match daemon.rss_bytes {
            Some(bytes) => mib(bytes),
            None => "memory unknown".to_string(),
        };
        total += daemon.memory_with_servers.unwrap_or(0);
        let with_servers = match daemon.memory_with_servers {
            Some(bytes) => format!("{} with its servers", mib(bytes)),
            None => "with its servers unknown".to_string(),
        };
        let last_use = match (daemon.checking, daemon.last_use_secs) {
            (1.., _) => format!("{} checks under way", daemon.checking),
            (0, Some(secs)) => format!("last check {} ago", duration(secs)),
            (0, None) => "no check yet".to_string(),
        };
        println!("{}", daemon.root.display());
        println!(
            "  pid {}, up {}, {memory} ({with_servers}), {} checks, exits after {} idle, \
             {last_use}",
            daemon.pid,
            duration(daemon.uptime_secs),
            daemon.checks,
            duration(daemon.idle_exit_secs)
        );
        print_log(&socket);
        if daemon.servers.is_empty() {
            println!("  no servers yet");
        }
        for server in daemon.servers {
            let pid = server.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
            println!("  {} ({}): {}{pid}", server.id, server.root, server.state);
        }
    }
    for (socket, daemon) in found.silent {
        println!("{}", daemon.root.display());
        match socket.exists() {
            true => println!(
                "  pid {}, unresponsive: it does not answer within {:?} (stopped or hung); \
                 the next check ends it, as does `squiggle daemon stop`",
                daemon.pid,
                client::HELLO_LIMIT
            ),
            false => println!(
                "  pid {}, without a socket: starting, stopping, or hung after it was \
                 retired; `squiggle daemon stop` ends it",
                daemon.pid
            ),
        }
        print_log(&socket);
    }
    for socket in found.strangers {
        println!(
            "{}: not a squiggle daemon (something else listens there, and does not answer)",
            socket.display()
        );
    }
    let budget = match workspace.load() {
        Ok((_, config)) => budget::Budget::of(&config, budget::physical_memory()),
        Err(_) => budget::Budget::of(&Config::default(), budget::physical_memory()),
    };
    let memory_budget = match budget.memory {
        u64::MAX => "unbounded".to_string(),
        bytes => mib(bytes),
    };
    println!(
        "warm: {workspaces} of {} workspaces, {} of {memory_budget} (daemons with their \
         servers; the least recently used idle one is stopped beyond either)",
        budget.workspaces,
        mib(total)
    );
    Ok(0)
}

/// Bytes as `12.3 MiB`.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Prints the log file of the daemon of a socket.
fn print_log(socket: &Path) {
    let name = socket.file_stem().map(|s| s.to_string_lossy().into_owned());
    if let Some(key) = name.as_deref().and_then(DaemonKey::parse) {
        if let Ok(log) = client::log_file(&key) {
            println!("  log {}", log.display());
        }
    }
}

/// Stops this workspace's daemons (every one with `all`) and waits for them to exit: those
/// that answer are asked to stop, those that do not are sent SIGTERM, then SIGKILL.
async fn stop(workspace: &WorkspaceArgs, all: bool) -> anyhow::Result<u8> {
    let root = match all {
        true => None,
        false => Some(workspace.load()?.0),
    };
    if stop_for(root.as_deref()).await? == 0 {
        println!("no daemon to stop");
    }
    Ok(0)
}

/// Stops the daemons of `root` (every one with None), says each on stdout, and waits for them
/// to exit; how many there were.
pub async fn stop_for(root: Option<&Path>) -> anyhow::Result<usize> {
    let found = running().await?;
    let wanted = |daemon_root: &Path| root.is_none_or(|root| root == daemon_root);
    let mut stopped = Vec::new();
    for (socket, daemon) in found.answering {
        if !wanted(&daemon.root) {
            continue;
        }
        if let Ok(Reply::Stopping) = client::ask(&socket, &Request::Stop, ASK_LIMIT).await {
            stopped.push((daemon.root, daemon.pid));
        }
    }
    let mut ended = Vec::new();
    for (socket, daemon) in found.silent {
        if !wanted(&daemon.root) {
            continue;
        }
        let gone = process::end(daemon.pid).await;
        let _ = std::fs::remove_file(&socket);
        ended.push((daemon, gone));
    }
    let deadline = std::time::Instant::now() + EXIT_LIMIT;
    for (root, pid) in &stopped {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let how = match process::exited_within(*pid, left).await {
            true => "stopped",
            false => "still stopping",
        };
        println!("{how} the daemon for {} (pid {pid})", root.display());
    }
    for (daemon, gone) in &ended {
        let how = match gone {
            true => "ended",
            false => "could not end",
        };
        println!(
            "{how} the unresponsive daemon for {} (pid {})",
            daemon.root.display(),
            daemon.pid
        );
    }
    Ok(stopped.len() + ended.len())
}

/// Seconds as `1h2m`, `3m4s` or `5s`.
fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{}s", secs / 60, secs % 60),
        _ => format!("{}h{}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(5), "5s");
        assert_eq!(duration(185), "3m5s");
        assert_eq!(duration(3720), "1h2m");
    }
}
