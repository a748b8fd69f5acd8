//! The `squiggle` command line against the fake server: formats, exit codes, configuration
//! errors, and no process left behind.

#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};
use std::time::Duration;

use squiggle_tests::{
    assert_all_gone, broken_shim, path_with_servers, shim_calls, squiggle, squiggle_within,
    xtask_bin, FakeWorkspace,
};

/// A workspace whose `squiggle.toml` serves `.fake` files with the fake server.
fn workspace(scenario: &str) -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    let config = format!(
        "settle_ms = 20\n[servers.fake]\ncommand = {command:?}\nargs = [\"fake-server\", \"--scenario\", {scenario:?}]\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {pids:?}, FAKE_LSP_LOG = {log:?} }}\n",
        command = xtask_bin().display().to_string(),
        pids = ws.pids.display().to_string(),
        log = ws.log.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws
}

#[test]
fn text_format_prints_one_line_per_error_and_exits_one() {
    let ws = workspace("default");
    ws.write("src/a.fake", "x\n  ERROR broken <thing>\nWARNING meh\n");

    let run = squiggle(&ws.root, &["check", "src/a.fake"]);

    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "src/a.fake:2:3: error[E1]: found ERROR: broken <thing>\n"
    );
    assert!(
        run.stderr.contains("1 error in 1 file"),
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn severity_flag_chooses_what_is_reported() {
    let ws = workspace("default");
    ws.write("a.fake", "WARNING meh\nHINT psst\n");

    let errors_only = squiggle(&ws.root, &["check", "a.fake"]);
    let with_warnings = squiggle(
        &ws.root,
        &["check", "--severity", "error,warning", "a.fake"],
    );

    assert_eq!(errors_only.code, 0);
    assert_eq!(errors_only.stdout, "");
    assert_eq!(with_warnings.code, 1);
    assert_eq!(
        with_warnings.stdout,
        "a.fake:1:1: warning[W1]: found WARNING: meh\n"
    );
}

#[test]
fn llm_format_is_the_block_an_edit_tool_appends() {
    let ws = workspace("default");
    ws.write("a.fake", "ERROR x < y & z\nok\nERROR second\n");

    let run = squiggle(&ws.root, &["check", "--format", "llm", "a.fake"]);

    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "<diagnostics file=\"a.fake\">\nERROR [1:1] found ERROR: x &lt; y &amp; z (E1)\nERROR [3:1] found ERROR: second (E1)\n</diagnostics>"
    );
}

#[test]
fn json_format_has_the_stable_schema() {
    let ws = workspace("default");
    ws.write("b.fake", "fine\n");
    ws.write("a.fake", "  ERROR x\n");

    let run = squiggle(&ws.root, &["check", "--format", "json", "b.fake", "a.fake"]);

    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report,
        json!({
            "files": {
                "a.fake": [{"line": 1, "column": 3, "end_line": 1, "end_column": 8, "severity": "error",
                            "message": "found ERROR: x", "code": "E1", "source": "fake"}],
                "b.fake": []
            },
            "servers": [{"id": "fake", "root": ".", "status": "active", "reason": null}],
            "timed_out": []
        })
    );
}

#[test]
fn an_invalid_config_file_exits_two_naming_file_line_and_key() {
    let ws = FakeWorkspace::new();
    ws.write(
        "squiggle.toml",
        "settle_ms = 10\ndiagnostic_timeout_ms = \"soon\"\n",
    );
    ws.write("a.fake", "ERROR x\n");

    let run = squiggle(&ws.root, &["check", "a.fake"]);

    assert_eq!(run.code, 2);
    let expected = format!("{}:2:", ws.root.join("squiggle.toml").display());
    assert!(run.stderr.contains(&expected), "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("diagnostic_timeout_ms"),
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn a_config_file_that_is_a_device_a_fifo_or_huge_is_refused_naming_it() {
    let ws = workspace("default");
    ws.write("a.fake", "ERROR x\n");
    let fifo = ws.root.join("fifo.toml");
    squiggle_tests::mkfifo(&fifo);
    let huge = ws.write("huge.toml", &"# padding\n".repeat(500_000));
    let limit = Duration::from_secs(20);

    for (file, why) in [
        ("/dev/zero", "not a regular file (a character device)"),
        (fifo.to_str().unwrap(), "not a regular file (a FIFO)"),
        (
            huge.to_str().unwrap(),
            "too large (5000000 bytes, limit 4194304)",
        ),
    ] {
        for command in ["check", "status"] {
            let mut args = vec![command, "--config", file];
            if command == "check" {
                args.push("a.fake");
            }
            let run = squiggle_within(&ws.root, &args, &[], limit);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            let expected = format!("squiggle: {file}: cannot read: {why}\n");
            assert_eq!(run.stderr, expected, "{args:?}");
        }
    }
    assert!(ws.server_pids().is_empty(), "no server started");
}

#[test]
fn usage_errors_exit_two() {
    let ws = FakeWorkspace::new();
    assert_eq!(squiggle(&ws.root, &["check"]).code, 2);
    assert_eq!(
        squiggle(&ws.root, &["check", "--format", "yaml", "a.fake"]).code,
        2
    );
    assert_eq!(
        squiggle(&ws.root, &["check", "--severity", "fatal", "a.fake"]).code,
        2
    );
}

#[test]
fn no_server_or_grandchild_outlives_the_command() {
    let ws = workspace("grandchild");
    ws.write("a.fake", "ERROR x\n");

    let run = squiggle(&ws.root, &["check", "a.fake"]);

    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_all_gone(&ws.server_pids(), "server");
    assert_all_gone(&ws.grandchild_pids(), "grandchild");
}

#[test]
fn status_shows_configured_servers_and_why_one_cannot_run() {
    let ws = workspace("default");
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    config.push_str("[servers.missing]\ncommand = \"squiggle-no-such-server\"\nextensions = [\"nope\"]\ninstall_hint = \"pip install nope\"\n[servers.gopls]\nenabled = false\n");
    ws.write("squiggle.toml", &config);

    let run = squiggle(&ws.root, &["status", "--format", "json"]);

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let status: Value = serde_json::from_str(&run.stdout).unwrap();
    let list = &status["servers"];
    let state = |id: &str| {
        let entry = list
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap();
        (
            entry["state"].as_str().unwrap().to_string(),
            entry["detail"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(state("fake").0, "installed");
    assert_eq!(state("gopls").0, "disabled");
    let (missing, detail) = state("missing");
    assert_eq!(missing, "unavailable");
    assert!(detail.contains("pip install nope"), "detail: {detail}");
}

#[test]
fn status_says_which_servers_run_which_one_is_not_needed_and_why_one_does_not_run() {
    let ws = workspace("default");
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    config.push_str(&format!(
        "[servers.fake-fallback]\ncommand = {:?}\nargs = [\"fake-server\"]\nextensions = [\"fake\"]\nfallback_for = \"fake\"\n",
        xtask_bin().display().to_string()
    ));
    ws.write("squiggle.toml", &config);
    // A shim in front of PATH, like rustup's proxy without the rust-analyzer component.
    let bin = ws.root.parent().unwrap().join("bin");
    let message = "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.";
    let shim = broken_shim(&bin, "rust-analyzer", message);
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&path_with_servers())),
    )
    .unwrap();
    let env = [("PATH", path.as_os_str())];
    let limit = Duration::from_secs(20);

    let json_run = squiggle_within(&ws.root, &["status", "--format", "json"], &env, limit);
    let text_run = squiggle_within(&ws.root, &["status"], &env, limit);

    assert_eq!(json_run.code, 0, "stderr: {}", json_run.stderr);
    let status: Value = serde_json::from_str(&json_run.stdout).unwrap();
    assert_eq!(status["workspace_root"], ws.root.display().to_string());
    let row = |id: &str| {
        let rows = status["servers"].as_array().unwrap();
        let row = rows.iter().find(|s| s["id"] == id).unwrap();
        (row["state"].clone(), row["detail"].clone())
    };
    let does_not_run = format!(
        "`rust-analyzer` ({}) is found but does not run: `rust-analyzer --version` exited with status 1: {message} (install: rustup component add rust-analyzer)",
        shim.display()
    );
    assert_eq!(
        row("rust-analyzer"),
        (json!("unavailable"), json!(does_not_run))
    );
    assert_eq!(
        row("fake-fallback"),
        (
            json!("not needed"),
            json!("fallback, not needed: fake is installed")
        )
    );
    assert_eq!(row("fake").0, "installed");
    assert_eq!(
        status["file_types"]["rs"],
        json!({"servers": [], "unavailable": ["rust-analyzer"]})
    );
    assert_eq!(
        status["file_types"]["fake"],
        json!({"servers": ["fake"], "unavailable": []})
    );

    assert_eq!(text_run.code, 0, "stderr: {}", text_run.stderr);
    let root_line = format!("workspace root: {}\n", ws.root.display());
    assert!(
        text_run.stdout.starts_with(&root_line),
        "{}",
        text_run.stdout
    );
    for line in [
        format!("rust-analyzer  unavailable  {does_not_run}  [.rs]"),
        ".rs: nothing runs (rust-analyzer is unavailable)".to_string(),
        ".fake: fake".to_string(),
    ] {
        assert!(
            text_run.stdout.lines().any(|l| l.trim_end() == line),
            "{line}\n{}",
            text_run.stdout
        );
    }
    assert!(
        shim_calls(&shim).iter().all(|call| call == "--version"),
        "only probed: {:?}",
        shim_calls(&shim)
    );
}

#[test]
fn servers_lists_the_built_in_table_with_install_hints() {
    let ws = FakeWorkspace::new();
    let run = squiggle(&ws.root, &["servers"]);
    assert_eq!(run.code, 0);
    for id in [
        "rust-analyzer",
        "typescript",
        "eslint",
        "pyright",
        "basedpyright",
        "ruff",
        "gopls",
        "clangd",
        "bash",
        "yaml",
    ] {
        assert!(
            run.stdout.lines().any(|line| line.starts_with(id)),
            "{id} listed:\n{}",
            run.stdout
        );
    }
    assert!(
        run.stdout.contains("pip install ruff") || run.stdout.contains("/ruff"),
        "{}",
        run.stdout
    );
}

#[test]
fn missing_files_and_files_outside_the_root_are_usage_errors() {
    let ws = workspace("default");
    let outside = ws.root.parent().unwrap().join("outside.fake");
    std::fs::write(&outside, "ERROR x\n").unwrap();

    let missing = squiggle(&ws.root, &["check", "nope.fake"]);
    let refused = squiggle(&ws.root, &["check", outside.to_str().unwrap()]);

    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("nope.fake: no such file"),
        "stderr: {}",
        missing.stderr
    );
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("outside the workspace root"),
        "stderr: {}",
        refused.stderr
    );
    assert!(ws.server_pids().is_empty(), "no server started");
}
