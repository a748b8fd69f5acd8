//! How each server answered this session's checks (BR-67): how many it was asked, how many
//! got no final answer by their deadline, and how long the recent answers took.

use std::collections::VecDeque;
use std::time::Duration;

use squiggle_protocol::diagnostic::percent;
use squiggle_protocol::ServerMetrics;

/// How many of a server's latest answer times are kept for its median and p90.
const KEPT: usize = 256;

/// One server's (for one root) answers so far.
#[derive(Debug, Default, Clone)]
pub(crate) struct AnswerTimes {
    checks: u64,
    timed_out: u64,
    /// The latest answers' times, oldest first.
    recent: VecDeque<Duration>,
}

impl AnswerTimes {
    /// Notes a check's answer: how long it took, and whether it came by its deadline.
    pub fn note(&mut self, took: Duration, timed_out: bool) {
        self.checks += 1;
        if timed_out {
            self.timed_out += 1;
            return;
        }
        if self.recent.len() == KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(took);
    }

    /// The metrics, with the server's crash count.
    pub fn metrics(&self, crashes: u32) -> ServerMetrics {
        let mut sorted: Vec<Duration> = self.recent.iter().copied().collect();
        sorted.sort_unstable();
        let at = |share: f64| {
            let last = sorted.len().checked_sub(1)?;
            let index = ((last as f64) * share).round() as usize;
            sorted.get(index).map(|took| took.as_millis() as u64)
        };
        ServerMetrics {
            crashes,
            checks: self.checks,
            timed_out: self.timed_out,
            timeout_percent: percent(self.timed_out, self.checks),
            answer_median_ms: at(0.5),
            answer_p90_ms: at(0.9),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_count_checks_and_timeouts_and_rank_the_answer_times() {
        let ms = Duration::from_millis;
        // (answers in ms, None for a timeout; crashes; checks, timed out, %, median, p90)
        type Row = (
            &'static [Option<u64>],
            u32,
            (u64, u64, u32, Option<u64>, Option<u64>),
        );
        let table: &[Row] = &[
            (&[], 0, (0, 0, 0, None, None)),
            (&[], 2, (0, 0, 0, None, None)),
            (&[Some(40)], 0, (1, 0, 0, Some(40), Some(40))),
            (&[None, None], 1, (2, 2, 100, None, None)),
            (
                &[
                    Some(10),
                    Some(20),
                    Some(30),
                    Some(40),
                    None,
                    Some(50),
                    Some(60),
                    Some(70),
                    Some(80),
                    Some(90),
                    Some(100),
                ],
                0,
                (11, 1, 9, Some(60), Some(90)),
            ),
        ];
        for (answers, crashes, (checks, timed_out, pct, median, p90)) in table {
            let mut times = AnswerTimes::default();
            for answer in answers.iter() {
                times.note(ms(answer.unwrap_or(3000)), answer.is_none());
            }
            let metrics = times.metrics(*crashes);
            let got = (
                metrics.checks,
                metrics.timed_out,
                metrics.timeout_percent,
                metrics.answer_median_ms,
                metrics.answer_p90_ms,
            );
            assert_eq!(
                got,
                (*checks, *timed_out, *pct, *median, *p90),
                "{answers:?}"
            );
            assert_eq!(metrics.crashes, *crashes);
        }
    }

    #[test]
    fn only_the_latest_answers_are_kept() {
        let mut times = AnswerTimes::default();
        for _ in 0..KEPT {
            times.note(Duration::from_secs(9), false);
        }
        for _ in 0..KEPT {
            times.note(Duration::from_millis(5), false);
        }
        let metrics = times.metrics(0);
        assert_eq!(metrics.checks, 2 * KEPT as u64);
        assert_eq!(metrics.answer_p90_ms, Some(5));
    }
}
