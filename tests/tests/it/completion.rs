//! The completion model end to end, against the fake server: each kind of signal decides when a
//! server's answer for a version is final, and the result says what it rested on.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::support::FakeWorkspace;
use serde_json::{json, Value};
use squiggle_actors::{Basis, Squiggle};
use squiggle_protocol::strict::first_null;

/// Far longer than any answer here should take: a check that sits out a quiet time or a
/// deadline this long fails the test by running into its guard.
const LONG_MS: u64 = 60_000;
/// The guard on each check.
const GUARD: Duration = Duration::from_secs(20);

/// A configuration whose quiet time and deadlines are all [`LONG_MS`].
async fn start_patient(ws: &FakeWorkspace, script: &Value) -> Squiggle {
    let mut config = ws.config(vec![ws.scripted("fake", script)]);
    config.settle_ms = LONG_MS;
    config.diagnostic_timeout_ms = LONG_MS;
    config.first_touch_timeout_ms = LONG_MS;
    Squiggle::start(&ws.root, config).await.unwrap()
}

#[tokio::test]
async fn a_pull_answer_is_final_at_once_without_a_quiet_time() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = start_patient(&ws, &json!({"pull": true, "diagnose_on": []})).await;

    let result = tokio::time::timeout(GUARD, squiggle.check_file(&file, None))
        .await
        .expect("a pull answer needs no quiet time");

    assert_eq!(result.diagnostics.len(), 1, "{result:?}");
    assert_eq!(result.servers[0].basis, Some(Basis::Pull));
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_versioned_publish_while_idle_is_final_at_once() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = start_patient(&ws, &json!({})).await;

    let first = tokio::time::timeout(GUARD, squiggle.check_file(&file, None))
        .await
        .expect("a versioned publish needs no quiet time");
    let changed = tokio::time::timeout(
        GUARD,
        squiggle.check_file(&file, Some("fine\nERROR one\nERROR two\n".to_string())),
    )
    .await
    .expect("nor does the next version's");

    assert_eq!(first.diagnostics.len(), 1);
    assert_eq!(first.servers[0].basis, Some(Basis::Version));
    assert_eq!(changed.diagnostics.len(), 2, "the answer for the new text");
    assert_eq!(changed.servers[0].basis, Some(Basis::Version));
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_unversioned_publish_rests_on_the_quiet_time_and_says_it_guessed() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = ws
        .start(vec![ws.scripted("fake", &json!({"unversioned": true}))])
        .await;

    let result = squiggle.check_file(&file, None).await;

    assert_eq!(result.diagnostics.len(), 1);
    let basis = result.servers[0].basis.unwrap();
    assert_eq!(basis, Basis::QuietTime);
    assert!(basis.is_guess());
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_strict_server_gets_no_null_and_answers_its_pulls() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = start_patient(
        &ws,
        &json!({"pull": true, "strict": true, "diagnose_on": [], "symbols": true}),
    )
    .await;

    let first = tokio::time::timeout(GUARD, squiggle.check_file(&file, None))
        .await
        .unwrap();
    let second = tokio::time::timeout(
        GUARD,
        squiggle.check_file(&file, Some("ERROR a\nERROR b\n".to_string())),
    )
    .await
    .unwrap();
    squiggle.save_file(&file).await;
    squiggle.close_file(&file).await;
    squiggle.shutdown().await;

    assert_eq!(first.diagnostics.len(), 1, "{first:?}");
    assert_eq!(second.diagnostics.len(), 2, "{second:?}");
    assert_eq!(second.servers[0].basis, Some(Basis::Pull));
    for message in ws.messages().iter().filter(|m| m["dir"] == "in") {
        let params = message.get("params").cloned().unwrap_or(json!({}));
        assert_eq!(first_null(&params, "params"), None, "a null in {message}");
    }
}

#[tokio::test]
async fn a_failing_pull_ends_the_wait_with_the_servers_error() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = start_patient(
        &ws,
        &json!({"pull": true, "pull_error": "no project for this file", "diagnose_on": []}),
    )
    .await;

    let result = tokio::time::timeout(GUARD, squiggle.check_file(&file, None))
        .await
        .expect("the check does not sit out its deadline");

    let reason = result.servers[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("no project for this file"), "{reason}");
    assert_eq!(result.servers[0].basis, None, "no final answer");
    let status = squiggle.status().await;
    let reason = status[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("no project for this file"), "{reason}");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn each_answer_belongs_to_its_own_text_or_says_it_was_superseded() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "fine\n");
    for script in [
        json!({"publish_delay_ms": 100}),
        json!({"pull": true, "diagnose_on": []}),
    ] {
        let squiggle = start_patient(&ws, &script).await;
        let _ = squiggle.check_file(&file, None).await;
        for round in 0..5 {
            let one = "ERROR one\n".to_string();
            let two = "ERROR one\nERROR two\n".to_string();
            let both = async {
                tokio::join!(
                    squiggle.check_file(&file, Some(one)),
                    squiggle.check_file(&file, Some(two))
                )
            };
            let (first, second) = tokio::time::timeout(GUARD, both)
                .await
                .expect("neither waits for an answer that will not come");
            for (result, errors) in [(&first, 1), (&second, 2)] {
                match result.servers[0].basis {
                    Some(_) => assert_eq!(
                        result.diagnostics.len(),
                        errors,
                        "{script} round {round}: an answer for another text: {result:?}"
                    ),
                    None => {
                        let reason = result.servers[0].reason.clone().unwrap_or_default();
                        assert!(reason.contains("later change"), "{reason}");
                    }
                }
            }
            assert!(
                first.servers[0].basis.is_some() || second.servers[0].basis.is_some(),
                "the later text gets its answer: {first:?} {second:?}"
            );
        }
        squiggle.shutdown().await;
    }
}

#[tokio::test]
async fn concurrent_checks_of_one_text_share_one_sync_and_one_wait() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "fine\n");
    let squiggle = start_patient(&ws, &json!({"publish_delay_ms": 50})).await;
    let _ = squiggle.check_file(&file, None).await;

    let text = || Some("ERROR one\nERROR two\n".to_string());
    let (a, b, c) = tokio::time::timeout(GUARD, async {
        tokio::join!(
            squiggle.check_file(&file, text()),
            squiggle.check_file(&file, text()),
            squiggle.check_file(&file, text())
        )
    })
    .await
    .unwrap();
    squiggle.shutdown().await;

    assert_eq!(a.diagnostics.len(), 2, "{a:?}");
    assert_eq!((&a, &a), (&b, &c), "one answer for all three");
    assert_eq!(ws.received("textDocument/didChange").len(), 1, "one sync");
}

/// A server like rust-analyzer: pulled, loading its project for a while (quiescent false,
/// empty pull answers meanwhile), and, with `check_ms`, running a check on save (`CHECK`
/// lines) whose results come after its progress ends; `timeout_ms` bounds each check.
pub(crate) async fn start_like_rust_analyzer(
    ws: &FakeWorkspace,
    check_ms: Option<u64>,
    timeout_ms: u64,
) -> Squiggle {
    let script = json!({"pull": true, "diagnose_on": [], "server_status": true,
                        "loading_ms": 300, "check_on_save_ms": check_ms});
    let mut spec = ws.scripted("fake", &script);
    spec.ready_on_quiescent = true;
    spec.check_progress = check_ms.map(|_| "fake/flycheck/".to_string());
    let mut config = ws.config(vec![spec]);
    config.diagnostic_timeout_ms = timeout_ms;
    config.first_touch_timeout_ms = timeout_ms;
    Squiggle::start(&ws.root, config).await.unwrap()
}

/// Each diagnostic's (line, code).
fn codes(result: &squiggle_actors::CheckResult) -> Vec<(u32, String)> {
    result
        .diagnostics
        .iter()
        .map(|d| (d.line, d.code.clone().unwrap_or_default()))
        .collect()
}

#[tokio::test]
async fn a_pull_answered_while_the_server_loads_its_project_is_not_final() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR real\n");
    let squiggle = start_like_rust_analyzer(&ws, None, 20_000).await;

    let result = tokio::time::timeout(GUARD, squiggle.check_file(&file, None))
        .await
        .unwrap();

    // The pull sent at once was answered empty while the server loaded: not clean, but the
    // answer to the pull sent again once it said it was ready.
    assert_eq!(codes(&result), vec![(1, "E1".to_string())], "{result:?}");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_saved_files_answer_waits_for_the_check_its_save_started_and_is_the_checks() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "fine\nCHECK borrow\n");
    let squiggle = start_like_rust_analyzer(&ws, Some(400), 20_000).await;

    let broken = squiggle.check_file(&file, None).await;
    std::fs::write(&file, "fine\nfine\n").unwrap();
    let fixed = squiggle.check_file(&file, None).await;
    std::fs::write(&file, "ERROR own\nCHECK borrow\n").unwrap();
    let again = squiggle.check_file(&file, None).await;
    squiggle.shutdown().await;

    assert_eq!(codes(&broken), vec![(2, "C1".to_string())], "{broken:?}");
    assert_eq!(broken.servers[0].basis, Some(Basis::PullAndCheck));
    assert_eq!(codes(&fixed), vec![], "{fixed:?}");
    assert_eq!(fixed.servers[0].basis, Some(Basis::PullAndCheck));
    // Once the check is done, its list is the answer: the server's own E1 is not the build's.
    assert_eq!(codes(&again), vec![(2, "C1".to_string())], "{again:?}");
}

#[tokio::test]
async fn a_text_the_check_cannot_see_is_the_servers_own_analysis_and_says_so() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "fine\n");
    let squiggle = start_like_rust_analyzer(&ws, Some(400), 20_000).await;

    let unsaved = squiggle
        .check_file(&file, Some("ERROR own\nCHECK borrow\n".to_string()))
        .await;
    squiggle.shutdown().await;

    assert_eq!(codes(&unsaved), vec![(1, "E1".to_string())], "{unsaved:?}");
    assert_eq!(unsaved.servers[0].basis, Some(Basis::Pull));
    let reason = unsaved.servers[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("check on save did not see this text"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_check_that_does_not_finish_in_time_is_named_never_clean() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "fine\nCHECK borrow\n");
    let squiggle = start_like_rust_analyzer(&ws, Some(LONG_MS), 2_000).await;

    let result = squiggle.check_file(&file, None).await;
    squiggle.shutdown().await;

    assert_eq!(result.timed_out, vec!["fake".to_string()], "{result:?}");
    let reason = result.servers[0].reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with("fake check did not finish within 2 s"),
        "{reason}"
    );
    assert_eq!(result.servers[0].basis, None);
}
