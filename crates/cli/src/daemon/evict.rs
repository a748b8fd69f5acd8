//! Keeping this user's warm budget (the I/O around [`budget`](super::budget)): a daemon, after
//! a check, reads the other daemons' state files, measures each one with its servers in
//! `/proc`, and asks those the policy chooses to stop. The request carries the last use it
//! saw, and a daemon stops only when no check is under way in it and it was not used since
//! (see [`Request::Evict`]): a check that arrives meanwhile keeps it, and a check that
//! arrives once it stops starts a fresh daemon.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::budget::{self, Budget, Warm};
use super::key::DaemonKey;
use super::log::note;
use super::wire::{Reply, Request};
use super::{client, memory, process, warm_file};

/// How long a daemon asked to stop has to answer.
const ASK_LIMIT: Duration = Duration::from_secs(2);

/// One of this user's daemons, as found for the budget.
#[derive(Debug, Clone)]
struct Found {
    socket: PathBuf,
    root: PathBuf,
    last_use_ms: u64,
}

/// Stops the least recently used idle daemons of the runtime folder `dir` beyond `budget`;
/// `own` is the key name of the daemon asking, never stopped. Returns the roots of those
/// that agreed to stop.
pub async fn keep_budget(dir: &Path, own: &str, budget: Budget) -> Vec<PathBuf> {
    let (dir_owned, own_owned) = (dir.to_path_buf(), own.to_string());
    // Reading the state files and the process table is blocking work.
    let warm = tokio::task::spawn_blocking(move || warm(&dir_owned, &own_owned)).await;
    let warm = warm.unwrap_or_default();
    let mut stopped = Vec::new();
    for found in budget::to_stop(&warm, budget) {
        let request = Request::Evict {
            last_use_ms: found.last_use_ms,
        };
        match client::ask(&found.socket, &request, ASK_LIMIT).await {
            Ok(Reply::Stopping) => {
                note(format_args!(
                    "asked the least recently used idle daemon, for {}, to stop (the warm \
                     budget: {} workspaces, {} MiB)",
                    found.root.display(),
                    budget.workspaces,
                    budget.memory / (1024 * 1024)
                ));
                stopped.push(found.root);
            }
            Ok(other) => note(format_args!(
                "the daemon for {} stays: {other:?}",
                found.root.display()
            )),
            Err(err) => note(format_args!(
                "could not ask the daemon for {} to stop: {err:#}",
                found.root.display()
            )),
        }
    }
    stopped
}

/// This user's warm daemons as the policy sees them: those whose state file is in `dir` and
/// that still run (the state file of one that does not is removed), each measured with its
/// servers.
fn warm(dir: &Path, own: &str) -> Vec<Warm<Found>> {
    let mut found = Vec::new();
    for (name, state) in warm_file::read_all(dir) {
        let current = name == own;
        // Only a daemon that holds its key's lock and is this user's `squiggle daemon run`
        // for that key counts; a state file left by one that died is removed.
        let alive = DaemonKey::parse(&name)
            .and_then(|key| process::of_key(dir, &key))
            .is_some_and(|daemon| daemon.pid == state.pid);
        if !alive && !current {
            let _ = std::fs::remove_file(warm_file::path_of(dir, &name));
            continue;
        }
        found.push((name, state, current));
    }
    let pids: Vec<u32> = found.iter().map(|(_, state, _)| state.pid).collect();
    let memory = memory::of_trees(&pids);
    found
        .into_iter()
        .zip(memory)
        .map(|((name, state, current), memory)| Warm {
            id: Found {
                socket: dir.join(format!("{name}.sock")),
                root: state.root,
                last_use_ms: state.last_use_ms,
            },
            memory: memory.unwrap_or(0),
            last_use_ms: state.last_use_ms,
            busy: state.checking > 0,
            current,
        })
        .collect()
}
