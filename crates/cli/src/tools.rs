//! The navigation and diagnostics tools, shared by `squiggle mcp` (as MCP tools) and
//! `squiggle serve` (as `lsp/definition`, `lsp/references`, ...): running them and their
//! compact results (text a model reads well, plus the same as structured JSON).
//!
//! - `catalog`: every tool written once: name, description, serve method, arguments.
//! - `args`: how arguments are declared, read and described as a schema.
//! - `error`: why a tool gave no answer.
//! - `breadth`, `refactor`: the call hierarchy, implementation, type definition, folder
//!   diagnostics and body tools; rename and code actions.

mod args;
mod breadth;
mod catalog;
mod error;
mod refactor;

use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use squiggle_actors::{Answer, Location, Scope, Severity, Squiggle};
use squiggle_protocol::navigation::{render_locations, render_outline, render_symbols};
use squiggle_protocol::render::render_text;
use squiggle_protocol::service::service_diagnostics;
use squiggle_protocol::{merge, unsearched_section, Report};

pub use catalog::{by_method, Tool};
use catalog::{DiagnosticsArgs, ToolCall, TOOLS};
pub use error::ToolError;

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
    /// `lsp`: with it off no tool is offered (EC-30).
    enabled: bool,
    navigation: bool,
    severities: Vec<Severity>,
    /// What rename and code action previews saw, for the applies that follow.
    previews: Arc<Mutex<refactor::Previews>>,
}

impl Toolbox {
    /// The tools for a runtime, following its configuration (`lsp`, `navigation_tools`,
    /// severities).
    pub fn new(squiggle: Squiggle) -> Self {
        let config = squiggle.config();
        let (navigation, severities) = (config.navigation_tools, config.include_severities.clone());
        Self {
            enabled: config.enabled,
            squiggle,
            navigation,
            severities,
            previews: Arc::default(),
        }
    }

    /// The tools offered: none with `lsp = false` (disabled means absent), navigation ones
    /// only when `navigation_tools` is on.
    pub fn tools(&self) -> impl Iterator<Item = &'static Tool> + '_ {
        (TOOLS.iter()).filter(|tool| self.enabled && (self.navigation || !tool.navigation))
    }

    /// Runs a tool; an error says what was wrong with the question, for the model to fix. Its
    /// text ends with what the searches after earlier edits' answers found and nobody told
    /// yet (an edit's `lsp_diagnostics` tells it as its feedback does).
    pub async fn call(&self, name: &str, args: &Map<String, Value>) -> Result<Output, ToolError> {
        if !self.tools().any(|tool| tool.name == name) {
            return Err(ToolError::UnknownTool(name.to_string()));
        }
        let mut output = self.answer(ToolCall::read(name, args)?).await?;
        output.text.push_str(&self.squiggle.earlier_caused().await);
        Ok(output)
    }

    /// A tool's answer.
    async fn answer(&self, call: ToolCall) -> Result<Output, ToolError> {
        let squiggle = &self.squiggle;
        match call {
            ToolCall::Definition(args) => {
                let (file, target) = (&args.at.file, args.at.target()?);
                let answer = squiggle.goto_definition(file, target).await?;
                let title = asked_title("definition of", &squiggle.relative_path(file), &answer);
                let locations = answer.items.clone();
                let found = located(answer, &title, MAX_DEFINITIONS);
                let bodies = args.include_body.unwrap_or_default();
                Ok(self.with_bodies(found, &locations, bodies).await)
            }
            ToolCall::References(args) => {
                let (file, target) = (&args.at.file, args.at.target()?);
                let answer = squiggle
                    .find_references(file, target, args.include_declaration)
                    .await?;
                let title = asked_title("references to", &squiggle.relative_path(file), &answer);
                Ok(located(answer, &title, MAX_REFERENCES))
            }
            ToolCall::Hover(args) => {
                let (file, target) = (&args.file, args.target()?);
                let answer = squiggle.hover(file, target).await?;
                let title = asked_title("hover for", &squiggle.relative_path(file), &answer);
                Ok(hovered(answer, &title))
            }
            ToolCall::DocumentSymbols(args) => {
                let file = &args.file;
                let answer = squiggle.document_symbols(file, args.include_locals).await?;
                let relative = squiggle.relative_path(file);
                let offset = usize::try_from(args.offset).unwrap_or(usize::MAX);
                let text = render_outline(&relative, &answer.items, offset, MAX_OUTLINE);
                let structured =
                    json!({"file": relative, "symbols": answer.items, "notes": answer.notes});
                Ok(output(text, &answer.notes, structured))
            }
            ToolCall::WorkspaceSymbols(args) => {
                let answer = squiggle.workspace_symbols(&args.query).await?;
                let text = render_symbols(&answer.items, MAX_SYMBOLS);
                let shown: Vec<_> = answer.items.iter().take(MAX_SYMBOLS).collect();
                let structured =
                    json!({"symbols": shown, "total": answer.items.len(), "notes": answer.notes});
                Ok(output(text, &answer.notes, structured))
            }
            ToolCall::CallHierarchy(args) => self.call_hierarchy(args).await,
            ToolCall::Implementation(args) => self.implementations(args, false).await,
            ToolCall::TypeDefinition(args) => self.implementations(args, true).await,
            ToolCall::Diagnostics(args) => Ok(self.diagnostics(args).await),
            ToolCall::WorkspaceDiagnostics(args) => {
                self.folder_diagnostics(args.path.as_deref()).await
            }
            ToolCall::Rename(args) => self.rename(args).await,
            ToolCall::CodeActions(args) => self.code_actions(args).await,
        }
    }

    /// Known diagnostics, or one file's after checking it, at the configured severities; a
    /// file that was not checked gets a line saying so and why, never a clean answer. With
    /// `restart`, broken servers are restarted first and a note gives each server's state.
    async fn diagnostics(&self, args: DiagnosticsArgs) -> Output {
        let squiggle = &self.squiggle;
        let (file, restart) = (args.file.as_deref(), args.restart);
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
                // As an edit's feedback: with the errors the file's change caused in the files
                // that import it (against their state before it reached the servers).
                let feedback = squiggle.feedback(file, None, Scope::Edit, None).await;
                let check = feedback.check;
                let unsearched = unsearched_section(&check.file, &feedback.unsearched);
                let mut elsewhere = Vec::new();
                for (other, diagnostics) in feedback.others {
                    let kept = merge::filter_severities(diagnostics, &self.severities);
                    if !kept.is_empty() {
                        elsewhere.push(other.clone());
                        report.files.insert(other, kept);
                    }
                }
                if !elsewhere.is_empty() {
                    notes.push(format!(
                        "the change to {} caused errors in other files: {}",
                        check.file,
                        elsewhere.join(", ")
                    ));
                }
                if !unsearched.is_empty() {
                    notes.push(unsearched.trim().to_string());
                }
                // What earlier edits broke in other files, found after their answers.
                for earlier in feedback.earlier {
                    let mut broken = Vec::new();
                    for (other, diagnostics) in earlier.caused {
                        let kept = merge::filter_severities(diagnostics, &self.severities);
                        if !kept.is_empty() && other != check.file {
                            broken.push(other.clone());
                            report.files.entry(other).or_default().extend(kept);
                        }
                    }
                    if !broken.is_empty() {
                        notes.push(format!(
                            "your earlier edit of {} caused errors in other files: {}",
                            earlier.edited,
                            broken.join(", ")
                        ));
                    }
                }
                let outcome = check.outcome();
                // A server that did not answer must not pass unnoticed; one that is not
                // installed (or does not run) is said once per session, not in every answer.
                notes.extend(squiggle.missing_news(&check));
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
        // `diagnostics` is the integration contract's name for the same map.
        let mut structured = json!({"files": files, "diagnostics": files, "notes": notes});
        if let (Some(Value::Object(checked)), Value::Object(map)) = (checked, &mut structured) {
            map.extend(checked);
        }
        output(text, &notes, structured)
    }
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

/// A location as JSON: its fields, and `character` (its `column`), as the integration
/// contract names it.
fn location_json(location: &Location) -> Value {
    let mut value = json!(location);
    if let Value::Object(map) = &mut value {
        map.insert("character".to_string(), json!(location.column));
    }
    value
}

/// A list of locations under its title, at most `max`, with the structured result.
fn located(answer: Answer<Vec<Location>>, title: &str, max: usize) -> Output {
    let text = render_locations(title, &answer.items, max);
    let shown: Vec<Value> = (answer.items.iter().take(max)).map(location_json).collect();
    let structured = json!({
        "position": position_json(answer.position),
        "symbol": answer.subject,
        "locations": shown,
        "total": answer.items.len(),
        "notes": answer.notes,
    });
    output(text, &answer.notes, structured)
}

/// Hover text under its title, cut at `MAX_HOVER_CHARS`, with the structured result.
fn hovered(answer: Answer<Option<String>>, title: &str) -> Output {
    let mut text = answer
        .items
        .clone()
        .unwrap_or_else(|| "no hover information".to_string());
    if text.chars().count() > MAX_HOVER_CHARS {
        text = text.chars().take(MAX_HOVER_CHARS).collect::<String>() + "\n... (cut)";
    }
    let text = format!("{title}:\n{text}");
    // `content` is the integration contract's name for it (`{content: string | null}`).
    let structured = json!({"position": position_json(answer.position), "symbol": answer.subject, "hover": answer.items, "content": answer.items, "notes": answer.notes});
    output(text + "\n", &answer.notes, structured)
}

/// A result: the text with its notes after it, and the structured content.
fn output(mut text: String, notes: &[String], structured: Value) -> Output {
    for note in notes {
        text.push_str(&format!("note: {note}\n"));
    }
    Output { text, structured }
}
