//! `squiggle daemon`: the per-workspace background process that keeps servers warm between
//! `squiggle check` calls, and the commands to see and stop it.

//!
//! Daemons run on Unix, over a Unix socket in a private runtime folder. Windows has none yet
//! (see `windows`): there every check runs in the calling process, and the daemon commands say
//! so.

#[cfg(unix)]
mod accept;
#[cfg(unix)]
mod budget;
#[cfg(unix)]
mod client;
#[cfg(unix)]
mod commands;
#[cfg(unix)]
mod evict;
#[cfg(unix)]
mod key;
pub mod log;
#[cfg(unix)]
mod memory;
#[cfg(unix)]
mod path_watch;
#[cfg(unix)]
mod paths;
#[cfg(unix)]
mod process;
mod roots;
#[cfg(unix)]
mod server;
#[cfg(unix)]
mod warm_file;
#[cfg(windows)]
mod windows;
#[cfg(unix)]
mod wire;

use std::path::Path;
#[cfg(unix)]
use std::time::Duration;

use squiggle_actors::Config;

use crate::workspace::WorkspaceArgs;

#[cfg(unix)]
pub use commands::{check, restart, run, stop_for};
#[cfg(windows)]
pub use windows::{check, restart, run, stop_for};

/// The environment variable that turns the daemon off (any value but empty or `0`).
pub const NO_DAEMON_ENV: &str = "SQUIGGLE_NO_DAEMON";

/// How long `status` and `stop` wait for a daemon to answer.
#[cfg(unix)]
const ASK_LIMIT: Duration = Duration::from_secs(5);
/// How long `stop` waits for a daemon to exit.
#[cfg(unix)]
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
    /// List the running daemons: workspace root, pid, uptime, memory (with their servers),
    /// last use and servers, and their total against the warm budget.
    Status {
        #[command(flatten)]
        workspace: WorkspaceArgs,
    },
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

/// Arguments of `squiggle restart`.
#[derive(Debug, clap::Args)]
pub struct RestartArgs {
    /// The server to restart (its id, as `squiggle status` lists it); every broken one when
    /// absent.
    server: Option<String>,
    #[command(flatten)]
    workspace: WorkspaceArgs,
}

/// Whether checks of this workspace root with this configuration go through the daemon (not
/// for a root that is the filesystem root or a bare home folder: see [`roots`]).
pub fn wanted(root: &Path, config: &Config) -> bool {
    if cfg!(windows) {
        tracing::info!("checking in this process: squiggle has no daemon on Windows yet");
        return false;
    }
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
