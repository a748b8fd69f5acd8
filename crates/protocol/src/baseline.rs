//! A file's diagnostics as they were last shown, to tell the errors an edit introduced from
//! the ones that were there before it.
//!
//! "The same error as before" has the same message, code, source and severity (a
//! [`DeltaKey`]); the line may move. Of several with one key, the old ones are matched first
//! by the text of their line (when both texts are known and the line is not blank), then at
//! the same line, then at the line moved by the edit's line delta (how many lines the file
//! gained or lost), then in line order; those of the current ones left over are new. So an
//! edit that adds a third "x is not defined" to a file that had two marks exactly one of them
//! new, and one that only moves an old error down (lines inserted above it) marks none.

use std::collections::{HashMap, VecDeque};

use crate::delta::DeltaKey;
use crate::diagnostic::Diagnostic;

/// One diagnostic of a baseline: its identity, its line, and that line's text when known.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    key: DeltaKey,
    line: u32,
    text: Option<String>,
}

/// A file's diagnostics as last shown, with the file's line count when its text was known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    seen: Vec<Seen>,
    lines: Option<usize>,
}

impl Baseline {
    /// The baseline of `diagnostics` found in `text` (when known).
    pub fn of(diagnostics: &[Diagnostic], text: Option<&str>) -> Self {
        let lines = text.map(Lines::of);
        let seen = diagnostics
            .iter()
            .map(|diag| Seen {
                key: DeltaKey::of(diag),
                line: diag.line,
                text: lines.as_ref().and_then(|lines| lines.text(diag.line)),
            })
            .collect();
        Baseline {
            seen,
            lines: lines.map(|lines| lines.0.len()),
        }
    }

    /// For each of `current` (found in `text`, when known), in order, whether it is new: not
    /// the same error as one of the baseline (see the module's documentation). Each round
    /// matches each current diagnostic to the first old one left with its identity and the
    /// round's place (an index per round): linear in the diagnostics and the text.
    pub fn new_flags(&self, current: &[Diagnostic], text: Option<&str>) -> Vec<bool> {
        let lines = text.map(Lines::of);
        let shift = match (self.lines, &lines) {
            (Some(before), Some(after)) => after.0.len() as i64 - before as i64,
            _ => 0,
        };
        let here: Vec<(DeltaKey, Here)> = current
            .iter()
            .map(|diag| {
                let text = lines.as_ref().and_then(|lines| lines.text(diag.line));
                (
                    DeltaKey::of(diag),
                    Here {
                        line: diag.line,
                        text,
                    },
                )
            })
            .collect();
        let mut used = vec![false; self.seen.len()];
        let mut new = vec![true; current.len()];
        for pass in [Pass::Text, Pass::SameLine, Pass::Shifted, Pass::Any] {
            // The old ones left, by identity and place, first ones first.
            let mut left: HashMap<(&DeltaKey, Place), VecDeque<usize>> = HashMap::new();
            for (j, old) in self.seen.iter().enumerate().filter(|(j, _)| !used[*j]) {
                if let Some(place) = pass.old_place(old, shift) {
                    left.entry((&old.key, place)).or_default().push_back(j);
                }
            }
            for (i, (key, here)) in here.iter().enumerate() {
                let Some(place) = pass.place(here).filter(|_| new[i]) else {
                    continue;
                };
                if let Some(j) = left.get_mut(&(key, place)).and_then(VecDeque::pop_front) {
                    used[j] = true;
                    new[i] = false;
                }
            }
        }
        new
    }
}

/// Where a current diagnostic is: its line and that line's text.
struct Here {
    line: u32,
    text: Option<String>,
}

/// What a round matches an old error and a current one of the same identity by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Place {
    Text(String),
    Line(i64),
    Anywhere,
}

/// The rounds of matching an old error to a current one of the same identity, strongest first.
#[derive(Debug, Clone, Copy)]
enum Pass {
    /// The same (non-blank) line text.
    Text,
    /// The same line.
    SameLine,
    /// The line moved by the edit's line delta.
    Shifted,
    /// Any place.
    Any,
}

impl Pass {
    /// Where an old error must be found in this round (`None`: it takes no part).
    fn old_place(self, old: &Seen, shift: i64) -> Option<Place> {
        match self {
            Pass::Text => old.text.clone().map(Place::Text),
            Pass::SameLine => Some(Place::Line(i64::from(old.line))),
            Pass::Shifted => Some(Place::Line(i64::from(old.line) + shift)),
            Pass::Any => Some(Place::Anywhere),
        }
    }

    /// Where the current diagnostic `here` is, as this round matches it.
    fn place(self, here: &Here) -> Option<Place> {
        match self {
            Pass::Text => here.text.clone().map(Place::Text),
            Pass::SameLine | Pass::Shifted => Some(Place::Line(i64::from(here.line))),
            Pass::Any => Some(Place::Anywhere),
        }
    }
}

/// A text's lines, split once.
struct Lines<'a>(Vec<&'a str>);

impl<'a> Lines<'a> {
    fn of(text: &'a str) -> Self {
        Lines(text.lines().collect())
    }

    /// The trimmed text of 1-based `line`, when it exists and is not blank.
    fn text(&self, line: u32) -> Option<String> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let found = self.0.get(index)?.trim();
        (!found.is_empty()).then(|| found.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    fn error(line: u32, message: &str) -> Diagnostic {
        Diagnostic::at(line, 1, Severity::Error, message)
            .with_code(Some("E1"))
            .with_source("ts")
    }

    /// The text with `lines` lines, line i reading `line i`.
    fn text(lines: u32) -> String {
        (1..=lines).map(|i| format!("line {i}\n")).collect()
    }

    /// A text whose lines are the given ones.
    fn lines(lines: &[&str]) -> String {
        lines.iter().map(|line| format!("{line}\n")).collect()
    }

    struct Case {
        name: &'static str,
        before: Vec<Diagnostic>,
        before_text: Option<String>,
        after: Vec<Diagnostic>,
        after_text: Option<String>,
        new: Vec<bool>,
    }

    #[test]
    fn twenty_thousand_errors_of_one_identity_moved_down_are_none_new_and_one_more_is() {
        let before: Vec<Diagnostic> = (1..=20_000).map(|line| error(line, "x")).collect();
        let baseline = Baseline::of(&before, Some(&text(20_000)));
        let moved: Vec<Diagnostic> = (2..=20_001).map(|line| error(line, "x")).collect();
        let inserted = format!("new first line\n{}", text(20_000));
        let flags = baseline.new_flags(&moved, Some(&inserted));
        assert!(
            flags.iter().all(|new| !new),
            "all moved by one line, none new"
        );
        let mut more = moved.clone();
        more.push(error(20_001, "x"));
        let flags = baseline.new_flags(&more, Some(&inserted));
        assert_eq!(flags.iter().filter(|new| **new).count(), 1);
    }

    #[test]
    fn which_errors_are_new() {
        let cases = [
            Case {
                name: "nothing before: all new",
                before: vec![],
                before_text: None,
                after: vec![error(1, "a"), error(2, "b")],
                after_text: None,
                new: vec![true, true],
            },
            Case {
                name: "the same errors: none new",
                before: vec![error(1, "a"), error(2, "b")],
                before_text: None,
                after: vec![error(1, "a"), error(2, "b")],
                after_text: None,
                new: vec![false, false],
            },
            Case {
                name: "another message is new",
                before: vec![error(3, "a")],
                before_text: None,
                after: vec![error(3, "a"), error(3, "b")],
                after_text: None,
                new: vec![false, true],
            },
            Case {
                name: "another code is new",
                before: vec![error(3, "a")],
                before_text: None,
                after: vec![error(3, "a").with_code(Some("E2"))],
                after_text: None,
                new: vec![true],
            },
            Case {
                name: "another source is new",
                before: vec![error(3, "a")],
                before_text: None,
                after: vec![error(3, "a").with_source("eslint")],
                after_text: None,
                new: vec![true],
            },
            Case {
                name: "an old error moved down by inserted lines is old",
                before: vec![error(3, "a")],
                before_text: Some(text(5)),
                after: vec![error(6, "a")],
                after_text: Some(text(8)),
                new: vec![false],
            },
            Case {
                name: "a third of one message: the one not at an old place is new",
                before: vec![error(2, "x"), error(4, "x")],
                before_text: Some(text(5)),
                after: vec![error(1, "x"), error(3, "x"), error(5, "x")],
                after_text: Some(text(6)),
                // Lines gained 1: 2 -> 3 and 4 -> 5 moved, 1 is new.
                new: vec![true, false, false],
            },
            Case {
                name: "matched by its line's text when it moved further than the delta",
                before: vec![error(2, "x")],
                before_text: Some(lines(&["a", "let y = x;", "b"])),
                after: vec![error(1, "x"), error(3, "x")],
                after_text: Some(lines(&["let z = x;", "c", "let y = x;"])),
                new: vec![true, false],
            },
            Case {
                name: "a count that grew without texts: the extra ones in line order are new",
                before: vec![error(5, "x")],
                before_text: None,
                after: vec![error(1, "x"), error(9, "x")],
                after_text: None,
                new: vec![false, true],
            },
            Case {
                name: "a blank line's text matches nothing; the line delta does",
                before: vec![error(2, "x")],
                before_text: Some(lines(&["a", "  ", "b"])),
                after: vec![error(1, "x"), error(3, "x"), error(4, "x")],
                after_text: Some(lines(&["  ", "c", "d", "  "])),
                new: vec![true, false, true],
            },
        ];
        for case in cases {
            let baseline = Baseline::of(&case.before, case.before_text.as_deref());
            assert_eq!(
                baseline.new_flags(&case.after, case.after_text.as_deref()),
                case.new,
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn severity_is_part_of_the_identity() {
        let before = [Diagnostic::at(1, 1, Severity::Warning, "a")];
        let after = [Diagnostic::at(1, 1, Severity::Error, "a")];
        assert_eq!(Baseline::of(&before, None).new_flags(&after, None), [true]);
    }
}
