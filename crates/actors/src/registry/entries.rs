//! The registry's table of server instances: each key starting (with the callers waiting for
//! it, so that one start serves however many ask at once), active, or unusable with why; and
//! what a server that comes up or goes away answers those waiting. Pure and generic over the
//! server and the waiter (tests use plain values): the registry actor spawns the servers,
//! sends the answers and announces each change.

use std::collections::HashMap;

use squiggle_protocol::ServerState;

use crate::key::ServerKey;

/// One server instance as the registry sees it.
#[derive(Debug)]
pub enum Entry<S, W> {
    /// Spawned, in its handshake; these callers wait for it.
    Starting { server: S, waiters: Vec<W> },
    /// Ready, with its process id.
    Active { server: S, pid: Option<u32> },
    /// It cannot serve (broken, disabled, unavailable), and why.
    Unusable { state: ServerState, reason: String },
}

/// What a caller asking for a server is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer<S> {
    /// The server is ready; `first_touch` when the caller had to wait for it to start.
    Ready { server: S, first_touch: bool },
    /// The server cannot serve (broken, disabled, unavailable) and why.
    Unusable { state: ServerState, reason: String },
}

/// What the table says to a caller asking for a server.
#[derive(Debug, PartialEq, Eq)]
pub enum Acquire<S, W> {
    /// Answer it now (the waiter, if any, is given back to be answered).
    Answer(Option<W>, Answer<S>),
    /// The server is starting: the waiter joined those waiting for it.
    Joined,
    /// The server is broken, for this reason: start it again if the restart policy lets,
    /// else answer that (the waiter is given back).
    Broken(Option<W>, String),
    /// No server was tried for this key: start one (the waiter is given back).
    Absent(Option<W>),
}

/// The server instances by key.
#[derive(Debug)]
pub struct Entries<S, W> {
    entries: HashMap<ServerKey, Entry<S, W>>,
}

impl<S, W> Default for Entries<S, W> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
        }
    }
}

impl<S: Clone, W> Entries<S, W> {
    /// A caller (answered through `waiter`, or nobody's when None) asks for the server of
    /// `key`.
    pub fn acquire(&mut self, key: &ServerKey, waiter: Option<W>) -> Acquire<S, W> {
        match self.entries.get_mut(key) {
            Some(Entry::Active { server, .. }) => {
                let server = server.clone();
                let ready = Answer::Ready {
                    server,
                    first_touch: false,
                };
                Acquire::Answer(waiter, ready)
            }
            Some(Entry::Starting { waiters, .. }) => {
                waiters.extend(waiter);
                Acquire::Joined
            }
            Some(Entry::Unusable {
                state: ServerState::Broken,
                reason,
            }) => Acquire::Broken(waiter, reason.clone()),
            Some(Entry::Unusable { state, reason }) => {
                let (state, reason) = (*state, reason.clone());
                Acquire::Answer(waiter, Answer::Unusable { state, reason })
            }
            None => Acquire::Absent(waiter),
        }
    }

    /// A server was spawned for `key`, with `waiter` the first to wait for it; returns the
    /// entry it replaced.
    pub fn starting(
        &mut self,
        key: ServerKey,
        server: S,
        waiter: Option<W>,
    ) -> Option<Entry<S, W>> {
        let waiters = waiter.into_iter().collect();
        self.entries
            .insert(key, Entry::Starting { server, waiters })
    }

    /// Whether the server for `key` is starting, and it is the one `is`.
    pub fn is_starting(&self, key: &ServerKey, is: impl Fn(&S) -> bool) -> bool {
        matches!(self.entries.get(key), Some(Entry::Starting { server, .. }) if is(server))
    }

    /// A server starting for `key` is replaced by `server`, started again: those who waited
    /// for the first wait for it. Nothing changes when none was starting.
    pub fn restarting(&mut self, key: &ServerKey, server: S) {
        if let Some(Entry::Starting { server: old, .. }) = self.entries.get_mut(key) {
            *old = server;
        }
    }

    /// The server for `key` cannot serve, and why; returns the entry it replaced.
    pub fn unusable(
        &mut self,
        key: ServerKey,
        state: ServerState,
        reason: String,
    ) -> Option<Entry<S, W>> {
        self.entries.insert(key, Entry::Unusable { state, reason })
    }

    /// The server for `key` finished its handshake: it is active, and each waiter is answered
    /// with it. None when it was not starting (it went away first and must stay gone).
    pub fn up(&mut self, key: &ServerKey, pid: Option<u32>) -> Option<Vec<(W, Answer<S>)>> {
        let Some(Entry::Starting { server, waiters }) = self.entries.get_mut(key) else {
            return None;
        };
        let (server, waiters) = (server.clone(), std::mem::take(waiters));
        let answers = waiters
            .into_iter()
            .map(|waiter| {
                let server = server.clone();
                let ready = Answer::Ready {
                    server,
                    first_touch: true,
                };
                (waiter, ready)
            })
            .collect();
        self.entries
            .insert(key.clone(), Entry::Active { server, pid });
        Some(answers)
    }

    /// The server for `key` went away, for `reason`: it is broken, and whoever waited for it to
    /// start is answered so.
    pub fn gone(&mut self, key: &ServerKey, reason: String) -> Vec<(W, Answer<S>)> {
        let state = ServerState::Broken;
        let replaced = self.unusable(key.clone(), state, reason.clone());
        let Some(Entry::Starting { waiters, .. }) = replaced else {
            return Vec::new();
        };
        waiters
            .into_iter()
            .map(|waiter| {
                let reason = reason.clone();
                (waiter, Answer::Unusable { state, reason })
            })
            .collect()
    }
}

impl<S, W> Entries<S, W> {
    /// Forgets the server for `key` (its waiters, if any, are dropped unanswered).
    pub fn remove(&mut self, key: &ServerKey) -> Option<Entry<S, W>> {
        self.entries.remove(key)
    }

    /// The entry of `key`.
    pub fn get(&self, key: &ServerKey) -> Option<&Entry<S, W>> {
        self.entries.get(key)
    }

    /// Every entry.
    pub fn iter(&self) -> impl Iterator<Item = (&ServerKey, &Entry<S, W>)> {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// A server is a name here, a waiter a number.
    type Table = Entries<&'static str, u32>;

    fn key() -> ServerKey {
        ServerKey {
            id: "ra".to_string(),
            root: PathBuf::from("/ws"),
        }
    }

    fn ready(first_touch: bool) -> Answer<&'static str> {
        Answer::Ready {
            server: "s1",
            first_touch,
        }
    }

    fn broken(reason: &str) -> Answer<&'static str> {
        Answer::Unusable {
            state: ServerState::Broken,
            reason: reason.to_string(),
        }
    }

    #[test]
    fn callers_during_a_start_share_it_and_are_answered_when_it_is_up() {
        let mut table = Table::default();
        assert_eq!(table.acquire(&key(), Some(1)), Acquire::Absent(Some(1)));
        table.starting(key(), "s1", Some(1));
        assert_eq!(table.acquire(&key(), Some(2)), Acquire::Joined);
        assert_eq!(table.acquire(&key(), None), Acquire::Joined, "a warm-up");
        assert_eq!(table.acquire(&key(), Some(3)), Acquire::Joined);
        let answers = table.up(&key(), Some(42)).unwrap_or_default();
        assert_eq!(
            answers,
            vec![(1, ready(true)), (2, ready(true)), (3, ready(true))]
        );
        assert!(matches!(
            table.get(&key()),
            Some(Entry::Active {
                server: "s1",
                pid: Some(42)
            })
        ));
        assert_eq!(
            table.acquire(&key(), Some(4)),
            Acquire::Answer(Some(4), ready(false)),
            "once active, a caller is answered at once"
        );
    }

    #[test]
    fn a_server_gone_during_its_start_fails_its_waiters_and_stays_broken() {
        let mut table = Table::default();
        table.starting(key(), "s1", Some(1));
        table.acquire(&key(), Some(2));
        assert_eq!(
            table.gone(&key(), "exited".to_string()),
            vec![(1, broken("exited")), (2, broken("exited"))]
        );
        assert_eq!(
            table.up(&key(), None),
            None,
            "a handshake reported after the server went away changes nothing"
        );
        assert_eq!(
            table.acquire(&key(), Some(3)),
            Acquire::Broken(Some(3), "exited".to_string())
        );
    }

    #[test]
    fn an_active_server_gone_has_nobody_to_answer() {
        let mut table = Table::default();
        table.starting(key(), "s1", None);
        assert_eq!(table.up(&key(), None), Some(Vec::new()));
        assert!(table.gone(&key(), "crashed".to_string()).is_empty());
        assert!(matches!(
            table.get(&key()),
            Some(Entry::Unusable {
                state: ServerState::Broken,
                ..
            })
        ));
    }

    #[test]
    fn an_unusable_server_is_answered_with_its_state_and_reason() {
        let table = [
            (ServerState::Disabled, "disabled by configuration"),
            (ServerState::Unavailable, "not installed"),
        ];
        for (state, reason) in table {
            let mut entries = Table::default();
            entries.unusable(key(), state, reason.to_string());
            let unusable = Answer::Unusable {
                state,
                reason: reason.to_string(),
            };
            assert_eq!(
                entries.acquire(&key(), Some(1)),
                Acquire::Answer(Some(1), unusable)
            );
        }
    }

    #[test]
    fn a_removed_entry_is_forgotten() {
        let mut table = Table::default();
        table.starting(key(), "s1", Some(1));
        assert!(matches!(
            table.remove(&key()),
            Some(Entry::Starting { waiters, .. }) if waiters == vec![1]
        ));
        assert!(table.get(&key()).is_none());
        assert_eq!(table.iter().count(), 0);
        assert_eq!(table.acquire(&key(), None), Acquire::Absent(None));
    }

    #[test]
    fn a_server_started_again_keeps_those_who_waited_for_the_first() {
        let mut table = Table::default();
        assert_eq!(table.acquire(&key(), Some(1)), Acquire::Absent(Some(1)));
        table.starting(key(), "s0", Some(1));
        assert_eq!(table.acquire(&key(), Some(2)), Acquire::Joined);
        assert!(table.is_starting(&key(), |s| *s == "s0"));
        assert!(!table.is_starting(&key(), |s| *s == "s1"));

        table.restarting(&key(), "s1");

        assert!(table.is_starting(&key(), |s| *s == "s1"));
        let answers = table.up(&key(), Some(7)).expect("it was starting");
        assert_eq!(answers, vec![(1, ready(true)), (2, ready(true))]);
        // Once up, it is not starting: nothing is replaced.
        table.restarting(&key(), "s2");
        assert!(!table.is_starting(&key(), |_| true));
    }
}
