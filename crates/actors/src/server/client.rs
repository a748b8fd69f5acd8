//! The client side of one LSP connection: answers the server's requests and routes every
//! notification, so that nothing the server sends can end the connection. (async-lsp 0.2.4's
//! router ends the main loop on a notification it has no handler for, but `$/` ones; its
//! `unhandled_notification` fallback, set in [`router`], logs and drops those instead.)

use std::borrow::Cow;
use std::future::ready;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use async_lsp::lsp_types::notification::{
    DidChangeWatchedFiles, LogMessage, Notification, Progress, PublishDiagnostics, ShowMessage,
};
use async_lsp::lsp_types::request::{
    DocumentDiagnosticRequest, RegisterCapability, Request, ShowMessageRequest,
    UnregisterCapability, WorkDoneProgressCreate, WorkspaceConfiguration,
    WorkspaceDiagnosticRefresh, WorkspaceFoldersRequest,
};
use async_lsp::lsp_types::{
    DidChangeWatchedFilesRegistrationOptions, ProgressParams, Registration, Unregistration, Url,
    WorkspaceFolder,
};
use async_lsp::router::Router;
use async_lsp::AnyNotification;
use ractor::ActorRef;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use squiggle_protocol::publish::{self, Publish};
use squiggle_protocol::{convert_diagnostics, paths, PositionEncoding};

use crate::diagnostics::{DiagnosticsMsg, Source};
use crate::key::ServerKey;
use crate::server::documents::Documents;
use crate::server::progress::Busy;
use crate::server::pull_stash::Stash;
use crate::server::ServerHandle;
use crate::watcher::WatcherHandle;
use squiggle_protocol::watch::WatchPattern;

/// rust-analyzer's notification of whether it has finished its work.
const SERVER_STATUS: &str = "experimental/serverStatus";

/// What tells one incoming message from another, read without building its params.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<IgnoredAny>,
}

/// A notification with typed params.
#[derive(Deserialize)]
struct Note<P> {
    params: P,
}

/// rust-analyzer's `experimental/serverStatus` params (the part squiggle reads).
#[derive(Deserialize)]
struct ServerStatusParams {
    quiescent: bool,
}

/// What the client loop needs to know about its server.
#[derive(Debug, Clone)]
pub struct ClientContext {
    /// Which server this connection belongs to.
    pub key: ServerKey,
    /// The workspace root, resolved; published files outside it are ignored.
    pub workspace_root: PathBuf,
    /// The server's open documents.
    pub documents: Documents,
    /// The position encoding the server picked (UTF-16 until initialize says otherwise).
    pub encoding: Arc<OnceLock<PositionEncoding>>,
    /// The server's spec: its `settings` answer `workspace/configuration`, and it gives what
    /// the server publishes the build's severity.
    pub spec: Arc<squiggle_config::ServerSpec>,
    /// Where published diagnostics go.
    pub diagnostics: ActorRef<DiagnosticsMsg>,
    /// Files larger than this are not read to convert positions.
    pub max_file_bytes: u64,
    /// The work-done progress the server reports.
    pub busy: Busy,
    /// The server actor this connection belongs to.
    pub server: ServerHandle,
    /// Where file-watcher registrations go.
    pub watcher: WatcherHandle,
    /// Pull answers read on the fast path, until their request's future takes them (see
    /// `pull_stash`).
    pub pulls: Arc<Stash>,
    /// Files written for the server's `workspace/applyEdit` requests.
    pub applied: crate::server::refactor::Applied,
    /// Woken by every capability registration (a server that is ready only then waits on it).
    pub registered: Arc<tokio::sync::Notify>,
}

/// What the fast path did with a message from the server.
pub enum Fast {
    /// Handled it: nothing goes on to async-lsp.
    Taken,
    /// Kept what it said: this (small) message goes on to async-lsp in its place.
    Replaced(Vec<u8>),
    /// Not one of its messages: it goes on to async-lsp as it is.
    Passed,
}

/// Builds the router for a server connection.
pub fn router(ctx: ClientContext) -> Router<ClientContext> {
    let mut router = Router::new(ctx);
    router
        .request::<WorkspaceConfiguration, _>(|ctx, params| {
            let values = params
                .items
                .iter()
                .map(|item| {
                    squiggle_config::settings_section(
                        ctx.spec.settings.as_ref(),
                        item.section.as_deref(),
                    )
                })
                .collect();
            ready(Ok(values))
        })
        .request::<RegisterCapability, _>(|ctx, params| {
            ctx.on_register(params.registrations);
            ready(Ok(()))
        })
        .request::<UnregisterCapability, _>(|ctx, params| {
            ctx.on_unregister(params.unregisterations);
            ready(Ok(()))
        })
        .request::<WorkDoneProgressCreate, _>(|_, _| ready(Ok(())))
        .request::<WorkspaceDiagnosticRefresh, _>(|ctx, _| {
            ctx.server.repull();
            ready(Ok(()))
        })
        .request::<ShowMessageRequest, _>(|_, _| ready(Ok(None)))
        .request::<WorkspaceFoldersRequest, _>(|ctx, _| {
            let folder = Url::parse(&paths::path_to_uri(&ctx.key.root.to_string_lossy()))
                .ok()
                .map(|uri| {
                    vec![WorkspaceFolder {
                        uri,
                        name: ctx.key.root_name(),
                    }]
                });
            ready(Ok(folder))
        })
        .request::<async_lsp::lsp_types::request::ApplyWorkspaceEdit, _>(|ctx, params| {
            ctx.apply_edit(params.edit)
        })
        .unhandled_notification(|ctx, notification| {
            ctx.on_notification(notification);
            ControlFlow::Continue(())
        });
    router
}

impl ClientContext {
    /// Applies an edit the server asks for, only while an apply its caller asked for runs
    /// (else it is answered `applied: false`: see [`crate::server::refactor::Applied`]) and
    /// only inside the workspace root (a file outside it is answered `applied: false` with the
    /// reason); the files written are kept for squiggle to sync with every server.
    fn apply_edit(
        &self,
        edit: async_lsp::lsp_types::WorkspaceEdit,
    ) -> impl std::future::Future<
        Output = Result<async_lsp::lsp_types::ApplyWorkspaceEditResponse, async_lsp::ResponseError>,
    > + Send
           + 'static {
        let root = self.workspace_root.clone();
        let root_for_record = root.clone();
        let encoding = self.encoding.get().copied().unwrap_or_default();
        let limit = self.max_file_bytes;
        let applied = self.applied.clone();
        let server = self.key.id.clone();
        async move {
            if !applied.is_asked() {
                tracing::warn!(%server, "refused an edit the server sent unasked");
                return Ok(async_lsp::lsp_types::ApplyWorkspaceEditResponse {
                    applied: false,
                    failure_reason: Some(crate::server::refactor::NOT_ASKED.to_string()),
                    failed_change: None,
                });
            }
            let outcome = tokio::task::spawn_blocking(move || {
                crate::edit_files::apply_on_disk(&edit, &root, encoding, limit)
            })
            .await
            .unwrap_or_else(|err| Err(crate::edit_files::WriteError::Interrupted(err.to_string())));
            let (done, reason) = match outcome {
                Ok(written) => {
                    tracing::debug!(%server, files = written.len(), "applied the server's edit");
                    applied.record(written);
                    (true, None)
                }
                Err(reason) => {
                    tracing::warn!(%server, %reason, "refused the server's edit");
                    // Files written before a failed one are on disk: squiggle syncs them too.
                    if let crate::edit_files::WriteError::Write { written, .. } = &reason {
                        applied.record(written.iter().map(|file| root_for_record.join(file)));
                    }
                    applied.refused(reason.to_string());
                    (false, Some(reason.to_string()))
                }
            };
            Ok(async_lsp::lsp_types::ApplyWorkspaceEditResponse {
                applied: done,
                failure_reason: reason,
                failed_change: None,
            })
        }
    }

    fn on_notification(&self, notification: AnyNotification) {
        // The diagnostics path (publish, progress, status) never gets here: the pump takes it.
        let server = &self.key.id;
        match notification.method.as_str() {
            LogMessage::METHOD | ShowMessage::METHOD => {
                let message = notification.params.get("message").and_then(Value::as_str);
                tracing::debug!(%server, message = message.unwrap_or_default(), "server message");
            }
            method => tracing::debug!(%server, method, "ignoring notification"),
        }
    }

    /// Handles a message on the diagnostics path (publishDiagnostics, `$/progress`,
    /// rust-analyzer's serverStatus, the answer to a pull) straight from its bytes: one typed
    /// parse instead of async-lsp's generic one plus a conversion.
    pub fn take_fast(&self, body: &[u8]) -> Fast {
        // Publishes are most of what servers send: read them in one pass when they say so early.
        if publish::looks_like_publish(body) {
            if let Ok(publish) = publish::parse_publish(body) {
                self.on_publish(publish);
                return Fast::Taken;
            }
        }
        // So are pull answers, for servers that are pulled.
        if publish::looks_like_pull_answer(body) {
            if let Ok((id, report)) = publish::parse_pull_answer(body) {
                return Fast::Replaced(self.pulls.stand_in(&id, report));
            }
        }
        let Ok(head) = serde_json::from_slice::<Head<'_>>(body) else {
            return Fast::Passed;
        };
        if head.id.is_some() {
            return Fast::Passed;
        }
        let server = &self.key.id;
        match head.method.as_deref() {
            Some(PublishDiagnostics::METHOD) => match publish::parse_publish(body) {
                Ok(publish) => self.on_publish(publish),
                Err(err) => tracing::warn!(%server, %err, "ignoring malformed publishDiagnostics"),
            },
            Some(Progress::METHOD) => match serde_json::from_slice::<Note<ProgressParams>>(body) {
                Ok(note) => self.work_changed(self.busy.update(note.params)),
                Err(err) => tracing::debug!(%server, %err, "ignoring malformed $/progress"),
            },
            Some(SERVER_STATUS) => match serde_json::from_slice::<Note<ServerStatusParams>>(body) {
                Ok(note) => {
                    let was_ready = self.busy.ready();
                    let changed = self.busy.set_quiescent(note.params.quiescent);
                    if !was_ready && self.busy.ready() {
                        // What was pulled before it loaded its project is not its answer.
                        self.server.work_done();
                    } else {
                        self.work_changed(changed);
                    }
                }
                Err(err) => tracing::debug!(%server, %err, "ignoring malformed serverStatus"),
            },
            _ => return Fast::Passed,
        }
        Fast::Taken
    }

    /// When the server finished its work, pulls what it has open again: what was pulled while
    /// it worked may be out of date.
    fn work_changed(&self, changed: Option<bool>) {
        if changed == Some(false) {
            self.server.work_done();
        }
    }

    /// Takes the registrations squiggle acts on (file watchers, pull diagnostics); every
    /// registration is acknowledged, whatever it is.
    fn on_register(&self, registrations: Vec<Registration>) {
        self.registered.notify_one();
        for registration in registrations {
            match registration.method.as_str() {
                DidChangeWatchedFiles::METHOD => {
                    let options = registration.register_options.unwrap_or_default();
                    let watchers = match serde_json::from_value::<
                        DidChangeWatchedFilesRegistrationOptions,
                    >(options)
                    {
                        Ok(options) => options.watchers,
                        Err(err) => {
                            tracing::warn!(server = %self.key.id, %err, "ignoring malformed file watcher registration");
                            continue;
                        }
                    };
                    let patterns = watchers
                        .iter()
                        .filter_map(|watcher| {
                            WatchPattern::new(watcher)
                                .map_err(|err| tracing::warn!(server = %self.key.id, %err, "ignoring a file watcher"))
                                .ok()
                        })
                        .collect();
                    let server = Arc::new(self.server.clone());
                    self.watcher
                        .register(self.key.clone(), server, registration.id, patterns);
                }
                DocumentDiagnosticRequest::METHOD => {
                    self.server.pull_registered();
                }
                method => {
                    tracing::debug!(server = %self.key.id, method, "registration acknowledged")
                }
            }
        }
    }

    fn on_unregister(&self, unregistrations: Vec<Unregistration>) {
        for unregistration in unregistrations {
            if unregistration.method == DidChangeWatchedFiles::METHOD {
                self.watcher.unregister(self.key.clone(), unregistration.id);
            }
        }
    }

    fn on_publish(&self, params: Publish) {
        let Some(path) = paths::uri_to_path(params.uri.as_str()) else {
            tracing::debug!(server = %self.key.id, uri = %params.uri, "ignoring diagnostics for a non-file URI");
            return;
        };
        // Documents squiggle opened come back under the (resolved) path it sent.
        let path = PathBuf::from(path);
        let path = if self.documents.contains_key(&path) {
            path
        } else {
            paths::resolve_under(&self.workspace_root, &path)
        };
        if !paths::is_document_in(&self.workspace_root, &path) {
            tracing::debug!(server = %self.key.id, uri = %params.uri, "ignoring diagnostics for no document of the workspace");
            return;
        }
        let text = match self.documents.get(&path) {
            Some(doc) => Some(doc.text.clone()),
            None => self.read_text(&path),
        };
        let encoding = self.encoding.get().copied().unwrap_or_default();
        let relative = paths::relative_to(&self.workspace_root, &path);
        let mut diagnostics =
            convert_diagnostics(params.diagnostics, &relative, text.as_deref(), encoding);
        self.spec.to_build_severity(&mut diagnostics);
        tracing::debug!(server = %self.key.id, file = %relative, version = ?params.version, count = diagnostics.len(), "published");
        if tracing::enabled!(tracing::Level::TRACE) {
            let at: Vec<String> = (diagnostics.iter())
                .map(|d| format!("{}:{}:{:?}", d.line, d.column, d.severity))
                .collect();
            tracing::trace!(server = %self.key.id, file = %relative, at = %at.join(" "), "published at");
        }
        let _ = self.diagnostics.cast(DiagnosticsMsg::Publish {
            key: self.key.clone(),
            path,
            version: params.version,
            source: Source::Push,
            ready: true,
            diagnostics,
        });
    }

    /// Reads a file the server diagnosed without it being open, to convert its positions: only
    /// a regular file within `max_file_bytes`, so a FIFO or device never stalls the loop.
    fn read_text(&self, path: &Path) -> Option<Arc<str>> {
        let content = squiggle_config::read_regular_file(path, self.max_file_bytes).ok()?;
        String::from_utf8(content).ok().map(Arc::from)
    }
}
