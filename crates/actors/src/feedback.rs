//! What an agent's edit tool appends after an edit, and the new errors an edit introduced.

use std::collections::BTreeMap;

use squiggle_protocol::{Diagnostic, NewMarks, Unsearched};

use crate::check::CheckResult;

/// The feedback for one edit: the text to append and the diagnostics behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feedback {
    /// The text to append to the tool result; empty only when the file was checked and there
    /// is nothing to report (a file that was not checked gets a line saying so and why).
    pub text: String,
    /// The check of the edited file: its diagnostics, the servers, and why it was skipped if it was.
    pub check: CheckResult,
    /// Other files with diagnostics when the feedback was made (write scope only).
    pub others: BTreeMap<String, Vec<Diagnostic>>,
    /// Which diagnostics of the edited file and of `others` are new since each file's
    /// baseline (files without a baseline have no entry).
    pub new: NewMarks,
    /// The files that import the edited one and were not checked for errors the edit caused
    /// there (the text says so in a line of its own).
    pub unsearched: Unsearched,
    /// What earlier edits caused in other files, found by the searches after their answers and
    /// told with this feedback (its text says so after the edit's own).
    pub earlier: Vec<Earlier>,
    /// The searches after earlier answers that did not finish, told with this feedback: the
    /// edited file and the importers they left unchecked (its text says so in a line each).
    pub unfinished: Vec<(String, Unsearched)>,
}

/// The errors an earlier edit caused in other files, found after its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Earlier {
    /// The file that edit changed (relative path).
    pub edited: String,
    /// The new errors it caused, per other file (relative path).
    pub caused: BTreeMap<String, Vec<Diagnostic>>,
}

/// The errors that are new since the previous call for each file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewErrors {
    /// The rendered note and lines; empty when nothing is new.
    pub text: String,
    /// The new errors per file (relative path).
    pub files: BTreeMap<String, Vec<Diagnostic>>,
}
