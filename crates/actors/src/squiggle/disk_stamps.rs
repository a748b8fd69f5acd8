//! What squiggle last synced of each document it read from the disk, so that a call can tell,
//! cheaply and without the file watcher, which open documents changed on disk since: size and
//! modification time first, the content's hash when those match but cannot be trusted (the
//! file was modified so shortly before it was read that a later write could keep its time).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long before a read a file's modification time must lie for size and time alone to
/// prove it unchanged: more than the coarsest timestamp granularity of common file systems
/// (a write within the same tick keeps the time).
pub(crate) const TRUSTED_AGE: Duration = Duration::from_secs(2);

/// What a document's synced text was, and the file as it was then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The file's size in bytes.
    pub len: u64,
    /// The file's modification time, if the file system has one.
    pub modified: Option<SystemTime>,
    /// When the file was last read (or its content compared).
    pub read_at: SystemTime,
    /// The hash of the synced text.
    pub hash: u64,
}

/// The file as it is now, for [`verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Now {
    pub len: u64,
    pub modified: Option<SystemTime>,
}

/// What a stat of a synced document says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Unchanged: same size and time, and the time was old enough at the read to trust.
    Same,
    /// Another size: changed.
    Changed,
    /// Same size, but the time moved or cannot be trusted: compare the content's hash.
    Compare,
}

/// Whether a synced document changed on disk, from its stamp and a stat of it now.
pub(crate) fn verdict(stamp: &Stamp, now: Now) -> Verdict {
    if now.len != stamp.len {
        return Verdict::Changed;
    }
    let trusted = now
        .modified
        .zip(stamp.modified)
        .filter(|(now, then)| now == then)
        .and_then(|(modified, _)| modified.checked_add(TRUSTED_AGE))
        .is_some_and(|settled| settled < stamp.read_at);
    if trusted {
        Verdict::Same
    } else {
        Verdict::Compare
    }
}

/// The hash of a text, as stamps keep it.
pub(crate) fn hash_of(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The stamp of `text` just synced from `path` (a stat of the file now); `None` when the file
/// cannot be looked at.
pub(crate) fn stamp_of(path: &Path, text: &str) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        read_at: SystemTime::now(),
        hash: hash_of(text),
    })
}

/// The documents synced from the disk, by absolute path.
pub(crate) type Stamps = HashMap<PathBuf, Stamp>;

/// What a look at the disk found for one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// As synced; the stamp, refreshed when the content was compared.
    Same(Option<Stamp>),
    /// Changed on disk: sync it again.
    Changed,
    /// Gone (or not a file to read any more): close it.
    Gone,
}

/// Looks at one synced document on disk (blocking: a stat, and a read when the stat cannot
/// decide).
pub(crate) fn look(path: &Path, stamp: &Stamp, limit: u64) -> Found {
    let Ok(meta) = std::fs::metadata(path) else {
        return Found::Gone;
    };
    let now = Now {
        len: meta.len(),
        modified: meta.modified().ok(),
    };
    match verdict(stamp, now) {
        Verdict::Same => Found::Same(None),
        Verdict::Changed => Found::Changed,
        Verdict::Compare => match super::read_text(path, limit) {
            Ok(text) if hash_of(&text) == stamp.hash => Found::Same(Some(Stamp {
                len: now.len,
                modified: now.modified,
                read_at: SystemTime::now(),
                hash: stamp.hash,
            })),
            Ok(_) => Found::Changed,
            Err(_) => Found::Gone,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn stamp(len: u64, modified: Option<u64>, read_at: u64) -> Stamp {
        Stamp {
            len,
            modified: modified.map(at),
            read_at: at(read_at),
            hash: 7,
        }
    }

    #[test]
    fn what_a_stat_says() {
        let cases = [
            (
                "another size",
                stamp(10, Some(100), 200),
                (11, Some(100)),
                Verdict::Changed,
            ),
            (
                "same size and an old time",
                stamp(10, Some(100), 200),
                (10, Some(100)),
                Verdict::Same,
            ),
            (
                "same size, a newer time",
                stamp(10, Some(100), 200),
                (10, Some(150)),
                Verdict::Compare,
            ),
            (
                "modified within the trusted age before the read",
                stamp(10, Some(199), 200),
                (10, Some(199)),
                Verdict::Compare,
            ),
            (
                "modified exactly the trusted age before the read",
                stamp(10, Some(198), 200),
                (10, Some(198)),
                Verdict::Compare,
            ),
            (
                "no modification time",
                stamp(10, None, 200),
                (10, None),
                Verdict::Compare,
            ),
        ];
        for (name, stamp, (len, modified), expected) in cases {
            let now = Now {
                len,
                modified: modified.map(at),
            };
            assert_eq!(verdict(&stamp, now), expected, "{name}");
        }
    }

    #[test]
    fn a_file_rewritten_with_the_same_size_within_its_time_tick_is_seen() {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let path = dir.path().join("b.fake");
        std::fs::write(&path, "ERROR b\n").unwrap_or_else(|err| panic!("{err}"));
        let stamp = stamp_of(&path, "ERROR b\n").unwrap_or_else(|| panic!("no stamp"));
        assert!(matches!(look(&path, &stamp, 1 << 20), Found::Same(_)));
        std::fs::write(&path, "fixed b\n").unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(look(&path, &stamp, 1 << 20), Found::Changed);
        std::fs::remove_file(&path).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(look(&path, &stamp, 1 << 20), Found::Gone);
    }
}
