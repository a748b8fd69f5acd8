//! Micro-benchmarks of squiggle-protocol's hot paths: framing, conversion, merging, rendering.
//!
//! Run with `cargo bench -p squiggle-protocol --bench throughput`.

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, Bencher};
use lsp_types::{
    DiagnosticSeverity, NumberOrString, Position, PublishDiagnosticsParams, Range, Url,
};
use squiggle_protocol::render::llm::render_llm;
use squiggle_protocol::{
    convert_diagnostics, encode_frame, merge, Diagnostic, FrameGuard, PositionEncoding, Report,
    Severity,
};

fn main() {
    divan::main();
}

/// Messages as servers write them: some with `<`, `&` or line breaks to escape or collapse.
const MESSAGES: [&str; 4] = [
    "mismatched types: expected `Vec<String>`, found `&str`",
    "unused variable: `handle`\nhelp: prefix it with `_`",
    "cannot borrow `self.buffer` as mutable more than once",
    "Argument of type \"int | None\" is not assignable to \"int\"",
];

/// The `i`th of a family of realistic LSP diagnostics on a file of `lines` lines.
fn lsp_diagnostic(i: usize, lines: usize) -> lsp_types::Diagnostic {
    let line = ((i * 37) % lines) as u32;
    let character = 12 + (i % 24) as u32;
    lsp_types::Diagnostic {
        range: Range::new(
            Position::new(line, character),
            Position::new(line, character + 6),
        ),
        severity: Some([DiagnosticSeverity::ERROR, DiagnosticSeverity::WARNING][i % 2]),
        code: Some(NumberOrString::String(format!("E{:04}", 300 + i % 50))),
        source: Some("rustc".to_string()),
        message: MESSAGES[i % MESSAGES.len()].to_string(),
        ..Default::default()
    }
}

/// The `n`th publishDiagnostics notification body: ~2 KiB of JSON with 10 diagnostics.
fn publish_diagnostics_body(n: usize) -> Vec<u8> {
    let uri = format!("file:///home/dev/project/src/module_{n:04}.rs");
    let params = PublishDiagnosticsParams {
        uri: Url::parse(&uri).expect("valid file URI"),
        diagnostics: (0..10).map(|i| lsp_diagnostic(n * 10 + i, 2_000)).collect(),
        version: Some(n as i32),
    };
    serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "method": "textDocument/publishDiagnostics",
        "params": params,
    }))
    .expect("serialisable notification")
}

/// A ~1 MiB stream of publishDiagnostics frames, with a log line before every 10th frame when
/// `garbage`; returns the stream and how many frames it holds.
fn frame_stream(garbage: bool) -> (Vec<u8>, usize) {
    let mut stream = Vec::new();
    let mut frames = 0;
    while stream.len() < 1 << 20 {
        if garbage && frames % 10 == 0 {
            stream.extend_from_slice(
                b"[WARN rust_analyzer] slow request textDocument/diagnostic took 1.2s\n",
            );
        }
        stream.extend(encode_frame(&publish_diagnostics_body(frames)));
        frames += 1;
    }
    (stream, frames)
}

/// Feeds `stream` to a fresh guard in 64 KiB chunks; returns (frames delivered, pieces skipped).
fn parse_stream(stream: &[u8]) -> (usize, u64) {
    let mut guard = FrameGuard::new();
    let mut frames = 0;
    for chunk in stream.chunks(64 * 1024) {
        guard.push(chunk);
        while let Some(body) = guard.next_frame() {
            black_box(body);
            frames += 1;
        }
    }
    (frames, guard.skipped())
}

fn bench_frame_guard(bencher: Bencher, garbage: bool) {
    let (stream, frames) = frame_stream(garbage);
    let garbage_lines = if garbage {
        frames.div_ceil(10) as u64
    } else {
        0
    };
    assert_eq!(parse_stream(&stream), (frames, garbage_lines));
    bencher
        .counter(BytesCount::of_slice(&stream))
        .bench(|| parse_stream(black_box(&stream)));
}

#[divan::bench]
fn frame_guard(bencher: Bencher) {
    bench_frame_guard(bencher, false);
}

#[divan::bench]
fn frame_guard_with_garbage(bencher: Bencher) {
    bench_frame_guard(bencher, true);
}

/// 5,000 lines of source with accents, CJK and emoji before the diagnostics' columns.
fn non_ascii_text() -> String {
    (0..5_000)
        .map(|i| format!("    let grüße_{i} = \"😀 中文 {i}\"; // naïve café\n"))
        .collect()
}

#[divan::bench]
fn convert(bencher: Bencher) {
    let text = non_ascii_text();
    let diags: Vec<_> = (0..1_000).map(|i| lsp_diagnostic(i, 5_000)).collect();
    bencher
        .counter(ItemsCount::new(diags.len()))
        .with_inputs(|| diags.clone())
        .bench_local_values(|diags| {
            convert_diagnostics(
                black_box(diags),
                "src/main.rs",
                Some(black_box(&text)),
                PositionEncoding::Utf16,
            )
        });
}

/// The `i`th of a family of squiggle diagnostics spread over 50 files.
fn diagnostic(i: usize) -> Diagnostic {
    let line = ((i * 7_919) % 3_000 + 1) as u32;
    let column = (i % 80 + 1) as u32;
    Diagnostic {
        file: format!("src/module_{:02}.rs", i % 50),
        line,
        column,
        end_line: line,
        end_column: column + 5,
        severity: [Severity::Error, Severity::Warning, Severity::Hint][i % 3],
        message: format!("{} ({i})", MESSAGES[i % MESSAGES.len()]),
        code: Some(format!("E{:04}", i % 500)),
        source: Some("rustc".to_string()),
        also: Vec::new(),
    }
}

/// 4 lists of 2,500: each has 1,875 diagnostics of its own and repeats 625 of the next list's
/// (with another severity and source), so 25% of the 10,000 are duplicates.
fn merge_lists() -> Vec<Vec<Diagnostic>> {
    const OWN: usize = 1_875;
    const SHARED: usize = 625;
    (0..4)
        .map(|list| {
            let own = (list * OWN..(list + 1) * OWN).map(diagnostic);
            let next = (list + 1) % 4;
            let shared = (next * OWN..next * OWN + SHARED).map(|i| Diagnostic {
                severity: Severity::Info,
                source: Some("clippy".to_string()),
                ..diagnostic(i)
            });
            own.chain(shared).collect()
        })
        .collect()
}

#[divan::bench]
fn merge(bencher: Bencher) {
    let lists = merge_lists();
    let total: usize = lists.iter().map(Vec::len).sum();
    assert_eq!(total, 10_000);
    assert_eq!(merge::merge(lists.iter().flatten()).len(), 7_500);
    bencher
        .counter(ItemsCount::new(total))
        .bench(|| merge::merge(lists.iter().flatten()));
}

#[divan::bench(name = "render_llm")]
fn render_llm_report(bencher: Bencher) {
    let mut report = Report::default();
    for file in 0..100 {
        let diags = (0..20)
            .map(|i| Diagnostic {
                file: format!("src/module_{file:03}.rs"),
                ..diagnostic(file * 20 + i)
            })
            .collect();
        report
            .files
            .insert(format!("src/module_{file:03}.rs"), diags);
    }
    assert_eq!(report.diagnostic_count(), 2_000);
    bencher
        .counter(ItemsCount::new(report.diagnostic_count()))
        .bench(|| render_llm(black_box(&report), 20));
}
