//! Summaries of repeated measurements.

use std::time::Duration;

use serde::Serialize;

/// Median, 90th percentile and maximum of a set of timings, in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stats {
    /// How many runs.
    pub runs: usize,
    /// Median, ms.
    pub median_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// Maximum, ms.
    pub max_ms: f64,
}

impl Stats {
    /// Summarises timings (an empty set gives zeros).
    pub fn of(timings: &[Duration]) -> Self {
        let mut ms: Vec<f64> = timings.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| {
            ms.get(((ms.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        Self {
            runs: ms.len(),
            median_ms: at(0.5),
            p90_ms: at(0.9),
            max_ms: ms.last().copied().unwrap_or(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_p90_and_max_of_ten_runs() {
        let timings: Vec<Duration> = (1..=10).map(Duration::from_millis).collect();
        let stats = Stats::of(&timings);
        assert_eq!(
            (stats.runs, stats.median_ms, stats.p90_ms, stats.max_ms),
            (10, 6.0, 9.0, 10.0)
        );
    }
}
