//! Rename, and what rename and code actions share: an edit previewed as a plan by default,
//! applied on request only when no touched file changed since the preview, written atomically
//! inside the workspace, synced with the servers, and checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_lsp::lsp_types::{
    Position, TextDocumentIdentifier, TextDocumentPositionParams, WorkspaceEdit,
};
use squiggle_protocol::navigation::{word_at, EditError, EditPlan};
use squiggle_protocol::{lsp_character, PositionEncoding};

use super::{uri_of, Answer, NavError, Ready, Target};
use crate::check::CheckResult;
use crate::edit_files;
use crate::server::navigate::{NavAnswer, NavRequest};
use crate::server::refactor::{EditAnswer, EditRequest};
use crate::server::request_error::RequestError;
use crate::squiggle::Squiggle;

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
        /// Each touched file's content hash from the preview, if the apply is to check them.
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
    /// Why edits the server's command sent were refused (outside the workspace, stale).
    pub command_refused: Vec<String>,
    /// After an apply with `expect`: the files the preview touched that the apply did not.
    pub not_applied: Vec<String>,
    /// After applying: each touched file checked again.
    pub checks: Vec<CheckResult>,
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
        /// The request.
        what: &'static str,
        /// The file.
        file: String,
        /// The servers that run for it.
        servers: String,
    },
    /// The server says it cannot be done here, or gave nothing to do.
    #[error("{0}")]
    Refused(String),
    /// The server failed to answer.
    #[error("{server} failed: {error}")]
    Server {
        /// The server.
        server: String,
        /// How its request failed.
        error: RequestError,
    },
    /// The edit cannot be applied (outside the workspace, stale ranges, missing files).
    #[error("{0}")]
    Edit(#[from] EditError),
    /// Files changed since the preview.
    #[error("{} changed since the preview; nothing was written; preview again", .0.join(", "))]
    Stale(Vec<String>),
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] edit_files::WriteError),
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
    /// Plans an edit on disk; with [`EditMode::Apply`] writes it (refused when a file changed
    /// since the preview) and checks the files it changed.
    pub(super) async fn carry_out(
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
        .map_err(|err| edit_files::WriteError::Interrupted(err.to_string()))??;
        let hashes = plan.hashes();
        let EditMode::Apply { expect } = mode else {
            return Ok(EditOutcome {
                plan,
                hashes,
                ..EditOutcome::default()
            });
        };
        let mut not_applied = Vec::new();
        if let Some(expect) = expect {
            let stale = plan.stale(&expect);
            if !stale.is_empty() {
                return Err(EditFailure::Stale(stale));
            }
            // The server's answer now may touch fewer files than the preview showed.
            not_applied = expect
                .into_keys()
                .filter(|file| plan.files.iter().all(|change| change.file != *file))
                .collect();
        }
        let root = self.inner.workspace_root.clone();
        let touched = plan.changed_files().join(", ");
        let (plan, written) = tokio::task::spawn_blocking(move || {
            let written = edit_files::write_plan(&plan, &root);
            (plan, written)
        })
        .await
        .map_err(|err| {
            edit_files::WriteError::Interrupted(format!("{err}; it may have written {touched}"))
        })?;
        let written = match written {
            Ok(written) => written,
            Err(failure) => {
                // The files written before the failure are on disk: the servers hear of them.
                if let edit_files::WriteError::Write { written, .. } = &failure {
                    let root = &self.inner.workspace_root;
                    let paths: Vec<_> = written.iter().map(|file| root.join(file)).collect();
                    self.sync_written(&paths).await;
                }
                return Err(failure.into());
            }
        };
        let checks = self.sync_written(&written).await;
        Ok(EditOutcome {
            plan,
            hashes,
            applied: true,
            checks,
            not_applied,
            ..EditOutcome::default()
        })
    }

    /// Tells the servers about files just written: each existing one is checked (synced to
    /// every server for its type, with fresh diagnostics); a deleted one is closed. With
    /// several files, they are all synced first and then checked again, so that no file's
    /// answer comes from a server that had not yet heard of another's change.
    pub(super) async fn sync_written(&self, written: &[PathBuf]) -> Vec<CheckResult> {
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
    pub(super) async fn edit_server(
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
    pub(super) async fn edit_servers(
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
    pub(super) async fn edit_request(
        &self,
        server: &Ready,
        request: EditRequest,
    ) -> Result<EditAnswer, RequestError> {
        let request = NavRequest::Edit(Box::new(request));
        match server.server.navigate(request, EDIT_LIMIT).await? {
            NavAnswer::Edit(answer) => Ok(*answer),
            _ => Err(RequestError::Unusable(
                "an answer of the wrong kind".to_string(),
            )),
        }
    }
}
