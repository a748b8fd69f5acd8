//! The diagnostics actor: the one store of what every server last published, the epoch that
//! advances on every change, and the waits for fresh results.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use squiggle_protocol::{merge, Diagnostic};
use tokio::time::Instant;

use crate::key::ServerKey;

/// Messages of the diagnostics actor.
#[derive(Debug)]
pub enum DiagnosticsMsg {
    /// A server published diagnostics for a file (replacing what it published before), for
    /// the document version it names, if it names one.
    Publish {
        key: ServerKey,
        path: PathBuf,
        version: Option<i32>,
        diagnostics: Vec<Diagnostic>,
    },
    /// A server is gone: forget what it published and end the waits on it.
    ServerGone { key: ServerKey },
    /// The current epoch.
    Epoch(RpcReplyPort<u64>),
    /// Wait until `key` published for `path` after epoch `after` (for at least `version`, when
    /// the server names versions) and then stayed quiet for the settle time, or until `deadline`.
    WaitFresh {
        key: ServerKey,
        path: PathBuf,
        after: u64,
        version: i32,
        deadline: Instant,
        reply: RpcReplyPort<Freshness>,
    },
    /// Every file with diagnostics, merged across servers.
    All(RpcReplyPort<BTreeMap<PathBuf, Vec<Diagnostic>>>),
    /// Timer: look at a wait again.
    Recheck(u64),
}

/// How a wait for fresh diagnostics ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// The server published for the file after the touch; this is what it published.
    Fresh(Vec<Diagnostic>),
    /// The deadline passed before the server published for the file.
    TimedOut,
    /// The server went away during the wait.
    ServerGone,
}

/// The diagnostics actor.
#[derive(Debug)]
pub struct DiagnosticsActor;

/// What one server last published for one file.
#[derive(Debug)]
struct Published {
    diagnostics: Vec<Diagnostic>,
    version: Option<i32>,
    epoch: u64,
    at: Instant,
}

/// One caller waiting for fresh diagnostics.
#[derive(Debug)]
struct Waiter {
    key: ServerKey,
    path: PathBuf,
    after: u64,
    version: i32,
    deadline: Instant,
    reply: RpcReplyPort<Freshness>,
    /// When a recheck is already scheduled.
    recheck_at: Option<Instant>,
}

/// The state of the diagnostics actor.
#[derive(Debug)]
pub struct Store {
    files: HashMap<PathBuf, HashMap<ServerKey, Published>>,
    epoch: u64,
    settle: Duration,
    /// Servers that went away; late publishes from them are dropped.
    gone: HashSet<ServerKey>,
    waiters: HashMap<u64, Waiter>,
    next_waiter: u64,
}

impl Actor for DiagnosticsActor {
    type Msg = DiagnosticsMsg;
    type State = Store;
    type Arguments = Duration;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        settle: Duration,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Store {
            files: HashMap::new(),
            epoch: 0,
            settle,
            gone: HashSet::new(),
            waiters: HashMap::new(),
            next_waiter: 0,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        store: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            DiagnosticsMsg::Publish {
                key,
                path,
                version,
                diagnostics,
            } => {
                if store.gone.contains(&key) {
                    return Ok(()); // Frames a dead server sent before it died.
                }
                store.epoch += 1;
                let published = Published {
                    diagnostics,
                    version,
                    epoch: store.epoch,
                    at: Instant::now(),
                };
                store
                    .files
                    .entry(path.clone())
                    .or_default()
                    .insert(key.clone(), published);
                let ids: Vec<u64> = store
                    .waiters
                    .iter()
                    .filter(|(_, w)| w.key == key && w.path == path)
                    .map(|(id, _)| *id)
                    .collect();
                for id in ids {
                    store.check(&myself, id);
                }
            }
            DiagnosticsMsg::ServerGone { key } => {
                store.gone.insert(key.clone());
                store.epoch += 1;
                for published in store.files.values_mut() {
                    published.remove(&key);
                }
                store.files.retain(|_, p| !p.is_empty());
                let gone: Vec<u64> = store
                    .waiters
                    .iter()
                    .filter(|(_, w)| w.key == key)
                    .map(|(id, _)| *id)
                    .collect();
                for id in gone {
                    if let Some(waiter) = store.waiters.remove(&id) {
                        let _ = waiter.reply.send(Freshness::ServerGone);
                    }
                }
            }
            DiagnosticsMsg::Epoch(reply) => {
                let _ = reply.send(store.epoch);
            }
            DiagnosticsMsg::WaitFresh {
                key,
                path,
                after,
                version,
                deadline,
                reply,
            } => {
                if store.gone.contains(&key) {
                    let _ = reply.send(Freshness::ServerGone);
                    return Ok(());
                }
                let id = store.next_waiter;
                store.next_waiter += 1;
                store.waiters.insert(
                    id,
                    Waiter {
                        key,
                        path,
                        after,
                        version,
                        deadline,
                        reply,
                        recheck_at: None,
                    },
                );
                store.check(&myself, id);
            }
            DiagnosticsMsg::All(reply) => {
                let _ = reply.send(store.all());
            }
            DiagnosticsMsg::Recheck(id) => {
                if let Some(waiter) = store.waiters.get_mut(&id) {
                    waiter.recheck_at = None;
                    store.check(&myself, id);
                }
            }
        }
        Ok(())
    }
}

impl Store {
    /// Answers a waiter if it is done, or schedules a look at it for when it could be.
    fn check(&mut self, myself: &ActorRef<DiagnosticsMsg>, id: u64) {
        let Some(waiter) = self.waiters.get(&id) else {
            return;
        };
        let now = Instant::now();
        let fresh = self
            .files
            .get(&waiter.path)
            .and_then(|p| p.get(&waiter.key))
            .filter(|p| p.epoch > waiter.after && p.version.is_none_or(|v| v >= waiter.version));
        let (done, next) = match fresh {
            Some(p) if now >= p.at + self.settle || now >= waiter.deadline => {
                (Some(Freshness::Fresh(p.diagnostics.clone())), None)
            }
            Some(p) => (None, Some((p.at + self.settle).min(waiter.deadline))),
            None if now >= waiter.deadline => (Some(Freshness::TimedOut), None),
            None => (None, Some(waiter.deadline)),
        };
        if let Some(outcome) = done {
            if let Some(waiter) = self.waiters.remove(&id) {
                let _ = waiter.reply.send(outcome);
            }
            return;
        }
        let (Some(at), Some(waiter)) = (next, self.waiters.get_mut(&id)) else {
            return;
        };
        if waiter.recheck_at.is_some_and(|scheduled| scheduled <= at) {
            return;
        }
        waiter.recheck_at = Some(at);
        myself.send_after(at.saturating_duration_since(now), move || {
            DiagnosticsMsg::Recheck(id)
        });
    }

    /// Every file with non-empty diagnostics, merged across servers.
    fn all(&self) -> BTreeMap<PathBuf, Vec<Diagnostic>> {
        self.files
            .iter()
            .map(|(path, by_server)| {
                let lists = by_server.values().map(|p| p.diagnostics.clone());
                (path.clone(), merge::merge(lists))
            })
            .filter(|(_, diagnostics)| !diagnostics.is_empty())
            .collect()
    }
}
