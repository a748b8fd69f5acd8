//! What the benchmark measures on this machine: the real servers found on PATH (and a working
//! rust-analyzer, and TypeScript 7's `tsc --lsp` when `cargo xtask install-servers` installed
//! it), the real-size projects of the false-clean rate, and a note for each one that is not
//! there.

use std::path::{Path, PathBuf};
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

/// The `node_modules` of the TypeScript 7 that `cargo xtask install-servers` installs apart (a
/// TypeScript 7 project links its own to it), or why there is none.
pub fn typescript_7(workspace: &Path) -> Result<PathBuf, String> {
    let modules = crate::lsp_servers::typescript_7_dir(workspace).join("node_modules");
    let tsc = modules.join(".bin/tsc");
    if !tsc.exists() {
        return Err("TypeScript 7 is not installed (cargo xtask install-servers)".to_string());
    }
    match squiggle_config::typescript::why_not_lsp(&tsc) {
        None => Ok(modules),
        Some(why) => Err(format!("{}: {why}", tsc.display())),
    }
}

/// The real servers measured cold and warm against their definitive floor, and a note for each
/// one that is not installed (or does not work). `typescript_7` is where TypeScript 7 is.
pub fn real_servers(
    path: &std::ffi::OsStr,
    typescript_7: &Result<PathBuf, String>,
) -> (Vec<Server>, Vec<String>) {
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
            api: label == "ruff",
            warm_limit: if python {
                WarmLimit::Within {
                    ratio: 1.2,
                    plus_ms: 2.0,
                }
            } else {
                WarmLimit::Ratio(2.0)
            },
            // The cold target is pyright's (and tsc --lsp's); the others are reported.
            cold_limit: (label == "pyright").then_some(1.1),
            modules: None,
            seed: None,
        });
    }
    match typescript_7 {
        Ok(modules) => servers.push(Server {
            label: "typescript-native",
            program: modules.join(".bin/tsc"),
            args: &["--lsp", "--stdio"],
            language: "typescript",
            signal: Signal::Pull,
            fixture: "typescript",
            file: "src/user.ts",
            comment: "//",
            api: false,
            warm_limit: WarmLimit::Within {
                ratio: 1.2,
                plus_ms: 2.0,
            },
            cold_limit: Some(1.1),
            modules: Some(modules.clone()),
            seed: None,
        }),
        Err(why) => notes.push(format!(
            "typescript-native (tsc --lsp): not measured: {why}"
        )),
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
            signal: RUST_SIGNAL,
            fixture: "real-rust",
            file: RUST_FILE,
            comment: "//",
            api: false,
            // Both wait for cargo check; squiggle adds settle_ms after its end.
            warm_limit: WarmLimit::Ratio(1.5),
            cold_limit: None,
            modules: None,
            seed: Some(RUST_BORROW),
        }),
        _ => notes.push(
            "rust-analyzer: not measured: `rust-analyzer --version` does not succeed on PATH"
                .to_string(),
        ),
    }
    (servers, notes)
}

/// What rust-analyzer's final answer for a saved file waits for: a pull once it is ready, and
/// the end of the `cargo check` its save started with what that check publishes (squiggle's
/// settle_ms, 150 ms, of quiet after it).
const RUST_SIGNAL: Signal = Signal::PullAndCheck {
    check: "rust-analyzer/flycheck/",
    quiet: Duration::from_millis(150),
};

/// The file of the vendored crate (tests/fixtures/real-rust) that rust-analyzer is measured on.
const RUST_FILE: &str = "src/debug.rs";

/// The borrow error introduced in the crate (the same as the tests' E0502 seed).
const RUST_BORROW: (&str, &str) = (
    "        let mut bytes = [0u8; 10];\n",
    "        let mut bytes = [0u8; 10];\n        let first = &bytes;\n        let rest = &mut bytes;\n        rest[0] = first[0];\n",
);

/// The error introduced in fp-ts.
const TS2552_AT_255_32: &[(u64, u64, &str)] = &[(255, 32, "2552")];

/// The real-size projects of the false-clean rate, and a note for each one whose servers are
/// not installed. fp-ts is measured twice: on typescript-language-server (with the TypeScript 5
/// found on PATH) and, with its `node_modules` linked to TypeScript 7, on `tsc --lsp`.
pub fn real_projects(
    path: &std::ffi::OsStr,
    typescript_7: &Result<PathBuf, String>,
) -> (Vec<Project>, Vec<String>) {
    const FP_TS: &str = "src/TaskEither.ts";
    let projects = [
        (
            Project {
                label: "typescript, real-ts",
                fixture: "real-ts",
                copy: "real-ts",
                file: FP_TS,
                expected: TS2552_AT_255_32,
                modules: None,
                seed: None,
            },
            &["typescript-language-server"][..],
        ),
        (
            Project {
                label: "pyright+ruff, real-py",
                fixture: "real-py",
                copy: "real-py",
                file: "isort/api.py",
                expected: &[(98, 5, "reportUndefinedVariable"), (98, 5, "F821")],
                modules: None,
                seed: None,
            },
            &["pyright-langserver", "ruff"][..],
        ),
        (
            // A borrow error: only cargo check finds it, after the save.
            Project {
                label: "rust-analyzer, real-rust",
                fixture: "real-rust",
                copy: "real-rust",
                file: RUST_FILE,
                expected: &[(16, 20, "E0502")],
                modules: None,
                seed: Some(RUST_BORROW),
            },
            &["rust-analyzer"][..],
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
    match typescript_7 {
        Ok(modules) => found.push(Project {
            label: "typescript-native, real-ts",
            fixture: "real-ts",
            copy: "real-ts-typescript-7",
            file: FP_TS,
            expected: TS2552_AT_255_32,
            modules: Some(modules.clone()),
            seed: None,
        }),
        Err(why) => notes.push(format!(
            "false cleans on real-ts with tsc --lsp (TypeScript 7): not measured: {why}"
        )),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_typescript_7_its_rows_are_notes() {
        let missing = typescript_7(Path::new("/nonexistent-workspace"));
        assert_eq!(
            missing,
            Err("TypeScript 7 is not installed (cargo xtask install-servers)".to_string())
        );
        let (servers, notes) = real_servers(std::ffi::OsStr::new(""), &missing);
        assert!(servers.iter().all(|s| s.label != "typescript-native"));
        assert!(notes.iter().any(|n| n.starts_with(
            "typescript-native (tsc --lsp): not measured: TypeScript 7 is not installed"
        )));
        let (projects, notes) = real_projects(std::ffi::OsStr::new(""), &missing);
        assert!(projects.is_empty());
        assert!(notes
            .iter()
            .any(|n| n.starts_with("false cleans on real-ts with tsc --lsp (TypeScript 7)")));
    }

    #[test]
    fn with_typescript_7_fp_ts_is_also_checked_through_tsc_lsp() {
        let modules = Ok(PathBuf::from("/ts7/node_modules"));
        let (servers, _) = real_servers(std::ffi::OsStr::new(""), &modules);
        let native = servers
            .iter()
            .find(|s| s.label == "typescript-native")
            .map(|s| (s.program.clone(), s.modules.clone(), s.cold_limit));
        assert_eq!(
            native,
            Some((
                PathBuf::from("/ts7/node_modules/.bin/tsc"),
                Some(PathBuf::from("/ts7/node_modules")),
                Some(1.1)
            ))
        );
        let (projects, _) = real_projects(std::ffi::OsStr::new(""), &modules);
        let copies: Vec<_> = projects.iter().map(|p| (p.copy, p.expected)).collect();
        assert_eq!(copies, vec![("real-ts-typescript-7", TS2552_AT_255_32)]);
    }
}
