//! The contracts of the reference documents (`../shared/reference/`), one test per rule, named
//! for it, driving the doors a host built on those documents uses (`serve`, `mcp`, the Rust
//! API). `docs/contracts.md` maps each rule to where it is honoured.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::support::{fake_lsp_bin, FakeWorkspace, Mcp, Serve};
use serde_json::json;
use squiggle_actors::{NavError, Target};

const LIMIT: Duration = Duration::from_secs(30);

/// A workspace whose `.fake` files the fake server serves; a `.txt` file has no server.
fn workspace() -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    ws.write("squiggle.toml", &ws.fake_toml(&[]));
    ws
}

/// `serve`, once it said `lsp/ready`.
fn serve(ws: &FakeWorkspace) -> Serve {
    let serve = Serve::start(&ws.root, &[]);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");
    serve
}

/// BR-46, BR-23: the contract's host passes pipes on `serve`'s descriptors 3 and 4 and speaks
/// MCP over them for navigation; both channels share one set of language servers, and the MCP
/// side's end ends nothing of the service.
#[test]
fn br_46_mcp_on_descriptors_3_and_4_shares_serves_language_servers() {
    let ws = workspace();
    ws.write("a.fake", "ERROR x\n");
    let (mut serve, mut mcp) = Serve::start_with_mcp_fds(&ws.root, LIMIT);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");

    serve.request(1, "lsp/checkFile", json!({"filePath": "a.fake"}));
    assert_eq!(
        serve.answer(1, LIMIT)["result"][0]["message"],
        "found ERROR: x"
    );
    let result = mcp.call("lsp_diagnostics", json!({"file": "a.fake"}), LIMIT);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("found ERROR: x"), "{result}");
    assert_eq!(ws.received("initialize").len(), 1, "one server for both");

    mcp.close(LIMIT);
    serve.request(
        2,
        "lsp/checkFile",
        json!({"filePath": "a.fake", "text": "ERROR y\n"}),
    );
    assert_eq!(
        serve.answer(2, LIMIT)["result"][0]["message"],
        "found ERROR: y"
    );
    serve.request(3, "lsp/shutdown", json!({}));
    assert_eq!(serve.answer(3, LIMIT)["result"], json!(null));
    assert_eq!(serve.wait(LIMIT), Some(0));
}

/// Goal 3: Java is served by the jdtls built-in: a `.java` file of a Maven project goes to it
/// (the fake server standing in for its command, as no registry here has jdtls).
#[test]
fn goal_3_a_java_file_goes_to_the_jdtls_built_in() {
    let ws = FakeWorkspace::new();
    let toml = (ws.fake_toml(&[]))
        .replace("[servers.fake]", "[servers.jdtls]")
        .replace("extensions = [\"fake\"]\n", "");
    ws.write("squiggle.toml", &toml);
    ws.write("pom.xml", "<project/>\n");
    ws.write("src/A.java", "class A {\n  ERROR x\n}\n");
    let mut serve = serve(&ws);

    serve.request(1, "squiggle/checkFile", json!({"filePath": "src/A.java"}));
    let result = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(
        result["diagnostics"][0]["message"], "found ERROR: x",
        "{result}"
    );
    assert_eq!(result["servers"][0]["id"], "jdtls", "{result}");
    let opened = ws.received("textDocument/didOpen");
    assert_eq!(opened[0]["params"]["textDocument"]["languageId"], "java");
}

/// Goal 3: jdtls is a type checker, so where it is not installed a `.java` file is not
/// checked, saying so and how to install it, never clean.
#[test]
fn goal_3_without_jdtls_a_java_file_is_not_checked() {
    let ws = workspace();
    ws.write("A.java", "class A {}\n");
    let mut serve = serve(&ws);

    serve.request(1, "squiggle/checkFile", json!({"filePath": "A.java"}));
    let result = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(result["outcome"], "not_checked", "{result}");
    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("jdtls") && reason.contains("install"),
        "{result}"
    );
}

/// The forge design (`000`): its `LspConfig` and `LspManager`, as a host written against it
/// calls them: refused before `ensure_started`, then a changed file's diagnostics as its
/// `LspEvent::Diagnostics` (absolute path, 0-based range) and in the snapshot's `by_file`.
#[test]
fn forge_000_a_host_gets_diagnostics_through_the_designs_api() {
    use squiggle_actors::forge::{
        DiagnosticSeverity, LspConfig, LspError, LspEvent, LspManager, LspState, ServerConfig,
    };
    let ws = FakeWorkspace::new();
    let root = std::fs::canonicalize(&ws.root).unwrap();
    let file = root.join("a.fake");
    let server = ServerConfig {
        name: "fake".into(),
        language_id: "fake".into(),
        command: fake_lsp_bin().display().to_string(),
        args: Vec::new(),
        file_extensions: vec!["fake".into()],
        root_markers: Vec::new(),
    };
    let mut lsp = LspManager::new(LspConfig {
        servers: vec![server],
    });
    assert!(matches!(
        lsp.notify_file_changed(&file, "ERROR x\n"),
        Err(LspError::NotStarted)
    ));
    assert!(matches!(
        lsp.ensure_started(&root.join("missing")),
        Err(LspError::WorkspaceRoot(_))
    ));
    lsp.ensure_started(&root).unwrap();
    lsp.notify_file_changed(&file, "ok\n  ERROR x\n").unwrap();
    lsp.notify_file_saved(&file).unwrap();

    let deadline = Instant::now() + LIMIT;
    let (mut running, mut items) = (false, None);
    while items.is_none() && Instant::now() < deadline {
        for event in lsp.poll_events(32) {
            match event {
                LspEvent::Status { server, state } => {
                    running |= server == "fake" && state == LspState::Running;
                }
                LspEvent::Diagnostics { path, items: found } if path == file => {
                    items = Some(found);
                }
                LspEvent::Diagnostics { .. } => {}
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let items = items.expect("the file's diagnostics came as an event");
    assert!(running, "the server was told Running");
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].severity, DiagnosticSeverity::Error);
    assert_eq!(items[0].message, "found ERROR: x");
    assert_eq!(
        (items[0].range.start_line, items[0].range.start_col),
        (1, 2)
    );
    let snapshot = lsp.snapshot();
    assert_eq!(snapshot.total_errors, 1);
    assert_eq!(snapshot.by_file.keys().collect::<Vec<_>>(), [&file]);
    lsp.shutdown();
    assert!(matches!(
        lsp.notify_file_saved(&file),
        Err(LspError::NotStarted)
    ));
}

/// The forge design: a server that crashes is `Stopped` with the reason, and not restarted by
/// itself.
#[test]
fn forge_000_a_crashed_server_is_stopped_with_its_reason() {
    use squiggle_actors::forge::{LspConfig, LspEvent, LspManager, LspState, ServerConfig};
    let ws = FakeWorkspace::new();
    let root = std::fs::canonicalize(&ws.root).unwrap();
    let server = ServerConfig {
        name: "fake".into(),
        language_id: "fake".into(),
        command: fake_lsp_bin().display().to_string(),
        args: vec!["--scenario".into(), "crash-on-open".into()],
        file_extensions: vec!["fake".into()],
        root_markers: Vec::new(),
    };
    let mut lsp = LspManager::new(LspConfig {
        servers: vec![server],
    });
    lsp.ensure_started(&root).unwrap();
    lsp.notify_file_changed(&root.join("a.fake"), "ERROR x\n")
        .unwrap();
    let deadline = Instant::now() + LIMIT;
    let mut stopped = None;
    while stopped.is_none() && Instant::now() < deadline {
        for event in lsp.poll_events(32) {
            if let LspEvent::Status {
                state: LspState::Stopped(reason),
                ..
            } = event
            {
                stopped = Some(reason);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let reason = stopped.expect("the crash came as Stopped");
    assert!(reason.contains("not restarted automatically"), "{reason}");
    lsp.shutdown();
}

/// BR-83: the epoch moves on with every `lsp/checkFile`, one no server takes too, so a write
/// tool's `lsp/diagnosticsAfter` (with the epoch from before its check) ends a quiet time
/// after the check rather than at its `waitMs`.
#[test]
fn br_83_the_epoch_moves_on_every_check_file_one_no_server_takes_too() {
    let ws = workspace();
    ws.write("notes.txt", "no server reads this\n");
    let mut serve = serve(&ws);

    serve.request(1, "lsp/getDiagnosticEpoch", json!({}));
    let before = serve.answer(1, LIMIT)["result"].as_u64().unwrap();
    serve.request(2, "lsp/checkFile", json!({"filePath": "notes.txt"}));
    assert_eq!(serve.answer(2, LIMIT)["result"], json!([]));
    serve.request(3, "lsp/getDiagnosticEpoch", json!({}));
    let after = serve.answer(3, LIMIT)["result"].as_u64().unwrap();
    assert!(after > before, "epoch {before} then {after}");

    // The write tool's wait: two minutes at most, ended by the check's epoch.
    let asked = Instant::now();
    serve.request(
        4,
        "lsp/diagnosticsAfter",
        json!({"afterEpoch": before, "waitMs": 120_000}),
    );
    assert_eq!(serve.answer(4, LIMIT)["result"], json!({}));
    assert!(
        asked.elapsed() < LIMIT,
        "answered after {:?}",
        asked.elapsed()
    );
    assert!(ws.server_pids().is_empty(), "no server for a .txt file");
}

/// EC-26, BR-32: a file in `node_modules` is not analysed: `squiggle/checkFile` says why, and
/// no server starts for it; `excluded_folders = []` analyses it.
#[test]
fn ec_26_a_file_in_node_modules_is_refused_and_starts_no_server() {
    let ws = workspace();
    ws.write("node_modules/pkg/x.fake", "ERROR in a dependency\n");
    let mut serve = serve(&ws);

    serve.request(
        1,
        "squiggle/checkFile",
        json!({"filePath": "node_modules/pkg/x.fake"}),
    );
    let answer = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(answer["outcome"], "not_checked", "{answer}");
    assert_eq!(
        answer["reason"],
        "in node_modules, which squiggle does not analyse (configuration key excluded_folders)"
    );
    serve.request(
        2,
        "lsp/checkFile",
        json!({"filePath": "node_modules/pkg/x.fake"}),
    );
    assert_eq!(serve.answer(2, LIMIT)["result"], json!([]));
    serve.request(3, "lsp/status", json!({}));
    let status = serve.answer(3, LIMIT)["result"].clone();
    assert!(
        ws.server_pids().is_empty(),
        "no server started for it: {status}"
    );
    serve.request(4, "lsp/shutdown", json!({}));
    serve.answer(4, LIMIT);

    // Configurable: with no excluded folder, it is checked like any other file.
    let config = format!("excluded_folders = []\n{}", ws.fake_toml(&[]));
    ws.write("squiggle.toml", &config);
    let mut serve = self::serve(&ws);
    serve.request(
        1,
        "lsp/checkFile",
        json!({"filePath": "node_modules/pkg/x.fake"}),
    );
    let found = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(found[0]["file"], "node_modules/pkg/x.fake", "{found}");
}

/// EC-26 for questions: the navigation tools refuse a file in `node_modules` before any
/// server starts, in MCP and the Rust API.
#[tokio::test]
async fn ec_26_questions_about_a_file_in_node_modules_are_refused_before_any_server_starts() {
    let ws = workspace();
    let file = ws.write("node_modules/pkg/x.fake", "let value = 1\n");
    let squiggle = ws.start(vec![ws.server("fake", &[])]).await;
    let outline = squiggle.document_symbols(&file, false).await;
    let hover = (squiggle.hover(&file, Target::At { line: 1, column: 5 })).await;
    for answer in [outline.map(|_| ()), hover.map(|_| ())] {
        assert!(
            matches!(&answer, Err(NavError::Excluded { folder, .. }) if folder == "node_modules"),
            "{answer:?}"
        );
    }
    assert!(squiggle.status().await.is_empty(), "no server started");
    squiggle.shutdown().await;

    let mut mcp = Mcp::start(&ws.root, LIMIT);
    let answer = mcp.call(
        "lsp_document_symbols",
        json!({"file": "node_modules/pkg/x.fake"}),
        LIMIT,
    );
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(answer["isError"], true, "{answer}");
    assert!(
        text.contains(
            "node_modules/pkg/x.fake is in node_modules, which squiggle does not analyse"
        ),
        "{text}"
    );
    mcp.close(LIMIT);
    assert!(ws.server_pids().is_empty(), "no server started");
}

/// B6: status says what is true: a server installed but never started is `idle` (no pid, and
/// why), and `active` with its pid once a file needed it.
#[test]
fn b6_a_server_never_started_is_idle_then_active_with_its_pid() {
    let ws = workspace();
    ws.write("a.fake", "fine\n");
    let mut serve = serve(&ws);
    let fake = |status: &serde_json::Value| {
        let servers = status.as_array().cloned().unwrap_or_default();
        servers.into_iter().find(|server| server["id"] == "fake")
    };

    serve.request(1, "lsp/status", json!({}));
    let before = fake(&serve.answer(1, LIMIT)["result"]).unwrap();
    assert_eq!(before["status"], "idle", "{before}");
    assert_eq!(before["serverPid"], serde_json::Value::Null, "{before}");
    assert_eq!(before["reason"], "starts on the first file that needs it");

    serve.request(2, "lsp/checkFile", json!({"filePath": "a.fake"}));
    serve.answer(2, LIMIT);
    serve.request(3, "lsp/status", json!({}));
    let after = fake(&serve.answer(3, LIMIT)["result"]).unwrap();
    assert_eq!(after["status"], "active", "{after}");
    assert_eq!(
        after["serverPid"].as_u64(),
        ws.server_pids().first().map(|pid| u64::from(*pid)),
        "{after}"
    );
}

/// EC-30: with `lsp = false` nothing is offered: MCP lists no tool (each would only say it is
/// disabled), and a call of one is refused as unknown.
#[test]
fn ec_30_with_lsp_false_no_mcp_tool_is_listed() {
    let ws = workspace();
    ws.write("a.fake", "ERROR x\n");
    let mut mcp = Mcp::start(&ws.root, LIMIT);
    let listed = mcp.request("tools/list", json!({}), LIMIT);
    assert!(
        listed["result"]["tools"].as_array().unwrap().len() > 1,
        "the premise: tools with lsp on: {listed}"
    );
    mcp.close(LIMIT);

    ws.write(
        "squiggle.toml",
        &format!("lsp = false\n{}", ws.fake_toml(&[])),
    );
    let mut mcp = Mcp::start(&ws.root, LIMIT);
    let listed = mcp.request("tools/list", json!({}), LIMIT);
    assert_eq!(listed["result"]["tools"], json!([]), "{listed}");
    let called = mcp.call("lsp_diagnostics", json!({"file": "a.fake"}), LIMIT);
    assert_eq!(called["isError"], true, "{called}");
    mcp.close(LIMIT);
    assert!(ws.server_pids().is_empty(), "no server started");
}

/// Integration contract 2: MCP results carry the contract's names beside squiggle's richer
/// ones: each location's `character`, hover's `content`, diagnostics under `diagnostics`.
#[test]
fn contract_2_mcp_results_carry_the_contracts_names() {
    let ws = FakeWorkspace::new();
    ws.write_scripted_toml(
        &json!({"symbols": true, "workspace_symbols": true, "definition": true, "hover": true}),
    );
    ws.write(
        "shapes.fake",
        "function area\nvariable total\ntotal = area() + 1\nERROR here\n",
    );
    let mut mcp = Mcp::start(&ws.root, LIMIT);

    let found = mcp.call(
        "lsp_goto_definition",
        json!({"file": "shapes.fake", "line": 3, "character": 9}),
        LIMIT,
    );
    let location = &found["structuredContent"]["locations"][0];
    assert_eq!(location["file"], "shapes.fake", "{found}");
    assert_eq!(location["line"], 1, "{found}");
    assert_eq!(location["character"], location["column"], "{found}");

    let hover = mcp.call(
        "lsp_hover",
        json!({"file": "shapes.fake", "line": 3, "character": 9}),
        LIMIT,
    );
    let structured = &hover["structuredContent"];
    assert_eq!(structured["content"], "the word area", "{hover}");
    assert_eq!(structured["content"], structured["hover"], "{hover}");

    // Symbols carry the contract's `range {startLine, startChar, endLine, endChar}` beside
    // their own `line`, `column` and `end_line`.
    let outline = mcp.call(
        "lsp_document_symbols",
        json!({"file": "shapes.fake"}),
        LIMIT,
    );
    let area = &outline["structuredContent"]["symbols"][0];
    assert_eq!(area["name"], "area", "{outline}");
    let range = &area["range"];
    assert_eq!(range["startLine"], 1, "{outline}");
    assert!(
        range["startChar"].as_u64().is_some_and(|c| c >= 1),
        "{outline}"
    );
    assert_eq!(range["endLine"], area["end_line"], "{outline}");
    assert!(range["endChar"].as_u64().is_some(), "{outline}");
    let found = mcp.call("lsp_workspace_symbols", json!({"query": "total"}), LIMIT);
    let total = &found["structuredContent"]["symbols"][0];
    assert_eq!(total["name"], "total", "{found}");
    assert_eq!(total["range"]["startLine"], 2, "{found}");
    assert!(total["range"]["endChar"].as_u64().is_some(), "{found}");

    let checked = mcp.call("lsp_diagnostics", json!({"file": "shapes.fake"}), LIMIT);
    let structured = &checked["structuredContent"];
    let diagnostic = &structured["diagnostics"]["shapes.fake"][0];
    assert_eq!(diagnostic["line"], 4, "{checked}");
    assert_eq!(diagnostic["character"], 1, "{checked}");
    assert_eq!(diagnostic["severity"], "error", "{checked}");
    assert_eq!(structured["diagnostics"], structured["files"], "{checked}");
    mcp.close(LIMIT);
}

/// BR-20: with `max_automatic_restarts = 0` a crashed server stays broken for the session, and
/// says why, until it is restarted explicitly (`squiggle/restart`); by default it is restarted.
#[test]
fn br_20_a_crashed_server_stays_broken_until_restarted_when_asked_to() {
    let ws = FakeWorkspace::new();
    ws.write_scripted_toml(&json!({"crash_on_text": "CRASH"}));
    let fake = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    ws.write("b.fake", "fine\n");
    // (max_automatic_restarts, the next check's outcome after the crash)
    for (max, after_crash) in [(None, "clean"), (Some(0), "not_checked")] {
        let keys = match max {
            Some(max) => format!("restart_cooldown_ms = 0\nmax_automatic_restarts = {max}\n"),
            None => "restart_cooldown_ms = 0\n".to_string(),
        };
        ws.write("squiggle.toml", &format!("{keys}{fake}"));
        let mut serve = serve(&ws);
        serve.request(
            1,
            "squiggle/checkFile",
            json!({"filePath": "a.fake", "text": "CRASH\n"}),
        );
        let crashed = serve.answer(1, LIMIT)["result"].clone();
        assert_eq!(crashed["outcome"], "not_checked", "{crashed}");
        serve.request(2, "squiggle/checkFile", json!({"filePath": "b.fake"}));
        let next = serve.answer(2, LIMIT)["result"].clone();
        assert_eq!(next["outcome"], after_crash, "{max:?}: {next}");
        if max == Some(0) {
            let why = next["reason"].as_str().unwrap_or_default().to_string()
                + next["servers"][0]["reason"].as_str().unwrap_or_default();
            assert!(why.contains("max_automatic_restarts = 0"), "{next}");
            serve.request(3, "squiggle/restart", json!({"serverId": "fake"}));
            serve.answer(3, LIMIT);
            serve.request(4, "squiggle/checkFile", json!({"filePath": "b.fake"}));
            let restarted = serve.answer(4, LIMIT)["result"].clone();
            assert_eq!(restarted["outcome"], "clean", "{restarted}");
        }
        serve.request(9, "lsp/shutdown", json!({}));
        serve.answer(9, LIMIT);
    }
}

/// BR-67: `lsp/status` gives each server's crash count, checks, timeout rate and answer
/// times this session.
#[test]
fn br_67_status_gives_each_servers_crashes_timeouts_and_answer_times() {
    let ws = FakeWorkspace::new();
    ws.write_scripted_toml(&json!({"crash_on_text": "CRASH"}));
    let fake = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    ws.write("squiggle.toml", &format!("restart_cooldown_ms = 0\n{fake}"));
    ws.write("a.fake", "fine\n");
    let mut serve = serve(&ws);
    for (id, text) in [
        (1, "fine\n"),
        (2, "ERROR x\n"),
        (3, "CRASH\n"),
        (4, "fine\n"),
    ] {
        serve.request(
            id,
            "squiggle/checkFile",
            json!({"filePath": "a.fake", "text": text}),
        );
        serve.answer(id, LIMIT);
    }
    serve.request(5, "lsp/status", json!({}));
    let status = serve.answer(5, LIMIT)["result"].clone();
    let fake = (status.as_array().unwrap().iter())
        .find(|server| server["id"] == "fake")
        .cloned()
        .unwrap();
    let metrics = &fake["metrics"];
    assert_eq!(metrics["crashes"], 1, "{fake}");
    assert_eq!(metrics["checks"], 4, "{fake}");
    assert!(metrics["timedOut"].as_u64().is_some(), "{fake}");
    assert!(metrics["timeoutPercent"].as_u64().is_some(), "{fake}");
    assert!(metrics["answerMedianMs"].as_u64().is_some(), "{fake}");
    assert!(metrics["answerP90Ms"].as_u64().is_some(), "{fake}");
}

/// B1, BR-74, EC-16: serve's feedback text is the reference's block: each file's diagnostics in
/// `<diagnostics file="relpath">`, `SEVERITY [line:col] message (code)` lines in line order,
/// `<`, `>` and `&` escaped; `feedback_format = "compact"` switches it to squiggle's own.
#[test]
fn br_74_each_file_in_a_diagnostics_tag() {
    let ws = workspace();
    ws.write(
        "src/a.fake",
        "ok\nERROR x <T> & y\nWARNING meh\nERROR first\n",
    );
    let mut serve = serve(&ws);
    serve.request(
        1,
        "squiggle/feedback",
        json!({"filePath": "src/a.fake", "scope": "edit"}),
    );
    let text = serve.answer(1, LIMIT)["result"]["text"].clone();
    assert_eq!(
        text,
        "\nLSP errors detected in this file, please fix:\n<diagnostics file=\"src/a.fake\">\n\
         ERROR [2:1] found ERROR: x &lt;T&gt; &amp; y (E1)\n\
         ERROR [4:1] found ERROR: first (E1)\n\
         </diagnostics>"
    );
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);

    let config = format!("feedback_format = \"compact\"\n{}", ws.fake_toml(&[]));
    ws.write("squiggle.toml", &config);
    let mut serve = self::serve(&ws);
    serve.request(
        1,
        "squiggle/feedback",
        json!({"filePath": "src/a.fake", "scope": "edit"}),
    );
    let text = serve.answer(1, LIMIT)["result"]["text"].clone();
    assert_eq!(
        text,
        "\nLSP errors detected in this file, please fix:\nsrc/a.fake:\n2:1 found ERROR: x <T> & y (E1)\n4:1 found ERROR: first (E1)"
    );
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);
}

/// The same key the other way: the hooks' and `check --scope`'s compact block by default, the
/// reference's with `feedback_format = "tagged"`.
#[test]
fn br_74_the_tagged_block_where_squiggle_owns_the_door_on_request() {
    let ws = workspace();
    ws.write("a.fake", "ERROR x <T>\n");
    let args = ["check", "--scope", "edit", "a.fake"];
    let compact = crate::support::squiggle(&ws.root, &args);
    assert_eq!(
        compact.stdout,
        "\nLSP errors detected in this file, please fix:\na.fake:\n1:1 found ERROR: x <T> (E1)"
    );
    let config = format!("feedback_format = \"tagged\"\n{}", ws.fake_toml(&[]));
    ws.write("squiggle.toml", &config);
    let tagged = crate::support::squiggle(&ws.root, &args);
    assert_eq!(
        tagged.stdout,
        "\nLSP errors detected in this file, please fix:\n<diagnostics file=\"a.fake\">\nERROR [1:1] found ERROR: x &lt;T&gt; (E1)\n</diagnostics>"
    );
}
