//! Merging, filtering and ordering of diagnostics from several servers.

use crate::diagnostic::{Diagnostic, Severity};

/// Merges diagnostics from several servers: drops duplicates (same file + start/end positions + message) and sorts them as [`sort`] does, so the order never depends on which server answered first.
///
/// When duplicates differ in severity, the more severe one is kept. It works on references and
/// copies only the diagnostics it keeps.
pub fn merge<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Vec<Diagnostic> {
    let mut all: Vec<&Diagnostic> = diagnostics.into_iter().collect();
    // Duplicates side by side, the most severe first; keep that one.
    all.sort_by(|a, b| {
        identity(a)
            .cmp(&identity(b))
            .then(a.severity.cmp(&b.severity))
    });
    all.dedup_by(|later, kept| identity(later) == identity(kept));
    let mut merged: Vec<Diagnostic> = all.into_iter().cloned().collect();
    // A total order, so that the result does not depend on which server answered first.
    sort(&mut merged);
    merged
}

/// What makes two diagnostics the same: file, range and message.
fn identity(d: &Diagnostic) -> (&str, u32, u32, u32, u32, &str) {
    (
        &d.file,
        d.line,
        d.column,
        d.end_line,
        d.end_column,
        &d.message,
    )
}

/// Keeps only diagnostics whose severity is in `keep`.
pub fn filter_severities(diags: Vec<Diagnostic>, keep: &[Severity]) -> Vec<Diagnostic> {
    diags
        .into_iter()
        .filter(|diag| keep.contains(&diag.severity))
        .collect()
}

/// Sorts by (file, line, column, severity, message).
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        (&a.file, a.line, a.column, a.severity, &a.message)
            .cmp(&(&b.file, b.line, b.column, b.severity, &b.message))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(file: &str, line: u32, column: u32, severity: Severity, message: &str) -> Diagnostic {
        Diagnostic::at(line, column, severity, message).in_file(file)
    }

    fn summary(diags: &[Diagnostic]) -> Vec<(&str, u32, u32, Severity, &str)> {
        diags
            .iter()
            .map(|d| {
                (
                    d.file.as_str(),
                    d.line,
                    d.column,
                    d.severity,
                    d.message.as_str(),
                )
            })
            .collect()
    }

    fn merged(lists: Vec<Vec<Diagnostic>>) -> Vec<Diagnostic> {
        merge(lists.iter().flatten())
    }

    #[test]
    fn merge_drops_exact_duplicates_across_servers() {
        let a = vec![diag("a.py", 1, 1, Severity::Error, "x")];
        let mut b = vec![diag("a.py", 1, 1, Severity::Error, "x")];
        b[0].source = Some("Ruff".to_string());
        let merged = merged(vec![a, b]);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].source, None);
    }

    #[test]
    fn merge_keeps_the_more_severe_duplicate() {
        let a = vec![diag("a.py", 1, 1, Severity::Warning, "x")];
        let mut b = vec![diag("a.py", 1, 1, Severity::Error, "x")];
        b[0].source = Some("Pyright".to_string());
        let merged = merged(vec![a, b]);
        assert_eq!(summary(&merged), vec![("a.py", 1, 1, Severity::Error, "x")]);
        assert_eq!(merged[0].source.as_deref(), Some("Pyright"));
    }

    #[test]
    fn merge_keeps_diagnostics_that_differ_in_message_or_end() {
        let mut other_end = diag("a.py", 1, 1, Severity::Error, "x");
        other_end.end_column = 9;
        let merged = merged(vec![
            vec![diag("a.py", 1, 1, Severity::Error, "x")],
            vec![diag("a.py", 1, 1, Severity::Error, "y"), other_end],
        ]);
        assert_eq!(merged.len(), 3);
    }

    #[test]
    fn merge_sorts_by_file_line_column_then_severity_whatever_the_list_order() {
        let merged = merged(vec![
            vec![
                diag("b.py", 1, 1, Severity::Hint, "b"),
                diag("a.py", 2, 1, Severity::Hint, "from first list"),
            ],
            vec![
                diag("a.py", 2, 1, Severity::Error, "from second list"),
                diag("a.py", 1, 5, Severity::Info, "c"),
                diag("a.py", 1, 2, Severity::Info, "d"),
            ],
        ]);
        assert_eq!(
            summary(&merged),
            vec![
                ("a.py", 1, 2, Severity::Info, "d"),
                ("a.py", 1, 5, Severity::Info, "c"),
                ("a.py", 2, 1, Severity::Error, "from second list"),
                ("a.py", 2, 1, Severity::Hint, "from first list"),
                ("b.py", 1, 1, Severity::Hint, "b"),
            ]
        );
    }

    #[test]
    fn merge_of_nothing_is_empty() {
        assert!(merged(Vec::new()).is_empty());
    }

    #[test]
    fn filter_keeps_only_listed_severities() {
        let diags = vec![
            diag("a.py", 1, 1, Severity::Error, "e"),
            diag("a.py", 2, 1, Severity::Warning, "w"),
            diag("a.py", 3, 1, Severity::Hint, "h"),
        ];
        let kept = filter_severities(diags, &[Severity::Error, Severity::Hint]);
        assert_eq!(
            summary(&kept),
            vec![
                ("a.py", 1, 1, Severity::Error, "e"),
                ("a.py", 3, 1, Severity::Hint, "h"),
            ]
        );
    }

    #[test]
    fn filter_with_empty_keep_drops_everything() {
        let diags = vec![diag("a.py", 1, 1, Severity::Error, "e")];
        assert!(filter_severities(diags, &[]).is_empty());
    }

    #[test]
    fn sort_orders_by_file_line_column_severity_message() {
        let mut diags = vec![
            diag("b.py", 1, 1, Severity::Error, "a"),
            diag("a.py", 1, 1, Severity::Warning, "a"),
            diag("a.py", 1, 1, Severity::Error, "b"),
            diag("a.py", 1, 1, Severity::Error, "a"),
            diag("a.py", 1, 0, Severity::Hint, "z"),
        ];
        sort(&mut diags);
        assert_eq!(
            summary(&diags),
            vec![
                ("a.py", 1, 0, Severity::Hint, "z"),
                ("a.py", 1, 1, Severity::Error, "a"),
                ("a.py", 1, 1, Severity::Error, "b"),
                ("a.py", 1, 1, Severity::Warning, "a"),
                ("b.py", 1, 1, Severity::Error, "a"),
            ]
        );
    }
}
