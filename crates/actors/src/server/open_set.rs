//! Which documents a server keeps open: at most a bound, the least recently used closed
//! first, never one that a check or a question is using; and none whose check was costly
//! (and whose text is the disk's) once an edit of another document comes.
//!
//! Why the costly ones go: a server analyses every open document again after each change to
//! what it imports (pyright asks for each to be pulled again; typescript-language-server asks
//! tsserver for the errors of every open file). Seen in the agent loop: once isort's `core.py`
//! had been edited, and so stayed open, pyright spent 2 to 5.5 s on it after every later edit
//! of another module, and 16 of the 20 checks after a revert ran out of time behind it.
//! Opening a document again costs its server one analysis, which the change costs anyway. They
//! are closed before the edit is synced, not during the look at its importers: closing a file
//! may have the server analyse the open files that import it again.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A check that took this long makes its document costly to keep open.
pub const COSTLY: Duration = Duration::from_secs(1);

/// The open documents of one server, in order of use, with how many users each has now.
#[derive(Debug)]
pub struct OpenSet {
    bound: usize,
    /// Counts uses; a larger tick is a later use.
    tick: u64,
    /// Each open document by its last use.
    by_use: BTreeMap<u64, PathBuf>,
    /// Each open document's last use and its users.
    slots: HashMap<PathBuf, Slot>,
    /// When the server's first check was answered.
    first_answer: Option<Instant>,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    used: u64,
    users: u32,
    /// Whether its last check took [`COSTLY`] or longer.
    costly: bool,
    /// Whether the text last synced is the disk's: a document that holds another text is never
    /// closed for its cost (its server would read the disk's instead).
    on_disk: bool,
}

impl OpenSet {
    /// An empty set that keeps at most `bound` documents open (when none is in use).
    pub fn new(bound: usize) -> Self {
        Self {
            bound,
            tick: 0,
            by_use: BTreeMap::new(),
            slots: HashMap::new(),
            first_answer: None,
        }
    }

    /// Whether a check answered `now`, having taken `took`, says what its document costs: it
    /// began once the server had answered a check before. A cold server's first checks wait for
    /// it to load the project (pyright: 1.5 s for isort's smallest module, then 70 ms).
    pub fn warm(&mut self, now: Instant, took: Duration) -> bool {
        let first = *self.first_answer.get_or_insert(now);
        now.checked_sub(took).is_some_and(|began| began >= first)
    }

    /// A document is used now (and open, if it was not).
    pub fn touch(&mut self, path: &Path) {
        self.tick += 1;
        let tick = self.tick;
        let slot = self.slots.entry(path.to_path_buf()).or_insert(Slot {
            used: tick,
            users: 0,
            costly: false,
            on_disk: true,
        });
        self.by_use.remove(&slot.used);
        slot.used = tick;
        self.by_use.insert(tick, path.to_path_buf());
    }

    /// A check or question starts using a document: it stays open until [`OpenSet::release`].
    pub fn hold(&mut self, path: &Path) {
        self.touch(path);
        if let Some(slot) = self.slots.get_mut(path) {
            slot.users += 1;
        }
    }

    /// A check or question is done with a document; a check says how long it `took`.
    pub fn release(&mut self, path: &Path, took: Option<Duration>) {
        if let Some(slot) = self.slots.get_mut(path) {
            slot.users = slot.users.saturating_sub(1);
            if let Some(took) = took {
                slot.costly = took >= COSTLY;
            }
        }
    }

    /// A document was synced with a text that is the disk's (`on_disk`) or not; it is used now.
    pub fn synced(&mut self, path: &Path, on_disk: bool) {
        self.touch(path);
        if let Some(slot) = self.slots.get_mut(path) {
            slot.on_disk = on_disk;
        }
    }

    /// The documents to close before an edit of `keep`: those but `keep` whose last check was
    /// costly, that hold the disk's text and that nothing uses; they leave the set.
    pub fn costly_besides(&mut self, keep: &Path) -> Vec<PathBuf> {
        let costly: Vec<(u64, PathBuf)> = (self.by_use.iter())
            .filter(|(_, path)| path.as_path() != keep)
            .filter(|(_, path)| {
                let slot = self.slots.get(*path);
                slot.is_some_and(|s| s.costly && s.on_disk && s.users == 0)
            })
            .map(|(used, path)| (*used, path.clone()))
            .collect();
        self.take_out(costly)
    }

    /// Takes `documents` (each with its last use) out of the set; returns their paths.
    fn take_out(&mut self, documents: Vec<(u64, PathBuf)>) -> Vec<PathBuf> {
        for (used, path) in &documents {
            self.by_use.remove(used);
            self.slots.remove(path);
        }
        documents.into_iter().map(|(_, path)| path).collect()
    }

    /// A document was closed.
    pub fn remove(&mut self, path: &Path) {
        if let Some(slot) = self.slots.remove(path) {
            self.by_use.remove(&slot.used);
        }
    }

    /// The documents to close now, least recently used first, so that no more than the bound
    /// stay open (or as few over it as the documents in use allow); they leave the set.
    pub fn overflow(&mut self) -> Vec<PathBuf> {
        let excess = self.slots.len().saturating_sub(self.bound);
        if excess == 0 {
            return Vec::new();
        }
        let victims: Vec<(u64, PathBuf)> = self
            .by_use
            .iter()
            .filter(|(_, path)| self.slots.get(*path).is_some_and(|slot| slot.users == 0))
            .take(excess)
            .map(|(tick, path)| (*tick, path.clone()))
            .collect();
        self.take_out(victims)
    }

    /// How many documents are open.
    pub fn len(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str) -> PathBuf {
        PathBuf::from(format!("/ws/{name}"))
    }

    #[test]
    fn within_the_bound_nothing_is_closed() {
        let mut open = OpenSet::new(2);
        open.touch(&p("a"));
        open.touch(&p("b"));
        assert!(open.overflow().is_empty());
        assert_eq!(open.len(), 2);
    }

    #[test]
    fn the_least_recently_used_is_closed_first() {
        let mut open = OpenSet::new(2);
        open.touch(&p("a"));
        open.touch(&p("b"));
        open.touch(&p("a"));
        open.touch(&p("c"));
        assert_eq!(open.overflow(), vec![p("b")]);
        open.touch(&p("d"));
        assert_eq!(open.overflow(), vec![p("a")]);
        assert_eq!(open.len(), 2);
    }

    #[test]
    fn a_document_in_use_stays_open_until_released() {
        let mut open = OpenSet::new(1);
        open.hold(&p("a"));
        open.hold(&p("b"));
        assert!(open.overflow().is_empty(), "both in use: over the bound");
        open.release(&p("a"), None);
        assert_eq!(open.overflow(), vec![p("a")]);
        open.touch(&p("c"));
        assert_eq!(open.overflow(), vec![p("c")], "b is still in use");
        open.release(&p("b"), None);
        assert!(open.overflow().is_empty());
    }

    #[test]
    fn two_users_of_one_document_both_release_it() {
        let mut open = OpenSet::new(0);
        open.hold(&p("a"));
        open.hold(&p("a"));
        open.release(&p("a"), None);
        assert!(open.overflow().is_empty());
        open.release(&p("a"), None);
        assert_eq!(open.overflow(), vec![p("a")]);
    }

    #[test]
    fn a_closed_document_is_forgotten_and_may_come_back() {
        let mut open = OpenSet::new(1);
        open.touch(&p("a"));
        open.remove(&p("a"));
        open.release(&p("a"), None);
        assert_eq!(open.len(), 0);
        open.touch(&p("b"));
        open.touch(&p("a"));
        assert_eq!(open.overflow(), vec![p("b")]);
    }

    #[test]
    fn a_document_whose_check_was_costly_closes_before_an_edit_of_another() {
        let mut open = OpenSet::new(10);
        let (cheap, costly) = (Some(COSTLY / 2), Some(COSTLY));
        for (name, took) in [("a", cheap), ("b", costly), ("c", costly)] {
            open.hold(&p(name));
            open.release(&p(name), took);
        }
        open.hold(&p("c"));
        assert_eq!(
            open.costly_besides(&p("b")),
            Vec::<PathBuf>::new(),
            "b is the one edited, c is in use"
        );
        open.release(&p("c"), None);
        assert_eq!(open.costly_besides(&p("a")), vec![p("b"), p("c")]);
        assert_eq!(open.len(), 1);
        // A question's release leaves the mark; a cheaper check takes it away.
        open.hold(&p("a"));
        open.release(&p("a"), costly);
        open.hold(&p("a"));
        open.release(&p("a"), None);
        open.hold(&p("a"));
        open.release(&p("a"), cheap);
        assert!(open.costly_besides(&p("d")).is_empty());
        // A text that is not the disk's stays open, however costly.
        open.synced(&p("e"), false);
        open.hold(&p("e"));
        open.release(&p("e"), costly);
        assert!(open.costly_besides(&p("d")).is_empty());
        open.synced(&p("e"), true);
        assert_eq!(open.costly_besides(&p("d")), vec![p("e")]);
    }

    #[test]
    fn only_a_check_begun_after_the_first_answer_tells_a_documents_cost() {
        let mut open = OpenSet::new(10);
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(1_000 + ms);
        let ms = Duration::from_millis;
        // (answered at, took, warm)
        let table = [
            (at(0), ms(1_000), false), // the first answer: the server loaded the project
            (at(10), ms(1_010), false), // begun with it, before the first answer
            (at(500), ms(400), true),  // begun after it
            (at(600), ms(600), true),  // begun at it
            (at(700), ms(701), false), // begun just before it
        ];
        for (answered, took, warm) in table {
            assert_eq!(open.warm(answered, took), warm, "{took:?} to {answered:?}");
        }
    }

    #[test]
    fn many_over_the_bound_close_in_order_of_use() {
        let mut open = OpenSet::new(3);
        for name in ["a", "b", "c", "d", "e", "f"] {
            open.touch(&p(name));
        }
        assert_eq!(open.overflow(), vec![p("a"), p("b"), p("c")]);
    }
}
