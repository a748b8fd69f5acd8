//! The text an agent's edit or write tool appends after an edit: the edited file's diagnostics,
//! and other files' (the errors an edit caused there; for a write, every file with errors),
//! within configured caps.

use crate::diagnostic::{Diagnostic, Severity};
use crate::render::{not_checked_note, render_marked_block, render_tagged_block, BlockFormat};
use std::collections::BTreeMap;

/// The header above the edited or written file's block.
const THIS_FILE_HEADER: &str = "LSP errors detected in this file, please fix:";
/// The header above the other files' blocks.
const OTHER_FILES_HEADER: &str = "LSP errors detected in other files:";

/// Which files a feedback covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The edited file, then the errors the edit caused in other files.
    Edit,
    /// The written file, then other files with errors.
    Write,
}

/// The caps feedback applies (from configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caps {
    /// The severities shown; others are dropped before any cap applies.
    pub include_severities: Vec<Severity>,
    /// At most this many diagnostic lines per file, then `... and N more`.
    pub max_diagnostics_per_file: usize,
    /// At most this many other files (with diagnostics left after filtering).
    pub max_other_files: usize,
    /// At most this many diagnostic lines in all (headers, tags and `... and N more` not counted).
    pub max_total_lines: usize,
    /// How each file's block is written.
    pub format: BlockFormat,
}

impl Default for Caps {
    /// The configuration defaults: errors only, 20 per file, 5 other files, 50 lines in all.
    fn default() -> Self {
        Caps {
            include_severities: vec![Severity::Error],
            max_diagnostics_per_file: 20,
            max_other_files: 5,
            max_total_lines: 50,
            format: BlockFormat::Compact,
        }
    }
}

/// Which of each file's diagnostics the last edit introduced: per relative path, one flag per
/// diagnostic as the file's list is given to [`render_feedback_marked`] (`true`: new). A file
/// without an entry has no baseline: no marker, line order.
pub type NewMarks = BTreeMap<String, Vec<bool>>;

/// Renders feedback: `file`'s diagnostics, then `others` (relative path -> diagnostics; the
/// file itself is ignored if present there): what the caller chose to show of other files.
///
/// Each non-empty section is "\n" + header + "\n" + its blocks joined by "\n"; sections are
/// joined by "\n"; no trailing newline; empty string when nothing is left after filtering.
/// The edited file always gets its block (up to its per-file cap and the total); each other
/// file, in path order, gets what is left of the total, and none is shown once it is spent.
pub fn render_feedback(
    file: &str,
    diagnostics: &[Diagnostic],
    others: &BTreeMap<String, Vec<Diagnostic>>,
    caps: &Caps,
) -> String {
    render_feedback_marked(file, diagnostics, others, caps, &NewMarks::new())
}

/// [`render_feedback`] where `new` says which errors the edit introduced: in each file's
/// block those come first, marked `NEW `, so that every cap leaves out old errors before new
/// ones.
pub fn render_feedback_marked(
    file: &str,
    diagnostics: &[Diagnostic],
    others: &BTreeMap<String, Vec<Diagnostic>>,
    caps: &Caps,
    new: &NewMarks,
) -> String {
    let keep = |path: &str, diags: &'_ [Diagnostic]| -> Vec<(Diagnostic, bool)> {
        let flags = new.get(path).filter(|flags| flags.len() == diags.len());
        diags
            .iter()
            .enumerate()
            .filter(|(_, diag)| caps.include_severities.contains(&diag.severity))
            .map(|(i, diag)| (diag.clone(), flags.is_some_and(|flags| flags[i])))
            .collect()
    };
    let own = keep(file, diagnostics);
    let mut shown_files = vec![(file, own)];
    let mut candidates: Vec<(&str, Vec<(Diagnostic, bool)>)> = others
        .iter()
        .filter(|(path, _)| *path != file)
        .map(|(path, diags)| (path.as_str(), keep(path, diags)))
        .filter(|(_, kept)| !kept.is_empty())
        .collect();
    // Stable: files with new errors first, each group in path order.
    let has_new = |kept: &[(Diagnostic, bool)]| kept.iter().any(|(_, new)| *new);
    candidates.sort_by_key(|(_, kept)| !has_new(kept));
    let cut = candidates.split_off(caps.max_other_files.min(candidates.len()));
    shown_files.extend(candidates);
    let shown = allocate(&shown_files, caps);
    // Files with new errors that no block shows are named, so that no broken file goes
    // unmentioned.
    let unshown = shown_files
        .iter()
        .zip(&shown)
        .skip(1)
        .filter(|(_, shown)| **shown == 0)
        .map(|((path, kept), _)| (*path, kept))
        .chain(cut.iter().map(|(path, kept)| (*path, kept)));
    let left_out: Vec<&str> = unshown
        .filter(|(_, kept)| has_new(kept))
        .map(|(path, _)| path)
        .collect();

    let mut sections = Vec::new();
    let (own_file, own) = &shown_files[0];
    if !own.is_empty() {
        sections.push(section(
            THIS_FILE_HEADER,
            &[block(own_file, own, shown[0], caps.format)],
        ));
    }
    let blocks: Vec<String> = shown_files
        .iter()
        .zip(&shown)
        .skip(1)
        .filter(|(_, shown)| **shown > 0)
        .map(|((path, kept), shown)| block(path, kept, *shown, caps.format))
        .collect();
    if !blocks.is_empty() || !left_out.is_empty() {
        let mut blocks = blocks;
        if !left_out.is_empty() {
            blocks.push(more_files_line(&left_out));
        }
        sections.push(section(OTHER_FILES_HEADER, &blocks));
    }
    sections.join("\n")
}

/// At most this many files are named in the line for files with new errors left out.
const MAX_NAMED_FILES: usize = 10;

/// `... and 3 more files with new errors: a.ts, b.ts, c.ts` (the first ten named).
fn more_files_line(files: &[&str]) -> String {
    let mut names = files[..files.len().min(MAX_NAMED_FILES)].join(", ");
    if files.len() > MAX_NAMED_FILES {
        names.push_str(", ...");
    }
    format!(
        "... and {} more files with new errors: {names}",
        files.len()
    )
}

/// How many lines each file gets: new errors first across all files (in order, each up to its
/// per-file cap and what is left of the total), then the old ones in what remains.
fn allocate(files: &[(&str, Vec<(Diagnostic, bool)>)], caps: &Caps) -> Vec<usize> {
    let mut budget = caps.max_total_lines;
    let mut shown = vec![0; files.len()];
    for wanted_new in [true, false] {
        for ((_, kept), shown) in files.iter().zip(shown.iter_mut()) {
            let count = kept.iter().filter(|(_, new)| *new == wanted_new).count();
            let more = count
                .min(caps.max_diagnostics_per_file.saturating_sub(*shown))
                .min(budget);
            *shown += more;
            budget -= more;
        }
    }
    shown
}

/// One file's block of flagged diagnostics, at most `shown` lines, in `format` (the tagged
/// block of the reference's contract has no marks: its lines go by line).
fn block(path: &str, kept: &[(Diagnostic, bool)], shown: usize, format: BlockFormat) -> String {
    match format {
        BlockFormat::Compact => {
            let entries: Vec<(&Diagnostic, bool)> =
                kept.iter().map(|(diag, new)| (diag, *new)).collect();
            render_marked_block(path, &entries, shown)
        }
        BlockFormat::Tagged => {
            let entries: Vec<&Diagnostic> = kept.iter().map(|(diag, _)| diag).collect();
            render_tagged_block(path, &entries, shown)
        }
    }
}

/// What the search after an edit's answer found (see `Squiggle::feedback_later`): a line that
/// says which edit broke the files, then a block for each, every error marked new, under the
/// same caps as a feedback's other files. Empty when `caused` holds no error at the shown
/// severities.
pub fn render_later(file: &str, caused: &BTreeMap<String, Vec<Diagnostic>>, caps: &Caps) -> String {
    let header =
        format!("LSP errors your edit of {file} caused in other files, found after its answer:");
    render_caused(&header, file, caused, caps)
}

/// What the search after an earlier edit's answer found, told with the next feedback: as
/// [`render_later`], after "\n", under a line that names the earlier edit. Empty when `caused`
/// holds no error at the shown severities.
pub fn render_earlier(
    file: &str,
    caused: &BTreeMap<String, Vec<Diagnostic>>,
    caps: &Caps,
) -> String {
    let header = format!("LSP errors your earlier edit of {file} caused in other files:");
    match render_caused(&header, file, caused, caps) {
        text if text.is_empty() => text,
        text => format!("\n{text}"),
    }
}

/// `header`, then a block for each file of `caused`, every error marked new; empty when none
/// is at the shown severities.
fn render_caused(
    header: &str,
    file: &str,
    caused: &BTreeMap<String, Vec<Diagnostic>>,
    caps: &Caps,
) -> String {
    let new: NewMarks = (caused.iter())
        .map(|(path, list)| (path.clone(), vec![true; list.len()]))
        .collect();
    let body = render_feedback_marked(file, &[], caused, caps, &new);
    match body.strip_prefix(&format!("\n{OTHER_FILES_HEADER}\n")) {
        Some(blocks) => format!("{header}\n{blocks}"),
        None => String::new(),
    }
}

/// The feedback section for an edited or written file that was not checked: "\n" + the
/// line that says so and why ([`not_checked_note`]); what [`render_feedback`] gives (what was
/// found before the deadline, other files) follows it.
pub fn not_checked_section(file: &str, reason: &str) -> String {
    format!("\n{}", not_checked_note(file, reason))
}

/// The files that import an edited one and were not checked for errors the edit caused there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unsearched {
    /// How many: of the importers found, those not checked (over the search's time or file
    /// limit, or not answered in time), or whose errors from before the edit are not known.
    pub files: usize,
    /// Whether more were not looked for (the search looks over the nearest few hundred, and
    /// the importers of broken importers only while time is left).
    pub more: bool,
    /// Whether none was checked because the edited file's text from before the edit is unknown.
    pub before_unknown: bool,
    /// Whether they are checked after the answer, by a search that tells what it finds
    /// (`squiggle hook claude-code --later`).
    #[serde(default)]
    pub later: bool,
}

impl Unsearched {
    /// Whether some importers are left (counted, or more than were looked over).
    pub fn any(&self) -> bool {
        self.files > 0 || self.more
    }

    /// "12 other files that import" (`1 other file that imports`, `12 or more ...`, `some
    /// ...`); `None` when none is left.
    fn importers(&self) -> Option<String> {
        let count = match (self.files, self.more) {
            (0, false) => return None,
            (0, true) => "some".to_string(),
            (files, true) => format!("{files} or more"),
            (files, false) => files.to_string(),
        };
        let files = match (self.files, self.more) {
            (1, false) => "other file that imports",
            _ => "other files that import",
        };
        Some(format!("{count} {files}"))
    }
}

/// The line for a search after an edit's answer that did not finish (see
/// `Squiggle::feedback_later`), the importers it was left as `unsearched`: "\n" + one line;
/// empty when none was left.
pub fn unfinished_section(file: &str, unsearched: &Unsearched) -> String {
    match unsearched.importers() {
        Some(importers) => format!(
            "\nLSP did not finish checking {importers} {file} after an earlier edit of it, so errors that edit caused there are unknown."
        ),
        None => String::new(),
    }
}

/// The feedback section for the importers of `file` not checked for errors the edit caused:
/// "\n" + one line; empty when there are none.
pub fn unsearched_section(file: &str, unsearched: &Unsearched) -> String {
    let Some(importers) = unsearched.importers() else {
        return String::new();
    };
    if unsearched.later && !unsearched.before_unknown {
        return format!(
            "\nLSP goes on checking {importers} {file}: squiggle will tell you if this edit broke them."
        );
    }
    let why = match unsearched.before_unknown {
        true => ": its text from before the edit is unknown",
        false => "",
    };
    format!(
        "\nLSP did not check {importers} {file}, so errors this edit caused there are unknown{why}."
    )
}

/// A feedback with the errors from before the edit taken out of its blocks and counted, as
/// the hooks and `check --scope` show it: the host blocks the edit (makes the model stop and
/// fix) for what the edit introduced, never for what was there before (a revert included).
/// A file whose baseline is unknown (no marks) keeps every error: whether the edit introduced
/// them is not known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewOnly {
    /// The edited file's diagnostics: its new ones when its baseline is known, else all.
    pub diagnostics: Vec<Diagnostic>,
    /// The other files' diagnostics: the new ones of each file with a baseline (a file left
    /// without any is left out), every one of a file without.
    pub others: BTreeMap<String, Vec<Diagnostic>>,
    /// The marks of what is kept, as [`render_feedback_marked`] takes them.
    pub new: NewMarks,
    /// Each file with errors (at the shown severities) from before the edit, and how many:
    /// the edited file first, then the others in path order.
    pub before: Vec<(String, usize)>,
}

/// At most this many files are named in the line for errors from before an edit.
const MAX_NAMED_BEFORE: usize = 3;

impl NewOnly {
    /// Splits a feedback's lists (`new` as [`render_feedback_marked`] takes it) at the shown
    /// severities of `caps`.
    pub fn of(
        file: &str,
        diagnostics: &[Diagnostic],
        others: &BTreeMap<String, Vec<Diagnostic>>,
        new: &NewMarks,
        caps: &Caps,
    ) -> Self {
        let mut split = NewOnly::default();
        let lists = std::iter::once((file, diagnostics))
            .chain((others.iter()).map(|(path, list)| (path.as_str(), list.as_slice())))
            .enumerate()
            .filter(|(at, (path, _))| *at == 0 || *path != file);
        for (at, (path, list)) in lists {
            let marks = new.get(path).filter(|flags| flags.len() == list.len());
            let (kept, old) = match marks {
                None => (list.to_vec(), 0),
                Some(marks) => {
                    let old = (list.iter().zip(marks))
                        .filter(|(diagnostic, new)| {
                            !**new && caps.include_severities.contains(&diagnostic.severity)
                        })
                        .count();
                    let kept: Vec<Diagnostic> = (list.iter().zip(marks))
                        .filter(|(_, new)| **new)
                        .map(|(diagnostic, _)| diagnostic.clone())
                        .collect();
                    split.new.insert(path.to_string(), vec![true; kept.len()]);
                    (kept, old)
                }
            };
            if old > 0 {
                split.before.push((path.to_string(), old));
            }
            match at {
                0 => split.diagnostics = kept,
                _ if kept.is_empty() => {
                    split.new.remove(path);
                }
                _ => {
                    split.others.insert(path.to_string(), kept);
                }
            }
        }
        split
    }

    /// Whether it holds an error to fix at the shown severities: one the edit introduced, or one
    /// in the edited file whose baseline is unknown (another file's without a baseline is
    /// shown, but not laid on the edit).
    pub fn any(&self, caps: &Caps) -> bool {
        let shown =
            |diagnostic: &Diagnostic| caps.include_severities.contains(&diagnostic.severity);
        let caused = (self.others.iter())
            .filter(|(path, _)| self.new.contains_key(*path))
            .any(|(_, list)| list.iter().any(shown));
        self.diagnostics.iter().any(shown) || caused
    }

    /// The line for the errors from before the edit: "\n" + one line naming how many, where,
    /// and the command that lists them; empty when there are none.
    pub fn before_section(&self) -> String {
        if self.before.is_empty() {
            return String::new();
        }
        let named = &self.before[..self.before.len().min(MAX_NAMED_BEFORE)];
        let mut parts: Vec<String> = (named.iter())
            .map(|(path, count)| format!("{count} in {path}"))
            .collect();
        let rest = &self.before[named.len()..];
        if !rest.is_empty() {
            let count: usize = rest.iter().map(|(_, count)| count).sum();
            parts.push(format!("{count} in {} more files", rest.len()));
        }
        let command = match rest.is_empty() {
            true => named
                .iter()
                .map(|(path, _)| path.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            false => ".".to_string(),
        };
        format!(
            "\nLSP also reports errors from before this edit, not caused by it: {} (`squiggle check {command}` lists them).",
            parts.join(", ")
        )
    }
}

/// One section: "\n" + header + "\n" + blocks joined by "\n".
fn section(header: &str, blocks: &[String]) -> String {
    format!("\n{header}\n{}", blocks.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_found_after_an_answer_name_the_edit_and_are_all_new() {
        let caps = Caps::default();
        let mut caused = BTreeMap::new();
        caused.insert(
            "src/b.ts".to_string(),
            vec![diag(3, Severity::Error, "Argument missing", None)],
        );
        let text = render_later("src/a.ts", &caused, &caps);
        assert!(
            text.starts_with(
                "LSP errors your edit of src/a.ts caused in other files, found after its answer:\n"
            ),
            "{text}"
        );
        assert!(text.contains("src/b.ts"), "{text}");
        assert!(text.contains("NEW "), "{text}");
        assert_eq!(render_later("src/a.ts", &BTreeMap::new(), &caps), "");
        let earlier = render_earlier("src/a.ts", &caused, &caps);
        assert!(
            earlier
                .starts_with("\nLSP errors your earlier edit of src/a.ts caused in other files:\n"),
            "{earlier}"
        );
        assert!(earlier.contains("NEW "), "{earlier}");
        assert_eq!(render_earlier("src/a.ts", &BTreeMap::new(), &caps), "");
    }

    #[test]
    fn the_importers_not_checked_are_one_line() {
        let line = |files, more, before_unknown| {
            let unsearched = Unsearched {
                files,
                more,
                before_unknown,
                later: false,
            };
            unsearched_section("src/a.ts", &unsearched)
        };
        assert_eq!(line(0, false, false), "");
        let later = |files, before_unknown| {
            let unsearched = Unsearched {
                files,
                before_unknown,
                later: true,
                more: false,
            };
            unsearched_section("src/a.ts", &unsearched)
        };
        assert_eq!(
            later(2, false),
            "\nLSP goes on checking 2 other files that import src/a.ts: squiggle will tell you if this edit broke them."
        );
        assert_eq!(later(0, false), "");
        assert!(
            later(2, true).contains("did not check"),
            "nothing goes on when the text from before is unknown"
        );
        let unfinished = |files, more| {
            let unsearched = Unsearched {
                files,
                more,
                ..Unsearched::default()
            };
            unfinished_section("src/a.ts", &unsearched)
        };
        assert_eq!(
            unfinished(1, false),
            "\nLSP did not finish checking 1 other file that imports src/a.ts after an earlier edit of it, so errors that edit caused there are unknown."
        );
        assert!(unfinished(0, true).contains("checking some other files that import"));
        assert_eq!(unfinished(0, false), "");
        assert_eq!(
            line(0, true, false),
            "\nLSP did not check some other files that import src/a.ts, so errors this edit caused there are unknown."
        );
        assert_eq!(
            line(1, false, false),
            "\nLSP did not check 1 other file that imports src/a.ts, so errors this edit caused there are unknown."
        );
        assert_eq!(
            line(256, true, false),
            "\nLSP did not check 256 or more other files that import src/a.ts, so errors this edit caused there are unknown."
        );
        assert_eq!(
            line(3, false, true),
            "\nLSP did not check 3 other files that import src/a.ts, so errors this edit caused there are unknown: its text from before the edit is unknown."
        );
    }

    fn diag(line: u32, severity: Severity, message: &str, code: Option<&str>) -> Diagnostic {
        Diagnostic::at(line, 1, severity, message).with_code(code)
    }

    fn errors(count: u32) -> Vec<Diagnostic> {
        (1..=count)
            .rev()
            .map(|line| diag(line, Severity::Error, &format!("e{line}"), None))
            .collect()
    }

    /// The lines `i:1 ei\n` for i in `lines`.
    fn error_lines(lines: std::ops::RangeInclusive<u32>) -> String {
        lines.map(|line| format!("{line}:1 e{line}\n")).collect()
    }

    #[test]
    fn errors_from_before_are_counted_new_ones_and_unknown_ones_kept() {
        let e = |line| diag(line, Severity::Error, &format!("e{line}"), None);
        let w = diag(9, Severity::Warning, "w", None);
        let caps = Caps::default();
        // (the edited file's flags, b.ts's flags, kept in a.ts, kept files, before, to fix)
        type Row = (
            Option<Vec<bool>>,
            Option<Vec<bool>>,
            usize,
            Vec<&'static str>,
            Vec<(&'static str, usize)>,
            bool,
        );
        let table: [Row; 5] = [
            // No baselines: everything kept, nothing counted, the edited file's errors to fix.
            (None, None, 3, vec!["b.ts"], vec![], true),
            // The edited file's one new error kept, two counted; b.ts's one new error kept (its
            // old one, a warning, is not shown).
            (
                Some(vec![false, true, false]),
                Some(vec![true, false]),
                1,
                vec!["b.ts"],
                vec![("a.ts", 2)],
                true,
            ),
            // Nothing new anywhere (a revert): nothing to fix, every error counted.
            (
                Some(vec![false; 3]),
                Some(vec![false, false]),
                0,
                vec![],
                vec![("a.ts", 3), ("b.ts", 1)],
                false,
            ),
            // Only another file without a baseline has errors besides old ones: shown, not laid on the edit.
            (
                Some(vec![false; 3]),
                None,
                0,
                vec!["b.ts"],
                vec![("a.ts", 3)],
                false,
            ),
            // Marks that do not fit the list count as none.
            (
                Some(vec![true]),
                Some(vec![true, false]),
                3,
                vec!["b.ts"],
                vec![],
                true,
            ),
        ];
        for (own, theirs, kept_here, kept_files, before, to_fix) in table {
            let mut marks = NewMarks::new();
            own.clone().map(|flags| marks.insert("a.ts".into(), flags));
            theirs
                .clone()
                .map(|flags| marks.insert("b.ts".into(), flags));
            let others = others(&[("b.ts", vec![e(1), w.clone()]), ("a.ts", vec![e(7)])]);
            let split = NewOnly::of("a.ts", &[e(1), e(2), e(3)], &others, &marks, &caps);
            let row = format!("{own:?} {theirs:?}");
            assert_eq!(split.diagnostics.len(), kept_here, "{row}");
            assert_eq!(
                split.others.keys().map(String::as_str).collect::<Vec<_>>(),
                kept_files,
                "{row}"
            );
            let counted: Vec<(&str, usize)> =
                split.before.iter().map(|(p, n)| (p.as_str(), *n)).collect();
            assert_eq!(counted, before, "{row}");
            assert_eq!(split.any(&caps), to_fix, "{row}");
        }
    }

    #[test]
    fn the_line_for_errors_from_before_names_up_to_three_files() {
        let split = |before: &[(&str, usize)]| NewOnly {
            before: before.iter().map(|(p, n)| (p.to_string(), *n)).collect(),
            ..NewOnly::default()
        };
        assert_eq!(split(&[]).before_section(), "");
        assert_eq!(
            split(&[("a.ts", 2)]).before_section(),
            "\nLSP also reports errors from before this edit, not caused by it: 2 in a.ts (`squiggle check a.ts` lists them)."
        );
        assert_eq!(
            split(&[("a.ts", 1), ("b.ts", 2), ("c.ts", 3), ("d.ts", 4), ("e.ts", 5)]).before_section(),
            "\nLSP also reports errors from before this edit, not caused by it: 1 in a.ts, 2 in b.ts, 3 in c.ts, 9 in 2 more files (`squiggle check .` lists them)."
        );
    }

    fn others(entries: &[(&str, Vec<Diagnostic>)]) -> BTreeMap<String, Vec<Diagnostic>> {
        entries
            .iter()
            .map(|(path, diags)| (path.to_string(), diags.clone()))
            .collect()
    }

    #[test]
    fn edit_with_errors_renders_this_file_section() {
        let diags = [diag(1, Severity::Error, "msg", Some("code"))];
        assert_eq!(
            render_feedback("a.ts", &diags, &BTreeMap::new(), &Caps::default()),
            "\nLSP errors detected in this file, please fix:\n\
             a.ts:\n\
             1:1 msg (code)"
        );
    }

    #[test]
    fn edit_without_diagnostics_is_empty() {
        assert_eq!(
            render_feedback("a.ts", &[], &BTreeMap::new(), &Caps::default()),
            ""
        );
    }

    #[test]
    fn other_files_with_new_errors_beyond_the_caps_are_named() {
        let names: Vec<String> = (1..=14).map(|i| format!("f{i:02}.ts")).collect();
        let others: BTreeMap<String, Vec<Diagnostic>> =
            names.iter().map(|name| (name.clone(), errors(1))).collect();
        let mut new: NewMarks = names
            .iter()
            .map(|name| (name.clone(), vec![true]))
            .collect();
        // An old error beyond the cap is not named: the line is for what the edit broke.
        new.insert("f14.ts".into(), vec![false]);
        let text = render_feedback_marked("a.ts", &[], &others, &Caps::default(), &new);
        assert!(
            text.ends_with(
                "f05.ts:\nNEW 1:1 e1\n\
                            ... and 8 more files with new errors: f06.ts, f07.ts, f08.ts, f09.ts, \
                            f10.ts, f11.ts, f12.ts, f13.ts"
            ),
            "{text}"
        );
        // No room left in the total: the files are named all the same.
        let tight = Caps {
            max_total_lines: 0,
            ..Caps::default()
        };
        let text = render_feedback_marked("a.ts", &[], &others, &tight, &new);
        assert!(
            text.ends_with("... and 13 more files with new errors: f01.ts, f02.ts, f03.ts, f04.ts, f05.ts, f06.ts, f07.ts, f08.ts, f09.ts, f10.ts, ..."),
            "{text}"
        );
    }

    #[test]
    fn an_edit_shows_the_other_files_it_is_given() {
        let others = others(&[("b.ts", errors(1))]);
        assert!(render_feedback("a.ts", &[], &others, &Caps::default())
            .starts_with("\nLSP errors detected in other files:\n"));
    }

    #[test]
    fn warnings_are_filtered_by_default_and_shown_when_included() {
        let diags = [
            diag(2, Severity::Warning, "unused", None),
            diag(1, Severity::Hint, "fade", None),
        ];
        assert_eq!(
            render_feedback("a.ts", &diags, &BTreeMap::new(), &Caps::default()),
            ""
        );
        let caps = Caps {
            include_severities: vec![Severity::Error, Severity::Warning],
            ..Caps::default()
        };
        assert_eq!(
            render_feedback("a.ts", &diags, &BTreeMap::new(), &caps),
            "\nLSP errors detected in this file, please fix:\n\
             a.ts:\n\
             2:1 warning: unused"
        );
    }

    #[test]
    fn message_code_and_path_are_shown_as_they_are() {
        let diags = [diag(3, Severity::Error, "a < b && c > d", Some("<E&>"))];
        assert_eq!(
            render_feedback("<a>&.ts", &diags, &BTreeMap::new(), &Caps::default()),
            "\nLSP errors detected in this file, please fix:\n\
             <a>&.ts:\n\
             3:1 a < b && c > d (<E&>)"
        );
    }

    #[test]
    fn edit_with_25_errors_shows_20_and_counts_5_more() {
        assert_eq!(
            render_feedback("a.ts", &errors(25), &BTreeMap::new(), &Caps::default()),
            format!(
                "\nLSP errors detected in this file, please fix:\n\
                 a.ts:\n{}... and 5 more",
                error_lines(1..=20)
            )
        );
    }

    #[test]
    fn write_shows_written_file_then_others_sorted_by_path() {
        let others = others(&[
            ("src/z.ts", vec![diag(4, Severity::Error, "z", Some("Z1"))]),
            ("src/b.ts", vec![diag(7, Severity::Error, "b", None)]),
        ]);
        let diags = [diag(1, Severity::Error, "a", Some("TS2322"))];
        assert_eq!(
            render_feedback("src/a.ts", &diags, &others, &Caps::default()),
            "\nLSP errors detected in this file, please fix:\n\
             src/a.ts:\n\
             1:1 a (TS2322)\n\
             \n\
             LSP errors detected in other files:\n\
             src/b.ts:\n\
             7:1 b\n\
             src/z.ts:\n\
             4:1 z (Z1)"
        );
    }

    #[test]
    fn write_with_only_other_files_starts_with_other_files_header() {
        let others = others(&[("b.ts", errors(1))]);
        assert_eq!(
            render_feedback("a.ts", &[], &others, &Caps::default()),
            "\nLSP errors detected in other files:\n\
             b.ts:\n\
             1:1 e1"
        );
    }

    /// The other-files text for `paths`, each with the one error `errors(1)` makes.
    fn one_error_each(paths: &[&str]) -> String {
        let blocks: Vec<String> = paths
            .iter()
            .map(|path| format!("{path}:\n1:1 e1"))
            .collect();
        format!(
            "\nLSP errors detected in other files:\n{}",
            blocks.join("\n")
        )
    }

    #[test]
    fn write_shows_at_most_five_other_files_in_path_order() {
        let others = others(&[
            ("g.ts", errors(1)),
            ("c.ts", errors(1)),
            ("a.ts", errors(1)),
            ("f.ts", errors(1)),
            ("b.ts", errors(1)),
            ("e.ts", errors(1)),
            ("d.ts", errors(1)),
        ]);
        assert_eq!(
            render_feedback("w.ts", &[], &others, &Caps::default()),
            one_error_each(&["a.ts", "b.ts", "c.ts", "d.ts", "e.ts"])
        );
    }

    #[test]
    fn written_file_with_50_errors_and_cap_20_leaves_30_lines_for_others() {
        let others = others(&[("b.ts", errors(25)), ("c.ts", errors(15))]);
        assert_eq!(
            render_feedback("a.ts", &errors(50), &others, &Caps::default()),
            format!(
                "\nLSP errors detected in this file, please fix:\n\
                 a.ts:\n{}... and 30 more\n\
                 \n\
                 LSP errors detected in other files:\n\
                 b.ts:\n{}... and 5 more\n\
                 c.ts:\n{}... and 5 more",
                error_lines(1..=20),
                error_lines(1..=20),
                error_lines(1..=10),
            )
        );
    }

    #[test]
    fn written_file_filling_the_total_leaves_no_other_file() {
        let others = others(&[("b.ts", errors(1))]);
        let caps = Caps {
            max_diagnostics_per_file: 60,
            ..Caps::default()
        };
        assert_eq!(
            render_feedback("a.ts", &errors(50), &others, &caps),
            format!(
                "\nLSP errors detected in this file, please fix:\n\
                 a.ts:\n{}",
                error_lines(1..=50).trim_end()
            )
        );
    }

    #[test]
    fn written_file_over_the_total_counts_the_rest() {
        let caps = Caps {
            max_diagnostics_per_file: 60,
            ..Caps::default()
        };
        assert_eq!(
            render_feedback("a.ts", &errors(55), &BTreeMap::new(), &caps),
            format!(
                "\nLSP errors detected in this file, please fix:\n\
                 a.ts:\n{}... and 5 more",
                error_lines(1..=50)
            )
        );
    }

    #[test]
    fn budget_running_out_inside_an_other_file_hides_later_files() {
        let others = others(&[
            ("b.ts", errors(3)),
            ("c.ts", errors(6)),
            ("d.ts", errors(1)),
        ]);
        let caps = Caps {
            max_total_lines: 6,
            ..Caps::default()
        };
        assert_eq!(
            render_feedback("a.ts", &errors(2), &others, &caps),
            format!(
                "\nLSP errors detected in this file, please fix:\n\
                 a.ts:\n{}\n\
                 \n\
                 LSP errors detected in other files:\n\
                 b.ts:\n{}\n\
                 c.ts:\n{}... and 5 more",
                error_lines(1..=2).trim_end(),
                error_lines(1..=3).trim_end(),
                error_lines(1..=1),
            )
        );
    }

    #[test]
    fn written_file_present_in_others_is_not_repeated() {
        let others = others(&[("a.ts", errors(1)), ("b.ts", errors(1))]);
        assert_eq!(
            render_feedback("a.ts", &errors(1), &others, &Caps::default()),
            "\nLSP errors detected in this file, please fix:\n\
             a.ts:\n\
             1:1 e1\n\
             \n\
             LSP errors detected in other files:\n\
             b.ts:\n\
             1:1 e1"
        );
    }

    #[test]
    fn written_file_only_in_others_yields_nothing() {
        let others = others(&[("a.ts", errors(1))]);
        assert_eq!(render_feedback("a.ts", &[], &others, &Caps::default()), "");
    }

    #[test]
    fn other_file_with_only_warnings_takes_no_slot() {
        let warning = vec![diag(1, Severity::Warning, "w", None)];
        let others = others(&[
            ("a.ts", warning),
            ("b.ts", errors(1)),
            ("c.ts", errors(1)),
            ("d.ts", errors(1)),
            ("e.ts", errors(1)),
            ("f.ts", errors(1)),
            ("g.ts", errors(1)),
        ]);
        assert_eq!(
            render_feedback("w.ts", &[], &others, &Caps::default()),
            one_error_each(&["b.ts", "c.ts", "d.ts", "e.ts", "f.ts"])
        );
    }

    #[test]
    fn a_file_not_checked_gets_one_line_that_sections_can_follow() {
        let section = not_checked_section(
            "a.go",
            "gopls: `gopls` is not installed (install: go install gopls)",
        );
        assert_eq!(
            section,
            "\nLSP did not check a.go, so its errors are unknown: gopls: `gopls` is not installed (install: go install gopls)"
        );
        let others = others(&[("b.ts", errors(1))]);
        let rest = render_feedback("a.go", &[], &others, &Caps::default());
        assert_eq!(
            section + &rest,
            "\nLSP did not check a.go, so its errors are unknown: gopls: `gopls` is not installed (install: go install gopls)\n\
             LSP errors detected in other files:\nb.ts:\n1:1 e1"
        );
    }

    /// `old` errors at lines 1..=old, then `new` errors after them, with their flags.
    fn old_then_new(old: u32, new: u32) -> (Vec<Diagnostic>, Vec<bool>) {
        let diags = (1..=old + new)
            .map(|line| diag(line, Severity::Error, &format!("e{line}"), None))
            .collect();
        let flags = (1..=old + new).map(|line| line > old).collect();
        (diags, flags)
    }

    /// The lines `NEW i:1 ei\n` for i in `lines`.
    fn new_lines(lines: std::ops::RangeInclusive<u32>) -> String {
        lines
            .map(|line| format!("NEW {line}:1 e{line}\n"))
            .collect()
    }

    #[test]
    fn thirteen_new_errors_in_a_file_with_nine_come_first_marked_within_the_cap() {
        let (diags, flags) = old_then_new(9, 13);
        let new = NewMarks::from([("a.ts".to_string(), flags)]);
        let text = render_feedback_marked("a.ts", &diags, &BTreeMap::new(), &Caps::default(), &new);
        assert_eq!(
            text,
            format!(
                "\nLSP errors detected in this file, please fix:\n\
                 a.ts:\n{}{}... and 2 more",
                new_lines(10..=22),
                error_lines(1..=7),
            )
        );
    }

    #[test]
    fn marks_that_do_not_fit_the_list_are_ignored() {
        let (diags, _) = old_then_new(2, 0);
        let new = NewMarks::from([("a.ts".to_string(), vec![true])]);
        let text = render_feedback_marked("a.ts", &diags, &BTreeMap::new(), &Caps::default(), &new);
        assert_eq!(
            text,
            render_feedback("a.ts", &diags, &BTreeMap::new(), &Caps::default())
        );
    }

    #[test]
    fn new_errors_first_under_every_cap() {
        struct Case {
            name: &'static str,
            own: (u32, u32),
            others: Vec<(&'static str, u32, u32)>,
            caps: Caps,
            expected: String,
        }
        let block = |path: &str, body: String| format!("{path}:\n{}", body.trim_end());
        let cases = [
            Case {
                name: "a warning never counts as a new error's slot",
                own: (1, 1),
                others: vec![],
                caps: Caps {
                    max_diagnostics_per_file: 1,
                    ..Caps::default()
                },
                expected: format!(
                    "\n{THIS_FILE_HEADER}\n{}",
                    block("w.ts", format!("{}... and 1 more\n", new_lines(2..=2)))
                ),
            },
            Case {
                name: "other files with new errors before those with old ones (5 files)",
                own: (0, 0),
                others: vec![
                    ("a.ts", 1, 0),
                    ("b.ts", 1, 0),
                    ("c.ts", 1, 0),
                    ("d.ts", 1, 0),
                    ("e.ts", 1, 0),
                    ("z.ts", 0, 1),
                ],
                caps: Caps::default(),
                expected: format!(
                    "\n{OTHER_FILES_HEADER}\n{}\n{}\n{}\n{}\n{}",
                    block("z.ts", new_lines(1..=1)),
                    block("a.ts", error_lines(1..=1)),
                    block("b.ts", error_lines(1..=1)),
                    block("c.ts", error_lines(1..=1)),
                    block("d.ts", error_lines(1..=1)),
                ),
            },
            Case {
                name: "the total goes to new errors in other files before old ones here",
                own: (5, 0),
                others: vec![("b.ts", 0, 3)],
                caps: Caps {
                    max_total_lines: 6,
                    ..Caps::default()
                },
                expected: format!(
                    "\n{THIS_FILE_HEADER}\n{}\n\n{OTHER_FILES_HEADER}\n{}",
                    block("w.ts", format!("{}... and 2 more\n", error_lines(1..=3))),
                    block("b.ts", new_lines(1..=3)),
                ),
            },
        ];
        for case in cases {
            let mut new = NewMarks::new();
            let (mut own, mut own_flags) = old_then_new(case.own.0, case.own.1);
            if case.name.starts_with("a warning") {
                // A new warning at line 3, not shown at the default severities.
                own.push(diag(3, Severity::Warning, "w", None));
                own_flags.push(true);
            }
            new.insert("w.ts".to_string(), own_flags);
            let mut others = BTreeMap::new();
            for (path, old, fresh) in &case.others {
                let (diags, flags) = old_then_new(*old, *fresh);
                others.insert(path.to_string(), diags);
                new.insert(path.to_string(), flags);
            }
            assert_eq!(
                render_feedback_marked("w.ts", &own, &others, &case.caps, &new),
                case.expected,
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn scope_serializes_lowercase() {
        assert_eq!(
            serde_json::to_string(&[Scope::Edit, Scope::Write]).ok(),
            Some("[\"edit\",\"write\"]".to_string())
        );
    }
}
