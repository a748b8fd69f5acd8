//! The compiler-style text rendering and the one-line summary.

use super::one_line;
use crate::diagnostic::Severity;
use crate::report::Report;

/// `path:line:col: error[code]: message` per diagnostic (`path:line:col: warning: message` without code), files in order, one line each ("\n"-terminated), message newlines collapsed to a single space.
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    for (path, diags) in &report.files {
        for diag in diags {
            let code = diag
                .code
                .as_ref()
                .map(|code| format!("[{code}]"))
                .unwrap_or_default();
            out.push_str(&format!(
                "{path}:{}:{}: {}{code}: {}\n",
                diag.line,
                diag.column,
                diag.severity,
                one_line(&diag.message)
            ));
        }
    }
    out
}

/// A one-line summary such as `2 errors, 1 warning in 2 files` or `no diagnostics`.
pub fn summary(report: &Report) -> String {
    let count = |severity: Severity| {
        report
            .files
            .values()
            .flatten()
            .filter(|diag| diag.severity == severity)
            .count()
    };
    let counts: Vec<String> = Severity::ALL
        .iter()
        .map(|&severity| (count(severity), severity))
        .filter(|&(n, _)| n > 0)
        .map(|(n, severity)| plural(n, severity.as_str()))
        .collect();
    if counts.is_empty() {
        return "no diagnostics".to_string();
    }
    let files = report
        .files
        .values()
        .filter(|diags| !diags.is_empty())
        .count();
    format!("{} in {}", counts.join(", "), plural(files, "file"))
}

/// `1 error`, `2 errors`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Diagnostic;

    fn diag(
        line: u32,
        column: u32,
        severity: Severity,
        message: &str,
        code: Option<&str>,
    ) -> Diagnostic {
        Diagnostic::at(line, column, severity, message)
            .with_code(code)
            .with_source("src")
    }

    fn report(files: &[(&str, Vec<Diagnostic>)]) -> Report {
        Report {
            files: files
                .iter()
                .map(|(path, diags)| (path.to_string(), diags.clone()))
                .collect(),
            ..Report::default()
        }
    }

    #[test]
    fn text_has_one_line_per_diagnostic_in_file_order() {
        let report = report(&[
            (
                "src/b.rs",
                vec![diag(
                    3,
                    5,
                    Severity::Error,
                    "mismatched types",
                    Some("E0308"),
                )],
            ),
            (
                "a.py",
                vec![
                    diag(1, 1, Severity::Warning, "unused import", None),
                    diag(2, 7, Severity::Hint, "fading", Some("F401")),
                    diag(4, 2, Severity::Info, "note", None),
                ],
            ),
        ]);
        assert_eq!(
            render_text(&report),
            "a.py:1:1: warning: unused import\n\
             a.py:2:7: hint[F401]: fading\n\
             a.py:4:2: info: note\n\
             src/b.rs:3:5: error[E0308]: mismatched types\n"
        );
    }

    #[test]
    fn text_collapses_message_newlines() {
        let report = report(&[(
            "a.rs",
            vec![diag(
                1,
                2,
                Severity::Error,
                "mismatched types\n  expected u32",
                None,
            )],
        )]);
        assert_eq!(
            render_text(&report),
            "a.rs:1:2: error: mismatched types expected u32\n"
        );
    }

    #[test]
    fn text_of_empty_report_is_empty() {
        assert_eq!(render_text(&Report::default()), "");
        assert_eq!(render_text(&report(&[("a.py", vec![])])), "");
    }

    #[test]
    fn summary_counts_errors_and_warnings_over_files() {
        let report = report(&[
            (
                "a.py",
                vec![
                    diag(1, 1, Severity::Error, "x", None),
                    diag(2, 1, Severity::Warning, "y", None),
                ],
            ),
            ("b.py", vec![diag(1, 1, Severity::Error, "z", None)]),
            ("c.py", vec![]),
        ]);
        assert_eq!(summary(&report), "2 errors, 1 warning in 2 files");
    }

    #[test]
    fn summary_lists_every_severity_present_in_order() {
        let report = report(&[(
            "a.py",
            vec![
                diag(1, 1, Severity::Hint, "h", None),
                diag(2, 1, Severity::Info, "i", None),
                diag(3, 1, Severity::Info, "i", None),
                diag(4, 1, Severity::Error, "e", None),
            ],
        )]);
        assert_eq!(summary(&report), "1 error, 2 infos, 1 hint in 1 file");
    }

    #[test]
    fn summary_without_diagnostics() {
        assert_eq!(summary(&Report::default()), "no diagnostics");
        assert_eq!(summary(&report(&[("a.py", vec![])])), "no diagnostics");
    }
}
