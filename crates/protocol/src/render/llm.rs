//! The compact rendering meant for language models: a file's path, then a short line per
//! diagnostic, with nothing a model does not need (no tags, no escapes, no severity word for an
//! error).

use super::plain::{display_path, one_line};
use crate::diagnostic::{Diagnostic, Severity};
use crate::report::Report;

/// Escapes `&`, `<`, `>` as `&amp;`, `&lt;`, `&gt;`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// [`escape`] for an owned text, kept as it is when there is nothing to escape.
pub fn escape_owned(text: String) -> String {
    if text.contains(['&', '<', '>']) {
        escape(&text)
    } else {
        text
    }
}

/// The marker in front of a diagnostic line for an error the last edit introduced (shown only
/// where a baseline tells new errors from old ones).
pub const NEW_MARK: &str = "NEW ";

/// One file's block: the file's path and a colon on a line of its own, then
/// `line:col message (code)` per diagnostic, at most `max_per_file` lines, then
/// `... and N more`; lines joined by "\n", no newline after the last.
///
/// Every token counts against the model's context, so a line says only what it needs: an
/// error has no severity word (errors are what a model is asked to fix), other severities say
/// theirs (`warning: `, `info: `, `hint: `); ` (code)` only when there is a code,
/// ` (code1, code2)` for one that several servers reported. Ordered by line then column.
/// Message newlines collapse to a space and control characters are escaped, so each diagnostic
/// stays on its line; a path with a line break is quoted, as [`display_path`] does.
pub fn render_file_block(file: &str, diags: &[Diagnostic], max_per_file: usize) -> String {
    let entries: Vec<(&Diagnostic, bool)> = diags.iter().map(|diag| (diag, false)).collect();
    render_marked_block(file, &entries, max_per_file)
}

/// [`render_file_block`] for diagnostics flagged new (`true`) or not: the new ones first, each
/// line starting with [`NEW_MARK`], then the others; each group by line then column.
pub fn render_marked_block(
    file: &str,
    entries: &[(&Diagnostic, bool)],
    max_per_file: usize,
) -> String {
    let mut ordered: Vec<&(&Diagnostic, bool)> = entries.iter().collect();
    ordered.sort_by_key(|(diag, new)| (!new, diag.line, diag.column));
    let mut lines = vec![format!("{}:", display_path(file))];
    for (diag, new) in ordered.iter().take(max_per_file) {
        let codes: Vec<String> = diag.codes().iter().map(|code| one_line(code)).collect();
        let code = if codes.is_empty() {
            String::new()
        } else {
            format!(" ({})", codes.join(", "))
        };
        let severity = match diag.severity {
            Severity::Error => String::new(),
            other => format!("{}: ", other.as_str()),
        };
        lines.push(format!(
            "{}{}:{} {severity}{}{code}",
            if *new { NEW_MARK } else { "" },
            diag.line,
            diag.column,
            one_line(&diag.message),
        ));
    }
    if ordered.len() > max_per_file {
        lines.push(format!("... and {} more", ordered.len() - max_per_file));
    }
    lines.join("\n")
}

/// The line a model reads for a file that was not checked:
/// `LSP did not check <file>, so its errors are unknown: <reason>` (no newline; plain text,
/// on a line of its own, so nothing is escaped but control characters).
pub fn not_checked_note(file: &str, reason: &str) -> String {
    format!(
        "LSP did not check {}, so its errors are unknown: {}",
        display_path(file),
        one_line(reason)
    )
}

/// Per file in path order, its block when it has diagnostics and its [`not_checked_note`]
/// when it was not checked, joined by "\n"; empty string when every file was checked clean.
pub fn render_llm(report: &Report, max_per_file: usize) -> String {
    let mut parts = Vec::new();
    for path in report.paths() {
        if let Some(diags) = report.files.get(path).filter(|diags| !diags.is_empty()) {
            parts.push(render_file_block(path, diags, max_per_file));
        }
        if let Some(reason) = report.not_checked(path) {
            parts.push(not_checked_note(path, reason));
        }
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    fn diag(
        line: u32,
        column: u32,
        severity: Severity,
        message: &str,
        code: Option<&str>,
    ) -> Diagnostic {
        Diagnostic::at(line, column, severity, message).with_code(code)
    }

    #[test]
    fn escape_owned_matches_escape_and_keeps_clean_text() {
        for text in ["a < b && c > d", "plain text", "", "中文 & emoji 🎉 <x>"] {
            assert_eq!(escape_owned(text.to_string()), escape(text));
        }
    }

    #[test]
    fn escape_replaces_ampersand_and_angle_brackets() {
        assert_eq!(escape("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(escape("&lt;"), "&amp;lt;");
        assert_eq!(escape("\"quoted\""), "\"quoted\"");
    }

    #[test]
    fn block_lists_diagnostics_by_line_then_column() {
        let diags = [
            diag(10, 1, Severity::Warning, "later", None),
            diag(2, 9, Severity::Error, "second", Some("E1")),
            diag(2, 3, Severity::Info, "first", None),
            diag(11, 1, Severity::Hint, "last", Some("H")),
        ];
        assert_eq!(
            render_file_block("src/a.rs", &diags, 10),
            "src/a.rs:\n\
             2:3 info: first\n\
             2:9 second (E1)\n\
             10:1 warning: later\n\
             11:1 hint: last (H)"
        );
    }

    #[test]
    fn block_keeps_message_code_and_file_as_they_are_on_one_line() {
        let diags = [diag(
            1,
            2,
            Severity::Error,
            "expected `Vec<T>`,\n  found `&str`",
            Some("<E&>"),
        )];
        assert_eq!(
            render_file_block("a \"<b>\" & c.rs", &diags, 5),
            "a \"<b>\" & c.rs:\n\
             1:2 expected `Vec<T>`, found `&str` (<E&>)"
        );
    }

    #[test]
    fn one_problem_from_several_servers_lists_every_code() {
        let diags = [
            diag(
                9,
                27,
                Severity::Error,
                "\"x\" is not defined",
                Some("reportUndefinedVariable"),
            )
            .with_source("Pyright")
            .also(Some("F821"), Some("Ruff")),
            diag(10, 1, Severity::Error, "y", None)
                .with_source("a")
                .also(Some("<B&>"), Some("b")),
        ];
        assert_eq!(
            render_file_block("a.py", &diags, 5),
            "a.py:\n\
             9:27 \"x\" is not defined (reportUndefinedVariable, F821)\n\
             10:1 y (<B&>)"
        );
    }

    #[test]
    fn block_caps_lines_and_counts_the_rest() {
        let diags: Vec<Diagnostic> = (1..=5)
            .rev()
            .map(|line| diag(line, 1, Severity::Error, "x", None))
            .collect();
        assert_eq!(
            render_file_block("a.py", &diags, 2),
            "a.py:\n\
             1:1 x\n\
             2:1 x\n\
             ... and 3 more"
        );
    }

    #[test]
    fn block_at_exactly_the_cap_has_no_more_line() {
        let diags = [
            diag(1, 1, Severity::Error, "x", None),
            diag(2, 1, Severity::Error, "y", None),
        ];
        assert_eq!(render_file_block("a.py", &diags, 2), "a.py:\n1:1 x\n2:1 y");
    }

    #[test]
    fn block_with_zero_cap_only_counts() {
        let diags = [diag(1, 1, Severity::Error, "x", None)];
        assert_eq!(
            render_file_block("a.py", &diags, 0),
            "a.py:\n... and 1 more"
        );
    }

    #[test]
    fn block_without_diagnostics_is_the_path_alone() {
        assert_eq!(render_file_block("a.py", &[], 3), "a.py:");
    }

    #[test]
    fn llm_joins_blocks_of_files_with_diagnostics() {
        let mut report = Report::default();
        report.files.insert(
            "b.py".to_string(),
            vec![diag(1, 1, Severity::Warning, "w", None)],
        );
        report.files.insert("clean.py".to_string(), vec![]);
        report.files.insert(
            "a.py".to_string(),
            vec![diag(3, 4, Severity::Error, "e", Some("X1"))],
        );
        assert_eq!(
            render_llm(&report, 10),
            "a.py:\n3:4 e (X1)\nb.py:\n1:1 warning: w"
        );
    }

    #[test]
    fn llm_says_which_files_were_not_checked_and_why() {
        let mut report = Report::default();
        report.files.insert(
            "b.py".to_string(),
            vec![diag(1, 1, Severity::Error, "e", None)],
        );
        report.outcomes.insert(
            "a.py".to_string(),
            crate::Outcome::not_checked(
                "pyright: `pyright-langserver` is not installed (install: npm install -g pyright)",
            ),
        );
        assert_eq!(
            render_llm(&report, 10),
            "LSP did not check a.py, so its errors are unknown: pyright: `pyright-langserver` \
             is not installed (install: npm install -g pyright)\n\
             b.py:\n1:1 e"
        );
    }

    #[test]
    fn the_note_is_not_escaped_but_keeps_to_one_line() {
        assert_eq!(
            not_checked_note("a<b>.py", "x & y\nz"),
            "LSP did not check a<b>.py, so its errors are unknown: x & y; z"
        );
        assert_eq!(
            not_checked_note("a\nb.py", "binary"),
            "LSP did not check \"a\\nb.py\", so its errors are unknown: binary"
        );
    }

    #[test]
    fn a_path_with_a_newline_stays_on_its_line() {
        let block = render_file_block("a\n9:9 forged.py", &[], 3);
        assert_eq!(block, "\"a\\n9:9 forged.py\":");
    }

    #[test]
    fn llm_of_report_without_diagnostics_is_empty() {
        assert_eq!(render_llm(&Report::default(), 10), "");
        let mut report = Report::default();
        report.files.insert("clean.py".to_string(), vec![]);
        assert_eq!(render_llm(&report, 10), "");
    }
}
