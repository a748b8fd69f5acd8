//! The navigation and diagnostics tools, shared by `squiggle mcp` (as MCP tools) and
//! `squiggle serve` (as `lsp/definition`, `lsp/references`, ...): their names, schemas and
//! compact results (text a model reads well, plus the same as structured JSON).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use squiggle_actors::{Answer, Location, ServerState, Severity, Squiggle, Target};
use squiggle_protocol::navigation::{render_locations, render_outline, render_symbols};
use squiggle_protocol::service::service_diagnostics;
use squiggle_protocol::ServerReport;

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
        }
    }

    /// The tools offered: navigation ones only when `navigation_tools` is on.
    pub fn specs(&self) -> Vec<Spec> {
        let mut specs = Vec::new();
        if self.navigation {
            specs.extend([
                Spec {
                    name: "lsp_goto_definition",
                    description: "Where a symbol is defined. Give `file` and `line` + `character`, or `symbol` (its name in that file). Returns each location with its line of source.",
                    schema: position_schema(None),
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
                    description: "The outline of a file: its classes, functions, methods and so on, nested, with line ranges.",
                    schema: json!({"type": "object", "properties": {"file": {"type": "string", "description": "The file, relative to the workspace root."}}, "required": ["file"]}),
                },
                Spec {
                    name: "lsp_workspace_symbols",
                    description: "Symbols across the workspace whose names match a query, with kind, file and line.",
                    schema: json!({"type": "object", "properties": {"query": {"type": "string", "description": "A name or part of one."}}, "required": ["query"]}),
                },
            ]);
        }
        specs.push(Spec {
            name: "lsp_diagnostics",
            description: "Current diagnostics (errors by default) of every file the language servers know about, or of one file (which is checked first).",
            schema: json!({"type": "object", "properties": {"file": {"type": "string", "description": "Only this file (checked now)."}}}),
        });
        specs
    }

    /// Runs a tool; an error says what was wrong with the question, for the model to fix.
    pub async fn call(&self, name: &str, args: &Map<String, Value>) -> Result<Output, String> {
        if !self.specs().iter().any(|spec| spec.name == name) {
            return Err(format!("no tool `{name}`"));
        }
        let squiggle = &self.squiggle;
        let file = args.get("file").and_then(Value::as_str);
        let required = |what: &str| format!("`{what}` is required");
        match name {
            "lsp_goto_definition" => {
                let (file, target) = (file.ok_or_else(|| required("file"))?, target_of(args)?);
                let answer = squiggle
                    .goto_definition(file, target)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(located(answer, "definition", MAX_DEFINITIONS))
            }
            "lsp_find_references" => {
                let (file, target) = (file.ok_or_else(|| required("file"))?, target_of(args)?);
                let include = args
                    .get("include_declaration")
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                let answer = squiggle
                    .find_references(file, target, include)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(located(answer, "references", MAX_REFERENCES))
            }
            "lsp_hover" => {
                let (file, target) = (file.ok_or_else(|| required("file"))?, target_of(args)?);
                Ok(hovered(
                    squiggle
                        .hover(file, target)
                        .await
                        .map_err(|e| e.to_string())?,
                ))
            }
            "lsp_document_symbols" => {
                let file = file.ok_or_else(|| required("file"))?;
                let answer = squiggle
                    .document_symbols(file)
                    .await
                    .map_err(|e| e.to_string())?;
                let relative = squiggle.relative_path(file);
                let text = render_outline(&relative, &answer.items, MAX_OUTLINE);
                let structured =
                    json!({"file": relative, "symbols": answer.items, "notes": answer.notes});
                Ok(output(text, &answer.notes, structured))
            }
            "lsp_workspace_symbols" => {
                let query = args
                    .get("query")
                    .and_then(Value::as_str)
                    .ok_or_else(|| required("query"))?;
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
            _ => self.diagnostics(file).await,
        }
    }

    /// Known diagnostics, or one file's after checking it, at the configured severities.
    async fn diagnostics(&self, file: Option<&str>) -> Result<Output, String> {
        let squiggle = &self.squiggle;
        let mut notes = Vec::new();
        let all = match file {
            Some(file) => {
                let check = squiggle.check_file(file, None).await;
                if let Some(skip) = check.skipped {
                    return Err(format!("{}: {skip}", check.file));
                }
                // A server that did not answer must not pass for a clean file.
                for server in &check.servers {
                    if check.timed_out.contains(&server.id) {
                        notes.push(format!(
                            "{} did not answer in time; results may be incomplete",
                            server.id
                        ));
                    } else if server.status != ServerState::Active && self.first_time(server) {
                        let reason = server.reason.as_deref().unwrap_or("no reason given");
                        notes.push(format!("{} is {}: {reason}", server.id, server.status));
                    }
                }
                std::iter::once((check.file, check.diagnostics)).collect()
            }
            None => squiggle.diagnostics().await,
        };
        let mut files = Map::new();
        let mut lines = Vec::new();
        for (file, diagnostics) in all {
            let kept = service_diagnostics(diagnostics, &self.severities);
            if kept.is_empty() {
                continue;
            }
            for d in &kept {
                let code = d
                    .code
                    .as_deref()
                    .map(|c| format!("[{c}]"))
                    .unwrap_or_default();
                lines.push(format!(
                    "{}:{}:{}: {}{code}: {}",
                    d.file, d.line, d.character, d.severity, d.message
                ));
            }
            files.insert(file, json!(kept));
        }
        let text = if lines.is_empty() {
            "no diagnostics\n".to_string()
        } else {
            lines.join("\n") + "\n"
        };
        Ok(output(
            text,
            &notes,
            json!({"files": files, "notes": notes}),
        ))
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
        "file": {"type": "string", "description": "The file, relative to the workspace root (or absolute inside it)."},
        "line": {"type": "integer", "minimum": 1, "description": "1-based line of the symbol (with `character`)."},
        "character": {"type": "integer", "minimum": 1, "description": "1-based column of the symbol; a column beside the word is moved onto it."},
        "symbol": {"type": "string", "description": "The symbol's name in the file, instead of line + character; `line` then picks among several."}
    });
    if let (Some((name, schema)), Some(map)) = (extra, properties.as_object_mut()) {
        map.insert(name.to_string(), schema);
    }
    json!({"type": "object", "properties": properties, "required": ["file"]})
}

/// The target of a position question from its arguments.
fn target_of(args: &Map<String, Value>) -> Result<Target, String> {
    let number = |key: &str| {
        args.get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    match (
        args.get("symbol").and_then(Value::as_str),
        number("line"),
        number("character"),
    ) {
        (Some(name), line, _) => Ok(Target::Symbol {
            name: name.to_string(),
            line,
        }),
        (None, Some(line), Some(column)) if line > 0 && column > 0 => {
            Ok(Target::At { line, column })
        }
        _ => Err("give `line` and `character` (1-based), or `symbol`".to_string()),
    }
}

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
        "locations": shown,
        "total": answer.items.len(),
        "notes": answer.notes,
    });
    output(text, &answer.notes, structured)
}

fn hovered(answer: Answer<Option<String>>) -> Output {
    let mut text = answer
        .items
        .clone()
        .unwrap_or_else(|| "no hover information".to_string());
    if text.chars().count() > MAX_HOVER_CHARS {
        text = text.chars().take(MAX_HOVER_CHARS).collect::<String>() + "\n... (cut)";
    }
    let structured = json!({"position": position_json(answer.position), "hover": answer.items, "notes": answer.notes});
    output(text + "\n", &answer.notes, structured)
}

/// A result: the text with its notes after it, and the structured content.
fn output(mut text: String, notes: &[String], structured: Value) -> Output {
    for note in notes {
        text.push_str(&format!("note: {note}\n"));
    }
    Output { text, structured }
}
