//! A tolerant reader of LSP `Content-Length` frames from a server's stdout.
//!
//! Language servers sometimes print logs to stdout, miscount lengths or send malformed
//! messages. The guard delivers only frames that a strict JSON-RPC decoder would accept and
//! skips everything else, resynchronising on the next `Content-Length` header.

use serde::Deserialize;
use serde_json::Value;

/// The largest body accepted in one frame.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// The largest header block (or junk line) kept while waiting for its end.
const MAX_HEADER: usize = 8 * 1024;
/// The header that carries the body length, lowercase.
const CONTENT_LENGTH: &[u8] = b"content-length";
/// How many bytes of skipped junk are shown in a warning.
const PREVIEW: usize = 80;

/// A tolerant incremental parser of LSP `Content-Length` frames.
#[derive(Debug, Default)]
pub struct FrameGuard {
    /// Bytes received; those before `start` are consumed.
    buffer: Vec<u8>,
    /// Where the unconsumed bytes begin: frames are taken by moving it, and the consumed bytes
    /// are dropped once per push rather than once per frame.
    start: usize,
    /// Whether the buffer starts inside a junk line whose beginning was already dropped.
    mid_line: bool,
    /// How many pieces of junk were skipped.
    skipped: u64,
}

/// What the start of the buffer holds.
enum Header {
    /// Not enough bytes to tell yet.
    Incomplete,
    /// Not a usable header; parsing may resume at byte `resume` (a line start or the end).
    Junk { reason: &'static str, resume: usize },
    /// A complete header of `header_len` bytes announcing a body of `body_len` bytes.
    Frame { header_len: usize, body_len: usize },
}

impl FrameGuard {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.drain(..self.start);
        self.start = 0;
        self.buffer.extend_from_slice(bytes);
    }

    /// Returns the body of the next clean frame, skipping (with tracing::warn!) anything that is not one.
    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        loop {
            let body = self.next_body()?;
            if self.admit(&body) {
                return Some(body);
            }
        }
    }

    /// Whether a body from [`FrameGuard::next_body`] is a message a strict JSON-RPC decoder
    /// accepts; if not, it is counted as skipped, with a warning.
    pub fn admit(&mut self, body: &[u8]) -> bool {
        let Err(reason) = check_body(body) else {
            return true;
        };
        self.skipped += 1;
        tracing::warn!(
            reason,
            body = %preview(body),
            "skipping a bad frame from the language server"
        );
        false
    }

    /// Returns the body of the next well-framed message, whatever it holds (for peers that
    /// answer a bad body with an error rather than skipping it); junk between frames is skipped.
    pub fn next_body(&mut self) -> Option<Vec<u8>> {
        loop {
            if self.mid_line && !self.drop_rest_of_line() {
                return None;
            }
            let rest = &self.buffer[self.start..];
            if rest.is_empty() {
                return None;
            }
            match parse_header(rest) {
                Header::Incomplete => return None,
                Header::Junk { reason, resume } => self.skip_junk(reason, resume),
                Header::Frame {
                    header_len,
                    body_len,
                } => {
                    let end = header_len + body_len;
                    if rest.len() < end {
                        return None;
                    }
                    let body = rest[header_len..end].to_vec();
                    self.start += end;
                    return Some(body);
                }
            }
        }
    }

    /// The bytes received and not consumed yet.
    #[cfg(test)]
    fn unconsumed(&self) -> &[u8] {
        &self.buffer[self.start..]
    }

    /// How many pieces of junk (garbage bytes/lines, bad frames) were skipped so far.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Drops the rest of a junk line; false when its end has not arrived yet.
    fn drop_rest_of_line(&mut self) -> bool {
        match self.buffer[self.start..].iter().position(|&b| b == b'\n') {
            Some(newline) => {
                self.start += newline + 1;
                self.mid_line = false;
                true
            }
            None => {
                self.buffer.clear();
                self.start = 0;
                false
            }
        }
    }

    /// Skips junk at the start of the buffer up to the next line starting with `Content-Length`.
    fn skip_junk(&mut self, reason: &'static str, resume: usize) {
        self.skipped += 1;
        let rest = &self.buffer[self.start..];
        let cut = resync_point(rest, resume);
        tracing::warn!(
            reason,
            junk = %preview(&rest[..cut]),
            "skipping junk from the language server"
        );
        self.mid_line = cut == rest.len() && rest.last() != Some(&b'\n');
        self.start += cut;
    }
}

/// Encodes a body as a frame: `Content-Length: N\r\n\r\n` + body.
pub fn encode_frame(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// Parses the header block at the start of `buf`.
fn parse_header(buf: &[u8]) -> Header {
    let mut pos = 0;
    let mut body_len = None;
    let mut bad_length = None;
    loop {
        let Some(newline) = buf[pos..].iter().position(|&b| b == b'\n') else {
            if buf.len() > MAX_HEADER {
                return Header::Junk {
                    reason: "header too long",
                    resume: buf.len(),
                };
            }
            return Header::Incomplete;
        };
        let end = pos + newline;
        let line = &buf[pos..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        pos = end + 1;
        if pos > MAX_HEADER {
            return Header::Junk {
                reason: "header too long",
                resume: pos,
            };
        }
        if line.is_empty() {
            return match (bad_length, body_len) {
                (Some(reason), _) => Header::Junk {
                    reason,
                    resume: pos,
                },
                (None, Some(body_len)) => Header::Frame {
                    header_len: pos,
                    body_len,
                },
                (None, None) => Header::Junk {
                    reason: "header without Content-Length",
                    resume: pos,
                },
            };
        }
        let Some((name, value)) = split_header(line) else {
            return Header::Junk {
                reason: "not a header line",
                resume: pos,
            };
        };
        if name.eq_ignore_ascii_case(CONTENT_LENGTH) {
            match parse_length(value) {
                Some(len) if len <= MAX_BODY => body_len = Some(len),
                Some(_) => bad_length = Some("Content-Length too large"),
                None => bad_length = Some("invalid Content-Length"),
            }
        }
    }
}

/// Splits `Name: value` into name and trimmed value; None unless the name is a header token.
fn split_header(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().position(|&b| b == b':')?;
    let name = &line[..colon];
    let is_token = |b: &u8| b.is_ascii_alphanumeric() || b"-_.".contains(b);
    if name.is_empty() || !name.iter().all(is_token) {
        return None;
    }
    Some((name, line[colon + 1..].trim_ascii()))
}

/// The decimal length in a `Content-Length` value.
fn parse_length(value: &[u8]) -> Option<usize> {
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// The first line start at or after `from` (itself a line start) that begins with
/// `Content-Length`, or the start of the last, incomplete line.
fn resync_point(buf: &[u8], from: usize) -> usize {
    let mut line_start = from.min(buf.len());
    loop {
        let rest = &buf[line_start..];
        if rest.len() >= CONTENT_LENGTH.len()
            && rest[..CONTENT_LENGTH.len()].eq_ignore_ascii_case(CONTENT_LENGTH)
        {
            return line_start;
        }
        match rest.iter().position(|&b| b == b'\n') {
            Some(newline) => line_start += newline + 1,
            None => return line_start,
        }
    }
}

/// A short, lossy rendering of skipped bytes for a warning.
fn preview(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(PREVIEW)]).into_owned()
}

/// Checks that a body is a JSON-RPC 2.0 message async-lsp's decoder accepts.
fn check_body(body: &[u8]) -> Result<(), &'static str> {
    if body.is_empty() {
        return Err("empty body");
    }
    let envelope = match serde_json::from_slice::<Envelope>(body) {
        Ok(envelope) => envelope,
        Err(error) if error.is_data() => return Err("body is not a JSON-RPC 2.0 message"),
        Err(_) => return Err("body is not JSON"),
    };
    if envelope.jsonrpc != "2.0" {
        return Err("body is not a JSON-RPC 2.0 message");
    }
    // async-lsp tries, in order: request (id + method), response (id), notification (method).
    let method = matches!(envelope.method, Some(Value::String(_)));
    let id = envelope.id.as_ref().is_some_and(is_request_id);
    match (id, method) {
        (true, true) | (false, true) => Ok(()),
        (true, false) if envelope.error.as_ref().is_none_or(is_response_error) => Ok(()),
        _ => Err("body is not a JSON-RPC 2.0 message"),
    }
}

/// The fields of a message that decide whether async-lsp 0.2.4 can decode it; everything else
/// (params, result) is skipped without being built.
#[derive(Deserialize)]
struct Envelope {
    /// Must be exactly `"2.0"`.
    jsonrpc: String,
    /// A request's or response's id.
    #[serde(default)]
    id: Option<Value>,
    /// A request's or notification's method.
    #[serde(default)]
    method: Option<Value>,
    /// A failed response's error.
    #[serde(default)]
    error: Option<Value>,
}

/// An id async-lsp accepts: a number that fits an i32, or a string.
fn is_request_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
        _ => false,
    }
}

/// An error object async-lsp accepts: an i32 `code` and a string `message`.
fn is_response_error(error: &Value) -> bool {
    error
        .get("code")
        .and_then(Value::as_i64)
        .is_some_and(|c| i32::try_from(c).is_ok())
        && error.get("message").is_some_and(Value::is_string)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    const RESPONSE: &[u8] = br#"{"jsonrpc":"2.0","id":"a","result":null}"#;
    const NOTIFICATION: &[u8] =
        br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///a","diagnostics":[]}}"#;

    fn frame_with_header(header: &str, body: &[u8]) -> Vec<u8> {
        let mut frame = header.as_bytes().to_vec();
        frame.extend_from_slice(body);
        frame
    }

    fn drain(guard: &mut FrameGuard) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| guard.next_frame()).collect()
    }

    fn guard_with(bytes: &[u8]) -> FrameGuard {
        let mut guard = FrameGuard::new();
        guard.push(bytes);
        guard
    }

    fn assert_skips_body(body: &[u8]) {
        let mut stream = encode_frame(body);
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(
            drain(&mut guard),
            vec![REQUEST.to_vec()],
            "body {:?}",
            preview(body)
        );
        assert_eq!(guard.skipped(), 1, "body {:?}", preview(body));
    }

    fn assert_accepts_body(body: &[u8]) {
        let mut guard = guard_with(&encode_frame(body));
        assert_eq!(
            drain(&mut guard),
            vec![body.to_vec()],
            "body {:?}",
            preview(body)
        );
        assert_eq!(guard.skipped(), 0);
    }

    #[test]
    fn encode_frame_writes_content_length_header_and_body() {
        assert_eq!(encode_frame(b"{}"), b"Content-Length: 2\r\n\r\n{}".to_vec());
        assert_eq!(encode_frame(b""), b"Content-Length: 0\r\n\r\n".to_vec());
    }

    #[test]
    fn single_frame_is_delivered() {
        let mut guard = guard_with(&encode_frame(REQUEST));
        assert_eq!(guard.next_frame(), Some(REQUEST.to_vec()));
        assert_eq!(guard.next_frame(), None);
        assert_eq!(guard.skipped(), 0);
        assert!(guard.unconsumed().is_empty());
    }

    #[test]
    fn empty_guard_has_no_frame() {
        assert_eq!(FrameGuard::new().next_frame(), None);
    }

    #[test]
    fn several_frames_in_one_push_are_delivered_in_order() {
        let mut stream = encode_frame(REQUEST);
        stream.extend(encode_frame(RESPONSE));
        stream.extend(encode_frame(NOTIFICATION));
        let mut guard = guard_with(&stream);
        assert_eq!(
            drain(&mut guard),
            vec![REQUEST.to_vec(), RESPONSE.to_vec(), NOTIFICATION.to_vec()]
        );
        assert_eq!(guard.skipped(), 0);
    }

    #[test]
    fn frame_pushed_one_byte_at_a_time_is_delivered_once_complete() {
        let stream = encode_frame(NOTIFICATION);
        let mut guard = FrameGuard::new();
        let mut frames = Vec::new();
        for (i, byte) in stream.iter().enumerate() {
            guard.push(std::slice::from_ref(byte));
            let frame = guard.next_frame();
            if i + 1 < stream.len() {
                assert_eq!(frame, None, "frame before byte {i} arrived");
            }
            frames.extend(frame);
        }
        assert_eq!(frames, vec![NOTIFICATION.to_vec()]);
        assert_eq!(guard.skipped(), 0);
    }

    #[test]
    fn partial_header_waits_for_more() {
        let mut guard = guard_with(b"Content-Len");
        assert_eq!(guard.next_frame(), None);
        guard.push(b"gth: 2\r\n");
        assert_eq!(guard.next_frame(), None);
        guard.push(b"\r\n{");
        assert_eq!(guard.next_frame(), None);
        guard.push(b"}");
        // `{}` is JSON but not JSON-RPC, so the complete frame is skipped.
        assert_eq!(guard.next_frame(), None);
        assert_eq!(guard.skipped(), 1);
        guard.push(&encode_frame(RESPONSE));
        assert_eq!(guard.next_frame(), Some(RESPONSE.to_vec()));
    }

    #[test]
    fn partial_body_waits_for_more() {
        let stream = encode_frame(REQUEST);
        let (head, tail) = stream.split_at(stream.len() - 5);
        let mut guard = guard_with(head);
        assert_eq!(guard.next_frame(), None);
        assert_eq!(guard.skipped(), 0);
        guard.push(tail);
        assert_eq!(guard.next_frame(), Some(REQUEST.to_vec()));
    }

    #[test]
    fn header_names_are_case_insensitive() {
        for header in ["content-length", "CONTENT-LENGTH", "Content-length"] {
            let header = format!("{header}: {}\r\n\r\n", REQUEST.len());
            let mut guard = guard_with(&frame_with_header(&header, REQUEST));
            assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()], "{header}");
        }
    }

    #[test]
    fn other_headers_are_ignored() {
        let len = REQUEST.len();
        let before = format!(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: {len}\r\n\r\n"
        );
        let after = format!("Content-Length: {len}\r\nContent-Type: application/json\r\n\r\n");
        let mut stream = frame_with_header(&before, REQUEST);
        stream.extend(frame_with_header(&after, REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec(), REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 0);
    }

    #[test]
    fn bare_newline_line_endings_are_tolerated() {
        let header = format!("Content-Type: x\nContent-Length: {}\n\n", REQUEST.len());
        let mut guard = guard_with(&frame_with_header(&header, REQUEST));
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 0);
    }

    #[test]
    fn spaces_around_the_length_are_tolerated() {
        let header = format!("Content-Length:{}  \r\n\r\n", REQUEST.len());
        let mut guard = guard_with(&frame_with_header(&header, REQUEST));
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
    }

    #[test]
    fn garbage_line_before_header_is_skipped() {
        let mut stream = b"Listening on stdio\n".to_vec();
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 1);
    }

    #[test]
    fn several_garbage_lines_in_one_push_are_one_skip() {
        let mut stream = b"Starting server\r\nversion 1.2\n\nready!\n".to_vec();
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 1);
    }

    #[test]
    fn garbage_between_frames_is_skipped() {
        let mut stream = encode_frame(REQUEST);
        stream.extend(b"DEBUG something happened\n");
        stream.extend(encode_frame(RESPONSE));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec(), RESPONSE.to_vec()]);
        assert_eq!(guard.skipped(), 1);
    }

    #[test]
    fn garbage_line_that_looks_like_a_header_joins_the_header_block() {
        let mut stream = b"INFO: server started\n".to_vec();
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 0);
    }

    #[test]
    fn header_block_without_content_length_is_skipped() {
        let mut stream = b"Content-Type: application/json\r\n\r\n".to_vec();
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 1);
    }

    #[test]
    fn invalid_content_length_is_skipped() {
        let mut stream = b"Content-Length: abc\r\n\r\n".to_vec();
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 1);
    }

    #[test]
    fn content_length_over_64_mib_is_skipped_and_resynced() {
        let mut stream = format!("Content-Length: {}\r\n\r\n", MAX_BODY + 1).into_bytes();
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 1);
    }

    #[test]
    fn content_length_of_exactly_64_mib_waits_for_the_body() {
        let mut guard = guard_with(format!("Content-Length: {MAX_BODY}\r\n\r\n").as_bytes());
        assert_eq!(guard.next_frame(), None);
        assert_eq!(guard.skipped(), 0);
    }

    #[test]
    fn zero_length_body_is_skipped() {
        let mut stream = encode_frame(b"");
        stream.extend(encode_frame(REQUEST));
        let mut guard = guard_with(&stream);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
        assert_eq!(guard.skipped(), 1);
    }

    #[test]
    fn body_that_is_not_json_is_skipped() {
        assert_skips_body(b"hello world");
        assert_skips_body(br#"{"jsonrpc":"2.0","id":1,"method":"x""#);
        assert_skips_body(br#"{"jsonrpc":"2.0","method":"x"} trailing"#);
    }

    #[test]
    fn json_that_is_not_json_rpc_2_is_skipped() {
        assert_skips_body(b"{}");
        assert_skips_body(b"[1,2]");
        assert_skips_body(b"42");
        assert_skips_body(br#"{"method":"x"}"#);
        assert_skips_body(br#"{"jsonrpc":"1.0","method":"x"}"#);
        assert_skips_body(br#"{"jsonrpc":2.0,"method":"x"}"#);
        assert_skips_body(br#"{"jsonrpc":"2.0"}"#);
        assert_skips_body(br#"{"jsonrpc":"2.0","id":1}x"#);
        assert_skips_body(br#"{"jsonrpc":"2.0","method":5}"#);
    }

    #[test]
    fn response_with_null_id_is_skipped() {
        assert_skips_body(br#"{"jsonrpc":"2.0","id":null,"result":1}"#);
        assert_skips_body(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
        );
    }

    #[test]
    fn response_with_incomplete_error_is_skipped() {
        assert_skips_body(br#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#);
        assert_skips_body(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#);
        assert_skips_body(br#"{"jsonrpc":"2.0","id":1,"error":"oops"}"#);
    }

    #[test]
    fn id_outside_i32_is_skipped() {
        assert_skips_body(br#"{"jsonrpc":"2.0","id":4294967296,"result":1}"#);
        assert_skips_body(br#"{"jsonrpc":"2.0","id":1.5,"result":1}"#);
    }

    #[test]
    fn message_with_method_and_unusable_id_passes_as_a_notification_like_in_async_lsp() {
        assert_accepts_body(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#);
        assert_accepts_body(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#);
    }

    #[test]
    fn well_formed_messages_are_accepted() {
        assert_accepts_body(REQUEST);
        assert_accepts_body(RESPONSE);
        assert_accepts_body(NOTIFICATION);
        assert_accepts_body(br#"{"jsonrpc":"2.0","id":"x","method":"shutdown"}"#);
        assert_accepts_body(br#"{"jsonrpc":"2.0","method":"exit"}"#);
        assert_accepts_body(br#"{"jsonrpc":"2.0","id":-3,"result":{"a":[1,2]}}"#);
        assert_accepts_body(br#"{"jsonrpc":"2.0","id":7}"#);
        assert_accepts_body(
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":{"x":1}}}"#,
        );
        assert_accepts_body(b" {\"method\":\"exit\",\"jsonrpc\":\"2.0\",\"extra\":1}\n");
    }

    #[test]
    fn garbage_without_newline_does_not_grow_the_buffer() {
        let mut guard = FrameGuard::new();
        for _ in 0..100 {
            guard.push(&[b'x'; 1000]);
            assert_eq!(guard.next_frame(), None);
            assert!(guard.unconsumed().len() <= MAX_HEADER + 1000);
        }
        assert_eq!(guard.skipped(), 1);
        let mut tail = b"still junk\n".to_vec();
        tail.extend(encode_frame(REQUEST));
        guard.push(&tail);
        assert_eq!(drain(&mut guard), vec![REQUEST.to_vec()]);
    }

    #[test]
    fn garbage_lines_without_header_do_not_grow_the_buffer() {
        let mut guard = FrameGuard::new();
        for _ in 0..1000 {
            guard.push(b"log line without any header\n");
            assert_eq!(guard.next_frame(), None);
            assert!(guard.unconsumed().is_empty());
        }
        assert_eq!(guard.skipped(), 1000);
    }

    #[test]
    fn one_byte_feeding_of_garbage_and_frames_delivers_the_clean_frames() {
        let mut stream = b"Listening on stdio\n".to_vec();
        stream.extend(encode_frame(REQUEST));
        stream.extend(b"warning: something\r\n\r\n");
        stream.extend(encode_frame(b"not json"));
        stream.extend(encode_frame(b""));
        stream.extend(frame_with_header(
            &format!("content-length: {}\n\n", RESPONSE.len()),
            RESPONSE,
        ));
        stream.extend(b"Content-Length: 999999999999\r\n\r\n");
        stream.extend(encode_frame(br#"{"jsonrpc":"2.0","id":null,"result":1}"#));
        stream.extend(encode_frame(NOTIFICATION));
        stream.extend(b"trailing junk\n");

        let mut guard = FrameGuard::new();
        let mut frames = Vec::new();
        for byte in &stream {
            guard.push(std::slice::from_ref(byte));
            frames.extend(drain(&mut guard));
        }
        assert_eq!(
            frames,
            vec![REQUEST.to_vec(), RESPONSE.to_vec(), NOTIFICATION.to_vec()]
        );
        // Garbage line, header block without length, bad JSON, empty body, huge length,
        // null id, trailing junk.
        assert_eq!(guard.skipped(), 7);
        assert!(guard.unconsumed().is_empty());
    }

    #[test]
    fn one_byte_feeding_gives_the_same_frames_as_one_push() {
        let mut stream = b"Listening on stdio\n".to_vec();
        stream.extend(encode_frame(REQUEST));
        stream.extend(encode_frame(b"{}"));
        stream.extend(encode_frame(NOTIFICATION));

        let mut whole = guard_with(&stream);
        let mut bytewise = FrameGuard::new();
        let mut frames = Vec::new();
        for byte in &stream {
            bytewise.push(std::slice::from_ref(byte));
            frames.extend(drain(&mut bytewise));
        }
        assert_eq!(frames, drain(&mut whole));
        assert_eq!(bytewise.skipped(), 2);
        assert_eq!(whole.skipped(), 2);
    }
}
