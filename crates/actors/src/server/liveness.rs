//! Whether a server that a check gave up on is hung or only busy. A ping is sent (see
//! [`super::probe`]); the server is alive when it answers, however late, or when anything at
//! all comes from it after the ping was sent (a pull answer, a publish, progress), since a
//! server busy with a long check (pyright with 200 files) reads its messages in turn. Silence
//! for [`PROBE_WINDOW`] is hung, unless the server has work-done progress in flight: then it
//! gets up to [`BUSY_SILENCE`] of silence before it is called hung. The policy is pure (time
//! passed in); [`Heard`] counts what the server sends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a server with no work in progress may stay silent after a ping.
pub const PROBE_WINDOW: Duration = Duration::from_secs(5);

/// How long a server that said it is working (work-done progress begun, not ended) may stay
/// silent after a ping.
pub const BUSY_SILENCE: Duration = Duration::from_secs(60);

/// How many messages a server has sent (clean frames read from its stdout).
#[derive(Debug, Clone, Default)]
pub struct Heard(Arc<AtomicU64>);

impl Heard {
    /// One more message came.
    pub fn one(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// How many messages came so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What a probe concludes at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The server answered or sent something: it is alive.
    Alive,
    /// Nothing yet; look again after this long (or when the ping's answer comes).
    Wait(Duration),
    /// Silent too long: hung, and why.
    Hung(String),
}

/// The verdict on a server `silent_for` after its ping was sent with no answer to it:
/// `heard` says whether anything came from it since, `working` what work-done progress it has
/// in flight (its titles), if any.
pub fn verdict(silent_for: Duration, heard: bool, working: Option<&str>) -> Verdict {
    if heard {
        return Verdict::Alive;
    }
    if silent_for < PROBE_WINDOW {
        return Verdict::Wait(PROBE_WINDOW - silent_for);
    }
    match working {
        Some(_) if silent_for < BUSY_SILENCE => {
            Verdict::Wait((BUSY_SILENCE - silent_for).min(PROBE_WINDOW))
        }
        Some(work) => Verdict::Hung(format!(
            "not responding: nothing from it for {} s after a ping, though it said it was working ({work})",
            BUSY_SILENCE.as_secs()
        )),
        None => Verdict::Hung(format!(
            "not responding: no answer to a ping, and nothing else from it, within {} s after a check ran out of time",
            PROBE_WINDOW.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_verdict_on_a_silent_or_busy_server() {
        let hung = |v: &Verdict| matches!(v, Verdict::Hung(_));
        // (silent for, heard since the ping, work in progress) -> verdict
        let table: &[(Duration, bool, Option<&str>, Verdict)] = &[
            (secs(0), false, None, Verdict::Wait(secs(5))),
            (secs(2), false, None, Verdict::Wait(secs(3))),
            // Anything from it, at any time, is life (a late ping answer included).
            (secs(1), true, None, Verdict::Alive),
            (secs(6), true, None, Verdict::Alive),
            (secs(59), true, Some("Checking"), Verdict::Alive),
            // Work in progress: more time, a window at a time, up to the busy bound.
            (secs(5), false, Some("Checking"), Verdict::Wait(secs(5))),
            (secs(57), false, Some("Checking"), Verdict::Wait(secs(3))),
        ];
        for (silent_for, heard, working, expected) in table {
            assert_eq!(
                &verdict(*silent_for, *heard, *working),
                expected,
                "{silent_for:?} {heard} {working:?}"
            );
        }
        // Silence with nothing in progress past the window, or past the busy bound, is hung.
        assert!(hung(&verdict(secs(5), false, None)));
        assert!(hung(&verdict(secs(60), false, Some("Checking"))));
        let Verdict::Hung(reason) = verdict(secs(60), false, Some("Checking")) else {
            unreachable!()
        };
        assert!(reason.starts_with("not responding"), "{reason}");
        assert!(reason.contains("Checking"), "{reason}");
    }
}
