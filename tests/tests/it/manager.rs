//! The tick-driven adapter: coalescing, polling with a budget, dropping the oldest events,
//! never blocking, and a clean shutdown.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{assert_all_gone, wait_until, FakeWorkspace};
use squiggle_actors::{LspEvent, LspManager, ServerState, Severity};

/// A manager with the one fake server, started on the workspace.
fn started(ws: &FakeWorkspace) -> LspManager {
    let manager = LspManager::new(ws.config(vec![ws.server("fake", &[])])).unwrap();
    manager.ensure_started(&ws.root);
    manager
}

/// [`started`], then `file` changed to `text` and its diagnostics settled.
fn settled(ws: &FakeWorkspace, file: &Path, text: &str) -> LspManager {
    let manager = started(ws);
    manager.notify_file_changed(file, text);
    assert!(manager.wait_for_settle(&[file], Duration::from_secs(10)));
    manager
}

/// Shuts the manager down and asserts that its servers are gone.
fn shut_down(mut manager: LspManager, ws: &FakeWorkspace) {
    let pids = ws.server_pids();
    manager.shutdown();
    assert_all_gone(&pids, "server");
}

#[test]
fn changes_within_the_coalescing_time_are_sent_once_with_the_newest_text() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "");
    let manager = started(&ws);

    for i in 1..=5 {
        manager.notify_file_changed(&file, format!("draft {i}\n"));
    }
    manager.notify_file_changed(&file, "ok\nERROR final\nWARNING hmm\n");
    assert!(manager.wait_for_settle(&[&file], Duration::from_secs(10)));

    let opens = ws.received("textDocument/didOpen");
    assert_eq!(opens.len(), 1, "one didOpen for six changes");
    assert_eq!(
        opens[0]["params"]["textDocument"]["text"],
        "ok\nERROR final\nWARNING hmm\n"
    );
    assert!(ws.received("textDocument/didChange").is_empty());
    let snapshot = manager.snapshot();
    assert_eq!((snapshot.total_errors, snapshot.total_warnings), (1, 1));
    assert_eq!(snapshot.by_file.len(), 1);
    let severities: Vec<Severity> = snapshot.by_file[0].1.iter().map(|d| d.severity).collect();
    assert_eq!(
        severities,
        vec![Severity::Error, Severity::Warning],
        "errors first"
    );

    shut_down(manager, &ws);
}

#[test]
fn events_are_polled_within_the_budget_in_order() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut manager = settled(&ws, &file, "ERROR x\n");

    let first = manager.poll_events(1);
    let rest = manager.poll_events(100);

    assert_eq!(first.len(), 1);
    assert!(
        matches!(
            &first[0],
            LspEvent::Status {
                state: ServerState::Starting,
                ..
            }
        ),
        "{first:?}"
    );
    assert!(
        matches!(
            &rest[0],
            LspEvent::Status {
                state: ServerState::Active,
                ..
            }
        ),
        "{rest:?}"
    );
    assert!(rest.iter().any(|e| matches!(e, LspEvent::Diagnostics { path, items } if path == "a.fake" && items.len() == 1)));
    assert!(manager.poll_events(100).is_empty());
    manager.shutdown();
}

#[test]
fn the_oldest_events_are_dropped_beyond_256() {
    let ws = FakeWorkspace::new();
    let files: Vec<_> = (0..300)
        .map(|i| ws.write(&format!("f{i:03}.fake"), ""))
        .collect();
    let mut manager = started(&ws);
    for file in &files {
        manager.notify_file_changed(file, "ERROR x\n");
    }
    assert!(manager.wait_for_settle(&files, Duration::from_secs(60)));
    assert!(wait_until(Duration::from_secs(5), || manager
        .snapshot()
        .by_file
        .len()
        == 300));

    let events = manager.poll_events(1_000);

    assert_eq!(events.len(), 256);
    assert!(
        !events.iter().any(|e| matches!(
            e,
            LspEvent::Status {
                state: ServerState::Starting,
                ..
            }
        )),
        "the oldest went first"
    );
    assert_eq!(
        manager.snapshot().total_errors,
        300,
        "the snapshot keeps everything"
    );
    manager.shutdown();
}

#[test]
fn a_save_notified_while_its_change_waits_goes_out_with_the_change() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR on disk\n");
    let mut manager = started(&ws);

    // The host's text is not byte for byte what the disk holds (line endings, say), but the
    // host says it saved it: its word counts.
    manager.notify_file_changed(&file, "ERROR in the buffer\r\n");
    manager.notify_file_saved(&file);
    assert!(manager.wait_for_settle(&[&file], Duration::from_secs(30)));

    let sync = || -> Vec<String> {
        ws.messages()
            .into_iter()
            .filter(|m| m["dir"] == "in")
            .filter_map(|m| m["method"].as_str().map(String::from))
            .filter(|m| m.starts_with("textDocument/"))
            .collect()
    };
    wait_until(Duration::from_secs(5), || sync().len() >= 2);
    assert_eq!(sync(), vec!["textDocument/didOpen", "textDocument/didSave"]);
    manager.shutdown();
}

#[test]
fn nothing_blocks_while_a_server_hangs_at_start() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut manager =
        LspManager::new(ws.config(vec![ws.server("fake", &["--scenario", "hang-on-init"])]))
            .unwrap();

    let started = Instant::now();
    manager.ensure_started(&ws.root);
    for i in 0..100 {
        manager.notify_file_changed(&file, format!("ERROR {i}\n"));
        manager.notify_file_saved(&file);
        let _ = manager.poll_events(10);
        let _ = manager.snapshot();
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        !manager.wait_for_settle(&[&file], Duration::from_millis(300)),
        "a hanging server does not settle"
    );
    manager.shutdown();
}

#[test]
fn ensure_started_starts_the_workspace_servers_once() {
    let ws = FakeWorkspace::new();
    ws.write("src/a.fake", "ERROR x\n");
    let manager = LspManager::new(ws.config(vec![ws.server("fake", &[])])).unwrap();

    manager.ensure_started(&ws.root);
    manager.ensure_started(&ws.root);

    assert!(wait_until(Duration::from_secs(10), || {
        manager.poll_events(10).iter().any(|e| {
            matches!(
                e,
                LspEvent::Status {
                    state: ServerState::Active,
                    ..
                }
            )
        })
    }));
    manager.ensure_started(&ws.root);
    assert_eq!(ws.server_pids().len(), 1);
    shut_down(manager, &ws);
}

#[test]
fn a_closed_file_is_closed_on_the_server() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut manager = settled(&ws, &file, "ERROR x\n");

    manager.notify_file_closed(&file);

    assert!(wait_until(Duration::from_secs(5), || ws
        .received("textDocument/didClose")
        .len()
        == 1));
    manager.shutdown();
}

#[test]
fn a_broken_server_is_retried_only_after_the_cooldown() {
    let ws = FakeWorkspace::new();
    ws.write("a.fake", "ERROR x\n");
    let mut config = ws.config(vec![ws.server("fake", &["--scenario", "crash-on-init"])]);
    config.restart_cooldown_ms = 1_500;
    let mut manager = LspManager::new(config).unwrap();
    let broken = |manager: &LspManager| {
        manager.poll_events(100).iter().any(|e| {
            matches!(
                e,
                LspEvent::Status {
                    state: ServerState::Broken,
                    ..
                }
            )
        })
    };

    manager.ensure_started(&ws.root);
    assert!(wait_until(Duration::from_secs(10), || broken(&manager)));
    manager.ensure_started(&ws.root);
    assert!(
        !wait_until(Duration::from_millis(500), || ws.server_pids().len() > 1),
        "no retry within the cooldown"
    );

    assert!(wait_until(Duration::from_secs(10), || {
        manager.ensure_started(&ws.root);
        ws.server_pids().len() == 2
    }));
    manager.shutdown();
}
