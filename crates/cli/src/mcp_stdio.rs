//! MCP's stdio transport, answering a line over the size limit: rmcp drops such a line with only
//! a log line, so its sender would wait for ever; here the sender gets an error, with the
//! line's id when one was found in it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::{ErrorData, RequestId};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use squiggle_protocol::line_limit::{LineLimit, LongLine};
use tokio::io::{AsyncRead, ReadBuf, Stdin, Stdout};
use tokio::sync::mpsc;

/// The longest line (one message) read, newline included: rmcp's default.
const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The server's side of MCP over stdin and stdout.
pub struct Stdio {
    inner: AsyncRwTransport<RoleServer, Watched<Stdin>, Stdout>,
    /// Lines over the limit, as rmcp skips them.
    long_lines: mpsc::UnboundedReceiver<LongLine>,
}

/// MCP over this process's stdin and stdout.
pub fn stdio() -> Stdio {
    let (told, long_lines) = mpsc::unbounded_channel();
    let stdin = Watched {
        inner: tokio::io::stdin(),
        limit: LineLimit::new(MAX_LINE),
        told,
    };
    Stdio {
        inner: AsyncRwTransport::new(stdin, tokio::io::stdout()).with_max_line_length(MAX_LINE),
        long_lines,
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            tokio::select! {
                biased;
                Some(line) = self.long_lines.recv() => {
                    if self.inner.send(refusal(&line)).await.is_err() {
                        return None;
                    }
                }
                // rmcp's receive keeps a partly read line when it is dropped here.
                message = self.inner.receive() => return message,
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The error that answers a line over the limit.
fn refusal(line: &LongLine) -> TxJsonRpcMessage<RoleServer> {
    tracing::warn!(
        bytes = line.bytes,
        id = line.id.as_deref().unwrap_or("none"),
        "an MCP message over the line limit was skipped and answered with an error"
    );
    let id = line
        .id
        .as_deref()
        .and_then(|id| serde_json::from_str::<RequestId>(id).ok());
    let message = format!(
        "the message is {} bytes, over the limit of {} MiB for one line; it was not read",
        line.bytes,
        MAX_LINE >> 20
    );
    TxJsonRpcMessage::<RoleServer>::error(ErrorData::invalid_request(message, None), id)
}

/// Stdin as rmcp reads it, with every line's length (and id) watched on the way.
struct Watched<R> {
    inner: R,
    limit: LineLimit,
    told: mpsc::UnboundedSender<LongLine>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            for line in this.limit.watch(&buf.filled()[before..]) {
                let _ = this.told.send(line);
            }
        }
        polled
    }
}
