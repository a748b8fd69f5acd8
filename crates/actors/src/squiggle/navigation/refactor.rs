//! Rename and code actions: previewed as a diff by default, applied on request only when no
//! touched file changed since the preview, written atomically inside the workspace, synced
//! with the servers, and checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_lsp::lsp_types::{
    CodeActionContext, CodeActionOrCommand, CodeActionParams, CodeActionTriggerKind, Command,
    DiagnosticSeverity, DocumentChangeOperation, DocumentChanges, NumberOrString,
    PartialResultParams, Position, Range, TextDocumentIdentifier, TextDocumentPositionParams,
    WorkDoneProgressParams, WorkspaceEdit,
};
use squiggle_protocol::navigation::{word_at, EditError, EditPlan};
use squiggle_protocol::{lsp_character, Diagnostic, PositionEncoding, Severity};

use super::{uri_of, Answer, NavError, Ready, Target};
use crate::check::CheckResult;
use crate::edit_files;
use crate::server::navigate::{NavAnswer, NavRequest};
use crate::server::refactor::{EditAnswer, EditRequest};
use crate::server::ServerMsg;
use crate::squiggle::{ask, Squiggle};

/// How long a rename, code action or command may take on the server.
const EDIT_LIMIT: Duration = Duration::from_secs(30);

/// Whether an edit is only shown, or written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EditMode {
    /// Compute the edit and show it; write nothing.
    #[default]
    Preview,
    /// Write the edit; with `expect` (each touched file's content hash from the preview),
    /// only if none of them changed since.
    Apply {
        expect: Option<BTreeMap<String, String>>,
    },
}

/// What an edit changes, or changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditOutcome {
    /// Every file the edit touches, with its text before and after.
    pub plan: EditPlan,
    /// The content hash of each touched file before the edit (pass back to apply).
    pub hashes: BTreeMap<String, String>,
    /// Whether it was written.
    pub applied: bool,
    /// The command the server runs for it (a code action's), by title.
    pub command: Option<String>,
    /// Files the server's command changed (through `workspace/applyEdit`), relative.
    pub command_files: Vec<String>,
    /// After applying: each touched file checked again.
    pub checks: Vec<CheckResult>,
}

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

/// Why a rename or code action was not done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditFailure {
    /// The question itself could not be asked.
    #[error(transparent)]
    Nav(#[from] NavError),
    /// No server for the file offers it.
    #[error("{servers} {} not offer {what} for {file}", if .servers.contains(", ") { "do" } else { "does" })]
    NotOffered {
        what: &'static str,
        file: String,
        servers: String,
    },
    /// The server says it cannot be done here, or gave nothing to do.
    #[error("{0}")]
    Refused(String),
    /// The server failed to answer.
    #[error("{server} failed: {error}")]
    Server { server: String, error: String },
    /// The edit cannot be applied (outside the workspace, stale ranges, missing files).
    #[error("{0}")]
    Edit(#[from] EditError),
    /// Files changed since the preview.
    #[error("{} changed since the preview; nothing was written; preview again", .0.join(", "))]
    Stale(Vec<String>),
    /// Writing failed.
    #[error("{0}")]
    Write(String),
}

impl Squiggle {
    /// Renames the symbol at `target` in `file` to `new_name` across the workspace: a preview
    /// (the files and their diff) or, with [`EditMode::Apply`], the edit written and checked.
    pub async fn rename(
        &self,
        file: impl AsRef<Path>,
        target: Target,
        new_name: &str,
        mode: EditMode,
    ) -> Result<Answer<EditOutcome>, EditFailure> {
        if new_name.trim().is_empty() {
            return Err(EditFailure::Refused("`new_name` is empty".to_string()));
        }
        let target = target.validated()?.clone();
        let (path, relative, text, server, mut notes) = self
            .edit_server(file.as_ref(), "rename", |p| p.edits.rename)
            .await?;
        let (line, column) = self
            .resolve_target(&server, &path, &relative, &text, &target, &mut notes)
            .await?;
        let line_text = text.lines().nth(line as usize - 1).unwrap_or_default();
        let subject = word_at(line_text, column);
        let place = format!(
            "`{}` at {relative}:{line}:{column}",
            subject.as_deref().unwrap_or("the symbol")
        );
        let position = TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri_of(&path) },
            position: Position::new(
                line - 1,
                lsp_character(line_text, column, server.info.encoding),
            ),
        };
        let id = server.key.id.clone();
        if server.info.provides.edits.prepare_rename {
            match self
                .edit_request(&server, EditRequest::PrepareRename(position.clone()))
                .await
            {
                Ok(EditAnswer::PrepareRename(Some(_))) => {}
                Ok(_) => {
                    return Err(EditFailure::Refused(format!(
                        "{id} says {place} cannot be renamed"
                    )))
                }
                Err(error) => {
                    return Err(EditFailure::Refused(format!(
                        "{id} says {place} cannot be renamed: {error}"
                    )))
                }
            }
        }
        let request = EditRequest::Rename {
            position,
            new_name: new_name.to_string(),
        };
        let edit = match self.edit_request(&server, request).await {
            Ok(EditAnswer::Rename(Some(edit))) => edit,
            Ok(_) => {
                return Err(EditFailure::Refused(format!(
                    "{id} found nothing to rename at {place}"
                )))
            }
            Err(error) => return Err(EditFailure::Server { server: id, error }),
        };
        let outcome = self
            .carry_out(&edit, server.info.encoding, mode.clone())
            .await?;
        if outcome.plan.changed().next().is_none() {
            notes.push(format!("{id} returned an edit that changes nothing"));
        }
        Ok(Answer {
            items: outcome,
            position: Some((line, column)),
            subject,
            notes,
        })
    }

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
                (self.resolve_target(first, &path, &relative, &text, symbol, &mut notes)).await?
            }
        };
        let last = end_line.unwrap_or(line).max(line);
        let lines: Vec<&str> = text.lines().collect();
        let end_column = lines
            .get(last as usize - 1)
            .map_or(1, |l| l.chars().count() as u32 + 1);
        let diagnostics: Vec<Diagnostic> = (checked.diagnostics.into_iter())
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
            let context = (diagnostics.iter())
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
        let actions: Vec<ActionInfo> = (offered.iter().enumerate())
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
            let written = self.run_command(server, command).await?;
            outcome.command_files = written
                .iter()
                .map(|path| self.relative_path(path))
                .collect();
            outcome.checks.extend(self.sync_written(&written).await);
        }
        Ok(outcome)
    }

    /// Runs a command on the server; returns the files its `workspace/applyEdit` requests
    /// wrote meanwhile.
    async fn run_command(
        &self,
        server: &Ready,
        command: Command,
    ) -> Result<Vec<PathBuf>, EditFailure> {
        if !server.info.provides.edits.execute_command {
            return Err(EditFailure::NotOffered {
                what: "commands",
                file: command.command,
                servers: server.key.id.clone(),
            });
        }
        let before = server.info.applied.take();
        if !before.is_empty() {
            self.sync_written(&before).await;
        }
        let ran = self
            .edit_request(server, EditRequest::ExecuteCommand(command))
            .await;
        let written = server.info.applied.take();
        match ran {
            Ok(_) => Ok(written),
            Err(error) => {
                self.sync_written(&written).await;
                Err(EditFailure::Server {
                    server: server.key.id.clone(),
                    error,
                })
            }
        }
    }

    /// Plans an edit on disk; with [`EditMode::Apply`] writes it (refused when a file changed
    /// since the preview) and checks the files it changed.
    async fn carry_out(
        &self,
        edit: &WorkspaceEdit,
        encoding: PositionEncoding,
        mode: EditMode,
    ) -> Result<EditOutcome, EditFailure> {
        let root = self.inner.workspace_root.clone();
        let limit = self.inner.config.max_file_bytes;
        let owned = edit.clone();
        let plan = tokio::task::spawn_blocking(move || {
            edit_files::plan_on_disk(&owned, &root, encoding, limit)
        })
        .await
        .map_err(|err| EditFailure::Write(err.to_string()))??;
        let hashes = plan.hashes();
        let EditMode::Apply { expect } = mode else {
            return Ok(EditOutcome {
                plan,
                hashes,
                ..EditOutcome::default()
            });
        };
        if let Some(expect) = expect {
            let stale = plan.stale(&expect);
            if !stale.is_empty() {
                return Err(EditFailure::Stale(stale));
            }
        }
        let root = self.inner.workspace_root.clone();
        let (plan, written) = tokio::task::spawn_blocking(move || {
            let written = edit_files::write_plan(&plan, &root);
            (plan, written)
        })
        .await
        .map_err(|err| EditFailure::Write(err.to_string()))?;
        let written = written.map_err(EditFailure::Write)?;
        let checks = self.sync_written(&written).await;
        Ok(EditOutcome {
            plan,
            hashes,
            applied: true,
            checks,
            ..EditOutcome::default()
        })
    }

    /// Tells the servers about files just written: each existing one is checked (synced to
    /// every server for its type, with fresh diagnostics); a deleted one is closed. With
    /// several files, they are all synced first and then checked again, so that no file's
    /// answer comes from a server that had not yet heard of another's change.
    async fn sync_written(&self, written: &[PathBuf]) -> Vec<CheckResult> {
        let mut existing = Vec::new();
        for path in written {
            if path.exists() {
                existing.push(path);
            } else {
                self.close_file(path).await;
            }
        }
        let check_all =
            || futures::future::join_all(existing.iter().map(|p| self.check_file(p, None)));
        let first = check_all().await;
        if existing.len() < 2 {
            return first;
        }
        check_all().await
    }

    /// The file to edit and the first ready server for it that offers `what`, with the file
    /// open on it as it is on disk.
    async fn edit_server(
        &self,
        file: &Path,
        what: &'static str,
        offers: impl Fn(&crate::server::navigate::Provides) -> bool,
    ) -> Result<(PathBuf, String, std::sync::Arc<str>, Ready, Vec<String>), EditFailure> {
        let (path, relative, text, servers, notes) = self.edit_servers(file, what, offers).await?;
        let server = servers
            .into_iter()
            .next()
            .ok_or_else(|| EditFailure::Refused(format!("no server for {relative} took it")))?;
        Ok((path, relative, text, server, notes))
    }

    /// The file to edit and the ready servers for it that offer `what` (at least one), with
    /// the file open on each as it is on disk.
    async fn edit_servers(
        &self,
        file: &Path,
        what: &'static str,
        offers: impl Fn(&crate::server::navigate::Provides) -> bool,
    ) -> Result<
        (
            PathBuf,
            String,
            std::sync::Arc<str>,
            Vec<Ready>,
            Vec<String>,
        ),
        EditFailure,
    > {
        let (path, relative, text) = self.open_target(file).await?;
        let (ready, mut notes) = self.ready_servers(&path, &relative, |_| true).await?;
        let ids: Vec<String> = ready.iter().map(|r| r.key.id.clone()).collect();
        let offering: Vec<Ready> = ready
            .into_iter()
            .filter(|r| offers(&r.info.provides))
            .collect();
        if offering.is_empty() {
            if ids.is_empty() {
                return Err(EditFailure::Refused(format!(
                    "no server for {relative} is ready: {}",
                    notes.join("; ")
                )));
            }
            return Err(EditFailure::NotOffered {
                what,
                file: relative,
                servers: ids.join(", "),
            });
        }
        let mut servers = Vec::new();
        for server in offering {
            let Some(server_text) = self.open_on(&server, &path, &text, &mut notes).await else {
                notes.push(format!("{} did not take {relative}", server.key.id));
                continue;
            };
            if *server_text != *text {
                // The server has an older copy: give it the file as it is on disk first.
                self.check_file(&path, None).await;
            }
            self.note_busy(&server, &mut notes).await;
            servers.push(server);
        }
        if servers.is_empty() {
            return Err(EditFailure::Refused(notes.join("; ")));
        }
        Ok((path, relative, text, servers, notes))
    }

    /// Sends a refactoring request to one server and waits for its answer or error.
    async fn edit_request(
        &self,
        server: &Ready,
        request: EditRequest,
    ) -> Result<EditAnswer, String> {
        let message = |reply| ServerMsg::Navigate {
            request: NavRequest::Edit(Box::new(request)),
            reply,
        };
        match ask(&server.server, message, EDIT_LIMIT).await {
            Some(Ok(NavAnswer::Edit(answer))) => Ok(*answer),
            Some(Ok(_)) => Err("an answer of the wrong kind".to_string()),
            Some(Err(error)) => Err(error),
            None => Err(format!("no answer within {} s", EDIT_LIMIT.as_secs())),
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
