//! The runtime against the fake server: diagnostics, sync order, start-up, failures and
//! clean shutdown.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::support::{
    assert_all_gone, broken_shim, eventually, is_alive, shim_calls, wait_until, FakeWorkspace,
};
use serde_json::json;
use squiggle_actors::{CheckResult, ServerState, Severity, Skip, Squiggle};

#[tokio::test]
async fn diagnostics_arrive_with_character_columns_and_severities() {
    let ws = FakeWorkspace::new();
    let file = ws.write(
        "src/a.fake",
        "ok line\nlet s = \"😀中\"; ERROR bad thing\n  WARNING careful\n",
    );
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    let result = squiggle.check_file(&file, None).await;

    assert_eq!(result.skipped, None);
    assert_eq!(result.file, "src/a.fake");
    assert!(result.timed_out.is_empty());
    let found: Vec<_> = result
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.file.as_str(),
                d.line,
                d.column,
                d.end_column,
                d.severity,
                d.message.as_str(),
                d.code.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "src/a.fake",
                2,
                15,
                20,
                Severity::Error,
                "found ERROR: bad thing",
                Some("E1")
            ),
            (
                "src/a.fake",
                3,
                3,
                10,
                Severity::Warning,
                "found WARNING: careful",
                Some("W1")
            ),
        ]
    );
    assert_eq!(result.servers[0].status, ServerState::Active);
    let known = squiggle.diagnostics().await;
    assert_eq!(known.keys().collect::<Vec<_>>(), vec!["src/a.fake"]);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn versions_rise_and_a_save_follows_only_text_the_file_holds() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR one\n");
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    // Read from disk: saved. A proposed text the file does not hold: not saved. The same text
    // once written: saved.
    let first = squiggle.check_file(&file, None).await;
    let proposed = "fine\nERROR two\nERROR three\n";
    let second = squiggle.check_file(&file, Some(proposed.to_string())).await;
    ws.write("a.fake", proposed);
    let third = squiggle.check_file(&file, Some(proposed.to_string())).await;

    assert_eq!(first.diagnostics.len(), 1);
    for result in [&second, &third] {
        let lines: Vec<_> = result.diagnostics.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![2, 3]);
    }
    let sync = || -> Vec<(String, Option<i64>)> {
        ws.messages()
            .into_iter()
            .filter(|m| m["dir"] == "in")
            .filter_map(|m| {
                m["method"]
                    .as_str()
                    .map(String::from)
                    .filter(|m| m.starts_with("textDocument/"))
                    .map(|method| (method, m["params"]["textDocument"]["version"].as_i64()))
            })
            .collect()
    };
    let open = |version| ("textDocument/didOpen".to_string(), Some(version));
    let change = |version| ("textDocument/didChange".to_string(), Some(version));
    let save = ("textDocument/didSave".to_string(), None);
    let expected = vec![open(1), save.clone(), change(2), change(3), save];
    // The last didSave follows the change the check waited for: wait for it to arrive.
    eventually(Duration::from_secs(5), || sync().len() >= expected.len()).await;
    assert_eq!(sync(), expected);
    let change = &ws.received("textDocument/didChange")[0];
    assert_eq!(
        change["params"]["contentChanges"],
        json!([{"text": proposed}])
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_file_opened_to_answer_a_question_is_not_saved() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR one\n");
    let server = ws.scripted("fake", &json!({"symbols": true}));
    let squiggle = ws.start(vec![server]).await;

    let outline = squiggle.document_symbols(&file, false).await;

    assert!(outline.is_ok_and(|a| a.items.is_empty()));
    let methods: Vec<String> = ws
        .messages()
        .into_iter()
        .filter(|m| m["dir"] == "in")
        .filter_map(|m| m["method"].as_str().map(String::from))
        .filter(|m| m.starts_with("textDocument/"))
        .collect();
    // A didSave would set off a server's save work (rust-analyzer's cargo check) for nothing.
    assert_eq!(
        methods,
        vec!["textDocument/didOpen", "textDocument/documentSymbol"]
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn two_concurrent_checks_of_a_new_file_start_one_process() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let server = ws.scripted("fake", &json!({"initialize_delay_ms": 300}));
    let squiggle = ws.start(vec![server]).await;

    let (a, b) = tokio::join!(
        squiggle.check_file(&file, None),
        squiggle.check_file(&file, None)
    );

    assert_eq!(a.diagnostics.len(), 1);
    assert_eq!(b.diagnostics.len(), 1);
    assert_eq!(ws.server_pids().len(), 1, "exactly one server process");
    assert_eq!(ws.received("initialize").len(), 1);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn nothing_starts_before_a_file_needs_it() {
    let ws = FakeWorkspace::new();
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;
    assert!(squiggle.status().await.is_empty());
    assert!(ws.server_pids().is_empty());
    squiggle.shutdown().await;
}

/// The fake server run with `scenario` crashes: the first check finds it broken with the
/// crash's reason; a later check returns at once without restarting it, and its status says
/// broken.
async fn a_crash_leaves_the_server_broken(scenario: &str) {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut config = ws.config(vec![ws.server("fake", &["--scenario", scenario])]);
    config.diagnostic_timeout_ms = 30_000;
    config.first_touch_timeout_ms = 30_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let first = squiggle.check_file(&file, None).await;
    assert!(first.diagnostics.is_empty());
    assert_eq!(first.servers[0].status, ServerState::Broken);
    let reason = first.servers[0].reason.clone().unwrap();
    assert!(reason.contains("crashing on purpose"), "reason: {reason}");

    let started = Instant::now();
    let second = squiggle.check_file(&file, None).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a broken server must not be waited for"
    );
    assert!(second.diagnostics.is_empty());
    assert_eq!(second.servers[0].status, ServerState::Broken);
    assert_eq!(
        ws.server_pids().len(),
        1,
        "a broken server is not restarted"
    );
    let status = squiggle.status().await;
    assert_eq!(status[0].state, ServerState::Broken);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn crash_at_initialize_leaves_the_server_broken_and_later_checks_return_at_once() {
    a_crash_leaves_the_server_broken("crash-on-init").await;
}

#[tokio::test]
async fn crash_mid_session_leaves_the_server_broken_with_its_reason() {
    a_crash_leaves_the_server_broken("crash-on-open").await;
}

/// A check of a file whose fake server exits with status 0 at once on its first
/// `exiting_starts` starts, as biome's `lsp-proxy` does when its daemon goes away under it.
async fn check_with_clean_exits_at_start(exiting_starts: u32) -> (FakeWorkspace, CheckResult) {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let script = json!({"exit_clean_first_starts": exiting_starts});
    let squiggle = ws.start(vec![ws.scripted("fake", &script)]).await;
    let result = squiggle.check_file(&file, None).await;
    squiggle.shutdown().await;
    (ws, result)
}

#[tokio::test]
async fn a_server_that_exits_cleanly_before_it_started_is_started_once_more() {
    let (ws, result) = check_with_clean_exits_at_start(1).await;

    assert!(result.outcome().is_checked(), "{result:?}");
    assert_eq!(result.diagnostics.len(), 1, "{result:?}");
    assert_eq!(
        ws.server_pids().len(),
        2,
        "the lost start, then the one that served"
    );
}

#[tokio::test]
async fn a_server_that_exits_cleanly_at_every_start_is_broken_after_its_second() {
    let (ws, result) = check_with_clean_exits_at_start(100).await;

    assert!(!result.outcome().is_checked(), "{result:?}");
    assert_eq!(result.servers[0].status, ServerState::Broken);
    let reason = result.servers[0].reason.clone().unwrap();
    assert!(
        reason.contains("the server exited (exit status: 0)"),
        "{reason}"
    );
    assert_eq!(ws.server_pids().len(), 2, "started once more, not again");
}

#[tokio::test]
async fn a_server_that_hangs_at_initialize_times_out_and_is_broken() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut config = ws.config(vec![ws.server("fake", &["--scenario", "hang-on-init"])]);
    config.first_touch_timeout_ms = 300;
    config.initialize_timeout_ms = 1_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let result = squiggle.check_file(&file, None).await;
    assert!(result.diagnostics.is_empty());
    assert_eq!(result.timed_out, vec!["fake".to_string()]);
    assert_eq!(result.servers[0].status, ServerState::Starting);

    let mut status = Vec::new();
    for _ in 0..100 {
        status = squiggle.status().await;
        if status[0].state == ServerState::Broken {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status[0].state, ServerState::Broken);
    assert!(status[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("initialize timed out"));
    let pids = ws.server_pids();
    squiggle.shutdown().await;
    assert_all_gone(&pids, "server");
}

#[tokio::test]
async fn a_missing_binary_is_unavailable_with_the_install_hint() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut server = ws.server("fake", &[]);
    server.command = "squiggle-no-such-server".to_string();
    server.install_hint = "pip install squiggle-no-such-server".to_string();
    let squiggle = ws.start(vec![server]).await;

    let result = squiggle.check_file(&file, None).await;

    assert!(result.diagnostics.is_empty());
    assert_eq!(result.servers[0].status, ServerState::Unavailable);
    let reason = result.servers[0].reason.clone().unwrap();
    assert!(
        reason.contains("pip install squiggle-no-such-server"),
        "reason: {reason}"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_found_command_that_does_not_run_is_started_by_a_check_and_reported_broken_with_its_output(
) {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let bin = ws.root.parent().unwrap().join("bin");
    let message = "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.";
    let shim = broken_shim(&bin, "rust-analyzer", message);
    let mut server = ws.server("ra", &[]);
    server.command = shim.display().to_string();
    server.install_hint = "rustup component add rust-analyzer".to_string();
    let squiggle = ws.start(vec![server]).await;

    let first = squiggle.check_file(&file, None).await;

    assert!(first.diagnostics.is_empty());
    assert_eq!(first.servers.len(), 1);
    assert_eq!(first.servers[0].status, ServerState::Broken, "{first:?}");
    let reason = first.servers[0].reason.clone().unwrap_or_default();
    assert!(reason.contains(message), "its own output: {reason}");
    let calls = shim_calls(&shim);
    assert!(
        !calls.is_empty() && calls.iter().all(|call| call != "--version"),
        "started as a server, never probed by a check: {calls:?}"
    );
    let availability = squiggle
        .availability(&squiggle.config().servers["ra"])
        .await;
    assert_eq!(
        availability.reason(&squiggle.config().servers["ra"]),
        Some(format!(
            "`{0}` ({0}) is found but does not run: `rust-analyzer --version` exited with status 1: {message} (install: rustup component add rust-analyzer)",
            shim.display()
        )),
        "status still probes"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn garbage_and_malformed_frames_are_skipped_and_the_session_goes_on() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR one\n");
    let squiggle = ws.start_scenario("garbage").await;

    let first = squiggle.check_file(&file, None).await;
    let second = squiggle
        .check_file(&file, Some("ERROR a\nERROR b\n".to_string()))
        .await;

    assert_eq!(first.diagnostics.len(), 1);
    assert_eq!(second.diagnostics.len(), 2);
    assert_eq!(second.servers[0].status, ServerState::Active);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn unknown_notifications_are_harmless() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR one\n");
    let squiggle = ws
        .start(vec![
            ws.server("fake", &["--scenario", "unknown-notification"])
        ])
        .await;

    let first = squiggle.check_file(&file, None).await;
    let second = squiggle
        .check_file(&file, Some("ERROR a\nERROR b\n".to_string()))
        .await;

    assert_eq!(first.diagnostics.len(), 1);
    assert_eq!(second.diagnostics.len(), 2);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn server_requests_are_answered_without_errors() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR one\n");
    let mut server = ws.server("fake", &["--scenario", "server-requests"]);
    server.settings = Some(json!({"fake": {"level": 3, "nested": {"on": true}}}));
    let squiggle = ws.start(vec![server]).await;

    let result = squiggle.check_file(&file, None).await;
    assert_eq!(result.diagnostics.len(), 1);

    // Waits without blocking the runtime, which has to answer the requests.
    let answered = eventually(Duration::from_secs(5), || {
        ws.messages()
            .iter()
            .filter(|m| {
                m["dir"] == "in"
                    && m["id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with("fake-req-"))
            })
            .count()
            == 4
    })
    .await;
    assert!(answered, "all four server requests answered");
    let answers: Vec<_> = ws
        .messages()
        .into_iter()
        .filter(|m| {
            m["dir"] == "in"
                && m["id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("fake-req-"))
        })
        .collect();
    for answer in &answers {
        assert!(answer["error"].is_null(), "no error answers: {answer}");
    }
    let configuration = answers
        .iter()
        .find(|a| a["result"].is_array() && a["result"].as_array().unwrap().len() == 2)
        .unwrap();
    assert_eq!(
        configuration["result"],
        json!([{"level": 3, "nested": {"on": true}}, {"on": true}])
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn shutdown_leaves_no_server_and_no_grandchild() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let squiggle = ws.start_scenario("grandchild").await;
    let result = squiggle.check_file(&file, None).await;
    assert_eq!(result.diagnostics.len(), 1);
    let servers = ws.server_pids();
    let grandchildren = ws.grandchild_pids();
    assert_eq!(grandchildren.len(), 1);

    squiggle.shutdown().await;

    assert_all_gone(&servers, "server");
    assert_all_gone(&grandchildren, "grandchild");
    assert_eq!(
        ws.received("shutdown").len(),
        1,
        "a graceful shutdown was asked for"
    );
    assert_eq!(ws.received("exit").len(), 1);
}

#[tokio::test]
async fn a_server_that_ignores_shutdown_is_killed() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let squiggle = ws.start_scenario("shutdown-hangs").await;
    squiggle.check_file(&file, None).await;
    let servers = ws.server_pids();

    squiggle.shutdown().await;

    assert_all_gone(&servers, "server");
}

#[tokio::test]
async fn files_outside_the_workspace_start_no_server() {
    let ws = FakeWorkspace::new();
    let outside = ws.root.parent().unwrap().join("ws2").join("a.fake");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::write(&outside, "ERROR x\n").unwrap();
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    let sibling = squiggle.check_file(&outside, None).await;
    let dotted = squiggle
        .check_file(ws.root.join("../ws2/a.fake"), None)
        .await;

    assert_eq!(sibling.skipped, Some(Skip::OutsideWorkspace));
    assert_eq!(dotted.skipped, Some(Skip::OutsideWorkspace));
    assert!(ws.server_pids().is_empty());
    squiggle.shutdown().await;
}

#[tokio::test]
async fn binary_unknown_and_missing_files_are_skipped_with_a_reason() {
    let ws = FakeWorkspace::new();
    let binary = ws.write("b.fake", "ERROR\0x\n");
    let unknown = ws.write("notes.txt", "ERROR x\n");
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    assert_eq!(
        squiggle.check_file(&binary, None).await.skipped,
        Some(Skip::Binary)
    );
    assert_eq!(
        squiggle.check_file(&unknown, None).await.skipped,
        Some(Skip::NoServer)
    );
    let missing = squiggle.check_file(ws.root.join("gone.fake"), None).await;
    assert!(matches!(missing.skipped, Some(Skip::Unreadable(_))));
    assert!(ws.server_pids().is_empty());
    squiggle.shutdown().await;
}

#[tokio::test]
async fn each_project_root_gets_its_own_server() {
    let ws = FakeWorkspace::new();
    ws.write("one/fake.toml", "");
    ws.write("two/fake.toml", "");
    let a = ws.write("one/src/a.fake", "ERROR a\n");
    let b = ws.write("two/b.fake", "ERROR b\n");
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    squiggle.check_file(&a, None).await;
    squiggle.check_file(&b, None).await;

    let roots: Vec<_> = squiggle
        .status()
        .await
        .into_iter()
        .map(|s| (s.id, s.root, s.state))
        .collect();
    assert_eq!(
        roots,
        vec![
            ("fake".to_string(), "one".to_string(), ServerState::Active),
            ("fake".to_string(), "two".to_string(), ServerState::Active),
        ]
    );
    assert_eq!(ws.server_pids().len(), 2);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn columns_stay_right_when_the_server_picks_utf8_positions() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "let s = \"😀中\"; ERROR x\n");
    let squiggle = ws
        .start(vec![
            ws.scripted("fake", &json!({"position_encoding": "utf-8"}))
        ])
        .await;

    let result = squiggle.check_file(&file, None).await;

    let init = &ws
        .messages()
        .into_iter()
        .find(|m| m["dir"] == "out" && m["result"]["capabilities"].is_object())
        .unwrap();
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(
        result
            .diagnostics
            .iter()
            .map(|d| (d.line, d.column, d.end_column))
            .collect::<Vec<_>>(),
        vec![(1, 15, 20)]
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_slow_server_is_waited_for_until_it_publishes() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR late\n");
    let squiggle = ws.start_scenario("slow-publish").await;

    let first = squiggle.check_file(&file, None).await;
    let second = squiggle
        .check_file(&file, Some("ok\nERROR later\n".to_string()))
        .await;

    assert_eq!(
        first.diagnostics.iter().map(|d| d.line).collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(
        second
            .diagnostics
            .iter()
            .map(|d| d.line)
            .collect::<Vec<_>>(),
        vec![2],
        "the fresh result, not the previous one"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_server_slower_than_the_deadline_times_out_with_no_diagnostics() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR late\n");
    let mut config = ws.config(vec![ws.scripted("fake", &json!({"publish_delay_ms": 3000}))]);
    config.first_touch_timeout_ms = 400;
    config.diagnostic_timeout_ms = 400;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let started = Instant::now();
    let result = squiggle.check_file(&file, None).await;

    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "the deadline bounds the wait"
    );
    assert!(result.diagnostics.is_empty());
    assert_eq!(result.timed_out, vec!["fake".to_string()]);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn lsp_false_checks_nothing() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut config = ws.config(vec![ws.server("fake", &[])]);
    config.enabled = false;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    assert_eq!(
        squiggle.check_file(&file, None).await.skipped,
        Some(Skip::Disabled)
    );
    assert!(ws.server_pids().is_empty());
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_late_publish_for_an_older_version_is_not_taken_as_fresh() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR old\n");
    let mut config = ws.config(vec![ws.scripted("fake", &json!({"publish_delay_ms": 600}))]);
    config.first_touch_timeout_ms = 300;
    config.diagnostic_timeout_ms = 5_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let first = squiggle.check_file(&file, None).await;
    let second = squiggle
        .check_file(&file, Some("fixed\nfixed\nERROR new\n".to_string()))
        .await;

    assert_eq!(first.timed_out, vec!["fake".to_string()]);
    let found: Vec<_> = second
        .diagnostics
        .iter()
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![(3, "found ERROR: new")],
        "the version-1 publish arriving late is not the answer"
    );
    squiggle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_after_its_cooldown_is_heard_again() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let flag = ws.root.parent().unwrap().join("crashed-once");
    let mut server = ws.server("fake", &[]);
    // The first process crashes when the file is opened; the next one works.
    server.args = vec![
        "-c".to_string(),
        format!(
            "if [ -e {flag} ]; then exec {fake_lsp}; else touch {flag}; exec {fake_lsp} --scenario crash-on-open; fi",
            flag = flag.display(),
            fake_lsp = crate::support::fake_lsp_bin().display()
        ),
    ];
    server.command = "sh".to_string();
    let mut config = ws.config(vec![server]);
    config.restart_cooldown_ms = 200;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let first = squiggle.check_file(&file, None).await;
    assert_eq!(first.servers[0].status, ServerState::Broken);

    let mut second = first.clone();
    for _ in 0..100 {
        squiggle.start_workspace_servers().await;
        second = squiggle.check_file(&file, None).await;
        if second.servers[0].status == ServerState::Active {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        second.servers[0].status,
        ServerState::Active,
        "{:?}",
        second.servers
    );
    assert_eq!(
        second.diagnostics.len(),
        1,
        "the restarted server's diagnostics count"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_stopped_server_is_found_by_its_probe_reported_broken_and_killed() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let mut config = ws.config(vec![ws.server("fake", &["--scenario", "default"])]);
    config.diagnostic_timeout_ms = 300;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let warm = squiggle.check_file(&file, None).await;
    assert_eq!(warm.diagnostics.len(), 1);
    let pids = ws.server_pids();
    assert_eq!(pids.len(), 1);

    // SIGSTOP: the process lives on, but neither reads nor answers.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pids[0] as i32, libc::SIGSTOP);
    }
    let stalled = squiggle
        .check_file(&file, Some("ERROR one\nERROR two\n".to_string()))
        .await;
    assert_eq!(stalled.timed_out, vec!["fake".to_string()]);

    let broken = status_until(&squiggle, Duration::from_secs(15), |s| {
        s.state == ServerState::Broken
    })
    .await;
    let reason = broken.reason.unwrap_or_default();
    assert!(reason.contains("not responding"), "{reason}");
    assert!(
        wait_until(Duration::from_secs(10), || !is_alive(pids[0])),
        "the hung server is killed"
    );
    squiggle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_busy_with_work_in_progress_when_a_check_runs_out_of_time_is_not_killed() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    // Like pyright's first check of a big project: progress begun, then 8 s of work during
    // which it reads nothing (so the ping, sent at 1.5 s, waits past its 5 s window).
    let script =
        json!({"pull": true, "diagnose_on": [], "pull_progress": true, "pull_busy_ms": [8000]});
    let mut config = ws.config(vec![ws.scripted("fake", &script)]);
    config.first_touch_timeout_ms = 1500;
    config.diagnostic_timeout_ms = 20_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let stalled = squiggle.check_file(&file, None).await;
    assert_eq!(stalled.timed_out, vec!["fake".to_string()], "{stalled:?}");
    let pids = ws.server_pids();
    assert_eq!(pids.len(), 1);

    // The next check waits behind the work, past the ping's window: the server still answers.
    let next = squiggle
        .check_file(&file, Some("ERROR one\nERROR two\n".to_string()))
        .await;
    assert_eq!(next.diagnostics.len(), 2, "{next:?}");
    assert_eq!(next.servers[0].status, ServerState::Active, "{next:?}");
    assert_eq!(ws.server_pids(), pids);
    assert!(is_alive(pids[0]));
    squiggle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_slowly_when_checks_run_out_of_time_is_not_killed() {
    let ws = FakeWorkspace::new();
    let files: Vec<_> = (0..10)
        .map(|i| ws.write(&format!("f{i}.fake"), "ERROR real\n"))
        .collect();
    // Like pyright with many files: it answers one pull every 1.5 s, with no progress, so the
    // ping (sent when the checks give up at 6 s, behind 15 s of pulls) comes back long after
    // its 5 s window, but answers flow meanwhile.
    let busy = vec![1500; 10];
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": busy});
    let mut config = ws.config(vec![ws.scripted("fake", &script)]);
    config.first_touch_timeout_ms = 1500;
    config.diagnostic_timeout_ms = 20_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let stalled = squiggle.check_files(&files).await;
    assert!(
        stalled.iter().any(|check| !check.timed_out.is_empty()),
        "{stalled:?}"
    );
    let pids = ws.server_pids();
    assert_eq!(pids.len(), 1);

    let next = squiggle
        .check_file(&files[0], Some("ERROR one\nERROR two\n".to_string()))
        .await;
    assert_eq!(next.diagnostics.len(), 2, "{next:?}");
    assert_eq!(next.servers[0].status, ServerState::Active, "{next:?}");
    assert_eq!(ws.server_pids(), pids);
    squiggle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_checks_never_deadlocks_the_pipes_of_a_server_that_answers_big() {
    let ws = FakeWorkspace::new();
    // Big texts one way and big publishes the other: both pipes fill unless squiggle keeps
    // reading the server's answers while it still has changes to write.
    let text = |n: usize| {
        (0..40)
            .map(|i| format!("ERROR number {i} of round {n} {}\n", "x".repeat(60)))
            .collect::<String>()
    };
    let file = ws.write("a.fake", &text(0));
    let script = json!({"pull": true, "diagnose_on": []});
    let mut config = ws.config(vec![ws.scripted("fake", &script)]);
    config.diagnostic_timeout_ms = 20_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let _ = squiggle.check_file(&file, None).await;

    let checks = (1..=1000).map(|n| squiggle.check_file(&file, Some(text(n))));
    let flood = tokio::time::timeout(Duration::from_secs(60), futures::future::join_all(checks))
        .await
        .expect("every check of the flood is answered");
    let last = squiggle
        .check_file(&file, Some("fine\nERROR last\n".to_string()))
        .await;
    squiggle.shutdown().await;

    assert_eq!(flood.len(), 1000, "every check of the flood is answered");
    assert_eq!(
        last.diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>(),
        vec!["found ERROR: last"],
        "the server still answers after the flood"
    );
}

/// Waits (polling the runtime's status, at most `limit`) until the first server's status
/// satisfies `what`, and returns it; panics with the last status when it never does.
async fn status_until(
    squiggle: &Squiggle,
    limit: Duration,
    what: impl Fn(&squiggle_actors::ServerStatus) -> bool,
) -> squiggle_actors::ServerStatus {
    let deadline = Instant::now() + limit;
    loop {
        let status = squiggle.status().await;
        if let Some(first) = status.first().filter(|s| what(s)) {
            return first.clone();
        }
        assert!(Instant::now() < deadline, "never reached: {status:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_with_sigkill_comes_back_after_the_cooldown_and_serves_the_next_check() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut config = ws.config(vec![ws.server("fake", &[])]);
    config.restart_cooldown_ms = 300;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    assert_eq!(squiggle.check_file(&file, None).await.diagnostics.len(), 1);
    let first = ws.server_pids();
    assert_eq!(first.len(), 1);

    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(first[0] as i32, libc::SIGKILL);
    }
    let broken = status_until(&squiggle, Duration::from_secs(10), |s| {
        s.state == ServerState::Broken
    })
    .await;
    assert!(
        broken
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("signal: 9"),
        "{broken:?}"
    );
    // No check is needed to bring it back: the cooldown's end restarts it.
    let back = status_until(&squiggle, Duration::from_secs(10), |s| {
        s.state == ServerState::Active
    })
    .await;
    assert!(back.pid.is_some_and(|pid| pid != first[0]), "{back:?}");

    let next = squiggle
        .check_file(&file, Some("ERROR y\nERROR z\n".to_string()))
        .await;
    assert_eq!(next.servers[0].status, ServerState::Active);
    assert_eq!(next.diagnostics.len(), 2, "{next:?}");
    assert_eq!(ws.server_pids().len(), 2);
    squiggle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_again_right_after_its_restart_stays_broken_and_says_why() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut config = ws.config(vec![ws.server("fake", &["--scenario", "crash-on-init"])]);
    config.restart_cooldown_ms = 200;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let first = squiggle.check_file(&file, None).await;
    assert_eq!(first.servers[0].status, ServerState::Broken);

    // Restarted once after the cooldown, it crashes again at once: a crash loop.
    let held = status_until(&squiggle, Duration::from_secs(10), |s| {
        s.reason
            .as_deref()
            .is_some_and(|r| r.contains("not restarted automatically"))
    })
    .await;
    assert_eq!(held.state, ServerState::Broken);
    let reason = held.reason.unwrap();
    assert!(reason.contains("crashing on purpose"), "{reason}");
    assert!(reason.contains("broke again"), "{reason}");
    assert_eq!(ws.server_pids().len(), 2, "one automatic restart");

    let started = Instant::now();
    let later = squiggle.check_file(&file, None).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(later.servers[0].status, ServerState::Broken);
    assert_eq!(later.servers[0].reason.as_deref(), Some(reason.as_str()));
    assert!(
        !eventually(Duration::from_secs(1), || ws.server_pids().len() > 2).await,
        "no more automatic restarts, however long the cooldown has passed"
    );

    // An explicit restart still tries (it crashes again, and says so).
    let restarted = squiggle.restart(Some("fake")).await;
    assert_eq!(restarted.len(), 1);
    assert_eq!(restarted[0].state, ServerState::Broken);
    assert_eq!(ws.server_pids().len(), 3, "the explicit restart started it");
    squiggle.shutdown().await;
}

/// The files the fake server was told to close, in order (their names).
fn closed_files(ws: &FakeWorkspace) -> Vec<String> {
    ws.received("textDocument/didClose")
        .iter()
        .map(|m| file_name(&m["params"]["textDocument"]["uri"]))
        .collect()
}

fn file_name(uri: &serde_json::Value) -> String {
    uri.as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_documents_than_the_bound_close_the_least_recently_used_and_a_closed_one_reopens() {
    let ws = FakeWorkspace::new();
    let a = ws.write("a.fake", "ERROR a\n");
    let b = ws.write("b.fake", "ERROR b\n");
    let c = ws.write("c.fake", "ERROR c\n");
    let mut config = ws.config(vec![ws.server("fake", &[])]);
    config.max_open_documents = 2;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    for file in [&a, &b, &a, &c] {
        assert_eq!(squiggle.check_file(file, None).await.diagnostics.len(), 1);
    }
    // a was used after b: b is the least recently used.
    assert!(
        eventually(Duration::from_secs(5), || !closed_files(&ws).is_empty()).await,
        "nothing was closed"
    );
    assert_eq!(closed_files(&ws), ["b.fake"]);

    // Checked again, b is opened again with its new text and a version after its last one.
    let again = squiggle
        .check_file(&b, Some("fine\nERROR b again\n".to_string()))
        .await;
    let found: Vec<_> = again
        .diagnostics
        .iter()
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(found, [(2, "found ERROR: b again")]);
    let opens: Vec<_> = ws
        .received("textDocument/didOpen")
        .iter()
        .filter(|m| file_name(&m["params"]["textDocument"]["uri"]) == "b.fake")
        .map(|m| {
            let doc = &m["params"]["textDocument"];
            (
                doc["version"].as_i64().unwrap(),
                doc["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        opens,
        [
            (1, "ERROR b\n".to_string()),
            (2, "fine\nERROR b again\n".to_string())
        ]
    );
    assert!(
        eventually(Duration::from_secs(5), || closed_files(&ws).len() == 2).await,
        "{:?}",
        closed_files(&ws)
    );
    assert_eq!(closed_files(&ws), ["b.fake", "a.fake"]);
    squiggle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_a_check_is_waiting_on_is_not_closed_before_its_answer() {
    let ws = FakeWorkspace::new();
    let a = ws.write("a.fake", "ERROR a\n");
    let b = ws.write("b.fake", "ERROR b\n");
    let mut config = ws.config(vec![ws.scripted("fake", &json!({"publish_delay_ms": 400}))]);
    config.max_open_documents = 1;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    // Started first, so that both checks reach a running server together.
    squiggle.check_file(&a, None).await;

    let (first, second) = tokio::join!(
        squiggle.check_file(&a, Some("ERROR a1\n".to_string())),
        squiggle.check_file(&b, None)
    );

    assert_eq!(first.diagnostics.len(), 1, "{first:?}");
    assert_eq!(second.diagnostics.len(), 1, "{second:?}");
    assert!(
        eventually(Duration::from_secs(5), || !closed_files(&ws).is_empty()).await,
        "over the bound once both were answered"
    );
    // Every close came after the server's answer for the last text it was handed of that
    // document (which of the two checks syncs first is the runtime's choice: a document whose
    // text was answered may be closed for the other's sake, and opened again).
    let log = ws.messages();
    for (at, message) in log.iter().enumerate() {
        if message["dir"] != "in" || message["method"] != "textDocument/didClose" {
            continue;
        }
        let uri = &message["params"]["textDocument"]["uri"];
        let synced = log[..at].iter().rposition(|m| {
            m["dir"] == "in"
                && ["textDocument/didOpen", "textDocument/didChange"]
                    .contains(&m["method"].as_str().unwrap_or_default())
                && m["params"]["textDocument"]["uri"] == *uri
        });
        let synced = synced.expect("a document closed was synced before");
        let version = log[synced]["params"]["textDocument"]["version"].as_i64();
        let answered = log[synced..at].iter().any(|m| {
            m["dir"] == "out"
                && m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == *uri
                && m["params"]["version"].as_i64() >= version
        });
        assert!(answered, "{} closed before its answer", file_name(uri));
    }
    squiggle.shutdown().await;
}

#[tokio::test]
async fn unused_servers_are_stopped_and_the_next_check_starts_one_afresh() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR one\n");
    let squiggle = ws
        .start(vec![ws.scripted("fake", &json!({"publish_delay_ms": 1500}))])
        .await;
    assert_eq!(squiggle.check_file(&file, None).await.diagnostics.len(), 1);
    let first = ws.server_pids();
    assert_eq!(first.len(), 1);

    // Used just now: not unused for a minute; says when it will be.
    let kept = squiggle.stop_unused_servers(Duration::from_secs(60)).await;
    assert!(kept.stopped.is_empty());
    assert!(kept
        .next
        .is_some_and(|next| next <= Duration::from_secs(60)));

    // While a check is under way, none of its servers is stopped.
    let under_way = {
        let squiggle = squiggle.clone();
        let file = file.clone();
        tokio::spawn(async move { squiggle.check_file(&file, Some("ERROR two\n".into())).await })
    };
    assert!(
        eventually(Duration::from_secs(10), || ws
            .received("textDocument/didChange")
            .len()
            == 1)
        .await
    );
    let during = squiggle.stop_unused_servers(Duration::ZERO).await;
    assert!(during.stopped.is_empty(), "{during:?}");
    let answer = under_way.await.unwrap();
    assert_eq!(answer.diagnostics.len(), 1, "{answer:?}");
    assert!(answer.diagnostics[0].message.contains("two"));

    let stopped = squiggle.stop_unused_servers(Duration::ZERO).await;
    assert_eq!(stopped.stopped, vec![("fake".to_string(), ".".to_string())]);
    assert_eq!(stopped.next, None);
    assert_all_gone(&first, "the unused server");
    assert!(squiggle.status().await.is_empty(), "forgotten, not broken");

    let again = squiggle.check_file(&file, None).await;
    assert_eq!(again.diagnostics.len(), 1, "{again:?}");
    let now = ws.server_pids();
    assert_eq!(now.len(), 2, "a fresh server started");
    squiggle.shutdown().await;
}
