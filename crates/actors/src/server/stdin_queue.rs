//! A server's stdin that never makes async-lsp wait. async-lsp 0.2.4's main loop writes a
//! message and reads the server's next one in turn: before it sends the next message it waits
//! for the previous one to be written (`outgoing.feed(..).await` in `MainLoop::run`), and
//! while it waits for a full pipe it reads nothing. A server that is itself blocked writing its
//! answers to squiggle (ruff under a flood of checks) then never drains its stdin, and both
//! sides wait forever. Here every message goes to one task that writes them to the pipe in
//! order, so reading goes on; the bytes waiting are counted, so that the server actor can
//! refuse more work past a bound.
//!
//! Why it stays: the writer `run` is given is async-lsp's only hook on its output, and this is
//! that writer; the loop itself cannot be told to read while a write waits.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// How many bytes wait to be written to the server, shared with the server actor.
#[derive(Debug, Clone, Default)]
pub struct Backlog(Arc<AtomicUsize>);

impl Backlog {
    /// The bytes written by async-lsp that the server has not taken yet.
    pub fn bytes(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// The writer async-lsp gets: it takes every write at once. A message (written in parts, then
/// flushed) goes to the pipe as one write.
#[derive(Debug)]
pub struct QueuedStdin {
    message: Vec<u8>,
    queue: mpsc::UnboundedSender<Vec<u8>>,
    backlog: Backlog,
}

/// Starts the task that writes to `stdin`; returns the writer for async-lsp and the backlog.
pub fn spawn(mut stdin: impl AsyncWrite + Unpin + Send + 'static) -> (QueuedStdin, Backlog) {
    let (queue, mut messages) = mpsc::unbounded_channel::<Vec<u8>>();
    let backlog = Backlog::default();
    let written = backlog.clone();
    tokio::spawn(async move {
        while let Some(message) = messages.recv().await {
            let len = message.len();
            let sent = stdin.write_all(&message).await;
            written.0.fetch_sub(len, Ordering::Relaxed);
            if sent.is_err() {
                break; // The server is gone; its exit is reported elsewhere.
            }
        }
        // What is left is dropped with the queue.
        written.0.store(0, Ordering::Relaxed);
    });
    let writer = QueuedStdin {
        message: Vec::new(),
        queue,
        backlog: backlog.clone(),
    };
    (writer, backlog)
}

impl AsyncWrite for QueuedStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().message.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.message.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let message = std::mem::take(&mut this.message);
        let len = message.len();
        this.backlog.0.fetch_add(len, Ordering::Relaxed);
        if this.queue.send(message).is_err() {
            this.backlog.0.fetch_sub(len, Ordering::Relaxed);
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the server's stdin is closed",
            )));
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn writes_never_wait_for_the_reader_and_arrive_whole_and_in_order() {
        let (pipe, mut server) = tokio::io::duplex(16);
        let (mut stdin, backlog) = spawn(pipe);
        // Far more than the pipe holds, with nobody reading: no write waits.
        for n in 0..100u8 {
            stdin.write_all(&[n; 100]).await.unwrap();
            stdin.flush().await.unwrap();
        }
        assert!(backlog.bytes() > 0, "the bytes wait in the queue");
        let mut all = vec![0u8; 100 * 100];
        server.read_exact(&mut all).await.unwrap();
        for (n, message) in all.chunks(100).enumerate() {
            assert!(message.iter().all(|b| *b as usize == n), "message {n}");
        }
        for _ in 0..100 {
            if backlog.bytes() == 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(backlog.bytes(), 0, "all written");
    }
}
