//! The restart policy of one server: when a broken server may start again, automatically or
//! when asked, so that a crash costs a while and a crash loop stops.

use std::time::Duration;

use tokio::time::Instant;

/// A server that breaks within this time after a restart is in a crash loop.
pub const CRASH_LOOP_WINDOW: Duration = Duration::from_secs(60);

/// Who asks for a broken server to start again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// squiggle itself, when the server is needed (or its cooldown timer fires).
    Automatic,
    /// The host or user, by name.
    Explicit,
}

/// The limits of the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a broken server stays broken before any restart.
    pub cooldown: Duration,
    /// How many automatic restarts a server gets per session.
    pub max_automatic: u32,
    /// A break this soon after a restart ends automatic restarts.
    pub crash_loop: Duration,
}

impl Limits {
    /// The policy's limits with this cooldown and at most `max_automatic` automatic restarts
    /// per session (0: a broken server stays broken until it is restarted explicitly).
    pub fn new(cooldown: Duration, max_automatic: u32) -> Self {
        Self {
            cooldown,
            max_automatic,
            crash_loop: CRASH_LOOP_WINDOW,
        }
    }
}

/// Why a broken server is not restarted automatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// It broke again this soon after a restart.
    CrashLoop { after: Duration },
    /// It was restarted automatically this many times already.
    Exhausted { restarts: u32 },
    /// The configuration says never (`max_automatic_restarts = 0`).
    Never,
}

impl Hold {
    /// What a status reason says about it, after the reason the server broke; `how` says how
    /// the host restarts it (`run `squiggle restart pyright``), else "restart it explicitly".
    pub fn describe(self, how: Option<&str>) -> String {
        let how = how.unwrap_or("restart it explicitly");
        match self {
            Hold::CrashLoop { after } => format!(
                "it broke again {:.1} s after a restart, so it is not restarted automatically; {how}",
                after.as_secs_f64()
            ),
            Hold::Exhausted { restarts } => format!(
                "it was restarted automatically {restarts} times this session, the most it gets; {how}"
            ),
            Hold::Never => format!(
                "a broken server is not restarted automatically (max_automatic_restarts = 0); {how}"
            ),
        }
    }
}

/// What the policy says to a restart asked for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Start it.
    Start,
    /// Not yet: the cooldown has this much left.
    Cooling(Duration),
    /// Not automatically (only an explicit restart starts it).
    Held(Hold),
}

/// One server's restarts in this session.
#[derive(Debug, Clone)]
pub struct Restarts {
    limits: Limits,
    /// Automatic restarts so far.
    automatic: u32,
    /// When the running (or last) process was started by a restart, if it was.
    restarted_at: Option<Instant>,
    /// When it last broke, and whether automatic restarts are held since.
    broke: Option<(Instant, Option<Hold>)>,
    /// How many times it broke this session.
    breaks: u32,
}

impl Restarts {
    /// A server that has not broken yet.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            automatic: 0,
            restarted_at: None,
            broke: None,
            breaks: 0,
        }
    }

    /// How many times it broke this session.
    pub fn breaks(&self) -> u32 {
        self.breaks
    }

    /// The server broke at `now`: when an automatic restart is due, or why there is none.
    pub fn broke(&mut self, now: Instant) -> Result<Instant, Hold> {
        let hold = match self.restarted_at {
            Some(at) if now.saturating_duration_since(at) < self.limits.crash_loop => {
                Some(Hold::CrashLoop {
                    after: now.saturating_duration_since(at),
                })
            }
            _ if self.limits.max_automatic == 0 => Some(Hold::Never),
            _ if self.automatic >= self.limits.max_automatic => Some(Hold::Exhausted {
                restarts: self.automatic,
            }),
            _ => None,
        };
        self.broke = Some((now, hold));
        self.breaks += 1;
        match hold {
            Some(hold) => Err(hold),
            None => Ok(now + self.limits.cooldown),
        }
    }

    /// Whether a restart asked for by `who` may start the broken server at `now`.
    pub fn decide(&self, who: Restart, now: Instant) -> Decision {
        let Some((at, hold)) = self.broke else {
            return Decision::Start;
        };
        if let (Restart::Automatic, Some(hold)) = (who, hold) {
            return Decision::Held(hold);
        }
        let ready = at + self.limits.cooldown;
        if now < ready {
            return Decision::Cooling(ready - now);
        }
        Decision::Start
    }

    /// A restart asked for by `who` starts the server at `now`.
    pub fn restarted(&mut self, who: Restart, now: Instant) {
        if who == Restart::Automatic {
            self.automatic += 1;
        }
        self.restarted_at = Some(now);
        self.broke = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COOLDOWN: Duration = Duration::from_secs(30);

    fn limits() -> Limits {
        Limits {
            cooldown: COOLDOWN,
            max_automatic: 2,
            crash_loop: Duration::from_secs(60),
        }
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_first_break_is_restarted_automatically_after_the_cooldown() {
        let t0 = Instant::now();
        let mut restarts = Restarts::new(limits());
        assert_eq!(restarts.broke(t0), Ok(t0 + COOLDOWN));
        for who in [Restart::Automatic, Restart::Explicit] {
            assert_eq!(
                restarts.decide(who, t0 + secs(10)),
                Decision::Cooling(secs(20))
            );
            assert_eq!(restarts.decide(who, t0 + COOLDOWN), Decision::Start);
        }
    }

    #[test]
    fn a_break_soon_after_a_restart_is_a_crash_loop_that_only_an_explicit_restart_ends() {
        let t0 = Instant::now();
        let mut restarts = Restarts::new(limits());
        assert!(restarts.broke(t0).is_ok());
        restarts.restarted(Restart::Automatic, t0 + COOLDOWN);
        let again = t0 + COOLDOWN + secs(2);
        let hold = Hold::CrashLoop { after: secs(2) };
        assert_eq!(restarts.broke(again), Err(hold));
        assert_eq!(
            restarts.decide(Restart::Automatic, again + secs(3600)),
            Decision::Held(hold)
        );
        // An explicit restart still waits out the cooldown.
        assert_eq!(
            restarts.decide(Restart::Explicit, again + secs(1)),
            Decision::Cooling(secs(29))
        );
        assert_eq!(
            restarts.decide(Restart::Explicit, again + COOLDOWN),
            Decision::Start
        );
        restarts.restarted(Restart::Explicit, again + COOLDOWN);
        assert_eq!(
            restarts.decide(Restart::Automatic, again + COOLDOWN),
            Decision::Start
        );
    }

    #[test]
    fn with_no_automatic_restart_a_broken_server_waits_for_an_explicit_one() {
        let t0 = Instant::now();
        let mut restarts = Restarts::new(Limits::new(COOLDOWN, 0));
        assert_eq!(restarts.broke(t0), Err(Hold::Never));
        assert_eq!(
            restarts.decide(Restart::Automatic, t0 + secs(3600)),
            Decision::Held(Hold::Never)
        );
        assert_eq!(
            restarts.decide(Restart::Explicit, t0 + COOLDOWN),
            Decision::Start
        );
        restarts.restarted(Restart::Explicit, t0 + COOLDOWN);
        assert_eq!(restarts.broke(t0 + secs(3600)), Err(Hold::Never));
    }

    #[test]
    fn a_break_long_after_a_restart_is_not_a_loop() {
        let t0 = Instant::now();
        let mut restarts = Restarts::new(limits());
        assert!(restarts.broke(t0).is_ok());
        restarts.restarted(Restart::Automatic, t0 + COOLDOWN);
        let later = t0 + COOLDOWN + secs(60);
        assert_eq!(restarts.broke(later), Ok(later + COOLDOWN));
    }

    #[test]
    fn automatic_restarts_are_counted_per_session_and_run_out() {
        let mut now = Instant::now();
        let mut restarts = Restarts::new(limits());
        for _ in 0..2 {
            assert!(restarts.broke(now).is_ok());
            now += COOLDOWN;
            restarts.restarted(Restart::Automatic, now);
            now += secs(120);
        }
        let hold = Hold::Exhausted { restarts: 2 };
        assert_eq!(restarts.broke(now), Err(hold));
        assert_eq!(
            restarts.decide(Restart::Automatic, now + COOLDOWN),
            Decision::Held(hold)
        );
        // Explicit restarts do not count against the automatic ones, nor lift the limit.
        restarts.restarted(Restart::Explicit, now + COOLDOWN);
        now += COOLDOWN + secs(120);
        assert_eq!(restarts.broke(now), Err(hold));
    }

    #[test]
    fn a_server_that_never_broke_may_start() {
        let restarts = Restarts::new(limits());
        assert_eq!(
            restarts.decide(Restart::Automatic, Instant::now()),
            Decision::Start
        );
    }

    #[test]
    fn holds_say_why_and_what_to_do() {
        let looped = Hold::CrashLoop {
            after: Duration::from_millis(400),
        };
        assert_eq!(
            looped.describe(None),
            "it broke again 0.4 s after a restart, so it is not restarted automatically; restart it explicitly"
        );
        assert!(looped
            .describe(Some("run `squiggle restart fake`"))
            .ends_with("not restarted automatically; run `squiggle restart fake`"));
        let exhausted = Hold::Exhausted { restarts: 3 }.describe(Some("ask for it"));
        assert!(exhausted.starts_with("it was restarted automatically 3 times this session"));
        assert!(exhausted.ends_with("the most it gets; ask for it"));
    }
}
