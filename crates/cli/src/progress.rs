//! What squiggle is waiting for, shown on stderr while a check runs on a terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use squiggle_actors::{ServerState, Squiggle};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long a check may run before progress is shown.
const QUIET_START: Duration = Duration::from_millis(300);
/// How often the progress line is redrawn.
const REDRAW: Duration = Duration::from_millis(200);

/// A progress line on stderr, only when stderr is a terminal.
#[derive(Debug)]
pub struct Progress {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts showing progress for a running check.
    pub fn start(squiggle: Squiggle) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self {
                stop: None,
                task: None,
            };
        }
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            if tokio::time::timeout(QUIET_START, &mut stopped)
                .await
                .is_ok()
            {
                return;
            }
            loop {
                let statuses = squiggle.status().await;
                let ids = |state: ServerState| {
                    let ids: Vec<&str> = statuses
                        .iter()
                        .filter(|s| s.state == state)
                        .map(|s| s.id.as_str())
                        .collect();
                    ids.join(", ")
                };
                let (starting, active) = (ids(ServerState::Starting), ids(ServerState::Active));
                let waited = started.elapsed().as_secs_f32();
                let line = match (starting.is_empty(), active.is_empty()) {
                    (true, true) => format!("squiggle: waiting… {waited:.1}s"),
                    (true, false) => {
                        format!("squiggle: waiting for diagnostics from {active}… {waited:.1}s")
                    }
                    (false, _) => format!("squiggle: starting {starting}… {waited:.1}s"),
                };
                eprint!("\r\x1b[2K{line}");
                let _ = std::io::stderr().flush();
                if tokio::time::timeout(REDRAW, &mut stopped).await.is_ok() {
                    break;
                }
            }
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        });
        Self {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops showing progress and clears the line.
    pub async fn finish(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}
