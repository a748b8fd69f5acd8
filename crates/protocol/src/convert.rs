//! Conversion of a server's LSP diagnostics into squiggle's [`Diagnostic`].

use crate::diagnostic::{Diagnostic, Severity};
use crate::encoding::{column_in_chars, PositionEncoding};
use lsp_types::{DiagnosticSeverity, NumberOrString, Position};

/// The squiggle severity for an LSP severity; a missing or unknown one counts as an error.
pub fn severity_from_lsp(severity: Option<DiagnosticSeverity>) -> Severity {
    match severity {
        Some(DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(DiagnosticSeverity::INFORMATION) => Severity::Info,
        Some(DiagnosticSeverity::HINT) => Severity::Hint,
        _ => Severity::Error,
    }
}

/// Converts a server's diagnostics for one file.
///
/// `file` is the path relative to the workspace root; `text` the document text the server saw
/// (None: columns are taken as character+1 unchanged).
pub fn convert_diagnostics(
    diags: Vec<lsp_types::Diagnostic>,
    file: &str,
    text: Option<&str>,
    encoding: PositionEncoding,
) -> Vec<Diagnostic> {
    let lines: Vec<&str> = text
        .map(|text| {
            text.split('\n')
                .map(|line| line.strip_suffix('\r').unwrap_or(line))
                .collect()
        })
        .unwrap_or_default();
    let column = |position: Position| match lines.get(position.line as usize) {
        Some(line) => column_in_chars(line, position.character, encoding),
        None => position.character.saturating_add(1),
    };
    // Collected anew, not in place: an in-place collect would keep the larger LSP items'
    // allocation for as long as the store holds the list.
    let mut converted = Vec::with_capacity(diags.len());
    converted.extend(diags.into_iter().map(|diag| Diagnostic {
        file: file.to_string(),
        line: diag.range.start.line.saturating_add(1),
        column: column(diag.range.start),
        end_line: diag.range.end.line.saturating_add(1),
        end_column: column(diag.range.end),
        severity: severity_from_lsp(diag.severity),
        message: diag.message,
        code: diag.code.map(|code| match code {
            NumberOrString::Number(number) => number.to_string(),
            NumberOrString::String(text) => text,
        }),
        source: diag.source,
        also: Vec::new(),
    }));
    converted
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Range;

    fn lsp_diag(start: (u32, u32), end: (u32, u32)) -> lsp_types::Diagnostic {
        lsp_types::Diagnostic {
            range: Range::new(Position::new(start.0, start.1), Position::new(end.0, end.1)),
            severity: Some(DiagnosticSeverity::ERROR),
            message: "boom".to_string(),
            ..Default::default()
        }
    }

    fn positions(diags: &[Diagnostic]) -> Vec<(u32, u32, u32, u32)> {
        diags
            .iter()
            .map(|d| (d.line, d.column, d.end_line, d.end_column))
            .collect()
    }

    const TEXT: &str = "fn main() {}\nlet s = \"😀中\"; ERROR\n";

    #[test]
    fn severity_maps_every_lsp_severity() {
        assert_eq!(
            severity_from_lsp(Some(DiagnosticSeverity::ERROR)),
            Severity::Error
        );
        assert_eq!(
            severity_from_lsp(Some(DiagnosticSeverity::WARNING)),
            Severity::Warning
        );
        assert_eq!(
            severity_from_lsp(Some(DiagnosticSeverity::INFORMATION)),
            Severity::Info
        );
        assert_eq!(
            severity_from_lsp(Some(DiagnosticSeverity::HINT)),
            Severity::Hint
        );
    }

    #[test]
    fn missing_severity_is_an_error() {
        assert_eq!(severity_from_lsp(None), Severity::Error);
    }

    #[test]
    fn converts_all_fields() {
        let diag = lsp_types::Diagnostic {
            range: Range::new(Position::new(0, 3), Position::new(0, 7)),
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some(NumberOrString::String("F821".to_string())),
            source: Some("Ruff".to_string()),
            message: "undefined name".to_string(),
            ..Default::default()
        };
        let converted =
            convert_diagnostics(vec![diag], "src/a.py", Some(TEXT), PositionEncoding::Utf16);
        assert_eq!(
            converted,
            vec![Diagnostic {
                file: "src/a.py".to_string(),
                line: 1,
                column: 4,
                end_line: 1,
                end_column: 8,
                severity: Severity::Warning,
                message: "undefined name".to_string(),
                code: Some("F821".to_string()),
                source: Some("Ruff".to_string()),
                also: Vec::new(),
            }]
        );
    }

    #[test]
    fn numeric_code_becomes_a_string() {
        let mut diag = lsp_diag((0, 0), (0, 1));
        diag.code = Some(NumberOrString::Number(2304));
        let converted = convert_diagnostics(vec![diag], "a.ts", None, PositionEncoding::Utf16);
        assert_eq!(converted[0].code.as_deref(), Some("2304"));
        assert_eq!(converted[0].source, None);
    }

    #[test]
    fn utf16_columns_after_emoji_and_cjk() {
        let diag = lsp_diag((1, 15), (1, 20));
        let converted =
            convert_diagnostics(vec![diag], "a.rs", Some(TEXT), PositionEncoding::Utf16);
        assert_eq!(positions(&converted), vec![(2, 15, 2, 20)]);
    }

    #[test]
    fn utf8_columns_after_emoji_and_cjk() {
        let diag = lsp_diag((1, 19), (1, 24));
        let converted = convert_diagnostics(vec![diag], "a.rs", Some(TEXT), PositionEncoding::Utf8);
        assert_eq!(positions(&converted), vec![(2, 15, 2, 20)]);
    }

    #[test]
    fn utf32_columns_after_emoji_and_cjk() {
        let diag = lsp_diag((1, 14), (1, 19));
        let converted =
            convert_diagnostics(vec![diag], "a.rs", Some(TEXT), PositionEncoding::Utf32);
        assert_eq!(positions(&converted), vec![(2, 15, 2, 20)]);
    }

    #[test]
    fn crlf_text_does_not_count_the_carriage_return() {
        let text = "a\r\n😀x\r\n";
        // End of line 2 is UTF-16 offset 3; past it clamps to length + 1 = 3 without the `\r`.
        let diags = [lsp_diag((1, 2), (1, 3)), lsp_diag((1, 2), (1, 9))];
        let converted =
            convert_diagnostics(diags.to_vec(), "a.py", Some(text), PositionEncoding::Utf16);
        assert_eq!(positions(&converted), vec![(2, 2, 2, 3), (2, 2, 2, 3)]);
    }

    #[test]
    fn line_beyond_text_keeps_character_plus_one() {
        let diag = lsp_diag((5, 7), (9, 0));
        let converted =
            convert_diagnostics(vec![diag], "a.rs", Some(TEXT), PositionEncoding::Utf16);
        assert_eq!(positions(&converted), vec![(6, 8, 10, 1)]);
    }

    #[test]
    fn without_text_columns_are_character_plus_one() {
        let diag = lsp_diag((1, 15), (1, 20));
        let converted = convert_diagnostics(vec![diag], "a.rs", None, PositionEncoding::Utf16);
        assert_eq!(positions(&converted), vec![(2, 16, 2, 21)]);
    }

    #[test]
    fn empty_input_gives_empty_output() {
        assert!(
            convert_diagnostics(Vec::new(), "a.rs", Some(TEXT), PositionEncoding::Utf16).is_empty()
        );
    }
}
