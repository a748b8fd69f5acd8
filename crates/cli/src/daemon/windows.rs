//! Windows has no squiggle daemon yet (its transport would be a named pipe, its lock
//! `LockFileEx`, its peer check the pipe client's token: none is built). Every check runs in
//! the calling process, servers started cold and ended after the answer, which is slower but
//! no less true; the daemon commands say so rather than pretend.

use std::path::Path;

use squiggle_actors::Config;

use super::{DaemonArgs, DaemonCommand, RestartArgs};
use crate::check_request::{CheckAnswer, CheckRequest};

/// What the daemon commands say on Windows.
const NONE: &str = "squiggle has no daemon on Windows yet: every check runs in the calling \
                    process";

/// Never called ([`super::wanted`] is false on Windows); fails so that the check runs here.
pub async fn check(
    _root: &Path,
    _config: &Config,
    _request: &CheckRequest,
) -> anyhow::Result<CheckAnswer> {
    anyhow::bail!("{NONE}")
}

/// `squiggle restart`: there is no daemon whose servers could be restarted.
pub async fn restart(args: RestartArgs) -> anyhow::Result<u8> {
    let (root, _) = args.workspace.load()?;
    println!(
        "no daemon runs for {}: nothing to restart ({NONE}, with its servers started afresh)",
        root.display()
    );
    Ok(0)
}

/// `squiggle daemon ...`: says there is none; `daemon run` fails.
pub async fn run(args: DaemonArgs) -> anyhow::Result<u8> {
    match args.command {
        DaemonCommand::Status { .. } => println!("no squiggle daemon runs ({NONE})"),
        DaemonCommand::Stop { .. } => println!("no daemon to stop ({NONE})"),
        DaemonCommand::Run { .. } => anyhow::bail!("{NONE}"),
    }
    Ok(0)
}

/// No daemon to stop.
pub async fn stop_for(_root: Option<&Path>) -> anyhow::Result<usize> {
    Ok(0)
}
