//! The `squiggle` command line against the fake server: formats, exit codes, configuration
//! errors, and no process left behind.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::support::{
    assert_all_gone, broken_shim, fake_lsp_bin, path_with_servers, shim_calls, squiggle,
    squiggle_bin, squiggle_within, wait_until, FakeWorkspace, NO_DAEMON,
};
use serde_json::{json, Value};

/// A workspace whose `squiggle.toml` serves `.fake` files with the fake server.
fn workspace(scenario: &str) -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    let config = format!(
        "settle_ms = 20\n[servers.fake]\ncommand = {command:?}\nargs = [\"--scenario\", {scenario:?}]\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {pids:?}, FAKE_LSP_LOG = {log:?} }}\n",
        command = fake_lsp_bin().display().to_string(),
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
        "a.fake:\n1:1 found ERROR: x < y & z (E1)\n3:1 found ERROR: second (E1)"
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
            "outcomes": {
                "a.fake": {"outcome": "diagnostics", "reason": null, "missing": []},
                "b.fake": {"outcome": "clean", "reason": null, "missing": []}
            },
            "servers": [{"id": "fake", "root": ".", "status": "active", "reason": null, "basis": "version"}],
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
    crate::support::mkfifo(&fifo);
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
        "[servers.fake-fallback]\ncommand = {:?}\nargs = []\nextensions = [\"fake\"]\nfallback_for = \"fake\"\n",
        fake_lsp_bin().display().to_string()
    ));
    ws.write("squiggle.toml", &config);
    // Rust and fake files, so that status lists their servers among what the workspace uses.
    ws.write("src/lib.rs", "");
    ws.write("a.fake", "fine\n");
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
        format!("rust-analyzer unavailable {does_not_run} [.rs]"),
        ".rs: nothing runs (rust-analyzer is unavailable)".to_string(),
        ".fake: fake".to_string(),
    ] {
        // Columns are padded to the longest id, and long lines wrap: compare words.
        let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words(&text_run.stdout).contains(&words(&line)),
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
fn status_shows_what_the_workspace_uses_first_folds_the_rest_and_keeps_lines_short() {
    let ws = workspace("default");
    ws.write("a.fake", "fine\n");
    // A project whose TypeScript is 5.9: `tsc --lsp` cannot serve it, typescript-language-server
    // does. Both are shims that work.
    let bin = ws.root.join("node_modules/.bin");
    let package = ws.root.join("node_modules/typescript");
    std::fs::create_dir_all(package.join("bin")).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    ws.write(
        "node_modules/typescript/package.json",
        r#"{"name": "typescript", "version": "5.9.3"}"#,
    );
    let tsc = ws.write(
        "node_modules/typescript/bin/tsc",
        "#!/bin/sh\necho 'Version 5.9.3'\n",
    );
    let server = ws.write(
        "node_modules/.bin/typescript-language-server",
        "#!/bin/sh\necho 5.0.0\n",
    );
    for program in [&tsc, &server] {
        std::fs::set_permissions(program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::os::unix::fs::symlink("../typescript/bin/tsc", bin.join("tsc")).unwrap();
    ws.write("app.ts", "export const x = 1;\n");
    let limit = Duration::from_secs(20);

    let text = squiggle_within(&ws.root, &["status"], &[], limit);
    let all = squiggle_within(&ws.root, &["status", "--all"], &[], limit);

    assert_eq!(text.code, 0, "stderr: {}", text.stderr);
    let out = &text.stdout;
    let first_word = |l: &str| l.split_whitespace().next().map(str::to_string);
    let shown: Vec<String> = out
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .filter(|l| !l.starts_with(' '))
        .filter_map(first_word)
        .collect();
    assert_eq!(
        shown,
        [
            "biome",
            "eslint",
            "fake",
            "taplo",
            "typescript",
            "typescript-native"
        ],
        "{out}"
    );
    let also = out
        .lines()
        .position(|l| l.starts_with("also known (squiggle status --all): "))
        .unwrap();
    let folded = out
        .lines()
        .skip(also)
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        folded.contains(" pyright, ") && folded.contains(" clangd, "),
        "{out}"
    );
    assert!(folded.ends_with(", vue, yaml, zls"), "{out}");
    for output in [out, &all.stdout] {
        // Lines wrap at 100 characters; only a path too long for any line, last on its line,
        // goes past.
        let too_long = output.lines().filter(|l| match l.rsplit_once(' ') {
            Some((head, last)) => head.trim_end().chars().count() > 100 || !last.contains('/'),
            None => false,
        } && l.chars().count() > 100);
        assert_eq!(too_long.count(), 0, "{output}");
    }
    // TypeScript 5.9 is a fallback choice, not a failure, and no upgrade is advised.
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let tsc_link = bin.join("tsc");
    let native = format!(
        "typescript-native not used `tsc` ({}): it is TypeScript 5.9.3; `tsc --lsp` needs TypeScript 7 or newer; typescript is used instead",
        tsc_link.display()
    );
    assert!(words.contains(&native), "{out}");
    assert!(
        !out.contains("does not run") && !out.contains("typescript@7"),
        "{out}"
    );
    // --all lists every server.
    let rows = |o: &str| o.lines().filter(|l| l.starts_with("zls ")).count();
    assert_eq!((rows(out), rows(&all.stdout)), (0, 1), "{}", all.stdout);
    assert!(!all.stdout.contains("also known"), "{}", all.stdout);
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

/// Adds servers to a workspace's `squiggle.toml` that each keep a file type from being checked:
/// `.nope` (command not installed), `.off` (disabled), `.crash` (crashes on `initialize`),
/// `.ocrash` (crashes when the file is opened); `.xyz` has no server at all.
fn add_failing_servers(ws: &FakeWorkspace) {
    let fake_lsp = fake_lsp_bin().display().to_string();
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    config.push_str(&format!(
        "[servers.missing]\ncommand = \"squiggle-no-such-server\"\nextensions = [\"nope\"]\ninstall_hint = \"pip install nope\"\n\
         [servers.off]\ncommand = {fake_lsp:?}\nargs = []\nextensions = [\"off\"]\nenabled = false\n\
         [servers.crashy]\ncommand = {fake_lsp:?}\nargs = [\"--scenario\", \"crash-on-init\"]\nextensions = [\"crash\"]\n\
         [servers.opencrash]\ncommand = {fake_lsp:?}\nargs = [\"--scenario\", \"crash-on-open\"]\nextensions = [\"ocrash\"]\n"
    ));
    ws.write("squiggle.toml", &config);
}

/// Prepends top-level settings to a workspace's `squiggle.toml`.
fn prepend_settings(ws: &FakeWorkspace, settings: &str) {
    let config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    ws.write("squiggle.toml", &format!("{settings}\n{config}"));
}

/// Why the files of `add_failing_servers` are not checked, as the text format says it.
const NOT_CHECKED_LINES: &str = "b.nope: not checked: missing: `squiggle-no-such-server` is not installed (install: pip install nope)\n\
    c.xyz: not checked: no language server handles this file type\n\
    d.off: not checked: its language servers are disabled by configuration (off)\n\
    e.crash: not checked: crashy is broken: the server exited (exit status: 3): fake-server: crashing on purpose\n\
    f.ocrash: not checked: opencrash is broken: the server exited (exit status: 3): fake-server: crashing on purpose\n";

const FAILING_FILES: [&str; 5] = ["b.nope", "c.xyz", "d.off", "e.crash", "f.ocrash"];

fn write_failing_files(ws: &FakeWorkspace) {
    for file in FAILING_FILES {
        ws.write(file, "ERROR never seen\n");
    }
}

#[test]
fn files_no_server_checked_get_a_not_checked_line_and_exit_three() {
    let ws = workspace("default");
    add_failing_servers(&ws);
    ws.write("a.fake", "fine\n");
    write_failing_files(&ws);

    let mut args = vec!["check", "a.fake"];
    args.extend(FAILING_FILES);
    let run = squiggle(&ws.root, &args);

    assert_eq!(run.stdout, NOT_CHECKED_LINES);
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("no diagnostics, 5 files not checked"),
        "stderr: {}",
        run.stderr
    );
    let clean = squiggle(&ws.root, &["check", "a.fake"]);
    assert_eq!(
        (clean.code, clean.stdout.as_str()),
        (0, ""),
        "all checked and clean"
    );
}

#[test]
fn diagnostics_found_exit_one_even_when_a_file_was_not_checked() {
    let ws = workspace("default");
    add_failing_servers(&ws);
    ws.write("a.fake", "ERROR real\n");
    ws.write("b.nope", "x\n");

    let run = squiggle(&ws.root, &["check", "a.fake", "b.nope"]);

    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "a.fake:1:1: error[E1]: found ERROR: real\n\
         b.nope: not checked: missing: `squiggle-no-such-server` is not installed (install: pip install nope)\n"
    );
    assert!(
        run.stderr.contains("1 error in 1 file, 1 file not checked"),
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn json_names_every_file_with_its_outcome_and_reason() {
    let ws = workspace("default");
    add_failing_servers(&ws);
    ws.write("a.fake", "fine\n");
    ws.write("b.nope", "x\n");
    ws.write("c.xyz", "x\n");

    let run = squiggle(
        &ws.root,
        &["check", "--format", "json", "a.fake", "b.nope", "c.xyz"],
    );

    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["files"],
        json!({"a.fake": []}),
        "only checked files look clean"
    );
    assert_eq!(
        report["outcomes"],
        json!({
            "a.fake": {"outcome": "clean", "reason": null, "missing": []},
            "b.nope": {"outcome": "not_checked", "missing": [],
                       "reason": "missing: `squiggle-no-such-server` is not installed (install: pip install nope)"},
            "c.xyz": {"outcome": "not_checked", "missing": [],
                      "reason": "no language server handles this file type"}
        })
    );
}

#[test]
fn llm_and_delta_say_a_file_was_not_checked_with_the_install_command() {
    let ws = workspace("default");
    add_failing_servers(&ws);
    ws.write("b.nope", "ERROR x\n");
    let line = "LSP did not check b.nope, so its errors are unknown: missing: `squiggle-no-such-server` is not installed (install: pip install nope)";

    let delta = squiggle(&ws.root, &["check", "--format", "delta", "b.nope"]);
    let plain = squiggle(&ws.root, &["check", "--format", "llm", "b.nope"]);
    let edit = squiggle(&ws.root, &["check", "--scope", "edit", "b.nope"]);
    let write = squiggle(
        &ws.root,
        &["check", "--format", "llm", "--scope", "write", "b.nope"],
    );

    assert_eq!((plain.code, plain.stdout.as_str()), (3, line));
    assert_eq!(
        (delta.code, delta.stdout.as_str()),
        (3, "b.nope: not checked: missing: `squiggle-no-such-server` is not installed (install: pip install nope)\n")
    );
    assert_eq!((edit.code, edit.stdout), (3, format!("\n{line}")));
    assert_eq!((write.code, write.stdout), (3, format!("\n{line}")));
}

#[test]
fn a_server_that_never_answers_leaves_the_file_not_checked() {
    let ws = FakeWorkspace::new();
    let script = ws.script(&json!({"diagnose_on": []}));
    ws.write(
        "squiggle.toml",
        &format!(
            "first_touch_timeout_ms = 1500\ndiagnostic_timeout_ms = 1500\n[servers.silent]\ncommand = {:?}\nargs = [\"--script\", {:?}]\nextensions = [\"fake\"]\n",
            fake_lsp_bin().display().to_string(),
            script.display().to_string()
        ),
    );
    ws.write("a.fake", "ERROR unseen\n");

    let text = squiggle(&ws.root, &["check", "a.fake"]);
    let llm = squiggle(&ws.root, &["check", "--scope", "edit", "a.fake"]);

    assert_eq!(text.code, 3, "stderr: {}", text.stderr);
    assert!(
        text.stdout
            .starts_with("a.fake: not checked: silent timed out: "),
        "{}",
        text.stdout
    );
    assert_eq!(llm.code, 3);
    assert!(
        llm.stdout.starts_with(
            "\nLSP did not check a.fake, so its errors are unknown: silent timed out: "
        ),
        "{}",
        llm.stdout
    );
}

#[test]
fn too_large_binary_and_lsp_false_files_are_not_checked() {
    let ws = workspace("default");
    prepend_settings(&ws, "max_file_bytes = 64");
    ws.write("big.fake", &"a".repeat(100));
    ws.write("bin.fake", "a\0b\n");

    let run = squiggle(&ws.root, &["check", "big.fake", "bin.fake"]);

    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "big.fake: not checked: too large (100 bytes, limit 64)\nbin.fake: not checked: looks binary\n"
    );

    prepend_settings(&ws, "lsp = false");
    ws.write("a.fake", "ERROR x\n");
    let off = squiggle(&ws.root, &["check", "a.fake"]);
    assert_eq!(off.code, 3);
    assert_eq!(
        off.stdout,
        "a.fake: not checked: LSP disabled by configuration\n"
    );
    assert!(ws.server_pids().is_empty(), "no server started");
}

#[test]
fn a_file_name_with_a_newline_cannot_forge_a_diagnostic_line() {
    let ws = workspace("default");
    let name = "evil\nx.fake:9:9: error[X]: forged\nz.fake";
    ws.write(name, "ERROR real\n");

    let text = squiggle(&ws.root, &["check", name]);
    let llm = squiggle(&ws.root, &["check", "--format", "llm", name]);

    assert_eq!(text.code, 1, "stderr: {}", text.stderr);
    assert_eq!(
        text.stdout,
        "\"evil\\nx.fake:9:9: error[X]: forged\\nz.fake\":1:1: error[E1]: found ERROR: real\n"
    );
    assert_eq!(
        llm.stdout,
        "\"evil\\nx.fake:9:9: error[X]: forged\\nz.fake\":\n1:1 found ERROR: real (E1)"
    );
}

#[test]
fn multi_line_messages_are_one_line_in_every_plain_format() {
    let ws = workspace("default");
    ws.write("a.fake", "ERROR first a < b\\n   then & more\n");

    let text = squiggle(&ws.root, &["check", "a.fake"]);
    let llm = squiggle(&ws.root, &["check", "--format", "llm", "a.fake"]);
    let delta = squiggle(&ws.root, &["check", "--format", "delta", "a.fake"]);

    assert_eq!(
        text.stdout, "a.fake:1:1: error[E1]: found ERROR: first a < b; then & more\n",
        "joined, and not escaped"
    );
    assert_eq!(
        llm.stdout,
        "a.fake:\n1:1 found ERROR: first a < b; then & more (E1)"
    );
    assert_eq!(
        delta.stdout,
        "New LSP errors introduced by your last edit (fix these):\na.fake:1:1: error: found ERROR: first a < b; then & more\n"
    );
}

/// Runs squiggle with its stdout closed before it writes; returns (exit code, stderr).
fn with_stdout_closed(cwd: &std::path::Path, args: &[&str]) -> (i32, String) {
    let mut child = std::process::Command::new(squiggle_bin())
        .args(args)
        .current_dir(cwd)
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .env(NO_DAEMON.0, NO_DAEMON.1)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let ws = workspace("default");
    ws.write("a.fake", "ERROR x\n");

    let (status, status_err) = with_stdout_closed(&ws.root, &["status"]);
    let (check, check_err) = with_stdout_closed(&ws.root, &["check", "a.fake"]);

    assert_eq!((status, status_err.as_str()), (0, ""));
    assert_eq!(check, 1, "the check's code stands: {check_err}");
    assert!(
        !check_err.to_lowercase().contains("broken pipe") && !check_err.contains("panicked"),
        "{check_err}"
    );
    assert!(
        wait_until(Duration::from_secs(5), || ws
            .server_pids()
            .iter()
            .all(|pid| !crate::support::is_alive(*pid))),
        "servers shut down"
    );
}

#[test]
fn a_folder_stands_for_the_files_of_known_types_under_it() {
    let ws = workspace("default");
    ws.write("src/a.fake", "ERROR in a\n");
    ws.write("src/sub/b.fake", "fine\n");
    ws.write("src/notes.txt", "ERROR not a known type\n");
    ws.write("src/node_modules/dep/c.fake", "ERROR dependency\n");
    ws.write("src/.cache/d.fake", "ERROR hidden\n");

    let run = squiggle(&ws.root, &["check", "--format", "json", "src"]);

    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let checked: Vec<&String> = report["outcomes"].as_object().unwrap().keys().collect();
    assert_eq!(checked, ["src/a.fake", "src/sub/b.fake"]);
    assert_eq!(
        report["files"]["src/a.fake"][0]["message"],
        "found ERROR: in a"
    );
}

#[test]
fn a_folder_sums_up_files_only_missing_optional_servers_would_check_in_one_line() {
    let ws = workspace("default");
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    // `.cfg1` files: an optional linter that is not installed; `.need`: a required one.
    config.push_str(
        "[servers.cfglint]\ncommand = \"squiggle-no-such-linter\"\nextensions = [\"cfg1\"]\noptional = true\n\
         [servers.needed]\ncommand = \"squiggle-no-such-checker\"\nextensions = [\"need\"]\n",
    );
    ws.write("squiggle.toml", &config);
    ws.write("src/a.fake", "ERROR in a\n");
    for n in 1..=12 {
        ws.write(&format!("src/conf{n}.cfg1"), "x = 1\n");
    }
    ws.write("src/b.need", "x\n");

    let run = squiggle(&ws.root, &["check", "src"]);

    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "src/a.fake:1:1: error[E1]: found ERROR: in a\n\
         src/b.need: not checked: needed: `squiggle-no-such-checker` is not installed (install: \
         install `squiggle-no-such-checker` and make sure it is on PATH)\n"
    );
    let left_out =
        "squiggle: src: 12 files left out (.cfg1): the optional servers that check them \
                    are not installed (cfglint; `squiggle status` says how)";
    assert_eq!(
        run.stderr
            .lines()
            .filter(|line| line.contains("cfg"))
            .collect::<Vec<_>>(),
        [left_out],
        "{}",
        run.stderr
    );
    // Named on its own, such a file is not checked, and says why.
    let one = squiggle(&ws.root, &["check", "src/conf1.cfg1"]);
    assert_eq!(one.code, 3, "stderr: {}", one.stderr);
    assert!(
        one.stdout
            .starts_with("src/conf1.cfg1: not checked: cfglint: "),
        "{}",
        one.stdout
    );
}

#[test]
fn a_folder_in_a_git_work_tree_leaves_out_what_gitignore_excludes() {
    let ws = workspace("default");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&ws.root)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    ws.write(".gitignore", "generated/\n*.gen.fake\n");
    ws.write("src/a.fake", "fine\n");
    ws.write("src/.config/b.fake", "fine\n");
    ws.write("src/generated/c.fake", "ERROR ignored\n");
    ws.write("src/d.gen.fake", "ERROR ignored\n");

    let run = squiggle(&ws.root, &["check", "--format", "json", "src"]);

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let checked: Vec<&String> = report["outcomes"].as_object().unwrap().keys().collect();
    assert_eq!(
        checked,
        ["src/.config/b.fake", "src/a.fake"],
        "as git lists them"
    );
}

#[test]
fn a_folder_over_the_bound_is_checked_in_part_and_says_so() {
    let ws = workspace("default");
    add_failing_servers(&ws);
    for i in 0..501 {
        ws.write(&format!("many/f{i:03}.nope"), "x\n");
    }
    ws.write("many/fine.fake", "fine\n");

    let run = squiggle(&ws.root, &["check", "--format", "json", "many"]);

    assert!(
        run.stderr
            .contains("many: more than 500 files of known types; only the first 500 were checked"),
        "stderr: {}",
        run.stderr
    );
    assert_eq!(run.code, 3, "files left out are not checked");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["outcomes"].as_object().unwrap().len(), 500);
}

/// A workspace whose `.fake` files go to a linter (the fake server, answering) and a required
/// type checker that never answers (a fake server that publishes nothing).
fn linter_and_silent_type_checker() -> FakeWorkspace {
    let ws = workspace("default");
    let silent = ws.script(&json!({"diagnose_on": []}));
    let checker = ws
        .fake_toml(&["--script", silent.to_str().unwrap()])
        .replace("[servers.fake]", "[servers.checker]")
        .replace("settle_ms = 20\n", "");
    let toml = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    ws.write(
        "squiggle.toml",
        &format!("diagnostic_timeout_ms = 1000\nfirst_touch_timeout_ms = 2000\n{toml}{checker}required = true\n"),
    );
    ws
}

#[test]
fn a_linters_answer_does_not_make_a_file_checked_when_its_type_checker_did_not_answer() {
    let ws = linter_and_silent_type_checker();
    ws.write("clean.fake", "fine\n");
    ws.write("broken.fake", "ERROR lint\n");

    let clean = squiggle(&ws.root, &["check", "--format", "json", "clean.fake"]);
    let report: Value = serde_json::from_str(&clean.stdout).unwrap();
    let outcome = &report["outcomes"]["clean.fake"];
    assert_eq!(outcome["outcome"], "not_checked", "{report}");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("not type-checked: checker timed out")
            && reason.ends_with("(fake answered, but only for what it checks)"),
        "{reason}"
    );
    assert_eq!(clean.code, 3, "not clean: not checked");

    // What the linter found is shown, and the file is still said to be not type-checked.
    let broken = squiggle(&ws.root, &["check", "broken.fake"]);
    assert_eq!(broken.code, 1);
    assert!(
        broken.stdout.starts_with("broken.fake:1:1: error[E1]: found ERROR: lint\nbroken.fake: not checked: not type-checked: checker timed out"),
        "{}",
        broken.stdout
    );
    let hook_like = squiggle(&ws.root, &["check", "--scope", "edit", "clean.fake"]);
    assert!(
        hook_like.stdout.contains("LSP did not check clean.fake, so its errors are unknown: not type-checked: checker timed out"),
        "{}",
        hook_like.stdout
    );
}

#[test]
fn sarif_is_valid_sarif_2_1_0_and_says_which_files_were_not_checked() {
    let ws = workspace("default");
    ws.write("a.fake", "fine\nERROR broken\n");
    ws.write("b.nope", "no server for this\n");

    let run = squiggle(
        &ws.root,
        &["check", "--format", "sarif", "a.fake", "b.nope"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let log: Value = serde_json::from_str(&run.stdout).unwrap();

    // Valid against the official schema (tests/fixtures/sarif), by Python's jsonschema.
    let python = crate::support::installed_server_dirs()[1].join("python");
    assert!(
        python.is_file(),
        "the test Python environment is missing: run `cargo xtask install-servers`"
    );
    let schema = crate::support::repo_root().join("tests/fixtures/sarif/sarif-2.1.0-rtm.5.json");
    let log_file = ws.write("log.sarif", &run.stdout);
    let validate = std::process::Command::new(python)
        .args(["-c", "import json, sys, jsonschema; jsonschema.Draft4Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))"])
        .arg(&schema)
        .arg(&log_file)
        .output()
        .unwrap();
    assert!(
        validate.status.success(),
        "{}",
        String::from_utf8_lossy(&validate.stderr)
    );

    let run0 = &log["runs"][0];
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{log}");
    let region = &results[0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (region["startLine"].as_u64(), region["startColumn"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(results[0]["level"], "error");
    assert!(
        results[0]["ruleId"].as_str().unwrap().ends_with("/E1"),
        "{log}"
    );
    let notes = run0["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let texts: Vec<&str> = notes
        .iter()
        .map(|n| n["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(texts[0].starts_with("b.nope: not checked:"), "{texts:?}");
}

#[test]
fn github_format_is_one_workflow_command_per_diagnostic_then_a_summary() {
    let ws = workspace("default");
    ws.write("a.fake", "fine\nERROR broken\n");

    let run = squiggle(&ws.root, &["check", "--format", "github", "a.fake"]);

    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "::error file=a.fake,line=2,col=1,endLine=2,endColumn=6,title=E1 (fake)::found ERROR: broken\n\
         ::notice title=squiggle::1 error in 1 file\n"
    );
}

#[test]
fn in_ci_a_check_runs_in_its_own_process_and_leaves_no_daemon() {
    let ws = workspace("default");
    ws.write("a.fake", "ERROR broken\n");
    let dirs = tempfile::tempdir().unwrap();
    // A folder squiggle makes itself, private, as the daemon requires.
    let runtime = dirs.path().join("run");
    let env: [(&str, &std::ffi::OsStr); 3] = [
        ("CI", std::ffi::OsStr::new("true")),
        ("SQUIGGLE_NO_DAEMON", std::ffi::OsStr::new("")),
        ("SQUIGGLE_RUNTIME_DIR", runtime.as_os_str()),
    ];
    let limit = Duration::from_secs(60);

    let run = squiggle_within(&ws.root, &["check", "a.fake"], &env, limit);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let status = squiggle_within(&ws.root, &["daemon", "status"], &env, limit);
    assert!(
        status.stdout.contains("no squiggle daemon runs"),
        "{status:?}"
    );
}

/// Issue 42: a server that never answers `initialize` does not cost another server of the same
/// file its answer on a cold start: each answer stands on its own deadline.
#[test]
fn a_hung_server_does_not_hide_another_servers_answer_on_a_cold_start() {
    let ws = FakeWorkspace::new();
    let hung = ws.script(&json!({"hang_on_initialize": true}));
    let config = format!(
        "first_touch_timeout_ms = 3000\n{}[servers.hung]\ncommand = {:?}\nargs = [\"--script\", {:?}]\nextensions = [\"fake\"]\n",
        ws.fake_toml(&[]),
        fake_lsp_bin().display().to_string(),
        hung.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws.write("a.fake", "ERROR real\n");

    let run = squiggle(&ws.root, &["check", "a.fake"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "a.fake:1:1: error[E1]: found ERROR: real\n");
    assert!(
        run.stderr.contains("hung timed out: still starting"),
        "{run:?}"
    );
}

/// Issue 42: a file whose type checker is not installed is not type-checked, whatever a linter
/// answered: the reason names the checker and its install command, with exit code 3, in
/// `check` and in the hook.
#[test]
fn a_file_whose_type_checker_is_not_installed_is_not_type_checked() {
    let ws = FakeWorkspace::new();
    let config = format!(
        "{}[servers.checker]\ncommand = \"squiggle-no-such-checker\"\nextensions = [\"fake\"]\nrequired = true\ninstall_hint = \"npm install checker\"\n",
        ws.fake_toml(&[]),
    );
    ws.write("squiggle.toml", &config);
    let file = ws.write("a.fake", "fine\n");

    let run = squiggle(&ws.root, &["check", "a.fake"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(
        run.stdout,
        "a.fake: not checked: not type-checked: checker: `squiggle-no-such-checker` is not installed (install: npm install checker) (fake answered, but only for what it checks)\n"
    );

    let input = json!({
        "session_id": "s1", "cwd": ws.root, "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": file, "old_string": "x", "new_string": "y"},
        "tool_response": {"filePath": file, "success": true},
    });
    let mut child = std::process::Command::new(squiggle_bin())
        .args(["hook", "claude-code"])
        .current_dir(&ws.root)
        .env("PATH", path_with_servers())
        .env("XDG_CONFIG_HOME", ws.root.join(".no-user-config"))
        .env(NO_DAEMON.0, NO_DAEMON.1)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let hook = crate::support::finish_within(
        &mut child,
        input.to_string().as_bytes(),
        Duration::from_secs(30),
        "hook",
    );
    let answer: Value = serde_json::from_str(&hook.stdout).unwrap();
    let note = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(
        note.starts_with(
            "LSP did not check a.fake, so its errors are unknown: not type-checked: checker:"
        ) && note.contains("npm install checker"),
        "{answer}"
    );
}
