//! What `squiggle init HOST` writes into an agent host's project settings files (the edit hook,
//! for Claude Code the search after its answer beside it, and the `squiggle mcp` server),
//! merged into what is there: nothing is removed or reordered, an entry squiggle already has
//! is not added twice, and a file that is not valid JSON, or whose keys do not have the shape
//! the host documents, is refused with why.
//!
//! Claude Code (code.claude.com/docs/en/hooks, /en/mcp): hooks in `.claude/settings.json` under
//! `hooks.PostToolUse`, as `[{"matcher": "...", "hooks": [{"type": "command", "command":
//! "..."}]}]` (`"asyncRewake": true` runs one in the background and wakes the model when it
//! exits 2); project MCP servers in `.mcp.json` under `mcpServers.<name>`, as `{"command",
//! "args"}`. Gemini CLI (geminicli.com/docs/hooks, /docs/tools/mcp-server): both in
//! `.gemini/settings.json`, hooks under `hooks.AfterTool` in the same shape (plus a `name`),
//! MCP servers under `mcpServers.<name>`.

use super::{claude_code, gemini_cli, Host};

use super::ordered_json::{JsonObject, JsonValue};

/// The name of squiggle's MCP server entry.
pub const MCP_SERVER_NAME: &str = "squiggle";

/// One settings file of a host and what squiggle adds to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsFile {
    /// The file, relative to the project folder.
    pub path: &'static str,
    /// What squiggle adds to it.
    pub entries: Vec<Entry>,
}

/// One entry squiggle adds to a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A command hook under `hooks.<event>`.
    Hook {
        /// The host's event (`PostToolUse`, `AfterTool`).
        event: &'static str,
        /// The tools it runs after (a regular expression over tool names).
        matcher: String,
        /// The command the host runs.
        command: String,
        /// The hook's name, for hosts that name hooks.
        name: Option<&'static str>,
        /// Whether it runs in the background and wakes the model when it exits 2 (Claude
        /// Code's `asyncRewake`): the search after the answer, beside the edit hook.
        wakes: bool,
    },
    /// A stdio MCP server under `mcpServers.<name>`.
    McpServer {
        /// The command that starts it.
        command: &'static str,
        /// Its arguments.
        args: &'static [&'static str],
    },
}

/// The settings files `squiggle init` writes for a host, and their entries.
pub fn settings_files(host: Host) -> Vec<SettingsFile> {
    let tools = |tools: &[(&str, squiggle_protocol::Scope)]| {
        tools
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join("|")
    };
    let hook = |event, matcher, flag: &str, name, wakes| Entry::Hook {
        event,
        matcher,
        command: format!("squiggle hook {}{flag}", host.name()),
        name,
        wakes,
    };
    let mcp = Entry::McpServer {
        command: "squiggle",
        args: &["mcp"],
    };
    match host {
        Host::ClaudeCode => vec![
            SettingsFile {
                path: ".claude/settings.json",
                // The edit hook, and the search after its answer (as the plugin has them).
                entries: vec![
                    hook(
                        claude_code::EVENT,
                        tools(&claude_code::EDIT_TOOLS),
                        " --with-later",
                        None,
                        false,
                    ),
                    hook(
                        claude_code::EVENT,
                        tools(&claude_code::EDIT_TOOLS),
                        " --later",
                        None,
                        true,
                    ),
                ],
            },
            SettingsFile {
                path: ".mcp.json",
                entries: vec![mcp],
            },
        ],
        Host::GeminiCli => vec![SettingsFile {
            path: ".gemini/settings.json",
            entries: vec![
                hook(
                    gemini_cli::EVENT,
                    tools(&gemini_cli::EDIT_TOOLS),
                    "",
                    Some("squiggle"),
                    false,
                ),
                mcp,
            ],
        }],
    }
}

/// A settings file's text after the merge, and what the merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The new text, when something was added; `None` leaves the file as it is.
    pub text: Option<String>,
    /// One line for each entry: what was added, or that it was there already.
    pub notes: Vec<String>,
}

/// Why a settings file was not changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// The text is not JSON.
    #[error("not valid JSON (line {line}, column {column}: {message})")]
    NotJson {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser says.
        message: String,
    },
    /// A key squiggle adds under does not have the documented shape.
    #[error("`{key}` is not {expected}")]
    Shape {
        /// The dotted key.
        key: String,
        /// What it should be (`a JSON object`, `an array`).
        expected: &'static str,
    },
}

/// Merges `entries` into a settings file's text (`None`, or blank, for a file not there yet).
pub fn merge(existing: Option<&str>, entries: &[Entry]) -> Result<Merged, SettingsError> {
    let existing = existing.filter(|text| !text.trim().is_empty());
    let mut root = match existing {
        None => JsonObject::default(),
        Some(text) => match serde_json::from_str::<JsonValue>(text) {
            Ok(JsonValue::Object(object)) => object,
            Ok(_) => {
                return Err(SettingsError::Shape {
                    key: "(the whole file)".into(),
                    expected: "a JSON object",
                })
            }
            Err(err) => {
                return Err(SettingsError::NotJson {
                    line: err.line(),
                    column: err.column(),
                    message: strip_position(&err.to_string()),
                })
            }
        },
    };
    let mut notes = Vec::new();
    let mut changed = false;
    for entry in entries {
        let (added, note) = match entry {
            Entry::Hook {
                event,
                matcher,
                command,
                name,
                wakes,
            } => add_hook(&mut root, event, matcher, command, *name, *wakes)?,
            Entry::McpServer { command, args } => add_mcp_server(&mut root, command, args)?,
        };
        changed |= added;
        notes.push(note);
    }
    Ok(Merged {
        text: changed.then(|| JsonValue::Object(root).to_pretty()),
        notes,
    })
}

/// Adds the hook group under `hooks.<event>` unless a hook there already runs the command's
/// `squiggle hook HOST` as the same hook: the search after the answer (`--later`, run in the
/// background: `wakes`) or the edit hook (any other); whether it was added, and the note. (A
/// `squiggle hook claude-code` from before the search after the answer is the edit hook: it
/// is left as it is, `--with-later` changing nothing now.)
fn add_hook(
    root: &mut JsonObject,
    event: &str,
    matcher: &str,
    command: &str,
    name: Option<&str>,
    wakes: bool,
) -> Result<(bool, String), SettingsError> {
    let hooks = object_at(root, "hooks")?;
    let key = format!("hooks.{event}");
    let JsonValue::Array(groups) = hooks.entry(event, JsonValue::Array(Vec::new())) else {
        return Err(SettingsError::Shape {
            key,
            expected: "an array",
        });
    };
    let base: String = command
        .split_whitespace()
        .take_while(|word| !word.starts_with('-'))
        .collect::<Vec<_>>()
        .join(" ");
    let has = |command: &str, flag: &str| command.split_whitespace().any(|word| word == flag);
    let present = groups
        .iter()
        .filter_map(|group| group.as_object()?.get("hooks")?.as_array())
        .flatten()
        .filter_map(|hook| {
            let hook = hook.as_object()?;
            let woken = hook.get("asyncRewake").and_then(JsonValue::as_bool);
            Some((hook.get("command")?.as_str()?, woken.unwrap_or(false)))
        })
        .find(|(existing, _)| runs_command(existing, &base) && has(existing, "--later") == wakes);
    if let Some((existing, woken)) = present {
        let advice = match (wakes, woken) {
            (true, false) => {
                " (without \"asyncRewake\": true the host waits for it after each edit: add it)"
            }
            _ => "",
        };
        return Ok((
            false,
            format!("{key}: already runs `{existing}`; left as it is{advice}"),
        ));
    }
    let mut hook = JsonObject::default();
    if let Some(name) = name {
        hook.insert("name".into(), JsonValue::string(name));
    }
    hook.insert("type".into(), JsonValue::string("command"));
    hook.insert("command".into(), JsonValue::string(command));
    if wakes {
        hook.insert("asyncRewake".into(), JsonValue::Bool(true));
    }
    groups.push(JsonValue::Object(JsonObject::of([
        ("matcher", JsonValue::string(matcher)),
        ("hooks", JsonValue::Array(vec![JsonValue::Object(hook)])),
    ])));
    let how = match wakes {
        true => ", in the background (it wakes the model when the edit broke other files)",
        false => "",
    };
    Ok((
        true,
        format!("{key}: added `{command}` after the tools {matcher}{how}"),
    ))
}

/// Adds the `squiggle` MCP server under `mcpServers` unless a server of that name, or one that
/// runs `squiggle mcp`, is there; whether it was added, and the note.
fn add_mcp_server(
    root: &mut JsonObject,
    command: &str,
    args: &[&str],
) -> Result<(bool, String), SettingsError> {
    let servers = object_at(root, "mcpServers")?;
    let runs_it = |server: &JsonValue| {
        let Some(server) = server.as_object() else {
            return false;
        };
        let program = server.get("command").and_then(JsonValue::as_str);
        let first_arg = server
            .get("args")
            .and_then(JsonValue::as_array)
            .and_then(|list| list.first())
            .and_then(JsonValue::as_str);
        program.is_some_and(is_squiggle) && first_arg == args.first().copied()
    };
    if let Some((name, _)) = servers
        .iter()
        .find(|(name, server)| *name == MCP_SERVER_NAME || runs_it(server))
    {
        return Ok((
            false,
            format!("mcpServers.{name}: already there; left as it is"),
        ));
    }
    let shown = std::iter::once(command)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let args = args.iter().map(|arg| JsonValue::string(*arg)).collect();
    servers.insert(
        MCP_SERVER_NAME.into(),
        JsonValue::Object(JsonObject::of([
            ("command", JsonValue::string(command)),
            ("args", JsonValue::Array(args)),
        ])),
    );
    Ok((
        true,
        format!("mcpServers.{MCP_SERVER_NAME}: added (runs `{shown}`)"),
    ))
}

/// The object under `key` in `root`, inserted empty when absent.
fn object_at<'a>(root: &'a mut JsonObject, key: &str) -> Result<&'a mut JsonObject, SettingsError> {
    match root.entry(key, JsonValue::Object(JsonObject::default())) {
        JsonValue::Object(object) => Ok(object),
        _ => Err(SettingsError::Shape {
            key: key.into(),
            expected: "a JSON object",
        }),
    }
}

/// Whether a hook command runs `wanted` (`squiggle hook HOST`), with squiggle named by any
/// path (`/usr/local/bin/squiggle hook claude-code`) and any further arguments.
fn runs_command(existing: &str, wanted: &str) -> bool {
    let mut words = existing.split_whitespace();
    let mut wanted = wanted.split_whitespace();
    match (words.next(), wanted.next()) {
        (Some(program), Some(_)) if is_squiggle(program) => {
            words.take(wanted.clone().count()).eq(wanted)
        }
        _ => false,
    }
}

/// Whether a program name is squiggle (by any path).
fn is_squiggle(program: &str) -> bool {
    program.trim_matches(['"', '\'']).rsplit('/').next() == Some("squiggle")
}

/// serde_json's message without its trailing " at line L column C".
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_settings() -> Vec<Entry> {
        settings_files(Host::ClaudeCode)[0].entries.clone()
    }

    /// The merged file's text as JSON (null when the merge failed or changed nothing).
    fn merged_value(merged: Result<Merged, SettingsError>) -> serde_json::Value {
        let text = merged.map(|m| m.text.unwrap_or_default());
        serde_json::from_str(&text.unwrap_or_default()).unwrap_or_default()
    }

    fn claude_mcp() -> Vec<Entry> {
        settings_files(Host::ClaudeCode)[1].entries.clone()
    }

    #[test]
    fn claude_code_gets_a_post_tool_use_hook_and_a_project_mcp_server() {
        let files = settings_files(Host::ClaudeCode);
        assert_eq!(
            files.iter().map(|f| f.path).collect::<Vec<_>>(),
            [".claude/settings.json", ".mcp.json"]
        );
        let merged = merge(None, &files[0].entries);
        assert_eq!(
            merged.map(|m| m.text),
            Ok(Some(
                "{\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"Write|Edit|MultiEdit\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"squiggle hook claude-code --with-later\"\n          }\n        ]\n      },\n      {\n        \"matcher\": \"Write|Edit|MultiEdit\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"squiggle hook claude-code --later\",\n            \"asyncRewake\": true\n          }\n        ]\n      }\n    ]\n  }\n}\n".into()
            ))
        );
        let mcp = merge(None, &files[1].entries);
        assert_eq!(
            mcp,
            Ok(Merged {
                text: Some("{\n  \"mcpServers\": {\n    \"squiggle\": {\n      \"command\": \"squiggle\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n".into()),
                notes: vec!["mcpServers.squiggle: added (runs `squiggle mcp`)".into()],
            })
        );
    }

    #[test]
    fn gemini_cli_gets_a_named_after_tool_hook_and_the_mcp_server_in_one_file() {
        let files = settings_files(Host::GeminiCli);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, ".gemini/settings.json");
        assert_eq!(
            merged_value(merge(None, &files[0].entries)),
            serde_json::json!({
                "hooks": {"AfterTool": [{"matcher": "write_file|replace", "hooks": [
                    {"name": "squiggle", "type": "command", "command": "squiggle hook gemini-cli"}
                ]}]},
                "mcpServers": {"squiggle": {"command": "squiggle", "args": ["mcp"]}}
            })
        );
    }

    #[test]
    fn other_settings_and_hooks_are_kept_in_their_order() {
        let existing = r#"{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}]
  },
  "model": "opus"
}"#;
        let text = merge(Some(existing), &claude_settings())
            .map(|m| m.text.unwrap_or_default())
            .unwrap_or_default();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(
            value["hooks"]["PostToolUse"],
            serde_json::json!([
                {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]},
                {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "squiggle hook claude-code --with-later"}]},
                {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "squiggle hook claude-code --later", "asyncRewake": true}]}
            ])
        );
        assert_eq!(
            value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "guard.sh"
        );
        let order: Vec<usize> = ["\"permissions\"", "\"hooks\"", "\"model\""]
            .iter()
            .filter_map(|key| text.find(key))
            .collect();
        assert!(order.len() == 3 && order.is_sorted(), "{text}");
    }

    #[test]
    fn a_second_merge_changes_nothing() {
        let first = merge(None, &claude_settings())
            .map(|m| m.text.unwrap_or_default())
            .unwrap_or_default();
        let second = merge(Some(&first), &claude_settings());
        assert_eq!(
            second,
            Ok(Merged {
                text: None,
                notes: vec![
                    "hooks.PostToolUse: already runs `squiggle hook claude-code --with-later`; left as it is"
                        .into(),
                    "hooks.PostToolUse: already runs `squiggle hook claude-code --later`; left as it is"
                        .into()
                ],
            })
        );
    }

    #[test]
    fn squiggle_named_by_a_path_or_with_more_arguments_counts_as_there() {
        let existing = r#"{"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [
            {"type": "command", "command": "/opt/bin/squiggle hook claude-code --extra"},
            {"type": "command", "command": "/opt/bin/squiggle hook claude-code --later", "asyncRewake": true}]}]}}"#;
        assert_eq!(
            merge(Some(existing), &claude_settings()).map(|m| m.text),
            Ok(None)
        );
        let other_host = r#"{"hooks": {"PostToolUse": [{"hooks": [
            {"type": "command", "command": "squiggle hook gemini-cli"}]}]}}"#;
        assert!(matches!(
            merge(Some(other_host), &claude_settings()).map(|m| m.text),
            Ok(Some(_))
        ));
    }

    #[test]
    fn an_edit_hook_from_before_the_search_after_the_answer_gets_it_beside() {
        let existing = r#"{"hooks": {"PostToolUse": [{"matcher": "Write|Edit|MultiEdit", "hooks": [
            {"type": "command", "command": "squiggle hook claude-code"}]}]}}"#;
        let merged = merge(Some(existing), &claude_settings());
        let notes = merged.as_ref().map(|m| m.notes.clone());
        assert_eq!(
            notes,
            Ok(vec![
                "hooks.PostToolUse: already runs `squiggle hook claude-code`; left as it is".into(),
                "hooks.PostToolUse: added `squiggle hook claude-code --later` after the tools \
                 Write|Edit|MultiEdit, in the background (it wakes the model when the edit broke \
                 other files)"
                    .into()
            ])
        );
        assert_eq!(
            merged_value(merged)["hooks"]["PostToolUse"],
            serde_json::json!([
                {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "squiggle hook claude-code"}]},
                {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "squiggle hook claude-code --later", "asyncRewake": true}]}
            ])
        );
    }

    #[test]
    fn which_hook_one_is_its_flag_says_not_whether_it_runs_in_the_background() {
        // The search after the answer set up without `asyncRewake`: not the edit hook.
        let existing = r#"{"hooks": {"PostToolUse": [{"matcher": "Write|Edit|MultiEdit", "hooks": [
            {"type": "command", "command": "squiggle hook claude-code --later"}]}]}}"#;
        let merged = merge(Some(existing), &claude_settings());
        assert_eq!(
            merged.map(|m| m.notes),
            Ok(vec![
                "hooks.PostToolUse: added `squiggle hook claude-code --with-later` after the tools \
                 Write|Edit|MultiEdit"
                    .into(),
                "hooks.PostToolUse: already runs `squiggle hook claude-code --later`; left as it \
                 is (without \"asyncRewake\": true the host waits for it after each edit: add it)"
                    .into()
            ])
        );
        // The edit hook run in the background is still the edit hook.
        let existing = r#"{"hooks": {"PostToolUse": [{"matcher": "Write|Edit|MultiEdit", "hooks": [
            {"type": "command", "command": "squiggle hook claude-code --with-later", "asyncRewake": true}]}]}}"#;
        let merged = merge(Some(existing), &claude_settings());
        let notes = merged.map(|m| m.notes).unwrap_or_default();
        assert!(
            notes[0].contains("already runs `squiggle hook claude-code --with-later`")
                && notes[1].contains("added `squiggle hook claude-code --later`"),
            "{notes:?}"
        );
    }

    #[test]
    fn an_mcp_server_named_squiggle_or_running_squiggle_mcp_is_left_alone() {
        let named = r#"{"mcpServers": {"squiggle": {"command": "/home/me/bin/squiggle", "args": ["mcp", "--root", "."]}}}"#;
        let other_name = r#"{"mcpServers": {"lsp": {"command": "squiggle", "args": ["mcp"]}}}"#;
        assert_eq!(
            merge(Some(named), &claude_mcp()),
            Ok(Merged {
                text: None,
                notes: vec!["mcpServers.squiggle: already there; left as it is".into()]
            })
        );
        assert_eq!(
            merge(Some(other_name), &claude_mcp()).map(|m| m.notes),
            Ok(vec!["mcpServers.lsp: already there; left as it is".into()])
        );
    }

    #[test]
    fn other_mcp_servers_are_kept() {
        let existing = r#"{"mcpServers": {"github": {"command": "npx", "args": ["-y", "gh"]}}}"#;
        assert_eq!(
            merged_value(merge(Some(existing), &claude_mcp())),
            serde_json::json!({"mcpServers": {
                "github": {"command": "npx", "args": ["-y", "gh"]},
                "squiggle": {"command": "squiggle", "args": ["mcp"]}
            }})
        );
    }

    #[test]
    fn invalid_json_is_refused_with_line_and_column() {
        let result = merge(Some("{\n  \"hooks\": {,\n}"), &claude_settings());
        assert_eq!(
            result,
            Err(SettingsError::NotJson {
                line: 2,
                column: 13,
                message: "key must be a string".into()
            })
        );
        assert_eq!(
            result.map_err(|e| e.to_string()),
            Err("not valid JSON (line 2, column 13: key must be a string)".into())
        );
    }

    #[test]
    fn keys_of_the_wrong_shape_are_refused_naming_the_key() {
        let cases = [
            ("[]", "(the whole file)", "a JSON object"),
            (r#"{"hooks": []}"#, "hooks", "a JSON object"),
            (
                r#"{"hooks": {"PostToolUse": {}}}"#,
                "hooks.PostToolUse",
                "an array",
            ),
        ];
        for (text, key, expected) in cases {
            assert_eq!(
                merge(Some(text), &claude_settings()),
                Err(SettingsError::Shape {
                    key: key.into(),
                    expected
                }),
                "{text}"
            );
        }
        assert_eq!(
            merge(Some(r#"{"mcpServers": "x"}"#), &claude_mcp()),
            Err(SettingsError::Shape {
                key: "mcpServers".into(),
                expected: "a JSON object"
            })
        );
    }

    #[test]
    fn a_blank_file_counts_as_empty() {
        assert!(matches!(
            merge(Some("  \n"), &claude_mcp()).map(|m| m.text),
            Ok(Some(_))
        ));
    }
}
