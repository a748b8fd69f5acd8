//! Until when checks wait for each document's answer, so that every pull sent for it (the
//! first, a retry, the pulls after the server's work ends or its refresh) may take as long as
//! the latest waiting check still waits, and never less than the usual request time: a pull's
//! own limit never cuts a check short. Pure: time is passed in.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

/// Per document, the latest deadline of a check that waits for it.
#[derive(Debug, Default)]
pub struct Wanted {
    until: HashMap<PathBuf, Instant>,
}

impl Wanted {
    /// A check waits for `path`'s answer until `deadline`.
    pub fn wait(&mut self, path: &Path, deadline: Instant) {
        let until = self.until.entry(path.to_path_buf()).or_insert(deadline);
        *until = (*until).max(deadline);
    }

    /// The document is closed: no check waits for it any more.
    pub fn forget(&mut self, path: &Path) {
        self.until.remove(path);
    }

    /// How long a pull of `path` sent at `now` may take: what the latest waiting check has
    /// left, at least `floor`. Deadlines that passed are dropped.
    pub fn limit(&mut self, path: &Path, now: Instant, floor: Duration) -> Duration {
        let left = match self.until.get(path) {
            Some(until) if *until > now => until.saturating_duration_since(now),
            Some(_) => {
                self.until.remove(path);
                Duration::ZERO
            }
            None => Duration::ZERO,
        };
        left.max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_gets_what_the_latest_waiting_check_has_left_and_at_least_the_floor() {
        let now = Instant::now();
        let floor = Duration::from_secs(10);
        let secs = Duration::from_secs;
        let a = Path::new("/ws/a.py");
        // (deadlines of the checks waiting, asked this long after now) -> limit
        let table: &[(&[u64], u64, Duration)] = &[
            (&[], 0, floor),
            (&[5], 0, floor),
            (&[60], 0, secs(60)),
            (&[60], 20, secs(40)),
            (&[60, 30], 0, secs(60)),
            (&[30, 90], 10, secs(80)),
            (&[60], 61, floor),
        ];
        for (deadlines, at, expected) in table {
            let mut wanted = Wanted::default();
            for d in *deadlines {
                wanted.wait(a, now + secs(*d));
            }
            let limit = wanted.limit(a, now + secs(*at), floor);
            assert_eq!(limit, *expected, "{deadlines:?} at {at}");
        }
        let mut wanted = Wanted::default();
        wanted.wait(a, now + secs(60));
        wanted.forget(a);
        assert_eq!(wanted.limit(a, now, floor), floor);
        assert_eq!(wanted.limit(Path::new("/ws/b.py"), now, floor), floor);
    }
}
