//! Keeps a stream of warnings short: the first few of every window are shown, the rest counted
//! and the count told with the first warning of the next window.

use std::time::{Duration, Instant};

/// How many warnings of one window are shown.
const SHOWN_PER_WINDOW: u32 = 5;
/// How long a window lasts.
const WINDOW: Duration = Duration::from_secs(60);

/// Which warnings of a stream are shown.
#[derive(Debug, Default)]
pub struct WarnLimit {
    /// When the current window began; None before the first warning.
    window: Option<Instant>,
    /// Warnings shown in the current window.
    shown: u32,
    /// Warnings hidden since the last one shown.
    hidden: u64,
}

/// What to do with one warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Say {
    /// Show it, telling how many were hidden before it (in the windows since the last shown).
    Show {
        /// Warnings hidden since the last one shown.
        hidden: u64,
    },
    /// Show it, and say that the next ones are counted, not shown, until the window ends.
    ShowLast,
    /// Hide it (it is counted).
    Hide,
}

impl WarnLimit {
    /// Decides about a warning raised at `now`.
    pub fn note(&mut self, now: Instant) -> Say {
        let fresh = self
            .window
            .is_none_or(|start| now.saturating_duration_since(start) >= WINDOW);
        if fresh {
            self.window = Some(now);
            self.shown = 0;
        }
        if self.shown >= SHOWN_PER_WINDOW {
            self.hidden += 1;
            return Say::Hide;
        }
        self.shown += 1;
        if self.shown == SHOWN_PER_WINDOW {
            return Say::ShowLast;
        }
        Say::Show {
            hidden: std::mem::take(&mut self.hidden),
        }
    }

    /// Warnings hidden since the last one shown.
    #[cfg(test)]
    pub fn hidden(&self) -> u64 {
        self.hidden
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_few_of_a_window_are_shown_then_counted() {
        let start = Instant::now();
        let mut limit = WarnLimit::default();
        let says: Vec<Say> = (0..8).map(|_| limit.note(start)).collect();
        assert_eq!(
            says,
            [
                Say::Show { hidden: 0 },
                Say::Show { hidden: 0 },
                Say::Show { hidden: 0 },
                Say::Show { hidden: 0 },
                Say::ShowLast,
                Say::Hide,
                Say::Hide,
                Say::Hide,
            ]
        );
        assert_eq!(limit.hidden(), 3);
    }

    #[test]
    fn the_next_window_shows_again_with_the_count_hidden_before() {
        let start = Instant::now();
        let mut limit = WarnLimit::default();
        for _ in 0..1000 {
            limit.note(start + Duration::from_secs(10));
        }
        assert_eq!(limit.hidden(), 995);
        assert_eq!(limit.note(start + WINDOW), Say::Hide, "window still open");
        assert_eq!(
            limit.note(start + Duration::from_secs(10) + WINDOW),
            Say::Show { hidden: 996 }
        );
        assert_eq!(
            limit.note(start + Duration::from_secs(11) + WINDOW),
            Say::Show { hidden: 0 }
        );
        assert_eq!(limit.hidden(), 0);
    }

    #[test]
    fn a_quiet_stream_shows_every_warning() {
        let start = Instant::now();
        let mut limit = WarnLimit::default();
        for minute in 0..20 {
            assert_eq!(
                limit.note(start + WINDOW * minute),
                Say::Show { hidden: 0 },
                "minute {minute}"
            );
        }
    }
}
