//! Claude Code's `PostToolUse` command hook (code.claude.com/docs/en/hooks).
//!
//! Input on stdin: `session_id`, `transcript_path`, `cwd`, `hook_event_name` ("PostToolUse"),
//! `tool_name`, `tool_input` (for `Write`: `file_path`, `content`; for `Edit`: `file_path`,
//! `old_string`, `new_string`; for `MultiEdit`: `file_path`, `edits`), `tool_response`. The hook
//! runs only after the tool succeeded.
//!
//! Output on stdout with exit code 0, parsed as JSON: `"decision": "block"` with `"reason"`
//! prompts Claude with the reason (the edit has happened; it is not undone);
//! `hookSpecificOutput.additionalContext` adds context for Claude to consider. Nothing on
//! stdout is a plain success.

use super::{context_line, edit_event, json_line, Finding, HookRequest, MalformedInput};
use squiggle_protocol::Scope;

/// The event squiggle answers.
pub const EVENT: &str = "PostToolUse";

/// The tools that change one file, named by `tool_input.file_path`, and their scope.
/// (`NotebookEdit` is left out: no language server squiggle knows reads notebooks.)
pub const EDIT_TOOLS: [(&str, Scope); 3] = [
    ("Write", Scope::Write),
    ("Edit", Scope::Edit),
    ("MultiEdit", Scope::Edit),
];

/// What a `PostToolUse` input asks to check; `Ok(None)` for another tool or event.
pub fn parse(input: &[u8]) -> Result<Option<HookRequest>, MalformedInput> {
    let Some((event, scope)) = edit_event(input, EVENT, &EDIT_TOOLS)? else {
        return Ok(None);
    };
    event.request("file_path", scope).map(Some)
}

/// `{"decision": "block", "reason": ...}` for errors, `additionalContext` for a note, nothing
/// when clean.
pub fn render(finding: &Finding) -> String {
    match finding {
        Finding::Clean => String::new(),
        Finding::Errors(text) => json_line(&Block {
            decision: "block",
            reason: text,
        }),
        Finding::Note(text) => context_line(EVENT, text),
    }
}

/// `{"decision": "block", "reason": ...}`.
#[derive(Debug, serde::Serialize)]
struct Block<'a> {
    decision: &'a str,
    reason: &'a str,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hosts::Prior;
    use std::path::PathBuf;

    fn input(tool: &str, tool_input: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "session_id": "abc123",
            "transcript_path": "/home/me/.claude/projects/x/abc123.jsonl",
            "cwd": "/ws",
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_response": {"filePath": "/ws/a.py", "originalFile": "x = 1\n"}
        }))
        .unwrap_or_default()
    }

    #[test]
    fn write_edit_and_multi_edit_name_their_file_with_their_scope() {
        let cases = [
            (
                "Write",
                serde_json::json!({"file_path": "/ws/a.py", "content": "x"}),
                Scope::Write,
            ),
            (
                "Edit",
                serde_json::json!({"file_path": "/ws/a.py", "old_string": "x", "new_string": "y"}),
                Scope::Edit,
            ),
            (
                "MultiEdit",
                serde_json::json!({"file_path": "/ws/a.py", "edits": [{"old_string": "x", "new_string": "y"}]}),
                Scope::Edit,
            ),
        ];
        for (tool, tool_input, scope) in cases {
            assert_eq!(
                parse(&input(tool, tool_input)),
                Ok(Some(HookRequest {
                    cwd: PathBuf::from("/ws"),
                    file: PathBuf::from("/ws/a.py"),
                    scope,
                    tool: tool.into(),
                    prior: Some(Prior::Text("x = 1\n".into())),
                })),
                "{tool}"
            );
        }
    }

    #[test]
    fn without_an_original_file_an_edit_is_undone_on_the_text_after_it() {
        let edit = serde_json::json!({
            "cwd": "/ws", "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": "a.py", "old_string": "x", "new_string": "yy", "replace_all": true},
        });
        let prior = parse(edit.to_string().as_bytes())
            .unwrap()
            .unwrap()
            .prior
            .unwrap();
        assert_eq!(prior.text_before("yy = yy\n").as_deref(), Some("x = x\n"));
        let once = Prior::Replaced {
            old: "a".into(),
            new: "b".into(),
            all: false,
        };
        assert_eq!(once.text_before("b c").as_deref(), Some("a c"));
        // Found twice (or not at all): which one was the edit's cannot be told.
        assert_eq!(once.text_before("b b"), None);
        assert_eq!(once.text_before("c"), None);
    }

    #[test]
    fn other_tools_and_notebooks_are_nothing_to_check() {
        let bash = input("Bash", serde_json::json!({"command": "ls"}));
        let notebook = input(
            "NotebookEdit",
            serde_json::json!({"notebook_path": "/ws/n.ipynb", "new_source": "x"}),
        );
        assert_eq!(parse(&bash), Ok(None));
        assert_eq!(parse(&notebook), Ok(None));
    }

    #[test]
    fn another_event_is_nothing_to_check_even_for_an_edit_tool() {
        let pre = serde_json::json!({
            "cwd": "/ws", "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": "/ws/a.py"}
        });
        assert_eq!(parse(pre.to_string().as_bytes()), Ok(None));
    }

    #[test]
    fn an_edit_tool_without_a_file_path_is_malformed() {
        let result = parse(&input("Edit", serde_json::json!({"old_string": "x"})));
        assert_eq!(
            result,
            Err(MalformedInput(
                "the input's `tool_input` for Edit has no `file_path`".into()
            ))
        );
    }

    #[test]
    fn errors_block_with_the_feedback_as_reason() {
        let text = "LSP errors detected in this file, please fix:\na.py:\n1:5 \"x\" is not defined";
        assert_eq!(
            render(&Finding::Errors(text.into())),
            "{\"decision\":\"block\",\"reason\":\"LSP errors detected in this file, please fix:\\na.py:\\n1:5 \\\"x\\\" is not defined\"}\n"
        );
    }

    #[test]
    fn a_note_is_additional_context_not_a_block() {
        assert_eq!(
            render(&Finding::Note("LSP did not check a.py, so its errors are unknown: why".into())),
            "{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"LSP did not check a.py, so its errors are unknown: why\"}}\n"
        );
    }

    #[test]
    fn clean_says_nothing() {
        assert_eq!(render(&Finding::Clean), "");
    }
}
