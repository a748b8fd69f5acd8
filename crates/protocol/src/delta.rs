//! "New errors since the last snapshot", for hosts that want only what an edit introduced.

use crate::diagnostic::{Diagnostic, Severity};
use crate::render::{display_path, one_line_cut};
use std::collections::{BTreeMap, HashSet};

/// At most this many files in a delta rendering.
const MAX_FILES: usize = 5;
/// At most this many errors per file in a delta rendering.
const MAX_PER_FILE: usize = 5;
/// Messages longer than this many characters are cut (and end with "…").
const MAX_MESSAGE_CHARS: usize = 200;
/// The note above a delta rendering.
const NOTE: &str = "New LSP errors introduced by your last edit (fix these):";

/// The identity of an error across edits: range is for display only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeltaKey {
    /// The tool that produced it, if any.
    pub source: Option<String>,
    /// The diagnostic code, if any.
    pub code: Option<String>,
    /// How serious it is.
    pub severity: Severity,
    /// The message, as the server wrote it.
    pub message: String,
}

impl DeltaKey {
    /// The key of a diagnostic: everything but its file and range.
    pub fn of(d: &Diagnostic) -> Self {
        DeltaKey {
            source: d.source.clone(),
            code: d.code.clone(),
            severity: d.severity,
            message: d.message.clone(),
        }
    }
}

/// The errors (severity Error only) in `current` whose key is not in `baseline`; with no baseline (file never seen) all current errors are new. Order: line, column.
pub fn new_errors(baseline: Option<&HashSet<DeltaKey>>, current: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut new: Vec<Diagnostic> = current
        .iter()
        .filter(|diag| diag.severity == Severity::Error)
        .filter(|diag| baseline.is_none_or(|keys| !keys.contains(&DeltaKey::of(diag))))
        .cloned()
        .collect();
    new.sort_by_key(|diag| (diag.line, diag.column));
    new
}

/// The keys of a file's current errors, to keep as the next baseline.
pub fn baseline_of(current: &[Diagnostic]) -> HashSet<DeltaKey> {
    current
        .iter()
        .filter(|diag| diag.severity == Severity::Error)
        .map(DeltaKey::of)
        .collect()
}

/// Renders new errors per file: at most 5 files (most new errors first, ties by path), 5 errors each, messages cut to 200 characters, one line each `path:line:col: severity: message`, under a one-line note; empty string when there are none.
///
/// A file with more than 5 gets `  ... and N more in <path>` after its lines; more than 5
/// files add a final `... and N more files with new errors`. Lines end with "\n".
pub fn render_delta(files: &BTreeMap<String, Vec<Diagnostic>>) -> String {
    let mut ordered: Vec<(&String, &Vec<Diagnostic>)> = files
        .iter()
        .filter(|(_, diags)| !diags.is_empty())
        .collect();
    if ordered.is_empty() {
        return String::new();
    }
    // Stable: ties keep the map's path order.
    ordered.sort_by_key(|(_, diags)| std::cmp::Reverse(diags.len()));

    let mut lines = vec![NOTE.to_string()];
    for (path, diags) in ordered.iter().take(MAX_FILES) {
        let path = display_path(path);
        let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
        sorted.sort_by_key(|diag| (diag.line, diag.column));
        for diag in sorted.iter().take(MAX_PER_FILE) {
            lines.push(format!(
                "{path}:{}:{}: {}: {}",
                diag.line,
                diag.column,
                diag.severity,
                one_line_cut(&diag.message, MAX_MESSAGE_CHARS),
            ));
        }
        if sorted.len() > MAX_PER_FILE {
            lines.push(format!(
                "  ... and {} more in {path}",
                sorted.len() - MAX_PER_FILE
            ));
        }
    }
    if ordered.len() > MAX_FILES {
        lines.push(format!(
            "... and {} more files with new errors",
            ordered.len() - MAX_FILES
        ));
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(line: u32, severity: Severity, message: &str, code: Option<&str>) -> Diagnostic {
        Diagnostic::at(line, 3, severity, message)
            .in_file("a.ts")
            .with_code(code)
            .with_source("ts")
    }

    fn error(line: u32, message: &str) -> Diagnostic {
        diag(line, Severity::Error, message, Some("E1"))
    }

    #[test]
    fn same_error_moved_to_another_line_is_not_new() {
        let baseline = baseline_of(&[error(3, "bad")]);
        assert_eq!(new_errors(Some(&baseline), &[error(10, "bad")]), vec![]);
    }

    #[test]
    fn error_with_a_new_code_is_new() {
        let baseline = baseline_of(&[error(3, "bad")]);
        let current = [diag(3, Severity::Error, "bad", Some("E2"))];
        assert_eq!(new_errors(Some(&baseline), &current), current.to_vec());
    }

    #[test]
    fn error_with_a_new_message_is_new() {
        let baseline = baseline_of(&[error(3, "bad")]);
        let current = [error(3, "bad"), error(4, "worse")];
        assert_eq!(
            new_errors(Some(&baseline), &current),
            vec![error(4, "worse")]
        );
    }

    #[test]
    fn warnings_never_count() {
        let warnings = [
            diag(1, Severity::Warning, "unused", None),
            diag(2, Severity::Info, "note", None),
            diag(3, Severity::Hint, "fade", None),
        ];
        assert_eq!(new_errors(None, &warnings), vec![]);
        assert_eq!(new_errors(Some(&HashSet::new()), &warnings), vec![]);
        assert!(baseline_of(&warnings).is_empty());
    }

    #[test]
    fn without_baseline_all_errors_are_new_in_line_order() {
        let current = [
            error(9, "b"),
            diag(2, Severity::Hint, "h", None),
            error(1, "a"),
        ];
        assert_eq!(
            new_errors(None, &current),
            vec![error(1, "a"), error(9, "b")]
        );
    }

    #[test]
    fn baseline_keeps_keys_without_ranges() {
        let baseline = baseline_of(&[error(3, "bad"), error(8, "bad")]);
        let expected = DeltaKey {
            source: Some("ts".to_string()),
            code: Some("E1".to_string()),
            severity: Severity::Error,
            message: "bad".to_string(),
        };
        assert_eq!(baseline, HashSet::from([expected]));
    }

    #[test]
    fn render_without_new_errors_is_empty() {
        assert_eq!(render_delta(&BTreeMap::new()), "");
        let files = BTreeMap::from([("a.ts".to_string(), vec![])]);
        assert_eq!(render_delta(&files), "");
    }

    #[test]
    fn render_lists_errors_by_line_and_collapses_newlines() {
        let files = BTreeMap::from([(
            "src/a.ts".to_string(),
            vec![error(7, "second"), error(2, "first\n  line two")],
        )]);
        assert_eq!(
            render_delta(&files),
            "New LSP errors introduced by your last edit (fix these):\n\
             src/a.ts:2:3: error: first; line two\n\
             src/a.ts:7:3: error: second\n"
        );
    }

    #[test]
    fn render_orders_files_by_count_then_path() {
        let files = BTreeMap::from([
            ("c.ts".to_string(), vec![error(1, "c")]),
            ("b.ts".to_string(), vec![error(1, "b1"), error(2, "b2")]),
            ("a.ts".to_string(), vec![error(1, "a")]),
        ]);
        assert_eq!(
            render_delta(&files),
            "New LSP errors introduced by your last edit (fix these):\n\
             b.ts:1:3: error: b1\n\
             b.ts:2:3: error: b2\n\
             a.ts:1:3: error: a\n\
             c.ts:1:3: error: c\n"
        );
    }

    #[test]
    fn render_caps_files_and_errors_per_file() {
        let mut files = BTreeMap::new();
        files.insert(
            "big.ts".to_string(),
            (1..=8).map(|line| error(line, "x")).collect::<Vec<_>>(),
        );
        for name in ["f1", "f2", "f3", "f4", "f5", "f6"] {
            files.insert(format!("{name}.ts"), vec![error(1, name)]);
        }
        assert_eq!(
            render_delta(&files),
            "New LSP errors introduced by your last edit (fix these):\n\
             big.ts:1:3: error: x\n\
             big.ts:2:3: error: x\n\
             big.ts:3:3: error: x\n\
             big.ts:4:3: error: x\n\
             big.ts:5:3: error: x\n  \
             ... and 3 more in big.ts\n\
             f1.ts:1:3: error: f1\n\
             f2.ts:1:3: error: f2\n\
             f3.ts:1:3: error: f3\n\
             f4.ts:1:3: error: f4\n\
             ... and 2 more files with new errors\n"
        );
    }

    #[test]
    fn render_cuts_long_messages_by_characters() {
        let message = "é".repeat(250);
        let files = BTreeMap::from([("a.ts".to_string(), vec![error(1, &message)])]);
        assert_eq!(
            render_delta(&files),
            format!(
                "New LSP errors introduced by your last edit (fix these):\na.ts:1:3: error: {}…\n",
                "é".repeat(200)
            )
        );
    }

    #[test]
    fn render_keeps_a_message_of_exactly_200_characters() {
        let message = "ü".repeat(200);
        let files = BTreeMap::from([("a.ts".to_string(), vec![error(1, &message)])]);
        assert_eq!(
            render_delta(&files),
            format!("New LSP errors introduced by your last edit (fix these):\na.ts:1:3: error: {message}\n")
        );
    }
}
