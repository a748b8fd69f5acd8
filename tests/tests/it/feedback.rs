//! Feedback for agents after an edit, against the fake server: scopes, other files, caps,
//! new-error deltas, and the CLI's `--scope` and `--format delta`.

#![allow(clippy::unwrap_used)]

use crate::support::{eventually, squiggle, FakeWorkspace};
use serde_json::json;
use squiggle_actors::{LspEvent, Outcome, Scope, Skip, Squiggle, Unsearched};
use squiggle_config::ServerSpec;

/// A fake server that, on every touch, also publishes errors for two other files.
fn multi_file_server(ws: &FakeWorkspace) -> squiggle_config::ServerSpec {
    ws.scripted("fake", &json!({
        "also_publish": {"src/z.fake": "ERROR in z\n", "src/b.fake": "ok\nERROR in b <T>\nWARNING meh\n"}
    }))
}

#[tokio::test]
async fn edit_scope_reports_only_the_edited_file() {
    let ws = FakeWorkspace::new();
    let file = ws.write("src/a.fake", "ERROR here\n");
    let squiggle = ws.start(vec![multi_file_server(&ws)]).await;

    let feedback = squiggle.feedback(&file, None, Scope::Edit, None).await;

    assert_eq!(
        feedback.text,
        "\nLSP errors detected in this file, please fix:\nsrc/a.fake:\n1:1 found ERROR: here (E1)"
    );
    assert!(feedback.others.is_empty());
    squiggle.shutdown().await;
}

#[tokio::test]
async fn write_scope_adds_other_files_sorted_after_the_written_one() {
    let ws = FakeWorkspace::new();
    let file = ws.write("src/a.fake", "ERROR here\n");
    let squiggle = ws.start(vec![multi_file_server(&ws)]).await;

    let feedback = squiggle.feedback(&file, None, Scope::Write, None).await;

    assert_eq!(
        feedback.text,
        "\nLSP errors detected in this file, please fix:\nsrc/a.fake:\n1:1 found ERROR: here (E1)\n\
         \nLSP errors detected in other files:\nsrc/b.fake:\n2:1 found ERROR: in b <T> (E1)\n\
         src/z.fake:\n1:1 found ERROR: in z (E1)"
    );
    assert_eq!(
        feedback.others.keys().collect::<Vec<_>>(),
        vec!["src/b.fake", "src/z.fake"]
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn write_scope_caps_the_other_files() {
    let ws = FakeWorkspace::new();
    let file = ws.write("src/a.fake", "fine\n");
    let mut config = ws.config(vec![multi_file_server(&ws)]);
    config.max_other_files = 1;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let feedback = squiggle.feedback(&file, None, Scope::Write, None).await;

    assert_eq!(
        feedback.text,
        "\nLSP errors detected in other files:\nsrc/b.fake:\n2:1 found ERROR: in b <T> (E1)"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn clean_files_give_empty_text_and_skipped_files_a_line_saying_why() {
    let ws = FakeWorkspace::new();
    let clean = ws.write("a.fake", "fine\n");
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    let feedback = squiggle.feedback(&clean, None, Scope::Write, None).await;
    let deleted = squiggle
        .feedback(ws.root.join("deleted.fake"), None, Scope::Edit, None)
        .await;
    let outside = squiggle
        .feedback("/etc/hostname", None, Scope::Edit, None)
        .await;

    assert_eq!(feedback.text, "");
    assert_eq!(feedback.check.skipped, None);
    assert_eq!(
        feedback.check.outcome(),
        Outcome::Checked { missing: vec![] }
    );
    assert!(
        deleted.text.starts_with(
            "\nLSP did not check deleted.fake, so its errors are unknown: cannot be read: "
        ),
        "{}",
        deleted.text
    );
    assert!(matches!(deleted.check.skipped, Some(Skip::Unreadable(_))));
    assert_eq!(
        outside.text,
        "\nLSP did not check /etc/hostname, so its errors are unknown: outside the workspace root"
    );
    assert_eq!(outside.check.skipped, Some(Skip::OutsideWorkspace));
    squiggle.shutdown().await;
}

/// A fake server spec for files with extension `extension`.
fn serving(mut spec: ServerSpec, extension: &str) -> ServerSpec {
    spec.extensions = vec![extension.to_string()];
    spec
}

/// A server whose command is not installed, for `.nope` files.
fn not_installed(ws: &FakeWorkspace) -> ServerSpec {
    let mut missing = serving(ws.server("missing", &[]), "nope");
    missing.command = "squiggle-no-such-server".to_string();
    missing.install_hint = "pip install nope".to_string();
    missing
}

#[tokio::test]
async fn every_reason_a_file_is_not_checked_reaches_the_result_and_the_feedback() {
    let ws = FakeWorkspace::new();
    let mut off = serving(ws.server("off", &[]), "off");
    off.enabled = false;
    let servers = vec![
        ws.server("fake", &[]),
        not_installed(&ws),
        off,
        serving(
            ws.server("crashy", &["--scenario", "crash-on-init"]),
            "crash",
        ),
        serving(
            ws.server("opencrash", &["--scenario", "crash-on-open"]),
            "ocrash",
        ),
    ];
    let mut config = ws.config(servers);
    config.max_file_bytes = 64;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let cases = [
        ("b.nope", "ERROR x\n", "missing: `squiggle-no-such-server` is not installed (install: pip install nope)"),
        ("c.xyz", "ERROR x\n", "no language server handles this file type"),
        ("d.off", "ERROR x\n", "its language servers are disabled by configuration (off)"),
        ("e.crash", "ERROR x\n", "crashy is broken: the server exited (exit status: 3): fake-server: crashing on purpose"),
        ("f.ocrash", "ERROR x\n", "opencrash is broken: the server exited (exit status: 3): fake-server: crashing on purpose"),
        ("g.fake", "a\0b\n", "looks binary"),
    ];
    let big = "ERROR big\n".repeat(10);

    for (file, text, reason) in cases {
        let path = ws.write(file, text);
        let feedback = squiggle.feedback(&path, None, Scope::Edit, None).await;
        assert_eq!(feedback.check.outcome().reason(), Some(reason), "{file}");
        assert_eq!(
            feedback.text,
            format!("\nLSP did not check {file}, so its errors are unknown: {reason}")
        );
    }
    let large = squiggle
        .feedback("h.fake", Some(big), Scope::Write, None)
        .await;
    assert_eq!(
        large.text,
        "\nLSP did not check h.fake, so its errors are unknown: too large (100 bytes, limit 64)"
    );
    squiggle.shutdown().await;

    let mut config = ws.config(vec![ws.server("fake", &[])]);
    config.enabled = false;
    let disabled = Squiggle::start(&ws.root, config).await.unwrap();
    let path = ws.write("a.fake", "ERROR x\n");
    assert_eq!(
        disabled.feedback(&path, None, Scope::Edit, None).await.text,
        "\nLSP did not check a.fake, so its errors are unknown: LSP disabled by configuration"
    );
    disabled.shutdown().await;
}

#[tokio::test]
async fn a_file_one_server_checked_stands_and_names_the_server_that_did_not() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR here\n");
    let mut missing = not_installed(&ws);
    missing.extensions = vec!["fake".to_string()];
    let squiggle = ws.start(vec![ws.server("fake", &[]), missing]).await;

    let feedback = squiggle.feedback(&file, None, Scope::Edit, None).await;

    assert_eq!(
        feedback.check.outcome(),
        Outcome::Checked {
            missing: vec![
                "missing: `squiggle-no-such-server` is not installed (install: pip install nope)"
                    .to_string()
            ]
        }
    );
    assert_eq!(
        feedback.text,
        "\nLSP errors detected in this file, please fix:\na.fake:\n1:1 found ERROR: here (E1)",
        "a checked file keeps its format"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_leaves_the_file_not_checked() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR unseen\n");
    let silent = ws.scripted("silent", &json!({"diagnose_on": []}));
    let mut config = ws.config(vec![silent]);
    config.first_touch_timeout_ms = 1_500;
    config.diagnostic_timeout_ms = 1_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let first = squiggle.feedback(&file, None, Scope::Edit, None).await;
    let again = squiggle.check_file(&file, None).await;

    assert!(!first.check.outcome().is_checked());
    assert!(
        first.text.starts_with(
            "\nLSP did not check a.fake, so its errors are unknown: silent timed out: "
        ),
        "{}",
        first.text
    );
    assert_eq!(
        again.outcome().reason(),
        Some("silent timed out: no diagnostics before the deadline")
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn new_errors_are_keyed_by_source_code_severity_and_message() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "ERROR one\n");
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    squiggle.check_file(&file, None).await;
    let first = squiggle.new_errors(&[&file]).await;
    squiggle
        .check_file(&file, Some("moved down\nERROR one\n".to_string()))
        .await;
    let moved = squiggle.new_errors(&[&file]).await;
    squiggle
        .check_file(&file, Some("ERROR one\nERROR two\n".to_string()))
        .await;
    let added = squiggle.new_errors(&[&file]).await;

    assert_eq!(first.text, "New LSP errors introduced by your last edit (fix these):\na.fake:1:1: error: found ERROR: one\n");
    assert_eq!(moved.text, "", "the same error on another line is not new");
    assert_eq!(added.text, "New LSP errors introduced by your last edit (fix these):\na.fake:2:1: error: found ERROR: two\n");
    squiggle.shutdown().await;
}

/// A workspace whose `squiggle.toml` runs the multi-file fake server.
fn cli_workspace() -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    ws.write_scripted_toml(&json!({"also_publish": {"b.fake": "ERROR in b\n"}}));
    ws
}

#[test]
fn cli_scope_prints_exactly_what_a_tool_appends() {
    let ws = cli_workspace();
    ws.write("a.fake", "ERROR mine\n");

    let edit = squiggle(
        &ws.root,
        &["check", "--format", "llm", "--scope", "edit", "a.fake"],
    );
    let write = squiggle(
        &ws.root,
        &["check", "--format", "llm", "--scope", "write", "a.fake"],
    );

    let this_file =
        "\nLSP errors detected in this file, please fix:\na.fake:\n1:1 found ERROR: mine (E1)";
    assert_eq!(edit.stdout, this_file);
    assert_eq!(
        write.stdout,
        format!("{this_file}\n\nLSP errors detected in other files:\nb.fake:\n1:1 found ERROR: in b (E1)")
    );
    assert_eq!(
        squiggle(&ws.root, &["check", "--scope", "edit", "a.fake"]).stdout,
        this_file,
        "--scope implies --format llm"
    );
    assert_eq!(
        squiggle(
            &ws.root,
            &["check", "--format", "text", "--scope", "edit", "a.fake"]
        )
        .code,
        2,
        "--scope goes with --format llm only"
    );
}

#[test]
fn cli_delta_reports_every_error_on_a_first_look() {
    let ws = cli_workspace();
    ws.write("a.fake", "ok\nERROR mine\n");

    let run = squiggle(&ws.root, &["check", "--format", "delta", "a.fake"]);

    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "New LSP errors introduced by your last edit (fix these):\na.fake:2:1: error: found ERROR: mine\n");
}

/// A TypeScript-shaped workspace for the other files an edit of `src/a.ts` reaches: `b.ts`
/// imports it and needs its `alpha` (and has an error of its own from before), `c.ts` imports
/// `b.ts` and needs nothing. `script` is the fake server's, serving `.ts` files.
fn importers_workspace(
    script: serde_json::Value,
) -> (FakeWorkspace, std::path::PathBuf, ServerSpec) {
    let ws = FakeWorkspace::new();
    let edited = ws.write(
        "src/a.ts",
        "export const alpha = 1;\nexport const beta = 2;\n",
    );
    ws.write(
        "src/b.ts",
        "import { alpha } from './a';\n// NEEDS src/a.ts alpha\n// ERROR from before\n",
    );
    ws.write("src/c.ts", "import { b } from './b';\n");
    let spec = serving(ws.scripted("fake", &script), "ts");
    (ws, edited, spec)
}

/// Where in the messages the fake servers received the first `method` for a file whose path
/// ends with `name` is.
fn first_at(ws: &FakeWorkspace, method: &str, name: &str) -> Option<usize> {
    ws.messages().iter().position(|m| {
        m["method"] == method
            && (m["params"]["textDocument"]["uri"].as_str()).is_some_and(|u| u.ends_with(name))
    })
}

#[tokio::test]
async fn an_importer_the_search_opened_is_closed_once_checked_when_it_has_no_errors() {
    let (ws, edited, spec) = importers_workspace(json!({}));
    // Takes alpha too, has no errors after the edit, and is smaller: checked first.
    ws.write("src/d.ts", "import { alpha } from './a';\n");
    let squiggle = ws.start(vec![spec]).await;
    let before = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, "export const beta = 2;\n").unwrap();

    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some(before))).await;

    assert_eq!(feedback.others.keys().collect::<Vec<_>>(), vec!["src/b.ts"]);
    let d_closed = first_at(&ws, "textDocument/didClose", "src/d.ts");
    let b_opened = first_at(&ws, "textDocument/didOpen", "src/b.ts");
    assert!(
        d_closed.is_some() && b_opened.is_some() && d_closed < b_opened,
        "d.ts, without errors, is closed before the search opens b.ts (a server checks again \
         what it holds open as other files open): closed at {d_closed:?}, b.ts opened at \
         {b_opened:?}"
    );
}

/// How many times the fake servers were told a file whose path ends with `name` was opened.
fn opened(ws: &FakeWorkspace, name: &str) -> usize {
    (ws.received("textDocument/didOpen").iter())
        .filter(|m| {
            (m["params"]["textDocument"]["uri"].as_str()).is_some_and(|u| u.ends_with(name))
        })
        .count()
}

/// The last text the fake servers were handed of `file` (opened or changed).
fn last_text_handed(ws: &FakeWorkspace, file: &std::path::Path) -> Option<String> {
    let uri = format!("file://{}", file.display());
    let mut texts = ws.messages().into_iter().filter_map(|m| {
        let params = &m["params"];
        match m["method"].as_str()? {
            "textDocument/didOpen" if params["textDocument"]["uri"] == uri.as_str() => {
                Some(params["textDocument"]["text"].as_str()?.to_string())
            }
            "textDocument/didChange" if params["textDocument"]["uri"] == uri.as_str() => {
                Some(params["contentChanges"][0]["text"].as_str()?.to_string())
            }
            _ => None,
        }
    });
    texts.next_back()
}

#[tokio::test]
async fn an_edit_names_the_importer_it_broke_with_only_the_errors_it_caused() {
    let (ws, edited, spec) = importers_workspace(json!({}));
    let squiggle = ws.start(vec![spec]).await;
    let before = std::fs::read_to_string(&edited).unwrap();
    let edit = "export const beta = 2;\n";
    std::fs::write(&edited, edit).unwrap();

    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some(before.clone()))).await;

    assert!(
        feedback.check.outcome().is_checked(),
        "{:?}",
        feedback.check
    );
    assert_eq!(feedback.others.keys().collect::<Vec<_>>(), vec!["src/b.ts"]);
    let messages: Vec<&str> = (feedback.others["src/b.ts"].iter())
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        vec!["src/a.ts has no alpha"],
        "the error from before is not the edit's"
    );
    assert!(
        feedback
            .text
            .contains("LSP errors detected in other files:\nsrc/b.ts:\nNEW 2:4"),
        "{}",
        feedback.text
    );
    // The look from before handed the servers the text from before; they are left with the edit's.
    assert!(
        crate::support::eventually(std::time::Duration::from_secs(10), || {
            last_text_handed(&ws, &edited).as_deref() == Some(edit)
        })
        .await,
        "the servers hold {:?}",
        last_text_handed(&ws, &edited)
    );

    // Undone: nothing is the edit's, and nothing is left of what it had caused.
    std::fs::write(&edited, &before).unwrap();
    let undone = (squiggle.feedback(&edited, None, Scope::Edit, Some(edit.to_string()))).await;
    assert!(undone.check.outcome().is_checked(), "{:?}", undone.check);
    assert!(undone.others.is_empty(), "{:?}", undone.others);
    assert_eq!(undone.text, "");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_importer_a_server_takes_seconds_over_never_costs_the_edit_its_answer() {
    // Publishes go out in order: whatever is asked after the slow file waits for it, as with a
    // server that checks one file at a time (pyright on a large module).
    let (ws, edited, spec) = importers_workspace(json!({"slow_files": {"c.ts": 8000}}));
    let mut config = ws.config(vec![spec]);
    config.diagnostic_timeout_ms = 2000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let before = std::fs::read_to_string(&edited).unwrap();
    let edit = "export const alpha = 1;\nexport const beta = 2;\n// ERROR new\n";
    std::fs::write(&edited, edit).unwrap();

    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some(before))).await;

    assert!(
        feedback.check.outcome().is_checked(),
        "{:?}",
        feedback.check
    );
    assert_eq!(feedback.check.diagnostics.len(), 1, "{:?}", feedback.check);
    assert!(feedback.others.is_empty(), "{:?}", feedback.others);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_importer_a_server_took_too_long_over_is_not_searched_again() {
    let (ws, edited, spec) = importers_workspace(json!({"slow_files": {"c.ts": 3000}}));
    let squiggle = ws.start(vec![spec]).await;
    let before = std::fs::read_to_string(&edited).unwrap();
    let edit = "export const alpha = 1;\nexport const beta = 2;\n// ERROR new\n";
    std::fs::write(&edited, edit).unwrap();
    let first = (squiggle.feedback(&edited, None, Scope::Edit, Some(before.clone()))).await;
    assert!(first.check.outcome().is_checked(), "{:?}", first.check);

    // The server still works on the slow file (it finishes what it was handed): the next
    // edit's answer waits for it, and its search leaves that file alone.
    std::fs::write(&edited, &before).unwrap();
    let undone = (squiggle.feedback(&edited, None, Scope::Edit, Some(edit.to_string()))).await;

    assert!(undone.check.outcome().is_checked(), "{:?}", undone.check);
    assert_eq!(
        opened(&ws, "src/c.ts"),
        1,
        "the slow file was looked at once"
    );
    assert!(undone.others.is_empty(), "{:?}", undone.others);

    // The other importer is still searched: an edit that breaks it names it.
    let breaking = "export const beta = 2;\n";
    std::fs::write(&edited, breaking).unwrap();
    let broke = (squiggle.feedback(&edited, None, Scope::Edit, Some(before.clone()))).await;
    assert!(broke.check.outcome().is_checked(), "{:?}", broke.check);
    assert_eq!(broke.others.keys().collect::<Vec<_>>(), vec!["src/b.ts"]);
    assert_eq!(opened(&ws, "src/c.ts"), 1, "the slow file is left alone");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_importer_closed_as_costly_to_check_is_not_searched_and_said_so() {
    // Pulled only, like pyright; its second pull (c.ts's own check, on a server warm from the
    // first) takes over 1 s: a search could not end that check in its time, and the server
    // would go on with it after, holding up the next answers.
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": [0, 1200]});
    let (ws, edited, spec) = importers_workspace(script);
    let other = ws.write("src/z.ts", "export const z = 1;\n");
    let squiggle = ws.start(vec![spec]).await;
    let warm = squiggle.check_file(&other, None).await;
    assert!(warm.outcome().is_checked(), "{warm:?}");
    let costly = squiggle.check_file(ws.root.join("src/c.ts"), None).await;
    assert!(costly.outcome().is_checked(), "{costly:?}");

    let before_edit = std::fs::read_to_string(&edited).unwrap();
    let breaking = "export const beta = 2;\n";
    std::fs::write(&edited, breaking).unwrap();
    let broke = (squiggle.feedback(&edited, None, Scope::Edit, Some(before_edit.clone()))).await;

    assert!(broke.check.outcome().is_checked(), "{:?}", broke.check);
    assert_eq!(broke.others.keys().collect::<Vec<_>>(), vec!["src/b.ts"]);
    let c_opened = opened(&ws, "src/c.ts");
    assert_eq!(c_opened, 1, "c.ts, closed for its cost, is left alone");
    assert!(
        broke
            .text
            .contains("LSP did not check 1 other file that imports src/a.ts"),
        "{}",
        broke.text
    );

    // An edit of c.ts answered quickly: it is searched again, and the undoing of a.ts's edit
    // leaves no importer unchecked.
    let c = ws.root.join("src/c.ts");
    let c_text = std::fs::read_to_string(&c).unwrap();
    std::fs::write(&c, format!("{c_text}// touched\n")).unwrap();
    let quick = (squiggle.feedback(&c, None, Scope::Edit, Some(c_text))).await;
    assert!(quick.check.outcome().is_checked(), "{:?}", quick.check);
    std::fs::write(&edited, &before_edit).unwrap();
    let undone = (squiggle.feedback(&edited, None, Scope::Edit, Some(breaking.into()))).await;
    assert!(undone.check.outcome().is_checked(), "{:?}", undone.check);
    assert!(!undone.text.contains("did not check"), "{}", undone.text);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_error_a_change_on_disk_made_before_the_edit_is_not_the_edits() {
    let (ws, edited, spec) = importers_workspace(json!({}));
    let squiggle = ws.start(vec![spec]).await;
    let first = std::fs::read_to_string(&edited).unwrap();
    let kept = format!("{first}// one\n");
    std::fs::write(&edited, &kept).unwrap();
    let one = (squiggle.feedback(&edited, None, Scope::Edit, Some(first))).await;
    assert!(one.others.is_empty(), "{:?}", one.others);

    // Another tool drops `alpha` (b.ts breaks), then the agent edits what it finds.
    let found = "export const beta = 2;\n";
    std::fs::write(&edited, found).unwrap();
    std::fs::write(&edited, format!("{found}// two\n")).unwrap();
    let two = (squiggle.feedback(&edited, None, Scope::Edit, Some(found.to_string()))).await;

    assert!(two.check.outcome().is_checked(), "{:?}", two.check);
    assert!(
        two.others.is_empty(),
        "b.ts broke before this edit: {:?}",
        two.others
    );
    squiggle.shutdown().await;
}

/// The edit that drops `alpha` from a.ts of [`importers_workspace`], and its feedback, with
/// one importer looked at a round (`max_dependent_files = 1`).
async fn drop_alpha_one_importer_a_round(
    ws: &FakeWorkspace,
    edited: &std::path::Path,
    spec: ServerSpec,
) -> (Squiggle, squiggle_actors::Feedback) {
    let mut config = ws.config(vec![spec]);
    config.max_dependent_files = 1;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let before = std::fs::read_to_string(edited).unwrap();
    std::fs::write(edited, "export const beta = 2;\n").unwrap();
    let feedback = (squiggle.feedback(edited, None, Scope::Edit, Some(before))).await;
    (squiggle, feedback)
}

#[tokio::test]
async fn the_importers_that_name_what_the_edit_changed_are_looked_at_first() {
    let (ws, edited, spec) = importers_workspace(json!({}));
    // A smaller importer, nearer by size, that names nothing the edit changes.
    ws.write("src/d.ts", "import { beta } from './a';\n");
    let (squiggle, feedback) = drop_alpha_one_importer_a_round(&ws, &edited, spec).await;

    assert_eq!(feedback.others.keys().collect::<Vec<_>>(), vec!["src/b.ts"]);
    // d.ts was never looked at (c.ts was, as an importer of the broken b.ts): said, not silent.
    let unsearched = Unsearched {
        files: 1,
        more: false,
        before_unknown: false,
        later: false,
    };
    assert_eq!(feedback.unsearched, unsearched, "{}", feedback.text);
    assert!(
        feedback.text.ends_with("\nLSP did not check 1 other file that imports src/a.ts, so errors this edit caused there are unknown."),
        "{}",
        feedback.text
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_edit_whose_text_from_before_is_unknown_says_its_importers_were_not_checked() {
    let (ws, edited, spec) = importers_workspace(json!({}));
    let squiggle = ws.start(vec![spec]).await;
    // Never synced, no copy from the host: what the importers had before cannot be known.
    std::fs::write(&edited, "export const beta = 2;\n").unwrap();

    let feedback = squiggle.feedback(&edited, None, Scope::Edit, None).await;

    let unsearched = Unsearched {
        files: 2,
        more: false,
        before_unknown: true,
        later: false,
    };
    assert_eq!(feedback.unsearched, unsearched, "{}", feedback.text);
    assert!(feedback.others.is_empty(), "{:?}", feedback.others);
    assert_eq!(
        feedback.text,
        "\nLSP did not check 2 other files that import src/a.ts, so errors this edit caused there are unknown: its text from before the edit is unknown."
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_importer_broken_through_another_importer_is_named_too() {
    let (ws, edited, spec) = importers_workspace(json!({}));
    // c.ts imports a.ts only through b.ts, and breaks with it: past `max_dependent_files` of
    // a.ts's importers, it is found as an importer of one the edit broke.
    ws.write(
        "src/c.ts",
        "import { b } from './b';\n// NEEDS src/a.ts alpha\n",
    );
    let (squiggle, feedback) = drop_alpha_one_importer_a_round(&ws, &edited, spec).await;

    let named: Vec<&String> = feedback.others.keys().collect();
    assert_eq!(named, vec!["src/b.ts", "src/c.ts"], "{}", feedback.text);
    let codes: Vec<String> = (feedback.others["src/c.ts"].iter())
        .map(|d| d.code.clone().unwrap_or_default())
        .collect();
    assert_eq!(codes, ["E3"]);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn the_importers_of_a_broken_importer_come_before_those_that_name_nothing_changed() {
    let (ws, edited, spec) = importers_workspace(json!({}));
    // c.ts breaks through b.ts (a.ts loses `lpha` with `alpha`); neither it nor d.ts, the
    // smallest importer of a.ts, names what the edit changes: b.ts is looked at first, then
    // c.ts as an importer of the broken b.ts, then d.ts. The time is the test's: the order is.
    ws.write(
        "src/c.ts",
        "import { b } from './b';\n// NEEDS src/a.ts lpha\n",
    );
    ws.write("src/d.ts", "import { beta } from './a';\n");
    let mut config = ws.config(vec![spec]);
    config.max_dependent_files = 2;
    config.dependent_files_wait_ms = 30_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    let before = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, "export const beta = 2;\n").unwrap();

    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some(before))).await;

    let named: Vec<&String> = feedback.others.keys().collect();
    assert_eq!(named, vec!["src/b.ts", "src/c.ts"], "{}", feedback.text);
    let mut opened: Vec<String> = Vec::new();
    for message in ws.received("textDocument/didOpen") {
        let uri = message["params"]["textDocument"]["uri"].as_str().unwrap();
        let name = uri.rsplit('/').next().unwrap().to_string();
        if name != "a.ts" && !opened.contains(&name) {
            opened.push(name);
        }
    }
    assert_eq!(opened, ["b.ts", "c.ts", "d.ts"], "{}", feedback.text);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_store_read_after_a_feedback_waits_for_the_edits_text_handed_back() {
    // a.ts is answered 1.5 s late: the look at b.ts with a.ts's text from before ends (it
    // lasts `dependent_files_wait_ms`) before the servers answer the edit's text handed back.
    let (ws, edited, spec) = importers_workspace(json!({"slow_files": {"a.ts": 1500}}));
    let squiggle = ws.start(vec![spec]).await;
    let before = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, "export const beta = 2;\n// ERROR new\n").unwrap();
    let mut events = squiggle.subscribe();

    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some(before))).await;
    assert_eq!(feedback.check.diagnostics.len(), 1, "{:?}", feedback.check);

    // The answer to the text from before (no error) reaches the store after the feedback.
    let emptied = async {
        loop {
            match events.recv().await {
                Ok(squiggle_actors::LspEvent::Diagnostics { path, items })
                    if path == "src/a.ts" && items.is_empty() =>
                {
                    return
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(err) => panic!("{err}"),
            }
        }
    };
    let waited = tokio::time::timeout(std::time::Duration::from_secs(20), emptied).await;
    assert!(waited.is_ok(), "the text from before was never answered");
    // A read waits for the edit's text to be answered again.
    let all = squiggle.diagnostics().await;
    let errors = all.get("src/a.ts").map_or(0, Vec::len);
    assert_eq!(errors, 1, "the store holds the text from before: {all:?}");
    squiggle.shutdown().await;
}

/// Waits until the store holds diagnostics for `file` (a relative path) or none, as `some` says.
async fn store_has(squiggle: &Squiggle, file: &str, some: bool) {
    let reached = async {
        loop {
            let all = squiggle.diagnostics().await;
            if all.get(file).is_some_and(|d| !d.is_empty()) == some {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let waited = tokio::time::timeout(std::time::Duration::from_secs(20), reached).await;
    assert!(
        waited.is_ok(),
        "the store's {file} never had errors: {some}"
    );
}

#[tokio::test]
async fn the_store_from_before_an_older_disk_sync_never_stands_for_a_later_edits() {
    let ws = FakeWorkspace::new();
    let edited = ws.write("src/a.fake", "alpha\n");
    ws.write("src/b.fake", "// NEEDS src/a.fake alpha\n");
    let other = ws.write("src/c.fake", "gamma\n");
    ws.write("src/w.fake", "// NEEDS src/c.fake gamma\n");
    let squiggle = crate::completion::start_like_rust_analyzer(&ws, Some(100), 20_000).await;
    squiggle.follow_disk();
    squiggle.check_file(&edited, None).await;
    // A write the watcher syncs (the store before it is kept), then undone by a check.
    std::fs::write(&edited, "beta\n").unwrap();
    store_has(&squiggle, "src/b.fake", true).await;
    std::fs::write(&edited, "alpha\n").unwrap();
    squiggle.check_file(&edited, None).await;
    store_has(&squiggle, "src/b.fake", false).await;
    // Another file breaks w.fake: not the edit's doing.
    std::fs::write(&other, "x\n").unwrap();
    squiggle.check_file(&other, None).await;
    store_has(&squiggle, "src/w.fake", true).await;

    // The same write again, handed over by a check before its hook comes.
    std::fs::write(&edited, "beta\n").unwrap();
    squiggle.check_file(&edited, None).await;
    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some("alpha\n".into()))).await;

    assert!(
        !feedback.others.contains_key("src/w.fake"),
        "w.fake broke before this edit: {}",
        feedback.text
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_write_whose_build_check_answered_before_the_hook_still_names_what_it_broke() {
    let ws = FakeWorkspace::new();
    let edited = ws.write("src/a.fake", "alpha\n");
    ws.write("src/b.fake", "// NEEDS src/a.fake alpha\n");
    // Like rust-analyzer: a check on save over the whole project reports other files.
    let squiggle = crate::completion::start_like_rust_analyzer(&ws, Some(200), 20_000).await;
    squiggle.follow_disk();
    let first = squiggle.check_file(&edited, None).await;
    assert!(first.outcome().is_checked(), "{first:?}");

    // The agent writes; the watcher sees the write first, and the check it starts answers
    // before the hook comes.
    std::fs::write(&edited, "beta\n").unwrap();
    let broken = async {
        loop {
            let all = squiggle.diagnostics().await;
            if all.get("src/b.fake").is_some_and(|d| !d.is_empty()) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let waited = tokio::time::timeout(std::time::Duration::from_secs(20), broken).await;
    assert!(waited.is_ok(), "the check on save reported src/b.fake");
    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some("alpha\n".into()))).await;

    let named: Vec<&String> = feedback.others.keys().collect();
    assert_eq!(named, vec!["src/b.fake"], "{}", feedback.text);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_write_no_server_held_that_a_check_for_another_save_read_still_names_what_it_broke() {
    let ws = FakeWorkspace::new();
    let edited = ws.write("src/a.fake", "alpha\n");
    ws.write("src/b.fake", "// NEEDS src/a.fake alpha\n");
    let saved = ws.write("src/z.fake", "zeta\n");
    // Like rust-analyzer: a check on save over the whole project, and file watchers.
    let script = json!({"pull": true, "diagnose_on": [], "server_status": true,
                        "loading_ms": 300, "check_on_save_ms": 200,
                        "server_requests": ["client/registerCapability"]});
    let mut spec = ws.scripted("fake", &script);
    spec.ready_on_quiescent = true;
    spec.check_progress = Some("fake/flycheck/".to_string());
    let mut config = ws.config(vec![spec]);
    config.diagnostic_timeout_ms = 20_000;
    config.first_touch_timeout_ms = 20_000;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    squiggle.follow_disk();
    let first = squiggle.check_file(&saved, None).await;
    assert!(first.outcome().is_checked(), "{first:?}");

    // The agent writes a.fake, which no server holds; the server hears of it from its watcher.
    std::fs::write(&edited, "beta\n").unwrap();
    let heard = || {
        let told = ws.received("workspace/didChangeWatchedFiles");
        told.iter()
            .any(|params| params.to_string().contains("src/a.fake"))
    };
    assert!(eventually(std::time::Duration::from_secs(10), heard).await);
    // Before the hook comes, a check begun for another save reads the disk and reports b.fake.
    std::fs::write(&saved, "zeta 2\n").unwrap();
    squiggle.check_file(&saved, None).await;
    store_has(&squiggle, "src/b.fake", true).await;
    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, Some("alpha\n".into()))).await;

    let named: Vec<&String> = feedback.others.keys().collect();
    assert_eq!(named, vec!["src/b.fake"], "{}", feedback.text);
    squiggle.shutdown().await;
}

/// The paths of the documents the fake server was told were closed.
fn closed(ws: &FakeWorkspace) -> Vec<String> {
    (ws.received("textDocument/didClose").iter())
        .map(|message| message["params"]["textDocument"]["uri"].to_string())
        .collect()
}

#[tokio::test]
async fn a_document_costly_to_check_is_closed_before_an_edit_of_another_where_nothing_is_lost() {
    // A server that answers pulls only, taking over 1 s on its first (z.fake's, cold: the
    // server loads the project), second (a.fake's) and fourth (c.fake's): a.fake and c.fake
    // stay open after their checks, and the server would analyse them again for every later
    // edit (pyright does). Like pyright, it clears a closed document's list.
    let ws = FakeWorkspace::new();
    let cold = ws.write("src/z.fake", "fine\n");
    let costly = ws.write("src/a.fake", "ERROR slow\n");
    let edited = ws.write("src/b.fake", "fine\n");
    let also = ws.write("src/c.fake", "ERROR slow too\n");
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": [1200, 1200, 0, 1200],
                        "clear_on_close": true});
    let squiggle = ws.start(vec![ws.scripted("fake", &script)]).await;
    for file in [&cold, &costly] {
        let first = squiggle.check_file(file, None).await;
        assert!(first.outcome().is_checked(), "{first:?}");
    }
    assert_eq!(closed(&ws), Vec::<String>::new());

    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, None)).await;

    // a.fake is closed; z.fake's check was slow only because the server was cold.
    assert!(feedback.check.outcome().is_checked(), "{feedback:?}");
    let shut = closed(&ws);
    assert_eq!(shut.len(), 1, "{shut:?}");
    assert!(shut[0].ends_with("src/a.fake\""), "{shut:?}");

    // Its clearing of a.fake's list changes nothing: c.fake goes too.
    let third = squiggle.check_file(&also, None).await;
    assert!(third.outcome().is_checked(), "{third:?}");
    let again = (squiggle.feedback(&edited, Some("fine again\n".into()), Scope::Edit, None)).await;
    assert!(again.check.outcome().is_checked(), "{again:?}");
    let shut = closed(&ws);
    assert_eq!(shut.len(), 2, "{shut:?}");
    assert!(shut[1].ends_with("src/c.fake\""), "{shut:?}");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_document_costly_to_check_stays_open_on_a_server_that_reports_on_open_documents() {
    // A server that publishes (no pulls), here taking over 1 s for a.fake once warm: it
    // reports on its open documents after a change to another by itself
    // (typescript-language-server does), so a.fake closed would miss what an edit of b.fake
    // breaks there.
    let ws = FakeWorkspace::new();
    let warm = ws.write("src/z.fake", "fine\n");
    let costly = ws.write("src/a.fake", "ERROR slow\n");
    let edited = ws.write("src/b.fake", "fine\n");
    let script = json!({"slow_files": {"a.fake": 1200}});
    let squiggle = ws.start(vec![ws.scripted("fake", &script)]).await;
    for file in [&warm, &costly] {
        let first = squiggle.check_file(file, None).await;
        assert!(first.outcome().is_checked(), "{first:?}");
    }

    let feedback = (squiggle.feedback(&edited, None, Scope::Edit, None)).await;

    // The close would have reached the server before the edited file's open, which it answered.
    assert!(feedback.check.outcome().is_checked(), "{feedback:?}");
    assert_eq!(closed(&ws), Vec::<String>::new());
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_write_whose_open_importer_a_pull_server_did_not_answer_in_time_says_so() {
    // Pulled only: the server reports on nothing by itself, so b.ts, open since its own check,
    // keeps its list from before the edit in the store unless asked again, and the search's
    // ask is answered too late. (c.ts, found by the name scan, is not answered either.)
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": [0, 0, 0, 3000]});
    let (ws, edited, spec) = importers_workspace(script);
    let squiggle = ws.start(vec![spec]).await;
    let b = squiggle.check_file(ws.root.join("src/b.ts"), None).await;
    assert!(b.outcome().is_checked(), "{b:?}");
    let before = std::fs::read_to_string(&edited).unwrap();
    let warm = squiggle.check_file(&edited, None).await;
    assert!(warm.outcome().is_checked(), "{warm:?}");

    let breaking = "export const beta = 2;\n";
    std::fs::write(&edited, breaking).unwrap();
    let wrote = (squiggle.feedback(&edited, None, Scope::Write, Some(before))).await;

    assert!(wrote.check.outcome().is_checked(), "{:?}", wrote.check);
    assert!(
        !wrote.text.contains("src/a.ts has no alpha"),
        "the test's premise: b.ts was not answered in time: {}",
        wrote.text
    );
    assert!(
        wrote
            .text
            .contains("LSP did not check 2 other files that import src/a.ts"),
        "b.ts's list in the store is from before the edit: {}",
        wrote.text
    );
    squiggle.shutdown().await;
}

/// What the set-ups of an edit answered by a runtime that searches after its answers give:
/// the workspace, the edited file, the runtime, the edit's answer, and the events subscribed to
/// before the edit.
type Answered = (
    FakeWorkspace,
    std::path::PathBuf,
    Squiggle,
    squiggle_actors::Feedback,
    tokio::sync::broadcast::Receiver<LspEvent>,
);

/// The importers workspace (b.ts and c.ts import a.ts), pulled only, the fourth pull (b.ts's,
/// by the search after the answer) taking `b_pull_ms`, in a runtime that searches after its
/// answers: b.ts and a.ts checked, then a.ts edited to drop `alpha` and answered, with no time
/// to look at importers (`dependent_files_wait_ms = 0`, whatever the machine's speed). The
/// events were subscribed to before the edit.
async fn answered_before_later(b_pull_ms: u64) -> Answered {
    answered_searching_after(b_pull_ms, 0).await
}

/// [`answered_before_later`], the importers looked at for `wait_ms` at most.
async fn answered_searching_after(b_pull_ms: u64, wait_ms: u64) -> Answered {
    answered_with_pulls(&[0, 0, 0, b_pull_ms], wait_ms).await
}

/// [`answered_searching_after`], each pull taking the time `pull_ms` gives it, in order: b.ts's
/// and a.ts's checks before the edit, the edit's, then the search after the answer's: b.ts,
/// c.ts (it imports b.ts), the text from before the edit, b.ts with it, the edit's text handed
/// back.
async fn answered_with_pulls(pull_ms: &[u64], wait_ms: u64) -> Answered {
    let script = json!({"pull": true, "diagnose_on": [], "pull_busy_ms": pull_ms});
    let (ws, edited, spec) = importers_workspace(script);
    let mut config = ws.config(vec![spec]);
    config.dependent_files_wait_ms = wait_ms;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();
    squiggle.search_after_answers();
    let b = squiggle.check_file(ws.root.join("src/b.ts"), None).await;
    assert!(b.outcome().is_checked(), "{b:?}");
    let before = std::fs::read_to_string(&edited).unwrap();
    let warm = squiggle.check_file(&edited, None).await;
    assert!(warm.outcome().is_checked(), "{warm:?}");
    let events = squiggle.subscribe();
    std::fs::write(&edited, "export const beta = 2;\n").unwrap();
    let answer = (squiggle.feedback(&edited, None, Scope::Edit, Some(before))).await;
    assert!(answer.check.outcome().is_checked(), "{:?}", answer.check);
    assert!(
        answer.others.is_empty() && answer.text.contains("LSP goes on checking"),
        "the premise: b.ts was left for the search after the answer: {}",
        answer.text
    );
    (ws, edited, squiggle, answer, events)
}

/// Waits (20 s at most) for the search after an answer to find what an edit caused elsewhere.
async fn caused_event(events: &mut tokio::sync::broadcast::Receiver<LspEvent>) -> LspEvent {
    let wait = async {
        loop {
            match events.recv().await {
                Ok(event @ LspEvent::Caused { .. }) => return Some(event),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return None,
            }
        }
    };
    let found = tokio::time::timeout(std::time::Duration::from_secs(20), wait).await;
    found
        .ok()
        .flatten()
        .expect("the search after the answer found nothing within 20 s")
}

#[tokio::test]
async fn the_search_after_an_answer_names_the_importer_the_answer_had_no_time_for() {
    // The search after the answer pulls b.ts fourth, and that pull takes 3 s.
    let (_ws, edited, squiggle, answer, _) = answered_before_later(3000).await;
    let before_edit = "export const alpha = 1;\nexport const beta = 2;\n".to_string();

    let later = squiggle.feedback_later(&edited).await;
    let later = later.unwrap_or_else(|| panic!("nothing found after: {}", answer.text));
    assert!(
        later.starts_with(
            "LSP errors your edit of src/a.ts caused in other files, found after its answer:\n"
        ),
        "{later}"
    );
    assert!(later.contains("src/b.ts"), "{later}");
    assert!(later.contains("src/a.ts has no alpha"), "{later}");
    assert!(
        !later.contains("ERROR from before"),
        "what was there before the edit is not the edit's: {later}"
    );
    // Told once: not again, and not by the next answer.
    assert_eq!(squiggle.feedback_later(&edited).await, None);

    // The edit undone: what was told is not told again.
    let breaking = "export const beta = 2;\n";
    std::fs::write(&edited, &before_edit).unwrap();
    let undone = (squiggle.feedback(&edited, None, Scope::Edit, Some(breaking.into()))).await;
    assert!(undone.check.outcome().is_checked(), "{:?}", undone.check);
    assert!(
        !undone.text.contains("earlier edit"),
        "told already: {}",
        undone.text
    );
    // (A call that stops the search after an answer: see the next test, which waits for the
    // search to be under way; here the undone edit's own search could end before any call.)
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_search_after_an_answer_that_a_call_stops_is_said_to_be_unfinished_by_the_next_answer() {
    // The search after the answer pulls b.ts fourth, for 5 s.
    let (ws, _, squiggle, _, _) = answered_before_later(5000).await;
    let pulls = ws.received("textDocument/diagnostic").len();
    let searching = eventually(std::time::Duration::from_secs(10), || {
        ws.received("textDocument/diagnostic").len() > pulls
    });
    assert!(
        searching.await,
        "the search after the answer never pulled b.ts"
    );

    // The next call comes while it waits for b.ts.
    let next = (squiggle.feedback(ws.root.join("src/c.ts"), None, Scope::Edit, None)).await;
    assert!(
        next.text.contains("LSP did not finish checking")
            && next.text.contains("src/a.ts after an earlier edit of it"),
        "{}",
        next.text
    );
    assert!(next.earlier.is_empty(), "{:?}", next.earlier);
    // What the stopped search found, if anything, may no longer be what the agent has: the
    // background hook tells nothing, and the line is said once.
    assert_eq!(
        squiggle.feedback_later(ws.root.join("src/a.ts")).await,
        None
    );
    let then = (squiggle.feedback(ws.root.join("src/c.ts"), None, Scope::Edit, None)).await;
    assert!(!then.text.contains("did not finish"), "{}", then.text);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_call_that_comes_once_the_search_after_an_answer_found_its_errors_does_not_lose_them() {
    // The edit's text handed back by the search's look with the text from before (the 8th
    // pull) takes 3 s: the search found b.ts's new error by then.
    let (ws, _, squiggle, answer, _) = answered_with_pulls(&[0, 0, 0, 0, 0, 0, 0, 3000], 0).await;
    let handing_back = eventually(std::time::Duration::from_secs(10), || {
        ws.received("textDocument/diagnostic").len() >= 8
    });
    assert!(
        handing_back.await,
        "the search never handed the edit's text back"
    );

    // A call that hands no other text (c.ts as the disk holds it) stops the search.
    let c = squiggle.check_file(ws.root.join("src/c.ts"), None).await;
    assert!(c.outcome().is_checked(), "{c:?}");
    let next = (squiggle.feedback(ws.root.join("src/c.ts"), None, Scope::Edit, None)).await;
    let header = "LSP errors your earlier edit of src/a.ts caused in other files:\n";
    assert!(
        next.text.contains(header) && next.text.contains("src/a.ts has no alpha"),
        "{}\n(after {})",
        next.text,
        answer.text
    );
    assert!(!next.text.contains("did not finish"), "{}", next.text);
    assert_eq!(next.earlier.len(), 1, "{:?}", next.earlier);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn the_next_answer_tells_once_what_the_search_after_an_earlier_edit_found() {
    // b.ts's pull by the search after the answer takes 1 s.
    let (ws, _, squiggle, answer, mut events) = answered_before_later(1000).await;
    let LspEvent::Caused { edited, files } = caused_event(&mut events).await else {
        unreachable!()
    };
    assert_eq!(edited, "src/a.ts");
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        vec!["src/b.ts"],
        "{files:?}"
    );

    // The agent's next call is an edit of another file: its answer tells it, after its own.
    let next = (squiggle.feedback(ws.root.join("src/c.ts"), None, Scope::Edit, None)).await;
    let header = "LSP errors your earlier edit of src/a.ts caused in other files:\n";
    assert!(
        next.text.contains(header),
        "{}\n(after {})",
        next.text,
        answer.text
    );
    assert!(next.text.contains("src/a.ts has no alpha"), "{}", next.text);
    assert!(
        !next.text.contains("ERROR from before"),
        "what was there before the edit is not the edit's: {}",
        next.text
    );
    assert_eq!(next.earlier.len(), 1, "{:?}", next.earlier);
    assert_eq!(next.earlier[0].edited, "src/a.ts");
    // Once.
    let then = (squiggle.feedback(ws.root.join("src/c.ts"), None, Scope::Edit, None)).await;
    assert!(!then.text.contains("earlier edit"), "{}", then.text);
    assert!(then.earlier.is_empty(), "{:?}", then.earlier);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn what_an_earlier_edit_caused_is_not_told_once_either_file_was_edited_again() {
    // (the file edited again before the next answer: the edited one, or the broken importer)
    for again in ["src/a.ts", "src/b.ts"] {
        let (ws, _, squiggle, _, mut events) = answered_before_later(1000).await;
        caused_event(&mut events).await;
        let path = ws.root.join(again);
        let text = std::fs::read_to_string(&path).unwrap() + "// edited again\n";
        std::fs::write(&path, &text).unwrap();
        let next = (squiggle.feedback(&path, None, Scope::Edit, None)).await;
        assert!(
            next.check.outcome().is_checked(),
            "{again}: {:?}",
            next.check
        );
        assert!(
            !next.text.contains("earlier edit") && next.earlier.is_empty(),
            "{again} edited again: {}",
            next.text
        );
        squiggle.shutdown().await;
    }
}

#[tokio::test]
async fn an_edit_answer_does_not_wait_for_its_importers_in_a_runtime_that_searches_after_it() {
    // b.ts's pull takes 3 s; the importers may be looked at for 10 s. A runtime that searches
    // after its answers looks for a third of the edited file's own answer: not for b.ts.
    let (_, _, squiggle, answer, _) = answered_searching_after(3000, 10_000).await;
    assert!(answer.check.outcome().is_checked(), "{:?}", answer.check);
    assert!(answer.others.is_empty(), "{:?}", answer.others);
    assert!(
        answer.text.contains("LSP goes on checking") && answer.unsearched.later,
        "{}",
        answer.text
    );
    squiggle.shutdown().await;
}

/// An error is new to an edit only if that edit caused it: a file another call opened and
/// answered while the edit's check was under way (its error there all along) is not named
/// under the edit's other files (issue 42: parallel hooks blamed each other's files).
#[tokio::test]
async fn a_file_another_call_opened_while_an_edit_was_checked_is_not_the_edits() {
    let ws = FakeWorkspace::new();
    // The edited file's server answers late, so that the other call ends within its check.
    let slow = ws.scripted("slow", &json!({"publish_delay_ms": 2500}));
    let mut quick = ws.server("quick", &[]);
    quick.extensions = vec!["other".to_string()];
    let squiggle = ws.start(vec![slow, quick]).await;
    // Warm: the runtime had a final answer before the edit.
    let warm = ws.write("w.other", "x\n");
    squiggle.feedback(&warm, None, Scope::Edit, None).await;
    let edited = ws.write("a.fake", "y\n");
    let other = ws.write("b.other", "ERROR there all along\n");

    let edit = squiggle.feedback(&edited, None, Scope::Edit, Some("x\n".to_string()));
    let meanwhile = async {
        let opened = || {
            (ws.received("textDocument/didOpen").iter()).any(|m| {
                m["params"]["textDocument"]["uri"]
                    .as_str()
                    .is_some_and(|u| u.ends_with("/a.fake"))
            })
        };
        let limit = std::time::Duration::from_secs(20);
        assert!(eventually(limit, opened).await, "the edit's check began");
        squiggle.feedback(&other, None, Scope::Edit, None).await
    };
    let (edit, meanwhile) = tokio::join!(edit, meanwhile);

    assert!(
        meanwhile.text.contains("there all along"),
        "{}",
        meanwhile.text
    );
    assert!(edit.check.outcome().is_checked(), "{:?}", edit.check);
    assert!(
        !edit.text.contains("b.other") && edit.others.is_empty(),
        "another call's file is not the edit's: {}",
        edit.text
    );
    squiggle.shutdown().await;
}
