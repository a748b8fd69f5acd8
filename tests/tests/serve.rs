//! `squiggle serve`: the JSON-RPC contract, its error paths and process lifetime, against the
//! fake server; and interoperability with vscode-jsonrpc (what TypeScript hosts use) against
//! real servers.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use squiggle_tests::{
    assert_all_gone, fixture, installed_server_dirs, path_with_servers, require_server,
    squiggle_bin, xtask_bin, FakeWorkspace, Serve,
};

const LIMIT: Duration = Duration::from_secs(20);

/// A workspace whose `.fake` files are served by the fake server with these args.
fn workspace(args: &[&str]) -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    let args: Vec<String> = ["fake-server"]
        .iter()
        .chain(args)
        .map(|a| format!("{a:?}"))
        .collect();
    let config = format!(
        "settle_ms = 20\n[servers.fake]\ncommand = {:?}\nargs = [{}]\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {:?}, FAKE_LSP_LOG = {:?} }}\n",
        xtask_bin().display().to_string(),
        args.join(", "),
        ws.pids.display().to_string(),
        ws.log.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws
}

/// Starts the service and checks that `lsp/ready` comes first.
fn serve(ws: &FakeWorkspace, env: &[(&str, &str)]) -> Serve {
    let serve = Serve::start(&ws.root, env);
    assert_eq!(
        serve.next(LIMIT),
        json!({"jsonrpc": "2.0", "method": "lsp/ready", "params": {}})
    );
    serve
}

#[test]
fn check_file_answers_the_contract_shape_after_ready() {
    let ws = workspace(&[]);
    ws.write("src/a.fake", "fine\n  ERROR bad <T> & co\nWARNING meh\n");
    let mut serve = serve(&ws, &[("SQUIGGLE_LOG", "debug")]);

    serve.request(
        1,
        "lsp/checkFile",
        json!({"filePath": ws.root.join("src/a.fake")}),
    );
    assert_eq!(
        serve.answer(1, LIMIT)["result"],
        json!([{"file": "src/a.fake", "line": 2, "character": 3, "severity": "error",
                "message": "found ERROR: bad &lt;T&gt; &amp; co", "code": "E1", "source": "fake"}])
    );
    serve.request(
        2,
        "lsp/checkFile",
        json!({"filePath": "src/a.fake", "text": "ERROR x\n"}),
    );
    assert_eq!(
        serve.answer(2, LIMIT)["result"][0]["message"],
        "found ERROR: x",
        "text is authoritative"
    );
    serve.request(3, "lsp/diagnostics", json!({}));
    assert_eq!(
        serve.answer(3, LIMIT)["result"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["src/a.fake"]
    );
    serve.request(4, "lsp/shutdown", json!({}));
    assert_eq!(serve.answer(4, LIMIT)["result"], Value::Null);
    assert_eq!(serve.wait(LIMIT), Some(0));
}

#[test]
fn a_fifo_named_like_a_source_file_is_refused_and_the_service_goes_on() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    squiggle_tests::mkfifo(&ws.root.join("fifo.fake"));
    let mut serve = serve(&ws, &[]);
    let _hung = squiggle_tests::KillIfPanicking(serve.pid());

    // More than the runtime's two workers, each of which a blocking open() would hold forever.
    serve.request(1, "lsp/checkFile", json!({"filePath": "fifo.fake"}));
    serve.request(2, "lsp/checkFile", json!({"filePath": "fifo.fake"}));
    serve.request(
        3,
        "lsp/checkFile",
        json!({"filePath": "fifo.fake", "text": ""}),
    );
    serve.request(4, "lsp/documentSymbols", json!({"file": "fifo.fake"}));
    serve.request(
        5,
        "lsp/hover",
        json!({"file": "fifo.fake", "line": 1, "character": 1}),
    );
    serve.request(6, "lsp/checkFile", json!({"filePath": "a.fake"}));

    for id in [1, 2, 3] {
        assert_eq!(serve.answer(id, LIMIT)["result"], json!([]), "request {id}");
    }
    for id in [4, 5] {
        let refused = serve.answer(id, LIMIT);
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("fifo.fake: cannot be read: not a regular file (a FIFO)"),
            "request {id}: {refused}"
        );
    }
    assert_eq!(
        serve.answer(6, LIMIT)["result"][0]["message"],
        "found ERROR: x",
        "the service goes on"
    );
    let mut child = serve.close_stdin();
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the service did not exit on EOF");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_all_gone(&ws.server_pids(), "server");
}

#[test]
fn malformed_input_gets_errors_and_the_service_goes_on() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);

    serve.send_raw(b"{not json");
    assert_eq!(serve.next(LIMIT)["error"]["code"], -32700);
    serve.send(json!({"jsonrpc": "2.0", "id": 7}));
    let invalid = serve.next(LIMIT);
    assert_eq!(
        (invalid["id"].clone(), invalid["error"]["code"].clone()),
        (json!(7), json!(-32600))
    );
    serve.request(8, "lsp/nope", json!({}));
    assert_eq!(serve.answer(8, LIMIT)["error"]["code"], -32601);
    serve.request(9, "lsp/checkFile", json!({"path": "a.fake"}));
    let bad_params = serve.answer(9, LIMIT);
    assert_eq!(bad_params["error"]["code"], -32602);
    assert!(bad_params["error"]["message"]
        .as_str()
        .unwrap()
        .contains("filePath"));

    serve.request(10, "lsp/checkFile", json!({"filePath": "a.fake"}));
    assert_eq!(
        serve.answer(10, LIMIT)["result"].as_array().unwrap().len(),
        1,
        "the service goes on"
    );
    serve.request(11, "lsp/checkFile", json!({"filePath": "/etc/hostname"}));
    assert_eq!(
        serve.answer(11, LIMIT)["result"],
        json!([]),
        "outside the root: no diagnostics, no error"
    );
    serve.request(12, "lsp/shutdown", json!({}));
    serve.answer(12, LIMIT);
}

#[test]
fn cancel_ends_a_wait_early_with_what_is_known() {
    let ws = FakeWorkspace::new();
    let script = ws.script(&json!({"publish_delay_ms": 60000}));
    ws.write(
        "squiggle.toml",
        &format!(
            "diagnostic_timeout_ms = 60000\nfirst_touch_timeout_ms = 60000\n[servers.fake]\ncommand = {:?}\nargs = [\"fake-server\", \"--script\", {:?}]\nextensions = [\"fake\"]\n",
            xtask_bin().display().to_string(),
            script.display().to_string()
        ),
    );
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);

    let started = Instant::now();
    serve.request(1, "lsp/checkFile", json!({"filePath": "a.fake"}));
    serve.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}));
    let answer = serve.answer(1, LIMIT);

    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cancel ended the 60 s wait"
    );
    assert_eq!(
        answer["result"],
        json!([]),
        "what is known so far, not an error"
    );
    serve.request(2, "lsp/getDiagnosticEpoch", json!({}));
    serve.request(
        3,
        "lsp/diagnosticsAfter",
        json!({"afterEpoch": 1_000_000, "waitMs": 100}),
    );
    assert!(serve.answer(2, LIMIT)["result"].is_u64());
    assert_eq!(
        serve.answer(3, LIMIT)["result"],
        json!({}),
        "diagnosticsAfter returns after waitMs"
    );
    serve.request(4, "lsp/shutdown", json!({}));
    serve.answer(4, LIMIT);
}

#[test]
fn status_covers_every_server_sorted_and_lsp_false_says_so() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);
    serve.request(1, "lsp/checkFile", json!({"filePath": "a.fake"}));
    serve.answer(1, LIMIT);
    serve.request(2, "lsp/status", json!({}));
    let status = serve.answer(2, LIMIT)["result"].as_array().unwrap().clone();
    let ids: Vec<&str> = status.iter().map(|s| s["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    for id in [
        "basedpyright",
        "eslint",
        "fake",
        "pyright",
        "ruff",
        "rust-analyzer",
        "typescript",
    ] {
        assert!(ids.contains(&id), "{id} listed");
    }
    let fake = status.iter().find(|s| s["id"] == "fake").unwrap();
    assert_eq!(fake["status"], "active");
    assert_eq!(
        fake["serverPid"].as_u64(),
        Some(u64::from(ws.server_pids()[0]))
    );
    serve.request(3, "lsp/shutdown", json!({}));
    serve.answer(3, LIMIT);

    let off = FakeWorkspace::new();
    let mut serve = serve_with_bootstrap(&off, json!({"workspaceRoot": off.root, "config": false}));
    serve.request(1, "lsp/status", json!({}));
    let status = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(status.as_array().unwrap().len(), 1);
    assert_eq!(status[0]["reason"], "LSP disabled by configuration");
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);
}

#[test]
fn status_and_checks_say_a_found_command_that_does_not_run_is_unavailable() {
    let ws = workspace(&[]);
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    config.push_str(&format!(
        "[servers.fake-fallback]\ncommand = {:?}\nargs = [\"fake-server\"]\nextensions = [\"fake\"]\nfallback_for = \"fake\"\n",
        xtask_bin().display().to_string()
    ));
    ws.write("squiggle.toml", &config);
    ws.write("src/main.rs", "fn main() {}\n");
    // A shim in front of PATH, like rustup's proxy without the rust-analyzer component.
    let bin = ws.root.parent().unwrap().join("bin");
    let message = "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.";
    let shim = squiggle_tests::broken_shim(&bin, "rust-analyzer", message);
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&path_with_servers())),
    )
    .unwrap();
    let mut serve = serve(&ws, &[("PATH", path.to_str().unwrap())]);
    let status_of = |serve: &mut Serve, id: i64, server: &str| {
        serve.request(id, "lsp/status", json!({}));
        let status = serve.answer(id, LIMIT)["result"].clone();
        let entry = status
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == server)
            .cloned();
        let entry = entry.unwrap();
        (entry["status"].clone(), entry["reason"].clone())
    };
    let does_not_run = format!(
        "`rust-analyzer` ({}) is found but does not run: `rust-analyzer --version` exited with status 1: {message} (install: rustup component add rust-analyzer)",
        shim.display()
    );

    let before = status_of(&mut serve, 1, "rust-analyzer");
    let fallback = status_of(&mut serve, 2, "fake-fallback");
    serve.request(3, "lsp/checkFile", json!({"filePath": "src/main.rs"}));
    let checked = serve.answer(3, LIMIT)["result"].clone();
    let after = status_of(&mut serve, 4, "rust-analyzer");

    assert_eq!(before, (json!("unavailable"), json!(does_not_run)));
    assert_eq!(
        fallback,
        (
            json!("disabled"),
            json!("fallback, not needed: fake is installed")
        )
    );
    assert_eq!(checked, json!([]));
    assert_eq!(after, before, "unavailable after a check, not broken");
    assert_eq!(
        squiggle_tests::shim_calls(&shim),
        ["--version"],
        "probed once per session, never started as a server"
    );
    serve.request(5, "lsp/shutdown", json!({}));
    serve.answer(5, LIMIT);
}

fn serve_with_bootstrap(ws: &FakeWorkspace, bootstrap: Value) -> Serve {
    let serve = Serve::start(&ws.root, &[("LSP_BOOTSTRAP", &bootstrap.to_string())]);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");
    serve
}

#[test]
fn feedback_returns_the_text_a_tool_appends() {
    let ws = workspace(&[]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);
    serve.request(
        1,
        "squiggle/feedback",
        json!({"filePath": "a.fake", "text": "ERROR y\n", "scope": "edit"}),
    );
    let result = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(
        result["text"],
        "\nLSP errors detected in this file, please fix:\n<diagnostics file=\"a.fake\">\nERROR [1:1] found ERROR: y (E1)\n</diagnostics>"
    );
    assert_eq!(result["diagnostics"][0]["message"], "found ERROR: y");
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);
}

/// Starts a service with a grandchild-spawning server and returns it with the pids to watch.
fn serving_with_grandchild() -> (FakeWorkspace, Serve, Vec<u32>) {
    let ws = workspace(&["--scenario", "grandchild"]);
    ws.write("a.fake", "ERROR x\n");
    let mut serve = serve(&ws, &[]);
    serve.request(1, "lsp/checkFile", json!({"filePath": "a.fake"}));
    assert_eq!(
        serve.answer(1, LIMIT)["result"].as_array().unwrap().len(),
        1
    );
    let pids: Vec<u32> = ws
        .server_pids()
        .into_iter()
        .chain(ws.grandchild_pids())
        .collect();
    assert_eq!(pids.len(), 2);
    (ws, serve, pids)
}

#[test]
fn shutdown_leaves_nothing_running() {
    let (_ws, mut serve, pids) = serving_with_grandchild();
    serve.request(2, "lsp/shutdown", json!({}));
    assert_eq!(serve.answer(2, LIMIT)["result"], Value::Null);
    assert_all_gone(&pids, "server and grandchild");
    assert_eq!(serve.wait(LIMIT), Some(0));
}

#[test]
fn closing_stdin_stops_the_service_and_its_servers() {
    let (_ws, serve, pids) = serving_with_grandchild();
    let mut child = serve.close_stdin();
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the service exits when stdin closes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_all_gone(&pids, "server and grandchild");
}

#[test]
fn sigterm_stops_the_service_and_its_servers() {
    let (_ws, mut serve, pids) = serving_with_grandchild();
    serve.signal(libc::SIGTERM);
    assert_eq!(serve.wait(LIMIT), Some(0));
    assert_all_gone(&pids, "server and grandchild");
}

#[test]
fn sigkill_leaves_no_server_and_no_grandchild() {
    let (_ws, mut serve, pids) = serving_with_grandchild();
    serve.signal(libc::SIGKILL);
    assert_eq!(serve.wait(LIMIT), None, "killed by the signal");
    assert_all_gone(&pids, "server and grandchild");
}

#[test]
fn a_typescript_host_drives_it_with_vscode_jsonrpc() {
    require_server("pyright-langserver", "npm install pyright");
    require_server("ruff", "pip install ruff");
    let node_modules = installed_server_dirs()[0].parent().unwrap().to_path_buf();
    assert!(
        node_modules.join("vscode-jsonrpc").is_dir(),
        "vscode-jsonrpc is not installed: run `cargo xtask install-servers`"
    );
    let (_dir, project) = fixture("python");
    let script = squiggle_tests::repo_root().join("tests/node/serve-interop.cjs");

    let output = std::process::Command::new("node")
        .arg(script)
        .env("SQUIGGLE_BIN", squiggle_bin())
        .env("PROJECT", &project)
        .env("NODE_MODULES", &node_modules)
        .env("PATH", path_with_servers())
        .output()
        .unwrap();

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for step in [
        "ready",
        "checkFile",
        "epochs and diagnosticsAfter",
        "status",
        "cancel",
        "unknown method",
        "shutdown",
    ] {
        assert!(
            stdout.contains(&format!("ok {step}")),
            "step {step}:\n{stdout}"
        );
    }
    squiggle_tests::assert_no_process_in(&project);
}
