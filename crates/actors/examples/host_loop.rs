//! A tick-driven host using `LspManager`: the shape of a TUI's main loop.
//!
//! ```sh
//! cargo run -p squiggle-actors --example host_loop -- examples/demo/app.py
//! ```
//!
//! It "edits" each file given (sends its text as a change), then ticks 30 times a second,
//! draining at most 32 events per tick, and prints what a problems panel would show.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use squiggle_actors::{LspEvent, LspManager};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let Some(first) = files.first() else {
        return Err("usage: host_loop FILE...".into());
    };
    let first = std::fs::canonicalize(first)?;
    let root = squiggle_config::find_workspace_root(first.parent().unwrap_or(&first));
    let config =
        squiggle_config::Config::load(&root, squiggle_config::user_config_path().as_deref())?;

    let mut lsp = LspManager::new(config)?;
    lsp.ensure_started(&root);
    for file in &files {
        // What an agent's edit tool does after writing a file: fire and forget.
        lsp.notify_file_changed(file, std::fs::read_to_string(file)?);
    }

    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) {
        // One tick: never blocks, handles at most 32 events.
        for event in lsp.poll_events(32) {
            match event {
                LspEvent::Status {
                    server,
                    root,
                    state,
                    reason,
                } => {
                    println!(
                        "[{:>5} ms] {server} ({root}): {state} {}",
                        started.elapsed().as_millis(),
                        reason.unwrap_or_default()
                    );
                }
                LspEvent::Diagnostics { path, items } => {
                    println!(
                        "[{:>5} ms] {path}: {} diagnostics",
                        started.elapsed().as_millis(),
                        items.len()
                    );
                }
                LspEvent::Caused { edited, files } => {
                    let files: Vec<String> = files.into_keys().collect();
                    println!("your edit of {edited} broke {}", files.join(", "));
                }
            }
        }
        if lsp.wait_for_settle(&files, Duration::ZERO) {
            let snapshot = lsp.snapshot();
            println!(
                "settled: {} errors, {} warnings",
                snapshot.total_errors, snapshot.total_warnings
            );
            for (file, items) in &snapshot.by_file {
                for d in items {
                    println!(
                        "  {file}:{}:{} {} {}",
                        d.line, d.column, d.severity, d.message
                    );
                }
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(33));
    }
    lsp.shutdown();
    Ok(())
}
