//! The answer to "what is wrong under this folder": the diagnostics of many files, grouped by
//! file and capped like the write feedback, with the files that could not be checked said.

use std::collections::BTreeMap;

use crate::diagnostic::Diagnostic;
use crate::feedback::Caps;
use crate::render::{not_checked_note, render_file_block};

/// At most this many files that were not checked are named one by one.
const MAX_NOT_CHECKED_LINES: usize = 10;

/// Diagnostics of the files under a folder or glob.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderReport {
    /// How many files were asked about.
    pub files_asked: usize,
    /// Every checked file's diagnostics (relative path; clean files have an empty list).
    pub files: BTreeMap<String, Vec<Diagnostic>>,
    /// Files that were not checked, with why.
    pub not_checked: BTreeMap<String, String>,
}

impl FolderReport {
    /// The diagnostics at the severities of `caps`, files left without any dropped.
    pub fn kept(&self, caps: &Caps) -> BTreeMap<String, Vec<Diagnostic>> {
        self.files
            .iter()
            .map(|(file, diagnostics)| {
                let kept: Vec<Diagnostic> = diagnostics
                    .iter()
                    .filter(|d| caps.include_severities.contains(&d.severity))
                    .cloned()
                    .collect();
                (file.clone(), kept)
            })
            .filter(|(_, kept)| !kept.is_empty())
            .collect()
    }
}

/// The report as text: a first line `N files checked: M with diagnostics` (`, K not checked`),
/// then each file's block (see [`crate::render::render_file_block`]) in path order within the caps (per file, and
/// `max_total_lines` in all; at most `max_other_files` files once more than that have some,
/// doubled since every file here is asked about), `... and N more files with diagnostics` when
/// cut, then one line per file that was not checked (at most ten, then a count).
pub fn render_folder(report: &FolderReport, caps: &Caps) -> String {
    let kept = report.kept(caps);
    let checked = report.files.len();
    let mut out = format!(
        "{checked} of {} files checked: {} with diagnostics",
        report.files_asked,
        kept.len()
    );
    if !report.not_checked.is_empty() {
        out.push_str(&format!(", {} not checked", report.not_checked.len()));
    }
    out.push('\n');
    let max_files = caps.max_other_files.saturating_mul(2).max(1);
    let mut budget = caps.max_total_lines;
    let mut shown = 0;
    for (file, diagnostics) in &kept {
        if shown >= max_files || budget == 0 {
            break;
        }
        let take = diagnostics
            .len()
            .min(caps.max_diagnostics_per_file)
            .min(budget);
        budget -= take;
        shown += 1;
        out.push_str(&render_file_block(file, diagnostics, take));
        out.push('\n');
    }
    if kept.len() > shown {
        out.push_str(&format!(
            "... and {} more files with diagnostics\n",
            kept.len() - shown
        ));
    }
    for (file, reason) in report.not_checked.iter().take(MAX_NOT_CHECKED_LINES) {
        out.push_str(&not_checked_note(file, reason));
        out.push('\n');
    }
    if report.not_checked.len() > MAX_NOT_CHECKED_LINES {
        out.push_str(&format!(
            "... and {} more files not checked\n",
            report.not_checked.len() - MAX_NOT_CHECKED_LINES
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::diagnostic::Severity;

    fn errors(n: u32) -> Vec<Diagnostic> {
        (1..=n)
            .map(|line| Diagnostic::at(line, 1, Severity::Error, "bad"))
            .collect()
    }

    fn report(files: &[(&str, Vec<Diagnostic>)]) -> FolderReport {
        FolderReport {
            files_asked: files.len(),
            files: files
                .iter()
                .map(|(f, d)| (f.to_string(), d.clone()))
                .collect(),
            not_checked: BTreeMap::new(),
        }
    }

    #[test]
    fn files_are_grouped_in_path_order_and_clean_ones_only_counted() {
        let mut warning = errors(1);
        warning[0].severity = Severity::Warning;
        let text = render_folder(
            &report(&[
                ("b.py", errors(1)),
                ("a.py", errors(2)),
                ("c.py", vec![]),
                ("d.py", warning),
            ]),
            &Caps::default(),
        );
        assert_eq!(
            text,
            "4 of 4 files checked: 2 with diagnostics\n\
             a.py:\n1:1 bad\n2:1 bad\n\
             b.py:\n1:1 bad\n"
        );
    }

    #[test]
    fn the_caps_bound_each_file_and_the_total_and_say_what_was_left_out() {
        let caps = Caps {
            max_diagnostics_per_file: 2,
            max_total_lines: 3,
            ..Caps::default()
        };
        let text = render_folder(
            &report(&[
                ("a.py", errors(5)),
                ("b.py", errors(5)),
                ("c.py", errors(1)),
            ]),
            &caps,
        );
        assert!(
            text.contains("a.py:\n1:1 bad\n2:1 bad\n... and 3 more\n"),
            "{text}"
        );
        assert!(text.contains("b.py:\n1:1 bad\n... and 4 more\n"), "{text}");
        assert!(
            text.ends_with("... and 1 more files with diagnostics\n"),
            "{text}"
        );
    }

    #[test]
    fn files_not_checked_are_said_with_why() {
        let mut folder = report(&[("a.py", vec![])]);
        folder.files_asked = 2;
        folder
            .not_checked
            .insert("b.py".into(), "pyright timed out".into());
        let text = render_folder(&folder, &Caps::default());
        assert_eq!(
            text,
            "1 of 2 files checked: 0 with diagnostics, 1 not checked\n\
             LSP did not check b.py, so its errors are unknown: pyright timed out\n"
        );
    }
}

/// Whether `pattern` is a glob (has `*`, `?`, `[` or `{`) rather than a folder.
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// The paths (relative, `/`-separated) that a glob matches: `*` stays within one folder,
/// `**` crosses folders, braces list alternatives; a bad glob is an error that says why.
pub fn select_by_glob(pattern: &str, paths: &[String]) -> Result<Vec<String>, String> {
    let matcher = globset::GlobBuilder::new(pattern.trim_start_matches("./"))
        .literal_separator(true)
        .build()
        .map_err(|err| format!("`{pattern}` is not a glob: {err}"))?
        .compile_matcher();
    Ok(paths
        .iter()
        .filter(|path| matcher.is_match(path.as_str()))
        .cloned()
        .collect())
}

#[cfg(test)]
mod glob_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_glob_selects_within_or_across_folders() {
        let paths: Vec<String> = ["a.py", "src/b.py", "src/deep/c.py", "src/d.ts"]
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(select_by_glob("*.py", &paths).unwrap(), vec!["a.py"]);
        assert_eq!(
            select_by_glob("src/**/*.py", &paths).unwrap(),
            vec!["src/b.py", "src/deep/c.py"]
        );
        assert_eq!(
            select_by_glob("./src/*.{py,ts}", &paths).unwrap(),
            vec!["src/b.py", "src/d.ts"]
        );
        assert!(select_by_glob("src/[", &paths)
            .unwrap_err()
            .contains("is not a glob"));
        assert!(is_glob("**/*.py") && !is_glob("src/lib"));
    }
}
