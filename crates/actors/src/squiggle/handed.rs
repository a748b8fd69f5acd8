//! The texts the servers were handed, as one number: what a file's answer depends on (the
//! other documents' texts) is the same again when this number is, so an answer given at it
//! still holds. A document's first text (the one it opened with, as on disk) counts as no
//! change; a change and its undoing (an edit's text, the text from before it, the edit's
//! again) cancel out.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// The hash of the text last handed to the servers of each document (kept when it closes),
/// and the state of all of them.
#[derive(Debug, Default)]
pub(crate) struct Handed {
    last: HashMap<PathBuf, u64>,
    /// How many times each document was handed a text other than its last.
    changes: HashMap<PathBuf, u64>,
    state: u64,
}

impl Handed {
    /// Notes that the servers were handed a text with this hash for `path`.
    pub fn hand(&mut self, path: &Path, hash: u64) {
        if self.last.get(path) != Some(&hash) {
            *self.changes.entry(path.to_path_buf()).or_default() += 1;
        }
        match self.last.insert(path.to_path_buf(), hash) {
            // Each document adds (by xor) its current text and takes away its first: a text
            // handed again, in any order, gives the same state.
            Some(before) if before != hash => {
                self.state ^= mark(path, before) ^ mark(path, hash);
            }
            _ => {}
        }
    }

    /// Notes that the servers saw `hash` as `path`'s text (on disk) before they were first
    /// handed one, unless they were handed one already: a first text that differs (an edit
    /// written before the file was ever opened) is then a change.
    pub fn seen_before(&mut self, path: &Path, hash: u64) {
        self.last.entry(path.to_path_buf()).or_insert(hash);
    }

    /// The hash of the text last handed (or seen before) of `path`.
    pub fn last(&self, path: &Path) -> Option<u64> {
        self.last.get(path).copied()
    }

    /// How many times `path` was handed a text other than its last: a hand-over between two
    /// looks changes it, whatever the texts.
    pub fn changes(&self, path: &Path) -> u64 {
        self.changes.get(path).copied().unwrap_or_default()
    }

    /// How many times each document was handed a text other than its last (see
    /// [`Handed::changes`]).
    pub fn all_changes(&self) -> HashMap<PathBuf, u64> {
        self.changes.clone()
    }

    /// The state of the texts handed so far: equal states, equal texts (but for a hash clash).
    pub fn state(&self) -> u64 {
        self.state
    }
}

/// One document's text, as a part of the state.
fn mark(path: &Path, hash: u64) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (path, hash).hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_hand_over_of_another_text_is_counted() {
        let mut handed = Handed::default();
        let a = Path::new("/a");
        handed.seen_before(a, 1);
        assert_eq!(handed.changes(a), 0);
        // (hash handed, changes after)
        for (hash, changes) in [(1, 0), (2, 1), (2, 1), (1, 2), (2, 3)] {
            handed.hand(a, hash);
            assert_eq!(handed.changes(a), changes, "after handing {hash}");
        }
        assert_eq!(handed.changes(Path::new("/b")), 0);
    }

    /// Texts handed, in order: (path, the text's hash).
    type Steps<'a> = &'a [(&'a str, u64)];

    /// The state after handing these in order.
    fn after(steps: Steps) -> u64 {
        let mut handed = Handed::default();
        for (path, hash) in steps {
            handed.hand(Path::new(path), *hash);
        }
        handed.state()
    }

    #[test]
    fn states_follow_the_texts_not_the_steps() {
        let start = after(&[("/a", 1), ("/b", 7)]);
        // (name, steps, same state as `start`)
        let table: &[(&str, Steps, bool)] = &[
            ("first texts are no change", &[("/a", 1), ("/b", 7)], true),
            (
                "a file opened later is no change",
                &[("/a", 1), ("/b", 7), ("/c", 3)],
                true,
            ),
            (
                "the same text again",
                &[("/a", 1), ("/b", 7), ("/a", 1)],
                true,
            ),
            ("a change", &[("/a", 1), ("/b", 7), ("/a", 2)], false),
            (
                "a change undone",
                &[("/a", 1), ("/b", 7), ("/a", 2), ("/a", 1)],
                true,
            ),
            (
                "an edit, the text from before it, the edit again",
                &[("/a", 1), ("/b", 7), ("/a", 2), ("/a", 1), ("/a", 2)],
                false,
            ),
            (
                "two changes undone in another order",
                &[
                    ("/a", 1),
                    ("/b", 7),
                    ("/a", 2),
                    ("/b", 8),
                    ("/a", 1),
                    ("/b", 7),
                ],
                true,
            ),
            (
                "the same change in another file is another state",
                &[("/a", 1), ("/b", 7), ("/b", 2)],
                false,
            ),
        ];
        for (name, steps, same) in table {
            assert_eq!(after(steps) == start, *same, "{name}");
        }
        let mut handed = Handed::default();
        handed.hand(Path::new("/b"), 7);
        let before = handed.state();
        handed.seen_before(Path::new("/a"), 1);
        handed.seen_before(Path::new("/b"), 8);
        assert_eq!(handed.state(), before, "what was seen before is no change");
        assert_eq!(
            handed.last(Path::new("/b")),
            Some(7),
            "a text handed stays the last"
        );
        handed.hand(Path::new("/a"), 2);
        assert_ne!(
            handed.state(),
            before,
            "a first text unlike the one seen is a change"
        );
        handed.hand(Path::new("/a"), 1);
        handed.hand(Path::new("/b"), 7);
        assert_eq!(
            handed.state(),
            before,
            "a text handed already is not taken back"
        );
        assert_eq!(
            after(&[("/a", 1), ("/b", 7), ("/a", 2), ("/a", 1), ("/a", 2)]),
            after(&[("/a", 1), ("/b", 7), ("/a", 2)]),
            "an edit undone and done again is the edit's state"
        );
    }
}
