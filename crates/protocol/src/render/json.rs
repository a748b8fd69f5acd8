//! The stable JSON rendering for programs.

use crate::diagnostic::Diagnostic;
use crate::outcome::Outcome;
use crate::report::{Basis, Report, ServerReport};
use serde_json::{json, Map, Value};

/// The stable JSON shape: {"files": {"<path>": [{"line","column","end_line","end_column","severity","message","code","source","also"?}]}, "outcomes": {"<path>": {"outcome","reason","missing"}}, "servers": [{"id","root","status","reason","basis"}], "timed_out": [..]}; files sorted; code/source null when absent.
///
/// `also` (`[{"code","source"}]`) is there only for a diagnostic that several servers
/// reported: the others' codes and sources. `outcomes` has every file of the report: `outcome` is `diagnostics`, `clean` or
/// `not_checked`, `reason` says why a file was not checked (else null), and `missing` names
/// the servers that gave no answer for a checked file, with why. A server's `basis` says what
/// its final answer rested on (`pull`, `version`, or `quiet_time`, a guess).
pub fn render_json(report: &Report) -> Value {
    let files: Map<String, Value> = report
        .files
        .iter()
        .map(|(path, diags)| {
            (
                path.clone(),
                Value::Array(diags.iter().map(diagnostic_json).collect()),
            )
        })
        .collect();
    let outcomes: Map<String, Value> = report
        .paths()
        .into_iter()
        .map(|path| (path.to_string(), outcome_json(report, path)))
        .collect();
    json!({
        "files": files,
        "outcomes": outcomes,
        "servers": report.servers.iter().map(server_json).collect::<Vec<_>>(),
        "timed_out": report.timed_out,
    })
}

/// One file's outcome object.
fn outcome_json(report: &Report, path: &str) -> Value {
    let checked = Outcome::Checked { missing: vec![] };
    let outcome = report.outcomes.get(path).unwrap_or(&checked);
    let found = report
        .files
        .get(path)
        .is_some_and(|diags| !diags.is_empty());
    json!({
        "outcome": outcome.kind(found),
        "reason": outcome.reason(),
        "missing": outcome.missing(),
    })
}

/// One diagnostic's JSON object.
fn diagnostic_json(diag: &Diagnostic) -> Value {
    let mut object = json!({
        "line": diag.line,
        "column": diag.column,
        "end_line": diag.end_line,
        "end_column": diag.end_column,
        "severity": diag.severity.as_str(),
        "message": diag.message,
        "code": diag.code,
        "source": diag.source,
    });
    if let (false, Value::Object(map)) = (diag.also.is_empty(), &mut object) {
        map.insert("also".to_string(), json!(diag.also));
    }
    object
}

/// One server's JSON object.
fn server_json(server: &ServerReport) -> Value {
    json!({
        "id": server.id,
        "root": server.root,
        "status": server.status.as_str(),
        "reason": server.reason,
        "basis": server.basis.map(Basis::as_str),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{ServerState, Severity};

    #[test]
    fn renders_the_stable_shape() {
        let mut report = Report::default();
        report.files.insert(
            "src/b.rs".to_string(),
            vec![Diagnostic {
                file: "src/b.rs".to_string(),
                line: 3,
                column: 5,
                end_line: 3,
                end_column: 9,
                severity: Severity::Error,
                message: "mismatched <types>".to_string(),
                code: Some("E0308".to_string()),
                source: Some("rustc".to_string()),
                also: Vec::new(),
            }],
        );
        report.files.insert(
            "a.py".to_string(),
            vec![Diagnostic {
                file: "a.py".to_string(),
                line: 1,
                column: 1,
                end_line: 2,
                end_column: 1,
                severity: Severity::Hint,
                message: "unused".to_string(),
                code: None,
                source: None,
                also: Vec::new(),
            }],
        );
        report.files.insert("clean.py".to_string(), vec![]);
        report.servers = vec![
            ServerReport {
                id: "rust-analyzer".to_string(),
                root: ".".to_string(),
                status: ServerState::Active,
                reason: None,
                basis: Some(Basis::QuietTime),
                required: false,
            },
            ServerReport {
                id: "pyright".to_string(),
                root: "py".to_string(),
                status: ServerState::Unavailable,
                reason: Some("not installed".to_string()),
                basis: None,
                required: false,
            },
        ];
        report.timed_out = vec!["pyright".to_string()];

        report.outcomes.insert(
            "clean.py".to_string(),
            Outcome::Checked {
                missing: vec!["ruff: not installed".to_string()],
            },
        );
        report.outcomes.insert(
            "skipped.bin".to_string(),
            Outcome::not_checked("looks binary"),
        );

        let expected = r#"{"files":{"a.py":[{"code":null,"column":1,"end_column":1,"end_line":2,"line":1,"message":"unused","severity":"hint","source":null}],"clean.py":[],"src/b.rs":[{"code":"E0308","column":5,"end_column":9,"end_line":3,"line":3,"message":"mismatched <types>","severity":"error","source":"rustc"}]},"outcomes":{"a.py":{"outcome":"diagnostics","reason":null,"missing":[]},"clean.py":{"outcome":"clean","reason":null,"missing":["ruff: not installed"]},"skipped.bin":{"outcome":"not_checked","reason":"looks binary","missing":[]},"src/b.rs":{"outcome":"diagnostics","reason":null,"missing":[]}},"servers":[{"basis":"quiet_time","id":"rust-analyzer","reason":null,"root":".","status":"active"},{"basis":null,"id":"pyright","reason":"not installed","root":"py","status":"unavailable"}],"timed_out":["pyright"]}"#;
        let expected: Value = serde_json::from_str(expected).unwrap_or_default();
        let rendered = render_json(&report);
        assert_eq!(rendered, expected);
        let keys: Vec<&String> = rendered["files"]
            .as_object()
            .map(|files| files.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["a.py", "clean.py", "src/b.rs"]);
    }

    #[test]
    fn a_diagnostic_several_servers_reported_names_the_others_in_also() {
        let mut report = Report::default();
        let undefined = Diagnostic::at(9, 27, Severity::Error, "\"x\" is not defined")
            .in_file("a.py")
            .with_code(Some("reportUndefinedVariable"))
            .with_source("Pyright")
            .also(Some("F821"), Some("Ruff"))
            .also(None, Some("other"));
        report.files.insert("a.py".to_string(), vec![undefined]);
        assert_eq!(
            render_json(&report)["files"]["a.py"],
            json!([{
                "line": 9, "column": 27, "end_line": 9, "end_column": 28, "severity": "error",
                "message": "\"x\" is not defined", "code": "reportUndefinedVariable",
                "source": "Pyright",
                "also": [{"code": "F821", "source": "Ruff"}, {"code": null, "source": "other"}]
            }])
        );
    }

    #[test]
    fn empty_report_renders_empty_collections() {
        assert_eq!(
            render_json(&Report::default()),
            json!({"files": {}, "outcomes": {}, "servers": [], "timed_out": []})
        );
    }
}
