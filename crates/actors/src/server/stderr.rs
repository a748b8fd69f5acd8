//! A server's stderr: logged through tracing, the last lines kept for error reasons.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::task::JoinHandle;

const KEPT_LINES: usize = 5;

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
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
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

    /// The last non-empty line, if any.
    pub fn last_line(&self) -> Option<String> {
        self.0.lock().ok().and_then(|lines| lines.back().cloned())
    }
}
