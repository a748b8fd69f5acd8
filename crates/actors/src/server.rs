//! The server actor: owns one language-server process for one root, performs the handshake,
//! keeps its documents in sync, and shuts it down. What it decides lives in pure modules
//! beside it (`lifecycle`, `open_set`, `document_sync`, `pull_state`); the actor forwards
//! messages to them and does the I/O they call for.
//!
//! The connection is async-lsp 0.2.4's client main loop. What squiggle does about each of its
//! behaviours lives in one module, whose docs say why it stays:
//!
//! - the loop ends on the first bad frame: `pump` re-frames the server's stdout;
//! - it decodes every message generically, a big cost for pull answers: `pull_stash` keeps
//!   them and hands it a stand-in;
//! - it reads nothing while a write waits for a full pipe: `stdin_queue` takes every write;
//! - it panics when every socket to it is gone: `ends` holds one while it runs;
//! - its generic requests queue nothing until polled, and no request has a time limit:
//!   `queued`;
//! - its router ends the loop on an unknown notification: `client` sets the router's fallback.

mod capabilities;
mod client;
mod connection;
mod document_sync;
mod documents;
mod ends;
mod handshake;
mod lifecycle;
mod liveness;
pub mod navigate;
mod open_set;
mod probe;
mod process;
mod progress;
mod pull;
mod pull_stash;
mod pull_state;
mod pump;
mod queued;
pub mod refactor;
pub mod request_error;
mod sidecar;
mod stderr;
mod stdin_queue;
mod tsserver;
mod wanted;

pub(crate) use open_set::COSTLY;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_lsp::lsp_types::{DidChangeWatchedFilesParams, FileEvent, InitializeResult};
use async_lsp::{LanguageServer, MainLoop, ServerSocket};
use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SpawnErr};
use squiggle_config::ServerSpec;
use squiggle_protocol::PositionEncoding;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::ask::ask;
use crate::diagnostics::DiagnosticsMsg;
use crate::diagnostics::Freshness;
use crate::key::ServerKey;
use crate::watchdog::Watchdog;
use crate::watcher::{Listener, WatcherHandle};
use client::ClientContext;
use connection::PullAsked;
use document_sync::{DocumentSync, SyncError};
use documents::Documents;
use lifecycle::{HandshakeError, Lifecycle};
use navigate::{NavAnswer, NavRequest, Provides};
use open_set::OpenSet;
use process::ProcessGroup;
use progress::Busy;
use pull::Pulled;
use pull_state::PullState;
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
        pull: PullAsked,
        answer: Result<Pulled, RequestError>,
    },
    /// Send `didSave` for an open document, if the server wants it.
    Save { path: PathBuf },
    /// Send `didClose` for an open document and forget it.
    Close { path: PathBuf },
    /// Close the documents whose check was costly, but `keep` (an edit of it comes next), and
    /// answer with those closed.
    CloseCostly {
        keep: PathBuf,
        reply: RpcReplyPort<Vec<PathBuf>>,
    },
    /// Which of `paths` the server holds open and reports on by itself (it publishes: what it
    /// says of them stays current after a change to another file without being asked).
    ReportsOn {
        paths: Vec<PathBuf>,
        reply: RpcReplyPort<Vec<PathBuf>>,
    },
    /// A check or question is done with a document (sent by the task that forwards its
    /// answer; a check says how long it took): it may be closed now to keep the open set
    /// within its bound.
    Release {
        path: PathBuf,
        took: Option<Duration>,
    },
    /// The initialize handshake ended (sent by the actor's handshake task).
    Initialized(Result<Box<InitializeResult>, HandshakeError>),
    /// The process exited or its connection ended, and why (sent by the actor's own tasks);
    /// `clean` when the process exited with status 0.
    Exited { reason: String, clean: bool },
    /// A check got nothing before its deadline: ask something every live server answers, and
    /// stop the server as broken when nothing at all comes from it in time (a hung or stopped
    /// process; see `liveness`): a busy server is left to its work.
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

    /// Closes the open documents whose last check was costly, but `keep` (see the open set);
    /// those it closed (none when it does not say within `limit`).
    pub async fn close_costly(&self, keep: PathBuf, limit: Duration) -> Vec<PathBuf> {
        let message = |reply| ServerMsg::CloseCostly { keep, reply };
        ask(&self.0, message, limit).await.unwrap_or_default()
    }

    /// Which of `paths` the server holds open and reports on by itself (none when it does not
    /// say within `limit`): a server squiggle pulls reports on nothing unless asked.
    pub async fn reports_on(&self, paths: Vec<PathBuf>, limit: Duration) -> Vec<PathBuf> {
        let message = |reply| ServerMsg::ReportsOn { paths, reply };
        ask(&self.0, message, limit).await.unwrap_or_default()
    }

    /// A check got nothing before its deadline: stop the server as broken when it shows no
    /// sign of life (see `liveness`).
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
        let clean = false;
        let _ = self.0.cast(ServerMsg::Exited { reason, clean });
    }

    /// Stops the server as broken, for `reason` (the registry, for a start that did not
    /// happen and is not tried again).
    pub fn stop_broken(&self, reason: String) {
        self.0.stop(Some(reason));
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
    /// The process exited with status 0 before the handshake ended, for `reason`: `server`
    /// is to be started again or stopped as broken.
    fn start_lost(&self, key: ServerKey, server: ServerHandle, reason: String);
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
    pulls: Arc<pull_stash::Stash>,
    /// The open documents in order of use, and which are in use; bounds how many stay open.
    open: OpenSet,
    busy: Busy,
    /// Whether a liveness probe is in flight.
    probing: bool,
    /// Whether its process exited with status 0 before the handshake ended, and the registry
    /// was told: the registry stops it, or starts it again (see `Supervisor::start_lost`).
    lost: bool,
    /// How many messages the server has sent (what a probe takes as a sign of life).
    heard: liveness::Heard,
    /// Until when checks wait for each document's answer (how long its pulls may take).
    wanted: wanted::Wanted,
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
        if let Some(command) = spec.sidecar_command() {
            sidecar::start(
                &command,
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
        let busy = Busy::new(
            key.clone(),
            diagnostics.clone(),
            spec.ready_on_quiescent,
            spec.check_progress.as_deref(),
        );
        let pulls = Arc::new(pull_stash::Stash::default());
        let diagnostics_store = diagnostics.clone();
        let encoding = Arc::new(OnceLock::new());
        let applied = refactor::Applied::default();
        let registered = Arc::new(tokio::sync::Notify::new());
        let context = ClientContext {
            applied: applied.clone(),
            key: key.clone(),
            workspace_root: workspace_root.clone(),
            documents: documents.clone(),
            encoding: encoding.clone(),
            spec: Arc::new(spec.clone()),
            diagnostics,
            max_file_bytes,
            busy: busy.clone(),
            server: ServerHandle(myself.clone()),
            watcher,
            pulls: pulls.clone(),
            registered: registered.clone(),
        };
        let fast_path = context.clone();
        let (main_loop, socket) = MainLoop::new_client(|_| client::router(context));
        let heard = liveness::Heard::default();
        let clean_stdout = pump::guard_stdout(stdout, fast_path, heard.clone());
        // Writing never holds up reading (see `stdin_queue`); a message is one write to the pipe.
        let (stdin, backlog) = stdin_queue::spawn(stdin);
        let (exited_tx, exited) = watch::channel(false);
        let connection = main_loop.run_buffered(clean_stdout.compat(), stdin.compat_write());
        ends::watch_connection(connection, socket.clone(), exited.clone(), myself.clone());
        ends::reap(
            child,
            group.clone(),
            exited_tx,
            stderr_done,
            stderr.clone(),
            myself.clone(),
        );
        let handshake = handshake::Handshake {
            socket: socket.clone(),
            params: capabilities::initialize_params(&key, &spec),
            limit: init_timeout,
            settings: spec.settings.clone(),
            encoding: encoding.clone(),
            registered: spec.ready_on_registration.then_some(registered),
        };
        handshake.start(exited.clone(), myself.clone());

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
            lost: false,
            heard,
            wanted: wanted::Wanted::default(),
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
            } => match conn.behind() {
                Some(reason) => {
                    let _ = reply.send(Freshness::Failed(reason));
                }
                None => {
                    let synced = conn.sync_and_wait(&myself, path, text, saved, deadline, reply);
                    if let Err(reason) = synced {
                        // The connection is gone; the store ends the wait when the server is.
                        tracing::debug!(server = %conn.key.id, %reason, "sync failed");
                    }
                }
            },
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
            ServerMsg::Pull { path, attempt } => {
                let limit = conn.pull_limit(&path);
                conn.pull(&myself, path, attempt, limit);
            }
            ServerMsg::WorkDone => {
                // Only what changed since the last time: a cost per change, not per document.
                for path in conn.pull_state.work_done() {
                    let limit = conn.pull_limit(&path);
                    conn.pull(&myself, path, 0, limit);
                }
            }
            ServerMsg::Repull => {
                for path in conn.document_sync.open_paths() {
                    let limit = conn.pull_limit(&path);
                    conn.pull(&myself, path, 0, limit);
                }
            }
            ServerMsg::PullAnswered { pull, answer } => conn.pulled(&myself, pull, answer),
            ServerMsg::Open {
                path,
                text,
                deadline,
                reply,
            } => {
                let _ = reply.send(conn.open_document(&myself, path, text, deadline));
            }
            ServerMsg::Info(reply) => {
                let _ = reply.send(ServerInfo {
                    provides: conn.life.offers().provides,
                    encoding: conn.encoding.get().copied().unwrap_or_default(),
                    busy: conn.busy.doing(),
                    applied: conn.applied.clone(),
                });
            }
            ServerMsg::Navigate { request, reply } => conn.navigate(&myself, request, reply),
            ServerMsg::Save { path } => conn.save(&path),
            ServerMsg::Close { path } => conn.close(&path),
            ServerMsg::CloseCostly { keep, reply } => {
                let _ = reply.send(conn.close_costly(&keep));
            }
            ServerMsg::ReportsOn { paths, reply } => {
                let _ = reply.send(conn.reports_on(paths));
            }
            ServerMsg::Release { path, took } => {
                let now = std::time::Instant::now();
                let took = took.filter(|took| conn.open.warm(now, *took));
                conn.open.release(&path, took);
                conn.trim();
            }
            ServerMsg::Initialized(outcome) => conn.initialized(&myself, outcome),
            ServerMsg::Exited { reason, clean } => {
                if conn.life.is_stopping() || conn.lost {
                    // Stopping already, or the registry decides.
                } else if clean && !conn.life.is_ready() {
                    // Not a crash: the start did not happen (biome's `lsp-proxy` exits so
                    // when the daemon it connects to goes away under it). The registry starts
                    // it once more, or stops this actor as broken.
                    conn.lost = true;
                    let server = ServerHandle(myself.clone());
                    conn.registry.start_lost(conn.key.clone(), server, reason);
                } else {
                    myself.stop(Some(reason));
                }
            }
            ServerMsg::Probe => conn.probe(&myself),
            ServerMsg::Probed(silent) => conn.probed(&myself, silent),
            ServerMsg::Shutdown(reply) => conn.shutdown(myself, reply),
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
