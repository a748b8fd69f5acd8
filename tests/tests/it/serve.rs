//! `squiggle serve`: the JSON-RPC contract, its error paths and process lifetime, against the
//! fake server; and interoperability with vscode-jsonrpc (what TypeScript hosts use) against
//! real servers.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::support::{
    assert_all_gone, fake_lsp_bin, fixture, installed_server_dirs, path_with_servers,
    require_server, squiggle_bin, FakeWorkspace, Rng, Serve,
};
use serde_json::{json, Value};
use squiggle_protocol::encode_frame;

const LIMIT: Duration = Duration::from_secs(20);

/// A workspace whose `.fake` files are served by the fake server with these args.
fn workspace(args: &[&str]) -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    let config = format!(
        "settle_ms = 20\n[servers.fake]\ncommand = {:?}\nargs = [{}]\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {:?}, FAKE_LSP_LOG = {:?} }}\n",
        fake_lsp_bin().display().to_string(),
        args.join(", "),
        ws.pids.display().to_string(),
        ws.log.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws
}

/// Starts the service and checks that `lsp/ready` comes first.
fn serve(ws: &FakeWorkspace, env: &[(&str, &str)]) -> Serve {
    let serve = Serve::start(&ws.root, env);
    assert_eq!(
        serve.next(LIMIT),
        json!({"jsonrpc": "2.0", "method": "lsp/ready", "params": {}})
    );
    serve
}

#[test]
fn check_file_answers_the_contract_shape_after_ready() {
    let ws = workspace(&[]);
    ws.write("src/a.fake", "fine\n  ERROR bad <T> & co\nWARNING meh\n");
    let mut serve = serve(&ws, &[("SQUIGGLE_LOG", "debug")]);

    serve.request(
        1,
        "lsp/checkFile",
        json!({"filePath": ws.root.join("src/a.fake")}),
    );
    assert_eq!(
        serve.answer(1, LIMIT)["result"],
        json!([{"file": "src/a.fake", "line": 2, "character": 3, "severity": "error",
                "message": "found ERROR: bad &lt;T&gt; &amp; co", "code": "E1", "source": "fake"}])
    );
    serve.request(
        2,
        "lsp/checkFile",
        json!({"filePath": "src/a.fake", "text": "ERROR x\n"}),
    );
    assert_eq!(
        serve.answer(2, LIMIT)["result"][0]["message"],
        "found ERROR: x",
        "text is authoritative"
    );
    serve.request(3, "lsp/diagnostics", json!({}));
    assert_eq!(
        serve.answer(3, LIMIT)["result"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["src/a.fake"]
    );
    serve.request(4, "lsp/shutdown", json!({}));
    assert_eq!(serve.answer(4, LIMIT)["result"], Value::Null);
    assert_eq!(serve.wait(LIMIT), Some(0));
}

/// The text each didOpen or didChange the fake server received for a file carried, in order.
fn texts_received(ws: &FakeWorkspace, file: &str) -> Vec<String> {
    fn text_of(m: &Value) -> Option<&str> {
        match m["method"].as_str() {
            Some("textDocument/didOpen") => m["params"]["textDocument"]["text"].as_str(),
            Some("textDocument/didChange") => m["params"]["contentChanges"][0]["text"].as_str(),
            _ => None,
        }
    }
    ws.messages()
        .iter()
        .filter(|m| m["dir"] == "in")
        .filter(|m| {
            (m["params"]["textDocument"]["uri"].as_str()).is_some_and(|u| u.ends_with(file))
        })
        .filter_map(|m| text_of(m).map(String::from))
        .collect()
}

/// `squiggle/checkFile` requests of `file` with each of `texts` (ids 0, 1, ...), as one write.
fn check_requests(file: &str, texts: &[String]) -> Vec<u8> {
    let mut frames = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": i, "method": "squiggle/checkFile",
                             "params": {"filePath": file, "text": text}});
        frames.extend(encode_frame(request.to_string().as_bytes()));
    }
    frames
}

#[test]
fn concurrent_checks_of_one_file_reach_the_server_in_request_order() {
    let ws = workspace(&[]);
    // Texts as long as the file on disk are compared with it (a read) before they are sent;
    // the others are not: without turns, the short ones overtook the long ones.
    // Answers are not held to the usual deadline: long texts take the fake server a while.
    let config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    ws.write(
        "squiggle.toml",
        &format!("diagnostic_timeout_ms = 30000\n{config}"),
    );
    let padding = "\n".repeat(300_000);
    ws.write("a.fake", &format!("ERROR t00\n{padding}"));
    let mut serve = serve(&ws, &[]);
    let texts: Vec<String> = (0..12)
        .map(|i| match i % 2 {
            0 => format!("ERROR t{i:02}\n{padding}"),
            _ => format!("ERROR t{i}\n"),
        })
        .collect();
    // One write, so the service reads them all at once.
    serve.write(&check_requests("a.fake", &texts));
    for (i, text) in texts.iter().enumerate() {
        let answer = serve.answer(i as i64, LIMIT);
        let result = &answer["result"];
        // Each answer belongs to its own text: its error, or not checked because a later text
        // reached the server first; never another text's error.
        match result["outcome"].as_str() {
            Some("diagnostics") => assert_eq!(
                result["diagnostics"][0]["message"],
                format!(
                    "found ERROR: {}",
                    text.trim_start_matches("ERROR ").trim_end()
                ),
                "answer {i}: {answer}"
            ),
            _ => assert!(
                result["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("later change")),
                "answer {i}: {answer}"
            ),
        }
    }
    // Each text by its first line (the rest is padding).
    let first_lines = |texts: &[String]| -> Vec<String> {
        texts
            .iter()
            .map(|t| t.lines().next().unwrap_or("").to_string())
            .collect()
    };
    let received = first_lines(&texts_received(&ws, "a.fake"));
    assert_eq!(
        received,
        first_lines(&texts),
        "the server got the texts in request order"
    );
    serve.request(99, "lsp/shutdown", json!({}));
    assert_eq!(serve.answer(99, LIMIT)["result"], Value::Null);
}

#[test]
fn checks_take_their_turns_in_the_order_their_requests_arrived() {
    // Each request is polled once as it is read, so its check takes its file's turn then.
    // Spawned unpolled, the checks took their turns in the order the runtime first ran them
    // (the request-order test above caught that one run in three; this one, ten in ten). Polled
    // within tokio's task budget, the requests after about the 128th of a burst were not.
    let ws = workspace(&[]);
    ws.write("a.fake", "fine\n");
    let mut serve = serve(&ws, &[]);
    // More requests in one burst than tokio's task budget (128).
    let texts: Vec<String> = (0..200).map(|i| format!("ERROR t{i:03}\n")).collect();
    // One write, so the service reads them all at once.
    serve.write(&check_requests("a.fake", &texts));
    for i in 0..texts.len() {
        serve.answer(i as i64, LIMIT);
    }
    assert_eq!(
        texts_received(&ws, "a.fake"),
        texts,
        "the server got the texts in request order"
    );
    serve.request(99, "lsp/shutdown", json!({}));
    assert_eq!(serve.answer(99, LIMIT)["result"], Value::Null);
}

#[test]
fn a_fifo_named_like_a_source_file_is_refused_and_the_service_goes_on() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    crate::support::mkfifo(&ws.root.join("fifo.fake"));
    let mut serve = serve(&ws, &[]);
    let _hung = crate::support::KillIfPanicking(serve.pid());

    // More than the runtime's two workers, each of which a blocking open() would hold forever.
    serve.request(1, "lsp/checkFile", json!({"filePath": "fifo.fake"}));
    serve.request(2, "lsp/checkFile", json!({"filePath": "fifo.fake"}));
    serve.request(
        3,
        "lsp/checkFile",
        json!({"filePath": "fifo.fake", "text": ""}),
    );
    serve.request(4, "lsp/documentSymbols", json!({"file": "fifo.fake"}));
    serve.request(
        5,
        "lsp/hover",
        json!({"file": "fifo.fake", "line": 1, "character": 1}),
    );
    serve.request(6, "lsp/checkFile", json!({"filePath": "a.fake"}));

    for id in [1, 2, 3] {
        assert_eq!(serve.answer(id, LIMIT)["result"], json!([]), "request {id}");
    }
    for id in [4, 5] {
        let refused = serve.answer(id, LIMIT);
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("fifo.fake: cannot be read: not a regular file (a FIFO)"),
            "request {id}: {refused}"
        );
    }
    assert_eq!(
        serve.answer(6, LIMIT)["result"][0]["message"],
        "found ERROR: x",
        "the service goes on"
    );
    let mut child = serve.close_stdin();
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the service did not exit on EOF");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_all_gone(&ws.server_pids(), "server");
}

#[test]
fn malformed_input_gets_errors_and_the_service_goes_on() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);

    serve.send_raw(b"{not json");
    assert_eq!(serve.next(LIMIT)["error"]["code"], -32700);
    serve.send(json!({"jsonrpc": "2.0", "id": 7}));
    let invalid = serve.next(LIMIT);
    assert_eq!(
        (invalid["id"].clone(), invalid["error"]["code"].clone()),
        (json!(7), json!(-32600))
    );
    serve.request(8, "lsp/nope", json!({}));
    assert_eq!(serve.answer(8, LIMIT)["error"]["code"], -32601);
    serve.request(9, "lsp/checkFile", json!({"path": "a.fake"}));
    let bad_params = serve.answer(9, LIMIT);
    assert_eq!(bad_params["error"]["code"], -32602);
    assert!(bad_params["error"]["message"]
        .as_str()
        .unwrap()
        .contains("filePath"));

    serve.request(10, "lsp/checkFile", json!({"filePath": "a.fake"}));
    assert_eq!(
        serve.answer(10, LIMIT)["result"].as_array().unwrap().len(),
        1,
        "the service goes on"
    );
    serve.request(11, "lsp/checkFile", json!({"filePath": "/etc/hostname"}));
    assert_eq!(
        serve.answer(11, LIMIT)["result"],
        json!([]),
        "outside the root: no diagnostics, no error"
    );
    serve.request(12, "lsp/shutdown", json!({}));
    serve.answer(12, LIMIT);
}

/// A request for the diagnostics epoch, framed: quick to answer, and it starts no server.
fn epoch_request(id: impl Into<Value>) -> Vec<u8> {
    let request = json!({"jsonrpc": "2.0", "id": id.into(), "method": "lsp/getDiagnosticEpoch"});
    encode_frame(request.to_string().as_bytes())
}

/// Bad frames a buggy or hostile host sends; each is followed at once by a valid request, with
/// no newline between (as vscode-jsonrpc writes frames).
const BAD_FRAMES: &[(&str, &[u8])] = &[
    (
        "an invalid length",
        b"Content-Length: abc\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"lsp/status\"}",
    ),
    (
        "a negative length",
        b"Content-Length: -5\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"lsp/status\"}",
    ),
    (
        "an oversized length",
        b"Content-Length: 99999999999999999999\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
    ),
    (
        "a length shorter than the body",
        b"Content-Length: 10\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"lsp/status\"}",
    ),
    (
        "a length longer than the body",
        b"Content-Length: 900\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"lsp/status\"}",
    ),
    (
        "a header block without Content-Length",
        b"Content-Type: application/json\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"lsp/status\"}",
    ),
    ("garbage without a newline", b"hello"),
    ("a JSON message without a frame", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"lsp/status\"}"),
];

#[test]
fn a_bad_frame_gets_one_error_with_id_null_and_the_next_request_is_answered() {
    let ws = workspace(&[]);
    let mut serve = serve(&ws, &[]);

    for (case, (what, bad)) in BAD_FRAMES.iter().enumerate() {
        let id = 100 + case as i64;
        let mut bytes = bad.to_vec();
        bytes.extend(epoch_request(id));
        eprintln!("after {what}");
        serve.write(&bytes);

        let answer = serve.answer(id, LIMIT);
        assert!(answer["result"].is_u64(), "after {what}: {answer}");
        let errors = serve.unclaimed();
        assert_eq!(errors.len(), 1, "one error for {what}: {errors:?}");
        assert_eq!(errors[0]["id"], Value::Null, "{what}");
        assert_eq!(errors[0]["error"]["code"], -32700, "{what}");
    }
    serve.request(1, "lsp/shutdown", json!({}));
    serve.answer(1, LIMIT);
    assert_eq!(serve.wait(LIMIT), Some(0));
}

#[test]
fn a_body_over_64_mib_is_refused_at_its_header_and_streams_past() {
    let ws = workspace(&[]);
    let mut serve = serve(&ws, &[]);
    let len = 64 * 1024 * 1024 + 1;
    serve.write(format!("Content-Length: {len}\r\n\r\n").as_bytes());

    // Refused before a byte of the body is sent.
    let refused = serve.next(LIMIT);
    assert_eq!(refused["id"], Value::Null);
    assert_eq!(refused["error"]["code"], -32700);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("64 MiB"),
        "{refused}"
    );
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"lsp/checkFile","params":{"filePath":"a.fake","text":""#;
    let tail = br#""}}"#;
    let mut body = head.to_vec();
    body.resize(len - tail.len(), b'a');
    body.extend(tail);
    for chunk in body.chunks(1 << 20) {
        serve.write(chunk);
    }
    serve.write(&epoch_request(2));

    assert!(serve.answer(2, LIMIT)["result"].is_u64());
    assert_eq!(
        serve.unclaimed(),
        Vec::<Value>::new(),
        "nothing else answered"
    );
    serve.request(3, "lsp/shutdown", json!({}));
    serve.answer(3, LIMIT);
}

#[test]
fn ids_come_back_byte_for_byte() {
    let ws = workspace(&[]);
    let mut serve = serve(&ws, &[]);

    for (id, method) in [
        ("1180591620717411303424", "lsp/getDiagnosticEpoch"),
        ("-1180591620717411303424", "lsp/nope"),
        (r#""caf\u00e9""#, "lsp/getDiagnosticEpoch"),
        ("1.50", "lsp/getDiagnosticEpoch"),
    ] {
        serve.send_raw(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#).as_bytes());
        let answer = String::from_utf8(serve.next_raw(LIMIT)).unwrap();
        assert!(
            answer.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"#)),
            "id {id}: {answer}"
        );
    }
    serve.request(1, "lsp/shutdown", json!({}));
    serve.answer(1, LIMIT);
}

#[test]
fn a_request_with_a_huge_id_is_cancelled_and_answered_with_that_id() {
    let ws = workspace(&[]);
    let mut serve = serve(&ws, &[]);
    let id = "1180591620717411303424";

    serve.send_raw(
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"lsp/diagnosticsAfter","params":{{"afterEpoch":1000000,"waitMs":600000}}}}"#)
            .as_bytes(),
    );
    serve.send_raw(
        format!(r#"{{"jsonrpc":"2.0","method":"$/cancelRequest","params":{{"id":{id}}}}}"#)
            .as_bytes(),
    );

    let answer = String::from_utf8(serve.next_raw(LIMIT)).unwrap();
    assert_eq!(
        answer,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
    );
    serve.request(1, "lsp/shutdown", json!({}));
    serve.answer(1, LIMIT);
}

#[test]
fn a_server_writing_endless_junk_is_broken_at_once_and_logged_briefly() {
    let ws = FakeWorkspace::new();
    ws.write(
        "squiggle.toml",
        "initialize_timeout_ms = 60000\nfirst_touch_timeout_ms = 60000\n[servers.junk]\ncommand = \"yes\"\nextensions = [\"junk\"]\n",
    );
    ws.write("a.junk", "x\n");
    let mut serve = Serve::start_keeping_logs(&ws.root, &[]);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");

    serve.request(1, "lsp/checkFile", json!({"filePath": "a.junk"}));
    assert_eq!(serve.answer(1, LIMIT)["result"], json!([]));
    serve.request(2, "lsp/status", json!({}));
    let status = serve.answer(2, LIMIT)["result"].clone();
    let junk = status
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "junk")
        .unwrap()
        .clone();
    serve.request(3, "lsp/shutdown", json!({}));
    serve.answer(3, LIMIT);
    serve.wait(LIMIT);

    assert_eq!(junk["status"], "broken", "{junk}");
    assert!(
        junk["reason"].as_str().unwrap().contains("not LSP"),
        "{junk}"
    );
    let logs = serve.stderr();
    assert!(
        logs.lines().count() < 20,
        "{} log lines:\n{}",
        logs.lines().count(),
        &logs[..logs.len().min(4000)]
    );
}

/// Methods a fuzzed message may name (never `lsp/shutdown`).
const FUZZ_METHODS: &[&str] = &[
    "lsp/status",
    "lsp/getDiagnosticEpoch",
    "lsp/diagnostics",
    "lsp/diagnosticsAfter",
    "lsp/checkFile",
    "squiggle/feedback",
    "lsp/hover",
    "lsp/definition",
    "lsp/documentSymbols",
    "lsp/workspaceSymbols",
    "$/cancelRequest",
    "lsp/nope",
];

/// Ids, params and methods (as JSON text) a fuzzed message may carry, odd ones included.
const FUZZ_IDS: &[&str] = &[
    "1",
    "-7",
    "0",
    "1180591620717411303424",
    "1.5",
    "1e400",
    r#""s""#,
    r#""\u0000""#,
    "null",
    "{}",
    "[]",
    "true",
];
const FUZZ_PARAMS: &[&str] = &[
    "null",
    "{}",
    "[]",
    "7",
    r#""x""#,
    r#"{"filePath":"a.fake"}"#,
    r#"{"filePath":"a.fake","text":"ERROR x\n"}"#,
    r#"{"filePath":"/etc/hostname"}"#,
    r#"{"filePath":"","text":5}"#,
    r#"{"filePath":"\u0000"}"#,
    r#"{"afterEpoch":18446744073709551615,"waitMs":18446744073709551615}"#,
    r#"{"afterEpoch":-1}"#,
    r#"{"file":5}"#,
    r#"{"file":"a.fake","line":0,"character":-1}"#,
    r#"{"file":"a.fake","symbol":""}"#,
    r#"{"query":null}"#,
    r#"{"filePath":"a.fake","scope":"nope"}"#,
    r#"{"id":1}"#,
    r#"{"id":"probe-0"}"#,
];

/// A JSON-RPC-like message with random parts.
fn fuzz_message(rng: &mut Rng) -> Vec<u8> {
    let mut members = vec![r#""jsonrpc":"2.0""#.to_string()];
    if rng.below(4) > 0 {
        members.push(format!(r#""id":{}"#, rng.pick(FUZZ_IDS)));
    }
    match rng.below(6) {
        0 => members.push(format!(r#""method":{}"#, rng.pick(FUZZ_IDS))),
        1 => {}
        _ => members.push(format!(r#""method":"{}""#, rng.pick(FUZZ_METHODS))),
    }
    if rng.below(3) > 0 {
        members.push(format!(r#""params":{}"#, rng.pick(FUZZ_PARAMS)));
    }
    if rng.below(8) == 0 {
        members.push(r#""result":null"#.to_string());
    }
    // Shuffle the members.
    for i in (1..members.len()).rev() {
        members.swap(i, rng.below(i + 1));
    }
    format!("{{{}}}", members.join(",")).into_bytes()
}

/// Random edits of `bytes`: flipped, inserted, deleted or repeated bytes, or a cut.
fn mutate(rng: &mut Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    const ALPHABET: &[u8] = b"Content-Length: 0123456789\r\n{}[]\":,-\\ ax\x00\xff";
    for _ in 0..=rng.below(3) {
        if bytes.is_empty() {
            break;
        }
        let at = rng.below(bytes.len());
        match rng.below(5) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes.insert(at, *rng.pick(ALPHABET)),
            2 => {
                bytes.remove(at);
            }
            3 => bytes.truncate(at),
            _ => {
                let end = (at + rng.below(12)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
        }
    }
    bytes
}

/// What comes before a probe: a fuzzed message, framed well or badly, or junk.
fn fuzz_input(rng: &mut Rng) -> Vec<u8> {
    let message = fuzz_message(rng);
    match rng.below(6) {
        0 | 1 => encode_frame(&message),
        2 => encode_frame(&mutate(rng, message)),
        3 => mutate(rng, encode_frame(&message)),
        4 => {
            let len = rng.below(message.len() * 2 + 1);
            let mut frame = format!("Content-Length: {len}\r\n\r\n").into_bytes();
            frame.extend(message);
            frame
        }
        _ => (0..rng.below(64)).map(|_| rng.next_u64() as u8).collect(),
    }
}

#[test]
fn random_and_mutated_messages_never_cost_the_request_after_them() {
    // Another seed: SQUIGGLE_FUZZ_SEED=<n> cargo test -p squiggle-tests --test it serve::random
    let seed = std::env::var("SQUIGGLE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let mut rng = Rng::new(seed);
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = Serve::start_keeping_logs(&ws.root, &[]);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");

    for case in 0..1000 {
        let input = fuzz_input(&mut rng);
        let probe = format!("probe-{case}");
        let mut bytes = input.clone();
        bytes.extend(epoch_request(probe.as_str()));
        let cut = rng.below(bytes.len());
        serve.write(&bytes[..cut]);
        serve.write(&bytes[cut..]);

        eprintln!("case {case}: {:?}", String::from_utf8_lossy(&input));
        // Read as bytes: an odd id such as 1e400 comes back as sent, which serde_json refuses.
        let deadline = Instant::now() + LIMIT;
        let answer = loop {
            let frame = serve.next_raw(deadline.saturating_duration_since(Instant::now()));
            let frame = String::from_utf8(frame).unwrap();
            assert!(
                frame.starts_with(r#"{"jsonrpc":"2.0","#),
                "case {case}: {frame}"
            );
            if frame.contains(&format!(r#""id":"{probe}""#)) {
                break frame;
            }
        };
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert!(answer["result"].is_u64(), "case {case}: {answer}");
    }
    serve.request(1, "lsp/shutdown", json!({}));
    // Answers to the fuzz's own requests may still be on their way, some with ids serde_json
    // refuses (1e400): read them as bytes until the shutdown's answer.
    let deadline = Instant::now() + LIMIT;
    loop {
        let frame = serve.next_raw(deadline.saturating_duration_since(Instant::now()));
        assert!(frame.starts_with(br#"{"jsonrpc":"2.0","#), "{frame:?}");
        let frame: Option<Value> = serde_json::from_slice(&frame).ok();
        if frame.is_some_and(|frame| frame["id"] == 1) {
            break;
        }
    }
    assert_eq!(serve.wait(LIMIT), Some(0));
    let logs = serve.stderr();
    assert!(!logs.contains("panicked"), "{logs}");
}

#[test]
fn cancel_ends_a_wait_early_with_what_is_known() {
    let ws = FakeWorkspace::new();
    let script = ws.script(&json!({"publish_delay_ms": 60000}));
    ws.write(
        "squiggle.toml",
        &format!(
            "diagnostic_timeout_ms = 60000\nfirst_touch_timeout_ms = 60000\n[servers.fake]\ncommand = {:?}\nargs = [\"--script\", {:?}]\nextensions = [\"fake\"]\n",
            fake_lsp_bin().display().to_string(),
            script.display().to_string()
        ),
    );
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);

    let started = Instant::now();
    serve.request(1, "lsp/checkFile", json!({"filePath": "a.fake"}));
    serve.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}));
    let answer = serve.answer(1, LIMIT);

    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cancel ended the 60 s wait"
    );
    assert_eq!(
        answer["result"],
        json!([]),
        "what is known so far, not an error"
    );
    serve.request(5, "squiggle/checkFile", json!({"filePath": "a.fake"}));
    serve.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 5}}));
    assert_eq!(
        serve.answer(5, LIMIT)["result"],
        json!({"diagnostics": [], "outcome": "not_checked", "servers": [],
               "reason": "the request was cancelled before its servers answered"}),
        "a cancelled check is not a clean one"
    );
    serve.request(2, "lsp/getDiagnosticEpoch", json!({}));
    serve.request(
        3,
        "lsp/diagnosticsAfter",
        json!({"afterEpoch": 1_000_000, "waitMs": 100}),
    );
    assert!(serve.answer(2, LIMIT)["result"].is_u64());
    assert_eq!(
        serve.answer(3, LIMIT)["result"],
        json!({}),
        "diagnosticsAfter returns after waitMs"
    );
    serve.request(4, "lsp/shutdown", json!({}));
    serve.answer(4, LIMIT);
}

#[test]
fn status_covers_every_server_sorted_and_lsp_false_says_so() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);
    serve.request(1, "lsp/checkFile", json!({"filePath": "a.fake"}));
    serve.answer(1, LIMIT);
    serve.request(2, "lsp/status", json!({}));
    let status = serve.answer(2, LIMIT)["result"].as_array().unwrap().clone();
    let ids: Vec<&str> = status.iter().map(|s| s["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    for id in [
        "basedpyright",
        "eslint",
        "fake",
        "pyright",
        "ruff",
        "rust-analyzer",
        "typescript",
    ] {
        assert!(ids.contains(&id), "{id} listed");
    }
    let fake = status.iter().find(|s| s["id"] == "fake").unwrap();
    assert_eq!(fake["status"], "active");
    assert_eq!(
        fake["serverPid"].as_u64(),
        Some(u64::from(ws.server_pids()[0]))
    );
    serve.request(3, "lsp/shutdown", json!({}));
    serve.answer(3, LIMIT);

    let off = FakeWorkspace::new();
    let mut serve = serve_with_bootstrap(&off, json!({"workspaceRoot": off.root, "config": false}));
    serve.request(1, "lsp/status", json!({}));
    let status = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(status.as_array().unwrap().len(), 1);
    assert_eq!(status[0]["reason"], "LSP disabled by configuration");
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);
}

#[test]
fn status_probes_a_found_command_that_does_not_run_and_a_check_reports_it_broken() {
    let ws = workspace(&[]);
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    config.push_str(&format!(
        "[servers.fake-fallback]\ncommand = {:?}\nargs = []\nextensions = [\"fake\"]\nfallback_for = \"fake\"\n",
        fake_lsp_bin().display().to_string()
    ));
    ws.write("squiggle.toml", &config);
    ws.write("src/main.rs", "fn main() {}\n");
    // A shim in front of PATH, like rustup's proxy without the rust-analyzer component.
    let bin = ws.root.parent().unwrap().join("bin");
    let message = "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.";
    let shim = crate::support::broken_shim(&bin, "rust-analyzer", message);
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&path_with_servers())),
    )
    .unwrap();
    let mut serve = serve(&ws, &[("PATH", path.to_str().unwrap())]);
    let status_of = |serve: &mut Serve, id: i64, server: &str| {
        serve.request(id, "lsp/status", json!({}));
        let status = serve.answer(id, LIMIT)["result"].clone();
        let entry = status
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == server)
            .cloned();
        let entry = entry.unwrap();
        (entry["status"].clone(), entry["reason"].clone())
    };
    let does_not_run = format!(
        "`rust-analyzer` ({}) is found but does not run: `rust-analyzer --version` exited with status 1: {message} (install: rustup component add rust-analyzer)",
        shim.display()
    );

    let before = status_of(&mut serve, 1, "rust-analyzer");
    let fallback = status_of(&mut serve, 2, "fake-fallback");
    serve.request(3, "lsp/checkFile", json!({"filePath": "src/main.rs"}));
    let checked = serve.answer(3, LIMIT)["result"].clone();
    let after = status_of(&mut serve, 4, "rust-analyzer");

    assert_eq!(before, (json!("unavailable"), json!(does_not_run)));
    assert_eq!(
        fallback,
        (
            json!("disabled"),
            json!("fallback, not needed: fake is installed")
        )
    );
    assert_eq!(checked, json!([]));
    assert_eq!(
        after,
        (
            json!("broken"),
            json!(format!("the server exited (exit status: 1): {message}"))
        ),
        "a check starts a found command and reports it broken with its own output"
    );
    let calls = crate::support::shim_calls(&shim);
    assert_eq!(calls[0], "--version", "probed once, by status: {calls:?}");
    assert!(
        calls.len() > 1 && calls[1..].iter().all(|call| call != "--version"),
        "started by the check, not probed again: {calls:?}"
    );
    serve.request(5, "lsp/shutdown", json!({}));
    serve.answer(5, LIMIT);
}

fn serve_with_bootstrap(ws: &FakeWorkspace, bootstrap: Value) -> Serve {
    let serve = Serve::start(&ws.root, &[("LSP_BOOTSTRAP", &bootstrap.to_string())]);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");
    serve
}

#[test]
fn feedback_returns_the_text_a_tool_appends() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);
    serve.request(
        1,
        "squiggle/feedback",
        json!({"filePath": "a.fake", "text": "ERROR y\n", "scope": "edit"}),
    );
    let result = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(
        result["text"],
        "\nLSP errors detected in this file, please fix:\n<diagnostics file=\"a.fake\">\nERROR [1:1] found ERROR: y (E1)\n</diagnostics>"
    );
    assert_eq!(result["diagnostics"][0]["message"], "found ERROR: y");
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);
}

/// A workspace like `workspace(&[])` that also has a server for `.nope` files whose command is
/// not installed.
fn workspace_with_a_missing_server() -> FakeWorkspace {
    let ws = workspace(&[]);
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    config.push_str("[servers.missing]\ncommand = \"squiggle-no-such-server\"\nextensions = [\"nope\"]\ninstall_hint = \"pip install nope\"\n");
    ws.write("squiggle.toml", &config);
    ws
}

const MISSING: &str =
    "missing: `squiggle-no-such-server` is not installed (install: pip install nope)";

#[test]
fn squiggle_check_file_says_whether_the_file_was_checked_and_why_not() {
    let ws = workspace_with_a_missing_server();
    ws.write("a.fake", "ERROR x <y>\n");
    ws.write("clean.fake", "fine\n");
    ws.write("b.nope", "ERROR x\n");
    let mut serve = serve(&ws, &[]);

    serve.request(1, "squiggle/checkFile", json!({"filePath": "a.fake"}));
    serve.request(2, "squiggle/checkFile", json!({"filePath": "clean.fake"}));
    serve.request(3, "squiggle/checkFile", json!({"filePath": "b.nope"}));
    serve.request(
        4,
        "squiggle/checkFile",
        json!({"filePath": "/etc/hostname"}),
    );
    serve.request(5, "lsp/checkFile", json!({"filePath": "b.nope"}));

    assert_eq!(
        serve.answer(1, LIMIT)["result"],
        json!({
            "diagnostics": [{"file": "a.fake", "line": 1, "character": 1, "severity": "error",
                             "message": "found ERROR: x &lt;y&gt;", "code": "E1", "source": "fake"}],
            "outcome": "diagnostics",
            "reason": null,
            "servers": [{"id": "fake", "root": ".", "status": "active", "reason": null,
                         "basis": "version"}]
        })
    );
    let clean = serve.answer(2, LIMIT)["result"].clone();
    assert_eq!(
        (clean["outcome"].clone(), clean["reason"].clone()),
        (json!("clean"), Value::Null)
    );
    assert_eq!(
        serve.answer(3, LIMIT)["result"],
        json!({
            "diagnostics": [],
            "outcome": "not_checked",
            "reason": MISSING,
            "servers": [{"id": "missing", "root": ".", "status": "unavailable",
                         "reason": "`squiggle-no-such-server` is not installed (install: pip install nope)"}]
        })
    );
    let outside = serve.answer(4, LIMIT)["result"].clone();
    assert_eq!(
        (outside["outcome"].clone(), outside["reason"].clone()),
        (json!("not_checked"), json!("outside the workspace root"))
    );
    assert_eq!(
        serve.answer(5, LIMIT)["result"],
        json!([]),
        "lsp/checkFile keeps its array"
    );
    serve.request(6, "lsp/shutdown", json!({}));
    serve.answer(6, LIMIT);
}

#[test]
fn feedback_on_a_file_not_checked_says_so_and_why() {
    let ws = workspace_with_a_missing_server();
    ws.write("b.nope", "ERROR x\n");
    ws.write("a.fake", "fine\n");
    let mut serve = serve(&ws, &[]);

    serve.request(
        1,
        "squiggle/feedback",
        json!({"filePath": "b.nope", "scope": "edit"}),
    );
    serve.request(
        2,
        "squiggle/feedback",
        json!({"filePath": "a.fake", "scope": "write"}),
    );

    assert_eq!(
        serve.answer(1, LIMIT)["result"],
        json!({
            "text": format!("\nLSP did not check b.nope, so its errors are unknown: {MISSING}"),
            "diagnostics": [],
            "outcome": "not_checked",
            "reason": MISSING
        })
    );
    assert_eq!(
        serve.answer(2, LIMIT)["result"],
        json!({"text": "", "diagnostics": [], "outcome": "clean", "reason": null})
    );
    serve.request(3, "lsp/shutdown", json!({}));
    serve.answer(3, LIMIT);
}

/// Starts a service with a grandchild-spawning server and returns it with the pids to watch.
fn serving_with_grandchild() -> (FakeWorkspace, Serve, Vec<u32>) {
    let ws = workspace(&["--scenario", "grandchild"]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);
    serve.request(1, "lsp/checkFile", json!({"filePath": "a.fake"}));
    assert_eq!(
        serve.answer(1, LIMIT)["result"].as_array().unwrap().len(),
        1
    );
    let pids: Vec<u32> = ws
        .server_pids()
        .into_iter()
        .chain(ws.grandchild_pids())
        .collect();
    assert_eq!(pids.len(), 2);
    (ws, serve, pids)
}

#[test]
fn shutdown_leaves_nothing_running() {
    let (_ws, mut serve, pids) = serving_with_grandchild();
    serve.request(2, "lsp/shutdown", json!({}));
    assert_eq!(serve.answer(2, LIMIT)["result"], Value::Null);
    assert_all_gone(&pids, "server and grandchild");
    assert_eq!(serve.wait(LIMIT), Some(0));
}

#[test]
fn closing_stdin_stops_the_service_and_its_servers() {
    let (_ws, serve, pids) = serving_with_grandchild();
    let mut child = serve.close_stdin();
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the service exits when stdin closes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_all_gone(&pids, "server and grandchild");
}

#[test]
fn sigterm_stops_the_service_and_its_servers() {
    let (_ws, mut serve, pids) = serving_with_grandchild();
    serve.signal(libc::SIGTERM);
    assert_eq!(serve.wait(LIMIT), Some(0));
    assert_all_gone(&pids, "server and grandchild");
}

#[test]
fn sigkill_leaves_no_server_and_no_grandchild() {
    let (_ws, mut serve, pids) = serving_with_grandchild();
    serve.signal(libc::SIGKILL);
    assert_eq!(serve.wait(LIMIT), None, "killed by the signal");
    assert_all_gone(&pids, "server and grandchild");
}

#[test]
fn a_typescript_host_drives_it_with_vscode_jsonrpc() {
    require_server("pyright-langserver", "npm install pyright");
    require_server("ruff", "pip install ruff");
    let node_modules = installed_server_dirs()[0].parent().unwrap().to_path_buf();
    assert!(
        node_modules.join("vscode-jsonrpc").is_dir(),
        "vscode-jsonrpc is not installed: run `cargo xtask install-servers`"
    );
    let (_dir, project) = fixture("python");
    let script = crate::support::repo_root().join("tests/node/serve-interop.cjs");

    let output = std::process::Command::new("node")
        .arg(script)
        .env("SQUIGGLE_BIN", squiggle_bin())
        .env("PROJECT", &project)
        .env("NODE_MODULES", &node_modules)
        .env("PATH", path_with_servers())
        .output()
        .unwrap();

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for step in [
        "ready",
        "checkFile",
        "epochs and diagnosticsAfter",
        "status",
        "cancel",
        "unknown method",
        "shutdown",
    ] {
        assert!(
            stdout.contains(&format!("ok {step}")),
            "step {step}:\n{stdout}"
        );
    }
    crate::support::assert_no_process_in(&project);
}

#[test]
fn squiggle_restart_brings_back_a_server_held_broken_after_a_crash_loop() {
    let ws = FakeWorkspace::new();
    ws.write("a.fake", "ERROR x\n");
    // The first two processes crash at initialize (the start, then the automatic restart after
    // the cooldown: a crash loop); the third works.
    let count = ws.root.parent().unwrap().join("starts");
    let script = format!(
        "n=$(cat {count} 2>/dev/null || echo 0); echo $((n+1)) > {count}; if [ $n -lt 2 ]; then exec {fake_lsp} --scenario crash-on-init; else exec {fake_lsp}; fi",
        count = count.display(),
        fake_lsp = fake_lsp_bin().display(),
    );
    let config = format!(
        "settle_ms = 20\nrestart_cooldown_ms = 200\n[servers.fake]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {:?}, FAKE_LSP_LOG = {:?} }}\n",
        ws.pids.display().to_string(),
        ws.log.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    let mut serve = serve(&ws, &[]);

    serve.request(1, "squiggle/checkFile", json!({"filePath": "a.fake"}));
    let first = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(first["outcome"], "not_checked", "{first}");
    let deadline = Instant::now() + LIMIT;
    let mut id = 100;
    let held = loop {
        id += 1;
        serve.request(id, "lsp/status", json!({}));
        let status = serve.answer(id, LIMIT)["result"].clone();
        let fake = status
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == "fake")
            .unwrap()
            .clone();
        let reason = fake["reason"].as_str().unwrap_or_default().to_string();
        if reason.contains("not restarted automatically") {
            break fake;
        }
        assert!(Instant::now() < deadline, "never held: {fake}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(held["status"], "broken");
    assert_eq!(ws.server_pids().len(), 2);

    // Refused (saying how long is left) until the cooldown since the last crash has passed.
    let restarted = loop {
        id += 1;
        serve.request(id, "squiggle/restart", json!({"serverId": "fake"}));
        let restarted = serve.answer(id, LIMIT)["result"].clone();
        if restarted[0]["status"] != "broken" {
            break restarted;
        }
        let reason = restarted[0]["reason"].as_str().unwrap();
        assert!(
            reason.contains("not restarted yet: its restart cooldown ends in"),
            "{reason}"
        );
        assert!(Instant::now() < deadline, "never restarted: {restarted}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let pid = ws.server_pids().into_iter().max().unwrap();
    assert_eq!(
        restarted,
        json!([{"id": "fake", "root": ".", "status": "active", "serverPid": pid}])
    );
    serve.request(3, "lsp/checkFile", json!({"filePath": "a.fake"}));
    assert_eq!(
        serve.answer(3, LIMIT)["result"][0]["message"],
        "found ERROR: x"
    );
    // Nothing broken: nothing to do, and the answer says what runs.
    serve.request(4, "squiggle/restart", json!({}));
    assert_eq!(serve.answer(4, LIMIT)["result"], restarted);
    serve.request(5, "squiggle/restart", json!({"serverId": "nope"}));
    let unknown = serve.answer(5, LIMIT);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(
        unknown["error"]["message"],
        "no server `nope` is configured"
    );
    assert_eq!(ws.server_pids().len(), 3);
    serve.request(6, "lsp/shutdown", json!({}));
    serve.answer(6, LIMIT);
}

#[test]
fn what_an_edit_broke_found_after_its_answer_is_a_notification_and_in_the_next_answer_once() {
    // src/b.ts imports alpha from src/a.ts; the fake server pulls, b.ts's fourth pull (by the
    // search after the edit's answer) taking 1 s: the answer has no time for it.
    let ws = FakeWorkspace::new();
    let script =
        ws.script(&json!({"pull": true, "diagnose_on": [], "pull_busy_ms": [0, 0, 0, 1000]}));
    let config = format!(
        "settle_ms = 20\n[servers.fake]\ncommand = {:?}\nargs = [\"--script\", {:?}]\nextensions = [\"ts\"]\nenv = {{ FAKE_LSP_LOG = {:?} }}\n",
        fake_lsp_bin().display().to_string(),
        script.display().to_string(),
        ws.log.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    let a = ws.write(
        "src/a.ts",
        "export const alpha = 1;\nexport const beta = 2;\n",
    );
    ws.write(
        "src/b.ts",
        "import { alpha } from './a';\n// NEEDS src/a.ts alpha\n// ERROR from before\n",
    );
    ws.write("src/c.ts", "export const gamma = 3;\n");
    let mut serve = serve(&ws, &[]);
    serve.request(1, "squiggle/checkFile", json!({"filePath": "src/b.ts"}));
    assert_eq!(serve.answer(1, LIMIT)["result"]["outcome"], "diagnostics");
    serve.request(2, "squiggle/checkFile", json!({"filePath": "src/a.ts"}));
    assert_eq!(serve.answer(2, LIMIT)["result"]["outcome"], "clean");

    std::fs::write(&a, "export const beta = 2;\n").unwrap();
    serve.request(
        3,
        "squiggle/feedback",
        json!({"filePath": "src/a.ts", "scope": "edit"}),
    );
    let answer = serve.answer(3, LIMIT)["result"]["text"].clone();
    assert_eq!(
        answer,
        "\nLSP goes on checking 1 other file that imports src/a.ts: squiggle will tell you if this edit broke them.",
    );

    // The notification, once the search after the answer found b.ts broken.
    let deadline = Instant::now() + Duration::from_secs(30);
    let note = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = serve.next(left);
        if frame["method"] == "squiggle/causedElsewhere" {
            break frame;
        }
    };
    assert_eq!(note["params"]["edited"], "src/a.ts", "{note}");
    let b = note["params"]["files"]["src/b.ts"].as_array().cloned();
    let b = b.unwrap_or_else(|| panic!("{note}"));
    let messages: Vec<&str> = b.iter().filter_map(|d| d["message"].as_str()).collect();
    assert!(messages.contains(&"src/a.ts has no alpha"), "{note}");
    assert!(
        !messages.iter().any(|m| m.contains("from before")),
        "only the edit's errors, not the one from before: {note}"
    );

    // The next tool result the agent gets tells it too, once (a tool's, then a feedback's).
    serve.request(
        4,
        "squiggle/implementation",
        json!({"file": "src/c.ts", "line": 1, "character": 14}),
    );
    let tool = serve.answer(4, LIMIT)["result"]["text"].clone();
    let header = "LSP errors your earlier edit of src/a.ts caused in other files:\n<diagnostics file=\"src/b.ts\">";
    assert!(tool.as_str().unwrap().contains(header), "{tool}");
    std::fs::write(ws.root.join("src/c.ts"), "export const gamma = 4;\n").unwrap();
    serve.request(
        5,
        "squiggle/feedback",
        json!({"filePath": "src/c.ts", "scope": "edit"}),
    );
    let next = serve.answer(5, LIMIT)["result"]["text"].clone();
    assert!(
        !next.as_str().unwrap().contains("earlier edit"),
        "told already: {next}"
    );
    serve.request(6, "lsp/shutdown", json!({}));
    serve.answer(6, LIMIT);
}
