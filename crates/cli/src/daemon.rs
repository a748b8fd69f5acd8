//! `squiggle daemon`: the per-workspace background process that keeps servers warm between
//! `squiggle check` calls, and the commands to see and stop it.

pub mod client;
mod key;
mod log;
mod path_watch;
mod paths;
mod roots;
mod server;
mod wire;

use std::path::Path;
use std::time::Duration;

use squiggle_actors::Config;

use self::key::DaemonKey;
use self::wire::{DaemonStatus, Reply, Request};
use crate::workspace::WorkspaceArgs;

/// The environment variable that turns the daemon off (any value but empty or `0`).
pub const NO_DAEMON_ENV: &str = "SQUIGGLE_NO_DAEMON";

/// How long `status` and `stop` wait for a daemon to answer.
const ASK_LIMIT: Duration = Duration::from_secs(5);
/// How long `stop` waits for a daemon to exit.
const EXIT_LIMIT: Duration = Duration::from_secs(20);

/// Arguments of `squiggle daemon`.
#[derive(Debug, clap::Args)]
pub struct DaemonArgs {
    #[command(subcommand)]
    command: DaemonCommand,
}

/// The `squiggle daemon` subcommands.
#[derive(Debug, clap::Subcommand)]
enum DaemonCommand {
    /// List the running daemons: workspace root, pid, uptime, memory and servers.
    Status,
    /// Stop this workspace's daemons (or every one with --all) and wait until their servers
    /// are gone.
    Stop {
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// Stop every daemon of this user.
        #[arg(long)]
        all: bool,
    },
    /// Run a daemon in the foreground (what `squiggle check` starts in the background).
    #[command(hide = true)]
    Run {
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// The name the starting client computed; the daemon refuses to run under another.
        #[arg(long)]
        key: String,
    },
}

/// Whether checks of this workspace root with this configuration go through the daemon (not
/// for a root that is the filesystem root or a bare home folder: see [`roots`]).
pub fn wanted(root: &Path, config: &Config) -> bool {
    let off = std::env::var_os(NO_DAEMON_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    if !(config.enabled && config.daemon && !off) {
        return false;
    }
    match roots::refusal_here(root) {
        Some(why) => {
            tracing::info!("checking in this process: {why}");
            false
        }
        None => true,
    }
}

/// Runs `squiggle daemon ...`; returns the exit code.
pub async fn run(args: DaemonArgs) -> anyhow::Result<u8> {
    match args.command {
        DaemonCommand::Status => status().await,
        DaemonCommand::Stop { workspace, all } => stop(&workspace, all).await,
        DaemonCommand::Run { workspace, key } => {
            let (root, config) = workspace.load()?;
            server::run(root, config, &key).await
        }
    }
}

/// Every daemon that answers, with its socket.
async fn running() -> anyhow::Result<Vec<(std::path::PathBuf, DaemonStatus)>> {
    let dir = paths::runtime_dir()?;
    let mut found = Vec::new();
    for socket in client::sockets(&dir) {
        if let Ok(Reply::Status { status }) =
            client::ask(&socket, &Request::Status, ASK_LIMIT).await
        {
            found.push((socket, status));
        }
    }
    Ok(found)
}

/// Prints the running daemons.
async fn status() -> anyhow::Result<u8> {
    let daemons = running().await?;
    if daemons.is_empty() {
        println!("no squiggle daemon runs");
    }
    for (socket, daemon) in daemons {
        let memory = match daemon.rss_bytes {
            Some(bytes) => format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0)),
            None => "memory unknown".to_string(),
        };
        println!("{}", daemon.root.display());
        println!(
            "  pid {}, up {}, {memory}, {} checks, exits after {} idle",
            daemon.pid,
            duration(daemon.uptime_secs),
            daemon.checks,
            duration(daemon.idle_exit_secs)
        );
        let name = socket.file_stem().map(|s| s.to_string_lossy().into_owned());
        if let Some(key) = name.as_deref().and_then(DaemonKey::parse) {
            if let Ok(log) = client::log_file(&key) {
                println!("  log {}", log.display());
            }
        }
        if daemon.servers.is_empty() {
            println!("  no servers yet");
        }
        for server in daemon.servers {
            let pid = server.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
            println!("  {} ({}): {}{pid}", server.id, server.root, server.state);
        }
    }
    Ok(0)
}

/// Stops this workspace's daemons (every one with `all`) and waits for them to exit.
async fn stop(workspace: &WorkspaceArgs, all: bool) -> anyhow::Result<u8> {
    let root = match all {
        true => None,
        false => Some(workspace.load()?.0),
    };
    let mut stopped = Vec::new();
    for (socket, daemon) in running().await? {
        if root.as_ref().is_some_and(|root| *root != daemon.root) {
            continue;
        }
        if let Ok(Reply::Stopping) = client::ask(&socket, &Request::Stop, ASK_LIMIT).await {
            stopped.push(daemon);
        }
    }
    let deadline = std::time::Instant::now() + EXIT_LIMIT;
    for daemon in &stopped {
        while is_alive(daemon.pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let how = match is_alive(daemon.pid) {
            true => "still stopping",
            false => "stopped",
        };
        println!(
            "{how} the daemon for {} (pid {})",
            daemon.root.display(),
            daemon.pid
        );
    }
    if stopped.is_empty() {
        println!("no daemon to stop");
    }
    Ok(0)
}

/// Whether a process still runs (a zombie does not count).
fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
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
