//! The renderings meant for language models: the compact one (a file's path, then a short line
//! per diagnostic, with nothing a model does not need: no tags, no escapes, no severity word for
//! an error), and the reference's tagged block, for hosts built on its contract.

use super::plain::{display_path, one_line_cut};
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

/// At most this many characters of a diagnostic's message or code reach a model (then `…`):
/// 50 lines of them stay under about 100 KB, whatever a server sends.
pub const MAX_MESSAGE_CHARS: usize = 1_000;

/// A message or code as a model reads it: on one line, at most [`MAX_MESSAGE_CHARS`].
fn for_model(text: &str) -> String {
    one_line_cut(text, MAX_MESSAGE_CHARS)
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
        let codes: Vec<String> = diag.codes().iter().map(|code| for_model(code)).collect();
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
            for_model(&diag.message),
        ));
    }
    if ordered.len() > max_per_file {
        lines.push(format!("... and {} more", ordered.len() - max_per_file));
    }
    lines.join("\n")
}

/// How a file's block of diagnostics is written for a language model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockFormat {
    /// The path and a colon, then `line:col message (code)` lines, new errors first and
    /// marked `NEW ` (see [`render_marked_block`]): the fewest tokens.
    #[default]
    Compact,
    /// The reference's contract (functional spec B1, BR-74, EC-16): `<diagnostics
    /// file="relpath">` around each file's lines, `SEVERITY [line:col] message (code)` in line
    /// order, `<`, `>` and `&` escaped (see [`render_tagged_block`]).
    Tagged,
}

/// One file's block in the reference's contract: `<diagnostics file="relpath">`, then a
/// `SEVERITY [line:col] message (code)` line per diagnostic (`ERROR`, `WARN`, `INFO`, `HINT`, as
/// OpenCode's `Diagnostic.pretty()` writes them) by line then column, at most `max_per_file`
/// of them, then `... and N more`, then `</diagnostics>`; `<`, `>` and `&` escaped in the path
/// and the messages; lines joined by "\n", no newline after the last.
pub fn render_tagged_block(file: &str, diags: &[&Diagnostic], max_per_file: usize) -> String {
    let mut ordered: Vec<&Diagnostic> = diags.to_vec();
    ordered.sort_by_key(|diag| (diag.line, diag.column));
    let path = escape(&display_path(file)).replace('"', "&quot;");
    let mut lines = vec![format!("<diagnostics file=\"{path}\">")];
    for diag in ordered.iter().take(max_per_file) {
        let codes: Vec<String> = diag.codes().iter().map(|code| for_model(code)).collect();
        let code = match codes.is_empty() {
            true => String::new(),
            false => format!(" ({})", escape(&codes.join(", "))),
        };
        let severity = match diag.severity {
            Severity::Error => "ERROR",
            Severity::Warning => "WARN",
            Severity::Info => "INFO",
            Severity::Hint => "HINT",
        };
        lines.push(format!(
            "{severity} [{}:{}] {}{code}",
            diag.line,
            diag.column,
            escape(&for_model(&diag.message)),
        ));
    }
    if ordered.len() > max_per_file {
        lines.push(format!("... and {} more", ordered.len() - max_per_file));
    }
    lines.push("</diagnostics>".to_string());
    lines.join("\n")
}

/// The line a model reads for a file that was not checked:
/// `LSP did not check <file>, so its errors are unknown: <reason>` (no newline; plain text,
/// on a line of its own, so nothing is escaped but control characters).
pub fn not_checked_note(file: &str, reason: &str) -> String {
    format!(
        "LSP did not check {}, so its errors are unknown: {}",
        display_path(file),
        for_model(reason)
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
    fn the_tagged_block_is_the_references_contract() {
        let diags = [
            diag(7, 3, Severity::Warning, "unused <T>", None),
            diag(
                2,
                5,
                Severity::Error,
                "a < b && c > d\nsecond line",
                Some("ts2322"),
            ),
            diag(2, 1, Severity::Hint, "fade", Some("x&y")),
            diag(9, 1, Severity::Info, "note", None),
        ];
        let refs: Vec<&Diagnostic> = diags.iter().collect();
        assert_eq!(
            render_tagged_block("src/<a>.ts", &refs, 3),
            "<diagnostics file=\"src/&lt;a&gt;.ts\">\n\
             HINT [2:1] fade (x&amp;y)\n\
             ERROR [2:5] a &lt; b &amp;&amp; c &gt; d; second line (ts2322)\n\
             WARN [7:3] unused &lt;T&gt;\n\
             ... and 1 more\n\
             </diagnostics>"
        );
        let quote = diag(1, 1, Severity::Error, "x", None);
        assert!(render_tagged_block("a\"b.ts", &[&quote], 20)
            .starts_with("<diagnostics file=\"a&quot;b.ts\">"));
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
    fn a_message_of_megabytes_reaches_the_model_as_its_first_thousand_characters() {
        let huge = diag(
            1,
            2,
            Severity::Error,
            &"y".repeat(4 << 20),
            Some(&"c".repeat(4 << 20)),
        );
        let cut = format!("{}…", "y".repeat(MAX_MESSAGE_CHARS));
        let code = format!("{}…", "c".repeat(MAX_MESSAGE_CHARS));
        assert_eq!(
            render_file_block("a.py", std::slice::from_ref(&huge), 5),
            format!("a.py:\n1:2 {cut} ({code})")
        );
        assert_eq!(
            render_tagged_block("a.py", &[&huge], 5),
            format!("<diagnostics file=\"a.py\">\nERROR [1:2] {cut} ({code})\n</diagnostics>")
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
