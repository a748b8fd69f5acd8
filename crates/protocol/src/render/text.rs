//! The compiler-style text rendering and the one-line summary.

use super::plain::{display_path, one_line};
use crate::diagnostic::Severity;
use crate::report::Report;

/// `path:line:col: error[code]: message` per diagnostic (`path:line:col: warning: message` without code; `error[code1, code2]: message (Source1, Source2)` for one that several servers reported), and `path: not checked: reason` per file that was not checked, files in path order, one line each ("\n"-terminated).
///
/// Messages and reasons are put on one line ([`one_line`]); a path with control characters
/// is quoted ([`display_path`]).
pub fn render_text(report: &Report) -> String {
    let mut out = String::new();
    for path in report.paths() {
        let shown = display_path(path);
        for diag in report.files.get(path).into_iter().flatten() {
            let codes = diag.codes();
            let code = if codes.is_empty() {
                String::new()
            } else {
                format!("[{}]", joined(&codes))
            };
            let sources = match diag.sources() {
                sources if diag.also.is_empty() || sources.is_empty() => String::new(),
                sources => format!(" ({})", joined(&sources)),
            };
            out.push_str(&format!(
                "{shown}:{}:{}: {}{code}: {}{sources}\n",
                diag.line,
                diag.column,
                diag.severity,
                one_line(&diag.message)
            ));
        }
        if let Some(reason) = report.not_checked(path) {
            out.push_str(&not_checked_line(path, reason));
        }
    }
    out
}

/// Names on one line each, joined by ", ".
fn joined(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| one_line(name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `path: not checked: reason\n`.
pub fn not_checked_line(path: &str, reason: &str) -> String {
    format!(
        "{}: not checked: {}\n",
        display_path(path),
        one_line(reason)
    )
}

/// A one-line summary such as `2 errors, 1 warning in 2 files`, `no diagnostics`, or either
/// followed by `, 1 file not checked`.
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
    let found = if counts.is_empty() {
        "no diagnostics".to_string()
    } else {
        let files = report
            .files
            .values()
            .filter(|diags| !diags.is_empty())
            .count();
        format!("{} in {}", counts.join(", "), plural(files, "file"))
    };
    match report.not_checked_count() {
        0 => found,
        n => format!("{found}, {} not checked", plural(n, "file")),
    }
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
    fn one_problem_from_several_servers_is_one_line_naming_every_code_and_source() {
        let undefined = Diagnostic::at(9, 27, Severity::Error, "\"x\" is not defined")
            .with_code(Some("reportUndefinedVariable"))
            .with_source("Pyright")
            .also(Some("F821"), Some("Ruff"));
        let uncoded = Diagnostic::at(12, 1, Severity::Error, "expected `;`")
            .with_source("a")
            .also(None, Some("b"));
        let forged = Diagnostic::at(14, 2, Severity::Warning, "w")
            .with_code(Some("W1"))
            .also(Some("W2\nb.py:1:1: error: forged"), None);
        let report = report(&[("a.py", vec![undefined, uncoded, forged])]);
        assert_eq!(
            render_text(&report),
            "a.py:9:27: error[reportUndefinedVariable, F821]: \"x\" is not defined (Pyright, Ruff)\n\
             a.py:12:1: error: expected `;` (a, b)\n\
             a.py:14:2: warning[W1, W2; b.py:1:1: error: forged]: w\n"
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
            "a.rs:1:2: error: mismatched types; expected u32\n"
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

    fn not_checked(report: &mut Report, path: &str, reason: &str) {
        report
            .outcomes
            .insert(path.to_string(), crate::Outcome::not_checked(reason));
    }

    #[test]
    fn files_not_checked_get_a_line_in_path_order() {
        let mut report = report(&[
            ("b.py", vec![diag(2, 1, Severity::Error, "bad", Some("E1"))]),
            ("d.py", vec![]),
        ]);
        not_checked(
            &mut report,
            "a.go",
            "gopls: `gopls` is not installed (install: go install gopls)",
        );
        not_checked(
            &mut report,
            "c.rs",
            "rust-analyzer timed out: no diagnostics\nbefore the deadline",
        );
        assert_eq!(
            render_text(&report),
            "a.go: not checked: gopls: `gopls` is not installed (install: go install gopls)\n\
             b.py:2:1: error[E1]: bad\n\
             c.rs: not checked: rust-analyzer timed out: no diagnostics; before the deadline\n"
        );
    }

    #[test]
    fn a_file_not_checked_keeps_what_was_found_before_its_line() {
        let mut report = report(&[("a.py", vec![diag(1, 1, Severity::Error, "partial", None)])]);
        not_checked(&mut report, "a.py", "pyright timed out: still working");
        assert_eq!(
            render_text(&report),
            "a.py:1:1: error: partial\na.py: not checked: pyright timed out: still working\n"
        );
    }

    #[test]
    fn a_file_name_with_a_newline_cannot_forge_a_line() {
        let evil = "evil\nfake.py:99:1: error[X]: injected line\nz.py";
        let mut report = report(&[(evil, vec![diag(1, 1, Severity::Error, "real", None)])]);
        not_checked(&mut report, evil, "binary");
        let text = render_text(&report);
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(
            text.lines()
                .all(|line| line.starts_with("\"evil\\nfake.py")),
            "{text}"
        );
    }

    #[test]
    fn summary_counts_files_not_checked() {
        let mut clean = report(&[("a.py", vec![])]);
        not_checked(&mut clean, "b.go", "x");
        assert_eq!(summary(&clean), "no diagnostics, 1 file not checked");
        let mut found = report(&[("a.py", vec![diag(1, 1, Severity::Error, "x", None)])]);
        not_checked(&mut found, "b.go", "x");
        not_checked(&mut found, "c.go", "x");
        assert_eq!(summary(&found), "1 error in 1 file, 2 files not checked");
    }

    #[test]
    fn summary_without_diagnostics() {
        assert_eq!(summary(&Report::default()), "no diagnostics");
        assert_eq!(summary(&report(&[("a.py", vec![])])), "no diagnostics");
    }
}
