//! The server actor: owns one language-server process for one root, performs the handshake,
//! keeps its documents in sync, and shuts it down. What it decides lives in pure modules
//! beside it (`lifecycle`, `open_set`, `document_sync`, `pull_state`); the actor forwards
//! messages to them and does the I/O they call for.

mod capabilities;
mod client;
mod document_sync;
mod documents;
mod lifecycle;
pub mod navigate;
mod open_set;
mod probe;
mod process;
mod progress;
mod pull;
mod pull_state;
mod pump;
mod queued;
pub mod refactor;
pub mod request_error;
mod sidecar;
mod stderr;
mod stdin_queue;
mod tsserver;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_lsp::lsp_types::{
    DidChangeConfigurationParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams, FileEvent,
    InitializeResult, InitializedParams, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, VersionedTextDocumentIdentifier,
};
use async_lsp::{LanguageServer, MainLoop, ServerSocket};
use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SpawnErr};
use squiggle_config::ServerSpec;
use squiggle_protocol::{convert_diagnostics, paths, PositionEncoding};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::ask::ask;
use crate::diagnostics::completion::Traits;
use crate::diagnostics::DiagnosticsMsg;
use crate::diagnostics::{Freshness, Source};
use crate::key::ServerKey;
use crate::watchdog::Watchdog;
use crate::watcher::{Listener, WatcherHandle};
use client::ClientContext;
use document_sync::{DocumentSync, Notice, SyncError};
use documents::Documents;
use lifecycle::{HandshakeError, Lifecycle};
use navigate::{NavAnswer, NavRequest, Provides};
use open_set::OpenSet;
use process::ProcessGroup;
use progress::Busy;
use pull::Pulled;
use pull_state::{PullFailure, PullState, PullStep};
use request_error::RequestError;
use stderr::StderrTail;

/// How long a server gets to answer `shutdown`.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a server gets to exit after `exit`.
const EXIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Messages of the server actor.
#[derive(Debug)]
enum ServerMsg {
    /// Open or change a document to this full text, then save it if `saved` (the file holds
    /// it); the diagnostics store answers `reply` when the server's diagnostics for it are
    /// fresh (or at `deadline`).
    Sync {
        path: PathBuf,
        text: Arc<str>,
        saved: bool,
        deadline: Instant,
        reply: RpcReplyPort<Freshness>,
    },
    /// Open a document with this text unless it is open (for a question about it, so with no
    /// didSave); replies with the text the server has, or with the wait for the server's final
    /// diagnostics of the text just opened (ended by `deadline`): a server answers questions
    /// about a project it has loaded.
    Open {
        path: PathBuf,
        text: Arc<str>,
        deadline: Instant,
        reply: RpcReplyPort<Result<Opened, SyncError>>,
    },
    /// What the server answers, its position encoding, and what it is busy with.
    Info(RpcReplyPort<ServerInfo>),
    /// A navigation request; replies with the server's answer within the request deadline.
    Navigate {
        request: NavRequest,
        reply: RpcReplyPort<Result<NavAnswer, RequestError>>,
    },
    /// The sidecar failed or stopped (sent by the sidecar's task).
    SidecarFailed(String),
    /// Tell the server about files that changed on disk (from the watcher).
    WatchedFiles(Vec<FileEvent>),
    /// The server registered pull diagnostics.
    PullRegistered,
    /// Pull a document's diagnostics (again: `attempt` counts retriggers).
    Pull { path: PathBuf, attempt: u8 },
    /// The server asked for all pull diagnostics again (`workspace/diagnostic/refresh`).
    Repull,
    /// The server finished its work: what was pulled while it worked may be out of date, so
    /// each open document is pulled again, once per version. (Some servers report progress
    /// while they answer a pull; pulling again after every such end never stops.)
    WorkDone,
    /// A pull ended (sent by the pull task): its answer, or why there is none.
    PullAnswered {
        path: PathBuf,
        version: i32,
        attempt: u8,
        answer: Result<Pulled, RequestError>,
    },
    /// Send `didSave` for an open document, if the server wants it.
    Save { path: PathBuf },
    /// Send `didClose` for an open document and forget it.
    Close { path: PathBuf },
    /// A check or question is done with a document (sent by the task that forwards its
    /// answer): it may be closed now to keep the open set within its bound.
    Release { path: PathBuf },
    /// The initialize handshake ended (sent by the actor's handshake task).
    Initialized(Result<Box<InitializeResult>, HandshakeError>),
    /// The process exited or its connection ended (sent by the actor's own tasks).
    Exited(String),
    /// A check got nothing before its deadline: ask something every live server answers, and
    /// stop the server as broken when it does not answer in time (a hung or stopped process).
    Probe,
    /// The probe's outcome (sent by the probe task): None when the server answered.
    Probed(Option<String>),
    /// Shut the server down gracefully; replies when its process group is gone.
    Shutdown(RpcReplyPort<()>),
}

/// A server actor as the rest of the runtime talks to it (the registry, checks and questions,
/// its connection, its sidecar, the watcher): its messages stay in this module.
#[derive(Debug, Clone)]
pub struct ServerHandle(ActorRef<ServerMsg>);

impl ServerHandle {
    /// Spawns a server actor, supervised by `supervisor` (the registry's actor).
    pub async fn spawn_linked(args: ServerArgs, supervisor: ActorCell) -> Result<Self, SpawnErr> {
        let (actor, _) = ServerActor::spawn_linked(None, ServerActor, args, supervisor).await?;
        Ok(Self(actor))
    }

    /// The actor's id, as supervision events name it.
    pub fn id(&self) -> ActorId {
        self.0.get_id()
    }

    /// Opens or changes a document to this full text, then saves it if `saved`; returns where
    /// the store answers when the server's diagnostics for it are fresh (or at `deadline`), or
    /// None when the server is gone.
    pub fn sync(
        &self,
        path: PathBuf,
        text: Arc<str>,
        saved: bool,
        deadline: Instant,
    ) -> Option<ractor::concurrency::OneshotReceiver<Freshness>> {
        let (reply, answer) = ractor::concurrency::oneshot();
        let sync = ServerMsg::Sync {
            path,
            text,
            saved,
            deadline,
            reply: reply.into(),
        };
        self.0.cast(sync).ok().map(|()| answer)
    }

    /// Opens a document with this text unless it is open (see [`ServerMsg::Open`]); None when
    /// the server does not answer within `limit`.
    pub async fn open(
        &self,
        path: PathBuf,
        text: Arc<str>,
        deadline: Instant,
        limit: Duration,
    ) -> Option<Result<Opened, SyncError>> {
        let open = |reply| ServerMsg::Open {
            path,
            text,
            deadline,
            reply,
        };
        ask(&self.0, open, limit).await
    }

    /// What the server answers, its position encoding, and what it is busy with; None when it
    /// does not say within `limit`.
    pub async fn info(&self, limit: Duration) -> Option<ServerInfo> {
        ask(&self.0, ServerMsg::Info, limit).await
    }

    /// A navigation request: the server's answer, or why there is none (no answer, not even
    /// an error, within `limit` is a timeout).
    pub async fn navigate(
        &self,
        request: NavRequest,
        limit: Duration,
    ) -> Result<NavAnswer, RequestError> {
        let message = |reply| ServerMsg::Navigate { request, reply };
        ask(&self.0, message, limit)
            .await
            .unwrap_or(Err(RequestError::timeout(limit)))
    }

    /// Sends `didSave` for an open document, if the server wants it.
    pub fn save(&self, path: PathBuf) {
        let _ = self.0.cast(ServerMsg::Save { path });
    }

    /// Sends `didClose` for an open document.
    pub fn close(&self, path: PathBuf) {
        let _ = self.0.cast(ServerMsg::Close { path });
    }

    /// A check got nothing before its deadline: stop the server as broken unless it answers
    /// a ping in time.
    pub fn probe(&self) {
        let _ = self.0.cast(ServerMsg::Probe);
    }

    /// Shuts the server down gracefully within `limit`, else kills it; returns once the actor
    /// stopped (or a second more passed).
    pub async fn shutdown(&self, limit: Duration) {
        let asked = self.0.call(ServerMsg::Shutdown, Some(limit)).await;
        if !matches!(asked, Ok(ractor::rpc::CallResult::Success(()))) {
            self.0.kill();
        }
        let _ = self
            .0
            .stop_and_wait(None, Some(Duration::from_secs(1)))
            .await;
    }

    /// Files changed on disk (from the watcher): told to the server.
    pub fn watched_files(&self, events: Vec<FileEvent>) {
        let _ = self.0.cast(ServerMsg::WatchedFiles(events));
    }

    /// The server registered pull diagnostics.
    pub fn pull_registered(&self) {
        let _ = self.0.cast(ServerMsg::PullRegistered);
    }

    /// The server asked for all pull diagnostics again.
    pub fn repull(&self) {
        let _ = self.0.cast(ServerMsg::Repull);
    }

    /// The server finished its work.
    pub fn work_done(&self) {
        let _ = self.0.cast(ServerMsg::WorkDone);
    }

    /// The sidecar failed or stopped, and why.
    pub fn sidecar_failed(&self, reason: String) {
        let _ = self.0.cast(ServerMsg::SidecarFailed(reason));
    }

    /// The process exited or its connection ended, and why.
    pub fn exited(&self, reason: String) {
        let _ = self.0.cast(ServerMsg::Exited(reason));
    }
}

impl Listener for ServerHandle {
    fn watched_files(&self, events: Vec<FileEvent>) {
        ServerHandle::watched_files(self, events);
    }
}

/// What a server tells whoever started it (the registry), which it knows only by this.
pub trait Supervisor: Send + Sync + std::fmt::Debug {
    /// The server finished its handshake.
    fn server_up(&self, key: ServerKey, pid: Option<u32>);
    /// Something a host should know about the running server (its sidecar failed, a pull
    /// failed); shown as the reason in its status.
    fn note(&self, key: ServerKey, note: String);
}

/// How [`ServerMsg::Open`] found a document.
#[derive(Debug)]
pub enum Opened {
    /// It was open already, with this text.
    Already(Arc<str>),
    /// It is opened now; the store answers here when the server's diagnostics for it are final.
    Now(ractor::concurrency::OneshotReceiver<Freshness>),
}

/// What a server can do and is doing, for navigation.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// The navigation requests it answers.
    pub provides: Provides,
    /// How it counts columns.
    pub encoding: PositionEncoding,
    /// What it is busy with (work-done progress titles), if anything.
    pub busy: Option<String>,
    /// Files the server's `workspace/applyEdit` requests wrote, until taken.
    pub applied: refactor::Applied,
}

/// How long a navigation request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Past this many bytes waiting to be written to a server, new checks are refused: it is not
/// keeping up, and more work would only grow squiggle's memory.
const MAX_BACKLOG: usize = 64 * 1024 * 1024;
/// How long a server gets to answer the liveness probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a server actor is started with.
#[derive(Debug)]
pub struct ServerArgs {
    /// Which server, for which root.
    pub key: ServerKey,
    /// How to run it.
    pub spec: ServerSpec,
    /// The located executable.
    pub program: PathBuf,
    /// The workspace root, resolved.
    pub workspace_root: PathBuf,
    /// The registry, told when the server is ready.
    pub registry: Arc<dyn Supervisor>,
    /// The diagnostics store.
    pub diagnostics: ActorRef<DiagnosticsMsg>,
    /// How long `initialize` may take.
    pub init_timeout: Duration,
    /// Files larger than this are not read to convert positions.
    pub max_file_bytes: u64,
    /// The guard that kills the server's group should squiggle be killed outright.
    pub watchdog: Option<Arc<Watchdog>>,
    /// Where file-watcher registrations go.
    pub watcher: WatcherHandle,
    /// The quiet time for this server's diagnostics.
    pub settle: Duration,
    /// The most documents kept open.
    pub max_open_documents: usize,
}

/// The server actor.
#[derive(Debug)]
struct ServerActor;

/// The state of a server actor: its process and connection.
#[derive(Debug)]
pub struct Connection {
    key: ServerKey,
    spec: ServerSpec,
    registry: Arc<dyn Supervisor>,
    socket: ServerSocket,
    /// The open documents (read here; written only through `document_sync`).
    documents: Documents,
    /// The documents' versions, and what each sync, save and close sends.
    document_sync: DocumentSync,
    encoding: Arc<OnceLock<PositionEncoding>>,
    group: Arc<ProcessGroup>,
    pid: Option<u32>,
    exited: watch::Receiver<bool>,
    stderr: StderrTail,
    /// Starting, ready (with what it offers) or stopping.
    life: Lifecycle,
    workspace_root: PathBuf,
    diagnostics: ActorRef<DiagnosticsMsg>,
    /// The quiet time for this server's diagnostics.
    settle: Duration,
    /// Per document: the last pull's result id, and whether to pull it again when the server
    /// finishes its work.
    pull_state: PullState,
    /// Pull answers the stdout pump read on the fast path.
    pulls: Arc<pull::Stash>,
    /// The open documents in order of use, and which are in use; bounds how many stay open.
    open: OpenSet,
    busy: Busy,
    /// Whether a liveness probe is in flight.
    probing: bool,
    /// The bytes waiting to be written to the server.
    backlog: stdin_queue::Backlog,
    /// Files the server's `workspace/applyEdit` requests wrote.
    applied: refactor::Applied,
}

impl Actor for ServerActor {
    type Msg = ServerMsg;
    type State = Connection;
    type Arguments = ServerArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: ServerArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let ServerArgs {
            key,
            spec,
            program,
            workspace_root,
            registry,
            diagnostics,
            init_timeout,
            max_file_bytes,
            watchdog,
            watcher,
            settle,
            max_open_documents,
        } = args;
        let (mut child, group) =
            process::spawn(&program, &spec.args, &key.root, &spec.env, watchdog)
                .map_err(|err| format!("cannot start `{}`: {err}", program.display()))?;
        let group = Arc::new(group);
        if let Some(command) = &spec.sidecar {
            sidecar::start(
                command,
                &group,
                &key.root,
                &workspace_root,
                &spec.env,
                ServerHandle(myself.clone()),
            );
        }
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the server's stdio was not captured".into());
        };
        let (stderr, stderr_done) = StderrTail::capture(stderr, key.id.clone());

        let documents = Documents::default();
        let busy = Busy::new(key.clone(), diagnostics.clone());
        let pulls = Arc::new(pull::Stash::default());
        let diagnostics_store = diagnostics.clone();
        let encoding = Arc::new(OnceLock::new());
        let applied = refactor::Applied::default();
        let context = ClientContext {
            applied: applied.clone(),
            _keep_alive: ServerSocket::new_closed(),
            key: key.clone(),
            workspace_root: workspace_root.clone(),
            documents: documents.clone(),
            encoding: encoding.clone(),
            settings: spec.settings.clone(),
            diagnostics,
            max_file_bytes,
            busy: busy.clone(),
            server: ServerHandle(myself.clone()),
            watcher,
            pulls: pulls.clone(),
        };
        let fast_path = context.clone();
        let (main_loop, socket) = MainLoop::new_client(|socket| {
            client::router(ClientContext {
                _keep_alive: socket,
                ..context
            })
        });
        let clean_stdout = pump::guard_stdout(stdout, fast_path);
        // Writing never holds up reading (see `stdin_queue`); a message is one write to the pipe.
        let (stdin, backlog) = stdin_queue::spawn(stdin);
        let (exited_tx, exited) = watch::channel(false);
        let me = myself.clone();
        let process_exit = exited.clone();
        tokio::spawn(async move {
            let ended = main_loop
                .run_buffered(clean_stdout.compat(), stdin.compat_write())
                .await;
            if exits_soon(process_exit).await {
                return; // The process exit, reported with its status, is the better reason.
            }
            let reason = match ended {
                Ok(()) => "the connection ended".to_string(),
                Err(err) => format!("the connection ended: {err}"),
            };
            let _ = me.cast(ServerMsg::Exited(reason));
        });

        let me = myself.clone();
        let tail = stderr.clone();
        let reaped = group.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            // Whatever the server left in its group goes with it.
            reaped.retire();
            let _ = exited_tx.send(true);
            // Let the stderr reader catch the last words before describing the exit.
            let _ = tokio::time::timeout(Duration::from_millis(200), stderr_done).await;
            let mut reason = match status {
                Ok(status) => format!("the server exited ({status})"),
                Err(err) => format!("the server could not be waited for: {err}"),
            };
            if let Some(line) = tail.reason_line() {
                reason.push_str(": ");
                reason.push_str(&line);
            }
            let _ = me.cast(ServerMsg::Exited(reason));
        });

        let params = capabilities::initialize_params(&key, &spec);
        let mut handshake = socket.clone();
        let negotiated = encoding.clone();
        let settings = spec.settings.clone();
        let me = myself.clone();
        let process_exit = exited.clone();
        tokio::spawn(async move {
            let outcome =
                match tokio::time::timeout(init_timeout, handshake.initialize(params)).await {
                    Ok(Ok(result)) => {
                        // Set before `initialized`: the server may publish right after it.
                        let kind = result.capabilities.position_encoding.as_ref();
                        let _ = negotiated.set(PositionEncoding::from_kind(kind));
                        let settled =
                            handshake.initialized(InitializedParams {}).and_then(
                                |()| match settings {
                                    Some(settings) => handshake.did_change_configuration(
                                        DidChangeConfigurationParams { settings },
                                    ),
                                    None => Ok(()),
                                },
                            );
                        match settled {
                            Ok(()) => Ok(Box::new(result)),
                            Err(err) => Err(HandshakeError::NotSent(err.into())),
                        }
                    }
                    Ok(Err(err)) => Err(HandshakeError::Refused(err.into())),
                    Err(_) => Err(HandshakeError::TimedOut(init_timeout)),
                };
            if outcome.is_err() && exits_soon(process_exit).await {
                return; // The process exit, reported with its status, is the better reason.
            }
            let _ = me.cast(ServerMsg::Initialized(outcome));
        });

        Ok(Connection {
            key,
            spec,
            registry,
            socket,
            document_sync: DocumentSync::new(documents.clone()),
            documents,
            encoding,
            group,
            pid,
            exited,
            stderr,
            life: Lifecycle::starting(),
            workspace_root,
            diagnostics: diagnostics_store,
            settle,
            pull_state: PullState::default(),
            pulls,
            open: OpenSet::new(max_open_documents),
            busy,
            probing: false,
            backlog,
            applied,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        conn: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ServerMsg::Sync {
                path,
                text,
                saved,
                deadline,
                reply,
            } => {
                let waiting = conn.backlog.bytes();
                if waiting > MAX_BACKLOG {
                    let reason = format!(
                        "the server is not keeping up: {} MiB of messages wait to be written to it",
                        waiting >> 20
                    );
                    let _ = reply.send(Freshness::Failed(reason));
                    return Ok(());
                }
                let synced = conn.sync_and_wait(&myself, path, text, saved, deadline, reply);
                if let Err(reason) = synced {
                    // The connection is gone; the store ends the wait when the server is.
                    tracing::debug!(server = %conn.key.id, %reason, "sync failed");
                }
            }
            ServerMsg::WatchedFiles(changes) => {
                let _ = conn
                    .socket
                    .did_change_watched_files(DidChangeWatchedFilesParams { changes });
            }
            ServerMsg::PullRegistered => {
                // Documents opened before the registration are pulled now.
                conn.life.pull_registered();
                let _ = myself.cast(ServerMsg::Repull);
            }
            ServerMsg::SidecarFailed(reason) => {
                if !conn.life.is_stopping() {
                    conn.registry.note(conn.key.clone(), reason);
                }
            }
            ServerMsg::Pull { path, attempt } => conn.pull(&myself, path, attempt, REQUEST_TIMEOUT),
            ServerMsg::WorkDone => {
                // Only what changed since the last time: a cost per change, not per document.
                for path in conn.pull_state.work_done() {
                    conn.pull(&myself, path, 0, REQUEST_TIMEOUT);
                }
            }
            ServerMsg::Repull => {
                for path in conn.document_sync.open_paths() {
                    conn.pull(&myself, path, 0, REQUEST_TIMEOUT);
                }
            }
            ServerMsg::PullAnswered {
                path,
                version,
                attempt,
                answer,
            } => {
                conn.pulled(&myself, path, version, attempt, answer);
            }
            ServerMsg::Open {
                path,
                text,
                deadline,
                reply,
            } => {
                if let Some(text) = conn.document_sync.get(&path).map(|doc| doc.text) {
                    conn.open.touch(&path);
                    let _ = reply.send(Ok(Opened::Already(text)));
                    return Ok(());
                }
                // Like a check's sync, but with no didSave, which would set off a save's work
                // (rust-analyzer's cargo check).
                let (done, answer) = ractor::concurrency::oneshot();
                let opened = conn
                    .sync_and_wait(&myself, path, text, false, deadline, done.into())
                    .map(|()| Opened::Now(answer));
                let _ = reply.send(opened);
            }
            ServerMsg::Info(reply) => {
                let _ = reply.send(ServerInfo {
                    provides: conn.life.offers().provides,
                    encoding: conn.encoding.get().copied().unwrap_or_default(),
                    busy: conn.busy.doing(),
                    applied: conn.applied.clone(),
                });
            }
            ServerMsg::Navigate { request, reply } => {
                // The document asked about stays open until the server answered.
                let held = (request.document())
                    .and_then(|uri| paths::uri_to_path(uri.as_str()))
                    .map(PathBuf::from)
                    .filter(|path| conn.documents.contains_key(path));
                if let Some(path) = &held {
                    conn.open.hold(path);
                }
                let answer = navigate::send(&conn.socket, request);
                let me = myself.clone();
                tokio::spawn(async move {
                    let answer = match tokio::time::timeout(REQUEST_TIMEOUT, answer).await {
                        Ok(answer) => answer,
                        Err(_) => Err(RequestError::timeout(REQUEST_TIMEOUT)),
                    };
                    let _ = reply.send(answer);
                    if let Some(path) = held {
                        let _ = me.cast(ServerMsg::Release { path });
                    }
                });
            }
            ServerMsg::Save { path } => conn.save(&path),
            ServerMsg::Close { path } => conn.close(&path),
            ServerMsg::Release { path } => {
                conn.open.release(&path);
                conn.trim();
            }
            ServerMsg::Initialized(Ok(result)) => {
                conn.life.initialized(&result.capabilities);
                tracing::debug!(server = %conn.key.id, root = %conn.key.root.display(), encoding = ?conn.encoding.get(), "server initialized");
                conn.registry.server_up(conn.key.clone(), conn.pid);
            }
            ServerMsg::Initialized(Err(error)) => {
                let reason = match conn.stderr.reason_line() {
                    Some(line) => format!("{error}: {line}"),
                    None => error.to_string(),
                };
                myself.stop(Some(reason));
            }
            ServerMsg::Exited(reason) => {
                if !conn.life.is_stopping() {
                    myself.stop(Some(reason));
                }
            }
            ServerMsg::Probe => {
                if conn.probing || !conn.life.is_ready() {
                    return Ok(());
                }
                conn.probing = true;
                let answer = probe::send(&conn.socket);
                let me = myself.clone();
                tokio::spawn(async move {
                    let silent = tokio::time::timeout(PROBE_TIMEOUT, answer).await.is_err();
                    let reason = silent.then(|| {
                        format!(
                            "not responding: no answer to a ping within {} s after a check ran out of time",
                            PROBE_TIMEOUT.as_secs()
                        )
                    });
                    let _ = me.cast(ServerMsg::Probed(reason));
                });
            }
            ServerMsg::Probed(silent) => {
                conn.probing = false;
                if let Some(reason) = silent {
                    if !conn.life.is_stopping() {
                        tracing::warn!(server = %conn.key.id, %reason);
                        myself.stop(Some(reason));
                    }
                }
            }
            ServerMsg::Shutdown(reply) => {
                let graceful = conn.life.stop();
                let mut socket = conn.socket.clone();
                let group = conn.group.clone();
                let mut exited = conn.exited.clone();
                tokio::spawn(async move {
                    // A server still in its handshake gets no say: it is killed at once.
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
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        conn: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        conn.group.kill();
        Ok(())
    }
}

impl Connection {
    /// How this server says that its diagnostics for a version are final.
    fn traits(&self) -> Traits {
        Traits {
            pull: self.pulls_diagnostics(),
            stages: self.spec.stages,
            settle: self.settle,
        }
    }

    /// Whether documents' diagnostics are pulled (LSP pull, or through tsserver).
    fn pulls_diagnostics(&self) -> bool {
        self.life.offers().pull || self.spec.tsserver_pull
    }

    /// Syncs a text and has the store answer `reply` once the server's diagnostics for it are
    /// final (or at `deadline`). The wait is registered before the change is sent, so no answer
    /// for it is missed, and the document stays open until the answer.
    fn sync_and_wait(
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
            traits: self.traits(),
            deadline,
            reply: self.hold_until_answered(myself, &path, reply),
        };
        let _ = self.diagnostics.cast(wait);
        let synced = self.sync(path.clone(), text, saved);
        if synced.is_ok() {
            // The pull may take as long as the check waits (a cold project on a busy machine
            // can take tsserver past the usual request time), and never less than that.
            let limit = deadline.saturating_duration_since(Instant::now());
            self.pull(myself, path, 0, limit.max(REQUEST_TIMEOUT));
        }
        self.trim();
        synced.map(|_| ())
    }

    /// Keeps a document open until the store answers `reply` (the answer goes on to it), then
    /// lets it go; returns the port the store answers.
    fn hold_until_answered(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        path: &Path,
        reply: RpcReplyPort<Freshness>,
    ) -> RpcReplyPort<Freshness> {
        self.open.hold(path);
        let (forward, answer) = ractor::concurrency::oneshot();
        let me = myself.clone();
        let path = path.to_path_buf();
        tokio::spawn(async move {
            if let Ok(freshness) = answer.await {
                let _ = reply.send(freshness);
            }
            let _ = me.cast(ServerMsg::Release { path });
        });
        forward.into()
    }

    /// Closes the least recently used documents nothing is using, down to the bound.
    fn trim(&mut self) {
        for path in self.open.overflow() {
            tracing::debug!(server = %self.key.id, path = %path.display(), open = self.open.len(), "closing the least recently used document");
            self.close(&path);
        }
    }

    /// Sends didOpen (version 1) or a full-text didChange (version + 1), then didSave when the
    /// file on disk holds the text (`saved`) and the server wants it.
    fn sync(&mut self, path: PathBuf, text: Arc<str>, saved: bool) -> Result<i32, SyncError> {
        let save = self.life.offers().save;
        let synced = self.document_sync.sync(&path, text, saved, save)?;
        self.open.touch(&path);
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
    fn notify(&mut self, path: &Path, notice: Notice) -> Result<(), async_lsp::Error> {
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

impl Connection {
    /// Pulls a document's diagnostics (when the server offers that), waiting at most `limit`;
    /// the answer comes back as a message. Until it does, the server counts as busy, so waits
    /// do not settle without it.
    fn pull(&mut self, myself: &ActorRef<ServerMsg>, path: PathBuf, attempt: u8, limit: Duration) {
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
        self.busy.pulling(true);
        let me = myself.clone();
        tokio::spawn(async move {
            let answer = match tokio::time::timeout(limit, answer).await {
                Ok(answer) => answer,
                Err(_) => Err(RequestError::timeout(limit)),
            };
            let _ = me.cast(ServerMsg::PullAnswered {
                path,
                version,
                attempt,
                answer,
            });
        });
    }

    /// Takes a pull's answer: hands its diagnostics to the store (or pulls again when the
    /// server asked for that), then lifts the busy mark of the pull.
    fn pulled(
        &mut self,
        myself: &ActorRef<ServerMsg>,
        path: PathBuf,
        version: i32,
        attempt: u8,
        answer: Result<Pulled, RequestError>,
    ) {
        let current = self.document_sync.get(&path).map(|doc| doc.version);
        match (self.pull_state).on_answer(&path, current, version, attempt, answer) {
            PullStep::Ignore => {}
            PullStep::RetryAfter(delay, attempt) => {
                myself.send_after(delay, move || ServerMsg::Pull { path, attempt });
            }
            PullStep::Publish(items) => {
                let text = self.document_sync.get(&path).map(|doc| doc.text);
                let relative = paths::relative_to(&self.workspace_root, &path);
                let encoding = self.encoding.get().copied().unwrap_or_default();
                let diagnostics = convert_diagnostics(items, &relative, text.as_deref(), encoding);
                self.publish_pulled(path, version, diagnostics);
            }
            PullStep::StillPulled => {
                let _ = self.diagnostics.cast(DiagnosticsMsg::StillPulled {
                    key: self.key.clone(),
                    path,
                    version,
                });
            }
            PullStep::Failed(failure) => self.pull_failed(path, version, failure),
        }
        // Sent after the diagnostics: the store sees them before the server turns idle.
        self.busy.pulling(false);
    }

    /// Tells the store (which ends the waits that have nothing else) and the registry (for the
    /// status) that a pull failed, with the server's error.
    fn pull_failed(&self, path: PathBuf, version: i32, failure: PullFailure) {
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

    fn publish_pulled(
        &self,
        path: PathBuf,
        version: i32,
        diagnostics: Vec<squiggle_protocol::Diagnostic>,
    ) {
        let _ = self.diagnostics.cast(DiagnosticsMsg::Publish {
            key: self.key.clone(),
            path,
            version: Some(version),
            source: Source::Pull,
            diagnostics,
        });
    }

    /// Sends didSave for an open document when the server asked for it.
    fn save(&mut self, path: &Path) {
        if let Some(notice) = self.document_sync.save(path, self.life.offers().save) {
            let _ = self.notify(path, notice);
        }
    }

    /// Sends didClose for an open document and forgets it.
    fn close(&mut self, path: &Path) {
        let Some(notice) = self.document_sync.close(path) else {
            return;
        };
        self.open.remove(path);
        // What was pulled for it no longer holds; pushed results are the server's to clear.
        if self.pull_state.closed(path) {
            let _ = self.diagnostics.cast(DiagnosticsMsg::Publish {
                key: self.key.clone(),
                path: path.to_path_buf(),
                version: None,
                source: Source::Pull,
                diagnostics: Vec::new(),
            });
        }
        let _ = self.notify(path, notice);
    }
}

/// Whether the process exits within a moment (when its connection failed, it usually does).
async fn exits_soon(mut exited: watch::Receiver<bool>) -> bool {
    let waited = tokio::time::timeout(Duration::from_millis(500), exited.wait_for(|e| *e)).await;
    matches!(waited, Ok(Ok(_)))
}
