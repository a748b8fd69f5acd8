//! The frame guard on well-formed, split, noisy and broken streams.

#![allow(clippy::unwrap_used)]

use super::header::{KEEP_FOR_HEADER, MAX_BODY, MAX_HEADER};
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
        String::from_utf8_lossy(body)
    );
    assert_eq!(
        guard.skipped(),
        1,
        "body {:?}",
        String::from_utf8_lossy(body)
    );
}

fn assert_accepts_body(body: &[u8]) {
    let mut guard = guard_with(&encode_frame(body));
    assert_eq!(
        drain(&mut guard),
        vec![body.to_vec()],
        "body {:?}",
        String::from_utf8_lossy(body)
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
fn garbage_lines_without_header_do_not_grow_the_buffer_and_are_one_skip() {
    let mut guard = FrameGuard::new();
    for _ in 0..1000 {
        guard.push(b"log line without any header\n");
        assert_eq!(guard.next_frame(), None);
        assert!(guard.unconsumed().len() <= KEEP_FOR_HEADER);
    }
    assert_eq!(guard.skipped(), 1, "one run of junk up to the next header");
    assert_eq!(guard.junk_since_frame(), 28_000 - KEEP_FOR_HEADER as u64);
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
    assert!(guard.unconsumed().len() <= KEEP_FOR_HEADER);
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

/// Feeds `stream` to a fresh guard in one push and returns what `next_body` gives, rejecting
/// bodies that are not JSON (as errors) like `squiggle serve` does.
fn bodies_and_errors(stream: &[u8]) -> Vec<Result<Vec<u8>, BadFrame>> {
    let mut guard = guard_with(stream);
    let mut out = Vec::new();
    while let Some(item) = guard.next_body() {
        match item {
            Ok(body) if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() => {
                guard.reject(BadFrame::NotJson);
                out.push(Err(BadFrame::NotJson));
            }
            item => out.push(item),
        }
    }
    out
}

/// `bad` followed by a clean request whose body ends without a newline (like vscode-jsonrpc
/// sends it) gives exactly one error for `bad`, then the request.
fn assert_one_error_then_request(bad: &[u8], why: BadFrame) {
    let mut stream = bad.to_vec();
    stream.extend(encode_frame(REQUEST));
    stream.extend(encode_frame(RESPONSE));
    let items = bodies_and_errors(&stream);
    let errors: Vec<BadFrame> = items.iter().filter_map(|i| i.clone().err()).collect();
    let bodies: Vec<&Vec<u8>> = items.iter().filter_map(|i| i.as_ref().ok()).collect();
    let shown = String::from_utf8_lossy(bad);
    assert_eq!(errors, vec![why], "{shown}");
    assert_eq!(
        bodies.last().map(|b| b.as_slice()),
        Some(RESPONSE),
        "{shown}"
    );
    assert_eq!(
        bodies[bodies.len() - 2].as_slice(),
        REQUEST,
        "the request right after {shown}"
    );
    // The same bytes one at a time.
    let mut guard = FrameGuard::new();
    let mut frames = Vec::new();
    for byte in &stream {
        guard.push(std::slice::from_ref(byte));
        frames.extend(drain(&mut guard));
    }
    assert_eq!(frames, vec![REQUEST.to_vec(), RESPONSE.to_vec()], "{shown}");
}

#[test]
fn after_an_invalid_length_the_next_frame_is_read_though_no_newline_came_between() {
    assert_one_error_then_request(
        b"Content-Length: abc\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        BadFrame::InvalidLength,
    );
    assert_one_error_then_request(
        b"Content-Length: -5\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        BadFrame::InvalidLength,
    );
    assert_one_error_then_request(b"Content-Length: 1.5\r\n\r\n{}", BadFrame::InvalidLength);
}

#[test]
fn after_an_oversized_length_the_next_frame_is_read() {
    assert_one_error_then_request(
        b"Content-Length: 99999999999999999999\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        BadFrame::TooLarge,
    );
}

#[test]
fn a_length_shorter_than_its_body_costs_only_that_frame() {
    assert_one_error_then_request(
        b"Content-Length: 10\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}",
        BadFrame::NotJson,
    );
}

#[test]
fn a_length_that_cuts_into_the_next_header_costs_only_that_frame() {
    // The bad frame's body is the first bytes of the next frame's header.
    assert_one_error_then_request(b"Content-Length: 4\r\n\r\n", BadFrame::NotJson);
    assert_one_error_then_request(b"Content-Length: 0\r\n\r\n", BadFrame::EmptyBody);
}

#[test]
fn a_length_longer_than_its_body_is_refused_when_the_next_header_arrives() {
    assert_one_error_then_request(
        b"Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        BadFrame::PastBody,
    );
    // Refused before the announced 500 bytes arrive.
    let mut stream = b"Content-Length: 500\r\n\r\n{\"a\":".to_vec();
    stream.extend(encode_frame(REQUEST));
    let mut guard = guard_with(&stream);
    assert_eq!(guard.next_body(), Some(Err(BadFrame::PastBody)));
    assert_eq!(guard.next_body(), Some(Ok(REQUEST.to_vec())));
}

#[test]
fn a_header_block_without_length_costs_only_that_frame() {
    assert_one_error_then_request(
        b"Content-Type: application/json\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        BadFrame::NoLength,
    );
    assert_one_error_then_request(b"Content-Length: 3\r\n", BadFrame::CutShort);
}

#[test]
fn garbage_without_a_newline_costs_nothing_after_it() {
    assert_one_error_then_request(b"hello", BadFrame::Junk);
    assert_one_error_then_request(b"{\"jsonrpc\":\"2.0\",\"id\":3}", BadFrame::Junk);
    assert_one_error_then_request(b"X-Thing: a", BadFrame::Junk);
    assert_one_error_then_request(b"Content-Length:", BadFrame::Junk);
    assert_one_error_then_request(b"\x00\xff\xfe", BadFrame::Junk);
}

#[test]
fn blank_lines_between_frames_are_no_error() {
    let mut stream = b"\r\n\n  ".to_vec();
    stream.extend(encode_frame(REQUEST));
    stream.extend(b"\r\n");
    stream.extend(encode_frame(RESPONSE));
    stream.extend(b"\n");
    let mut guard = guard_with(&stream);
    assert_eq!(guard.next_body(), Some(Ok(REQUEST.to_vec())));
    assert_eq!(guard.next_body(), Some(Ok(RESPONSE.to_vec())));
    assert_eq!(guard.next_body(), None);
    assert_eq!(guard.skipped(), 0);
}

#[test]
fn a_length_over_the_limit_is_refused_without_waiting_for_its_body() {
    let mut guard = guard_with(format!("Content-Length: {}\r\n", MAX_BODY + 1).as_bytes());
    assert_eq!(guard.next_body(), Some(Err(BadFrame::TooLarge)));
    // Its body streams past without being kept.
    for _ in 0..100 {
        guard.push(&[b'x'; 1 << 16]);
        assert_eq!(guard.next_body(), None);
        assert!(guard.unconsumed().len() <= KEEP_FOR_HEADER);
    }
    guard.push(&encode_frame(REQUEST));
    assert_eq!(guard.next_body(), Some(Ok(REQUEST.to_vec())));
    assert_eq!(guard.skipped(), 1);
}

#[test]
fn junk_keeps_counting_until_a_frame_is_accepted() {
    let mut guard = guard_with(b"y\ny\ny\n");
    assert_eq!(guard.next_body(), Some(Err(BadFrame::Junk)));
    assert_eq!(guard.next_body(), None);
    guard.push(&encode_frame(b"not json"));
    assert_eq!(guard.next_frame(), None);
    assert!(guard.junk_since_frame() >= 6, "a rejected body is no frame");
    guard.push(&encode_frame(REQUEST));
    assert_eq!(guard.next_frame(), Some(REQUEST.to_vec()));
    assert_eq!(guard.next_frame(), None);
    assert_eq!(guard.junk_since_frame(), 0);
}

#[test]
fn warnings_about_many_bad_frames_are_limited() {
    let mut stream = Vec::new();
    for _ in 0..1000 {
        stream.extend(b"[INFO] a log line on stdout\n");
        stream.extend(encode_frame(NOTIFICATION));
    }
    let mut guard = guard_with(&stream);
    assert_eq!(drain(&mut guard).len(), 1000);
    assert_eq!(guard.skipped(), 1000);
    assert_eq!(guard.warnings.hidden(), 995, "five shown, the rest counted");
}
