//! `squiggle mcp` driven by the official MCP Python SDK against pyright on a fixture project
//! with known answers; and the navigation API's refusals against the fake server.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{
    fixture, installed_server_dirs, path_with_servers, repo_root, require_server, squiggle_bin,
    FakeWorkspace, Mcp,
};
use serde_json::{json, Value};
use squiggle_actors::{NavError, Squiggle, Target};

/// Runs the Python MCP client in `mode` against a project; returns its stdout.
fn run_client(mode: &str, project: &Path) -> String {
    let python = installed_server_dirs()[1].join("python");
    assert!(
        python.is_file(),
        "the test Python environment is missing: run `cargo xtask install-servers`"
    );
    let output = std::process::Command::new(python)
        .arg(repo_root().join("tests/python/mcp_client.py"))
        .args([mode, project.to_str().unwrap()])
        .env("SQUIGGLE_BIN", squiggle_bin())
        .env("PATH", path_with_servers())
        .env("XDG_CONFIG_HOME", project.join(".no-user-config"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn an_mcp_client_navigates_a_python_project() {
    require_server("pyright-langserver", "npm install pyright");
    let (dir, project) = fixture("nav-python");
    let outside = dir.path().join("outside.py");
    std::fs::write(&outside, "x = 1\n").unwrap();
    std::os::unix::fs::symlink(&outside, project.join("link.py")).unwrap();

    let stdout = run_client("full", &project);

    for step in [
        "initialize",
        "list tools",
        "definition by symbol",
        "off-by-one positions",
        "references",
        "hover",
        "document symbols",
        "workspace symbols",
        "diagnostics",
        "boundary refusals",
        "code actions",
        "rename",
    ] {
        assert!(
            stdout.contains(&format!("ok {step}\n")),
            "step {step}:\n{stdout}"
        );
    }
    crate::support::assert_no_process_in(&project);
}

#[test]
fn a_fifo_named_like_a_source_file_is_refused_and_the_tools_go_on() {
    let ws = FakeWorkspace::new();
    ws.write("squiggle.toml", &ws.fake_toml(&[]));
    ws.write("a.fake", "ERROR x\n");
    crate::support::mkfifo(&ws.root.join("fifo.fake"));
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    // More than the runtime's two workers, each of which a blocking open() would hold forever.
    let fifo = json!({"file": "fifo.fake"});
    let at = json!({"file": "fifo.fake", "line": 1, "character": 1});
    let asked = [
        mcp.start_call("lsp_document_symbols", fifo.clone()),
        mcp.start_call("lsp_hover", at.clone()),
        mcp.start_call("lsp_goto_definition", at),
    ];
    let unchecked = mcp.start_call("lsp_diagnostics", fifo);
    let checked = mcp.start_call("lsp_diagnostics", json!({"file": "a.fake"}));

    for id in asked {
        let result = mcp.answer(id, limit)["result"].clone();
        assert_eq!(result["isError"], true, "request {id}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("fifo.fake: cannot be read: not a regular file (a FIFO)"),
            "request {id}: {text}"
        );
    }
    // Diagnostics answer for the file: it was not checked, and why.
    let unchecked = mcp.answer(unchecked, limit)["result"].clone();
    assert_eq!(
        unchecked["content"][0]["text"],
        "fifo.fake: not checked: cannot be read: not a regular file (a FIFO)\n",
        "{unchecked}"
    );
    assert_eq!(unchecked["structuredContent"]["outcome"], "not_checked");
    let checked = mcp.answer(checked, limit)["result"].clone();
    assert_eq!(
        checked["content"][0]["text"], "a.fake:1:1: error[E1]: found ERROR: x\n",
        "the tools go on: {checked}"
    );
    mcp.close(limit);
    crate::support::assert_all_gone(&ws.server_pids(), "server");
}

#[test]
fn a_missing_optional_server_is_mentioned_once_per_session() {
    let ws = FakeWorkspace::new();
    let config = format!(
        "{}[servers.lint]\ncommand = \"squiggle-no-such-linter\"\nextensions = [\"fake\"]\ninstall_hint = \"npm install lint\"\n",
        ws.fake_toml(&[]),
    );
    ws.write("squiggle.toml", &config);
    ws.write("a.fake", "ERROR x\n");
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let mut texts = Vec::new();
    for _ in 1..=3 {
        let result = mcp.call("lsp_diagnostics", json!({"file": "a.fake"}), limit);
        texts.push(result["content"][0]["text"].as_str().unwrap().to_string());
    }

    let found = "a.fake:1:1: error[E1]: found ERROR: x\n";
    let note =
        "note: lint: `squiggle-no-such-linter` is not installed (install: npm install lint)\n";
    assert_eq!(texts[0], format!("{found}{note}"));
    assert_eq!(texts[1], found, "said once");
    assert_eq!(texts[2], found, "said once");
    mcp.close(limit);
}

#[test]
fn navigation_tools_false_hides_them() {
    let (_dir, project) = fixture("nav-python");
    std::fs::write(project.join("squiggle.toml"), "navigation_tools = false\n").unwrap();

    let stdout = run_client("hidden", &project);

    assert!(stdout.contains("ok hidden navigation tools\n"), "{stdout}");
}

#[tokio::test]
async fn questions_about_files_outside_the_workspace_are_refused_before_any_server_starts() {
    let ws = FakeWorkspace::new();
    let outside = ws.root.parent().unwrap().join("ws2/a.fake");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::write(&outside, "x\n").unwrap();
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;

    let at = Target::At { line: 1, column: 1 };
    let sibling = squiggle.goto_definition(&outside, at.clone()).await;
    let dotted = squiggle.hover(ws.root.join("../ws2/a.fake"), at).await;
    let outline = squiggle.document_symbols(&outside, false).await;

    assert!(
        matches!(sibling, Err(NavError::OutsideWorkspace { .. })),
        "{sibling:?}"
    );
    assert!(
        matches!(dotted, Err(NavError::OutsideWorkspace { .. })),
        "{dotted:?}"
    );
    assert!(
        matches!(outline, Err(NavError::OutsideWorkspace { .. })),
        "{outline:?}"
    );
    assert!(squiggle.status().await.is_empty(), "no server started");
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_server_still_starting_is_said_not_hidden_behind_an_empty_answer() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "let value = 1\n");
    let mut config = ws.config(vec![ws.server("fake", &["--scenario", "hang-on-init"])]);
    config.first_touch_timeout_ms = 300;
    let squiggle = Squiggle::start(&ws.root, config).await.unwrap();

    let answer = squiggle
        .goto_definition(&file, Target::At { line: 1, column: 5 })
        .await
        .unwrap();

    assert!(answer.items.is_empty());
    assert_eq!(
        answer.notes,
        vec!["fake is still starting; results may be incomplete".to_string()]
    );
    squiggle.shutdown().await;
}

#[test]
fn serve_answers_navigation_with_the_same_shapes() {
    require_server("pyright-langserver", "npm install pyright");
    let (_dir, project) = fixture("nav-python");
    let mut serve = crate::support::Serve::start(&project, &[]);
    let limit = std::time::Duration::from_secs(60);
    assert_eq!(serve.next(limit)["method"], "lsp/ready");

    serve.request(
        1,
        "lsp/definition",
        serde_json::json!({"file": "app.py", "symbol": "make_circle"}),
    );
    serve.request(
        2,
        "lsp/documentSymbols",
        serde_json::json!({"file": "shapes.py"}),
    );
    serve.request(3, "lsp/definition", serde_json::json!({"file": "app.py"}));

    let definition = serve.answer(1, limit)["result"].clone();
    assert_eq!(definition["locations"][0]["file"], "shapes.py");
    assert_eq!(definition["locations"][0]["line"], 17);
    assert!(definition["text"]
        .as_str()
        .unwrap()
        .starts_with("definition of make_circle (app.py:3:28): 1 location in 1 file\n"));
    let outline = serve.answer(2, limit)["result"].clone();
    assert_eq!(outline["symbols"][0]["name"], "Circle");
    let bad = serve.answer(3, limit);
    assert_eq!(bad["error"]["code"], -32602);
    assert!(bad["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`symbol`"));
    serve.request(4, "lsp/shutdown", serde_json::json!({}));
    serve.answer(4, limit);
    crate::support::assert_no_process_in(&project);
}

#[test]
fn an_mcp_line_over_16_mib_is_answered_with_an_error_and_the_session_goes_on() {
    let ws = FakeWorkspace::new();
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    // The id comes last, as some clients write it.
    let id = mcp.next_id();
    let text = "a".repeat(17 << 20);
    let huge = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"lsp_diagnostics","arguments":{{"file":"{text}"}}}},"id":{id}}}"#
    );
    mcp.write_line(huge.as_bytes());

    let refused = mcp.answer(id, limit);
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("over the limit"), "{refused}");
    let listed = mcp.request("tools/list", json!({}), limit);
    assert!(
        listed["result"]["tools"].as_array().unwrap().len() > 1,
        "{listed}"
    );
}

/// Issue 42, item 20: a message nested deeper than JSON parsers go (serde_json stops at 128
/// levels) is answered with an error, not left unanswered, and the session goes on.
#[test]
fn an_mcp_message_nested_too_deep_is_answered_with_an_error_and_the_session_goes_on() {
    let ws = FakeWorkspace::new();
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let id = mcp.next_id();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"lsp_diagnostics","arguments":{{"file":{deep}}}}},"id":{id}}}"#
    );
    mcp.write_line(line.as_bytes());

    let refused = mcp.answer(id, limit);
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nested"), "{refused}");
    let listed = mcp.request("tools/list", json!({}), limit);
    assert!(
        listed["result"]["tools"].as_array().unwrap().len() > 1,
        "{listed}"
    );
}

#[test]
fn a_tool_argument_of_the_wrong_type_is_refused_not_taken_as_absent() {
    let ws = FakeWorkspace::new();
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let answer = mcp.call("lsp_diagnostics", json!({"file": 5}), limit);
    assert_eq!(answer["isError"], true, "{answer}");
    assert_eq!(
        answer["content"][0]["text"],
        "`file` must be a string, not a number"
    );
    let answer = mcp.call(
        "lsp_find_references",
        json!({"file": "a.fake", "symbol": "x", "include_declaration": "no"}),
        limit,
    );
    assert_eq!(answer["isError"], true, "{answer}");
    let answer = mcp.call("lsp_diagnostics", json!({"file": null}), limit);
    assert_eq!(
        answer["content"][0]["text"], "no diagnostics\n",
        "null is absent: {answer}"
    );
}

#[test]
fn lsp_diagnostics_says_a_file_was_not_checked_and_keeps_messages_plain() {
    let ws = FakeWorkspace::new();
    ws.write(
        "squiggle.toml",
        &format!(
            "{}[servers.missing]\ncommand = \"squiggle-no-such-server\"\nextensions = [\"nope\"]\ninstall_hint = \"pip install nope\"\n",
            ws.fake_toml(&[]),
        ),
    );
    ws.write("a.fake", "ERROR a < b\\n  & c\n");
    ws.write("b.nope", "ERROR x\n");
    let limit = std::time::Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let found = mcp.call(
        "lsp_diagnostics",
        serde_json::json!({"file": "a.fake"}),
        limit,
    );
    let unchecked = mcp.call(
        "lsp_diagnostics",
        serde_json::json!({"file": "b.nope"}),
        limit,
    );
    let all = mcp.call("lsp_diagnostics", serde_json::json!({}), limit);

    assert_eq!(
        found["content"][0]["text"], "a.fake:1:1: error[E1]: found ERROR: a < b; & c\n",
        "one line, not escaped"
    );
    assert_eq!(found["structuredContent"]["outcome"], "diagnostics");
    assert_eq!(unchecked["isError"], false);
    assert_eq!(
        unchecked["content"][0]["text"],
        "b.nope: not checked: missing: `squiggle-no-such-server` is not installed (install: pip install nope)\n"
    );
    assert_eq!(unchecked["structuredContent"]["outcome"], "not_checked");
    assert_eq!(
        all["content"][0]["text"],
        "a.fake:1:1: error[E1]: found ERROR: a < b; & c\n"
    );
    mcp.close(limit);
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn lsp_diagnostics_with_restart_brings_back_a_server_held_broken_after_a_crash_loop() {
    let ws = FakeWorkspace::new();
    // The first two processes crash at initialize (a crash loop); the third works.
    let count = ws.root.parent().unwrap().join("starts");
    let script = format!(
        "n=$(cat {count} 2>/dev/null || echo 0); echo $((n+1)) > {count}; if [ $n -lt 2 ]; then exec {fake_lsp} --scenario crash-on-init; else exec {fake_lsp}; fi",
        count = count.display(),
        fake_lsp = crate::support::fake_lsp_bin().display(),
    );
    let config = format!(
        "settle_ms = 20\nrestart_cooldown_ms = 200\n[servers.fake]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {:?} }}\n",
        ws.pids.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws.write("a.fake", "ERROR x\n");
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);
    let text = |result: &Value| result["content"][0]["text"].as_str().unwrap().to_string();

    let first = text(&mcp.call("lsp_diagnostics", json!({"file": "a.fake"}), limit));
    assert!(
        first.contains("a.fake: not checked: fake is broken"),
        "{first}"
    );
    // Without `restart`, the crash loop keeps it broken.
    let deadline = Instant::now() + limit;
    loop {
        let answer = text(&mcp.call("lsp_diagnostics", json!({"file": "a.fake"}), limit));
        if answer.contains("not restarted automatically") {
            break;
        }
        assert!(Instant::now() < deadline, "never held: {answer}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let restarted = loop {
        let restart = json!({"file": "a.fake", "restart": true});
        let answer = text(&mcp.call("lsp_diagnostics", restart, limit));
        if answer.contains("found ERROR: x") {
            break answer;
        }
        assert!(answer.contains("cooldown ends in"), "{answer}");
        assert!(Instant::now() < deadline, "never restarted: {answer}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        restarted,
        "a.fake:1:1: error[E1]: found ERROR: x\nnote: after restart: fake is active\n"
    );
    assert_eq!(ws.server_pids().len(), 3);
    mcp.close(limit);
}

/// A workspace whose `.fake` files are served by a fake server that answers document symbols,
/// definitions and workspace symbols from their `<kind> <name>` lines (see the fake server).
fn navigable_workspace() -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    ws.write_scripted_toml(
        &json!({"symbols": true, "definition": true, "workspace_symbols": true}),
    );
    ws.write(
        "shapes.fake",
        "function area\nclass Circle\n  method area\n    variable r\nclass Square\n  method area\nvariable total\ntotal = area() + 1\n",
    );
    ws
}

#[test]
fn symbol_addressing_says_where_it_asked_and_which_of_several_it_used() {
    let ws = navigable_workspace();
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);
    let mut definition = |arguments: Value| {
        let mut arguments = arguments;
        arguments["file"] = json!("shapes.fake");
        let result = mcp.call("lsp_goto_definition", arguments, limit);
        assert_eq!(result["isError"], false, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap().to_string();
        (text, result["structuredContent"].clone())
    };

    let (ambiguous, _) = definition(json!({"symbol": "area"}));
    let (qualified, by_class) = definition(json!({"symbol": "Square.area"}));
    let (by_module, _) = definition(json!({"symbol": "shapes.Circle.area"}));
    let (hinted, at_use) = definition(json!({"symbol": "area", "line": 8}));
    let (by_position, _) = definition(json!({"line": 4, "character": 14}));

    assert!(
        ambiguous.starts_with("definition of area (shapes.fake:1:10): 3 locations in 1 file\n"),
        "{ambiguous}"
    );
    assert!(
        ambiguous.ends_with(
            "note: `area` matches 3 symbols: function area (line 1), method area in Circle (line 3), \
             method area in Square (line 6); used the one at line 1; give `line` to pick another\n"
        ),
        "{ambiguous}"
    );
    assert!(
        qualified.starts_with("definition of area (shapes.fake:6:10): "),
        "{qualified}"
    );
    assert_eq!(by_class["position"], json!({"line": 6, "character": 10}));
    assert_eq!(by_class["notes"], json!([]), "Square.area is not ambiguous");
    assert!(
        by_module.starts_with("definition of area (shapes.fake:3:10): "),
        "{by_module}"
    );
    // The hint is on a use of `area`: it beats the definitions on lines 1, 3 and 6.
    assert_eq!(
        at_use["position"],
        json!({"line": 8, "character": 9}),
        "{hinted}"
    );
    assert!(
        by_position.starts_with("definition of r (shapes.fake:4:14): 1 location in 1 file\n"),
        "{by_position}"
    );
    mcp.close(limit);
    crate::support::assert_no_process_in(&ws.root);
}

#[test]
fn an_outline_leaves_out_locals_unless_asked() {
    let ws = navigable_workspace();
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let outline = mcp.call(
        "lsp_document_symbols",
        json!({"file": "shapes.fake"}),
        limit,
    );
    let whole = mcp.call(
        "lsp_document_symbols",
        json!({"file": "shapes.fake", "include_locals": true}),
        limit,
    );

    let text = outline["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "shapes.fake: 6 symbols\n\
         function area  (line 1)\n\
         class Circle  (lines 2-4)\n\
         \x20 method area  (lines 3-4)\n\
         class Square  (lines 5-6)\n\
         \x20 method area  (line 6)\n\
         variable total  (line 7)\n\
         note: 1 local symbol (declared inside a function or method) is left out; ask with include_locals to list it\n"
    );
    let whole_text = whole["content"][0]["text"].as_str().unwrap();
    assert!(
        whole_text.contains("  method area  (lines 3-4)\n    variable r  (line 4)\n"),
        "{whole_text}"
    );
    assert_eq!(whole["structuredContent"]["notes"], json!([]));
    mcp.close(limit);
}

#[test]
fn a_long_outline_says_how_to_get_the_rest_and_pages_on_with_offset() {
    let ws = navigable_workspace();
    // 209 functions: the outline shows 200 and names the offset of the rest.
    let text: String = (1..=209).map(|n| format!("function f{n}\n")).collect();
    ws.write("long.fake", &text);
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&ws.root, limit);

    let first = mcp.call("lsp_document_symbols", json!({"file": "long.fake"}), limit);
    let rest = mcp.call(
        "lsp_document_symbols",
        json!({"file": "long.fake", "offset": 200}),
        limit,
    );

    let first = first["content"][0]["text"].as_str().unwrap();
    assert!(
        first.starts_with("long.fake: 209 symbols\nfunction f1  (line 1)\n"),
        "{first}"
    );
    assert!(
        first.ends_with("function f200  (line 200)\n... and 9 more (offset: 200 shows them)\n"),
        "{first}"
    );
    let rest = rest["content"][0]["text"].as_str().unwrap();
    let expected: String = (201..=209)
        .map(|n| format!("function f{n}  (line {n})\n"))
        .collect();
    assert_eq!(
        rest,
        format!("long.fake: 209 symbols, from symbol 201\n{expected}")
    );
    mcp.close(limit);
}

#[tokio::test]
async fn a_line_or_column_of_zero_is_refused_naming_the_1_based_rule() {
    let ws = FakeWorkspace::new();
    let file = ws.write("a.fake", "function area\narea()\n");
    let server = ws.scripted("fake", &json!({"symbols": true, "definition": true}));
    let squiggle = ws.start(vec![server]).await;

    let line_zero = squiggle
        .goto_definition(&file, Target::At { line: 0, column: 1 })
        .await;
    let column_zero = squiggle
        .hover(&file, Target::At { line: 1, column: 0 })
        .await;
    let hint_zero = squiggle
        .find_references(
            &file,
            Target::Symbol {
                name: "area".to_string(),
                line: Some(0),
            },
            true,
        )
        .await;
    let fine = squiggle
        .goto_definition(&file, Target::At { line: 2, column: 1 })
        .await
        .unwrap();

    assert_eq!(
        line_zero.unwrap_err().to_string(),
        "line 0 is not a position: lines and columns are 1-based (the first is 1)"
    );
    assert!(
        matches!(
            column_zero,
            Err(NavError::NotOneBased {
                what: "column",
                value: 0
            })
        ),
        "{column_zero:?}"
    );
    assert!(
        matches!(hint_zero, Err(NavError::NotOneBased { what: "line", .. })),
        "{hint_zero:?}"
    );
    assert_eq!(fine.position, Some((2, 1)));
    assert_eq!(fine.subject.as_deref(), Some("area"));
    assert_eq!(
        fine.items.iter().map(|l| l.line).collect::<Vec<_>>(),
        vec![1]
    );
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_cold_workspace_search_starts_only_the_roots_server_and_answers() {
    let ws = FakeWorkspace::new();
    ws.write("fake.toml", "");
    ws.write("shapes.fake", "class Shape\n  method area\n");
    for sub in ["sub1", "sub2", "deep/sub3"] {
        ws.write(&format!("{sub}/fake.toml"), "");
        ws.write(&format!("{sub}/lib.fake"), "function area\n");
    }
    let script = json!({"symbols": true, "workspace_symbols": true});
    let squiggle = ws.start(vec![ws.scripted("fake", &script)]).await;

    let first = squiggle.workspace_symbols("area").await.unwrap();
    let again = squiggle.workspace_symbols("area").await.unwrap();

    let found: Vec<(String, String, u32, Option<String>)> = first
        .items
        .iter()
        .map(|s| (s.file.clone(), s.name.clone(), s.line, s.container.clone()))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "deep/sub3/lib.fake".to_string(),
                "area".to_string(),
                1,
                None
            ),
            (
                "shapes.fake".to_string(),
                "area".to_string(),
                2,
                Some("Shape".to_string())
            ),
            ("sub1/lib.fake".to_string(), "area".to_string(), 1, None),
            ("sub2/lib.fake".to_string(), "area".to_string(), 1, None),
        ],
        "{:?}",
        first.notes
    );
    assert_eq!(first.notes, Vec::<String>::new());
    assert_eq!(again.items, first.items);
    let roots: Vec<_> = squiggle
        .status()
        .await
        .into_iter()
        .map(|status| status.root)
        .collect();
    assert_eq!(roots.len(), 1, "one server, for the root: {roots:?}");
    assert_eq!(ws.received("initialize").len(), 1);
    let opened = ws.received("textDocument/didOpen");
    assert_eq!(opened.len(), 1, "one file opened for the search");
    assert!(opened[0]["params"]["textDocument"]["uri"]
        .as_str()
        .unwrap()
        .ends_with("/ws/shapes.fake"));
    squiggle.shutdown().await;
}

#[tokio::test]
async fn a_root_without_files_of_its_own_borrows_one_and_closes_it_after() {
    let ws = FakeWorkspace::new();
    for sub in ["sub1", "sub2"] {
        ws.write(&format!("{sub}/fake.toml"), "");
        ws.write(&format!("{sub}/lib.fake"), "function area\n");
    }
    let script = json!({"symbols": true, "workspace_symbols": true});
    let squiggle = ws.start(vec![ws.scripted("fake", &script)]).await;

    let answer = squiggle.workspace_symbols("area").await.unwrap();

    let files: Vec<&str> = answer.items.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(
        files,
        vec!["sub1/lib.fake", "sub2/lib.fake"],
        "{:?}",
        answer.notes
    );
    assert_eq!(ws.received("initialize").len(), 1);
    let closed = crate::support::eventually(Duration::from_secs(10), || {
        ws.received("textDocument/didClose").len() == 1
    })
    .await;
    assert!(
        closed,
        "the borrowed file is closed again: {:?}",
        ws.messages()
    );
    squiggle.shutdown().await;
}

#[test]
fn an_mcp_client_asks_for_call_hierarchy_bodies_and_folder_diagnostics() {
    require_server("pyright-langserver", "npm install pyright");
    let (_dir, project) = fixture("nav-python");
    std::fs::create_dir_all(project.join("pkg")).unwrap();
    std::fs::write(project.join("pkg/bad.py"), "x: int = \"text\"\n").unwrap();
    std::fs::write(project.join("pkg/good.py"), "y: int = 1\n").unwrap();

    let stdout = run_client("breadth", &project);

    for step in [
        "list breadth tools",
        "call hierarchy",
        "definition with body",
        "type definition and implementation",
        "workspace diagnostics",
    ] {
        assert!(
            stdout.contains(&format!("ok {step}\n")),
            "step {step}:\n{stdout}"
        );
    }
    crate::support::assert_no_process_in(&project);
}

#[test]
fn the_tool_list_stays_under_8000_characters() {
    let (_dir, project) = fixture("nav-python");
    let limit = Duration::from_secs(20);
    let mut mcp = Mcp::start(&project, limit);

    let listed = mcp.request("tools/list", json!({}), limit);
    mcp.close(limit);

    let tools = &listed["result"]["tools"];
    let size = serde_json::to_string(&listed["result"]).unwrap().len();
    eprintln!(
        "tools/list: {} tools, {size} characters",
        tools.as_array().unwrap().len()
    );
    assert!(tools.as_array().unwrap().len() >= 10, "{listed}");
    assert!(size < 8_000, "tools/list is {size} characters: {listed}");
}
