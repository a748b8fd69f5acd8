//! Code actions: listed for lines of a file with their diagnostics, asked of every server that
//! offers them; one previewed or applied (resolved first when the server fills edits in
//! lazily; its command run on the server, whose edits squiggle applies inside the workspace).

use std::path::{Path, PathBuf};

use async_lsp::lsp_types::{
    CodeActionContext, CodeActionOrCommand, CodeActionParams, CodeActionTriggerKind, Command,
    DiagnosticSeverity, DocumentChangeOperation, DocumentChanges, NumberOrString,
    PartialResultParams, Position, Range, TextDocumentIdentifier, WorkDoneProgressParams,
    WorkspaceEdit,
};
use squiggle_protocol::{lsp_character, Diagnostic, Severity};

use super::refactor::{EditFailure, EditMode, EditOutcome};
use super::{uri_of, Answer, Ready, Target};
use crate::server::refactor::{EditAnswer, EditRequest};
use crate::squiggle::Squiggle;

/// One code action a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionInfo {
    /// Its number in the list, from 1.
    pub index: usize,
    /// What it does.
    pub title: String,
    /// Its kind (`quickfix`, `refactor.extract`, `source.organizeImports`, ...).
    pub kind: Option<String>,
    /// Whether the server prefers it (the likely fix).
    pub preferred: bool,
    /// How many files its edit touches (0: none known before it is resolved).
    pub edits: usize,
    /// The command it runs, if any.
    pub command: Option<String>,
    /// Why it cannot be applied now, if the server says so.
    pub disabled: Option<String>,
    /// The server offering it.
    pub server: String,
}

/// The code actions at a place, and the outcome of the one chosen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CodeActions {
    /// The actions, numbered from 1.
    pub actions: Vec<ActionInfo>,
    /// The diagnostics the actions were asked for (those on the lines asked about).
    pub diagnostics: Vec<Diagnostic>,
    /// The chosen action's preview or result.
    pub chosen: Option<(usize, EditOutcome)>,
}

/// Which code action to preview or apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionPick {
    /// Its number in the list, from 1.
    pub index: usize,
    /// The title it had when listed; a different action at that number is refused.
    pub title: Option<String>,
    /// Preview or apply.
    pub mode: EditMode,
}

impl Squiggle {
    /// The code actions for the lines from `target` to `end_line` (default: its line) of
    /// `file`, asked with the diagnostics on those lines; with `pick`, one of them previewed or
    /// applied (resolved first when the server fills edits in lazily; its command run on the
    /// server, whose edits squiggle applies inside the workspace only).
    pub async fn code_actions(
        &self,
        file: impl AsRef<Path>,
        target: Target,
        end_line: Option<u32>,
        pick: Option<ActionPick>,
    ) -> Result<Answer<CodeActions>, EditFailure> {
        let target = target.validated()?.clone();
        // A check first: the servers have the file as it is on disk, and its diagnostics are fresh.
        let checked = self.check_file(file.as_ref(), None).await;
        let (path, relative, text, servers, mut notes) = self
            .edit_servers(file.as_ref(), "code actions", |p| p.edits.code_actions)
            .await?;
        let (line, column) = match &target {
            Target::At { line, column } => (*line, *column),
            symbol => {
                let first = &servers[0];
                self.resolve_target(first, &path, &relative, &text, symbol, &mut notes)
                    .await?
            }
        };
        let last = end_line.unwrap_or(line).max(line);
        let lines: Vec<&str> = text.lines().collect();
        let end_column = lines
            .get(last as usize - 1)
            .map_or(1, |l| l.chars().count() as u32 + 1);
        let diagnostics: Vec<Diagnostic> = checked
            .diagnostics
            .into_iter()
            .filter(|d| d.line <= last && d.end_line >= line)
            .collect();
        // Every server that offers code actions is asked, each with its own diagnostics.
        let mut offered: Vec<(usize, CodeActionOrCommand)> = Vec::new();
        let mut failures = Vec::new();
        for (number, server) in servers.iter().enumerate() {
            let encoding = server.info.encoding;
            let at = |line: u32, column: u32| {
                let line_text = lines.get(line as usize - 1).copied().unwrap_or_default();
                Position::new(line - 1, lsp_character(line_text, column, encoding))
            };
            let context = diagnostics
                .iter()
                .filter(|d| from_server(d, &server.key.id, &diagnostics))
                .map(|d| to_lsp(d, &at))
                .collect();
            let params = CodeActionParams {
                text_document: TextDocumentIdentifier { uri: uri_of(&path) },
                range: Range::new(at(line, column), at(last, end_column)),
                context: CodeActionContext {
                    diagnostics: context,
                    only: None,
                    trigger_kind: Some(CodeActionTriggerKind::INVOKED),
                },
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            };
            match (self.edit_request(server, EditRequest::CodeActions(Box::new(params)))).await {
                Ok(EditAnswer::CodeActions(actions)) => {
                    offered.extend(actions.unwrap_or_default().into_iter().map(|a| (number, a)))
                }
                Ok(_) => {}
                Err(error) => failures.push(EditFailure::Server {
                    server: server.key.id.clone(),
                    error,
                }),
            }
        }
        if failures.len() == servers.len() {
            return Err(failures.swap_remove(0));
        }
        notes.extend(failures.iter().map(ToString::to_string));
        let actions: Vec<ActionInfo> = offered
            .iter()
            .enumerate()
            .map(|(index, (number, action))| describe(index + 1, action, &servers[*number].key.id))
            .collect();
        let chosen = match pick {
            None => None,
            Some(pick) => {
                let outcome = self.carry_out_action(&servers, &offered, &actions, pick.clone());
                Some((pick.index, outcome.await?))
            }
        };
        Ok(Answer {
            items: CodeActions {
                actions,
                diagnostics,
                chosen,
            },
            position: Some((line, column)),
            subject: None,
            notes,
        })
    }

    /// Previews or applies one listed code action.
    async fn carry_out_action(
        &self,
        servers: &[Ready],
        offered: &[(usize, CodeActionOrCommand)],
        actions: &[ActionInfo],
        pick: ActionPick,
    ) -> Result<EditOutcome, EditFailure> {
        let (Some((number, action)), Some(info)) = (
            offered.get(pick.index.wrapping_sub(1)),
            actions.get(pick.index.wrapping_sub(1)),
        ) else {
            return Err(EditFailure::Refused(format!(
                "there is no action {} here ({} offered); list them again",
                pick.index,
                offered.len()
            )));
        };
        if let Some(title) = pick.title.as_deref().filter(|t| *t != info.title) {
            return Err(EditFailure::Refused(format!(
                "action {} is now `{}`, not `{title}`; nothing was done; list them again",
                pick.index, info.title
            )));
        }
        let server = &servers[*number];
        if let Some(reason) = &info.disabled {
            return Err(EditFailure::Refused(format!(
                "`{}` is disabled: {reason}",
                info.title
            )));
        }
        let (edit, command) = match action {
            CodeActionOrCommand::Command(command) => (None, Some(command.clone())),
            CodeActionOrCommand::CodeAction(action) => {
                let mut action = action.clone();
                if action.edit.is_none() && server.info.provides.edits.resolve_code_action {
                    let request = EditRequest::ResolveCodeAction(Box::new(action.clone()));
                    match self.edit_request(server, request).await {
                        Ok(EditAnswer::ResolvedCodeAction(resolved)) => action = *resolved,
                        Ok(_) => {}
                        Err(error) => {
                            return Err(EditFailure::Server {
                                server: server.key.id.clone(),
                                error,
                            })
                        }
                    }
                }
                (action.edit, action.command)
            }
        };
        let mut outcome = match &edit {
            Some(edit) => {
                self.carry_out(edit, server.info.encoding, pick.mode.clone())
                    .await?
            }
            None => EditOutcome {
                applied: matches!(pick.mode, EditMode::Apply { .. }),
                ..EditOutcome::default()
            },
        };
        outcome.command = command.as_ref().map(|c| c.title.clone());
        if let (Some(command), EditMode::Apply { .. }) = (command, &pick.mode) {
            let (written, refused) = self.run_command(server, command).await?;
            outcome.command_refused = refused;
            outcome.command_files = written
                .iter()
                .map(|path| self.relative_path(path))
                .collect();
            outcome.checks.extend(self.sync_written(&written).await);
        }
        Ok(outcome)
    }

    /// Runs a command on the server, letting its `workspace/applyEdit` requests write
    /// meanwhile; returns the files they wrote and why any of them was refused.
    async fn run_command(
        &self,
        server: &Ready,
        command: Command,
    ) -> Result<(Vec<PathBuf>, Vec<String>), EditFailure> {
        if !server.info.provides.edits.execute_command {
            return Err(EditFailure::NotOffered {
                what: "commands",
                file: command.command,
                servers: server.key.id.clone(),
            });
        }
        let before = server.info.applied.take();
        server.info.applied.take_refused();
        if !before.is_empty() {
            self.sync_written(&before).await;
        }
        let asked = server.info.applied.asked();
        let ran = self
            .edit_request(server, EditRequest::ExecuteCommand(command))
            .await;
        drop(asked);
        let written = server.info.applied.take();
        let refused = server.info.applied.take_refused();
        match ran {
            Ok(_) => Ok((written, refused)),
            Err(error) => {
                self.sync_written(&written).await;
                Err(EditFailure::Server {
                    server: server.key.id.clone(),
                    error,
                })
            }
        }
    }
}

/// A listed action, described.
fn describe(index: usize, action: &CodeActionOrCommand, server: &str) -> ActionInfo {
    match action {
        CodeActionOrCommand::Command(command) => ActionInfo {
            index,
            title: command.title.clone(),
            kind: None,
            preferred: false,
            edits: 0,
            command: Some(command.command.clone()),
            disabled: None,
            server: server.to_string(),
        },
        CodeActionOrCommand::CodeAction(action) => ActionInfo {
            index,
            title: action.title.clone(),
            kind: action.kind.as_ref().map(|k| k.as_str().to_string()),
            preferred: action.is_preferred == Some(true),
            edits: action.edit.as_ref().map_or(0, files_touched),
            command: action.command.as_ref().map(|c| c.command.clone()),
            disabled: action.disabled.as_ref().map(|d| d.reason.clone()),
            server: server.to_string(),
        },
    }
}

/// How many distinct files an edit names.
fn files_touched(edit: &WorkspaceEdit) -> usize {
    let mut uris: Vec<String> = Vec::new();
    if let Some(changes) = &edit.changes {
        uris.extend(changes.keys().map(|u| u.to_string()));
    }
    match &edit.document_changes {
        Some(DocumentChanges::Edits(edits)) => {
            uris.extend(edits.iter().map(|e| e.text_document.uri.to_string()))
        }
        Some(DocumentChanges::Operations(operations)) => {
            for operation in operations {
                if let DocumentChangeOperation::Edit(e) = operation {
                    uris.push(e.text_document.uri.to_string());
                }
            }
        }
        None => {}
    }
    uris.sort();
    uris.dedup();
    uris.len()
}

/// Whether a diagnostic is likely the server's own (its source names the server), so that a
/// server is not asked to fix another's; when none of them is, all of them are sent.
fn from_server(diagnostic: &Diagnostic, server: &str, all: &[Diagnostic]) -> bool {
    let ours = |d: &Diagnostic| {
        d.sources().iter().any(|source| {
            let source = source.to_lowercase();
            !source.is_empty() && (server.contains(&source) || source.contains(server))
        })
    };
    ours(diagnostic) || !all.iter().any(ours)
}

/// A squiggle diagnostic as the server's own again (positions from 1-based characters).
fn to_lsp(
    diagnostic: &Diagnostic,
    at: &impl Fn(u32, u32) -> Position,
) -> async_lsp::lsp_types::Diagnostic {
    let severity = match diagnostic.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    let code = diagnostic
        .code
        .as_ref()
        .map(|code| match code.parse::<i32>() {
            Ok(number) => NumberOrString::Number(number),
            Err(_) => NumberOrString::String(code.clone()),
        });
    async_lsp::lsp_types::Diagnostic {
        range: Range::new(
            at(diagnostic.line, diagnostic.column),
            at(diagnostic.end_line, diagnostic.end_column),
        ),
        severity: Some(severity),
        code,
        source: diagnostic.source.clone(),
        message: diagnostic.message.clone(),
        ..async_lsp::lsp_types::Diagnostic::default()
    }
}
