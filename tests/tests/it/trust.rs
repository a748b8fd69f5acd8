//! A project's configuration runs its servers only once the user trusts it (`squiggle trust`):
//! through every door (check, the Claude Code hook, serve, MCP, the daemon), with a linked
//! configuration file, one in a parent folder, and a change after trusting.
//!
//! The hostile configuration names a server `evil` whose command touches a marker file outside
//! the workspace; the marker tells whether it ran.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{squiggle, squiggle_within, FakeWorkspace, Mcp, Serve};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(30);

/// A project file whose server `evil`, for `.evil` files, touches `marker`.
fn hostile(marker: &Path) -> String {
    format!(
        "settle_ms = 20\n[servers.evil]\ncommand = \"sh\"\nargs = [\"-c\", \"touch {}\"]\nextensions = [\"evil\"]\n",
        marker.display()
    )
}

/// A workspace with `a.evil`, and where its marker would be (beside the workspace).
fn workspace() -> (FakeWorkspace, PathBuf) {
    let ws = FakeWorkspace::new();
    ws.write("a.evil", "x\n");
    let marker = ws.root.parent().unwrap().join("pwned");
    (ws, marker)
}

#[test]
fn check_runs_no_server_of_an_untrusted_project_file_and_says_how_to_trust_it() {
    let (ws, marker) = workspace();
    ws.write_untrusted("squiggle.toml", &hostile(&marker));

    let run = squiggle(&ws.root, &["check", "a.evil"]);
    assert!(!marker.exists(), "the untrusted command ran: {run:?}");
    assert!(
        run.stderr
            .contains("squiggle.toml configures language servers but is not trusted")
            && run.stderr.contains("squiggle trust --root"),
        "{run:?}"
    );

    let trusted = squiggle(&ws.root, &["trust"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    assert!(
        trusted
            .stdout
            .contains("trusted squiggle.toml as it is now; it runs:")
            && trusted
                .stdout
                .contains(&format!("evil: sh -c 'touch {}'", marker.display())),
        "what it runs is shown before it runs: {trusted:?}"
    );
    let run = squiggle(&ws.root, &["check", "a.evil"]);
    assert!(marker.exists(), "a trusted command runs: {run:?}");
    assert!(!run.stderr.contains("not trusted"), "{run:?}");

    // A change ends the trust.
    let second = marker.with_file_name("pwned-after-a-change");
    ws.write_untrusted("squiggle.toml", &hostile(&second));
    let run = squiggle(&ws.root, &["check", "a.evil"]);
    assert!(!second.exists(), "a changed file ran: {run:?}");
    assert!(run.stderr.contains("not trusted"), "{run:?}");

    // And `--revoke` ends it too.
    squiggle(&ws.root, &["trust"]);
    let revoked = squiggle(&ws.root, &["trust", "--revoke"]);
    assert!(
        revoked.stdout.contains("no longer trusted: squiggle.toml"),
        "{revoked:?}"
    );
    squiggle(&ws.root, &["check", "a.evil"]);
    assert!(!second.exists(), "a revoked file ran");
}

#[test]
fn a_linked_project_file_is_trusted_at_its_link_with_its_targets_content() {
    let (ws, marker) = workspace();
    let target = ws.root.parent().unwrap().join("shared.toml");
    std::fs::write(&target, hostile(&marker)).unwrap();
    std::os::unix::fs::symlink(&target, ws.root.join("squiggle.toml")).unwrap();

    squiggle(&ws.root, &["check", "a.evil"]);
    assert!(!marker.exists(), "an untrusted link ran");
    squiggle(&ws.root, &["trust"]);
    squiggle(&ws.root, &["check", "a.evil"]);
    assert!(marker.exists(), "the trusted link did not run");

    let second = marker.with_file_name("pwned-after-a-change");
    std::fs::write(&target, hostile(&second)).unwrap();
    let run = squiggle(&ws.root, &["check", "a.evil"]);
    assert!(
        !second.exists(),
        "a change of the link's target ran: {run:?}"
    );
}

#[test]
fn a_project_file_in_a_parent_folder_needs_trust_too() {
    let (ws, marker) = workspace();
    std::fs::create_dir(ws.root.join(".git")).unwrap();
    ws.write_untrusted(".squiggle/config.toml", &hostile(&marker));
    let app = ws.root.join("packages/app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("b.evil"), "x\n").unwrap();
    // Runs from the subfolder, with the user's configuration folder where `squiggle` gives it.
    let env = [(
        "XDG_CONFIG_HOME",
        ws.root.join(".no-user-config").into_os_string(),
    )];
    let env: Vec<(&str, &std::ffi::OsStr)> = env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    let run = squiggle_within(&app, &["check", "b.evil"], &env, LIMIT);
    assert!(!marker.exists(), "{run:?}");
    assert!(
        run.stderr.contains(".squiggle/config.toml configures"),
        "{run:?}"
    );
    let trusted = squiggle_within(&app, &["trust"], &env, LIMIT);
    assert!(
        trusted.stdout.contains("trusted .squiggle/config.toml"),
        "{trusted:?}"
    );
    squiggle_within(&app, &["check", "b.evil"], &env, LIMIT);
    assert!(marker.exists(), "the trusted parent's file did not run");
}

#[test]
fn a_project_file_that_only_turns_servers_off_needs_no_trust() {
    let ws = FakeWorkspace::new();
    ws.write_untrusted("squiggle.toml", "[servers.ruff]\nenabled = false\n");
    let run = squiggle(&ws.root, &["trust"]);
    assert!(
        run.stdout
            .contains("squiggle.toml names no server commands or settings"),
        "{run:?}"
    );
    let run = squiggle(&ws.root, &["status"]);
    assert!(!run.stderr.contains("not trusted"), "{run:?}");
}

/// Claude Code's PostToolUse input for an Edit of `file`, run in `cwd`.
fn claude_edit(cwd: &Path, file: &Path) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "s1",
        "cwd": cwd,
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": file, "old_string": "x", "new_string": "y"},
        "tool_response": {"filePath": file, "success": true},
    }))
    .unwrap()
}

/// Runs `squiggle hook claude-code` in `root` for an Edit of `file`.
fn hook(root: &Path, file: &Path) -> crate::support::Run {
    let mut child = std::process::Command::new(crate::support::squiggle_bin())
        .args(["hook", "claude-code"])
        .current_dir(root)
        .env("PATH", crate::support::path_with_servers())
        .env("XDG_CONFIG_HOME", root.join(".no-user-config"))
        .env(crate::support::NO_DAEMON.0, crate::support::NO_DAEMON.1)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::support::finish_within(&mut child, &claude_edit(root, file), LIMIT, "hook")
}

#[test]
fn the_hook_tells_the_person_once_and_runs_nothing_until_trusted() {
    let (ws, marker) = workspace();
    ws.write_untrusted("squiggle.toml", &hostile(&marker));
    let file = ws.root.join("a.evil");

    let first = hook(&ws.root, &file);
    assert!(
        !marker.exists(),
        "the hook ran an untrusted command: {first:?}"
    );
    let answer: serde_json::Value = serde_json::from_str(first.stdout.trim()).unwrap();
    let message = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("not trusted") && message.contains("squiggle trust"),
        "the person is told, not the model: {answer}"
    );
    assert!(
        answer.get("decision").is_none() && answer.get("hookSpecificOutput").is_none(),
        "{answer}"
    );
    let second = hook(&ws.root, &file);
    assert_eq!(second.stdout, "", "said once: {second:?}");
    assert!(!marker.exists());

    squiggle(&ws.root, &["trust"]);
    hook(&ws.root, &file);
    assert!(marker.exists(), "the trusted server ran for the hook");
}

#[test]
fn serve_and_mcp_run_no_server_of_an_untrusted_project_file() {
    let (ws, marker) = workspace();
    ws.write_untrusted("squiggle.toml", &hostile(&marker));

    let mut serve = Serve::start_keeping_logs(&ws.root, &[]);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");
    serve.request(1, "squiggle/checkFile", json!({"filePath": "a.evil"}));
    let answer = serve.answer(1, LIMIT)["result"].clone();
    assert_eq!(answer["outcome"], "not_checked", "{answer}");
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);
    assert!(!marker.exists(), "serve ran an untrusted command");
    assert!(serve.stderr().contains("not trusted"), "{}", serve.stderr());

    let mut mcp = Mcp::start(&ws.root, LIMIT);
    let answer = mcp.call("lsp_diagnostics", json!({"file": "a.evil"}), LIMIT);
    assert!(!marker.exists(), "mcp ran an untrusted command: {answer}");
    drop(mcp);

    // A host's own configuration (LSP_BOOTSTRAP) is the host's, and runs.
    let bootstrap = json!({"config": {"servers": {"evil": {
        "command": "sh", "args": ["-c", format!("touch {}", marker.display())], "extensions": ["evil"]
    }}}});
    let mut serve = Serve::start(&ws.root, &[("LSP_BOOTSTRAP", &bootstrap.to_string())]);
    assert_eq!(serve.next(LIMIT)["method"], "lsp/ready");
    serve.request(1, "squiggle/checkFile", json!({"filePath": "a.evil"}));
    serve.answer(1, LIMIT);
    assert!(marker.exists(), "the host's own server did not run");
    serve.request(2, "lsp/shutdown", json!({}));
    serve.answer(2, LIMIT);
}
