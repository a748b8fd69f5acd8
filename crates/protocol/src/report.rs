//! What a check produced: diagnostics per file and the servers involved.

use std::collections::BTreeMap;

use crate::diagnostic::Diagnostic;
use crate::outcome::Outcome;
pub use crate::server_report::{Basis, ServerReport};

/// What a check produced: diagnostics per file (relative path -> sorted list), each file's outcome, the servers involved, and which timed out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Diagnostics per file, keyed by the path relative to the workspace root: every checked
    /// file (an empty list when clean) and any file with diagnostics.
    pub files: BTreeMap<String, Vec<Diagnostic>>,
    /// Whether each named file was checked, keyed like `files`; a file absent here and present
    /// in `files` counts as checked.
    pub outcomes: BTreeMap<String, Outcome>,
    /// The servers involved in the check.
    pub servers: Vec<ServerReport>,
    /// The ids of the servers that did not answer in time.
    pub timed_out: Vec<String>,
}

impl Report {
    /// The number of diagnostics over all files.
    pub fn diagnostic_count(&self) -> usize {
        self.files.values().map(Vec::len).sum()
    }

    /// Every file the report speaks of, in path order.
    pub fn paths(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self
            .files
            .keys()
            .chain(self.outcomes.keys())
            .map(String::as_str)
            .collect();
        paths.sort_unstable();
        paths.dedup();
        paths
    }

    /// Why a file was not checked, if it was not.
    pub fn not_checked(&self, path: &str) -> Option<&str> {
        self.outcomes.get(path).and_then(Outcome::reason)
    }

    /// How many files were not checked.
    pub fn not_checked_count(&self) -> usize {
        self.outcomes.values().filter(|o| !o.is_checked()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    fn diag(file: &str) -> Diagnostic {
        Diagnostic {
            file: file.to_string(),
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 2,
            severity: Severity::Error,
            message: "x".to_string(),
            code: None,
            source: None,
            also: Vec::new(),
        }
    }

    #[test]
    fn empty_report_has_no_diagnostics() {
        assert_eq!(Report::default().diagnostic_count(), 0);
    }

    #[test]
    fn diagnostic_count_sums_all_files() {
        let mut report = Report::default();
        report
            .files
            .insert("a.py".to_string(), vec![diag("a.py"), diag("a.py")]);
        report.files.insert("b.py".to_string(), vec![diag("b.py")]);
        report.files.insert("c.py".to_string(), vec![]);
        assert_eq!(report.diagnostic_count(), 3);
    }

    #[test]
    fn paths_join_files_and_outcomes_and_count_the_unchecked() {
        let mut report = Report::default();
        report.files.insert("b.py".to_string(), vec![diag("b.py")]);
        report
            .outcomes
            .insert("b.py".to_string(), Outcome::Checked { missing: vec![] });
        report.outcomes.insert(
            "a.go".to_string(),
            Outcome::not_checked("gopls: not installed"),
        );
        assert_eq!(report.paths(), ["a.go", "b.py"]);
        assert_eq!(report.not_checked("a.go"), Some("gopls: not installed"));
        assert_eq!(report.not_checked("b.py"), None);
        assert_eq!(report.not_checked_count(), 1);
    }
}
