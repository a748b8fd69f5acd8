//! Servers unused for a while: when a check last asked for each server, and stopping those
//! no check asked for within a given time (a long-lived host, such as the daemon, frees their
//! memory; the next check that needs one starts it afresh).

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

use super::Squiggle;
use crate::key::ServerKey;
use crate::lock::lock;

/// How long a quick question to the registry may take.
const ASK_LIMIT: Duration = Duration::from_secs(5);

/// When a check last asked for each server, and the gate that keeps stopping unused servers
/// apart from checks: a check holds it shared for its whole run, a stop takes it only when no
/// check holds it, and only while the servers are taken out of the registry.
#[derive(Debug, Default)]
pub(super) struct Uses {
    last: std::sync::Mutex<HashMap<ServerKey, Instant>>,
    gate: tokio::sync::RwLock<()>,
}

impl Uses {
    /// Notes that a check asks for the server of `key` now.
    pub(super) fn note(&self, key: &ServerKey) {
        lock(&self.last).insert(key.clone(), Instant::now());
    }

    /// Held by a check for its whole run.
    pub(super) async fn checking(&self) -> tokio::sync::RwLockReadGuard<'_, ()> {
        self.gate.read().await
    }
}

/// What [`Squiggle::stop_unused_servers`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnusedStopped {
    /// The servers stopped, as `(id, root relative to the workspace)`.
    pub stopped: Vec<(String, String)>,
    /// How long until the next running server has been unused for the time asked (or, when a
    /// check was under way, until it is worth looking again); `None` when no server a check
    /// used still runs.
    pub next: Option<Duration>,
}

impl Squiggle {
    /// Stops the servers no check asked for within `unused_for` (they are forgotten, not
    /// broken: the next check that needs one starts it afresh, as its first check did). Does
    /// nothing while a check is under way, so that no check loses its server; says when to
    /// look again.
    pub async fn stop_unused_servers(&self, unused_for: Duration) -> UnusedStopped {
        let inner = &self.inner;
        let Ok(_gate) = inner.used.gate.try_write() else {
            return UnusedStopped {
                stopped: Vec::new(),
                next: Some(unused_for),
            };
        };
        let now = Instant::now();
        let (unused, next): (Vec<ServerKey>, Option<Duration>) = {
            let last = lock(&inner.used.last);
            let running = inner.active.iter().map(|entry| entry.key().clone());
            let mut unused = Vec::new();
            let mut next: Option<Duration> = None;
            for key in running {
                // A server no check asked for (warmed at start) is left alone.
                let Some(used) = last.get(&key) else {
                    continue;
                };
                let idle = now.saturating_duration_since(*used);
                match unused_for.checked_sub(idle) {
                    Some(left) if !left.is_zero() => {
                        next = Some(next.map_or(left, |n| n.min(left)));
                    }
                    _ => unused.push(key),
                }
            }
            (unused, next)
        };
        let stopped = inner.registry.retire(unused, ASK_LIMIT).await;
        let mut last = lock(&inner.used.last);
        let stopped = stopped
            .into_iter()
            .map(|key| {
                last.remove(&key);
                let root = squiggle_protocol::paths::relative_to(&inner.workspace_root, &key.root);
                (key.id, root)
            })
            .collect();
        UnusedStopped { stopped, next }
    }
}
