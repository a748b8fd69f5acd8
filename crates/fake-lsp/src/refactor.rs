//! Rename and code actions for the fake server: a rename replaces every whole-word occurrence
//! of the word at the position in the `.fake` files under the root; code actions offer a lazy
//! quick fix for `ERROR` lines and a command whose edit comes back as `workspace/applyEdit`.
//! Positions are counted as bytes: the texts these tests use are ASCII.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

/// What the fake server does about rename and code actions (all off by default).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Refactor {
    /// Declare `renameProvider` and answer `textDocument/rename` (as `documentChanges`).
    pub rename: bool,
    /// With `rename`: declare `prepareProvider`; `textDocument/prepareRename` answers null for
    /// the words in `unrenamable`, else the word's range.
    pub prepare: bool,
    /// Words prepareRename refuses.
    pub unrenamable: Vec<String>,
    /// Answer every rename with this error (code -32603).
    pub rename_error: Option<String>,
    /// Declare `codeActionProvider` (with resolve) and `executeCommandProvider` (`fake.apply`):
    /// action "Replace ERROR with OK" (quickfix, preferred, its edit filled in by
    /// `codeAction/resolve`) when a line of the range holds `ERROR`, then "Apply the scripted
    /// edit", which runs `fake.apply`: the server sends `apply_edit` as `workspace/applyEdit`
    /// and answers the command with the client's response once it has it.
    pub actions: bool,
    /// The edit `fake.apply` sends (`$ROOT` is replaced by the root URI).
    pub apply_edit: Option<Value>,
}

/// The capabilities the script declares.
pub fn declare(script: &Refactor, capabilities: &mut Value) {
    if script.rename {
        capabilities["renameProvider"] = if script.prepare {
            json!({"prepareProvider": true})
        } else {
            json!(true)
        };
    }
    if script.actions {
        capabilities["codeActionProvider"] =
            json!({"resolveProvider": true, "codeActionKinds": ["quickfix"]});
        capabilities["executeCommandProvider"] = json!({"commands": ["fake.apply"]});
    }
}

/// The identifier at (line, character) of `text`, with its start and end.
fn word_at(text: &str, line: usize, character: usize) -> Option<(String, usize, usize)> {
    let line_text = text.lines().nth(line)?;
    let bytes = line_text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    if !bytes.get(character).copied().is_some_and(is_word) {
        return None;
    }
    let start = (0..character)
        .rev()
        .take_while(|&i| is_word(bytes[i]))
        .last()
        .unwrap_or(character);
    let end = (character..bytes.len())
        .take_while(|&i| is_word(bytes[i]))
        .last()
        .map_or(character, |i| i + 1);
    Some((line_text[start..end].to_string(), start, end))
}

/// The answer to `textDocument/prepareRename`.
pub fn prepare_rename(script: &Refactor, text: &str, line: usize, character: usize) -> Value {
    match word_at(text, line, character) {
        Some((word, _, _)) if script.unrenamable.contains(&word) => Value::Null,
        Some((_, start, end)) => json!({
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end}
        }),
        None => Value::Null,
    }
}

/// The whole-word occurrences of `word` in `text`, as text edits to `new_name`.
fn occurrences(text: &str, word: &str, new_name: &str) -> Vec<Value> {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut edits = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        for (at, _) in line.match_indices(word) {
            let end = at + word.len();
            let before = at.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(is_word) || bytes.get(end).copied().is_some_and(is_word) {
                continue;
            }
            edits.push(json!({
                "range": {"start": {"line": number, "character": at}, "end": {"line": number, "character": end}},
                "newText": new_name
            }));
        }
    }
    edits
}

/// The answer to `textDocument/rename`: every `.fake` file under `root` (open ones as the
/// client sent them) with an occurrence of the word at the position.
pub fn rename(
    root: &Path,
    open: &HashMap<String, String>,
    text: &str,
    line: usize,
    character: usize,
    new_name: &str,
) -> Value {
    let Some((word, _, _)) = word_at(text, line, character) else {
        return Value::Null;
    };
    let mut files = Vec::new();
    super::symbols::fake_files(root, &mut files);
    files.sort();
    let mut changes = Vec::new();
    for path in files {
        let uri = format!("file://{}", path.display());
        let text = match open.get(&uri) {
            Some(text) => text.clone(),
            None => std::fs::read_to_string(&path).unwrap_or_default(),
        };
        let edits = occurrences(&text, &word, new_name);
        if !edits.is_empty() {
            changes.push(json!({"textDocument": {"uri": uri, "version": null}, "edits": edits}));
        }
    }
    json!({"documentChanges": changes})
}

/// The answer to `textDocument/codeAction` for lines `first..=last` of the document at `uri`.
pub fn code_actions(uri: &str, text: &str, first: usize, last: usize) -> Value {
    let mut actions = Vec::new();
    let error_line =
        (first..=last).find(|&n| text.lines().nth(n).is_some_and(|l| l.contains("ERROR")));
    if let Some(line) = error_line {
        actions.push(json!({
            "title": "Replace ERROR with OK",
            "kind": "quickfix",
            "isPreferred": true,
            "data": {"uri": uri, "line": line}
        }));
    }
    actions.push(json!({
        "title": "Apply the scripted edit",
        "kind": "quickfix",
        "command": {"title": "Apply the scripted edit", "command": "fake.apply", "arguments": []}
    }));
    Value::Array(actions)
}

/// The answer to `codeAction/resolve`: the quick fix with its edit.
pub fn resolve(action: &Value, text_of: impl Fn(&str) -> String) -> Value {
    let mut action = action.clone();
    let (Some(uri), Some(line)) = (
        action["data"]["uri"].as_str().map(str::to_string),
        action["data"]["line"].as_u64(),
    ) else {
        return action;
    };
    let text = text_of(&uri);
    let line_text = text.lines().nth(line as usize).unwrap_or_default();
    if let Some(at) = line_text.find("ERROR") {
        action["edit"] = json!({"changes": {uri: [{
            "range": {"start": {"line": line, "character": at}, "end": {"line": line, "character": at + 5}},
            "newText": "OK"
        }]}});
    }
    action
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_are_whole_words() {
        let edits = occurrences("total = total_x + total\n", "total", "sum");
        let starts: Vec<_> = edits
            .iter()
            .map(|e| e["range"]["start"]["character"].as_u64().unwrap_or(99))
            .collect();
        assert_eq!(starts, vec![0, 18]);
    }

    #[test]
    fn prepare_refuses_listed_words_and_blanks() {
        let script = Refactor {
            unrenamable: vec!["fixed".to_string()],
            ..Refactor::default()
        };
        assert_eq!(prepare_rename(&script, "fixed x\n", 0, 1), Value::Null);
        assert_eq!(prepare_rename(&script, "fixed x\n", 0, 5), Value::Null);
        assert_eq!(
            prepare_rename(&script, "fixed x\n", 0, 6)["end"]["character"],
            7
        );
    }
}
