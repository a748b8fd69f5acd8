//! Reading `squiggle check --format json` reports: the diagnostics' places and the servers'
//! states, in shapes a test compares with `assert_eq!`.

use serde_json::Value;

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
