//! The real-server matrix: every built-in server that installs from npm or PyPI here, run
//! through `squiggle check --format json` on a fixture with one known error
//! (`tests/fixtures/matrix/<server>/`), asserting the exact 1-based line, column, code and source.
//! One test per server, so each server's result shows in the test output; only the server under
//! test is enabled, and they run in parallel. `cargo xtask test` installs the pinned servers
//! into `target/lsp-servers/matrix/` (`cargo xtask install-servers --all` does too).
//!
//! A server that answers pulls (`textDocument/diagnostic`: json, css, html, eslint,
//! basedpyright, ty) is checked [`COLD_RUNS`] times, each run a new server on a fresh copy of
//! its fixture, and each run must find the error and be final on the pull: an answer the
//! server gave before it had loaded the project would be a false clean on a cold check.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::report::{place, places, server_states, Place};
use crate::support::{
    assert_no_process_in, find_command, fixture, repo_root, squiggle_bin, NO_DAEMON,
};
use serde_json::Value;

/// The folder `cargo xtask install-servers --all` installs the matrix servers into (laid out
/// like `squiggle install`'s data folder).
fn matrix_dir() -> PathBuf {
    repo_root().join("target/lsp-servers/matrix")
}

/// The matrix's bin folders: npm's and PyPI's (as `squiggle install` lays them out) and
/// crates.io's (`cargo install --root`).
fn matrix_bin_dirs() -> Vec<PathBuf> {
    let mut dirs = squiggle_config::install::bin_dirs(&matrix_dir());
    dirs.push(matrix_dir().join("cargo").join("bin"));
    dirs
}

/// Where a server's command is, in the matrix's folders or on PATH.
fn installed(command: &str) -> Option<PathBuf> {
    find_command(matrix_bin_dirs(), command)
}

/// Whether a server that `cargo xtask test` does not install is here; when not, says plainly
/// that its test was skipped and how to run it.
fn present(server: &str, command: &str, how: &str) -> bool {
    let found = installed(command).is_some();
    if !found {
        eprintln!("SKIPPED matrix: {server}: `{command}` is not installed ({how})");
    }
    found
}

/// One expected diagnostic: file, line, column, code, source.
type Expected = (&'static str, u64, u64, &'static str, &'static str);

/// How many cold one-shot runs a pull server's test makes, each on a fresh copy of its fixture.
const COLD_RUNS: usize = 5;

/// Checks `files` of the fixture `tests/fixtures/matrix/<server>` with only `server` enabled and
/// asserts exactly `expected` at `severities`; `modules` links the matrix's `node_modules` into
/// the project (servers that load the project's own packages: eslint).
fn check(server: &str, files: &[&str], severities: &str, modules: bool, expected: &[Expected]) {
    check_via(
        server,
        files,
        severities,
        modules,
        expected,
        Via::Path,
        Answer::Published,
    );
}

/// [`check`] for a server that answers pulls: [`COLD_RUNS`] cold runs, each on a fresh copy of
/// the fixture, each finding exactly `expected` and final on the pull.
fn check_pulled(
    server: &str,
    files: &[&str],
    severities: &str,
    modules: bool,
    expected: &[Expected],
) {
    check_via(
        server,
        files,
        severities,
        modules,
        expected,
        Via::Path,
        Answer::Pulled,
    );
}

/// How the server under test answers, and so how often it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// It publishes: one run.
    Published,
    /// It answers pulls: [`COLD_RUNS`] cold runs, each final on the pull (basis `pull`).
    Pulled,
    /// It publishes once per version: one run, final on a publish naming the version (basis
    /// `version`).
    Versioned,
    /// It publishes with no signal that it is done: one run, final after a quiet time (basis
    /// `quiet_time`, a guess, and said to be one).
    Guessed,
}

/// How squiggle finds the server under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// The matrix's bin folders are put in front of `PATH`.
    Path,
    /// Not on `PATH`: the matrix folder is squiggle's data folder, as `squiggle install` fills it.
    DataFolder,
}

/// [`check`], finding the server `via` PATH or the data folder; a server that answers pulls is
/// checked cold [`COLD_RUNS`] times.
fn check_via(
    server: &str,
    files: &[&str],
    severities: &str,
    modules: bool,
    expected: &[Expected],
    via: Via,
    answer: Answer,
) {
    let spec = squiggle_config::builtin_servers().remove(server).unwrap();
    assert!(
        installed(&spec.command).is_some(),
        "{server}: `{}` is not installed: run `cargo xtask install-servers --all`",
        spec.command
    );
    let runs = match answer {
        Answer::Pulled => COLD_RUNS,
        _ => 1,
    };
    let took: Vec<u128> = (1..=runs)
        .map(|run| {
            let took = cold_run(server, files, severities, modules, expected, via, answer);
            assert!(
                took < Duration::from_secs(60),
                "{server}: run {run} took {took:?}"
            );
            took.as_millis()
        })
        .collect();
    eprintln!("matrix: {server} ok in {runs} cold run(s), ms: {took:?}");
}

/// One cold run of [`check_via`]: a fresh copy of the fixture, a new squiggle and a new server;
/// asserts the report and returns how long the check took.
fn cold_run(
    server: &str,
    files: &[&str],
    severities: &str,
    modules: bool,
    expected: &[Expected],
    via: Via,
    answer: Answer,
) -> Duration {
    let dirs = matrix_bin_dirs();
    let (_dir, project) = fixture(&format!("matrix/{server}"));
    if modules {
        std::os::unix::fs::symlink(
            squiggle_config::install::npm_dir(&matrix_dir()).join("node_modules"),
            project.join("node_modules"),
        )
        .unwrap();
    }
    // A loaded CI machine starts some servers slowly: the deadlines are for hangs, not speed.
    let deadlines = "first_touch_timeout_ms = 45000\ninitialize_timeout_ms = 45000\n";
    let others: String = squiggle_config::builtin_servers()
        .keys()
        .filter(|id| *id != server)
        .map(|id| format!("[servers.{id}]\nenabled = false\n"))
        .collect();
    std::fs::write(
        project.join("squiggle.toml"),
        format!("{deadlines}{others}"),
    )
    .unwrap();
    let current = std::env::var_os("PATH").unwrap_or_default();
    let (data, in_front) = match via {
        Via::Path => (project.join(".no-data"), dirs),
        Via::DataFolder => (matrix_dir(), Vec::new()),
    };
    let path = std::env::join_paths(in_front.into_iter().chain(std::env::split_paths(&current)));
    let started = Instant::now();
    let mut args = vec![
        "check",
        "--root",
        ".",
        "--format",
        "json",
        "--severity",
        severities,
    ];
    args.extend(files);
    let output = std::process::Command::new(squiggle_bin())
        .args(&args)
        .current_dir(&project)
        .env("PATH", path.unwrap())
        .env("XDG_CONFIG_HOME", project.join(".no-user-config"))
        .env(squiggle_config::install::DATA_DIR_ENV, &data)
        .env(NO_DAEMON.0, NO_DAEMON.1)
        .output()
        .unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|err| panic!("{server}: no JSON report ({err}): {stdout}\n{stderr}"));
    assert_eq!(
        server_states(&report),
        [(server, "active")],
        "{server}: {report}"
    );
    let found = places(&report);
    let expected: Vec<Place> = expected
        .iter()
        .map(|&(file, line, column, code, source)| place(file, line, column, code, source))
        .collect();
    assert_eq!(found, expected, "{server}: {report}");
    let basis = match answer {
        Answer::Published => None,
        Answer::Pulled => Some("pull"),
        Answer::Versioned => Some("version"),
        Answer::Guessed => Some("quiet_time"),
    };
    if let Some(basis) = basis {
        assert_eq!(
            report["servers"][0]["basis"], basis,
            "{server}: the answer's basis: {report}"
        );
    }
    assert_eq!(output.status.code(), Some(1), "{server}: {stderr}");
    assert_no_process_in(&project);
    took
}

#[test]
fn json() {
    check_pulled(
        "json",
        &["settings.json"],
        "error",
        false,
        &[("settings.json", 5, 3, "514", "json")],
    );
}

#[test]
fn css_scss() {
    check_pulled(
        "css",
        &["style.css", "theme.scss"],
        "error",
        false,
        &[
            ("style.css", 4, 10, "css-semicolonexpected", "css"),
            ("style.css", 5, 1, "css-ruleorselectorexpected", "css"),
            ("theme.scss", 4, 10, "css-propertyvalueexpected", "scss"),
        ],
    );
}

#[test]
fn html() {
    check_pulled(
        "html",
        &["index.html"],
        "error",
        false,
        &[
            ("index.html", 6, 9, "css-semicolonexpected", "css"),
            ("index.html", 6, 14, "css-ruleorselectorexpected", "css"),
            ("index.html", 11, 15, "", "javascript"),
        ],
    );
}

#[test]
fn yaml() {
    check(
        "yaml",
        &["config.yaml"],
        "error",
        false,
        &[("config.yaml", 5, 1, "0", "YAML")],
    );
}

#[test]
fn bash_with_shellcheck() {
    check(
        "bash",
        &["run.sh"],
        "error,warning,info",
        false,
        &[("run.sh", 6, 6, "SC2086", "shellcheck")],
    );
}

/// bash-language-server and shellcheck found only in the data folder `squiggle install` fills:
/// squiggle finds the server there and runs it with that folder on its PATH, where it finds
/// shellcheck.
#[test]
fn bash_from_the_data_folder() {
    let on_path = |command: &str| {
        let current = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&current).any(|dir| dir.join(command).is_file())
    };
    if on_path("bash-language-server") || on_path("shellcheck") {
        eprintln!("SKIPPED matrix: bash from the data folder: bash-language-server or shellcheck is on PATH here");
        return;
    }
    check_via(
        "bash",
        &["run.sh"],
        "error,warning,info",
        false,
        &[("run.sh", 6, 6, "SC2086", "shellcheck")],
        Via::DataFolder,
        Answer::Published,
    );
}

#[test]
fn dockerfile() {
    check(
        "dockerfile",
        &["Dockerfile"],
        "error",
        false,
        &[("Dockerfile", 4, 1, "7", "dockerfile-utils")],
    );
}

#[test]
fn clangd_c_and_cpp() {
    // clangd names the version in each publish, one per version: final on it.
    check_via(
        "clangd",
        &["main.c", "app.cpp"],
        "error",
        false,
        &[
            ("app.cpp", 5, 9, "typecheck_nonviable_condition", "clang"),
            ("main.c", 4, 9, "-Wint-conversion", "clang"),
        ],
        Via::Path,
        Answer::Versioned,
    );
}

#[test]
fn intelephense() {
    check(
        "intelephense",
        &["index.php"],
        "error",
        false,
        &[("index.php", 9, 1, "P1001", "intelephense")],
    );
}

#[test]
fn svelte() {
    check(
        "svelte",
        &["App.svelte"],
        "error,warning",
        false,
        &[("App.svelte", 6, 4, "missing-declaration", "svelte")],
    );
}

#[test]
fn eslint() {
    check_pulled(
        "eslint",
        &["index.js"],
        "error",
        true,
        &[
            ("index.js", 1, 7, "no-unused-vars", "eslint"),
            ("index.js", 3, 7, "eqeqeq", "eslint"),
        ],
    );
}

#[test]
fn biome() {
    check(
        "biome",
        &["index.js"],
        "error,warning,info",
        false,
        &[
            (
                "index.js",
                1,
                7,
                "lint/correctness/noUnusedVariables",
                "biome",
            ),
            ("index.js", 2, 1, "lint/style/useConst", "biome"),
            ("index.js", 3, 7, "lint/suspicious/noDoubleEquals", "biome"),
            ("index.js", 4, 3, "lint/suspicious/noDebugger", "biome"),
        ],
    );
}

#[test]
fn basedpyright() {
    check_pulled(
        "basedpyright",
        &["main.py"],
        "error",
        false,
        &[("main.py", 2, 25, "reportUndefinedVariable", "basedpyright")],
    );
}

#[test]
fn ty() {
    check_pulled(
        "ty",
        &["main.py"],
        "error",
        false,
        &[("main.py", 2, 25, "unresolved-reference", "ty")],
    );
}

#[test]
fn pylsp() {
    check(
        "pylsp",
        &["main.py"],
        "error",
        false,
        &[("main.py", 2, 25, "", "pyflakes")],
    );
}

/// Debian's gopls (`apt install gopls golang-go`): not installed by `cargo xtask test`.
#[test]
fn gopls_when_installed() {
    if !present(
        "gopls",
        "gopls",
        "apt install gopls golang-go, or go install golang.org/x/tools/gopls@latest",
    ) || !present("gopls", "go", "apt install golang-go")
    {
        return;
    }
    // gopls sends no end signal (0.5: no progress but its workspace load, no version in its
    // serverInfo; newer ones publish type errors and analyzer findings in stages): the answer
    // rests on a quiet time, and says it is a guess.
    check_via(
        "gopls",
        &["main.go"],
        "error",
        false,
        &[("main.go", 6, 18, "IncompatibleAssign", "compiler")],
        Via::Path,
        Answer::Guessed,
    );
}

/// taplo built with its language server from crates.io (`cargo xtask install-servers --all`
/// builds it; `cargo xtask test` does not, to keep CI short).
#[test]
fn taplo_when_installed() {
    let how = "cargo xtask install-servers --all builds it from crates.io";
    if !present("taplo", "taplo", how) {
        return;
    }
    check(
        "taplo",
        &["Cargo.toml"],
        "error",
        false,
        &[("Cargo.toml", 4, 11, "", "Even Better TOML")],
    );
}
