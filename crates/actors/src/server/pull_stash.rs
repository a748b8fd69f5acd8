//! Pull answers kept aside, so that async-lsp never decodes one. A pull answer is the biggest
//! message a pulled server sends, and async-lsp 0.2.4 reads every message into its generic
//! form (`serde_json::Value` params and results) before it matches a response to its request,
//! then the request's future decodes that value again into the typed result: for a pull server
//! (ruff), that cost about two thirds of squiggle's CPU.
//!
//! So the pump reads a pull answer itself (one typed parse, `publish::parse_pull_answer`),
//! keeps it here, and hands async-lsp a tiny stand-in in its place: a response with the same
//! id whose result is `unchanged`, with a result id naming the kept answer. async-lsp still
//! matches the stand-in to its request (ids, cancellation and the connection's end stay its
//! business); the pull's future then takes the real answer out of the stash.
//!
//! Why it stays: async-lsp 0.2.4 has no hook that sees a response before it is decoded. Its
//! framing is fixed (no codec to plug in), a tower layer or the router only wrap the service,
//! which gets the server's requests and notifications but never the responses to squiggle's
//! requests (the main loop matches those itself). Sending pulls outside async-lsp, under ids
//! of squiggle's own matched in the pump, would remove the stand-in but repeat the matching,
//! the ids and the end of the connection that async-lsp already does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use squiggle_protocol::publish::PullReport;

/// The result id that stands for an answer kept in the [`Stash`].
const STASHED: &str = "squiggle-stashed:";

/// How long a kept answer may wait for its request to take it. An answer that came after its
/// request gave up is never taken; past this it is dropped.
const STALE: Duration = Duration::from_secs(60);

/// The stash is swept of stale answers once every this many answers.
const SWEEP_EVERY: u64 = 64;

/// Pull answers read straight from the server's stdout, waiting for the request they answer.
#[derive(Debug, Default)]
pub struct Stash {
    /// Each answer, with when it was kept.
    answers: DashMap<u64, (Instant, PullReport)>,
    next: AtomicU64,
}

impl Stash {
    /// Keeps the answer to the request `id` (its JSON text) and returns the stand-in response
    /// async-lsp gets instead.
    pub fn stand_in(&self, id: &str, report: PullReport) -> Vec<u8> {
        let result = self.keep(report);
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#).into_bytes()
    }

    /// Keeps an answer and returns the stand-in's result.
    fn keep(&self, report: PullReport) -> String {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        if key % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.sweep(now);
        }
        self.answers.insert(key, (now, report));
        format!(r#"{{"kind":"unchanged","resultId":"{STASHED}{key}"}}"#)
    }

    /// The answer a stand-in's result id names, taken out of the stash (None for a result id
    /// the server wrote: a real `unchanged`).
    pub fn take(&self, result_id: &str) -> Option<PullReport> {
        let key = result_id.strip_prefix(STASHED)?.parse().ok()?;
        self.answers.remove(&key).map(|(_, (_, report))| report)
    }

    /// Drops the answers kept longer than [`STALE`] before `now`.
    fn sweep(&self, now: Instant) {
        self.answers
            .retain(|_, (kept, _)| now.saturating_duration_since(*kept) < STALE);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn full(id: &str) -> PullReport {
        PullReport::Full {
            result_id: Some(id.to_string()),
            items: Vec::new(),
        }
    }

    #[test]
    fn a_stand_in_answers_the_same_request_and_names_the_answer_it_stands_for_once() {
        let stash = Stash::default();
        let stand_in = stash.stand_in(r#""s-1""#, full("r1"));
        let value: serde_json::Value = serde_json::from_slice(&stand_in).unwrap();
        assert_eq!(value["id"], "s-1");
        assert_eq!(value["result"]["kind"], "unchanged");
        let id = value["result"]["resultId"].as_str().unwrap();
        assert_eq!(stash.take(id), Some(full("r1")));
        assert_eq!(stash.take(id), None);
        assert_eq!(
            stash.take("r1"),
            None,
            "a server's own result id is not the stash's"
        );
    }

    #[test]
    fn an_answer_nobody_took_is_dropped_once_stale() {
        let stash = Stash::default();
        stash.keep(full("late"));
        stash.sweep(Instant::now());
        assert_eq!(stash.answers.len(), 1, "a fresh answer is kept");
        stash.sweep(Instant::now() + STALE);
        assert_eq!(stash.answers.len(), 0);
    }

    #[test]
    fn keeping_answers_sweeps_now_and_then() {
        let stash = Stash::default();
        stash.keep(full("late"));
        // Make the first answer stale, then keep enough answers to trigger a sweep.
        stash
            .answers
            .alter(&0, |_, (kept, report)| (kept - STALE, report));
        for n in 1..SWEEP_EVERY {
            stash.keep(full(&n.to_string()));
        }
        assert!(!stash.answers.contains_key(&0));
        assert_eq!(stash.answers.len() as u64, SWEEP_EVERY - 1);
    }
}
