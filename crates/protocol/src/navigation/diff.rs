//! A compact unified diff of an [`EditPlan`]: changed lines only (no context), per file, capped
//! with counts of what was left out; and the lines an edit changed, for the names on them.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffTag};

use super::workspace_edit::{EditPlan, FileChange};
use crate::render::cut_chars;

/// How long one line diff may take: past it, the diff still turns the old text into the new
/// one but may not be the shortest (a huge file rewritten whole costs no more than this).
const DIFF_TIME: Duration = Duration::from_millis(200);

/// One step of a line diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The line is in both (old index, new index).
    Same(usize, usize),
    /// The old line at this index is removed.
    Removed(usize),
    /// The new line at this index is added.
    Added(usize),
}

/// The lines of a text for diffing (split on `\n`, no empty last line after a final newline).
fn lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// A shortest line diff of `a` and `b` (Myers', in linear space, by `similar`), as steps over
/// both texts in order; past `within`, a correct one that may be longer.
fn diff(a: &[&str], b: &[&str], within: Duration) -> Vec<Step> {
    let deadline = Instant::now() + within;
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, a, b, Some(deadline));
    let mut steps = Vec::new();
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => steps.extend(old.zip(new).map(|(x, y)| Step::Same(x, y))),
            DiffTag::Delete => steps.extend(old.map(Step::Removed)),
            DiffTag::Insert => steps.extend(new.map(Step::Added)),
            DiffTag::Replace => {
                steps.extend(old.map(Step::Removed));
                steps.extend(new.map(Step::Added));
            }
        }
    }
    steps
}

/// A line a line diff does not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangedLine<'a> {
    /// A line of the text before: its 0-based index, and it.
    Removed(usize, &'a str),
    /// A line of the text after: its 0-based index, and it.
    Added(usize, &'a str),
}

impl<'a> ChangedLine<'a> {
    /// The line's text.
    pub fn text(&self) -> &'a str {
        match self {
            ChangedLine::Removed(_, text) | ChangedLine::Added(_, text) => text,
        }
    }
}

/// The lines of `before` and `after` a line diff of the two does not keep (those removed, then
/// those added, hunk by hunk); past `within`, those of a correct diff that may be longer.
pub fn changed_lines<'a>(
    before: &'a str,
    after: &'a str,
    within: Duration,
) -> Vec<ChangedLine<'a>> {
    let (a, b) = (lines(before), lines(after));
    (diff(&a, &b, within).into_iter())
        .filter_map(|step| match step {
            Step::Same(..) => None,
            Step::Removed(x) => Some(ChangedLine::Removed(x, a[x])),
            Step::Added(y) => Some(ChangedLine::Added(y, b[y])),
        })
        .collect()
}

/// The hunks of a diff, as lines (`@@ -a,n +b,m @@`, then `-old` and `+new` lines).
fn hunks(before: &str, after: &str) -> (Vec<String>, usize, usize) {
    let (a, b) = (lines(before), lines(after));
    let steps = diff(&a, &b, DIFF_TIME);
    let mut out = Vec::new();
    let (mut added, mut removed) = (0, 0);
    let mut i = 0;
    // Where the next line of each text is (0-based), for hunks that only add or only remove.
    let (mut old_at, mut new_at) = (0usize, 0usize);
    while i < steps.len() {
        if let Step::Same(x, y) = steps[i] {
            old_at = x + 1;
            new_at = y + 1;
            i += 1;
            continue;
        }
        let run: Vec<Step> = steps[i..]
            .iter()
            .take_while(|step| !matches!(step, Step::Same(..)))
            .copied()
            .collect();
        i += run.len();
        let gone: Vec<usize> = run
            .iter()
            .filter_map(|s| match s {
                Step::Removed(x) => Some(*x),
                _ => None,
            })
            .collect();
        let came: Vec<usize> = run
            .iter()
            .filter_map(|s| match s {
                Step::Added(y) => Some(*y),
                _ => None,
            })
            .collect();
        let span = |start: usize, count: usize| match count {
            1 => format!("{}", start + 1),
            0 => format!("{start},0"),
            n => format!("{},{n}", start + 1),
        };
        out.push(format!(
            "@@ -{} +{} @@",
            span(gone.first().copied().unwrap_or(old_at), gone.len()),
            span(came.first().copied().unwrap_or(new_at), came.len())
        ));
        out.extend(gone.iter().map(|&x| format!("-{}", a[x])));
        out.extend(came.iter().map(|&y| format!("+{}", b[y])));
        removed += gone.len();
        added += came.len();
        if let Some(&x) = gone.last() {
            old_at = x + 1;
        }
        if let Some(&y) = came.last() {
            new_at = y + 1;
        }
    }
    (out, added, removed)
}

/// The heading and body lines of one file's change.
fn file_diff(change: &FileChange) -> (String, Vec<String>) {
    match (&change.before, &change.after) {
        (None, Some(after)) => {
            let (body, added, _) = hunks("", after);
            let how = match &change.renamed_from {
                Some(from) => format!("renamed from {from}"),
                None => "created".to_string(),
            };
            let body = if change.renamed_from.is_some() {
                Vec::new()
            } else {
                body
            };
            (
                format!("{}  ({how}, {})", change.file, count(added, "line")),
                body,
            )
        }
        (Some(before), None) => (
            format!(
                "{}  (deleted, {})",
                change.file,
                count(lines(before).len(), "line")
            ),
            Vec::new(),
        ),
        (before, after) => {
            let (body, added, removed) = hunks(
                before.as_deref().unwrap_or_default(),
                after.as_deref().unwrap_or_default(),
            );
            (format!("{}  (+{added} -{removed})", change.file), body)
        }
    }
}

/// `1 file`, `2 files`.
fn files(n: usize) -> String {
    count(n, "file")
}

/// `1 line`, `2 lines`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// At most this many characters of a diff line (its `-` or `+` included) are shown, then `…`:
/// a minified file's one line of megabytes is not a preview.
const MAX_LINE_CHARS: usize = 1_000;

/// The plan as a compact diff: `N files changed`, then per changed file a heading
/// (`path  (+a -r)`, `(created)`, `(deleted)`, `(renamed from x)`) and its hunks; at most
/// `max_lines` hunk lines in all, each cut after [`MAX_LINE_CHARS`] characters, then
/// `... N more lines in <file>` and `... N more files: a, b`.
pub fn render_diff(plan: &EditPlan, max_lines: usize) -> String {
    let changed: Vec<&FileChange> = plan.changed().collect();
    if changed.is_empty() {
        return "no changes\n".to_string();
    }
    let mut out = format!("{} changed\n", files(changed.len()));
    let mut budget = max_lines;
    for (index, change) in changed.iter().enumerate() {
        if budget == 0 {
            let rest: Vec<&str> = changed[index..].iter().map(|c| c.file.as_str()).collect();
            out.push_str(&format!(
                "... {} more: {}\n",
                files(rest.len()),
                rest.join(", ")
            ));
            break;
        }
        let (heading, body) = file_diff(change);
        out.push_str(&heading);
        out.push('\n');
        for line in body.iter().take(budget) {
            out.push_str(&cut_chars(line, MAX_LINE_CHARS));
            out.push('\n');
        }
        if body.len() > budget {
            out.push_str(&format!(
                "... {} more lines in {}\n",
                body.len() - budget,
                change.file
            ));
        }
        budget = budget.saturating_sub(body.len());
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::path::PathBuf;

    fn change(file: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path: PathBuf::from("/ws").join(file),
            file: file.to_string(),
            before: before.map(str::to_string),
            after: after.map(str::to_string),
            renamed_from: None,
        }
    }

    #[test]
    fn line_diffs_are_shortest_and_keep_order() {
        let cases: Vec<(&str, &str, &str, Vec<&str>)> = vec![
            ("same", "a\nb\n", "a\nb\n", vec![]),
            (
                "one line changed",
                "a\nold\nc\n",
                "a\nnew\nc\n",
                vec!["@@ -2 +2 @@", "-old", "+new"],
            ),
            (
                "two separate changes",
                "x1\na\nb\nc\nx2\n",
                "y1\na\nb\nc\ny2\n",
                vec!["@@ -1 +1 @@", "-x1", "+y1", "@@ -5 +5 @@", "-x2", "+y2"],
            ),
            (
                "added at the end",
                "a\n",
                "a\nb\n",
                vec!["@@ -1,0 +2 @@", "+b"],
            ),
            (
                "removed in the middle",
                "a\nb\nc\n",
                "a\nc\n",
                vec!["@@ -2 +1,0 @@", "-b"],
            ),
            (
                "moved line",
                "a\nb\nc\nd\n",
                "b\nc\na\nd\n",
                vec!["@@ -1 +0,0 @@", "-a", "@@ -3,0 +3 @@", "+a"],
            ),
        ];
        for (name, before, after, want) in cases {
            let (got, _, _) = hunks(before, after);
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn every_diff_turns_the_old_text_into_the_new() {
        // Every diff, replayed, turns the old text into the new one.
        let pairs = [
            ("a\nb\nc\nd\ne\n", "a\nx\nc\ny\ne\nf\n"),
            ("1\n2\n3\n", "3\n2\n1\n"),
            ("", "a\nb\n"),
            ("a\nb\n", ""),
        ];
        for (before, after) in pairs {
            let (a, b) = (lines(before), lines(after));
            let rebuilt: Vec<&str> = diff(&a, &b, DIFF_TIME)
                .into_iter()
                .filter_map(|step| match step {
                    Step::Same(_, y) | Step::Added(y) => Some(b[y]),
                    Step::Removed(_) => None,
                })
                .collect();
            assert_eq!(rebuilt, b, "{before:?} -> {after:?}");
        }
    }

    #[test]
    fn the_changed_lines_are_those_removed_and_added() {
        let changed = changed_lines("a\nb\nc\n", "a\nx\nc\ny\n", DIFF_TIME);
        let expected = [
            ChangedLine::Removed(1, "b"),
            ChangedLine::Added(1, "x"),
            ChangedLine::Added(3, "y"),
        ];
        assert_eq!(changed, expected);
        assert!(changed_lines("a\n", "a\n", DIFF_TIME).is_empty());
    }

    #[test]
    fn a_huge_rewrite_is_diffed_within_its_time_and_still_right() {
        let before: String = (0..40_000).map(|i| format!("old {i}\n")).collect();
        let after: String = (0..40_000).map(|i| format!("new {i}\n")).collect();
        let started = Instant::now();
        let (hunks, added, removed) = hunks(&before, &after);
        assert!(
            started.elapsed() < DIFF_TIME * 10,
            "{:?}",
            started.elapsed()
        );
        assert_eq!((added, removed), (40_000, 40_000));
        assert_eq!(
            hunks.len(),
            80_001,
            "one hunk: its heading, every old line, every new one"
        );
    }

    #[test]
    fn render_shows_files_and_caps_lines_and_files() {
        let plan = EditPlan {
            files: vec![
                change(
                    "a.py",
                    Some("x = old\ny = old\n"),
                    Some("x = new\ny = new\n"),
                ),
                change("b.py", Some("old()\n"), Some("new()\n")),
                change("c.py", None, Some("made\n")),
                change("d.py", Some("same\n"), Some("same\n")),
                change("e.py", Some("gone\n"), None),
            ],
        };
        assert_eq!(
            render_diff(&plan, 100),
            "4 files changed\n\
             a.py  (+2 -2)\n@@ -1,2 +1,2 @@\n-x = old\n-y = old\n+x = new\n+y = new\n\
             b.py  (+1 -1)\n@@ -1 +1 @@\n-old()\n+new()\n\
             c.py  (created, 1 line)\n@@ -0,0 +1 @@\n+made\n\
             e.py  (deleted, 1 line)\n"
        );
        assert_eq!(
            render_diff(&plan, 3),
            "4 files changed\n\
             a.py  (+2 -2)\n@@ -1,2 +1,2 @@\n-x = old\n-y = old\n... 2 more lines in a.py\n\
             ... 3 files more: b.py, c.py, e.py\n"
        );
    }

    #[test]
    fn a_changed_line_of_megabytes_is_shown_as_its_first_thousand_characters() {
        let before = format!("{}\n", "a".repeat(8 << 20));
        let after = format!("{}\n", "b".repeat(8 << 20));
        let plan = EditPlan {
            files: vec![change("min.js", Some(&before), Some(&after))],
        };
        // The `-` or `+` in front counts.
        let (old, new) = (
            "a".repeat(MAX_LINE_CHARS - 1),
            "b".repeat(MAX_LINE_CHARS - 1),
        );
        assert_eq!(
            render_diff(&plan, 10),
            format!("1 file changed\nmin.js  (+1 -1)\n@@ -1 +1 @@\n-{old}…\n+{new}…\n")
        );
    }

    #[test]
    fn no_changes_is_said() {
        let plan = EditPlan {
            files: vec![change("a.py", Some("x\n"), Some("x\n"))],
        };
        assert_eq!(render_diff(&plan, 10), "no changes\n");
    }
}
