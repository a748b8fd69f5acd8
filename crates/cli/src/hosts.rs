//! The agent hosts squiggle works with, Claude Code and Gemini CLI: everything that knows their
//! formats, in one place. This module holds what both hosts' edit hooks (Claude Code's
//! PostToolUse, Gemini CLI's AfterTool) share: what a hook's input on stdin asks squiggle to
//! check, and the answer the host reads on stdout.
//!
//! A hook never breaks its host: input that does not name a file an edit tool changed is
//! nothing to check, and a clean check answers nothing at all.
//!
//! - `claude_code`, `gemini_cli`: each host's hook input and answer.
//! - `hook`: `squiggle hook claude-code|gemini-cli`, run by the hosts after each edit.
//! - `init`: `squiggle init claude-code|gemini-cli`, which writes the hook and the MCP server into
//!   the host's settings.
//! - `settings`: what `init` merges into a host's settings files.
//! - `ordered_json`: JSON that keeps its keys' order, for editing files the hosts own.

pub mod claude_code;
pub mod gemini_cli;
pub mod hook;
pub mod init;
mod ordered_json;
mod settings;

use std::path::{Path, PathBuf};

use serde_json::Value;
use squiggle_protocol::Scope;

/// An agent host whose edit hooks squiggle answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code: a `PostToolUse` command hook.
    ClaudeCode,
    /// Gemini CLI: an `AfterTool` command hook.
    GeminiCli,
}

impl Host {
    /// The name the command line uses for the host (`squiggle hook claude-code`).
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::GeminiCli => "gemini-cli",
        }
    }

    /// The host's own name, for people (`Claude Code`).
    pub fn title(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::GeminiCli => "Gemini CLI",
        }
    }

    /// What a hook input (the bytes on stdin) asks to check; `Ok(None)` when it names no file
    /// an edit tool changed (another tool, another event, a failed edit).
    pub fn parse(self, input: &[u8]) -> Result<Option<HookRequest>, MalformedInput> {
        match self {
            Host::ClaudeCode => claude_code::parse(input),
            Host::GeminiCli => gemini_cli::parse(input),
        }
    }

    /// The bytes the hook writes to stdout for a finding; empty when there is nothing to say.
    pub fn render(self, finding: &Finding) -> String {
        match self {
            Host::ClaudeCode => claude_code::render(finding),
            Host::GeminiCli => gemini_cli::render(finding),
        }
    }
}

impl Host {
    /// [`Host::render`], with `to_user` (when given) shown to the person, not the model: both
    /// hosts show a hook answer's `systemMessage` to the user.
    pub fn render_for_user(self, finding: &Finding, to_user: Option<&str>) -> String {
        let answer = self.render(finding);
        let Some(message) = to_user else {
            return answer;
        };
        let mut fields = match serde_json::from_str(answer.trim()) {
            Ok(Value::Object(fields)) => fields,
            _ => serde_json::Map::new(),
        };
        fields.insert("systemMessage".into(), Value::String(message.into()));
        json_line(&fields)
    }
}

/// One edit a hook was told about: the changed file and which tool's feedback fits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRequest {
    /// The host's working folder (from the input's `cwd`).
    pub cwd: PathBuf,
    /// The changed file, made absolute against `cwd`.
    pub file: PathBuf,
    /// `Edit` for a tool that changed part of the file, `Write` for one that wrote it whole.
    pub scope: Scope,
    /// The tool's name, as the host gave it.
    pub tool: String,
    /// What the host says of the file's text before the tool ran, if anything.
    pub prior: Option<Prior>,
}

/// The edited file's text before the edit, as a host tells it: whole (Claude Code's
/// `tool_response.originalFile`) or as the replacement the tool made (`old_string` and
/// `new_string`), undone on the text after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prior {
    /// The whole text.
    Text(String),
    /// `old` was replaced by `new` (every occurrence when `all`).
    Replaced {
        /// The text replaced.
        old: String,
        /// The text put in its place.
        new: String,
        /// Whether every occurrence was replaced.
        all: bool,
    },
}

impl Prior {
    /// The text before the edit, given the text after it; `None` when a replacement cannot be
    /// undone for sure (its new text is empty, or found more or less often than once).
    pub fn text_before(&self, after: &str) -> Option<String> {
        match self {
            Prior::Text(text) => Some(text.clone()),
            Prior::Replaced { new, .. } if new.is_empty() => None,
            Prior::Replaced {
                old,
                new,
                all: true,
            } => Some(after.replace(new.as_str(), old)),
            Prior::Replaced {
                old,
                new,
                all: false,
            } => (after.matches(new.as_str()).count() == 1)
                .then(|| after.replacen(new.as_str(), old, 1)),
        }
    }
}

/// Why a hook input could not be read (it is then ignored: the host goes on).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MalformedInput(pub String);

/// What a check of the edited file came to, as a hook tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Checked, nothing to report: the hook says nothing.
    Clean,
    /// Diagnostics were found: the model must see them (the feedback text).
    Errors(String),
    /// Nothing was found, but something was not checked: a plain note for the model.
    Note(String),
}

impl Finding {
    /// The finding for a feedback text (what an edit tool would append) and whether
    /// diagnostics were found; blank text is [`Finding::Clean`].
    pub fn of(text: &str, diagnostics_found: bool) -> Self {
        let text = text.trim();
        if text.is_empty() {
            Finding::Clean
        } else if diagnostics_found {
            Finding::Errors(text.to_owned())
        } else {
            Finding::Note(text.to_owned())
        }
    }
}

/// The common part of both hosts' input: the event, the tool, its arguments and the folder.
#[derive(Debug)]
struct ToolEvent {
    event: Option<String>,
    tool: String,
    input: Value,
    response: Value,
    cwd: PathBuf,
}

/// Reads the fields both hosts send (`hook_event_name`, `tool_name`, `tool_input`,
/// `tool_response`, `cwd`).
fn tool_event(input: &[u8]) -> Result<ToolEvent, MalformedInput> {
    let value: Value = serde_json::from_slice(input)
        .map_err(|err| MalformedInput(format!("the input is not JSON: {err}")))?;
    let Value::Object(mut fields) = value else {
        return Err(MalformedInput("the input is not a JSON object".into()));
    };
    let text = |fields: &serde_json::Map<String, Value>, key: &str| {
        fields.get(key).and_then(Value::as_str).map(str::to_owned)
    };
    let cwd = text(&fields, "cwd")
        .filter(|cwd| Path::new(cwd).is_absolute())
        .ok_or_else(|| MalformedInput("the input has no absolute `cwd`".into()))?;
    let tool = text(&fields, "tool_name")
        .ok_or_else(|| MalformedInput("the input has no `tool_name`".into()))?;
    Ok(ToolEvent {
        event: text(&fields, "hook_event_name"),
        tool,
        input: fields.remove("tool_input").unwrap_or(Value::Null),
        response: fields.remove("tool_response").unwrap_or(Value::Null),
        cwd: PathBuf::from(cwd),
    })
}

/// The event in `input` and the scope of its tool, when it is the host's `event` (or names no
/// event) and its tool is one of `tools` (name, scope); `Ok(None)` otherwise.
fn edit_event(
    input: &[u8],
    event: &str,
    tools: &[(&str, Scope)],
) -> Result<Option<(ToolEvent, Scope)>, MalformedInput> {
    let found = tool_event(input)?;
    if found.event.as_deref().is_some_and(|name| name != event) {
        return Ok(None);
    }
    let scope = tools
        .iter()
        .find_map(|(name, scope)| (*name == found.tool).then_some(*scope));
    Ok(scope.map(|scope| (found, scope)))
}

impl ToolEvent {
    /// The request for this event's `tool_input.<key>` path, with `scope`.
    fn request(self, key: &str, scope: Scope) -> Result<HookRequest, MalformedInput> {
        let path = self
            .input
            .get(key)
            .and_then(Value::as_str)
            .filter(|path| !path.is_empty())
            .ok_or_else(|| {
                MalformedInput(format!(
                    "the input's `tool_input` for {} has no `{key}`",
                    self.tool
                ))
            })?;
        let prior = self.prior();
        Ok(HookRequest {
            file: self.cwd.join(path),
            cwd: self.cwd,
            scope,
            tool: self.tool,
            prior,
        })
    }

    /// The file's text before the tool ran, from `tool_response.originalFile`, else from
    /// `tool_input`'s `old_string` and `new_string` (with `replace_all`, or an
    /// `expected_replacements` above 1, for every occurrence).
    fn prior(&self) -> Option<Prior> {
        if let Some(text) = self.response.get("originalFile").and_then(Value::as_str) {
            return Some(Prior::Text(text.to_owned()));
        }
        let text = |key: &str| {
            self.input
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let all = self.input.get("replace_all").and_then(Value::as_bool) == Some(true)
            || (self
                .input
                .get("expected_replacements")
                .and_then(Value::as_u64))
            .is_some_and(|count| count > 1);
        Some(Prior::Replaced {
            old: text("old_string")?,
            new: text("new_string")?,
            all,
        })
    }
}

/// `{"hookEventName": ..., "additionalContext": ...}`, in that order.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct AdditionalContext<'a> {
    hook_event_name: &'a str,
    additional_context: &'a str,
}

/// `{"hookSpecificOutput": {...}}`: context the host appends for the model.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ContextOutput<'a> {
    hook_specific_output: AdditionalContext<'a>,
}

/// One JSON line with `additionalContext` for `event`.
fn context_line(event: &str, text: &str) -> String {
    json_line(&ContextOutput {
        hook_specific_output: AdditionalContext {
            hook_event_name: event,
            additional_context: text,
        },
    })
}

/// A value as one line of JSON, newline-terminated.
fn json_line(value: &impl serde::Serialize) -> String {
    // Serialising these plain structs of strings cannot fail.
    let mut line = serde_json::to_string(value).unwrap_or_default();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_feedback_is_clean_whatever_the_flag() {
        assert_eq!(Finding::of("", false), Finding::Clean);
        assert_eq!(Finding::of("\n", true), Finding::Clean);
    }

    #[test]
    fn feedback_is_trimmed_and_split_on_whether_diagnostics_were_found() {
        assert_eq!(
            Finding::of("\nLSP errors detected in this file, please fix:\nx", true),
            Finding::Errors("LSP errors detected in this file, please fix:\nx".into())
        );
        assert_eq!(
            Finding::of(
                "\nLSP did not check a.py, so its errors are unknown: why",
                false
            ),
            Finding::Note("LSP did not check a.py, so its errors are unknown: why".into())
        );
    }

    #[test]
    fn input_without_an_absolute_cwd_or_a_tool_is_malformed() {
        let cases: [&[u8]; 5] = [
            b"not json",
            b"[1, 2]",
            br#"{"tool_name": "Edit"}"#,
            br#"{"cwd": "relative/dir", "tool_name": "Edit"}"#,
            br#"{"cwd": "/ws"}"#,
        ];
        for input in cases {
            assert!(
                tool_event(input).is_err(),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn a_relative_file_is_taken_against_cwd_and_an_absolute_one_kept() {
        let event = |path: &str| ToolEvent {
            event: None,
            tool: "t".into(),
            input: serde_json::json!({ "file_path": path }),
            response: Value::Null,
            cwd: PathBuf::from("/ws/sub"),
        };
        let relative = event("a.py").request("file_path", Scope::Edit);
        let absolute = event("/ws/b.py").request("file_path", Scope::Edit);
        assert_eq!(relative.map(|r| r.file), Ok(PathBuf::from("/ws/sub/a.py")));
        assert_eq!(absolute.map(|r| r.file), Ok(PathBuf::from("/ws/b.py")));
    }

    #[test]
    fn host_names_are_the_command_line_names() {
        assert_eq!(Host::ClaudeCode.name(), "claude-code");
        assert_eq!(Host::GeminiCli.name(), "gemini-cli");
    }
}
