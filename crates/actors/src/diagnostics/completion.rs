//! The completion model: the one place that decides when a server's diagnostics for one
//! document version are *final*, from the strongest signal the server gives. Pure: what was
//! seen and the time are passed in, and the answer is a decision.
//!
//! | the server gives                                     | final when                        | basis        |
//! | ---------------------------------------------------- | --------------------------------- | ------------ |
//! | a pull answer (`textDocument/diagnostic`)            | the answer for the version comes  | `pull`       |
//! | versioned publishes, once per version                | that publish comes while idle     | `version`    |
//! | nothing (unversioned, or in stages with no end)      | a quiet time after the last one   | `quiet_time` |
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
    /// The quiet time that ends a wait resting on no signal.
    pub settle: Duration,
}

/// One delivery seen since the change was sent: the version it names, and when it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// The document version it is for, if it names one.
    pub version: Option<i32>,
    /// When it came.
    pub at: Instant,
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
    if seen.pull.is_some_and(|pull| pull.names(version)) {
        return Decision::Final(Basis::Pull);
    }
    if [seen.pull, seen.push]
        .iter()
        .flatten()
        .any(|delivery| delivery.is_later_than(version))
    {
        return Decision::Superseded;
    }
    let idle_since = |at: Instant| seen.idle_since.is_none_or(|idle| idle <= at);
    // Published while idle: a publish during work may be followed by another once the work
    // ends, and that case falls to the quiet time below.
    let published_idle = (seen.push).is_some_and(|push| push.names(version) && idle_since(push.at));
    if !seen.busy && !traits.pull && traits.stages == Stages::Once && published_idle {
        return Decision::Final(Basis::Version);
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
                Decision::Final(Basis::QuietTime)
            } else {
                Decision::LookAt(ends)
            }
        }
        None => Decision::Waiting,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTLE: Duration = Duration::from_millis(100);

    fn traits(pull: bool, stages: Stages) -> Traits {
        Traits {
            pull,
            stages,
            settle: SETTLE,
        }
    }

    const PUSHED: Traits = Traits {
        pull: false,
        stages: Stages::Once,
        settle: SETTLE,
    };

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    fn delivery(version: Option<i32>, at: Instant) -> Option<Delivery> {
        Some(Delivery { version, at })
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
    fn only_the_quiet_time_is_a_guess() {
        let guesses: Vec<Basis> = [Basis::Pull, Basis::Version, Basis::QuietTime]
            .into_iter()
            .filter(|basis| basis.is_guess())
            .collect();
        assert_eq!(guesses, vec![Basis::QuietTime]);
    }
}
