//! The rule that says when two diagnostics at one place are the same problem, so that
//! [`merge`](super::merge) shows them as one.
//!
//! Two diagnostics are the same problem only when they are in the same file with the same
//! start and end, and either
//! - their messages are the same text once runs of whitespace are made one space, or
//! - they have the same severity, come from different tools, and their (source, code) pairs
//!   are in the same group of [`SAME_PROBLEM`], a table of codes known to name one problem.
//!
//! Anything else stays separate: unrelated codes at one spot, one code at another range, or the
//! same pair of codes with different severities.

use crate::diagnostic::Diagnostic;

/// Groups of (source, code) pairs from different tools that name one problem. The first pair
/// of a group that is present is the one shown; sources compare without regard to case.
const SAME_PROBLEM: &[&[(&str, &str)]] = &[
    // A name that is used but not defined.
    &[
        ("Pyright", "reportUndefinedVariable"),
        ("basedpyright", "reportUndefinedVariable"),
        ("Ruff", "F821"),
    ],
    // An import that is never used.
    &[
        ("Pyright", "reportUnusedImport"),
        ("basedpyright", "reportUnusedImport"),
        ("Ruff", "F401"),
    ],
    // A local variable that is assigned but never read.
    &[
        ("Pyright", "reportUnusedVariable"),
        ("basedpyright", "reportUnusedVariable"),
        ("Ruff", "F841"),
    ],
    // A name TypeScript cannot find (2552 adds a "did you mean").
    &[
        ("typescript", "2304"),
        ("typescript", "2552"),
        ("ts", "2304"),
        ("ts", "2552"),
        ("eslint", "no-undef"),
    ],
];

/// Whether `a` and `b` are the same problem by the rule of this module.
pub(super) fn same_problem(a: &Diagnostic, b: &Diagnostic) -> bool {
    place(a) == place(b)
        && (same_text(&a.message, &b.message)
            || (a.severity == b.severity && equivalent_codes(a, b)))
}

/// Where a diagnostic is: file, start and end.
pub(super) fn place(d: &Diagnostic) -> (&str, u32, u32, u32, u32) {
    (&d.file, d.line, d.column, d.end_line, d.end_column)
}

/// Where its (source, code) stands in its group of [`SAME_PROBLEM`]: earlier is shown first;
/// a diagnostic in no group comes after all.
pub(super) fn rank(d: &Diagnostic) -> usize {
    group_of(d).map_or(usize::MAX, |(_, index)| index)
}

/// Whether two messages are the same text once runs of whitespace are made one space.
fn same_text(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// Whether two diagnostics from different tools have codes of one group of [`SAME_PROBLEM`].
fn equivalent_codes(a: &Diagnostic, b: &Diagnostic) -> bool {
    let different_tools = match (&a.source, &b.source) {
        (Some(a), Some(b)) => !a.eq_ignore_ascii_case(b),
        _ => false,
    };
    different_tools
        && match (group_of(a), group_of(b)) {
            (Some((a, _)), Some((b, _))) => a == b,
            _ => false,
        }
}

/// The group of [`SAME_PROBLEM`] that holds a diagnostic's (source, code), and its place in it.
fn group_of(d: &Diagnostic) -> Option<(usize, usize)> {
    let (source, code) = (d.source.as_deref()?, d.code.as_deref()?);
    SAME_PROBLEM.iter().enumerate().find_map(|(group, pairs)| {
        pairs
            .iter()
            .position(|&(s, c)| s.eq_ignore_ascii_case(source) && c == code)
            .map(|index| (group, index))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    /// A diagnostic at 9:27-9:45 of a.py, with a source, code and message.
    fn at_name(source: &str, code: &str, message: &str) -> Diagnostic {
        Diagnostic {
            end_column: 45,
            ..Diagnostic::at(9, 27, Severity::Error, message)
                .in_file("a.py")
                .with_code(Some(code))
                .with_source(source)
        }
    }

    fn pyright() -> Diagnostic {
        at_name("Pyright", "reportUndefinedVariable", "\"x\" is not defined")
    }

    fn ruff() -> Diagnostic {
        at_name("Ruff", "F821", "Undefined name `x`")
    }

    #[test]
    fn pairs_that_are_the_same_problem() {
        let cases: Vec<(&str, Diagnostic, Diagnostic)> = vec![
            ("pyright and ruff: undefined name", pyright(), ruff()),
            (
                "basedpyright and ruff: undefined name",
                at_name(
                    "basedpyright",
                    "reportUndefinedVariable",
                    "\"x\" is not defined",
                ),
                ruff(),
            ),
            (
                "pyright and ruff: unused import",
                at_name(
                    "Pyright",
                    "reportUnusedImport",
                    "Import \"os\" is not accessed",
                ),
                at_name("Ruff", "F401", "`os` imported but unused"),
            ),
            (
                "pyright and ruff: unused variable",
                at_name(
                    "Pyright",
                    "reportUnusedVariable",
                    "Variable \"v\" is not accessed",
                ),
                at_name(
                    "Ruff",
                    "F841",
                    "Local variable `v` is assigned to but never used",
                ),
            ),
            (
                "typescript 2304 and eslint no-undef",
                at_name("typescript", "2304", "Cannot find name 'x'."),
                at_name("eslint", "no-undef", "'x' is not defined."),
            ),
            (
                "tsc --lsp 2552 and eslint no-undef",
                at_name("ts", "2552", "Cannot find name 'x'. Did you mean 'y'?"),
                at_name("eslint", "no-undef", "'x' is not defined."),
            ),
            (
                "sources in another case",
                pyright(),
                at_name("ruff", "F821", "Undefined name `x`"),
            ),
            (
                "the same text, whitespace aside, from two tools with unrelated codes",
                at_name("a", "A1", "expected `;`"),
                at_name("b", "B7", "expected  `;`\n"),
            ),
        ];
        for (name, a, b) in cases {
            assert!(same_problem(&a, &b), "{name}: {a:?} {b:?}");
            assert!(same_problem(&b, &a), "{name}, swapped");
        }
    }

    #[test]
    fn near_misses_stay_separate() {
        let other_range = Diagnostic {
            end_column: 30,
            ..ruff()
        };
        let other_start = Diagnostic {
            column: 28,
            ..ruff()
        };
        let other_line = Diagnostic {
            line: 10,
            end_line: 10,
            ..ruff()
        };
        let other_file = ruff().in_file("b.py");
        let warning = Diagnostic {
            severity: Severity::Warning,
            ..ruff()
        };
        let cases: Vec<(&str, Diagnostic, Diagnostic)> = vec![
            ("another end", pyright(), other_range),
            ("another start", pyright(), other_start),
            ("another line", pyright(), other_line),
            ("another file", pyright(), other_file),
            ("another severity", pyright(), warning),
            (
                "unrelated codes at the same spot",
                at_name(
                    "Pyright",
                    "reportMissingImports",
                    "Import \"zz\" could not be resolved",
                ),
                at_name("Ruff", "F401", "`zz` imported but unused"),
            ),
            (
                "codes of different groups",
                at_name(
                    "Pyright",
                    "reportUnusedImport",
                    "Import \"x\" is not accessed",
                ),
                ruff(),
            ),
            (
                "codes of one group from one tool",
                at_name("typescript", "2304", "Cannot find name 'x'."),
                at_name(
                    "typescript",
                    "2552",
                    "Cannot find name 'x'. Did you mean 'y'?",
                ),
            ),
            (
                "a known code from an unknown tool",
                pyright(),
                at_name("flake9", "F821", "Undefined name `x`"),
            ),
            ("a known code without a source", pyright(), {
                let mut d = ruff();
                d.source = None;
                d
            }),
            (
                "messages that differ only in case",
                at_name("a", "A1", "Expected `;`"),
                at_name("b", "B7", "expected `;`"),
            ),
        ];
        for (name, a, b) in cases {
            assert!(!same_problem(&a, &b), "{name}: {a:?} {b:?}");
            assert!(!same_problem(&b, &a), "{name}, swapped");
        }
    }

    #[test]
    fn the_first_pair_of_a_group_ranks_first() {
        assert!(rank(&pyright()) < rank(&ruff()));
        assert!(
            rank(&at_name("typescript", "2304", "m")) < rank(&at_name("eslint", "no-undef", "m"))
        );
        assert_eq!(rank(&at_name("rustc", "E0308", "m")), usize::MAX);
    }
}
