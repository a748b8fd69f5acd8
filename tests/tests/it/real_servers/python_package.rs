//! pyright on a real package (tests/fixtures/real-py-rich: rich 14.3.3 with its tests and
//! examples, 213 files, four type errors seeded in `rich/console.py`), with `pyright
//! --outputjson` on the same tree as the oracle: `squiggle check --format json` of the folder
//! reports every error pyright reports, at its file, line, column and rule, cold and warm (the
//! daemon's first and second call), calls no file clean without pyright's answer, and leaves
//! pyright alive (a check of one file afterwards answers).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::real_server::{PYRIGHT, RUFF};
use crate::support::{
    find_command, fixture, installed_server_dirs, path_with_servers, real_servers_turn,
    squiggle_within,
};
use serde_json::Value;

/// The most one command may take (a cold check of the whole package on a busy machine).
const LIMIT: Duration = Duration::from_secs(240);

/// The file with the seeded errors.
const SEEDED_FILE: &str = "rich/console.py";

/// The seeded errors: line, column (1-based) and pyright's rule.
const SEEDED: [(u64, u64, &str); 4] = [
    (2633, 18, "reportOperatorIssue"),
    (2634, 34, "reportArgumentType"),
    (2635, 13, "reportAttributeAccessIssue"),
    (2636, 19, "reportAssignmentType"),
];

/// An error: file (relative to the project), line, column, rule.
pub(super) type Error = (String, u64, u64, String);

/// The errors `pyright --outputjson` reports for the project, with servers' PATH (so the same
/// Python environment resolves imports as for the language server).
pub(super) fn pyright_errors(project: &Path) -> BTreeSet<Error> {
    let pyright = find_command(installed_server_dirs(), "pyright").expect("pyright is installed");
    let output = std::process::Command::new(pyright)
        .args(["--outputjson", "."])
        .current_dir(project)
        .env("PATH", path_with_servers())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&output.stderr)));
    (report["generalDiagnostics"].as_array().unwrap().iter())
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            let file = Path::new(d["file"].as_str().unwrap());
            let file = file.strip_prefix(project).unwrap().to_string_lossy();
            let start = &d["range"]["start"];
            (
                file.into_owned(),
                start["line"].as_u64().unwrap() + 1,
                start["character"].as_u64().unwrap() + 1,
                d["rule"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The errors pyright gave in a `--format json` report (a merged diagnostic counts for each
/// server it stands for).
fn squiggles_pyright_errors(report: &Value) -> BTreeSet<Error> {
    let mut errors = BTreeSet::new();
    for (file, diagnostics) in report["files"].as_object().unwrap() {
        for d in diagnostics.as_array().unwrap() {
            let also = d["also"].as_array().cloned().unwrap_or_default();
            for reported in std::iter::once(d).chain(also.iter()) {
                if reported["source"] == "Pyright" {
                    errors.insert((
                        file.clone(),
                        d["line"].as_u64().unwrap(),
                        d["column"].as_u64().unwrap(),
                        reported["code"].as_str().unwrap_or_default().to_string(),
                    ));
                }
            }
        }
    }
    errors
}

/// `squiggle check --format json` of `target` (a folder or a file) with `env` on top: the
/// report and how long it took.
fn check(project: &Path, target: &str, env: &[(&str, &OsStr)]) -> (Value, Duration) {
    let started = Instant::now();
    let run = squiggle_within(project, &["check", "--format", "json", target], env, LIMIT);
    let took = started.elapsed();
    let report = serde_json::from_str(&run.stdout).unwrap_or_else(|err| panic!("{err}: {run:?}"));
    (report, took)
}

/// Asserts that a report of the whole package says what pyright says: every file checked by
/// pyright (none clean without its answer), and exactly pyright's errors.
fn assert_as_pyright(report: &Value, files: usize, expected: &BTreeSet<Error>, run: &str) {
    let outcomes = report["outcomes"].as_object().unwrap();
    assert_eq!(outcomes.len(), files, "{run}: every file has an outcome");
    for (file, outcome) in outcomes {
        assert_ne!(
            outcome["outcome"], "not_checked",
            "{run}: {file} was not checked: {outcome}"
        );
        let missing = outcome["missing"].as_array().cloned().unwrap_or_default();
        assert!(
            missing.is_empty(),
            "{run}: {file} is {} without {missing:?}",
            outcome["outcome"]
        );
    }
    let pyright = (report["servers"].as_array().unwrap().iter())
        .find(|s| s["id"] == "pyright")
        .unwrap();
    assert_eq!(pyright["status"], "active", "{run}: {pyright}");
    assert_eq!(report["timed_out"], serde_json::json!([]), "{run}");
    let found = squiggles_pyright_errors(report);
    let missed: Vec<&Error> = expected.difference(&found).collect();
    let extra: Vec<&Error> = found.difference(expected).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "{run}: missed {missed:?}, not pyright's {extra:?}"
    );
}

/// The `.py` files under a folder.
fn python_files(folder: &Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            count += python_files(&path);
        } else if path.extension().is_some_and(|e| e == "py") {
            count += 1;
        }
    }
    count
}

#[test]
fn a_check_of_a_213_file_package_reports_what_pyright_reports_cold_and_warm() {
    let _turn = real_servers_turn();
    PYRIGHT.require();
    RUFF.require();
    let (_dir, project) = fixture("real-py-rich");
    let files = python_files(&project);
    assert!(files >= 200, "{files} files");

    let started = Instant::now();
    let expected = pyright_errors(&project);
    let oracle_took = started.elapsed();
    for (line, column, rule) in SEEDED {
        let seeded = (SEEDED_FILE.to_string(), line, column, rule.to_string());
        assert!(expected.contains(&seeded), "pyright reports {seeded:?}");
    }

    let runtime = tempfile::tempdir().unwrap();
    let env: [(&str, &OsStr); 2] = [
        ("SQUIGGLE_NO_DAEMON", OsStr::new("0")),
        ("SQUIGGLE_RUNTIME_DIR", runtime.path().as_os_str()),
    ];
    // The daemon's first call starts pyright and ruff cold; the second finds them warm.
    let (cold, cold_took) = check(&project, ".", &env);
    assert_as_pyright(&cold, files, &expected, "cold");
    let (warm, warm_took) = check(&project, ".", &env);
    assert_as_pyright(&warm, files, &expected, "warm");

    // pyright is alive: a check of one file answers, with its errors.
    let (one, one_took) = check(&project, SEEDED_FILE, &env);
    let expected_one: BTreeSet<Error> = expected
        .iter()
        .filter(|(file, ..)| file == SEEDED_FILE)
        .cloned()
        .collect();
    assert_eq!(squiggles_pyright_errors(&one), expected_one, "{one}");
    assert_eq!(one["outcomes"][SEEDED_FILE]["outcome"], "diagnostics");
    squiggle_within(&project, &["daemon", "stop"], &env, LIMIT);
    eprintln!(
        "{files} files, {} pyright errors: pyright --outputjson {:.1} s; squiggle cold {:.1} s, warm {:.1} s, one file after {:.1} s",
        expected.len(),
        oracle_took.as_secs_f64(),
        cold_took.as_secs_f64(),
        warm_took.as_secs_f64(),
        one_took.as_secs_f64()
    );
}
