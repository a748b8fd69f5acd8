//! The completion model: the one place that decides when a server's diagnostics for one
//! document version are *final*, from the strongest signals the server gives. Pure: what was
//! seen and the time are passed in, and the answer is a decision.
//!
//! | the server gives                                     | final when                        | basis           |
//! | ---------------------------------------------------- | --------------------------------- | --------------- |
//! | a pull answer (`textDocument/diagnostic`)            | the answer for the version comes, | `pull`          |
//! |                                                      | asked while the server was ready  |                 |
//! | ...and a build check on save (rust-analyzer's flycheck) | also: a check begun after the save | `pull+flycheck` |
//! |                                                      | ended, and its publishes are in   |                 |
//! | versioned publishes, once per version                | that publish comes while idle     | `version`       |
//! | nothing (unversioned, or in stages with no end)      | a quiet time after the last one   | `quiet_time`    |
//!
//! *Ready*: a server that says when it has loaded the project (rust-analyzer's
//! `experimental/serverStatus`, `quiescent`) answers pulls before that at once, with nothing;
//! such an answer is what the server had, not its answer for the text, and never final.
//!
//! *The check on save* reads the disk: it runs only for a saved text, and what it publishes
//! comes from worker threads right after its end, so its part is done a quiet time after the
//! end of the last check begun after the save (threads that may also deliver two of its
//! publishes the other way round: the store keeps the later list, see its `CROSSING`). A text
//! that is not on disk gets the server's own analysis only ([`CheckPart::Unseen`]).
//!
//! A delivery naming a later version ends the wait as superseded: an answer always belongs to
//! the text it was asked for.
//!
//! Work in progress (work-done progress, rust-analyzer's `serverStatus`, a pull in flight)
//! holds every rule but the pull answer; a quiet time counts from the later of the last
//! publish and the end of the work. A failed pull with nothing else delivered ends the wait
//! at once with the server's error.

use std::time::Duration;

use tokio::time::Instant;

pub use squiggle_config::Stages;
pub use squiggle_protocol::Basis;

/// What is known of a server ahead of a wait: how it says that it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traits {
    /// The server answers pulls, and this document is pulled after the change.
    pub pull: bool,
    /// Whether the server publishes a version's diagnostics in stages, and how it ends them.
    pub stages: Stages,
    /// The quiet time that ends a wait resting on no signal (and follows a check's end).
    pub settle: Duration,
    /// Whether the answer also waits for the build check the server runs on save.
    pub check: CheckPart,
}

/// The part of a server's build check on save (rust-analyzer's `cargo check`) in a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckPart {
    /// The server runs no check on save.
    #[default]
    None,
    /// The text was saved: the answer waits for a check begun after the save to end.
    Awaited,
    /// The text is not on disk, so the check cannot see it: the answer is the server's own
    /// analysis only, and what the check published (about the disk's text) is left out.
    Unseen,
}

/// One delivery seen since the change was sent: the version it names, and when it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// The document version it is for, if it names one.
    pub version: Option<i32>,
    /// When it came.
    pub at: Instant,
    /// Whether the server was ready when it was asked (always, for a publish): an answer from
    /// a server still loading its project is what it had then, not its answer for the text.
    pub ready: bool,
}

impl Delivery {
    /// Whether it names exactly `version`.
    fn names(&self, version: i32) -> bool {
        self.version == Some(version)
    }

    /// Whether it may be for `version`: it names it, or names none.
    fn may_be_for(&self, version: i32) -> bool {
        self.version.is_none_or(|v| v == version)
    }

    /// Whether it names a later version: the text waited for was replaced before its answer.
    fn is_later_than(&self, version: i32) -> bool {
        self.version.is_some_and(|v| v > version)
    }
}

/// Where the server's build check stands since the change was sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CheckSeen {
    /// No check began since the change.
    #[default]
    NotBegun,
    /// A check begun since the change runs, under this title (`cargo check`).
    Running(String),
    /// The last check begun since the change ended at this moment, and none runs.
    Ended(Instant),
}

/// What has been seen for one wait since the change was sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// The last publish.
    pub push: Option<Delivery>,
    /// The last pull answer.
    pub pull: Option<Delivery>,
    /// The error of the last pull for the version, when it failed.
    pub pull_failed: Option<String>,
    /// Whether the server is working now.
    pub busy: bool,
    /// When the server last stopped working.
    pub idle_since: Option<Instant>,
    /// The server's build check on save.
    pub check: CheckSeen,
}

impl Seen {
    /// Whether anything came that may be for `version`: what a wait cut short by its deadline
    /// holds is then the server's answer so far, not nothing.
    pub fn has_any_for(&self, version: i32) -> bool {
        self.pull.is_some() || self.push.is_some_and(|push| push.may_be_for(version))
    }
}

/// What a wait is to do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The answer is final, on this basis.
    Final(Basis),
    /// A quiet time ends at this moment: look again then (or when something happens).
    LookAt(Instant),
    /// Nothing can end the wait but an event (or the deadline).
    Waiting,
    /// The server's pull failed and nothing else can answer: end the wait with its error.
    Failed(String),
    /// The server answered for a later version: the text waited for was replaced by a later
    /// change before its answer came, and what the server says now belongs to that one.
    Superseded,
}

/// Decides whether a server's diagnostics for document `version` are final now.
pub fn decide(version: i32, traits: Traits, seen: &Seen, now: Instant) -> Decision {
    let pulled = seen
        .pull
        .is_some_and(|pull| pull.names(version) && pull.ready);
    if pulled && traits.check != CheckPart::Awaited {
        return Decision::Final(Basis::Pull);
    }
    if [seen.pull, seen.push]
        .iter()
        .flatten()
        .any(|delivery| delivery.is_later_than(version))
    {
        return Decision::Superseded;
    }
    if pulled {
        return after_the_check(traits, seen, now, Basis::PullAndCheck);
    }
    let idle_since = |at: Instant| seen.idle_since.is_none_or(|idle| idle <= at);
    // Published while idle: a publish during work may be followed by another once the work
    // ends, and that case falls to the quiet time below.
    let published_idle = seen
        .push
        .is_some_and(|push| push.names(version) && idle_since(push.at));
    if !seen.busy && !traits.pull && traits.stages == Stages::Once && published_idle {
        return after_the_check(traits, seen, now, Basis::Version);
    }
    let push = seen.push.filter(|push| push.may_be_for(version));
    if let Some(error) = &seen.pull_failed {
        if push.is_none() {
            return Decision::Failed(error.clone());
        }
    }
    if seen.busy {
        return Decision::Waiting;
    }
    // A pull that is due is the answer to wait for; a quiet time must not pre-empt it.
    if traits.pull && seen.pull_failed.is_none() {
        return Decision::Waiting;
    }
    match push {
        Some(push) => {
            let quiet_from = seen.idle_since.map_or(push.at, |idle| idle.max(push.at));
            let ends = quiet_from + traits.settle;
            if now >= ends {
                after_the_check(traits, seen, now, Basis::QuietTime)
            } else {
                Decision::LookAt(ends)
            }
        }
        None => Decision::Waiting,
    }
}

/// The rest of the decision once the server's own answer is final on `basis`: when the answer
/// waits for the check on save, it is final a quiet time after the check's end (and after any
/// publish since: the check's results come right after it ends).
fn after_the_check(traits: Traits, seen: &Seen, now: Instant, basis: Basis) -> Decision {
    if traits.check != CheckPart::Awaited {
        return Decision::Final(basis);
    }
    let CheckSeen::Ended(ended) = seen.check else {
        return Decision::Waiting;
    };
    let last_push = seen.push.map(|push| push.at).filter(|at| *at > ended);
    let ends = last_push.unwrap_or(ended) + traits.settle;
    if now >= ends {
        Decision::Final(basis)
    } else {
        Decision::LookAt(ends)
    }
}

/// What a wait cut short by its deadline still lacked, in words (`cargo check did not
/// finish`), when it is more than the server's answer itself.
pub fn unfinished(traits: Traits, seen: &Seen) -> Option<String> {
    let unready = seen.pull.is_some_and(|pull| !pull.ready);
    if traits.pull && unready {
        return Some("the server had not finished loading the project".to_string());
    }
    if traits.check != CheckPart::Awaited {
        return None;
    }
    match &seen.check {
        CheckSeen::NotBegun => Some("its check on save did not start".to_string()),
        CheckSeen::Running(title) => Some(format!("{title} did not finish")),
        CheckSeen::Ended(_) => None,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::diagnostics) const SETTLE: Duration = Duration::from_millis(100);

    fn traits(pull: bool, stages: Stages) -> Traits {
        Traits {
            pull,
            stages,
            settle: SETTLE,
            check: CheckPart::None,
        }
    }

    /// A server that publishes each version once (pyright, gopls).
    pub(in crate::diagnostics) const PUSHED: Traits = Traits {
        pull: false,
        stages: Stages::Once,
        settle: SETTLE,
        check: CheckPart::None,
    };

    /// rust-analyzer on a saved file: pulled, staged, and its check on save awaited.
    pub(in crate::diagnostics) const CHECKED: Traits = Traits {
        pull: true,
        stages: Stages::Unsignalled,
        settle: SETTLE,
        check: CheckPart::Awaited,
    };

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    fn delivery(version: Option<i32>, at: Instant) -> Option<Delivery> {
        Some(Delivery {
            version,
            at,
            ready: true,
        })
    }

    /// A pull answered by a server that was still loading its project when asked.
    fn unready(version: Option<i32>, at: Instant) -> Option<Delivery> {
        Some(Delivery {
            version,
            at,
            ready: false,
        })
    }

    /// One row: the traits, what was seen (times in ms from t0), when to decide, and the
    /// decision expected (`LookAt` in ms from t0).
    struct Row {
        name: &'static str,
        traits: Traits,
        seen: fn(Instant) -> Seen,
        now_ms: u64,
        expect: fn(Instant) -> Decision,
    }

    #[test]
    fn the_table() {
        let rows = [
            Row {
                name: "a pull answer for the version is final at once",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 5,
                expect: |_| Decision::Final(Basis::Pull),
            },
            Row {
                name: "a pull answer is final even while the server works",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    busy: true,
                    ..Seen::default()
                },
                now_ms: 5,
                expect: |_| Decision::Final(Basis::Pull),
            },
            Row {
                name: "a pull answer for an older version is not",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    pull: delivery(Some(1), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 500,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "a pulled server's publish does not pre-empt its pull",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 500,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "a failed pull with nothing published ends the wait with its error",
                traits: traits(true, Stages::Once),
                seen: |_| Seen {
                    pull_failed: Some("-32602: bad params".to_string()),
                    ..Seen::default()
                },
                now_ms: 5,
                expect: |_| Decision::Failed("-32602: bad params".to_string()),
            },
            Row {
                name: "a failed pull falls back to what was published, after a quiet time",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 5)),
                    pull_failed: Some("boom".to_string()),
                    ..Seen::default()
                },
                now_ms: 50,
                expect: |t| Decision::LookAt(at(t, 105)),
            },
            Row {
                name: "a versioned publish while idle is final at once",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 5,
                expect: |_| Decision::Final(Basis::Version),
            },
            Row {
                name: "a publish for a later version supersedes the wait",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(Some(3), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 5,
                expect: |_| Decision::Superseded,
            },
            Row {
                name: "so does a pull answer for a later version",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    pull: delivery(Some(3), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 5,
                expect: |_| Decision::Superseded,
            },
            Row {
                name: "a publish for an older version is not for this one",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(Some(1), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "a versioned publish while the server works waits for the work",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 5)),
                    busy: true,
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "a publish made during work gets a quiet time after the work ends",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 5)),
                    idle_since: Some(at(t, 40)),
                    ..Seen::default()
                },
                now_ms: 50,
                expect: |t| Decision::LookAt(at(t, 140)),
            },
            Row {
                name: "...and is final on that quiet time once it has passed",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 5)),
                    idle_since: Some(at(t, 40)),
                    ..Seen::default()
                },
                now_ms: 140,
                expect: |_| Decision::Final(Basis::QuietTime),
            },
            Row {
                name: "a publish after the work ended is final at once",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 50)),
                    idle_since: Some(at(t, 40)),
                    ..Seen::default()
                },
                now_ms: 50,
                expect: |_| Decision::Final(Basis::Version),
            },
            Row {
                name: "an unversioned publish rests on the quiet time",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(None, at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 50,
                expect: |t| Decision::LookAt(at(t, 105)),
            },
            Row {
                name: "...which is a guess once it has passed",
                traits: PUSHED,
                seen: |t| Seen {
                    push: delivery(None, at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 105,
                expect: |_| Decision::Final(Basis::QuietTime),
            },
            Row {
                name: "a server that stages without an end signal rests on the quiet time",
                traits: traits(false, Stages::Unsignalled),
                seen: |t| Seen {
                    push: delivery(Some(2), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 6,
                expect: |t| Decision::LookAt(at(t, 105)),
            },
            Row {
                name: "a pull asked before the server was ready is not final",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    pull: unready(Some(2), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "...not even once the server is idle",
                traits: traits(true, Stages::Once),
                seen: |t| Seen {
                    pull: unready(Some(2), at(t, 5)),
                    idle_since: Some(at(t, 10)),
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "a saved file's pull answer waits for a check on save to begin",
                traits: CHECKED,
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "...and for it to end",
                traits: CHECKED,
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    busy: true,
                    check: CheckSeen::Running("cargo check".to_string()),
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "...then for the publishes that follow the end",
                traits: CHECKED,
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    check: CheckSeen::Ended(at(t, 50)),
                    ..Seen::default()
                },
                now_ms: 60,
                expect: |t| Decision::LookAt(at(t, 150)),
            },
            Row {
                name: "...a publish after the end starts that quiet time again",
                traits: CHECKED,
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    push: delivery(Some(2), at(t, 70)),
                    check: CheckSeen::Ended(at(t, 50)),
                    ..Seen::default()
                },
                now_ms: 160,
                expect: |t| Decision::LookAt(at(t, 170)),
            },
            Row {
                name: "...and the pull with the check is final once it has passed",
                traits: CHECKED,
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    push: delivery(Some(2), at(t, 70)),
                    check: CheckSeen::Ended(at(t, 50)),
                    ..Seen::default()
                },
                now_ms: 170,
                expect: |_| Decision::Final(Basis::PullAndCheck),
            },
            Row {
                name:
                    "an ended check does not stand in for a pull asked before the server was ready",
                traits: CHECKED,
                seen: |t| Seen {
                    pull: unready(Some(2), at(t, 5)),
                    check: CheckSeen::Ended(at(t, 50)),
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
            Row {
                name: "a later save's publish supersedes a wait on the check",
                traits: CHECKED,
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    push: delivery(Some(3), at(t, 70)),
                    check: CheckSeen::Ended(at(t, 50)),
                    ..Seen::default()
                },
                now_ms: 900,
                expect: |_| Decision::Superseded,
            },
            Row {
                name: "a text the check cannot see is final on the pull alone",
                traits: Traits {
                    check: CheckPart::Unseen,
                    ..CHECKED
                },
                seen: |t| Seen {
                    pull: delivery(Some(2), at(t, 5)),
                    ..Seen::default()
                },
                now_ms: 5,
                expect: |_| Decision::Final(Basis::Pull),
            },
            Row {
                name: "nothing seen is waiting",
                traits: PUSHED,
                seen: |_| Seen::default(),
                now_ms: 900,
                expect: |_| Decision::Waiting,
            },
        ];
        let t0 = Instant::now();
        for row in rows {
            let seen = (row.seen)(t0);
            let got = decide(2, row.traits, &seen, at(t0, row.now_ms));
            assert_eq!(got, (row.expect)(t0), "{}", row.name);
        }
    }

    #[test]
    fn a_wait_cut_short_says_what_it_lacked() {
        let t0 = Instant::now();
        let rows: [(Traits, Seen, Option<&str>); 5] = [
            (
                CHECKED,
                Seen {
                    pull: unready(Some(2), t0),
                    ..Seen::default()
                },
                Some("the server had not finished loading the project"),
            ),
            (
                CHECKED,
                Seen {
                    pull: delivery(Some(2), t0),
                    ..Seen::default()
                },
                Some("its check on save did not start"),
            ),
            (
                CHECKED,
                Seen {
                    pull: delivery(Some(2), t0),
                    check: CheckSeen::Running("cargo check".to_string()),
                    ..Seen::default()
                },
                Some("cargo check did not finish"),
            ),
            (
                CHECKED,
                Seen {
                    pull: delivery(Some(2), t0),
                    check: CheckSeen::Ended(t0),
                    ..Seen::default()
                },
                None,
            ),
            (traits(true, Stages::Once), Seen::default(), None),
        ];
        for (traits, seen, expected) in rows {
            assert_eq!(unfinished(traits, &seen).as_deref(), expected, "{seen:?}");
        }
    }

    #[test]
    fn only_the_quiet_time_is_a_guess() {
        let guesses: Vec<Basis> = [
            Basis::Pull,
            Basis::PullAndCheck,
            Basis::Version,
            Basis::QuietTime,
        ]
        .into_iter()
        .filter(|basis| basis.is_guess())
        .collect();
        assert_eq!(guesses, vec![Basis::QuietTime]);
    }
}
