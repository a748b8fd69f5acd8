//! Rename and code actions against the fake server: preview, apply, refusals (capability
//! missing, prepareRename says no, server error, a file changed since the preview, an edit
//! outside the workspace), and the MCP tools' shapes and size.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::support::{FakeWorkspace, Mcp};
use serde_json::{json, Value};
use squiggle_actors::{ActionPick, EditFailure, EditMode, Squiggle, Target};

/// A workspace whose `.fake` files use `total` in three files.
fn three_files(ws: &FakeWorkspace) {
    ws.write("a.fake", "variable total\n");
    ws.write("b.fake", "x = total + 1\n");
    ws.write("sub/c.fake", "y = total * total\nsubtotal = 2\n");
}

async fn start(ws: &FakeWorkspace, refactor: Value) -> Squiggle {
    ws.start(vec![ws.scripted("fake", &json!({"refactor": refactor}))])
        .await
}

/// A file of the workspace, as it is on disk.
fn read(ws: &FakeWorkspace, relative: &str) -> String {
    std::fs::read_to_string(ws.root.join(relative)).unwrap()
}

fn total() -> Target {
    Target::At {
        line: 1,
        column: 10,
    }
}

#[tokio::test]
async fn a_rename_is_previewed_then_applied_across_files_and_checked() {
    let ws = FakeWorkspace::new();
    three_files(&ws);
    let squiggle = start(&ws, json!({"rename": true, "prepare": true})).await;

    let preview = squiggle
        .rename("a.fake", total(), "sum", EditMode::Preview)
        .await
        .unwrap();
    let changed = preview.items.plan.changed_files();
    assert_eq!(changed, ["a.fake", "b.fake", "sub/c.fake"]);
    assert!(!preview.items.applied);
    assert_eq!(
        read(&ws, "b.fake"),
        "x = total + 1\n",
        "a preview writes nothing"
    );
    let diff = squiggle_protocol::navigation::render_diff(&preview.items.plan, 80);
    assert!(
        diff.contains("sub/c.fake  (+1 -1)\n@@ -1 +1 @@\n-y = total * total\n+y = sum * sum\n"),
        "{diff}"
    );
    assert_eq!(preview.subject.as_deref(), Some("total"));

    let expect = Some(preview.items.hashes.clone());
    let applied = squiggle
        .rename("a.fake", total(), "sum", EditMode::Apply { expect })
        .await
        .unwrap();

    assert!(applied.items.applied);
    assert_eq!(read(&ws, "a.fake"), "variable sum\n");
    assert_eq!(read(&ws, "b.fake"), "x = sum + 1\n");
    assert_eq!(read(&ws, "sub/c.fake"), "y = sum * sum\nsubtotal = 2\n");
    let checked: Vec<&str> = applied
        .items
        .checks
        .iter()
        .map(|c| c.file.as_str())
        .collect();
    assert_eq!(checked, ["a.fake", "b.fake", "sub/c.fake"]);
    assert!(applied
        .items
        .checks
        .iter()
        .all(|c| c.outcome().is_checked()));
    // The servers have the new text: the last text each file was synced with is the new one.
    let synced = |file: &str| {
        ws.messages()
            .into_iter()
            .filter(|m| m["dir"] == "in")
            .filter(|m| {
                m["params"]["textDocument"]["uri"]
                    .as_str()
                    .is_some_and(|u| u.ends_with(file))
            })
            .filter_map(|m| match m["method"].as_str() {
                Some("textDocument/didOpen") => Some(m["params"]["textDocument"]["text"].clone()),
                Some("textDocument/didChange") => {
                    Some(m["params"]["contentChanges"][0]["text"].clone())
                }
                _ => None,
            })
            .next_back()
    };
    assert_eq!(synced("/a.fake"), Some(json!("variable sum\n")));
    assert_eq!(synced("/b.fake"), Some(json!("x = sum + 1\n")));
    assert_eq!(
        synced("/sub/c.fake"),
        Some(json!("y = sum * sum\nsubtotal = 2\n"))
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn an_apply_is_refused_when_a_file_changed_since_the_preview() {
    let ws = FakeWorkspace::new();
    three_files(&ws);
    let squiggle = start(&ws, json!({"rename": true})).await;
    let preview = squiggle
        .rename("a.fake", total(), "sum", EditMode::Preview)
        .await
        .unwrap();

    ws.write("b.fake", "x = total + 2\n");
    let refused = squiggle
        .rename(
            "a.fake",
            total(),
            "sum",
            EditMode::Apply {
                expect: Some(preview.items.hashes),
            },
        )
        .await
        .unwrap_err();

    assert_eq!(refused, EditFailure::Stale(vec!["b.fake".to_string()]));
    assert_eq!(
        refused.to_string(),
        "b.fake changed since the preview; nothing was written; preview again"
    );
    assert_eq!(
        read(&ws, "a.fake"),
        "variable total\n",
        "nothing was written"
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn refusals_name_the_reason() {
    let ws = FakeWorkspace::new();
    ws.write("a.fake", "variable fixed\nvariable total\n");

    let none = start(&ws, json!({})).await;
    let outside = none
        .rename("../elsewhere.fake", total(), "x", EditMode::Preview)
        .await
        .unwrap_err();
    assert!(
        outside
            .to_string()
            .contains("is outside the workspace root"),
        "{outside}"
    );
    let missing = none
        .rename("a.fake", total(), "x", EditMode::Preview)
        .await
        .unwrap_err();
    assert_eq!(missing.to_string(), "fake does not offer rename for a.fake");
    let no_actions = none
        .code_actions("a.fake", total(), None, None)
        .await
        .unwrap_err();
    assert_eq!(
        no_actions.to_string(),
        "fake does not offer code actions for a.fake"
    );
    none.shutdown().await;

    let prepared = start(
        &ws,
        json!({"rename": true, "prepare": true, "unrenamable": ["fixed"]}),
    )
    .await;
    let said_no = prepared
        .rename("a.fake", total(), "x", EditMode::Preview)
        .await
        .unwrap_err();
    assert_eq!(
        said_no.to_string(),
        "fake says `fixed` at a.fake:1:10 cannot be renamed"
    );
    prepared.shutdown().await;

    let failing = start(&ws, json!({"rename": true, "rename_error": "boom"})).await;
    let failed = failing
        .rename("a.fake", total(), "x", EditMode::Preview)
        .await
        .unwrap_err();
    assert!(failed.to_string().starts_with("fake failed: "), "{failed}");
    assert!(failed.to_string().contains("boom"), "{failed}");
    failing.shutdown().await;
    assert_eq!(read(&ws, "a.fake"), "variable fixed\nvariable total\n");
}

#[tokio::test]
async fn a_quick_fix_is_listed_resolved_previewed_and_applied() {
    let ws = FakeWorkspace::new();
    ws.write("a.fake", "fine\nERROR broken\n");
    let squiggle = start(&ws, json!({"actions": true})).await;
    let at = Target::At { line: 2, column: 1 };

    let listed = squiggle
        .code_actions("a.fake", at.clone(), None, None)
        .await
        .unwrap();
    let titles: Vec<(&str, bool, usize)> = listed
        .items
        .actions
        .iter()
        .map(|a| (a.title.as_str(), a.preferred, a.edits))
        .collect();
    assert_eq!(
        titles,
        [
            ("Replace ERROR with OK", true, 0),
            ("Apply the scripted edit", false, 0)
        ]
    );
    assert_eq!(listed.items.diagnostics.len(), 1, "the line's diagnostic");
    let asked = ws.received("textDocument/codeAction");
    assert_eq!(
        asked[0]["params"]["context"]["diagnostics"][0]["code"], "E1",
        "the diagnostic went along: {asked:?}"
    );

    let pick = |mode| ActionPick {
        index: 1,
        title: Some("Replace ERROR with OK".to_string()),
        mode,
    };
    let preview = squiggle
        .code_actions("a.fake", at.clone(), None, Some(pick(EditMode::Preview)))
        .await
        .unwrap();
    let (_, outcome) = preview.items.chosen.unwrap();
    assert_eq!(
        squiggle_protocol::navigation::render_diff(&outcome.plan, 10),
        "1 file changed\na.fake  (+1 -1)\n@@ -2 +2 @@\n-ERROR broken\n+OK broken\n"
    );
    assert_eq!(read(&ws, "a.fake"), "fine\nERROR broken\n");

    let expect = Some(outcome.hashes);
    let applied = squiggle
        .code_actions("a.fake", at, None, Some(pick(EditMode::Apply { expect })))
        .await
        .unwrap();
    let (_, outcome) = applied.items.chosen.unwrap();
    assert!(outcome.applied);
    assert_eq!(read(&ws, "a.fake"), "fine\nOK broken\n");
    assert_eq!(outcome.checks[0].diagnostics, vec![], "the fix is checked");
    assert_eq!(ws.received("codeAction/resolve").len(), 2);
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_command_edit_is_applied_inside_the_workspace_only() {
    let ws = FakeWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.fake");
    std::fs::write(&victim, "keep\n").unwrap();
    ws.write("a.fake", "fine\n");
    ws.write("b.fake", "old\n");
    let replace = |uri: String| json!({"changes": {uri: [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}, "newText": "new"}]}});
    let run = |mode| ActionPick {
        index: 1,
        title: Some("Apply the scripted edit".to_string()),
        mode,
    };
    let apply = EditMode::Apply { expect: None };

    let inside = start(
        &ws,
        json!({"actions": true, "apply_edit": replace("$ROOT/b.fake".to_string())}),
    )
    .await;
    let done = inside
        .code_actions(
            "a.fake",
            Target::At { line: 1, column: 1 },
            None,
            Some(run(apply.clone())),
        )
        .await
        .unwrap();
    let (_, outcome) = done.items.chosen.unwrap();
    assert_eq!(outcome.command_files, ["b.fake"]);
    assert_eq!(read(&ws, "b.fake"), "new\n");
    assert_eq!(
        outcome.checks.len(),
        1,
        "the file the command changed is checked"
    );
    inside.shutdown().await;

    let uri = format!("file://{}", victim.display());
    let outside_script = json!({"actions": true, "apply_edit": replace(uri)});
    let evil = start(&ws, outside_script).await;
    let done = evil
        .code_actions(
            "a.fake",
            Target::At { line: 1, column: 1 },
            None,
            Some(run(apply)),
        )
        .await
        .unwrap();
    let (_, outcome) = done.items.chosen.unwrap();
    assert!(outcome.command_files.is_empty());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    let answers: Vec<Value> = ws
        .messages()
        .into_iter()
        .filter(|m| m["dir"] == "in" && m["result"]["applied"] == false)
        .collect();
    assert_eq!(answers.len(), 1, "{answers:?}");
    let reason = answers[0]["result"]["failureReason"].as_str().unwrap();
    assert!(reason.contains("outside the workspace root"), "{reason}");
    evil.shutdown().await;
}

#[test]
fn the_mcp_tools_preview_apply_and_refuse_a_stale_apply() {
    let ws = FakeWorkspace::new();
    three_files(&ws);
    ws.write_scripted_toml(&json!({"refactor": {"rename": true, "prepare": true}}));
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let listed = mcp.request("tools/list", json!({}), limit);
    let size = listed["result"].to_string().len();
    eprintln!("tools/list result: {size} characters");
    assert!(size < 8_000, "tools/list is {size} characters");

    let args = json!({"file": "a.fake", "line": 1, "character": 10, "new_name": "sum"});
    let preview = mcp.call("lsp_rename", args.clone(), limit);
    assert_eq!(preview["isError"], false, "{preview}");
    let text = preview["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("rename `total` (a.fake:1:10) to `sum`: preview\n3 files changed\n"),
        "{text}"
    );
    assert!(text.ends_with("apply with `apply: true`\n"), "{text}");
    assert_eq!(
        preview["structuredContent"]["files"],
        json!(["a.fake", "b.fake", "sub/c.fake"])
    );

    // A file changed since the preview: the apply is refused and writes nothing.
    ws.write("b.fake", "x = total + 2\n");
    let mut apply = args.clone();
    apply["apply"] = json!(true);
    let refused = mcp.call("lsp_rename", apply.clone(), limit);
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["content"][0]["text"],
        "b.fake changed since the preview; nothing was written; preview again"
    );
    assert_eq!(read(&ws, "a.fake"), "variable total\n");

    let again = mcp.call("lsp_rename", args, limit);
    assert_eq!(again["isError"], false, "{again}");
    let applied = mcp.call("lsp_rename", apply, limit);
    let text = applied["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("renamed `total` (a.fake:1:10) to `sum`\n"),
        "{text}"
    );
    assert!(
        text.ends_with("after the change: no errors in the changed files\n"),
        "{text}"
    );
    assert_eq!(read(&ws, "b.fake"), "x = sum + 2\n");
    mcp.close(limit);
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn serve_previews_and_applies_with_the_hashes_passed_back() {
    let ws = FakeWorkspace::new();
    three_files(&ws);
    ws.write("d.fake", "ERROR here\n");
    ws.write_scripted_toml(&json!({"refactor": {"rename": true, "actions": true}}));
    let mut serve = crate::support::Serve::start(&ws.root, &[]);
    let limit = Duration::from_secs(30);
    assert_eq!(serve.next(limit)["method"], "lsp/ready");
    let args = json!({"file": "a.fake", "line": 1, "character": 10, "new_name": "sum"});

    serve.request(1, "lsp/rename", args.clone());
    let preview = serve.answer(1, limit)["result"].clone();
    assert_eq!(preview["applied"], false, "{preview}");
    assert_eq!(preview["files"], json!(["a.fake", "b.fake", "sub/c.fake"]));
    let hashes = preview["hashes"].clone();
    assert_eq!(hashes.as_object().unwrap().len(), 3, "{hashes}");

    let mut wrong = args.clone();
    wrong["apply"] = json!(true);
    wrong["expect"] =
        json!({"a.fake": "0", "b.fake": hashes["b.fake"], "sub/c.fake": hashes["sub/c.fake"]});
    serve.request(2, "lsp/rename", wrong);
    let refused = serve.answer(2, limit);
    assert_eq!(
        refused["error"]["message"],
        "a.fake changed since the preview; nothing was written; preview again",
        "{refused}"
    );

    let mut apply = args;
    apply["apply"] = json!(true);
    apply["expect"] = hashes;
    serve.request(3, "lsp/rename", apply);
    let applied = serve.answer(3, limit)["result"].clone();
    assert_eq!(applied["applied"], true, "{applied}");
    assert_eq!(read(&ws, "b.fake"), "x = sum + 1\n");

    serve.request(4, "lsp/codeActions", json!({"file": "d.fake", "line": 1}));
    let listed = serve.answer(4, limit)["result"].clone();
    assert_eq!(
        listed["actions"][0]["title"], "Replace ERROR with OK",
        "{listed}"
    );
    assert!(
        listed["text"]
            .as_str()
            .unwrap()
            .starts_with("code actions for d.fake:1, 1 diagnostic: 2\n1. [quickfix, preferred] Replace ERROR with OK\n"),
        "{listed}"
    );
    serve.request(5, "lsp/shutdown", json!({}));
    serve.answer(5, limit);
    crate::support::assert_no_process_in(&ws.root);
}

/// The write of an apply used to take `.<name>.squiggle-<pid>.tmp`, following a link there:
/// planted for the service's pid, a link sent the new text to a file outside the workspace
/// (and left `a.fake` a link), a FIFO made the apply wait forever.
#[test]
fn serve_applies_a_rename_past_links_and_fifos_planted_at_temporary_names() {
    let ws = FakeWorkspace::new();
    three_files(&ws);
    ws.write_scripted_toml(&json!({"refactor": {"rename": true}}));
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "victim\n").unwrap();
    let mut serve = crate::support::Serve::start(&ws.root, &[]);
    let limit = Duration::from_secs(30);
    assert_eq!(serve.next(limit)["method"], "lsp/ready");
    let pid = serve.pid();
    let planted = |file: &str| {
        ws.root.join(file).with_file_name(format!(
            ".{}.squiggle-{pid}.tmp",
            std::path::Path::new(file)
                .file_name()
                .unwrap()
                .to_string_lossy()
        ))
    };
    std::os::unix::fs::symlink(&victim, planted("a.fake")).unwrap();
    crate::support::mkfifo(&planted("b.fake"));
    std::os::unix::fs::symlink(&victim, planted("sub/c.fake")).unwrap();

    let args =
        json!({"file": "a.fake", "line": 1, "character": 10, "new_name": "sum", "apply": true});
    serve.request(1, "lsp/rename", args);
    let applied = serve.answer(1, limit);

    assert_eq!(applied["result"]["applied"], true, "{applied}");
    assert_eq!(read(&ws, "a.fake"), "variable sum\n");
    assert_eq!(read(&ws, "b.fake"), "x = sum + 1\n");
    assert_eq!(read(&ws, "sub/c.fake"), "y = sum * sum\nsubtotal = 2\n");
    for file in ["a.fake", "b.fake", "sub/c.fake"] {
        let kind = std::fs::symlink_metadata(ws.root.join(file))
            .unwrap()
            .file_type();
        assert!(
            kind.is_file(),
            "{file} is no longer a regular file: {kind:?}"
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim\n");
    let temporary = |folder: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(ws.root.join(folder))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".squiggle-") && name.ends_with(".tmp"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        temporary("."),
        [
            format!(".a.fake.squiggle-{pid}.tmp"),
            format!(".b.fake.squiggle-{pid}.tmp")
        ],
        "only the planted names are left"
    );
    assert_eq!(temporary("sub"), [format!(".c.fake.squiggle-{pid}.tmp")]);
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, limit);
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn an_mcp_apply_of_a_listed_action_is_refused_when_the_list_changed() {
    let ws = FakeWorkspace::new();
    ws.write("d.fake", "ERROR here\n");
    ws.write_scripted_toml(&json!({"refactor": {"actions": true}}));
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let listed = mcp.call(
        "lsp_code_actions",
        json!({"file": "d.fake", "line": 1}),
        limit,
    );
    let text = listed["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "code actions for d.fake:1, 1 diagnostic: 2\n\
         1. [quickfix, preferred] Replace ERROR with OK\n\
         2. [quickfix] Apply the scripted edit  (runs fake.apply)\n\
         preview one with `action: N`\n"
    );
    // Fixed by hand meanwhile: the first action now is another one.
    ws.write("d.fake", "fine here\n");
    let refused = mcp.call(
        "lsp_code_actions",
        json!({"file": "d.fake", "line": 1, "action": 1, "apply": true}),
        limit,
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["content"][0]["text"],
        "action 1 is now `Apply the scripted edit`, not `Replace ERROR with OK`; nothing was done; list them again"
    );
    assert_eq!(read(&ws, "d.fake"), "fine here\n");
    mcp.close(limit);
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn an_mcp_apply_whose_command_edit_was_refused_says_so_and_why() {
    let ws = FakeWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.fake");
    std::fs::write(&victim, "keep\n").unwrap();
    ws.write("a.fake", "fine\n");
    let uri = format!("file://{}", victim.display());
    let edit = json!({"changes": {uri: [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}}, "newText": "gone"}]}});
    ws.write_scripted_toml(&json!({"refactor": {"actions": true, "apply_edit": edit}}));
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let applied = mcp.call(
        "lsp_code_actions",
        json!({"file": "a.fake", "line": 1, "action": 1, "apply": true}),
        limit,
    );
    let text = applied["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("ran command `Apply the scripted edit`: it changed no files\nsquiggle refused the edit the command sent, and wrote none of it: "),
        "{text}"
    );
    assert!(text.contains("outside the workspace root"), "{text}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    mcp.close(limit);
}
