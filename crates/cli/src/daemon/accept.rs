//! What the daemon's accept loop does when accepting fails (out of file descriptors: every
//! try fails at once while connections wait): it waits longer after each failure in a row,
//! from 50 ms up to 500 ms, instead of spinning, and logs the first failure of a run and then
//! one line a minute with the count, instead of a line per try.

use std::time::Duration;

/// The wait after the first failure in a row.
const FIRST_WAIT: Duration = Duration::from_millis(50);
/// The longest wait.
const MAX_WAIT: Duration = Duration::from_millis(500);
/// How often a run of failures is logged again.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// A run of failed accepts.
#[derive(Debug, Default)]
pub struct Failures {
    /// Failures in a row.
    in_a_row: u32,
    /// Failures not logged yet.
    unlogged: u64,
    /// When the run was last logged.
    logged_at: Option<std::time::Instant>,
}

/// What to do after a failure.
#[derive(Debug, PartialEq, Eq)]
pub struct After {
    /// How long to wait before accepting again.
    pub wait: Duration,
    /// The line to log, if one is due: the failures it stands for.
    pub log: Option<u64>,
}

impl Failures {
    /// An accept succeeded: the run is over.
    pub fn succeeded(&mut self) {
        self.in_a_row = 0;
    }

    /// An accept failed at `now`.
    pub fn failed(&mut self, now: std::time::Instant) -> After {
        self.in_a_row = self.in_a_row.saturating_add(1);
        self.unlogged += 1;
        let wait = wait_after(self.in_a_row);
        let due = self
            .logged_at
            .is_none_or(|at| now.saturating_duration_since(at) >= LOG_EVERY);
        let log = due.then(|| {
            self.logged_at = Some(now);
            std::mem::take(&mut self.unlogged)
        });
        After { wait, log }
    }
}

/// The wait after `n` failures in a row: 50 ms, doubled for each, at most 500 ms.
fn wait_after(n: u32) -> Duration {
    let doublings = n.saturating_sub(1).min(16);
    (FIRST_WAIT * 2u32.pow(doublings)).min(MAX_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_grows_from_50_to_500_ms() {
        let cases = [(1, 50), (2, 100), (3, 200), (4, 400), (5, 500), (40, 500)];
        for (n, ms) in cases {
            assert_eq!(wait_after(n), Duration::from_millis(ms), "after {n}");
        }
    }

    #[test]
    fn a_run_of_failures_is_logged_once_a_minute_with_its_count() {
        let t0 = std::time::Instant::now();
        let mut failures = Failures::default();
        assert_eq!(failures.failed(t0).log, Some(1));
        for i in 1..100 {
            let after = failures.failed(t0 + Duration::from_millis(i));
            assert_eq!(after.log, None);
        }
        assert_eq!(failures.failed(t0 + LOG_EVERY).log, Some(100));
        failures.succeeded();
        let after = failures.failed(t0 + LOG_EVERY + Duration::from_secs(1));
        assert_eq!(after.wait, FIRST_WAIT, "a new run starts short");
        assert_eq!(after.log, None, "still at most a line a minute");
    }
}
