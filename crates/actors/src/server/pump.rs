//! The tolerant front of a server's stdout: only clean frames reach async-lsp.
//!
//! async-lsp 0.2.4's main loop reads frames itself (`MainLoop::run`, with a reader of its own):
//! a header line it cannot parse, a frame without `Content-Length`, or a body that is not a
//! JSON-RPC message ends the loop with an error, and the connection with it, at the first line
//! a server prints to stdout that is not LSP (a banner, a stray log line). The frame guard
//! (`squiggle_protocol::FrameGuard`) re-frames the stream: it skips what is not a frame, or not
//! a message a strict JSON-RPC decoder accepts, and passes the clean frames on.
//!
//! Why it stays: async-lsp 0.2.4 has no codec hook (its framing is fixed; `run` takes only a
//! byte stream), so the only place to stand is in front of its input. The same pass is the
//! diagnostics path's fast lane (`client::ClientContext::take_fast`): publishes, progress and
//! pull answers are parsed once, here, in stream order (pull answers go to `pull_stash`).

use squiggle_protocol::{encode_frame, FrameGuard};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};

use crate::server::client::{ClientContext, Fast};
use crate::server::liveness::Heard;

/// A server that writes this much junk without one clean frame is broken (`command = "yes"`).
const MAX_JUNK: u64 = 16 * 1024 * 1024;

/// Reads `stdout` through the frame guard and returns a stream that carries only clean frames;
/// the notifications on the diagnostics path are handled here, in stream order, and the rest
/// goes on to async-lsp. The stream ends when `stdout` does, or when the server floods it with
/// junk, which marks the server broken. Every clean frame counts in `heard` (a sign of life).
pub fn guard_stdout(
    mut stdout: impl AsyncRead + Unpin + Send + 'static,
    client: ClientContext,
    heard: Heard,
) -> DuplexStream {
    let server = client.key.id.clone();
    let (reader, mut writer) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut guard = FrameGuard::named(format!("language server {server}"));
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match stdout.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) => {
                    tracing::debug!(%server, %err, "server stdout failed");
                    break;
                }
            };
            guard.push(&buf[..n]);
            while let Some(body) = guard.next_body() {
                let Ok(body) = body else { continue };
                heard.one();
                // The diagnostics path parses its own messages; the rest is checked for async-lsp.
                let body = match client.take_fast(&body) {
                    Fast::Taken => continue,
                    Fast::Replaced(stand_in) if guard.admit(&stand_in) => stand_in,
                    Fast::Passed if guard.admit(&body) => body,
                    Fast::Replaced(_) | Fast::Passed => continue,
                };
                if writer.write_all(&encode_frame(&body)).await.is_err() {
                    return;
                }
            }
            if guard.junk_since_frame() > MAX_JUNK {
                let reason = format!(
                    "the server wrote over {} MiB to stdout that is not LSP",
                    MAX_JUNK >> 20
                );
                tracing::warn!(%server, "{reason}; stopping it");
                client.server.exited(reason);
                break;
            }
        }
        if guard.skipped() > 0 {
            tracing::debug!(%server, skipped = guard.skipped(), "server stdout ended; junk was skipped");
        }
    });
    reader
}
