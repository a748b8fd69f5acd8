//! What the server actor does: each message's work on its [`Connection`] (syncing texts and
//! waiting for their diagnostics, pulls and their answers, navigation requests, the handshake's
//! outcome, probes, shutdown). The policies are pure modules ([`super::document_sync`],
//! [`super::pull_state`], [`super::open_set`], [`super::lifecycle`]); this is their I/O.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_lsp::lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, InitializeResult, TextDocumentContentChangeEvent,
    TextDocumentIdentifier, TextDocumentItem, VersionedTextDocumentIdentifier,
};
use async_lsp::LanguageServer;
use ractor::{ActorRef, RpcReplyPort};
use squiggle_protocol::{convert_diagnostics, paths};
use tokio::time::Instant;

use super::document_sync::{Notice, SyncError};
use super::lifecycle::{HandshakeError, Save};
use super::liveness::{self, Verdict};
use super::navigate::{self, NavAnswer, NavRequest};
use super::pull::{self, Pulled};
use super::pull_state::{PullFailure, PullStep};
use super::request_error::RequestError;
use super::{probe, queued, tsserver};
use super::{Connection, Opened, ServerMsg};
use super::{EXIT_TIMEOUT, MAX_BACKLOG, REQUEST_TIMEOUT, SHUTDOWN_TIMEOUT};
use crate::diagnostics::completion::{CheckPart, Traits};
use crate::diagnostics::{DiagnosticsMsg, Freshness, Source};

/// What the server actor does for its messages (each arm of `handle` that is more than a
/// forward).
impl Connection {
    /// Why a check fails at once rather than add to the pile, when the server is far behind
    /// reading what it was sent.
    pub(super) fn behind(&self) -> Option<String> {
        let waiting = self.backlog.bytes();
        (waiting > MAX_BACKLOG).then(|| {
            format!(
                "the server is not keeping up: {} MiB of messages wait to be written to it",
                waiting >> 20
            )
        })
    }

    /// Opens a document for a navigation question: its text when it is open already, else
    /// synced like a check's text but with no didSave, which would set off a save's work
    /// (rust-analyzer's cargo check).
    pub(super) fn open_document(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        path: PathBuf,
        text: Arc<str>,
        deadline: Instant,
    ) -> Result<Opened, SyncError> {
        if let Some(text) = self.document_sync.get(&path).map(|doc| doc.text) {
            self.open.touch(&path);
            return Ok(Opened::Already(text));
        }
        let (done, answer) = ractor::concurrency::oneshot();
        self.sync_and_wait(myself, path, text, false, deadline, done.into())
            .map(|()| Opened::Now(answer))
    }

    /// Sends a navigation request and answers `reply` with the server's answer (or a timeout);
    /// the document asked about stays open until then.
    pub(super) fn navigate(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        request: NavRequest,
        reply: RpcReplyPort<Result<NavAnswer, RequestError>>,
    ) {
        let held = request
            .document()
            .and_then(|uri| paths::uri_to_path(uri.as_str()))
            .map(PathBuf::from)
            .filter(|path| self.documents.contains_key(path));
        if let Some(path) = &held {
            self.open.hold(path);
        }
        let answer = navigate::send(&self.socket, request);
        let me = myself.clone();
        tokio::spawn(async move {
            let answer = queued::within(REQUEST_TIMEOUT, answer).await;
            let _ = reply.send(answer);
            if let Some(path) = held {
                let _ = me.cast(ServerMsg::Release { path, took: None });
            }
        });
    }

    /// Takes the handshake's outcome: a ready server is announced to the registry; a failed
    /// handshake stops the actor, with the server's last stderr words in the reason.
    pub(super) fn initialized(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        outcome: Result<Box<InitializeResult>, HandshakeError>,
    ) {
        match outcome {
            Ok(result) => {
                self.life.initialized(&result.capabilities);
                tracing::debug!(server = %self.key.id, root = %self.key.root.display(), encoding = ?self.encoding.get(), "server initialized");
                self.registry.server_up(self.key.clone(), self.pid);
            }
            // Its handshake failed with its exit, which the registry is deciding on.
            Err(_) if self.lost => {}
            Err(error) => {
                let reason = match self.stderr.reason_line() {
                    Some(line) => format!("{error}: {line}"),
                    None => error.to_string(),
                };
                myself.stop(Some(reason));
            }
        }
    }

    /// Pings a ready server (after a check ran out of time) unless a ping is in flight; the
    /// outcome comes back as [`ServerMsg::Probed`]. A server is hung only when nothing at all
    /// comes from it, not even a late answer to the ping, for the window [`liveness::verdict`]
    /// gives it (longer while it has work-done progress in flight): a busy server is not a
    /// hung one.
    pub(super) fn probe(&mut self, myself: &ActorRef<ServerMsg>) {
        if self.probing || !self.life.is_ready() {
            return;
        }
        self.probing = true;
        let heard = self.heard.clone();
        let before = heard.count();
        let busy = self.busy.clone();
        let mut answer = probe::send(&self.socket);
        let sent = Instant::now();
        let me = myself.clone();
        // The server's process group (it leads its own), for the CPU time it uses meanwhile.
        let group = self.pid;
        let cpu = move || group.and_then(liveness::group_cpu_ticks);
        let cpu_at_ping = cpu();
        tokio::spawn(async move {
            let hung = loop {
                let silent_for = sent.elapsed();
                let computing = (cpu_at_ping.zip(cpu())).is_some_and(|(then, now)| now > then);
                let working = busy
                    .doing()
                    .or_else(|| computing.then(|| "using CPU time".to_owned()));
                match liveness::verdict(silent_for, heard.count() != before, working.as_deref()) {
                    Verdict::Alive => break None,
                    Verdict::Hung(reason) => break Some(reason),
                    Verdict::Wait(wait) => {
                        if tokio::time::timeout(wait, &mut answer).await.is_ok() {
                            break None;
                        }
                    }
                }
            };
            let _ = me.cast(ServerMsg::Probed(hung));
        });
    }

    /// Takes a ping's outcome: a server that stayed silent is stopped (and so restarted).
    pub(super) fn probed(&mut self, myself: &ActorRef<ServerMsg>, silent: Option<String>) {
        self.probing = false;
        if let Some(reason) = silent {
            if !self.life.is_stopping() {
                tracing::warn!(server = %self.key.id, %reason);
                myself.stop(Some(reason));
            }
        }
    }

    /// Shuts the server down (shutdown, exit, then its process group killed; a server still in
    /// its handshake is killed at once), answers `reply`, and stops the actor.
    pub(super) fn shutdown(&mut self, myself: ActorRef<ServerMsg>, reply: RpcReplyPort<()>) {
        let graceful = self.life.stop();
        let mut socket = self.socket.clone();
        let group = self.group.clone();
        let mut exited = self.exited.clone();
        tokio::spawn(async move {
            if graceful {
                let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, socket.shutdown(())).await;
                let _ = socket.exit(());
                let _ = tokio::time::timeout(EXIT_TIMEOUT, exited.wait_for(|e| *e)).await;
            }
            group.kill();
            let _ = reply.send(());
            myself.stop(None);
        });
    }
}

impl Connection {
    /// How this server says that its diagnostics for a version are final, for a text that is
    /// on disk (`saved`) or not: a build check on save sees only the disk.
    pub(super) fn traits(&self, saved: bool) -> Traits {
        let wants_save = self.life.offers().save != Save::Skip;
        let check = match (&self.spec.check_progress, saved && wants_save) {
            (None, _) => CheckPart::None,
            (Some(_), true) => CheckPart::Awaited,
            (Some(_), false) => CheckPart::Unseen,
        };
        Traits {
            pull: self.pulls_diagnostics(),
            stages: self.spec.stages,
            settle: self.settle,
            check,
        }
    }

    /// How long a pull of `path` sent now may take: as long as the latest check waiting for
    /// it still waits, and at least the usual request time.
    pub(super) fn pull_limit(&mut self, path: &Path) -> Duration {
        self.wanted.limit(path, Instant::now(), REQUEST_TIMEOUT)
    }

    /// Whether documents' diagnostics are pulled (LSP pull, or through tsserver).
    pub(super) fn pulls_diagnostics(&self) -> bool {
        self.life.offers().pull || self.spec.tsserver_pull
    }

    /// Syncs a text and has the store answer `reply` once the server's diagnostics for it are
    /// final (or at `deadline`). The wait is registered before the change is sent, so no answer
    /// for it is missed, and the document stays open until the answer.
    pub(super) fn sync_and_wait(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        path: PathBuf,
        text: Arc<str>,
        saved: bool,
        deadline: Instant,
        reply: RpcReplyPort<Freshness>,
    ) -> Result<(), SyncError> {
        let wait = DiagnosticsMsg::WaitFresh {
            key: self.key.clone(),
            path: path.clone(),
            version: self.document_sync.next_version(&path),
            traits: self.traits(saved),
            deadline,
            reply: self.hold_until_answered(myself, &path, reply),
        };
        let _ = self.diagnostics.cast(wait);
        // Every pull of the document may take as long as the check waits (a cold project on a
        // busy machine can take tsserver or pyright past the usual request time), and never
        // less than that.
        self.wanted.wait(&path, deadline);
        let synced = self.sync(path.clone(), text, saved);
        if synced.is_ok() {
            let limit = self.pull_limit(&path);
            self.pull(myself, path, 0, limit);
        }
        self.trim();
        synced.map(|_| ())
    }

    /// Keeps a document open until the store answers `reply` (the answer goes on to it), then
    /// lets it go; returns the port the store answers.
    pub(super) fn hold_until_answered(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        path: &Path,
        reply: RpcReplyPort<Freshness>,
    ) -> RpcReplyPort<Freshness> {
        self.open.hold(path);
        let (forward, answer) = ractor::concurrency::oneshot();
        let me = myself.clone();
        let path = path.to_path_buf();
        let began = Instant::now();
        tokio::spawn(async move {
            if let Ok(freshness) = answer.await {
                let _ = reply.send(freshness);
            }
            let took = Some(began.elapsed());
            let _ = me.cast(ServerMsg::Release { path, took });
        });
        forward.into()
    }

    /// Closes the least recently used documents nothing is using, down to the bound.
    pub(super) fn trim(&mut self) {
        for path in self.open.overflow() {
            tracing::debug!(server = %self.key.id, path = %path.display(), open = self.open.len(), "closing the least recently used document");
            self.close(&path);
        }
    }

    /// Sends didOpen (version 1) or a full-text didChange (version + 1), then didSave when the
    /// file on disk holds the text (`saved`) and the server wants it.
    pub(super) fn sync(
        &mut self,
        path: PathBuf,
        text: Arc<str>,
        saved: bool,
    ) -> Result<i32, SyncError> {
        let save = self.life.offers().save;
        let synced = self.document_sync.sync(&path, text, saved, save)?;
        self.open.synced(&path, saved);
        self.pull_state.changed(&path);
        for notice in synced.notices {
            self.notify(&path, notice)
                .map_err(|reason| SyncError::NotConnected {
                    server: self.key.id.clone(),
                    reason: reason.into(),
                })?;
        }
        Ok(synced.version)
    }

    /// Sends the server a notification about the document at `path`.
    pub(super) fn notify(&mut self, path: &Path, notice: Notice) -> Result<(), async_lsp::Error> {
        match notice {
            Notice::Open { uri, version, text } => {
                let extension = path
                    .extension()
                    .map(|e| e.to_string_lossy().to_lowercase())
                    .unwrap_or_default();
                self.socket.did_open(DidOpenTextDocumentParams {
                    text_document: TextDocumentItem {
                        uri,
                        language_id: self.spec.language_id_for(&extension),
                        version,
                        text: text.to_string(),
                    },
                })
            }
            Notice::Change { uri, version, text } => {
                self.socket.did_change(DidChangeTextDocumentParams {
                    text_document: VersionedTextDocumentIdentifier { uri, version },
                    content_changes: vec![TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.to_string(),
                    }],
                })
            }
            Notice::Save { uri, text } => self.socket.did_save(DidSaveTextDocumentParams {
                text_document: TextDocumentIdentifier { uri },
                text: text.map(|text| text.to_string()),
            }),
            Notice::Close { uri } => self.socket.did_close(DidCloseTextDocumentParams {
                text_document: TextDocumentIdentifier { uri },
            }),
        }
    }
}

/// A pull as it was asked: the document, its version, which attempt, and whether the server was
/// ready then.
#[derive(Debug)]
pub(super) struct PullAsked {
    path: PathBuf,
    version: i32,
    attempt: u8,
    ready: bool,
}

impl Connection {
    /// Pulls a document's diagnostics (when the server offers that), waiting at most `limit`;
    /// the answer comes back as a message. Until it does, the server counts as busy, so waits
    /// do not settle without it.
    pub(super) fn pull(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        path: PathBuf,
        attempt: u8,
        limit: Duration,
    ) {
        if !self.pulls_diagnostics() {
            return;
        }
        let Some(doc) = self.document_sync.get(&path) else {
            return;
        };
        let (uri, version) = (doc.uri, doc.version);
        let previous = self.pull_state.previous_result_id(&path);
        let answer = if self.spec.tsserver_pull {
            tsserver::request(&self.socket, &uri)
        } else {
            pull::request(&self.socket, &self.pulls, uri, previous)
        };
        let pull = PullAsked {
            path,
            version,
            attempt,
            ready: self.busy.ready(),
        };
        self.busy.pulling(true);
        let me = myself.clone();
        tokio::spawn(async move {
            let answer = queued::within(limit, answer).await;
            let _ = me.cast(ServerMsg::PullAnswered { pull, answer });
        });
    }

    /// Takes a pull's answer: hands its diagnostics to the store (or pulls again when the
    /// server asked for that), then lifts the busy mark of the pull.
    pub(super) fn pulled(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        pull: PullAsked,
        answer: Result<Pulled, RequestError>,
    ) {
        let PullAsked {
            path,
            version,
            attempt,
            ready,
        } = pull;
        let current = self.document_sync.get(&path).map(|doc| doc.version);
        match self
            .pull_state
            .on_answer(&path, current, version, attempt, answer)
        {
            PullStep::Ignore => {}
            PullStep::RetryAfter(delay, attempt) => {
                myself.send_after(delay, move || ServerMsg::Pull { path, attempt });
            }
            PullStep::Publish(items) => {
                let text = self.document_sync.get(&path).map(|doc| doc.text);
                let relative = paths::relative_to(&self.workspace_root, &path);
                let encoding = self.encoding.get().copied().unwrap_or_default();
                let mut diagnostics =
                    convert_diagnostics(items, &relative, text.as_deref(), encoding);
                self.spec.to_build_severity(&mut diagnostics);
                self.publish_pulled(path, version, ready, diagnostics);
            }
            PullStep::StillPulled => {
                let _ = self.diagnostics.cast(DiagnosticsMsg::StillPulled {
                    key: self.key.clone(),
                    path,
                    version,
                    ready,
                });
            }
            PullStep::Failed(failure) => self.pull_failed(path, version, failure),
        }
        // Sent after the diagnostics: the store sees them before the server turns idle.
        self.busy.pulling(false);
    }

    /// Tells the store (which ends the waits that have nothing else) and the registry (for the
    /// status) that a pull failed, with the server's error.
    pub(super) fn pull_failed(&self, path: PathBuf, version: i32, failure: PullFailure) {
        let reason = format!("pull diagnostics failed: {failure}");
        tracing::debug!(server = %self.key.id, %reason);
        self.registry.note(self.key.clone(), reason.clone());
        let _ = self.diagnostics.cast(DiagnosticsMsg::PullFailed {
            key: self.key.clone(),
            path,
            version,
            reason,
        });
    }

    /// Hands a pull's answer for `version` to the store (`ready`: asked while the server was
    /// ready, so its answer for the text).
    pub(super) fn publish_pulled(
        &self,
        path: PathBuf,
        version: i32,
        ready: bool,
        diagnostics: Vec<squiggle_protocol::Diagnostic>,
    ) {
        let _ = self.diagnostics.cast(DiagnosticsMsg::Publish {
            key: self.key.clone(),
            path,
            version: Some(version),
            source: Source::Pull,
            ready,
            diagnostics,
        });
    }

    /// Sends didSave for an open document when the server asked for it.
    pub(super) fn save(&mut self, path: &Path) {
        if let Some(notice) = self.document_sync.save(path, self.life.offers().save) {
            let _ = self.notify(path, notice);
        }
    }

    /// Closes the documents whose last check was costly, but `keep`, before an edit of `keep`
    /// is synced: the server need not analyse them again for it. Only on a server squiggle
    /// pulls (LSP pull diagnostics), whose reports on its open documents after a change to
    /// another come when squiggle asks again; one that publishes reports on them by itself
    /// (typescript-language-server), and a document closed there would miss the errors the
    /// edit makes in it. Not for a server with a check on save either: what its checks take
    /// is mostly the build's, not the document's. Returns those closed.
    pub(super) fn close_costly(&mut self, keep: &Path) -> Vec<PathBuf> {
        if !self.life.offers().pull || self.spec.check_progress.is_some() {
            return Vec::new();
        }
        let costly = self.open.costly_besides(keep);
        for path in &costly {
            tracing::debug!(server = %self.key.id, path = %path.display(), "closing a document whose check was costly");
            self.close(path);
        }
        costly
    }

    /// Those of `paths` open here, when the server reports on its open documents by itself:
    /// one squiggle pulls does not (pyright and `tsc --lsp` answer for a document only when
    /// asked), and a document closed to keep the open set in bound is not reported on at all.
    pub(super) fn reports_on(&self, mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
        if self.life.offers().pull {
            return Vec::new();
        }
        paths.retain(|path| self.document_sync.get(path).is_some());
        paths
    }

    /// Sends didClose for an open document and forgets it.
    pub(super) fn close(&mut self, path: &Path) {
        let Some(notice) = self.document_sync.close(path) else {
            return;
        };
        self.open.remove(path);
        self.wanted.forget(path);
        // What was pulled for it no longer holds; pushed results are the server's to clear.
        if self.pull_state.closed(path) {
            let _ = self.diagnostics.cast(DiagnosticsMsg::Publish {
                key: self.key.clone(),
                path: path.to_path_buf(),
                version: None,
                source: Source::Pull,
                ready: true,
                diagnostics: Vec::new(),
            });
        }
        let _ = self.notify(path, notice);
    }
}
