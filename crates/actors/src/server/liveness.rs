//! Whether a server that a check gave up on is hung or only busy. A ping is sent (see
//! [`super::probe`]); the server is alive when it answers, however late, or when anything at
//! all comes from it after the ping was sent (a pull answer, a publish, progress), since a
//! server busy with a long check (pyright with 200 files) reads its messages in turn. Silence
//! for [`PROBE_WINDOW`] is hung, unless the server is visibly working: it has work-done
//! progress in flight, or its processes used CPU time since the ping (on a loaded machine a
//! server busy analysing may not read its messages for seconds). Then it gets up to
//! [`BUSY_SILENCE`] of silence before it is called hung. The policy is pure (time passed in);
//! [`Heard`] counts what the server sends, [`group_cpu_ticks`] reads the CPU time.

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

/// The CPU time (user and system, in clock ticks) used so far by the processes of the group
/// `pgid` (a server and what it started); `None` where it cannot be read (no `/proc`).
pub fn group_cpu_ticks(pgid: u32) -> Option<u64> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut total = None;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some((group, ticks)) = group_and_ticks(&stat) {
            if group == pgid {
                total = Some(total.unwrap_or(0) + ticks);
            }
        }
    }
    total
}

/// A `/proc/<pid>/stat` line's process group and CPU ticks (utime + stime); the fields are
/// counted after the command name's closing parenthesis (the name may hold spaces).
fn group_and_ticks(stat: &str) -> Option<(u32, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), pgrp (5), ... utime (14), stime (15).
    let group = fields.get(2)?.parse().ok()?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((group, utime + stime))
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
/// `heard` says whether anything came from it since, `working` what it is visibly doing, if
/// anything: its work-done progress in flight (the titles), or that it used CPU time since.
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
            (secs(6), false, Some("using CPU"), Verdict::Wait(secs(5))),
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

    #[test]
    fn a_stat_line_gives_its_group_and_cpu_ticks_whatever_the_name() {
        let stat = "4242 (node (x) y) R 1 4240 4240 0 -1 4194304 100 0 0 0 250 30 0 0 20 0 11 0";
        assert_eq!(group_and_ticks(stat), Some((4240, 280)));
        assert_eq!(group_and_ticks("4242 (node"), None);
        // This test's own group used CPU time, as a Linux machine reports it.
        if cfg!(target_os = "linux") {
            let own = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
            let (group, _) = group_and_ticks(&own).unwrap_or_default();
            assert!(group_cpu_ticks(group).is_some());
        }
    }
}
