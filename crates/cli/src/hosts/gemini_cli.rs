//! Gemini CLI's `AfterTool` command hook (geminicli.com/docs/hooks/reference).
//!
//! Input on stdin: `session_id`, `transcript_path`, `cwd`, `hook_event_name` ("AfterTool"),
//! `timestamp`, `tool_name`, `tool_input` (for `write_file`: `file_path`, `content`; for
//! `replace`: `file_path`, `old_string`, `new_string`, ...), `tool_response` (`llmContent`,
//! `returnDisplay`, and `error` when the tool failed).
//!
//! Output on stdout with exit code 0, parsed as JSON: `hookSpecificOutput.additionalContext`
//! is appended to the tool result the model reads. (`"decision": "deny"` would replace the
//! tool result, so squiggle never uses it.) Nothing on stdout is a plain success; but when
//! stdout is empty, Gemini CLI reads stderr instead and shows it to the user, so a clean check
//! writes nothing to either.

use super::{context_line, edit_event, Finding, HookRequest, MalformedInput};
use squiggle_protocol::Scope;

/// The event squiggle answers.
pub const EVENT: &str = "AfterTool";

/// The tools that change one file, named by `tool_input.file_path`, and their scope.
pub const EDIT_TOOLS: [(&str, Scope); 2] = [("write_file", Scope::Write), ("replace", Scope::Edit)];

/// What an `AfterTool` input asks to check; `Ok(None)` for another tool or event, or a tool
/// that failed (it changed nothing).
pub fn parse(input: &[u8]) -> Result<Option<HookRequest>, MalformedInput> {
    let Some((event, scope)) = edit_event(input, EVENT, &EDIT_TOOLS)? else {
        return Ok(None);
    };
    if event
        .response
        .get("error")
        .is_some_and(|error| !error.is_null())
    {
        return Ok(None);
    }
    event.request("file_path", scope).map(Some)
}

/// `additionalContext` for errors and notes alike, nothing when clean.
pub fn render(finding: &Finding) -> String {
    match finding {
        Finding::Clean => String::new(),
        Finding::Errors(text) | Finding::Note(text) => context_line(EVENT, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::Prior;
    use std::path::PathBuf;

    fn input(tool: &str, tool_input: serde_json::Value, error: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "session_id": "s1",
            "transcript_path": "/home/me/.gemini/tmp/chats/s1.json",
            "cwd": "/ws",
            "hook_event_name": "AfterTool",
            "timestamp": "2026-11-23T13:00:00.000Z",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_response": {"llmContent": "ok", "returnDisplay": "ok", "error": error}
        }))
        .unwrap_or_default()
    }

    #[test]
    fn write_file_and_replace_name_their_file_with_their_scope() {
        let write = input(
            "write_file",
            serde_json::json!({"file_path": "src/a.ts", "content": "x"}),
            serde_json::Value::Null,
        );
        let replace = input(
            "replace",
            serde_json::json!({"file_path": "/ws/a.ts", "old_string": "x", "new_string": "y", "instruction": "fix"}),
            serde_json::Value::Null,
        );
        assert_eq!(
            parse(&write),
            Ok(Some(HookRequest {
                cwd: PathBuf::from("/ws"),
                file: PathBuf::from("/ws/src/a.ts"),
                scope: Scope::Write,
                tool: "write_file".into(),
                prior: None,
            }))
        );
        assert_eq!(
            parse(&replace).map(|r| r.map(|r| (r.file, r.scope, r.prior))),
            Ok(Some((
                PathBuf::from("/ws/a.ts"),
                Scope::Edit,
                Some(Prior::Replaced {
                    old: "x".into(),
                    new: "y".into(),
                    all: false
                })
            )))
        );
    }

    #[test]
    fn a_failed_edit_other_tools_and_other_events_are_nothing_to_check() {
        let failed = input(
            "replace",
            serde_json::json!({"file_path": "/ws/a.ts"}),
            serde_json::json!({"message": "0 occurrences found", "type": "edit_no_occurrence_found"}),
        );
        let shell = input(
            "run_shell_command",
            serde_json::json!({"command": "ls"}),
            serde_json::Value::Null,
        );
        let before = serde_json::json!({
            "cwd": "/ws", "hook_event_name": "BeforeTool", "tool_name": "write_file",
            "tool_input": {"file_path": "/ws/a.ts"}
        });
        assert_eq!(parse(&failed), Ok(None));
        assert_eq!(parse(&shell), Ok(None));
        assert_eq!(parse(before.to_string().as_bytes()), Ok(None));
    }

    #[test]
    fn errors_and_notes_are_additional_context() {
        let expected = |text: &str| {
            format!("{{\"hookSpecificOutput\":{{\"hookEventName\":\"AfterTool\",\"additionalContext\":{text}}}}}\n")
        };
        assert_eq!(
            render(&Finding::Errors(
                "LSP errors detected in this file, please fix:\nE".into()
            )),
            expected("\"LSP errors detected in this file, please fix:\\nE\"")
        );
        assert_eq!(
            render(&Finding::Note("LSP did not check a.ts".into())),
            expected("\"LSP did not check a.ts\"")
        );
        assert_eq!(render(&Finding::Clean), "");
    }
}
