//! Turns per document, in arrival order: the syncs of one file reach its servers in the order
//! its checks were asked for, however long each took to read the file or start a server.
//!
//! A check takes a [`Ticket`] before its first await, waits for its turn just before it hands
//! its text to the servers, and gives the turn on when the ticket is dropped (done, failed or
//! cancelled alike), so no check can hold up the ones after it for longer than its own work.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::lock::lock;

/// The turns of every document with checks under way.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    lines: Arc<Mutex<HashMap<PathBuf, Line>>>,
}

/// One document's queue.
#[derive(Debug)]
struct Line {
    /// The number the next ticket gets.
    next: u64,
    /// The ticket whose turn it is; every lower one is done.
    serving: watch::Sender<u64>,
    /// Tickets above `serving` that are already done (dropped out of order).
    done: BTreeSet<u64>,
}

impl Turns {
    /// A ticket for the next turn of `path`.
    pub fn take(&self, path: &Path) -> Ticket {
        let [ticket] = self.take_turns(path);
        ticket
    }

    /// Tickets for the next `N` turns of `path`, in order, with no other ticket between them.
    pub fn take_turns<const N: usize>(&self, path: &Path) -> [Ticket; N] {
        let mut lines = lock(&self.lines);
        std::array::from_fn(|_| Self::next_ticket(&self.lines, &mut lines, path))
    }

    /// The next ticket of `path`'s line, under the lock `lines` holds.
    fn next_ticket(
        shared: &Arc<Mutex<HashMap<PathBuf, Line>>>,
        lines: &mut HashMap<PathBuf, Line>,
        path: &Path,
    ) -> Ticket {
        let line = lines.entry(path.to_path_buf()).or_insert_with(|| Line {
            next: 0,
            serving: watch::Sender::new(0),
            done: BTreeSet::new(),
        });
        let number = line.next;
        line.next += 1;
        Ticket {
            lines: shared.clone(),
            path: path.to_path_buf(),
            number,
            serving: line.serving.subscribe(),
        }
    }

    /// How many documents have checks under way (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.lines).len()
    }
}

/// One check's place in its document's queue.
#[derive(Debug)]
pub(crate) struct Ticket {
    lines: Arc<Mutex<HashMap<PathBuf, Line>>>,
    path: PathBuf,
    number: u64,
    serving: watch::Receiver<u64>,
}

impl Ticket {
    /// Waits until every earlier ticket of the document is done.
    pub async fn turn(&mut self) {
        let number = self.number;
        // The sender lives while this ticket does (it is removed only when no ticket is left).
        let _ = self.serving.wait_for(|serving| *serving >= number).await;
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut lines = lock(&self.lines);
        let Some(line) = lines.get_mut(&self.path) else {
            return;
        };
        line.done.insert(self.number);
        let mut serving = *line.serving.borrow();
        while line.done.remove(&serving) {
            serving += 1;
        }
        line.serving.send_replace(serving);
        if serving == line.next {
            lines.remove(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Whether the ticket's turn has come, without waiting.
    fn has_turn(ticket: &mut Ticket) -> bool {
        futures::FutureExt::now_or_never(ticket.turn()).is_some()
    }

    #[test]
    fn turns_come_in_the_order_tickets_were_taken() {
        let turns = Turns::default();
        let path = Path::new("/w/a.py");
        let mut first = turns.take(path);
        let mut second = turns.take(path);
        let mut third = turns.take(path);
        assert!(has_turn(&mut first));
        assert!(!has_turn(&mut second));
        assert!(!has_turn(&mut third));
        drop(first);
        assert!(has_turn(&mut second));
        assert!(!has_turn(&mut third));
        drop(second);
        assert!(has_turn(&mut third));
        drop(third);
        assert_eq!(turns.len(), 0, "a document without checks keeps no queue");
    }

    #[test]
    fn tickets_taken_together_follow_each_other() {
        let turns = Turns::default();
        let path = Path::new("/w/a.py");
        let mut before = turns.take(path);
        let [mut first, mut second] = turns.take_turns(path);
        let mut after = turns.take(path);
        assert!(has_turn(&mut before) && !has_turn(&mut first));
        drop(before);
        assert!(has_turn(&mut first) && !has_turn(&mut second));
        drop(first);
        assert!(has_turn(&mut second) && !has_turn(&mut after));
        drop(second);
        assert!(has_turn(&mut after));
    }

    #[test]
    fn a_ticket_dropped_before_its_turn_holds_up_no_one_and_jumps_no_one() {
        let turns = Turns::default();
        let path = Path::new("/w/a.py");
        let first = turns.take(path);
        let second = turns.take(path);
        let mut third = turns.take(path);
        drop(second);
        assert!(!has_turn(&mut third), "the first is still at work");
        drop(first);
        assert!(has_turn(&mut third));
    }

    #[test]
    fn documents_do_not_wait_for_each_other() {
        let turns = Turns::default();
        let _a = turns.take(Path::new("/w/a.py"));
        let mut b = turns.take(Path::new("/w/b.py"));
        assert!(has_turn(&mut b));
    }

    #[test]
    fn a_new_queue_starts_after_the_old_one_emptied() {
        let turns = Turns::default();
        let path = Path::new("/w/a.py");
        drop(turns.take(path));
        let mut again = turns.take(path);
        assert!(has_turn(&mut again));
    }

    #[tokio::test]
    async fn a_waiting_ticket_wakes_when_the_one_before_is_done() {
        let turns = Turns::default();
        let path = Path::new("/w/a.py");
        let first = turns.take(path);
        let mut second = turns.take(path);
        let waiter = tokio::spawn(async move {
            second.turn().await;
        });
        drop(first);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the second ticket's turn came")
            .expect("the waiter did not panic");
    }
}
