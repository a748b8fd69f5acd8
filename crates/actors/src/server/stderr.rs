//! A server's stderr: logged through tracing, the last lines kept for error reasons.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::task::JoinHandle;

/// Enough lines to see past a backtrace to the error above it.
const KEPT_LINES: usize = 50;

/// The last lines a server wrote to stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    /// Starts logging `stderr` and keeping its last lines; the handle ends with the stream.
    pub fn capture(
        stderr: impl AsyncRead + Unpin + Send + 'static,
        server: String,
    ) -> (Self, JoinHandle<()>) {
        let tail = Self::default();
        let lines = tail.0.clone();
        let handle = tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut raw = Vec::new();
            // Read to the end whatever the bytes are: a closed pipe would kill the server.
            while reader
                .read_until(b'\n', &mut raw)
                .await
                .is_ok_and(|n| n > 0)
            {
                let line = String::from_utf8_lossy(&raw).trim_end().to_string();
                raw.clear();
                tracing::debug!(target: "squiggle::server_stderr", %server, "{line}");
                if line.trim().is_empty() {
                    continue;
                }
                if let Ok(mut lines) = lines.lock() {
                    if lines.len() == KEPT_LINES {
                        lines.pop_front();
                    }
                    lines.push_back(line);
                }
            }
        });
        (tail, handle)
    }

    /// The line that best says why the server failed: the last one that reads like an error,
    /// else the last line.
    pub fn reason_line(&self) -> Option<String> {
        let lines = self.0.lock().ok()?;
        telling_line(lines.iter().map(String::as_str)).map(str::to_string)
    }
}

/// The last line that reads like an error (not a backtrace frame), else the last line.
fn telling_line<'a>(lines: impl DoubleEndedIterator<Item = &'a str> + Clone) -> Option<&'a str> {
    let reads_like_error = |line: &&str| {
        let lower = line.to_ascii_lowercase();
        [
            "error",
            "panicked",
            "fatal",
            "exception",
            "cannot",
            "not found",
        ]
        .iter()
        .any(|word| lower.contains(word))
            && !lower.trim_start().starts_with("at ")
            && !lower
                .trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
    };
    lines
        .clone()
        .rev()
        .find(reads_like_error)
        .or_else(|| lines.last())
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::telling_line;

    #[test]
    fn the_error_above_a_backtrace_is_the_telling_line() {
        let lines = [
            "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.",
            "",
            "Stack backtrace:",
            "   0: anyhow::kind::Adhoc::new",
            "   1: rustup::toolchain::distributable::DistributableToolchain::recursion_error",
            "             at ./csu/../sysdeps/nptl/libc_start_call_main.h:58:16",
            "  15: <unknown>",
        ];
        assert_eq!(
            telling_line(lines.iter().copied()),
            Some("error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.")
        );
    }

    #[test]
    fn without_an_error_line_the_last_line_tells() {
        let lines = ["starting", "fake-server: crashing on purpose"];
        assert_eq!(
            telling_line(lines.iter().copied()),
            Some("fake-server: crashing on purpose")
        );
        assert_eq!(telling_line(std::iter::empty()), None);
    }
}
