//! `squiggle hook HOST` and `squiggle init HOST` against the fake server: each host's hook
//! input and output byte for byte (errors, clean, not checked), inputs that must be ignored
//! without breaking the host, and `init` merging into a project's settings files.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{
    fake_lsp_bin, finish_within, path_with_servers, squiggle_bin, squiggle_dir, FakeWorkspace, Run,
};
use serde_json::{json, Value};

/// How long one hook or init run may take.
const LIMIT: Duration = Duration::from_secs(30);

/// The block the fake server's diagnostics for `x\nERROR broken <thing>\n` give an edit tool.
const ERRORS: &str =
    "LSP errors detected in this file, please fix:\na.fake:\n2:1 found ERROR: broken <thing> (E1)";

/// Why a `.nope` file is not checked in [`workspace`].
const NOT_CHECKED: &str = "LSP did not check b.nope, so its errors are unknown: missing: `squiggle-no-such-server` is not installed (install: pip install nope)";

/// A workspace whose `.fake` files are served by the fake server and whose `.nope` files by a
/// server that is not installed; `a.fake` has an error, `b.fake` is clean.
fn workspace() -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    let config = format!(
        "settle_ms = 20\n[servers.fake]\ncommand = {command:?}\nargs = []\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {pids:?} }}\n\
         [servers.missing]\ncommand = \"squiggle-no-such-server\"\nextensions = [\"nope\"]\ninstall_hint = \"pip install nope\"\n",
        command = fake_lsp_bin().display().to_string(),
        pids = ws.pids.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws.write("a.fake", "x\nERROR broken <thing>\n");
    ws.write("b.fake", "fine\n");
    ws.write("b.nope", "ERROR x\n");
    ws.write("README.md", "# notes\n");
    ws
}

/// Runs the squiggle binary in `cwd` with `args` and `stdin`, real servers on PATH, without
/// a daemon; panics if it has not finished within [`LIMIT`].
fn run_with_input(cwd: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(squiggle_bin())
        .args(args)
        .current_dir(cwd)
        .env("PATH", path_with_servers())
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .env("SQUIGGLE_NO_DAEMON", "1")
        .env_remove("SQUIGGLE_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(&mut child, stdin, &format!("squiggle {args:?}"))
}

/// Writes `stdin` to a child, closes it, and collects its output; panics after [`LIMIT`].
fn finish(child: &mut std::process::Child, stdin: &[u8], what: &str) -> Run {
    finish_within(child, stdin, LIMIT, what)
}

/// Runs `squiggle hook HOST` in `cwd` with `input` on stdin.
fn hook(cwd: &Path, host: &str, input: &[u8]) -> Run {
    run_with_input(cwd, &["hook", host], input)
}

/// Claude Code's PostToolUse input for `tool` with `tool_input`, run in `cwd`.
fn claude_input(cwd: &Path, tool: &str, tool_input: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "abc123",
        "transcript_path": "/home/me/.claude/projects/p/abc123.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": {"filePath": tool_input_path(&tool_input), "success": true},
        "tool_use_id": "toolu_01"
    }))
    .unwrap()
}

/// Gemini CLI's AfterTool input for `tool` with `tool_input`, run in `cwd`.
fn gemini_input(cwd: &Path, tool: &str, tool_input: Value, error: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "s1",
        "transcript_path": "/home/me/.gemini/tmp/p/chats/s1.json",
        "cwd": cwd,
        "hook_event_name": "AfterTool",
        "timestamp": "2026-11-23T13:00:00.000Z",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": "", "error": error}
    }))
    .unwrap()
}

/// The `file_path` of a tool input, as text.
fn tool_input_path(tool_input: &Value) -> Value {
    tool_input.get("file_path").cloned().unwrap_or(Value::Null)
}

/// An Edit of `file` (absolute under the workspace) as Claude Code reports it.
fn claude_edit(ws: &FakeWorkspace, file: &str) -> Vec<u8> {
    claude_input(
        &ws.root,
        "Edit",
        json!({"file_path": ws.root.join(file), "old_string": "x", "new_string": "y"}),
    )
}

/// Asserts a run ended the way a hook with nothing to say ends: exit 0, nothing on stdout.
fn assert_silent(run: &Run, what: &str) {
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, ""),
        "{what}: stderr: {}",
        run.stderr
    );
}

/// Whether the fake server was ever started in the workspace.
fn server_started(ws: &FakeWorkspace) -> bool {
    std::fs::read_dir(&ws.pids).unwrap().next().is_some()
}

#[test]
fn claude_code_errors_block_with_the_edit_feedback_as_reason() {
    let ws = workspace();

    let run = hook(&ws.root, "claude-code", &claude_edit(&ws, "a.fake"));

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        format!("{}\n", json!({"decision": "block", "reason": ERRORS}))
    );
    assert_eq!(
        run.stdout,
        "{\"decision\":\"block\",\"reason\":\"LSP errors detected in this file, please fix:\\na.fake:\\n2:1 found ERROR: broken <thing> (E1)\"}\n"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn claude_code_clean_write_and_multi_edit_say_nothing() {
    let ws = workspace();
    let write = claude_input(
        &ws.root,
        "Write",
        json!({"file_path": ws.root.join("b.fake"), "content": "fine\n"}),
    );
    let multi = claude_input(
        &ws.root,
        "MultiEdit",
        json!({"file_path": ws.root.join("b.fake"), "edits": [{"old_string": "a", "new_string": "b"}]}),
    );

    for (input, what) in [(write, "Write"), (multi, "MultiEdit")] {
        let run = hook(&ws.root, "claude-code", &input);
        assert_silent(&run, what);
        assert_eq!(run.stderr, "", "{what}");
    }
    assert!(server_started(&ws), "the clean file was never checked");
}

#[test]
fn claude_code_file_not_checked_is_a_plain_note_not_a_block() {
    let ws = workspace();

    let run = hook(&ws.root, "claude-code", &claude_edit(&ws, "b.nope"));

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "{{\"hookSpecificOutput\":{{\"hookEventName\":\"PostToolUse\",\"additionalContext\":{}}}}}\n",
            Value::from(NOT_CHECKED)
        )
    );
}

#[test]
fn a_file_only_a_missing_optional_server_would_check_gets_nothing_from_the_hook() {
    let ws = workspace();
    let mut config = std::fs::read_to_string(ws.root.join("squiggle.toml")).unwrap();
    config.push_str(
        "[servers.cfglint]\ncommand = \"squiggle-no-such-linter\"\nextensions = [\"cfg1\"]\noptional = true\n",
    );
    ws.write("squiggle.toml", &config);
    ws.write("pyproject.cfg1", "x = 1\n");

    for host in ["claude-code", "gemini-cli"] {
        let input = match host {
            "claude-code" => claude_edit(&ws, "pyproject.cfg1"),
            _ => gemini_input(
                &ws.root,
                "write_file",
                json!({"file_path": ws.root.join("pyproject.cfg1"), "content": "x = 1\n"}),
                Value::Null,
            ),
        };
        let run = hook(&ws.root, host, &input);
        assert_eq!(run.code, 0, "{host}: {}", run.stderr);
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            ("", ""),
            "{host}"
        );
    }
    // A missing server that is not optional is still said (see claude_code_file_not_checked...).
    let run = hook(&ws.root, "claude-code", &claude_edit(&ws, "b.nope"));
    assert!(
        run.stdout.contains("LSP did not check b.nope"),
        "{}",
        run.stdout
    );
}

#[test]
fn claude_code_relative_path_is_taken_against_the_hook_cwd() {
    let ws = workspace();
    ws.write("src/a.fake", "x\nERROR broken <thing>\n");
    let input = claude_input(
        &ws.root.join("src"),
        "Edit",
        json!({"file_path": "a.fake", "old_string": "x", "new_string": "y"}),
    );

    let run = hook(&ws.root, "claude-code", &input);

    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        answer["reason"],
        ERRORS.replace("\na.fake:\n", "\nsrc/a.fake:\n")
    );
}

#[test]
fn claude_code_cwd_through_a_symlink_finds_the_same_workspace() {
    let ws = workspace();
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("project");
    std::os::unix::fs::symlink(&ws.root, &link).unwrap();
    let input = claude_input(
        &link,
        "Edit",
        json!({"file_path": link.join("a.fake"), "old_string": "x", "new_string": "y"}),
    );

    let run = hook(&ws.root, "claude-code", &input);

    assert_eq!(
        run.stdout,
        format!("{}\n", json!({"decision": "block", "reason": ERRORS})),
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn gemini_cli_errors_are_additional_context_for_the_tool_result() {
    let ws = workspace();
    let input = gemini_input(
        &ws.root,
        "replace",
        json!({"file_path": ws.root.join("a.fake"), "instruction": "fix", "old_string": "x", "new_string": "y"}),
        Value::Null,
    );

    let run = hook(&ws.root, "gemini-cli", &input);

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "{\"hookSpecificOutput\":{\"hookEventName\":\"AfterTool\",\"additionalContext\":\"LSP errors detected in this file, please fix:\\na.fake:\\n2:1 found ERROR: broken <thing> (E1)\"}}\n"
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn gemini_cli_clean_write_writes_nothing_to_stdout_or_stderr() {
    let ws = workspace();
    let input = gemini_input(
        &ws.root,
        "write_file",
        json!({"file_path": "b.fake", "content": "fine\n"}),
        Value::Null,
    );

    let run = hook(&ws.root, "gemini-cli", &input);

    // Gemini CLI shows stderr to the user when stdout is empty: a clean check is silent on both.
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert!(server_started(&ws), "the clean file was never checked");
}

#[test]
fn gemini_cli_file_not_checked_is_a_note() {
    let ws = workspace();
    let input = gemini_input(
        &ws.root,
        "write_file",
        json!({"file_path": ws.root.join("b.nope"), "content": "ERROR x\n"}),
        Value::Null,
    );

    let run = hook(&ws.root, "gemini-cli", &input);

    assert_eq!(
        run.stdout,
        format!(
            "{{\"hookSpecificOutput\":{{\"hookEventName\":\"AfterTool\",\"additionalContext\":{}}}}}\n",
            Value::from(NOT_CHECKED)
        )
    );
    assert_eq!(run.code, 0);
}

#[test]
fn gemini_cli_failed_edit_is_not_checked_at_all() {
    let ws = workspace();
    let input = gemini_input(
        &ws.root,
        "replace",
        json!({"file_path": ws.root.join("a.fake"), "old_string": "zz", "new_string": "y"}),
        json!({"message": "Failed to edit, 0 occurrences found", "type": "edit_no_occurrence_found"}),
    );

    let run = hook(&ws.root, "gemini-cli", &input);

    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert!(!server_started(&ws), "a failed edit started a server");
}

#[test]
fn inputs_a_hook_must_ignore_end_with_exit_zero_and_no_block() {
    let ws = workspace();
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = std::fs::canonicalize(elsewhere.path())
        .unwrap()
        .join("o.fake");
    std::fs::write(&outside, "ERROR outside\n").unwrap();
    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        ("claude-code", "not JSON", b"{\"tool_name\": ".to_vec()),
        ("claude-code", "empty input", Vec::new()),
        ("claude-code", "a JSON array", b"[]".to_vec()),
        (
            "claude-code",
            "no cwd",
            br#"{"tool_name": "Edit", "tool_input": {"file_path": "/x.fake"}}"#.to_vec(),
        ),
        (
            "claude-code",
            "no file_path",
            claude_input(&ws.root, "Edit", json!({"old_string": "x"})),
        ),
        (
            "claude-code",
            "an unknown tool",
            claude_input(&ws.root, "Bash", json!({"command": "sed -i s/x/y/ a.fake"})),
        ),
        (
            "claude-code",
            "a notebook",
            claude_input(
                &ws.root,
                "NotebookEdit",
                json!({"notebook_path": ws.root.join("n.ipynb"), "new_source": "x"}),
            ),
        ),
        (
            "claude-code",
            "another event",
            serde_json::to_vec(&json!({
                "cwd": ws.root, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                "tool_input": {"file_path": ws.root.join("a.fake")}
            }))
            .unwrap(),
        ),
        (
            "claude-code",
            "a file outside the workspace",
            claude_input(&ws.root, "Edit", json!({"file_path": outside})),
        ),
        (
            "claude-code",
            "a `..` path out of the workspace",
            claude_input(
                &ws.root,
                "Edit",
                json!({"file_path": format!(
                    "../../{}/o.fake",
                    outside.parent().unwrap().file_name().unwrap().to_string_lossy()
                )}),
            ),
        ),
        (
            "claude-code",
            "a missing file",
            claude_input(
                &ws.root,
                "Write",
                json!({"file_path": ws.root.join("gone.fake")}),
            ),
        ),
        (
            "claude-code",
            "a cwd that does not exist",
            claude_input(
                &ws.root.join("no-such-dir"),
                "Edit",
                json!({"file_path": ws.root.join("a.fake")}),
            ),
        ),
        (
            "claude-code",
            "a type no server handles",
            claude_input(
                &ws.root,
                "Write",
                json!({"file_path": ws.root.join("README.md")}),
            ),
        ),
        ("gemini-cli", "not JSON", b"\x00\xff garbage".to_vec()),
        (
            "gemini-cli",
            "an unknown tool",
            gemini_input(
                &ws.root,
                "run_shell_command",
                json!({"command": "ls"}),
                Value::Null,
            ),
        ),
        (
            "gemini-cli",
            "a file outside the workspace",
            gemini_input(
                &ws.root,
                "write_file",
                json!({"file_path": outside}),
                Value::Null,
            ),
        ),
    ];

    for (host, what, input) in cases {
        let run = hook(&ws.root, host, &input);
        assert_silent(&run, &format!("{host}, {what}"));
        assert!(
            run.stderr.lines().count() <= 1,
            "{host}, {what}: {}",
            run.stderr
        );
    }
    assert!(
        !server_started(&ws),
        "an ignored input started a language server"
    );
}

#[test]
fn malformed_input_says_why_on_one_stderr_line() {
    let ws = workspace();

    let run = hook(&ws.root, "claude-code", b"not json");

    assert_silent(&run, "not json");
    assert_eq!(
        run.stderr,
        "squiggle hook claude-code: ignored: the input is not JSON: expected ident at line 1 column 2\n"
    );
}

#[test]
fn an_invalid_configuration_does_not_break_the_host_and_is_no_clean_edit() {
    let ws = workspace();
    ws.write("squiggle.toml", "settle_ms = \"soon\"\n");

    let run = hook(&ws.root, "claude-code", &claude_edit(&ws, "a.fake"));

    // The edit goes through (exit 0, no block), and the model reads that it was not checked.
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let note = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        note.starts_with("LSP did not check ")
            && note.contains("a.fake, so its errors are unknown: ")
            && note.contains("squiggle.toml:1:"),
        "{note}"
    );
    assert_eq!(answer.get("decision"), None, "{answer}");
    assert!(
        run.stderr.starts_with("squiggle hook claude-code: ")
            && run.stderr.contains("squiggle.toml:1:"),
        "{}",
        run.stderr
    );
}

/// Runs `squiggle init HOST` in `root`, made a git work tree's top folder so that it is the
/// project folder init finds.
fn init(root: &Path, host: &str) -> Run {
    let _ = std::fs::create_dir(root.join(".git"));
    run_with_input(root, &["init", host], b"")
}

/// The text of a file under the root, or None.
fn read(root: &Path, relative: &str) -> Option<String> {
    std::fs::read_to_string(root.join(relative)).ok()
}

#[test]
fn init_claude_code_in_an_empty_project_writes_both_files() {
    let ws = FakeWorkspace::new();

    let run = init(&ws.root, "claude-code");

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let root = ws.root.display();
    assert_eq!(
        run.stdout,
        format!(
            "{root}/.claude/settings.json: hooks.PostToolUse: added `squiggle hook claude-code --with-later` after the tools Write|Edit|MultiEdit\n\
             {root}/.claude/settings.json: hooks.PostToolUse: added `squiggle hook claude-code --later` after the tools Write|Edit|MultiEdit, in the background (it wakes the model when the edit broke other files)\n\
             {root}/.mcp.json: mcpServers.squiggle: added (runs `squiggle mcp`)\n\
             New Claude Code sessions in {root} pick these up.\n"
        )
    );
    assert_eq!(
        read(&ws.root, ".claude/settings.json").unwrap(),
        "{\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"Write|Edit|MultiEdit\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"squiggle hook claude-code --with-later\"\n          }\n        ]\n      },\n      {\n        \"matcher\": \"Write|Edit|MultiEdit\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"squiggle hook claude-code --later\",\n            \"asyncRewake\": true\n          }\n        ]\n      }\n    ]\n  }\n}\n"
    );
    assert_eq!(
        read(&ws.root, ".mcp.json").unwrap(),
        "{\n  \"mcpServers\": {\n    \"squiggle\": {\n      \"command\": \"squiggle\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"
    );
}

#[test]
fn init_keeps_existing_settings_hooks_and_servers() {
    let ws = FakeWorkspace::new();
    let settings = r#"{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write \"$FILE\""}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}"#;
    ws.write(".claude/settings.json", settings);
    ws.write(
        ".mcp.json",
        r#"{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@github/github-mcp-server"]}}}"#,
    );

    let run = init(&ws.root, "claude-code");

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let written: Value =
        serde_json::from_str(&read(&ws.root, ".claude/settings.json").unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {
                "PostToolUse": [
                    {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write \"$FILE\""}]},
                    {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "squiggle hook claude-code --with-later"}]},
                    {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "squiggle hook claude-code --later", "asyncRewake": true}]}
                ],
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
            }
        })
    );
    let text = read(&ws.root, ".claude/settings.json").unwrap();
    assert!(
        text.find("permissions").unwrap() < text.find("\"hooks\"").unwrap()
            && text.find("PostToolUse").unwrap() < text.find("Stop").unwrap(),
        "the keys were reordered: {text}"
    );
    let mcp: Value = serde_json::from_str(&read(&ws.root, ".mcp.json").unwrap()).unwrap();
    assert_eq!(
        mcp,
        json!({"mcpServers": {
            "github": {"command": "npx", "args": ["-y", "@github/github-mcp-server"]},
            "squiggle": {"command": "squiggle", "args": ["mcp"]}
        }})
    );
}

#[test]
fn init_twice_adds_nothing_the_second_time() {
    let ws = FakeWorkspace::new();
    let first = init(&ws.root, "claude-code");
    let settings = read(&ws.root, ".claude/settings.json").unwrap();
    let mcp = read(&ws.root, ".mcp.json").unwrap();

    let second = init(&ws.root, "claude-code");

    assert_eq!((first.code, second.code), (0, 0));
    let root = ws.root.display();
    assert_eq!(
        second.stdout,
        format!(
            "{root}/.claude/settings.json: hooks.PostToolUse: already runs `squiggle hook claude-code --with-later`; left as it is\n\
             {root}/.claude/settings.json: hooks.PostToolUse: already runs `squiggle hook claude-code --later`; left as it is\n\
             {root}/.mcp.json: mcpServers.squiggle: already there; left as it is\n\
             Nothing to change.\n"
        )
    );
    assert_eq!(read(&ws.root, ".claude/settings.json").unwrap(), settings);
    assert_eq!(read(&ws.root, ".mcp.json").unwrap(), mcp);
}

#[test]
fn init_refuses_invalid_json_and_changes_nothing() {
    let ws = FakeWorkspace::new();
    let broken = "{\n  \"hooks\": {\n    \"PostToolUse\": [,]\n  }\n}\n";
    ws.write(".claude/settings.json", broken);

    let run = init(&ws.root, "claude-code");

    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
    let file = ws.root.join(".claude/settings.json");
    assert!(
        run.stderr.contains(&format!(
            "squiggle: {}: not valid JSON (line 3, column 21: expected value); nothing was changed",
            file.display()
        )),
        "{}",
        run.stderr
    );
    assert_eq!(read(&ws.root, ".claude/settings.json").unwrap(), broken);
    assert_eq!(read(&ws.root, ".mcp.json"), None, ".mcp.json was written");
}

#[test]
fn init_gemini_cli_merges_hook_and_server_into_its_settings() {
    let ws = FakeWorkspace::new();
    ws.write(
        ".gemini/settings.json",
        r#"{"theme": "GitHub", "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "guard.sh"}]}]}}"#,
    );

    let run = init(&ws.root, "gemini-cli");
    let again = init(&ws.root, "gemini-cli");

    assert_eq!((run.code, again.code), (0, 0), "stderr: {}", run.stderr);
    let written: Value =
        serde_json::from_str(&read(&ws.root, ".gemini/settings.json").unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "theme": "GitHub",
            "hooks": {
                "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "guard.sh"}]}],
                "AfterTool": [{"matcher": "write_file|replace", "hooks": [
                    {"name": "squiggle", "type": "command", "command": "squiggle hook gemini-cli"}
                ]}]
            },
            "mcpServers": {"squiggle": {"command": "squiggle", "args": ["mcp"]}}
        })
    );
    assert!(
        again.stdout.ends_with("Nothing to change.\n"),
        "{}",
        again.stdout
    );
}

#[test]
fn the_hook_init_writes_runs_as_the_host_runs_it() {
    let ws = workspace();
    assert_eq!(init(&ws.root, "claude-code").code, 0);
    let settings: Value =
        serde_json::from_str(&read(&ws.root, ".claude/settings.json").unwrap()).unwrap();
    let command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut path = std::ffi::OsString::from(squiggle_dir());
    path.push(":");
    path.push(path_with_servers());

    // Claude Code runs a command hook with the shell, in the project folder, input on stdin.
    let mut child = Command::new("sh")
        .args(["-c", &command])
        .current_dir(&ws.root)
        .env("PATH", path)
        .env("XDG_CONFIG_HOME", ws.root.join(".no-user-config"))
        .env("SQUIGGLE_NO_DAEMON", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish(&mut child, &claude_edit(&ws, "a.fake"), &command);

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout,
        format!("{}\n", json!({"decision": "block", "reason": ERRORS}))
    );
}
