//! MCP's stdio transport (one message per line), over stdin and stdout or over `serve`'s file
//! descriptors 3 and 4, answering a line over the size limit or nested too deep to parse: rmcp
//! drops such a line with only a log line, so its sender would wait for ever; here the sender
//! gets an error, with the line's id when one was found in it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::{ErrorData, RequestId};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use squiggle_protocol::line_limit::{LineLimit, LongLine, MAX_DEPTH};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// The longest line (one message) read, newline included: rmcp's default.
const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The server's side of MCP over a reader and a writer.
pub struct Stdio<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, Watched<R>, W>,
    /// Lines over the limit, as rmcp skips them.
    long_lines: mpsc::UnboundedReceiver<LongLine>,
}

/// MCP over this process's stdin and stdout.
pub fn stdio() -> Stdio<tokio::io::Stdin, tokio::io::Stdout> {
    over(tokio::io::stdin(), tokio::io::stdout())
}

/// MCP over `reader` and `writer`.
fn over<R, W>(reader: R, writer: W) -> Stdio<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (told, long_lines) = mpsc::unbounded_channel();
    let reader = Watched {
        inner: reader,
        limit: LineLimit::new(MAX_LINE),
        told,
    };
    Stdio {
        inner: AsyncRwTransport::new(reader, writer).with_max_line_length(MAX_LINE),
        long_lines,
    }
}

/// The pipes a `serve` host passes for MCP (file descriptor 3 read, 4 written): both open, each
/// a pipe or a socket, and neither a jobserver's that `MAKEFLAGS` or `CARGO_MAKEFLAGS` names.
#[cfg(unix)]
pub type ExtraFds = Stdio<tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender>;

/// MCP over file descriptors 3 and 4 when a host passed them (see [`ExtraFds`]).
#[cfg(unix)]
pub fn extra_fds() -> Option<ExtraFds> {
    use std::os::fd::{FromRawFd, OwnedFd};
    use tokio::net::unix::pipe;
    const READ: i32 = 3;
    const WRITE: i32 = 4;
    if !(is_pipe_or_socket(READ) && is_pipe_or_socket(WRITE)) || jobserver_named(READ, WRITE) {
        return None;
    }
    let nonblocking = |fd| {
        // SAFETY: `fd` is open (just checked) and owned by no other part of squiggle.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let flags = rustix::fs::fcntl_getfl(&owned).ok()?;
        rustix::fs::fcntl_setfl(&owned, flags | rustix::fs::OFlags::NONBLOCK).ok()?;
        Some(std::fs::File::from(owned))
    };
    let reader = pipe::Receiver::from_file_unchecked(nonblocking(READ)?).ok()?;
    let writer = pipe::Sender::from_file_unchecked(nonblocking(WRITE)?).ok()?;
    Some(over(reader, writer))
}

/// Whether `fd` is open and a pipe or a socket (not a file or a terminal that happened to be
/// inherited).
#[cfg(unix)]
fn is_pipe_or_socket(fd: i32) -> bool {
    // SAFETY: only borrowed for the fstat; an fd that is not open gives EBADF.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    rustix::fs::fstat(borrowed).is_ok_and(|stat| {
        let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
        matches!(
            kind,
            rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket
        )
    })
}

/// Whether make's or cargo's jobserver uses these descriptors.
#[cfg(unix)]
fn jobserver_named(read: i32, write: i32) -> bool {
    ["MAKEFLAGS", "CARGO_MAKEFLAGS"]
        .iter()
        .any(|name| std::env::var(name).is_ok_and(|flags| names_jobserver(&flags, read, write)))
}

/// Whether make's flags give its jobserver these descriptors (`--jobserver-auth=3,4`, or the
/// older `--jobserver-fds=3,4`).
#[cfg(unix)]
fn names_jobserver(flags: &str, read: i32, write: i32) -> bool {
    let pair = format!("{read},{write}");
    flags.split_whitespace().any(|flag| {
        (flag.strip_prefix("--jobserver-auth=")).or(flag.strip_prefix("--jobserver-fds="))
            == Some(pair.as_str())
    })
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
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

/// The error that answers a line rmcp skips: over the limit, or nested too deep to parse.
fn refusal(line: &LongLine) -> TxJsonRpcMessage<RoleServer> {
    tracing::warn!(
        bytes = line.bytes,
        too_deep = line.too_deep,
        id = line.id.as_deref().unwrap_or("none"),
        "an MCP message that cannot be read was skipped and answered with an error"
    );
    let id = line
        .id
        .as_deref()
        .and_then(|id| serde_json::from_str::<RequestId>(id).ok());
    let message = match line.too_deep {
        true => format!(
            "the message has arrays or objects nested more than {MAX_DEPTH} deep; it was not read"
        ),
        false => format!(
            "the message is {} bytes, over the limit of {} MiB for one line; it was not read",
            line.bytes,
            MAX_LINE >> 20
        ),
    };
    TxJsonRpcMessage::<RoleServer>::error(ErrorData::invalid_request(message, None), id)
}

/// The input as rmcp reads it, with every line's length (and id) watched on the way.
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_jobservers_descriptors_are_not_taken_for_mcp() {
        let cases = [
            ("-j8 --jobserver-auth=3,4", true),
            ("--jobserver-fds=3,4 -j", true),
            ("-j8 --jobserver-auth=fifo:/tmp/GMfifo1", false),
            ("--jobserver-auth=5,6", false),
            ("", false),
        ];
        for (flags, named) in cases {
            assert_eq!(names_jobserver(flags, 3, 4), named, "{flags:?}");
        }
    }
}
