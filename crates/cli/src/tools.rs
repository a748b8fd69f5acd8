//! The navigation and diagnostics tools, shared by `squiggle mcp` (as MCP tools) and
//! `squiggle serve` (as `lsp/definition`, `lsp/references`, ...): their names, schemas and
//! compact results (text a model reads well, plus the same as structured JSON).

mod refactor;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use squiggle_actors::{Answer, Location, ServerState, Severity, Squiggle, Target};
use squiggle_protocol::navigation::{render_locations, render_outline, render_symbols};
use squiggle_protocol::render::render_text;
use squiggle_protocol::service::service_diagnostics;
use squiggle_protocol::{merge, Report, ServerReport};

mod breadth;

/// At most this many definitions are listed.
const MAX_DEFINITIONS: usize = 20;
/// At most this many references are listed.
const MAX_REFERENCES: usize = 50;
/// At most this many symbols of an outline are listed.
const MAX_OUTLINE: usize = 200;
/// At most this many workspace symbols are listed.
const MAX_SYMBOLS: usize = 50;
/// At most this many characters of hover text are returned.
const MAX_HOVER_CHARS: usize = 4_000;

/// A tool's name, what it does, and the JSON schema of its arguments.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The tool name (`lsp_hover`).
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// Its arguments.
    pub schema: Value,
}

/// What a tool returns: compact text and the same as structured JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The text for the model (notes at the end).
    pub text: String,
    /// The structured result.
    pub structured: Value,
}

/// The tools over one squiggle runtime.
#[derive(Debug, Clone)]
pub struct Toolbox {
    squiggle: Squiggle,
    navigation: bool,
    severities: Vec<Severity>,
    /// Servers already said to be unavailable this session: said once, not in every answer.
    said_unavailable: Arc<Mutex<HashSet<String>>>,
    /// What rename and code action previews saw, for the applies that follow.
    previews: Arc<Mutex<refactor::Previews>>,
}

impl Toolbox {
    /// The tools for a runtime, following its configuration (`navigation_tools`, severities).
    pub fn new(squiggle: Squiggle) -> Self {
        let config = squiggle.config();
        let (navigation, severities) = (config.navigation_tools, config.include_severities.clone());
        Self {
            squiggle,
            navigation,
            severities,
            said_unavailable: Arc::default(),
            previews: Arc::default(),
        }
    }

    /// The tools offered: navigation ones only when `navigation_tools` is on.
    pub fn specs(&self) -> Vec<Spec> {
        let mut specs = Vec::new();
        if self.navigation {
            specs.extend([
                Spec {
                    name: "lsp_goto_definition",
                    description: "Where a symbol is defined. Give `file` and `line` + `character`, or `symbol` (its name in that file, or `Class.method`, `module.function`; `line` picks among several of that name). The answer names the position it asked about and, for an ambiguous name, the candidates. Returns each location with its line of source.",
                    schema: position_schema(Some(breadth::include_body_schema())),
                },
                Spec {
                    name: "lsp_find_references",
                    description: "Every place a symbol is used, grouped by file. Address it like lsp_goto_definition.",
                    schema: position_schema(Some((
                        "include_declaration",
                        json!({"type": "boolean", "default": true, "description": "Include the declaration itself."}),
                    ))),
                },
                Spec {
                    name: "lsp_hover",
                    description: "The type and documentation of a symbol, as plain text. Address it like lsp_goto_definition.",
                    schema: position_schema(None),
                },
                Spec {
                    name: "lsp_document_symbols",
                    description: "The outline of a file: its classes, functions, methods and so on, nested, with line ranges; what is declared inside functions and methods only with `include_locals`.",
                    schema: json!({"type": "object", "properties": {
                        "file": {"type": "string", "description": "The file, relative to the workspace root."},
                        "include_locals": {"type": "boolean", "default": false, "description": "Also list the symbols declared inside functions and methods (local variables and the like)."}
                    }, "required": ["file"]}),
                },
                Spec {
                    name: "lsp_workspace_symbols",
                    description: "Symbols across the workspace whose names match a query, with kind, file and line.",
                    schema: json!({"type": "object", "properties": {"query": {"type": "string", "description": "A name or part of one."}}, "required": ["query"]}),
                },
            ]);
            specs.extend(breadth::specs());
        }
        specs.push(Spec {
            name: "lsp_diagnostics",
            description: "Current diagnostics (errors by default) of every file the language servers know about, or of one file (which is checked first; if no server could check it, the answer says so and why).",
            schema: json!({"type": "object", "properties": {
                "file": {"type": "string", "description": "Only this file (checked now)."},
                "restart": {"type": "boolean", "default": false, "description": "First restart the language servers that crashed (each only after its restart cooldown)."}
            }}),
        });
        specs.push(breadth::diagnostics_spec());
        if self.navigation {
            specs.extend(refactor::specs());
        }
        specs
    }

    /// Runs a tool; an error says what was wrong with the question, for the model to fix.
    pub async fn call(&self, name: &str, args: &Map<String, Value>) -> Result<Output, String> {
        if !self.specs().iter().any(|spec| spec.name == name) {
            return Err(format!("no tool `{name}`"));
        }
        if let Some(result) = self.call_refactor(name, args).await {
            return result;
        }
        let squiggle = &self.squiggle;
        let file = string_arg(args, "file")?;
        let required = |what: &str| format!("`{what}` is required");
        match name {
            "lsp_goto_definition" => {
                let (file, target) = (file.ok_or_else(|| required("file"))?, target_of(args)?);
                let answer = squiggle
                    .goto_definition(file, target)
                    .await
                    .map_err(|e| e.to_string())?;
                let title = asked_title("definition of", &squiggle.relative_path(file), &answer);
                let locations = answer.items.clone();
                let found = located(answer, &title, MAX_DEFINITIONS);
                self.with_bodies(found, &locations, args).await
            }
            "lsp_find_references" => {
                let (file, target) = (file.ok_or_else(|| required("file"))?, target_of(args)?);
                let include = bool_arg(args, "include_declaration")?.unwrap_or(true);
                let answer = squiggle
                    .find_references(file, target, include)
                    .await
                    .map_err(|e| e.to_string())?;
                let title = asked_title("references to", &squiggle.relative_path(file), &answer);
                Ok(located(answer, &title, MAX_REFERENCES))
            }
            "lsp_hover" => {
                let (file, target) = (file.ok_or_else(|| required("file"))?, target_of(args)?);
                let answer = squiggle
                    .hover(file, target)
                    .await
                    .map_err(|e| e.to_string())?;
                let title = asked_title("hover for", &squiggle.relative_path(file), &answer);
                Ok(hovered(answer, &title))
            }
            "lsp_document_symbols" => {
                let file = file.ok_or_else(|| required("file"))?;
                let locals = bool_arg(args, "include_locals")?.unwrap_or(false);
                let answer = squiggle
                    .document_symbols(file, locals)
                    .await
                    .map_err(|e| e.to_string())?;
                let relative = squiggle.relative_path(file);
                let text = render_outline(&relative, &answer.items, MAX_OUTLINE);
                let structured =
                    json!({"file": relative, "symbols": answer.items, "notes": answer.notes});
                Ok(output(text, &answer.notes, structured))
            }
            "lsp_workspace_symbols" => {
                let query = string_arg(args, "query")?.ok_or_else(|| required("query"))?;
                let answer = squiggle
                    .workspace_symbols(query)
                    .await
                    .map_err(|e| e.to_string())?;
                let text = render_symbols(&answer.items, MAX_SYMBOLS);
                let shown: Vec<_> = answer.items.iter().take(MAX_SYMBOLS).collect();
                let structured =
                    json!({"symbols": shown, "total": answer.items.len(), "notes": answer.notes});
                Ok(output(text, &answer.notes, structured))
            }
            name if breadth::NAMES.contains(&name) => self.call_breadth(name, args).await,
            _ => {
                let restart = bool_arg(args, "restart")?.unwrap_or(false);
                self.diagnostics(file, restart).await
            }
        }
    }

    /// Known diagnostics, or one file's after checking it, at the configured severities; a
    /// file that was not checked gets a line saying so and why, never a clean answer. With
    /// `restart`, broken servers are restarted first and a note gives each server's state.
    async fn diagnostics(&self, file: Option<&str>, restart: bool) -> Result<Output, String> {
        let squiggle = &self.squiggle;
        let mut notes = Vec::new();
        if restart {
            for server in squiggle.restart(None).await {
                let reason = server.reason.map(|r| format!(": {r}")).unwrap_or_default();
                notes.push(format!(
                    "after restart: {} is {}{reason}",
                    server.id, server.state
                ));
            }
        }
        let mut report = Report::default();
        let mut checked = None;
        match file {
            Some(file) => {
                let check = squiggle.check_file(file, None).await;
                let outcome = check.outcome();
                // A server that did not answer must not pass unnoticed; one that is not
                // installed (or does not run) is said once per session, not in every answer.
                let said_before: Vec<String> = (check.servers.iter())
                    .filter(|server| !self.first_time(server))
                    .map(|server| format!("{}:", server.id))
                    .collect();
                notes.extend(
                    (outcome.missing().iter())
                        .filter(|line| !said_before.iter().any(|id| line.starts_with(id)))
                        .cloned(),
                );
                let kept = merge::filter_severities(check.diagnostics, &self.severities);
                checked = Some(json!({
                    "outcome": outcome.kind(!kept.is_empty()),
                    "reason": outcome.reason(),
                }));
                if outcome.is_checked() || !kept.is_empty() {
                    report.files.insert(check.file.clone(), kept);
                }
                report.outcomes.insert(check.file, outcome);
            }
            None => {
                for (file, diagnostics) in squiggle.diagnostics().await {
                    let kept = merge::filter_severities(diagnostics, &self.severities);
                    if !kept.is_empty() {
                        report.files.insert(file, kept);
                    }
                }
            }
        }
        let text = match render_text(&report) {
            text if text.is_empty() => "no diagnostics\n".to_string(),
            text => text,
        };
        let files: Map<String, Value> = report
            .files
            .iter()
            .filter(|(_, diagnostics)| !diagnostics.is_empty())
            .map(|(file, diagnostics)| {
                let shown = service_diagnostics(diagnostics.clone(), &self.severities);
                (file.clone(), json!(shown))
            })
            .collect();
        let mut structured = json!({"files": files, "notes": notes});
        if let (Some(Value::Object(checked)), Value::Object(map)) = (checked, &mut structured) {
            map.extend(checked);
        }
        Ok(output(text, &notes, structured))
    }
}

impl Toolbox {
    /// Whether a server's problem is news: an unavailable server (not installed, or it does
    /// not run) is said once per session; a broken one every time.
    fn first_time(&self, server: &ServerReport) -> bool {
        if server.status != ServerState::Unavailable {
            return true;
        }
        let mut said = self
            .said_unavailable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        said.insert(server.id.clone())
    }
}

/// The schema of a position question: a file and either line + character or a symbol.
fn position_schema(extra: Option<(&str, Value)>) -> Value {
    let mut properties = json!({
        "file": {"type": "string", "description": "Relative to the workspace root."},
        "line": {"type": "integer", "minimum": 1, "description": "1-based line (with `character`)."},
        "character": {"type": "integer", "minimum": 1, "description": "1-based column; moved onto the nearest word."},
        "symbol": {"type": "string", "description": "The symbol's name, instead of line + character; `line` then picks among several."}
    });
    if let (Some((name, schema)), Some(map)) = (extra, properties.as_object_mut()) {
        map.insert(name.to_string(), schema);
    }
    json!({"type": "object", "properties": properties, "required": ["file"]})
}

/// The target of a position question from its arguments.
fn target_of(args: &Map<String, Value>) -> Result<Target, String> {
    match (
        string_arg(args, "symbol")?,
        position_arg(args, "line")?,
        position_arg(args, "character")?,
    ) {
        (Some(name), line, _) => Ok(Target::Symbol {
            name: name.to_string(),
            line,
        }),
        (None, Some(line), Some(column)) => Ok(Target::At { line, column }),
        _ => Err("give `line` and `character` (1-based), or `symbol`".to_string()),
    }
}

/// An optional string argument (null counts as absent); any other type is an error.
fn string_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(wrong_type(key, "a string", other)),
    }
}

/// An optional boolean argument (null counts as absent); any other type is an error.
fn bool_arg(args: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(other) => Err(wrong_type(key, "true or false", other)),
    }
}

/// An optional 1-based line or column (null counts as absent); anything but a whole number
/// of at least 1 is an error.
fn position_arg(args: &Map<String, Value>, key: &str) -> Result<Option<u32>, String> {
    let value = match args.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
        Some(n) if n > 0 => Ok(Some(n)),
        _ => Err(wrong_type(key, "a whole number from 1", value)),
    }
}

/// The error for an argument of the wrong type.
fn wrong_type(key: &str, expected: &str, got: &Value) -> String {
    let got = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("`{key}` must be {expected}, not {got}")
}

/// The first words of a position answer: what was asked, about which identifier, where
/// (`definition of make_circle (app.py:3:20)`).
fn asked_title<T>(what: &str, file: &str, answer: &Answer<T>) -> String {
    let subject = answer.subject.as_deref().unwrap_or("the symbol");
    match answer.position {
        Some((line, column)) => format!("{what} {subject} ({file}:{line}:{column})"),
        None => format!("{what} {subject} ({file})"),
    }
}

/// A position as JSON (null when none).
fn position_json(position: Option<(u32, u32)>) -> Value {
    position.map_or(
        Value::Null,
        |(line, character)| json!({"line": line, "character": character}),
    )
}

fn located(answer: Answer<Vec<Location>>, title: &str, max: usize) -> Output {
    let text = render_locations(title, &answer.items, max);
    let shown: Vec<_> = answer.items.iter().take(max).collect();
    let structured = json!({
        "position": position_json(answer.position),
        "symbol": answer.subject,
        "locations": shown,
        "total": answer.items.len(),
        "notes": answer.notes,
    });
    output(text, &answer.notes, structured)
}

fn hovered(answer: Answer<Option<String>>, title: &str) -> Output {
    let mut text = answer
        .items
        .clone()
        .unwrap_or_else(|| "no hover information".to_string());
    if text.chars().count() > MAX_HOVER_CHARS {
        text = text.chars().take(MAX_HOVER_CHARS).collect::<String>() + "\n... (cut)";
    }
    let text = format!("{title}:\n{text}");
    let structured = json!({"position": position_json(answer.position), "symbol": answer.subject, "hover": answer.items, "notes": answer.notes});
    output(text + "\n", &answer.notes, structured)
}

/// A result: the text with its notes after it, and the structured content.
fn output(mut text: String, notes: &[String], structured: Value) -> Output {
    for note in notes {
        text.push_str(&format!("note: {note}\n"));
    }
    Output { text, structured }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn an_argument_of_the_wrong_type_is_an_error_not_absent() {
        let given = args(json!({"file": 5, "query": ["x"], "include_declaration": "no"}));
        assert_eq!(
            string_arg(&given, "file"),
            Err("`file` must be a string, not a number".to_string())
        );
        assert_eq!(
            string_arg(&given, "query"),
            Err("`query` must be a string, not an array".to_string())
        );
        assert_eq!(
            bool_arg(&given, "include_declaration"),
            Err("`include_declaration` must be true or false, not a string".to_string())
        );
    }

    #[test]
    fn absent_and_null_arguments_are_absent() {
        let given = args(json!({"file": null}));
        assert_eq!(string_arg(&given, "file"), Ok(None));
        assert_eq!(string_arg(&given, "query"), Ok(None));
        assert_eq!(bool_arg(&given, "include_declaration"), Ok(None));
        assert_eq!(position_arg(&given, "line"), Ok(None));
    }

    #[test]
    fn positions_are_whole_numbers_from_one() {
        let given = args(json!({"a": 3, "b": 0, "c": -1, "d": 1.5, "e": "3", "f": 4294967296u64}));
        assert_eq!(position_arg(&given, "a"), Ok(Some(3)));
        for key in ["b", "c", "d", "e", "f"] {
            assert!(position_arg(&given, key).is_err(), "{key}");
        }
    }

    #[test]
    fn a_target_is_a_symbol_or_a_line_and_column() {
        assert!(matches!(
            target_of(&args(json!({"symbol": "x", "line": 2}))),
            Ok(Target::Symbol { line: Some(2), .. })
        ));
        assert!(matches!(
            target_of(&args(json!({"line": 2, "character": 3}))),
            Ok(Target::At { line: 2, column: 3 })
        ));
        assert_eq!(
            target_of(&args(json!({"line": 2}))).unwrap_err(),
            "give `line` and `character` (1-based), or `symbol`"
        );
        assert_eq!(
            target_of(&args(json!({"symbol": 7}))).unwrap_err(),
            "`symbol` must be a string, not a number"
        );
    }
}
