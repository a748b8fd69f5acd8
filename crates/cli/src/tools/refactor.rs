//! The refactoring tools `lsp_rename` and `lsp_code_actions`: previews as compact diffs, applied
//! only on request and only when no previewed file changed since (the preview's content hashes
//! are remembered per question, or passed back as `expect`), then checked.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};
use squiggle_actors::{
    ActionPick, Answer, CheckResult, CodeActions, EditMode, EditOutcome, Severity,
};
use squiggle_protocol::navigation::render_diff;
use squiggle_protocol::render::render_text;
use squiggle_protocol::service::service_diagnostics;
use squiggle_protocol::{merge, Report};

use super::args::Hashes;
use super::catalog::{CodeActionsArgs, RenameArgs};
use super::error::Unclear;
use super::{output, position_json, Output, ToolError, Toolbox};

/// At most this many diff lines are shown.
const MAX_DIFF_LINES: usize = 80;
/// At most this many code actions are listed.
const MAX_ACTIONS: usize = 30;

/// What listings and previews said, by question: the action's title when listed, and the
/// touched files' hashes when previewed, so that an apply can tell whether anything changed.
#[derive(Debug, Default)]
pub struct Previews(HashMap<String, Seen>);

/// What was seen of one question: the listed title, the previewed hashes by file.
type Seen = (Option<String>, Option<BTreeMap<String, String>>);

impl Toolbox {
    /// Previews a rename, or applies it.
    pub(super) async fn rename(&self, args: RenameArgs) -> Result<Output, ToolError> {
        let target = args.target()?;
        let (file, new_name) = (&args.at.file, &args.new_name);
        let apply = args.at.apply.unwrap_or(false);
        let relative = self.squiggle.relative_path(file);
        let key = format!("rename {relative} {target:?} {new_name}");
        let mode = self.mode(&key, apply, args.at.expect.clone()).0;
        let answer = self.squiggle.rename(file, target, new_name, mode).await?;
        let subject = answer
            .subject
            .clone()
            .unwrap_or_else(|| "the symbol".into());
        let at = match answer.position {
            Some((line, column)) => format!("{relative}:{line}:{column}"),
            None => relative.clone(),
        };
        let head = if answer.items.applied {
            format!("renamed `{subject}` ({at}) to `{new_name}`")
        } else {
            format!("rename `{subject}` ({at}) to `{new_name}`: preview")
        };
        self.remember(&key, None, &answer.items);
        Ok(self.edited(
            &head,
            &answer,
            json!({"symbol": answer.subject, "position": position_json(answer.position)}),
        ))
    }

    /// Lists the code actions for a line, or previews or applies one.
    pub(super) async fn code_actions(&self, args: CodeActionsArgs) -> Result<Output, ToolError> {
        let target = args.target()?;
        let (file, end_line, action) = (&args.at.file, args.end_line, args.action);
        let apply = args.at.apply.unwrap_or(false);
        if apply && action.is_none() {
            return Err(Unclear::ApplyWithoutAction.into());
        }
        let relative = self.squiggle.relative_path(file);
        let base = format!("action {relative} {target:?} {end_line:?}");
        let pick = match action {
            None => None,
            Some(index) => {
                let key = format!("{base} {index}");
                let (mode, title) = self.mode(&key, apply, args.at.expect.clone());
                Some(ActionPick {
                    index: index as usize,
                    title,
                    mode,
                })
            }
        };
        let answer = self
            .squiggle
            .code_actions(file, target, end_line, pick)
            .await?;
        let lines = match (answer.position, end_line) {
            (Some((line, _)), Some(end)) if end > line => format!("{relative}:{line}-{end}"),
            (Some((line, _)), _) => format!("{relative}:{line}"),
            _ => relative.clone(),
        };
        let listed = listing(&answer.items, &lines);
        let actions: Vec<Value> = answer.items.actions.iter().take(MAX_ACTIONS)
            .map(|a| json!({"index": a.index, "title": a.title, "kind": a.kind, "preferred": a.preferred, "edits": a.edits, "command": a.command, "disabled": a.disabled, "server": a.server}))
            .collect();
        let extra = json!({"position": position_json(answer.position), "actions": actions});
        let Some((index, outcome)) = &answer.items.chosen else {
            // An apply with no preview must still find the action that was listed.
            let mut previews = lock(&self.previews);
            for action in &answer.items.actions {
                let key = format!("{base} {}", action.index);
                previews.0.insert(key, (Some(action.title.clone()), None));
            }
            drop(previews);
            let mut text = listed;
            if !answer.items.actions.is_empty() {
                text.push_str("preview one with `action: N`\n");
            }
            return Ok(output(text, &answer.notes, extra));
        };
        let title = answer
            .items
            .actions
            .get(index - 1)
            .map_or(String::new(), |a| a.title.clone());
        self.remember(&format!("{base} {index}"), Some(title.clone()), outcome);
        let head = if outcome.applied {
            format!("applied action {index} `{title}` ({lines})")
        } else {
            format!("action {index} `{title}` ({lines}): preview")
        };
        let chosen = Answer {
            items: outcome.clone(),
            position: answer.position,
            subject: None,
            notes: answer.notes.clone(),
        };
        Ok(self.edited(&head, &chosen, extra))
    }

    /// Preview, or apply against what the preview of the same question saw (or `expect`).
    fn mode(&self, key: &str, apply: bool, expect: Option<Hashes>) -> (EditMode, Option<String>) {
        if !apply {
            return (EditMode::Preview, None);
        }
        let given = expect.map(|Hashes(hashes)| hashes);
        let remembered = lock(&self.previews).0.get(key).cloned();
        let (title, hashes) = match (given, remembered) {
            (Some(hashes), _) => (None, Some(hashes)),
            (None, Some((title, hashes))) => (title, hashes),
            (None, None) => (None, None),
        };
        (EditMode::Apply { expect: hashes }, title)
    }

    /// Keeps a preview's hashes for the apply that follows; an apply forgets them.
    fn remember(&self, key: &str, title: Option<String>, outcome: &EditOutcome) {
        let mut previews = lock(&self.previews);
        if outcome.applied {
            previews.0.remove(key);
        } else {
            previews
                .0
                .insert(key.to_string(), (title, Some(outcome.hashes.clone())));
        }
    }

    /// The answer to a preview or an apply: the diff (or the changed files and their
    /// diagnostics after an apply), with the structured result.
    fn edited(&self, head: &str, answer: &Answer<EditOutcome>, mut extra: Value) -> Output {
        let outcome = &answer.items;
        let changed = outcome.plan.changed_files();
        let mut text = format!("{head}\n");
        let diff = render_diff(&outcome.plan, MAX_DIFF_LINES);
        if !outcome.plan.files.is_empty() || outcome.command.is_none() {
            text.push_str(&diff);
        }
        if let Some(command) = &outcome.command {
            if outcome.applied {
                let files = if outcome.command_files.is_empty() {
                    "no files".to_string()
                } else {
                    outcome.command_files.join(", ")
                };
                text.push_str(&format!("ran command `{command}`: it changed {files}\n"));
                for reason in &outcome.command_refused {
                    text.push_str(&format!(
                        "squiggle refused the edit the command sent, and wrote none of it: {reason}\n"
                    ));
                }
            } else {
                text.push_str(&format!("applying also runs the server command `{command}` (its changes cannot be previewed)\n"));
            }
        }
        if outcome.applied && !outcome.not_applied.is_empty() {
            text.push_str(&format!(
                "the preview also changed {}; the server's edit now leaves {} as {} \
                 (its answer changed since the preview)\n",
                outcome.not_applied.join(", "),
                if outcome.not_applied.len() == 1 {
                    "it"
                } else {
                    "them"
                },
                if outcome.not_applied.len() == 1 {
                    "it was"
                } else {
                    "they were"
                },
            ));
        }
        let mut diagnostics = Map::new();
        if outcome.applied {
            let (report_text, files) = self.checked(&outcome.checks);
            text.push_str(&report_text);
            diagnostics = files;
        } else if !changed.is_empty() || outcome.command.is_some() {
            text.push_str("apply with `apply: true`\n");
        }
        if let Value::Object(map) = &mut extra {
            map.insert("applied".into(), json!(outcome.applied));
            map.insert("files".into(), json!(changed));
            map.insert("hashes".into(), json!(outcome.hashes));
            map.insert("diff".into(), json!(diff));
            map.insert("command".into(), json!(outcome.command));
            map.insert("command_files".into(), json!(outcome.command_files));
            map.insert("command_refused".into(), json!(outcome.command_refused));
            map.insert("not_applied".into(), json!(outcome.not_applied));
            map.insert("diagnostics".into(), Value::Object(diagnostics));
            map.insert("notes".into(), json!(answer.notes));
        }
        output(text, &answer.notes, extra)
    }

    /// The diagnostics of the files checked after an apply, as text (with a line for a file
    /// not checked, and why) and as JSON by file.
    fn checked(&self, checks: &[CheckResult]) -> (String, Map<String, Value>) {
        let mut report = Report::default();
        for check in checks {
            let outcome = check.outcome();
            let kept = merge::filter_severities(check.diagnostics.clone(), &self.severities);
            if outcome.is_checked() || !kept.is_empty() {
                report.files.insert(check.file.clone(), kept);
            }
            report.outcomes.insert(check.file.clone(), outcome);
        }
        let files = report
            .files
            .iter()
            .map(|(file, list)| {
                (
                    file.clone(),
                    json!(service_diagnostics(list.clone(), &self.severities)),
                )
            })
            .collect();
        let text = match render_text(&report) {
            text if text.is_empty() => {
                let what = severity_words(&self.severities);
                format!("after the change: no {what} in the changed files\n")
            }
            text => format!("after the change:\n{text}"),
        };
        (text, files)
    }
}

/// Locks the previews, carrying on if a panicking thread poisoned them.
fn lock(previews: &std::sync::Mutex<Previews>) -> std::sync::MutexGuard<'_, Previews> {
    previews
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `errors`, `errors or warnings`, for the severities shown.
fn severity_words(severities: &[Severity]) -> String {
    let words: Vec<String> = severities
        .iter()
        .map(|s| format!("{}s", s.as_str()))
        .collect();
    if words.is_empty() {
        "diagnostics".to_string()
    } else {
        words.join(" or ")
    }
}

/// The numbered list of code actions.
fn listing(actions: &CodeActions, lines: &str) -> String {
    let diagnostics = match actions.diagnostics.len() {
        0 => String::new(),
        1 => ", 1 diagnostic".to_string(),
        n => format!(", {n} diagnostics"),
    };
    if actions.actions.is_empty() {
        return format!("code actions for {lines}{diagnostics}: none\n");
    }
    let mut out = format!(
        "code actions for {lines}{diagnostics}: {}\n",
        actions.actions.len()
    );
    for action in actions.actions.iter().take(MAX_ACTIONS) {
        let mut tags: Vec<&str> = action.kind.iter().map(String::as_str).collect();
        if action.preferred {
            tags.push("preferred");
        }
        let tags = if tags.is_empty() {
            String::new()
        } else {
            format!("[{}] ", tags.join(", "))
        };
        let does = match (action.edits, &action.command) {
            (0, None) => String::new(),
            (0, Some(command)) => format!("  (runs {command})"),
            (1, _) => "  (edits 1 file)".to_string(),
            (n, _) => format!("  (edits {n} files)"),
        };
        let disabled = action
            .disabled
            .as_ref()
            .map(|r| format!("  (disabled: {r})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}. {tags}{}{does}{disabled}\n",
            action.index, action.title
        ));
    }
    if actions.actions.len() > MAX_ACTIONS {
        out.push_str(&format!(
            "... and {} more\n",
            actions.actions.len() - MAX_ACTIONS
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use squiggle_actors::ActionInfo;

    #[test]
    fn the_listing_numbers_actions_with_kind_and_what_they_do() {
        let action =
            |index, title: &str, kind: Option<&str>, edits, command: Option<&str>| ActionInfo {
                index,
                title: title.to_string(),
                kind: kind.map(str::to_string),
                preferred: index == 1,
                edits,
                command: command.map(str::to_string),
                disabled: None,
                server: "typescript".to_string(),
            };
        let actions = CodeActions {
            actions: vec![
                action(1, "Add import", Some("quickfix"), 1, None),
                action(
                    2,
                    "Organize imports",
                    Some("source.organizeImports"),
                    0,
                    Some("organize"),
                ),
            ],
            diagnostics: Vec::new(),
            chosen: None,
        };
        assert_eq!(
            listing(&actions, "a.ts:3"),
            "code actions for a.ts:3: 2\n\
             1. [quickfix, preferred] Add import  (edits 1 file)\n\
             2. [source.organizeImports] Organize imports  (runs organize)\n"
        );
        assert_eq!(
            listing(&CodeActions::default(), "a.ts:3"),
            "code actions for a.ts:3: none\n"
        );
    }
}
