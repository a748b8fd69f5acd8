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
        Self {
            runs: ms.len(),
            median_ms: quantile(&ms, 0.5),
            p90_ms: quantile(&ms, 0.9),
            max_ms: ms.last().copied().unwrap_or(0.0),
        }
    }
}

/// The median of some numbers (0 for none), picked the way `Stats` picks it.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile(&sorted, 0.5)
}

/// The value at quantile `q` of sorted numbers: the nearest rank, no interpolation.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

/// The least-squares slope of `y` over `x` (0 for fewer than two distinct `x`).
pub fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let spread: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if points.len() < 2 || spread == 0.0 {
        return 0.0;
    }
    points
        .iter()
        .map(|p| (p.0 - mean_x) * (p.1 - mean_y))
        .sum::<f64>()
        / spread
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_of_a_line_and_of_noise_around_flat() {
        let line: Vec<(f64, f64)> = [1.0, 10.0, 100.0, 1000.0]
            .iter()
            .map(|&x| (x, 0.3 + 0.002 * x))
            .collect();
        assert!((slope(&line) - 0.002).abs() < 1e-12);
        let flat = [(1.0, 0.31), (10.0, 0.29), (100.0, 0.30), (1000.0, 0.30)];
        assert!(slope(&flat).abs() < 1e-4);
        assert_eq!(slope(&[(5.0, 1.0)]), 0.0);
    }

    #[test]
    fn median_of_differences_that_may_be_negative() {
        assert_eq!(median(&[3.0, -5.0, 1.0]), 1.0);
        assert_eq!(median(&[]), 0.0);
    }

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
