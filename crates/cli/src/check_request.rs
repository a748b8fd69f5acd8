//! One check as asked for and its answer: the contract `squiggle check`, `squiggle hook` and the
//! workspace's daemon share, and the answering of it with a running squiggle. The daemon answers
//! with it; the commands send it to the daemon or answer it themselves.
//!
//! `check_request/wire_paths`: the files of a request on the daemon's wire, bytes and all.

mod wire_paths;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::ValueEnum;
use squiggle_actors::{CheckResult, Config, Feedback, Scope, Squiggle};
use squiggle_protocol::render::{display_path, github, json, llm, one_line, sarif, text};
use squiggle_protocol::{
    merge, not_checked_section, paths, render_earlier, render_feedback_marked, unfinished_section,
    unsearched_section, Caps, Diagnostic, NewOnly, Report, ServerReport, ServerState, Severity,
};

/// How `check` prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Text,
    Json,
    Llm,
    Delta,
    Sarif,
    Github,
}

/// Which tool's feedback `--scope` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeArg {
    Edit,
    Write,
    /// The search after an edit's answer (`squiggle hook claude-code --later`): the errors the
    /// edit caused in the importers its answer did not check. Not a `check` option.
    #[value(skip)]
    Later,
}

/// The exit codes, as `squiggle check --help` lists them.
pub const EXIT_CODES: &str = "Exit codes:
  0  every file was checked, and no diagnostics were found at the chosen severities
  1  diagnostics were found
  2  usage or configuration error
  3  no diagnostics were found, but some file was not checked";

/// Exit code: every named file was checked and nothing was found.
const EXIT_CLEAN: u8 = 0;
/// Exit code: diagnostics were found.
pub const EXIT_FOUND: u8 = 1;
/// Exit code: nothing was found, but some named file was not checked.
const EXIT_NOT_CHECKED: u8 = 3;

/// One check as asked for: the files (absolute, inside the root, without repeats) and how to
/// answer. It is what a check needs beyond the workspace, so it can be answered in this process
/// or by another that holds the same workspace warm.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CheckRequest {
    /// The files to check; with a scope, the first is the edited one. On the daemon's wire
    /// as bytes when a name is not UTF-8.
    #[serde(with = "wire_paths")]
    pub files: Vec<PathBuf>,
    /// How the answer is printed.
    pub format: Format,
    /// Which tool's feedback to print, if any.
    pub scope: Option<ScopeArg>,
    /// The severities to report; `None` keeps the configuration's.
    pub severity: Option<Vec<Severity>>,
    /// Whether some named folder held more files than were checked.
    pub left_out: bool,
    /// With a scope, the edited file's text before the edit, when the host told it (a hook):
    /// the baseline for the errors the edit caused in the files that import it.
    #[serde(default)]
    pub prior: Option<String>,
}

/// The answer to a [`CheckRequest`]: what goes to stdout and stderr, and the exit code.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CheckAnswer {
    /// The rendered result.
    pub stdout: String,
    /// Notes for the person at the terminal (summary, servers that did not answer).
    pub stderr: String,
    /// The exit code (see [`EXIT_CODES`]).
    pub code: u8,
}

/// Answers a check request with a running squiggle.
pub async fn answer(squiggle: &Squiggle, request: &CheckRequest) -> anyhow::Result<CheckAnswer> {
    let files = &request.files;
    let severities = request
        .severity
        .clone()
        .unwrap_or_else(|| squiggle.config().include_severities.clone());
    let max_per_file = squiggle.config().max_diagnostics_per_file;
    let (first, rest) = files
        .split_first()
        .context("no files of a known type to check")?;
    if request.scope == Some(ScopeArg::Later) {
        let found = squiggle.feedback_later(first).await;
        return Ok(CheckAnswer {
            code: if found.is_some() {
                EXIT_FOUND
            } else {
                EXIT_CLEAN
            },
            stdout: found.unwrap_or_default(),
            stderr: String::new(),
        });
    }
    if request.scope.is_none() {
        // A feedback does this itself; the named files are read from the disk anyway.
        let named: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        squiggle.sync_disk(&named).await;
    }
    // With a scope: whether the feedback holds errors to fix (that the edit introduced, or in
    // the edited file when its baseline is unknown, or that an earlier edit caused): the exit
    // code says errors were found only then, not for errors from before the edit.
    let mut new_found = None;
    // Checked together: each check's deadline grows with the number of files (a folder).
    let (mut output, results) = match request.scope {
        // With a scope, the first file is the edited one, checked after the others are known.
        Some(scope) => {
            // Shown among the edit's other files: their baselines stay for the feedback to
            // mark what is new in them.
            let mut results = squiggle.check_files_for_feedback(rest).await;
            let scope = match scope {
                ScopeArg::Edit | ScopeArg::Later => Scope::Edit,
                ScopeArg::Write => Scope::Write,
            };
            let prior = request.prior.clone();
            let feedback = squiggle.feedback(first, None, scope, prior).await;
            // Rendered here, with the severities asked for (one runtime, a daemon, answers
            // any), the errors from before the edit counted rather than listed.
            let (text, found) = feedback_text(&feedback, &severities, squiggle.config());
            new_found = Some(found);
            results.insert(0, feedback.check);
            (Some(text), results)
        }
        None => (None, squiggle.check_files(files).await),
    };
    let report = report_of(&results, &severities);
    if request.format == Format::Delta {
        // New errors, then a line for each file that was not checked (its errors are unknown).
        let mut delta = squiggle.new_errors(files).await.text;
        for path in report.paths() {
            if let Some(reason) = report.not_checked(path) {
                delta.push_str(&text::not_checked_line(path, reason));
            }
        }
        output = Some(delta);
    }
    let mut stderr = String::new();
    let stdout = match (output, request.format) {
        (Some(text), _) => text,
        (None, Format::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&json::render_json(&report))?
        ),
        (None, Format::Llm) => llm::render_llm(&report, max_per_file),
        (None, Format::Sarif) => {
            let root = squiggle.workspace_root().display().to_string();
            let root_uri = format!("{}/", paths::path_to_uri(&root).trim_end_matches('/'));
            let log = sarif::render_sarif(&report, &root_uri, env!("CARGO_PKG_VERSION"));
            format!("{}\n", serde_json::to_string_pretty(&log)?)
        }
        (None, Format::Github) => github::render_github(&report),
        (None, _) => {
            stderr.push_str(&format!("{}\n", text::summary(&report)));
            text::render_text(&report)
        }
    };
    stderr.push_str(&problems(&results, request.format));
    Ok(CheckAnswer {
        stdout,
        stderr,
        code: match new_found {
            Some(true) => EXIT_FOUND,
            Some(false) if report.not_checked_count() > 0 => EXIT_NOT_CHECKED,
            Some(false) => EXIT_CLEAN,
            None => exit_code(&report, request.left_out),
        },
    })
}

/// The text of a tool's feedback at `severities` (in place of the configured ones), the errors
/// from before the edit counted in one line rather than listed (see [`NewOnly`]); and whether
/// it holds errors to fix: new ones, the edited file's when its baseline is unknown, or those
/// an earlier edit caused in other files, told with this feedback.
fn feedback_text(feedback: &Feedback, severities: &[Severity], config: &Config) -> (String, bool) {
    let check = &feedback.check;
    let mut text = match check.outcome().reason() {
        Some(reason) => not_checked_section(&check.file, reason),
        None => String::new(),
    };
    if check.skipped.is_some() {
        return (text, false);
    }
    let caps = Caps {
        include_severities: severities.to_vec(),
        ..config.caps()
    };
    let split = NewOnly::of(
        &check.file,
        &check.diagnostics,
        &feedback.others,
        &feedback.new,
        &caps,
    );
    text.push_str(&render_feedback_marked(
        &check.file,
        &split.diagnostics,
        &split.others,
        &caps,
        &split.new,
    ));
    text.push_str(&split.before_section());
    text.push_str(&unsearched_section(&check.file, &feedback.unsearched));
    let shown = |diagnostic: &Diagnostic| severities.contains(&diagnostic.severity);
    let mut earlier_found = false;
    for earlier in &feedback.earlier {
        text.push_str(&render_earlier(&earlier.edited, &earlier.caused, &caps));
        earlier_found |= (earlier.caused.values()).any(|list| list.iter().any(shown));
    }
    for (edited, left) in &feedback.unfinished {
        text.push_str(&unfinished_section(edited, left));
    }
    (text, split.any(&caps) || earlier_found)
}

/// 1 when diagnostics were found, else 3 when some file was not checked (or left out of a
/// folder over the bound), else 0.
fn exit_code(report: &Report, left_out: bool) -> u8 {
    if report.diagnostic_count() > 0 {
        EXIT_FOUND
    } else if left_out || report.not_checked_count() > 0 {
        EXIT_NOT_CHECKED
    } else {
        EXIT_CLEAN
    }
}

/// The report of all checks: each file's outcome; the diagnostics (filtered) of every checked
/// file and of any file with some; the servers involved; who timed out.
fn report_of(results: &[CheckResult], severities: &[Severity]) -> Report {
    let mut report = Report::default();
    let mut servers: BTreeMap<(String, String), ServerReport> = BTreeMap::new();
    for result in results {
        let outcome = result.outcome();
        let kept = merge::filter_severities(result.diagnostics.clone(), severities);
        if outcome.is_checked() || !kept.is_empty() {
            report
                .files
                .entry(result.file.clone())
                .or_insert_with(Vec::new)
                .extend(kept);
        }
        report.outcomes.insert(result.file.clone(), outcome);
        for server in &result.servers {
            let key = (server.id.clone(), server.root.clone());
            // Over several files, a server's answers rest on the weakest basis among them.
            let guessed = servers
                .get(&key)
                .and_then(|s| s.basis)
                .filter(|b| b.is_guess());
            let mut server = server.clone();
            if server.basis.is_some() && guessed.is_some() {
                server.basis = guessed;
            }
            servers.insert(key, server);
        }
        report.timed_out.extend(result.timed_out.iter().cloned());
    }
    report.timed_out.sort();
    report.timed_out.dedup();
    report.servers = servers.into_values().collect();
    report
}

/// What kept files or servers from being checked, for the person at the terminal (in text
/// format, stdout already says which files were not checked), one line each.
fn problems(results: &[CheckResult], format: Format) -> String {
    let mut lines = String::new();
    let mut noted = std::collections::BTreeSet::new();
    for result in results {
        if let Some(skip) = &result.skipped {
            if format != Format::Text {
                let reason = one_line(&skip.to_string());
                lines.push_str(&format!(
                    "squiggle: not checked {}: {reason}\n",
                    display_path(&result.file)
                ));
            }
        }
        for server in &result.servers {
            let Some(reason) = &server.reason else {
                continue;
            };
            if matches!(server.status, ServerState::Active | ServerState::Starting)
                && !result.timed_out.contains(&server.id)
            {
                continue;
            }
            if noted.insert((server.id.clone(), reason.clone())) {
                let reason = one_line(reason);
                if result.timed_out.contains(&server.id) {
                    lines.push_str(&format!("squiggle: {} timed out: {reason}\n", server.id));
                } else {
                    lines.push_str(&format!(
                        "squiggle: {} {}: {reason}\n",
                        server.id, server.status
                    ));
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use squiggle_protocol::Unsearched;
    use std::collections::BTreeMap;

    /// A checked, clean edit of `a.ts` by one server that answered.
    fn clean_edit() -> Feedback {
        let server = ServerReport {
            id: "ts".to_string(),
            root: ".".to_string(),
            status: ServerState::Active,
            reason: None,
            basis: None,
            required: true,
        };
        Feedback {
            text: String::new(),
            check: CheckResult {
                file: "a.ts".to_string(),
                diagnostics: Vec::new(),
                servers: vec![server],
                timed_out: Vec::new(),
                skipped: None,
                text: Some("x".into()),
            },
            others: BTreeMap::new(),
            new: Default::default(),
            unsearched: Unsearched::default(),
            earlier: Vec::new(),
            unfinished: Vec::new(),
        }
    }

    #[test]
    fn the_hooks_text_says_which_search_after_an_earlier_answer_did_not_finish() {
        let mut feedback = clean_edit();
        let left = Unsearched {
            files: 2,
            ..Unsearched::default()
        };
        feedback.unfinished.push(("src/types.ts".to_string(), left));
        let (text, found) = feedback_text(&feedback, &[Severity::Error], &Config::default());
        assert_eq!(
            text,
            "\nLSP did not finish checking 2 other files that import src/types.ts after an earlier edit of it, so errors that edit caused there are unknown."
        );
        assert!(!found, "nothing to fix: a line, not a block");
        let (clean, _) = feedback_text(&clean_edit(), &[Severity::Error], &Config::default());
        assert_eq!(clean, "");
    }
}
