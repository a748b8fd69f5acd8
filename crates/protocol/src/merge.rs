//! Merging, filtering and ordering of diagnostics from several servers.

mod same_problem;

use crate::diagnostic::{Diagnostic, Origin, Severity};
use same_problem::{place, rank, same_problem};

/// Merges diagnostics from several servers: diagnostics that are the same problem (see [`same_problem`]) become one that names every code and source in `also`, and the result is sorted as [`sort`] does, so it never depends on which server answered first.
///
/// The one kept is the most severe, then the first of its group in the table of equivalent
/// codes, then the first by source, code and message. It works on references and copies only
/// the diagnostics it keeps.
pub fn merge<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Vec<Diagnostic> {
    let mut all: Vec<&Diagnostic> = diagnostics.into_iter().collect();
    // Each place's diagnostics side by side, the one to keep of each problem first.
    all.sort_by(|a, b| {
        place(a)
            .cmp(&place(b))
            .then(precedence(a).cmp(&precedence(b)))
    });
    let mut merged: Vec<Diagnostic> = Vec::with_capacity(all.len());
    let mut here = 0;
    for diag in all {
        if merged.last().is_none_or(|last| place(last) != place(diag)) {
            here = merged.len();
        }
        match merged[here..]
            .iter_mut()
            .find(|kept| same_problem(kept, diag))
        {
            Some(kept) => absorb(kept, diag),
            None => merged.push(diag.clone()),
        }
    }
    // A total order, so that the result does not depend on which server answered first.
    sort(&mut merged);
    merged
}

/// Which of one place's diagnostics is kept for a problem: lowest first.
fn precedence(d: &Diagnostic) -> (Severity, usize, Option<&str>, Option<&str>, &str) {
    (
        d.severity,
        rank(d),
        d.source.as_deref(),
        d.code.as_deref(),
        &d.message,
    )
}

/// Adds to `kept` the codes and sources of `duplicate` it does not name yet.
fn absorb(kept: &mut Diagnostic, duplicate: &Diagnostic) {
    for (code, source) in duplicate.origins() {
        let known = kept.origins().any(|origin| origin == (code, source));
        if !known && (code.is_some() || source.is_some()) {
            kept.also.push(Origin {
                code: code.map(str::to_string),
                source: source.map(str::to_string),
            });
        }
    }
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

    /// A diagnostic at 9:27-9:45 of a.py from `source`, with `code`.
    fn from(source: &str, code: &str, severity: Severity, message: &str) -> Diagnostic {
        Diagnostic {
            end_column: 45,
            ..diag("a.py", 9, 27, severity, message)
                .with_code(Some(code))
                .with_source(source)
        }
    }

    fn pyright() -> Diagnostic {
        from(
            "Pyright",
            "reportUndefinedVariable",
            Severity::Error,
            "\"x\" is not defined",
        )
    }

    fn ruff() -> Diagnostic {
        from("Ruff", "F821", Severity::Error, "Undefined name `x`")
    }

    fn origin(code: &str, source: &str) -> Origin {
        Origin {
            code: Some(code.to_string()),
            source: Some(source.to_string()),
        }
    }

    #[test]
    fn one_problem_from_two_servers_is_one_diagnostic_naming_both_whatever_the_order() {
        for lists in [
            vec![vec![pyright()], vec![ruff()]],
            vec![vec![ruff()], vec![pyright()]],
        ] {
            let merged = merged(lists);
            assert_eq!(
                merged,
                vec![Diagnostic {
                    also: vec![origin("F821", "Ruff")],
                    ..pyright()
                }]
            );
            assert_eq!(merged[0].codes(), ["reportUndefinedVariable", "F821"]);
            assert_eq!(merged[0].sources(), ["Pyright", "Ruff"]);
        }
    }

    #[test]
    fn near_misses_at_one_name_stay_separate() {
        let cases: Vec<(&str, Diagnostic)> = vec![
            (
                "another range",
                Diagnostic {
                    end_column: 30,
                    ..ruff()
                },
            ),
            (
                "another severity",
                from("Ruff", "F821", Severity::Warning, "Undefined name `x`"),
            ),
            (
                "an unrelated code",
                from("Ruff", "F401", Severity::Error, "`x` imported but unused"),
            ),
        ];
        for (name, other) in cases {
            let merged = merged(vec![vec![pyright()], vec![other]]);
            assert_eq!(merged.len(), 2, "{name}: {merged:?}");
            assert!(merged.iter().all(|d| d.also.is_empty()), "{name}");
        }
    }

    #[test]
    fn each_problem_at_one_place_collapses_on_its_own() {
        let missing = from(
            "Pyright",
            "reportMissingImports",
            Severity::Error,
            "Import \"x\" could not be resolved",
        );
        let merged = merged(vec![
            vec![missing.clone(), pyright()],
            vec![ruff(), ruff()],
            vec![from(
                "basedpyright",
                "reportUndefinedVariable",
                Severity::Error,
                "\"x\" is  not defined",
            )],
        ]);
        assert_eq!(
            merged,
            vec![
                Diagnostic {
                    also: vec![
                        origin("reportUndefinedVariable", "basedpyright"),
                        origin("F821", "Ruff"),
                    ],
                    ..pyright()
                },
                missing,
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
