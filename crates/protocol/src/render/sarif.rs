//! SARIF 2.1.0 for code-scanning tools (GitHub code scanning, IDE viewers): one run whose
//! driver lists a rule per server and code, a result per diagnostic at its 1-based region
//! (columns in Unicode code points, as squiggle counts them), and, for each file that was not
//! checked, a tool execution notification: never a result-free file that reads as clean.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::diagnostic::{Diagnostic, Severity};
use crate::paths;
use crate::report::Report;

/// The base id relative artifact URIs are resolved against.
const SRCROOT: &str = "%SRCROOT%";

/// The SARIF log of `report`; `root_uri` is the workspace root as a `file://` URI ending in
/// `/`, and `version` squiggle's own.
pub fn render_sarif(report: &Report, root_uri: &str, version: &str) -> Value {
    let mut rules: BTreeMap<String, Value> = BTreeMap::new();
    let mut results = Vec::new();
    for (path, diagnostics) in &report.files {
        // The same rule and message twice in one file: told apart by their order.
        let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
        for diagnostic in diagnostics {
            let rule = rule_id(diagnostic);
            rules
                .entry(rule.clone())
                .or_insert_with(|| rule_json(&rule, diagnostic));
            let hash = fingerprint(&rule, path, &diagnostic.message);
            let nth = seen.entry(hash).or_default();
            *nth += 1;
            results.push(json!({
                "ruleId": rule,
                "level": level(diagnostic.severity),
                "message": {"text": diagnostic.message},
                "locations": [location(path, Some(diagnostic))],
                "partialFingerprints": {"squiggle/v1": format!("{hash:016x}:{nth}")},
            }));
        }
    }
    let notifications: Vec<Value> = report
        .paths()
        .into_iter()
        .filter_map(|path| {
            let reason = report.not_checked(path)?;
            Some(json!({
                "level": "warning",
                "message": {"text": format!("{path}: not checked: {reason}")},
                "locations": [location(path, None)],
            }))
        })
        .collect();
    // Rule indices follow the sorted rules.
    let index: BTreeMap<&String, usize> = rules.keys().enumerate().map(|(n, id)| (id, n)).collect();
    for result in &mut results {
        let id = result["ruleId"].as_str().unwrap_or_default().to_string();
        result["ruleIndex"] = json!(index.get(&id).copied().unwrap_or_default());
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "squiggle",
                "version": version,
                "informationUri": "https://github.com/squiggle-dev/squiggle",
                "rules": rules.into_values().collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": root_uri}},
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
        }],
    })
}

/// A stable rule id from the server and the code: `Pyright/reportUndefinedVariable`,
/// `rustc/E0502`; the source alone without a code, `squiggle` without either.
fn rule_id(diagnostic: &Diagnostic) -> String {
    let source = diagnostic.source.as_deref().unwrap_or("squiggle");
    match &diagnostic.code {
        Some(code) => format!("{source}/{code}"),
        None => source.to_string(),
    }
}

/// A rule of the driver, described by the first diagnostic that names it.
fn rule_json(id: &str, diagnostic: &Diagnostic) -> Value {
    let origins: Vec<String> = diagnostic
        .also
        .iter()
        .map(|other| {
            let source = other.source.as_deref().unwrap_or("squiggle");
            match &other.code {
                Some(code) => format!("{source}/{code}"),
                None => source.to_string(),
            }
        })
        .collect();
    let mut rule = json!({
        "id": id,
        "shortDescription": {"text": id},
        "defaultConfiguration": {"level": level(diagnostic.severity)},
    });
    if !origins.is_empty() {
        rule["properties"] = json!({"alsoReportedAs": origins});
    }
    rule
}

/// The SARIF level of a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "note",
    }
}

/// A file's location (with the diagnostic's region, if any), relative to `%SRCROOT%`.
fn location(path: &str, diagnostic: Option<&Diagnostic>) -> Value {
    let mut physical =
        json!({"artifactLocation": {"uri": paths::relative_uri(path), "uriBaseId": SRCROOT}});
    if let Some(d) = diagnostic {
        physical["region"] = json!({
            "startLine": d.line.max(1),
            "startColumn": d.column.max(1),
            "endLine": d.end_line.max(d.line).max(1),
            "endColumn": d.end_column.max(1),
        });
    }
    json!({"physicalLocation": physical})
}

/// A 64-bit FNV-1a hash of the rule, the file and the message: the same problem keeps its
/// fingerprint when lines move above it.
fn fingerprint(rule: &str, path: &str, message: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in [rule, "\0", path, "\0", message].concat().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::diagnostic::Origin;
    use crate::outcome::Outcome;

    fn diagnostic(line: u32, code: &str, source: &str, message: &str) -> Diagnostic {
        Diagnostic {
            file: "src/a b.py".to_string(),
            line,
            column: 5,
            end_line: line,
            end_column: 9,
            severity: Severity::Error,
            message: message.to_string(),
            code: Some(code.to_string()),
            source: Some(source.to_string()),
            also: Vec::new(),
        }
    }

    #[test]
    fn results_rules_regions_and_files_not_checked() {
        let mut report = Report::default();
        let mut merged = diagnostic(
            3,
            "reportUndefinedVariable",
            "Pyright",
            "\"x\" is not defined",
        );
        merged.also = vec![Origin {
            code: Some("F821".to_string()),
            source: Some("Ruff".to_string()),
        }];
        let same = diagnostic(
            9,
            "reportUndefinedVariable",
            "Pyright",
            "\"x\" is not defined",
        );
        report
            .files
            .insert("src/a b.py".to_string(), vec![merged, same]);
        report.files.insert("b.go".to_string(), vec![]);
        report.outcomes.insert(
            "b.go".to_string(),
            Outcome::not_checked("gopls: not installed"),
        );

        let log = render_sarif(&report, "file:///w/", "1.2.3");
        let run = &log["runs"][0];
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(run["tool"]["driver"]["version"], "1.2.3");
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 1, "one rule per server and code");
        assert_eq!(rules[0]["id"], "Pyright/reportUndefinedVariable");
        assert_eq!(
            rules[0]["properties"]["alsoReportedAs"],
            json!(["Ruff/F821"])
        );
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["ruleIndex"], 0);
        assert_eq!(results[0]["level"], "error");
        let location = &results[0]["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uri"], "src/a%20b.py");
        assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(
            location["region"],
            json!({"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 9})
        );
        // The same message twice in a file: two fingerprints, each stable under line moves.
        let prints: Vec<&str> = results
            .iter()
            .map(|r| r["partialFingerprints"]["squiggle/v1"].as_str().unwrap())
            .collect();
        assert_ne!(prints[0], prints[1]);
        assert!(prints[0].ends_with(":1") && prints[1].ends_with(":2"));
        let notes = run["invocations"][0]["toolExecutionNotifications"]
            .as_array()
            .unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(
            notes[0]["message"]["text"],
            "b.go: not checked: gopls: not installed"
        );
        assert_eq!(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///w/");
    }

    #[test]
    fn rule_ids_are_stable_and_levels_follow_severity() {
        let mut d = diagnostic(1, "E0502", "rustc", "borrow");
        assert_eq!(rule_id(&d), "rustc/E0502");
        d.code = None;
        assert_eq!(rule_id(&d), "rustc");
        d.source = None;
        assert_eq!(rule_id(&d), "squiggle");
        assert_eq!(level(Severity::Warning), "warning");
        assert_eq!(level(Severity::Hint), "note");
        assert_eq!(
            fingerprint("r", "a.py", "m"),
            fingerprint("r", "a.py", "m"),
            "stable"
        );
    }
}
