//! Reading `squiggle check --format json` reports: the diagnostics' places and the servers'
//! states, in shapes a test compares with `assert_eq!`.

use std::path::Path;

use serde_json::Value;

/// Runs `squiggle check --root . --format json <files>` in `project`, asserts it found
/// diagnostics (exit code 1), and returns its report.
pub fn check_finding(project: &Path, files: &[&str]) -> Value {
    let mut args = vec!["check", "--root", ".", "--format", "json"];
    args.extend(files);
    let run = super::squiggle(project, &args);
    assert_eq!(run.code, 1, "diagnostics were found: {}", run.stderr);
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("no JSON report ({err}): {} / {}", run.stdout, run.stderr))
}

/// (file, line, column, code, source) of one diagnostic.
pub type Place = (String, u64, u64, String, String);

/// A [`Place`] from borrowed parts.
pub fn place(file: &str, line: u64, column: u64, code: &str, source: &str) -> Place {
    (
        file.to_string(),
        line,
        column,
        code.to_string(),
        source.to_string(),
    )
}

/// The [`Place`] of every diagnostic in a report, file by file in the report's order.
pub fn places(report: &Value) -> Vec<Place> {
    let mut found = Vec::new();
    for (file, list) in report["files"].as_object().unwrap() {
        for d in list.as_array().unwrap() {
            found.push(place(
                file,
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or_default(),
                d["source"].as_str().unwrap_or_default(),
            ));
        }
    }
    found
}

/// (id, status) of every server in a report.
pub fn server_states(report: &Value) -> Vec<(&str, &str)> {
    (report["servers"].as_array().unwrap().iter())
        .map(|s| (s["id"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect()
}
