//! Spawning a language server process so that it, and whatever it starts, can never outlive
//! squiggle.
//!
//! On Unix the server runs in its own process group, which squiggle kills as a whole (so
//! grandchildren die too); on Linux the parent-death signal kills the server when squiggle's
//! spawning thread dies, even on SIGKILL, and the watchdog kills the group then. On Windows the
//! server runs in its own Job Object, which the kernel kills as a whole when squiggle's handle
//! to it closes, however squiggle ends. `kill_on_drop` covers the rest on both.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use tokio::process::Command;

#[cfg(unix)]
pub use unix::{spawn, ProcessGroup};
#[cfg(windows)]
pub use windows::{spawn, ProcessGroup};

/// `program args` in `cwd` with `env`, stdin and stdout as given and stderr piped (for the log),
/// killed when its handle is dropped.
fn command(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
    stdio: fn() -> Stdio,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .envs(env)
        .stdin(stdio())
        .stdout(stdio())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}
