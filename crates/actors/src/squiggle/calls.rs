//! The calls from outside, counted: what a search after an edit's answer yields to.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

/// The calls from outside (a check, a feedback), counted: a search after an answer stops
/// when one comes, so that it never holds up what an agent asks next.
#[derive(Debug, Default)]
pub(crate) struct Calls {
    count: AtomicU64,
    came: Notify,
}

impl Calls {
    /// Notes that a call came.
    pub(crate) fn came(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.came.notify_waiters();
    }

    /// How many came so far.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Done once the count is other than `at`.
    pub(crate) async fn after(&self, at: u64) {
        loop {
            let came = self.came.notified();
            if self.count() != at {
                return;
            }
            came.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_call_ends_the_wait_for_one() {
        let calls = Calls::default();
        let at = calls.count();
        calls.came();
        // Came before the wait began: no wait.
        tokio::time::timeout(Duration::from_secs(5), calls.after(at))
            .await
            .expect("the call that came before is seen");
        let at = calls.count();
        let waiting = calls.after(at);
        tokio::pin!(waiting);
        assert!(futures::poll!(&mut waiting).is_pending(), "no call yet");
        calls.came();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the call ends the wait");
    }
}
