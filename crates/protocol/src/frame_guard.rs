//! A tolerant reader of LSP `Content-Length` frames, for a language server's stdout (in front
//! of async-lsp, whose main loop stops for good on the first bad frame) and for the stdin of
//! `squiggle serve`.
//!
//! Peers print logs to stdout, miscount lengths or send malformed messages. The guard hands on
//! well-framed bodies, reports each bad frame once, and resynchronises at once on the next
//! `Content-Length:` wherever it appears: after garbage with no newline, a length shorter or
//! longer than its body, a header block without a length, or a length over the limit (refused
//! without waiting for its body). Its warnings are rate-limited.

mod header;
mod jsonrpc;
mod warn_limit;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

use std::time::Instant;

use header::{Header, InBody, KEEP_FOR_HEADER};
use warn_limit::{Say, WarnLimit};

/// How many bytes of a bad frame are shown in a warning.
const PREVIEW: usize = 80;

/// Why bytes from a peer were not a usable message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadFrame {
    /// Bytes before or between frames that start no header.
    #[error("bytes outside any frame")]
    Junk,
    /// A header line that does not end within 8 KiB.
    #[error("a header line over 8 KiB")]
    HeaderTooLong,
    /// A header block that ends without a `Content-Length`.
    #[error("a header block without Content-Length")]
    NoLength,
    /// A header block with a second `Content-Length` before its end.
    #[error("a header block cut short by another Content-Length")]
    CutShort,
    /// A `Content-Length` that is not a decimal number.
    #[error("an invalid Content-Length")]
    InvalidLength,
    /// A `Content-Length` over the 64 MiB limit.
    #[error("a Content-Length over the 64 MiB limit")]
    TooLarge,
    /// A body cut short by the next frame's header: its length was too large.
    #[error("a Content-Length longer than its body")]
    PastBody,
    /// A body of length 0.
    #[error("an empty body")]
    EmptyBody,
    /// A body that is not JSON (its length may be wrong).
    #[error("a body that is not JSON")]
    NotJson,
    /// A JSON body that is not a JSON-RPC 2.0 message.
    #[error("a body that is not a JSON-RPC 2.0 message")]
    NotJsonRpc,
}

/// A tolerant incremental parser of LSP `Content-Length` frames.
#[derive(Debug)]
pub struct FrameGuard {
    /// Bytes received; those before `start` are consumed.
    buffer: Vec<u8>,
    /// Where the unconsumed bytes begin: frames are taken by moving it, and the consumed bytes
    /// are dropped once per push rather than once per frame.
    start: usize,
    /// Whether bytes are being dropped up to the next `Content-Length:`.
    skipping: bool,
    /// How far the awaited body of the frame at `start` was searched for a header line.
    searched: usize,
    /// Where the body last handed out starts, until the next call: a body rejected as not JSON
    /// is searched again from there, since its length may have been wrong.
    last_body: Option<usize>,
    /// How many bad frames (and runs of junk) were skipped.
    skipped: u64,
    /// Bytes skipped since the last body that was not rejected.
    junk: u64,
    /// Who sends the stream, for warnings.
    peer: String,
    /// Which warnings are shown.
    warnings: WarnLimit,
}

impl Default for FrameGuard {
    fn default() -> Self {
        Self::named("peer")
    }
}

impl FrameGuard {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty guard for a stream from `peer`, named in its warnings.
    pub fn named(peer: impl Into<String>) -> Self {
        Self {
            buffer: Vec::new(),
            start: 0,
            skipping: false,
            searched: 0,
            last_body: None,
            skipped: 0,
            junk: 0,
            peer: peer.into(),
            warnings: WarnLimit::default(),
        }
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.settle_last_body();
        self.buffer.drain(..self.start);
        self.start = 0;
        self.buffer.extend_from_slice(bytes);
    }

    /// Returns the body of the next clean frame, skipping (with rate-limited warnings) anything
    /// that is not one.
    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Ok(body) = self.next_body()? {
                if self.admit(&body) {
                    return Some(body);
                }
            }
        }
    }

    /// Whether a body from [`FrameGuard::next_body`] is a message a strict JSON-RPC decoder
    /// accepts; if not, it is rejected (see [`FrameGuard::reject`]).
    pub fn admit(&mut self, body: &[u8]) -> bool {
        match jsonrpc::check_body(body) {
            Ok(()) => true,
            Err(why) => {
                self.reject(why);
                false
            }
        }
    }

    /// Counts the body last returned by [`FrameGuard::next_body`] as a bad frame (call it before
    /// the next call or push); a body that is not JSON is searched again for the next
    /// `Content-Length:`, as its length may have cut into the next frame.
    pub fn reject(&mut self, why: BadFrame) {
        let Some(body_start) = self.last_body.take() else {
            return;
        };
        self.skipped += 1;
        self.warn(why, body_start);
        if matches!(why, BadFrame::NotJson | BadFrame::EmptyBody) {
            self.start = body_start;
            self.skipping = true;
            self.searched = 0;
        } else {
            self.junk += (self.start - body_start) as u64;
        }
    }

    /// The next well-framed body, whatever it holds (for peers that answer a bad body with an
    /// error rather than skipping it), or the next bad frame, reported once; None until more
    /// bytes arrive.
    pub fn next_body(&mut self) -> Option<Result<Vec<u8>, BadFrame>> {
        self.settle_last_body();
        if self.skipping && !self.skip_junk() {
            return None;
        }
        let blank = self.buffer[self.start..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        self.start += blank;
        let rest = &self.buffer[self.start..];
        if rest.is_empty() {
            return None;
        }
        match header::parse_header(rest) {
            Header::Incomplete => None,
            Header::Bad { why, skip } => Some(Err(self.refuse(why, skip))),
            Header::Frame {
                header_len,
                body_len,
            } => self.take_body(header_len, body_len),
        }
    }

    /// How many bad frames (and runs of junk between frames) were skipped so far.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// How many bytes were skipped since the last body that was not rejected: a peer that
    /// writes nothing but junk keeps raising it.
    pub fn junk_since_frame(&self) -> u64 {
        self.junk
    }

    /// The bytes received and not consumed yet.
    #[cfg(test)]
    fn unconsumed(&self) -> &[u8] {
        &self.buffer[self.start..]
    }

    /// Takes the body of the frame whose header of `header_len` bytes is at `start`, once it has
    /// arrived; refuses it as soon as a header line shows up in the awaited bytes.
    fn take_body(
        &mut self,
        header_len: usize,
        body_len: usize,
    ) -> Option<Result<Vec<u8>, BadFrame>> {
        let arrived = &self.buffer[self.start + header_len..];
        if arrived.len() < body_len {
            match header::find_header_line(arrived, self.searched) {
                InBody::Found(at) => {
                    return Some(Err(self.refuse(BadFrame::PastBody, header_len + at)))
                }
                InBody::NotYet(from) => self.searched = from,
            }
            return None;
        }
        if body_len == 0 {
            return Some(Err(self.refuse(BadFrame::EmptyBody, header_len)));
        }
        let body_start = self.start + header_len;
        self.start = body_start + body_len;
        self.searched = 0;
        self.last_body = Some(body_start);
        Some(Ok(self.buffer[body_start..self.start].to_vec()))
    }

    /// Counts a bad frame, drops its first `skip` bytes and skips to the next
    /// `Content-Length:`; returns `why`.
    fn refuse(&mut self, why: BadFrame, skip: usize) -> BadFrame {
        self.skipped += 1;
        self.warn(why, self.start);
        self.start += skip;
        self.junk += skip as u64;
        self.skipping = true;
        self.searched = 0;
        why
    }

    /// Drops bytes up to the next `Content-Length:`; false when it has not arrived yet (the
    /// last bytes, which may be its beginning, are kept).
    fn skip_junk(&mut self) -> bool {
        let rest = &self.buffer[self.start..];
        let (drop, found) = match header::find_length_header(rest, 0) {
            Some(at) => (at, true),
            None => (rest.len().saturating_sub(KEEP_FOR_HEADER), false),
        };
        self.start += drop;
        self.junk += drop as u64;
        self.skipping = !found;
        found
    }

    /// A body handed out and not rejected was a frame: the junk count starts again.
    fn settle_last_body(&mut self) {
        if self.last_body.take().is_some() {
            self.junk = 0;
        }
    }

    /// Warns (rate-limited) about a bad frame whose bytes begin at `from`.
    fn warn(&mut self, why: BadFrame, from: usize) {
        let say = self.warnings.note(Instant::now());
        if say == Say::Hide {
            return;
        }
        let end = self.buffer.len().min(from + PREVIEW);
        // Escaped: a log line of its own, whatever the peer sent.
        let bytes = String::from_utf8_lossy(&self.buffer[from..end])
            .escape_debug()
            .to_string();
        let peer = &self.peer;
        match say {
            Say::Show { hidden: 0 } => {
                tracing::warn!(%peer, reason = %why, %bytes, "skipping a bad frame");
            }
            Say::Show { hidden } => tracing::warn!(
                %peer, reason = %why, %bytes, hidden,
                "skipping a bad frame ({hidden} more were not shown)"
            ),
            Say::ShowLast => tracing::warn!(
                %peer, reason = %why, %bytes,
                "skipping a bad frame; more from this peer are counted, not shown, for a minute"
            ),
            Say::Hide => {}
        }
    }
}

/// Encodes a body as a frame: `Content-Length: N\r\n\r\n` + body.
pub fn encode_frame(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}
