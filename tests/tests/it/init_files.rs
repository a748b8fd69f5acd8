//! `squiggle init HOST` reads and writes only regular files inside the project: a settings
//! file or folder linked outside the project, a FIFO and a link to a device are refused naming
//! the file, without waiting or reading without end; a link inside the project is written at
//! its target; a write that fails (here: a file size limit, as on a full disk) leaves the old
//! settings whole.

#![allow(clippy::unwrap_used)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{finish_within, squiggle_bin, FakeWorkspace, Run};
use serde_json::Value;

/// How long one init run may take.
const LIMIT: Duration = Duration::from_secs(30);

/// `squiggle init HOST` in `root`, made a git work tree's top folder so that it is the project
/// folder init finds; `limit_file_size` caps the size of any file it writes (`RLIMIT_FSIZE`).
fn init_with(root: &Path, host: &str, limit_file_size: Option<u64>) -> Run {
    let _ = std::fs::create_dir(root.join(".git"));
    let mut command = Command::new(squiggle_bin());
    command
        .args(["init", host])
        .current_dir(root)
        .env("XDG_CONFIG_HOME", root.join(".no-user-config"))
        .env("SQUIGGLE_NO_DAEMON", "1")
        .env_remove("SQUIGGLE_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(bytes) = limit_file_size {
        // SAFETY: signal and setrlimit are async-signal-safe and touch no memory of this
        // process but the local limit.
        unsafe {
            command.pre_exec(move || {
                // A write past the limit then fails with EFBIG instead of killing the process.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let limit = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = command.spawn().unwrap();
    finish_within(&mut child, &[], LIMIT, &format!("squiggle init {host}"))
}

fn init(root: &Path, host: &str) -> Run {
    init_with(root, host, None)
}

/// The names in a folder, sorted.
fn names(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_settings_file_linked_outside_the_project_is_refused() {
    let ws = FakeWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    let user = outside.path().join("user-settings.json");
    std::fs::write(&user, "{\"model\": \"opus\"}\n").unwrap();
    std::fs::create_dir(ws.root.join(".claude")).unwrap();
    let link = ws.root.join(".claude/settings.json");
    std::os::unix::fs::symlink(&user, &link).unwrap();

    let run = init(&ws.root, "claude-code");

    assert_eq!(run.code, 2, "stdout: {}", run.stdout);
    let user = std::fs::canonicalize(&user).unwrap();
    assert!(
        run.stderr.contains(&format!(
            "squiggle: {} (a link to {}): leads outside the project {}; nothing was changed",
            link.display(),
            user.display(),
            ws.root.display()
        )),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&user).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(!ws.root.join(".mcp.json").exists(), ".mcp.json was written");
}

#[test]
fn a_settings_folder_linked_outside_the_project_is_refused() {
    let ws = FakeWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.root.join(".gemini")).unwrap();

    let run = init(&ws.root, "gemini-cli");

    assert_eq!(run.code, 2, "stdout: {}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "{} (a link to {}): leads outside the project",
            ws.root.join(".gemini/settings.json").display(),
            std::fs::canonicalize(outside.path())
                .unwrap()
                .join("settings.json")
                .display()
        )),
        "{}",
        run.stderr
    );
    assert!(names(outside.path()).is_empty(), "written outside");
}

#[test]
fn a_fifo_settings_file_is_refused_without_waiting() {
    let ws = FakeWorkspace::new();
    std::fs::create_dir(ws.root.join(".claude")).unwrap();
    let fifo = ws.root.join(".claude/settings.json");
    crate::support::mkfifo(&fifo);

    let run = init(&ws.root, "claude-code");

    assert_eq!(run.code, 2, "stdout: {}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "squiggle: {}: cannot read: not a regular file (a FIFO); nothing was changed",
            fifo.display()
        )),
        "{}",
        run.stderr
    );
    assert!(!ws.root.join(".mcp.json").exists(), ".mcp.json was written");
}

#[test]
fn an_mcp_json_linked_to_a_device_is_refused_without_reading_it() {
    let ws = FakeWorkspace::new();
    std::os::unix::fs::symlink("/dev/zero", ws.root.join(".mcp.json")).unwrap();

    let run = init(&ws.root, "claude-code");

    assert_eq!(run.code, 2, "stdout: {}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "squiggle: {} (a link to /dev/zero): leads outside the project",
            ws.root.join(".mcp.json").display()
        )),
        "{}",
        run.stderr
    );
    assert!(
        !ws.root.join(".claude/settings.json").exists(),
        "settings.json was written though .mcp.json was refused"
    );
}

#[test]
fn a_settings_file_linked_inside_the_project_is_written_at_its_target() {
    let ws = FakeWorkspace::new();
    ws.write("shared/claude.json", "{\"model\": \"opus\"}\n");
    std::fs::create_dir(ws.root.join(".claude")).unwrap();
    let link = ws.root.join(".claude/settings.json");
    std::os::unix::fs::symlink("../shared/claude.json", &link).unwrap();

    let run = init(&ws.root, "claude-code");

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let target = ws.root.join("shared/claude.json");
    assert!(
        run.stdout.starts_with(&format!(
            "{} (a link to {}): hooks.PostToolUse: added",
            link.display(),
            target.display()
        )),
        "{}",
        run.stdout
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(written["model"], "opus");
    assert_eq!(
        written["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "squiggle hook claude-code --with-later"
    );
}

#[test]
fn a_write_that_fails_keeps_the_old_settings_whole() {
    let ws = FakeWorkspace::new();
    // Settings over 4 KiB, so that the merged text is cut by a 4 KiB file size limit (as a
    // full disk cut the file written in place).
    let allow: Vec<String> = (0..200).map(|i| format!("Bash(make target-{i})")).collect();
    let settings = serde_json::json!({"permissions": {"allow": allow}}).to_string();
    assert!(settings.len() > 4096);
    ws.write(".claude/settings.json", &settings);

    let run = init_with(&ws.root, "claude-code", Some(4096));

    assert_eq!(run.code, 2, "stdout: {}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "squiggle: {}: cannot write: ",
            ws.root.join(".claude/settings.json").display()
        )) && run.stderr.contains("it is as it was, nothing was changed"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(ws.root.join(".claude/settings.json")).unwrap(),
        settings
    );
    assert_eq!(names(&ws.root.join(".claude")), ["settings.json"]);
    assert!(!ws.root.join(".mcp.json").exists(), ".mcp.json was written");
}
