//! Watching how a server ends: its connection's main loop and its process each report the
//! reason to the server actor. The process's exit status and last stderr words are the better
//! reason, so a connection that ends just before the process exits leaves the word to it.
//!
//! The task that runs the main loop holds a socket to it for as long as it runs: async-lsp
//! 0.2.4's main loop panics ("Sender is alive") when every socket to it is dropped while it
//! still runs, which happens when the server actor stops (and drops its socket) while the
//! server still talks. It stays: the loop needs a sender that lives as long as it does, and
//! async-lsp offers no loop that ends quietly instead.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_lsp::ServerSocket;
use ractor::ActorRef;
use tokio::process::Child;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::process::ProcessGroup;
use super::stderr::StderrTail;
use super::ServerMsg;

/// How long the process gets to exit after its connection ended, for its reason to win.
const EXIT_GRACE: Duration = Duration::from_millis(500);
/// How long the stderr reader gets to catch the last words before an exit is described.
const LAST_WORDS: Duration = Duration::from_millis(200);

/// Runs the connection's main loop, holding `socket` to it meanwhile (see the module docs);
/// when it ends (and the process did not exit right after), tells the actor why.
pub fn watch_connection(
    connection: impl Future<Output = async_lsp::Result<()>> + Send + 'static,
    socket: ServerSocket,
    exited: watch::Receiver<bool>,
    me: ActorRef<ServerMsg>,
) {
    tokio::spawn(async move {
        let ended = connection.await;
        drop(socket);
        if exits_soon(exited).await {
            return; // The process exit, reported with its status, is the better reason.
        }
        let reason = match ended {
            Ok(()) => "the connection ended".to_string(),
            Err(err) => format!("the connection ended: {err}"),
        };
        let clean = false;
        let _ = me.cast(ServerMsg::Exited { reason, clean });
    });
}

/// Waits for the process to exit: retires its group (whatever it left goes with it), marks
/// `exited`, and tells the actor the exit status with the server's last stderr words.
pub fn reap(
    mut child: Child,
    group: Arc<ProcessGroup>,
    exited: watch::Sender<bool>,
    stderr_done: JoinHandle<()>,
    tail: StderrTail,
    me: ActorRef<ServerMsg>,
) {
    tokio::spawn(async move {
        let status = child.wait().await;
        let clean = status.as_ref().is_ok_and(|status| status.success());
        group.retire();
        let _ = exited.send(true);
        let _ = tokio::time::timeout(LAST_WORDS, stderr_done).await;
        let mut reason = match status {
            Ok(status) => format!("the server exited ({status})"),
            Err(err) => format!("the server could not be waited for: {err}"),
        };
        if let Some(line) = tail.reason_line() {
            reason.push_str(": ");
            reason.push_str(&line);
        }
        let _ = me.cast(ServerMsg::Exited { reason, clean });
    });
}

/// Whether the process exits within a moment (when its connection failed, it usually does).
pub async fn exits_soon(mut exited: watch::Receiver<bool>) -> bool {
    let waited = tokio::time::timeout(EXIT_GRACE, exited.wait_for(|e| *e)).await;
    matches!(waited, Ok(Ok(_)))
}
