//! Turns per document, in arrival order: the syncs of one file reach its servers in the order
//! its checks were asked for, however long each took to read the file or start a server.
//!
//! A check takes a [`Ticket`] before its first await, waits for its turn just before it hands
//! its text to the servers, and gives the turn on when the ticket is dropped (done, failed or
//! cancelled alike), so no check can hold up the ones after it for longer than its own work.
//! Taking a ticket is a request to the workspace actor, sent at once: the actor's mailbox order
//! is the tickets' order. The queues themselves ([`Turns`]) are part of its state.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::oneshot;

use super::workspace::Workspace;

/// Each document's queue of tickets, the first's turn under way: who is woken when (`W`, what
/// wakes a ticket's holder).
#[derive(Debug)]
pub(crate) struct Turns<W> {
    lines: HashMap<PathBuf, VecDeque<(u64, Option<W>)>>,
}

impl<W> Default for Turns<W> {
    fn default() -> Self {
        Self {
            lines: HashMap::new(),
        }
    }
}

impl<W> Turns<W> {
    /// Puts ticket `number` last in `path`'s line; its waker back when its turn is now (the
    /// line was empty).
    pub fn join(&mut self, path: &Path, number: u64, wake: W) -> Option<W> {
        let line = self.lines.entry(path.to_path_buf()).or_default();
        line.push_back((number, Some(wake)));
        match line.len() {
            1 => line.front_mut().and_then(|(_, wake)| wake.take()),
            _ => None,
        }
    }

    /// Takes ticket `number` out of `path`'s line; the waker of the next ticket when its turn
    /// comes now (the ticket taken out was the first).
    pub fn leave(&mut self, path: &Path, number: u64) -> Option<W> {
        let line = self.lines.get_mut(path)?;
        let at = line.iter().position(|(n, _)| *n == number)?;
        line.remove(at);
        let next = match at {
            0 => line.front_mut().and_then(|(_, wake)| wake.take()),
            _ => None,
        };
        if line.is_empty() {
            self.lines.remove(path);
        }
        next
    }

    /// How many documents have checks under way.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lines.len()
    }
}

/// The numbers of tickets, one count for every document.
#[derive(Debug, Default)]
pub(crate) struct Numbers(AtomicU64);

impl Workspace {
    /// Tickets for the next `N` turns of `path`, in order, with no other ticket between them:
    /// in line once the requests sent before this call ran.
    pub fn take_turns<const N: usize>(&self, path: &Path) -> [Ticket; N] {
        let mut joining = Vec::with_capacity(N);
        let tickets = std::array::from_fn(|_| {
            let number = self.numbers.0.fetch_add(1, Ordering::Relaxed);
            let (wake, turn) = oneshot::channel();
            joining.push((number, wake));
            Ticket {
                workspace: self.clone(),
                path: Arc::from(path),
                number,
                turn: Some(turn),
            }
        });
        let path = path.to_path_buf();
        self.tell(move |documents| {
            for (number, wake) in joining {
                if let Some(wake) = documents.turns.join(&path, number, wake) {
                    let _ = wake.send(());
                }
            }
        });
        tickets
    }
}

/// One check's place in its document's queue.
#[derive(Debug)]
pub(crate) struct Ticket {
    workspace: Workspace,
    path: Arc<Path>,
    number: u64,
    /// Until the turn came.
    turn: Option<oneshot::Receiver<()>>,
}

impl Ticket {
    /// Waits until every earlier ticket of the document is done.
    pub async fn turn(&mut self) {
        if let Some(turn) = self.turn.as_mut() {
            // Woken, or the actor is gone with the runtime: no one waits behind this ticket.
            let _ = turn.await;
            self.turn = None;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let (path, number) = (self.path.clone(), self.number);
        self.workspace.tell(move |documents| {
            if let Some(wake) = documents.turns.leave(&path, number) {
                let _ = wake.send(());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn turns_come_in_the_order_tickets_joined_and_no_one_is_held_up_by_one_gone() {
        let a = Path::new("/w/a.py");
        let b = Path::new("/w/b.py");
        // (step, ticket, the ticket whose turn comes by it)
        enum Step<'a> {
            Join(&'a Path),
            Leave(&'a Path),
        }
        use Step::{Join, Leave};
        type Steps<'a> = &'a [(Step<'a>, u64, Option<u64>)];
        let table: &[(&str, Steps)] = &[
            (
                "in the order of joining",
                &[
                    (Join(a), 1, Some(1)),
                    (Join(a), 2, None),
                    (Join(a), 3, None),
                    (Leave(a), 1, Some(2)),
                    (Leave(a), 2, Some(3)),
                    (Leave(a), 3, None),
                ],
            ),
            (
                "one gone before its turn holds up no one and jumps no one",
                &[
                    (Join(a), 1, Some(1)),
                    (Join(a), 2, None),
                    (Join(a), 3, None),
                    (Leave(a), 2, None),
                    (Leave(a), 1, Some(3)),
                ],
            ),
            (
                "documents do not wait for each other",
                &[(Join(a), 1, Some(1)), (Join(b), 2, Some(2))],
            ),
            (
                "a new line starts after the old one emptied",
                &[
                    (Join(a), 1, Some(1)),
                    (Leave(a), 1, None),
                    (Join(a), 2, Some(2)),
                ],
            ),
            ("a ticket never in line", &[(Leave(a), 9, None)]),
        ];
        for (name, steps) in table {
            let mut turns = Turns::default();
            for (step, number, woken) in steps.iter() {
                let got = match step {
                    Join(path) => turns.join(path, *number, *number),
                    Leave(path) => turns.leave(path, *number),
                };
                assert_eq!(got, *woken, "{name}: ticket {number}");
            }
        }
        let mut turns = Turns::default();
        turns.join(a, 1, 1);
        turns.leave(a, 1);
        assert_eq!(turns.len(), 0, "a document without checks keeps no line");
    }

    /// Whether the ticket's turn has come, once the actor ran every request sent before.
    async fn has_turn(ticket: &mut Ticket) -> bool {
        ticket.workspace.with(|_| ()).await;
        futures::FutureExt::now_or_never(ticket.turn()).is_some()
    }

    #[tokio::test]
    async fn tickets_taken_together_follow_each_other_and_wake_in_turn() {
        let workspace = Workspace::spawn();
        let path = Path::new("/w/a.py");
        let [mut before] = workspace.take_turns(path);
        let [mut first, mut second] = workspace.take_turns(path);
        let [mut after] = workspace.take_turns(path);
        assert!(has_turn(&mut before).await && !has_turn(&mut first).await);
        drop(before);
        assert!(has_turn(&mut first).await && !has_turn(&mut second).await);
        drop(first);
        assert!(has_turn(&mut second).await && !has_turn(&mut after).await);
        let waiter = tokio::spawn(async move { after.turn().await });
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the last ticket's turn came")
            .expect("the waiter did not panic");
    }
}
