//! GitHub Actions workflow commands: `::error file=...,line=...,col=...::message` per
//! diagnostic (`::warning` and `::notice` by severity), `::warning` for each file that was not
//! checked, and a last `::notice` with the summary. Values are escaped as the runner reads
//! them, so that a message cannot end its command or start another.

use crate::diagnostic::{Diagnostic, Severity};
use crate::render::text::summary;
use crate::report::Report;

/// The workflow commands of `report`, one per line.
pub fn render_github(report: &Report) -> String {
    let mut out = String::new();
    for (path, diagnostics) in &report.files {
        for d in diagnostics {
            out.push_str(&annotation(path, d));
        }
    }
    for path in report.paths() {
        if let Some(reason) = report.not_checked(path) {
            out.push_str(&format!(
                "::warning file={},title=not checked::{}\n",
                property(path),
                data(&format!("{path}: not checked: {reason}"))
            ));
        }
    }
    out.push_str(&format!(
        "::notice title=squiggle::{}\n",
        data(&summary(report))
    ));
    out
}

/// One diagnostic's command.
fn annotation(path: &str, d: &Diagnostic) -> String {
    let command = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "notice",
    };
    let title = match (&d.code, &d.source) {
        (Some(code), Some(source)) => format!("{code} ({source})"),
        (Some(code), None) => code.clone(),
        (None, Some(source)) => source.clone(),
        (None, None) => "squiggle".to_string(),
    };
    format!(
        "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
        property(path),
        d.line,
        d.column,
        d.end_line,
        d.end_column,
        property(&title),
        data(&d.message)
    )
}

/// A command's message, escaped: `%`, CR and LF.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property's value, escaped: as [`data`], and `:` and `,`.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Outcome;

    #[test]
    fn one_command_per_diagnostic_and_per_file_not_checked_then_the_summary() {
        let mut report = Report::default();
        report.files.insert(
            "src/a,b.py".to_string(),
            vec![Diagnostic {
                file: "src/a,b.py".to_string(),
                line: 7,
                column: 18,
                end_line: 7,
                end_column: 22,
                severity: Severity::Error,
                message: "100% wrong\n::error::forged".to_string(),
                code: Some("reportAssignmentType".to_string()),
                source: Some("Pyright".to_string()),
                also: Vec::new(),
            }],
        );
        report.files.insert("b.go".to_string(), vec![]);
        report.outcomes.insert(
            "b.go".to_string(),
            Outcome::not_checked("gopls: not installed"),
        );

        assert_eq!(
            render_github(&report),
            "::error file=src/a%2Cb.py,line=7,col=18,endLine=7,endColumn=22,title=reportAssignmentType (Pyright)::100%25 wrong%0A::error::forged\n\
             ::warning file=b.go,title=not checked::b.go: not checked: gopls: not installed\n\
             ::notice title=squiggle::1 error in 1 file, 1 file not checked\n"
        );
    }
}
