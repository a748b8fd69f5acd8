//! A spec-complete client, against the fake server: watched files (registration, both glob
//! kinds, unregistration, skipped folders), settling on the server's own signal (work-done
//! progress, rust-analyzer's serverStatus), pull diagnostics (registration, result ids,
//! ServerCancelled, refresh), settings and sidecars.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::support::{assert_all_gone, eventually, is_alive, FakeWorkspace};
use serde_json::{json, Value};
use squiggle_actors::{ServerState, Squiggle};

const SOON: Duration = Duration::from_secs(10);

/// The didChangeWatchedFiles events a log holds, as (file name, type) pairs.
fn watched(messages: &[Value]) -> Vec<(String, u64)> {
    messages
        .iter()
        .filter(|m| m["dir"] == "in" && m["method"] == "workspace/didChangeWatchedFiles")
        .flat_map(|m| {
            m["params"]["changes"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|c| {
            let uri = c["uri"].as_str().unwrap().to_string();
            let name = uri
                .rsplit_once("/ws/")
                .map_or(uri.clone(), |(_, rest)| rest.to_string());
            (name, c["type"].as_u64().unwrap())
        })
        .collect()
}

fn messages_of(log: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[tokio::test]
async fn disk_changes_reach_exactly_the_servers_that_registered_matching_globs() {
    let ws = FakeWorkspace::new();
    let a = ws.write("a.fake", "fine\n");
    let other = ws.write("b.other", "fine\n");
    ws.write("gen/.keep", "");
    ws.write("node_modules/.keep", "");
    let watching = ws.server("watching", &["--scenario", "watch"]);
    let mut quiet = ws.server("quiet", &[]);
    quiet.extensions = vec!["other".to_string()];
    let quiet_log = ws.root.parent().unwrap().join("quiet.log");
    quiet
        .env
        .insert("FAKE_LSP_LOG".to_string(), quiet_log.display().to_string());
    let squiggle = ws.start(vec![watching, quiet]).await;
    squiggle.check_file(&a, None).await;
    squiggle.check_file(&other, None).await;
    let messages = ws.messages();
    let request = messages
        .iter()
        .find(|m| m["method"] == "client/registerCapability")
        .unwrap();
    let answer = messages
        .iter()
        .find(|m| m["dir"] == "in" && m["id"] == request["id"])
        .unwrap();
    assert_eq!(
        answer["result"],
        Value::Null,
        "the registration was acknowledged with null"
    );
    assert!(answer.get("error").is_none_or(Value::is_null));
    squiggle
        .check_file(&a, Some("changed by the agent\n".to_string()))
        .await;

    ws.write("new.fake", "made by another process\n");
    ws.write("gen/out.txt", "generated\n");
    ws.write("gen/out.rs", "not watched\n");
    ws.write("node_modules/dep.fake", "skipped folder\n");
    ws.write("sub/deeper/c.fake", "in a new folder\n");

    // A file squiggle synced is reported as changed too (its event may come last).
    let expected = [
        ("new.fake".to_string(), 1),
        ("gen/out.txt".to_string(), 1),
        ("sub/deeper/c.fake".to_string(), 1),
        ("a.fake".to_string(), 2),
    ];
    let arrived = eventually(SOON, || {
        let seen = watched(&ws.messages());
        expected.iter().all(|e| seen.contains(e))
    })
    .await;
    let seen = watched(&ws.messages());
    assert!(arrived, "events: {seen:?}");
    assert!(
        !seen
            .iter()
            .any(|(name, _)| name.ends_with(".rs") || name.starts_with("node_modules")),
        "{seen:?}"
    );
    assert!(
        watched(&messages_of(&quiet_log)).is_empty(),
        "the server that did not ask hears nothing"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_unregistered_watcher_hears_no_more() {
    let ws = FakeWorkspace::new();
    let a = ws.write("a.fake", "fine\n");
    let script = json!({"watch": [{"globPattern": "**/*.fake"}], "unregister_after_events": 1});
    let squiggle = ws.start(vec![ws.scripted("fake", &script)]).await;
    squiggle.check_file(&a, None).await;
    ws.write("first.fake", "the first event\n");
    let unregistered = eventually(SOON, || {
        ws.messages()
            .iter()
            .any(|m| m["dir"] == "out" && m["method"] == "client/unregisterCapability")
    })
    .await;
    assert!(unregistered, "{:#?}", ws.messages());
    let unregister_id = ws
        .messages()
        .into_iter()
        .find(|m| m["method"] == "client/unregisterCapability")
        .unwrap()["id"]
        .clone();
    assert!(
        eventually(SOON, || ws.messages().iter().any(|m| m["dir"] == "in"
            && m["id"] == unregister_id
            && m["result"].is_null()))
        .await
    );
    let before = watched(&ws.messages()).len();

    ws.write("after.fake", "created after the unregistration\n");

    let more = eventually(Duration::from_millis(800), || {
        watched(&ws.messages()).len() > before
    })
    .await;
    assert!(
        !more,
        "no event after unregistration: {:?}",
        watched(&ws.messages())
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_file_created_on_disk_resolves_an_import() {
    let ws = FakeWorkspace::new();
    let main = ws.write("main.fake", "IMPORT helper\n");
    let squiggle = ws
        .start(vec![ws.scripted(
            "fake",
            &json!({"watch": [{"globPattern": "**/*.fake"}]}),
        )])
        .await;

    let before = squiggle.check_file(&main, None).await;
    assert_eq!(
        before
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>(),
        vec!["unresolved import helper"]
    );

    ws.write("helper.fake", "fine\n");
    assert!(
        eventually(SOON, || watched(&ws.messages())
            .contains(&("helper.fake".to_string(), 1)))
        .await
    );
    let after = squiggle.check_file(&main, None).await;

    assert!(after.diagnostics.is_empty(), "{:?}", after.diagnostics);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn work_done_progress_holds_the_answer_until_the_server_is_done() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = ws.start_scenario("progress").await;

    let started = Instant::now();
    let result = squiggle.check_file(&file, None).await;

    assert_eq!(
        result.diagnostics.len(),
        1,
        "not the empty list published while indexing"
    );
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert!(result.timed_out.is_empty());
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_server_still_working_at_the_deadline_is_reported_as_timed_out_with_what_it_had() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let mut config = ws.config(vec![ws.scripted("fake", &json!({"progress_ms": 5_000}))]);
    config.first_touch_timeout_ms = 800;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let started = Instant::now();
    let result = squiggle.check_file(&file, None).await;

    assert!(
        started.elapsed() < Duration::from_secs(4),
        "answered at the deadline"
    );
    assert!(
        result.diagnostics.is_empty(),
        "the list published while indexing"
    );
    assert_eq!(result.timed_out, vec!["fake".to_string()]);
    let reason = result.servers[0].reason.as_deref().unwrap_or_default();
    assert!(reason.contains("still working"), "{reason}");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn progress_around_each_pull_does_not_make_squiggle_pull_forever() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let mut config = ws.config(vec![
        ws.scripted("fake", &json!({"pull": true, "pull_progress": true}))
    ]);
    // A quiet time the endless pulls would never leave, and a deadline that ends them.
    config.settle_ms = 150;
    config.first_touch_timeout_ms = 3_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let result = squiggle.check_file(&file, None).await;

    assert_eq!(result.diagnostics.len(), 1);
    assert!(result.timed_out.is_empty(), "{:?}", result.servers);
    // One pull for the change, and one more when the server's work ended: not one after
    // every end of the progress the pull itself caused.
    let pulls = ws.received("textDocument/diagnostic").len();
    assert!(pulls <= 3, "{pulls} pulls");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn rust_analyzer_style_quiescence_holds_the_answer_too() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = ws
        .start(vec![ws.scripted(
            "fake",
            &json!({"server_status": true, "publish_empty_first": true, "publish_delay_ms": 400}),
        )])
        .await;

    let result = squiggle.check_file(&file, None).await;

    assert_eq!(result.diagnostics.len(), 1);
    assert!(ws
        .messages()
        .iter()
        .any(|m| m["dir"] == "out" && m["method"] == "experimental/serverStatus"));
    squiggle.shutdown().await;
}

#[tokio::test]
async fn without_a_signal_the_fixed_quiet_time_decides() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = ws
        .start(vec![ws.scripted(
            "fake",
            &json!({"publish_empty_first": true, "publish_delay_ms": 1000, "unversioned": true}),
        )])
        .await;

    let result = squiggle.check_file(&file, None).await;

    assert!(
        result.diagnostics.is_empty(),
        "a server that signals nothing is settled by settle_ms"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_pull_only_server_registered_later_is_pulled_with_result_ids() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR pulled\n");
    let squiggle = ws.start_scenario("pull-only").await;
    // Once the registration is answered, squiggle knows the server pulls: the first check's
    // pull is then the first pull (a check racing the registration is pulled once more).
    squiggle.start_workspace_servers().await;
    let registered = eventually(SOON, || {
        ws.messages()
            .iter()
            .any(|m| m["dir"] == "in" && m.get("method").is_none() && m.get("result").is_some())
    })
    .await;
    assert!(registered, "{:?}", ws.messages());

    let first = squiggle.check_file(&file, None).await;
    let second = squiggle.check_file(&file, None).await;

    assert_eq!(
        first
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>(),
        vec!["found ERROR: pulled"]
    );
    assert_eq!(
        second.diagnostics, first.diagnostics,
        "an `unchanged` report keeps the last result"
    );
    let pulls = ws.received("textDocument/diagnostic");
    assert_eq!(pulls.len(), 2);
    assert!(pulls[0]["params"]["previousResultId"].is_null());
    assert!(pulls[1]["params"]["previousResultId"].is_string());
    // The fake server logs what it sent after sending it.
    let unchanged = eventually(SOON, || {
        ws.messages()
            .iter()
            .any(|m| m["dir"] == "out" && m["result"]["kind"] == "unchanged")
    })
    .await;
    assert!(unchanged);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_pull_the_server_cancels_is_sent_again() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR pulled\n");
    let squiggle = ws
        .start(vec![ws.scripted(
            "fake",
            &json!({"pull": true, "diagnose_on": [], "pull_cancel_first": true}),
        )])
        .await;

    let result = squiggle.check_file(&file, None).await;

    assert_eq!(result.diagnostics.len(), 1);
    assert_eq!(
        ws.received("textDocument/diagnostic").len(),
        2,
        "cancelled once, pulled again"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_refresh_request_pulls_again() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR pulled\n");
    let squiggle = ws.start_scenario("pull-refresh").await;

    let first = squiggle.check_file(&file, None).await;
    assert_eq!(first.diagnostics.len(), 1);

    let refreshed = async {
        loop {
            let all = squiggle.diagnostics().await;
            if all
                .get("a.fake")
                .is_some_and(|d| d.iter().any(|d| d.message == "found REFRESH"))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    assert!(
        tokio::time::timeout(SOON, refreshed).await.is_ok(),
        "the refresh was followed by a pull"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn settings_are_sent_after_initialized() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "fine\n");
    let mut server = ws.server("fake", &[]);
    server.settings = Some(json!({"fake": {"strict": true}}));
    server.initialization_options = Some(json!({"option": 1}));
    let squiggle = ws.start(vec![server]).await;

    squiggle.check_file(&file, None).await;

    let methods: Vec<String> = ws
        .messages()
        .into_iter()
        .filter(|m| m["dir"] == "in")
        .filter_map(|m| m["method"].as_str().map(String::from))
        .collect();
    let at = |name: &str| methods.iter().position(|m| m == name).unwrap();
    assert!(at("initialized") < at("workspace/didChangeConfiguration"));
    assert_eq!(
        ws.received("workspace/didChangeConfiguration")[0]["params"]["settings"],
        json!({"fake": {"strict": true}})
    );
    assert_eq!(
        ws.received("initialize")[0]["params"]["initializationOptions"],
        json!({"option": 1})
    );
    let capabilities = &ws.received("initialize")[0]["params"]["capabilities"];
    assert_eq!(
        capabilities["workspace"]["didChangeWatchedFiles"],
        json!({"dynamicRegistration": true, "relativePatternSupport": true})
    );
    assert_eq!(
        capabilities["general"]["positionEncodings"],
        json!(["utf-8", "utf-16"])
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_sidecar_lives_and_dies_with_its_server() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "fine\n");
    let pid_file = ws.root.parent().unwrap().join("sidecar.pid");
    let mut server = ws.server("fake", &[]);
    server.sidecar = Some(vec![
        "sh".to_string(),
        "-c".to_string(),
        format!("echo $$ > {}; exec sleep 1000", pid_file.display()),
    ]);
    let squiggle = ws.start(vec![server]).await;

    squiggle.check_file(&file, None).await;
    assert!(
        eventually(SOON, || std::fs::read_to_string(&pid_file)
            .is_ok_and(|s| s.trim().parse::<u32>().is_ok()))
        .await
    );
    let sidecar: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(is_alive(sidecar));
    let cwd = std::fs::read_link(format!("/proc/{sidecar}/cwd")).unwrap();
    assert_eq!(cwd, ws.root, "the sidecar runs in the server's root");

    squiggle.shutdown().await;
    assert_all_gone(&[sidecar], "sidecar");
}

#[tokio::test]
async fn a_failing_sidecar_is_reported_and_not_fatal() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR x\n");
    let mut server = ws.server("fake", &[]);
    server.sidecar = Some(vec![
        "sh".to_string(),
        "-c".to_string(),
        "echo generator broke >&2; exit 3".to_string(),
    ]);
    let squiggle = ws.start(vec![server]).await;

    let result = squiggle.check_file(&file, None).await;
    assert_eq!(
        result.diagnostics.len(),
        1,
        "the server works without its sidecar"
    );

    let reported = async {
        loop {
            let status = squiggle.status().await;
            if let Some(reason) = status.first().and_then(|s| s.reason.clone()) {
                return (status[0].state, reason);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let (state, reason) = tokio::time::timeout(SOON, reported).await.unwrap();
    assert_eq!(state, ServerState::Active);
    assert!(
        reason.contains("sidecar `sh` exited") && reason.contains("generator broke"),
        "{reason}"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_folder_deleted_and_made_again_is_watched_again() {
    let ws = FakeWorkspace::new();
    let a = ws.write("a.fake", "fine\n");
    let squiggle = ws
        .start(vec![ws.scripted(
            "fake",
            &json!({"watch": [{"globPattern": "**/*.fake"}]}),
        )])
        .await;
    squiggle.check_file(&a, None).await;
    ws.write("gen/one.fake", "first\n");
    assert!(
        eventually(SOON, || watched(&ws.messages())
            .contains(&("gen/one.fake".to_string(), 1)))
        .await
    );

    std::fs::remove_dir_all(ws.root.join("gen")).unwrap();
    assert!(
        eventually(SOON, || watched(&ws.messages())
            .contains(&("gen/one.fake".to_string(), 3)))
        .await
    );
    ws.write("gen/two.fake", "after the folder came back\n");

    let seen = eventually(SOON, || {
        watched(&ws.messages()).contains(&("gen/two.fake".to_string(), 1))
    })
    .await;
    assert!(seen, "{:?}", watched(&ws.messages()));
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_server_of_its_own_quiet_time_is_waited_for_that_long() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let mut server = ws.scripted(
        "fake",
        &json!({"publish_empty_first": true, "publish_delay_ms": 300, "unversioned": true}),
    );
    server.settle_ms = Some(1_000);
    let squiggle = ws.start(vec![server]).await;

    let result = squiggle.check_file(&file, None).await;

    assert_eq!(
        result.diagnostics.len(),
        1,
        "the global 50 ms would have answered with the empty list"
    );
    squiggle.shutdown().await;
}

/// A server like Biome: it loads its configuration in `initialized`, publishes an empty
/// placeholder for what is opened before, and registers a capability once loaded.
fn configures_late(ws: &FakeWorkspace, configure_ms: u64) -> squiggle_config::ServerSpec {
    let mut spec = ws.scripted("fake", &json!({"configure_ms": configure_ms}));
    spec.ready_on_registration = true;
    spec
}

#[tokio::test]
async fn a_server_ready_only_once_it_registers_gets_no_document_before_and_no_placeholder_is_final()
{
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = ws.start(vec![configures_late(&ws, 600)]).await;

    let result = squiggle.check_file(&file, None).await;

    assert_eq!(result.diagnostics.len(), 1, "{:?}", result.servers);
    let messages = ws.messages();
    let at = |dir: &str, method: &str| {
        messages
            .iter()
            .position(|m| m["dir"] == dir && m["method"] == method)
            .unwrap_or_else(|| panic!("no {dir} {method}: {messages:?}"))
    };
    assert!(
        at("out", "client/registerCapability") < at("in", "textDocument/didOpen"),
        "the document went out before the server was configured"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_registers_is_broken_with_the_reason_not_clean() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let config = squiggle_config::Config {
        initialize_timeout_ms: 500,
        ..ws.config(vec![configures_late(&ws, 60_000)])
    };
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let result = squiggle.check_file(&file, None).await;

    assert!(!result.outcome().is_checked(), "{result:?}");
    let server = &result.servers[0];
    assert_eq!(server.status, ServerState::Broken, "{server:?}");
    let reason = server.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("did not finish starting: no capability registration within 500 ms"),
        "{reason}"
    );
    assert!(ws.received("textDocument/didOpen").is_empty());
    squiggle.shutdown().await;
}

/// The `empty-first` scenario: an empty publish for the version, then, 300 ms later and with no
/// progress between, the real one. The `version` basis trusts one publish per version, so the
/// check answers from the first (clean), says it rested on `version`, and the later publish
/// reaches the stored diagnostics: what docs/lsp-client.md promises, no more.
#[tokio::test]
async fn an_empty_versioned_publish_then_the_real_one_is_answered_from_the_first() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = ws.start_scenario("empty-first").await;

    let result = squiggle.check_file(&file, None).await;

    assert!(result.diagnostics.is_empty(), "{:?}", result.diagnostics);
    assert_eq!(result.servers.len(), 1);
    assert_eq!(
        result.servers[0].basis,
        Some(squiggle_protocol::Basis::Version)
    );
    let stored = eventually(Duration::from_secs(10), || {
        ws.messages().iter().any(|m| {
            m["dir"] == "out"
                && m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())
        })
    })
    .await;
    assert!(stored, "the real publish came");
    // Polled with a deadline: the store takes the publish a moment after it is on the wire.
    let deadline = Instant::now() + Duration::from_secs(10);
    let later = loop {
        let found = squiggle
            .diagnostics()
            .await
            .get("a.fake")
            .is_some_and(|d| d.len() == 1);
        if found || Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(later, "the later publish reached the stored diagnostics");
    squiggle.shutdown().await;
}
