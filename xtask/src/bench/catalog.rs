//! What the benchmark measures on this machine: the real servers found on PATH (and a working
//! rust-analyzer), the real-size projects of the false-clean rate, and a note for each one that
//! is not there.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::answers::{Server, WarmLimit};
use super::false_clean::Project;
use super::final_floor::Signal;

/// The first `name` on `path`.
pub fn on_path(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The real servers measured cold and warm against their definitive floor, and a note for each
/// one that is not installed (or does not work).
pub fn real_servers(path: &std::ffi::OsStr) -> (Vec<Server>, Vec<String>) {
    let mut servers = Vec::new();
    let mut notes = Vec::new();
    let wanted = [
        ("pyright-langserver", "pyright", &["--stdio"][..], "python"),
        ("ruff", "ruff", &["server"][..], "python"),
        (
            "typescript-language-server",
            "typescript",
            &["--stdio"][..],
            "typescript",
        ),
    ];
    for (command, label, args, language) in wanted {
        let Some(program) = on_path(path, command) else {
            notes.push(format!(
                "{label}: not measured: {command} is not installed (cargo xtask install-servers)"
            ));
            continue;
        };
        let python = language == "python";
        servers.push(Server {
            label,
            program,
            args,
            language,
            signal: if python {
                Signal::Pull
            } else {
                Signal::Tsserver
            },
            fixture: if python { "python" } else { "typescript" },
            file: if python { "orders.py" } else { "src/user.ts" },
            comment: if python { "#" } else { "//" },
            others: match label {
                "pyright" => &["basedpyright", "ruff"],
                "ruff" => &["basedpyright", "pyright"],
                _ => &["eslint"],
            },
            api: label == "ruff",
            warm_limit: if python {
                WarmLimit::Within {
                    ratio: 1.2,
                    plus_ms: 2.0,
                }
            } else {
                WarmLimit::Ratio(2.0)
            },
            // The cold target is pyright's; the others are reported.
            cold_limit: (label == "pyright").then_some(1.1),
        });
    }
    // rust-analyzer only when one really runs (a rustup proxy without the component does not).
    let works = on_path(path, "rust-analyzer").is_some_and(|program| {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    });
    match on_path(path, "rust-analyzer") {
        Some(program) if works => servers.push(Server {
            label: "rust-analyzer",
            program,
            args: &[],
            language: "rust",
            // It publishes in stages with no end signal: its last publish, found generously.
            signal: Signal::LastPublish {
                generous: Duration::from_secs(2),
            },
            fixture: "rust",
            file: "src/main.rs",
            comment: "//",
            others: &[],
            api: false,
            warm_limit: WarmLimit::Ratio(2.0),
            cold_limit: None,
        }),
        _ => notes.push(
            "rust-analyzer: not measured: `rust-analyzer --version` does not succeed on PATH"
                .to_string(),
        ),
    }
    (servers, notes)
}

/// The real-size projects of the false-clean rate, and a note for each one whose servers are
/// not installed.
pub fn real_projects(path: &std::ffi::OsStr) -> (Vec<Project>, Vec<String>) {
    let projects = [
        (
            Project {
                label: "typescript, real-ts",
                fixture: "real-ts",
                file: "src/TaskEither.ts",
                expected: &[(255, 32, "2552")],
            },
            &["typescript-language-server"][..],
        ),
        (
            Project {
                label: "pyright+ruff, real-py",
                fixture: "real-py",
                file: "isort/api.py",
                expected: &[(98, 5, "reportUndefinedVariable"), (98, 5, "F821")],
            },
            &["pyright-langserver", "ruff"][..],
        ),
    ];
    let mut found = Vec::new();
    let mut notes = Vec::new();
    for (project, commands) in projects {
        match commands.iter().find(|c| on_path(path, c).is_none()) {
            None => found.push(project),
            Some(command) => notes.push(format!(
                "false cleans on {}: not measured: {command} is not installed",
                project.fixture
            )),
        }
    }
    (found, notes)
}

/// How a target names the expected diagnostics: `2552 at 255:32`.
pub fn expected_text(expected: &[(u64, u64, &str)]) -> String {
    expected
        .iter()
        .map(|(line, column, code)| format!("{code} at {line}:{column}"))
        .collect::<Vec<_>>()
        .join(" and ")
}
