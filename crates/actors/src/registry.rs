//! The registry actor: which servers run for which roots, starting each at most once (the
//! table in [`entries`]), and restarting a broken one as [`restarts`] allows.

pub mod entries;
pub mod restarts;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use squiggle_config::Config;
use squiggle_protocol::{paths, ServerState, ServerStatus};
use tokio::time::Instant;

use crate::ask::ask;
use crate::commands::Commands;
use crate::diagnostics::DiagnosticsMsg;
use crate::events::{Events, LspEvent};
use crate::key::ServerKey;
use crate::server::{ServerArgs, ServerHandle, Supervisor};
use crate::watchdog::Watchdog;
use crate::watcher::WatcherHandle;
use entries::{Acquire, Answer, Entries, Entry};
use restarts::{Decision, Limits, Restart, Restarts};

/// How long one server may take to shut down before it is killed.
const SERVER_SHUTDOWN_LIMIT: Duration = Duration::from_secs(8);

/// The servers that finished their handshake and still run, by key. Only the registry writes
/// it; checks read it without asking the registry, which keeps a message off their path.
pub type ActiveServers = Arc<DashMap<ServerKey, ServerHandle>>;

/// Messages of the registry actor.
#[derive(Debug)]
enum RegistryMsg {
    /// A ready server for this key, started if needed; callers during a start share it. A
    /// broken server is restarted when the restart policy lets `restart` start it.
    Acquire {
        key: ServerKey,
        restart: Restart,
        reply: RpcReplyPort<Acquired>,
    },
    /// Start the server for this key if it is not running, restarting a broken one when the
    /// policy allows an automatic restart; nobody waits for it.
    Warm { key: ServerKey },
    /// The servers squiggle has tried to use with this id (all when `None`), and their states.
    Keys {
        id: Option<String>,
        reply: RpcReplyPort<Vec<(ServerKey, ServerState)>>,
    },
    /// Something a host should know about a running server (its sidecar failed); shown as the
    /// reason in its status.
    Note { key: ServerKey, note: String },
    /// A server actor finished its handshake.
    ServerUp { key: ServerKey, pid: Option<u32> },
    /// A server's process exited with status 0 before its handshake ended (see
    /// [`Supervisor::start_lost`]).
    StartLost {
        key: ServerKey,
        server: ServerHandle,
        reason: String,
    },
    /// The status of every server squiggle has tried to use, sorted by id then root.
    Status(RpcReplyPort<Vec<ServerStatus>>),
    /// Stop every server gracefully; replies when all are gone.
    Shutdown(RpcReplyPort<()>),
    /// Stop these servers if they are active, and forget them (the next check starts them
    /// afresh, not as a restart); replies with those stopped, once they are gone.
    Retire {
        keys: Vec<ServerKey>,
        reply: RpcReplyPort<Vec<ServerKey>>,
    },
}

/// The registry actor as the rest of the runtime talks to it (squiggle, and a server through
/// [`Supervisor`]): its messages stay in this module.
#[derive(Debug, Clone)]
pub struct RegistryHandle(ActorRef<RegistryMsg>);

impl RegistryHandle {
    /// Spawns the registry actor.
    pub async fn spawn(args: RegistryArgs) -> Result<Self, ractor::SpawnErr> {
        let (actor, _) = Actor::spawn(None, RegistryActor, args).await?;
        Ok(Self(actor))
    }

    /// A ready server for this key, started if needed (see [`RegistryMsg::Acquire`]); None
    /// when there is no answer within `limit`.
    pub async fn acquire(
        &self,
        key: ServerKey,
        restart: Restart,
        limit: Duration,
    ) -> Option<Acquired> {
        let acquire = |reply| RegistryMsg::Acquire {
            key,
            restart,
            reply,
        };
        ask(&self.0, acquire, limit).await
    }

    /// Starts the server for this key if it is not running; nobody waits for it.
    pub fn warm(&self, key: ServerKey) {
        let _ = self.0.cast(RegistryMsg::Warm { key });
    }

    /// The servers squiggle has tried to use with this id (all when `None`), and their states.
    pub async fn keys(
        &self,
        id: Option<String>,
        limit: Duration,
    ) -> Option<Vec<(ServerKey, ServerState)>> {
        ask(&self.0, |reply| RegistryMsg::Keys { id, reply }, limit).await
    }

    /// The status of every server squiggle has tried to use, sorted by id then root.
    pub async fn status(&self, limit: Duration) -> Option<Vec<ServerStatus>> {
        ask(&self.0, RegistryMsg::Status, limit).await
    }

    /// Stops these servers if they are active and forgets them (see [`RegistryMsg::Retire`]);
    /// returns those stopped, or none when there is no answer within `limit`.
    pub async fn retire(&self, keys: Vec<ServerKey>, limit: Duration) -> Vec<ServerKey> {
        let retire = |reply| RegistryMsg::Retire { keys, reply };
        ask(&self.0, retire, limit).await.unwrap_or_default()
    }

    /// Stops every server gracefully, waiting at most `limit`, then stops the registry (waiting
    /// at most `stop_limit`).
    pub async fn shutdown(&self, limit: Duration, stop_limit: Duration) {
        let _ = ask(&self.0, RegistryMsg::Shutdown, limit).await;
        let _ = self.0.stop_and_wait(None, Some(stop_limit)).await;
    }
}

impl Supervisor for RegistryHandle {
    fn server_up(&self, key: ServerKey, pid: Option<u32>) {
        let _ = self.0.cast(RegistryMsg::ServerUp { key, pid });
    }

    fn note(&self, key: ServerKey, note: String) {
        let _ = self.0.cast(RegistryMsg::Note { key, note });
    }

    fn start_lost(&self, key: ServerKey, server: ServerHandle, reason: String) {
        let lost = RegistryMsg::StartLost {
            key,
            server: server.clone(),
            reason: reason.clone(),
        };
        if self.0.cast(lost).is_err() {
            server.stop_broken(reason); // No registry: nobody starts it again.
        }
    }
}

/// The answer to [`RegistryMsg::Acquire`]: the server is ready (`first_touch` when the call
/// had to wait for it to start), or cannot serve and why.
pub type Acquired = Answer<ServerHandle>;

/// Who waits for an answer to [`RegistryMsg::Acquire`].
type Waiter = RpcReplyPort<Acquired>;

/// What the registry is started with.
#[derive(Debug)]
pub struct RegistryArgs {
    /// The configuration.
    pub config: Arc<Config>,
    /// The workspace root, resolved.
    pub workspace_root: PathBuf,
    /// The diagnostics store, told when a server goes away.
    pub diagnostics: ActorRef<DiagnosticsMsg>,
    /// Whether server commands run, and where they are.
    pub commands: Arc<Commands>,
    /// Where state changes are announced.
    pub events: Events,
    /// The guard that kills servers should squiggle be killed outright.
    pub watchdog: Option<Arc<Watchdog>>,
    /// The file watcher, told when a server goes away.
    pub watcher: WatcherHandle,
    /// Kept in step with the entries: every server that is active.
    pub active: ActiveServers,
    /// How the host restarts a held server, `{id}` standing for its id (see
    /// [`Hold::describe`]); the generic advice when unset.
    pub restart_hint: RestartHint,
}

/// How the host restarts a held server (`run `squiggle restart {id}``), set by the door.
pub type RestartHint = Arc<std::sync::Mutex<Option<String>>>;

/// The registry actor.
#[derive(Debug)]
struct RegistryActor;

/// The state of the registry.
#[derive(Debug)]
pub struct Servers {
    args: RegistryArgs,
    /// Each server tried: starting (with who waits for it), active, or unusable.
    entries: Entries<ServerHandle, Waiter>,
    /// Notes about running servers (a failed sidecar), shown as the reason in their status.
    notes: HashMap<ServerKey, String>,
    by_actor: HashMap<ActorId, ServerKey>,
    /// Each server's restarts this session (kept when its entry is replaced).
    restarts: HashMap<ServerKey, Restarts>,
    /// The servers started once more after a start that did not happen (see
    /// [`Servers::start_lost`]): once per session each.
    lost_starts: HashSet<ServerKey>,
    shutting_down: bool,
}

impl Actor for RegistryActor {
    type Msg = RegistryMsg;
    type State = Servers;
    type Arguments = RegistryArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: RegistryArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Servers {
            args,
            entries: Entries::default(),
            notes: HashMap::new(),
            by_actor: HashMap::new(),
            restarts: HashMap::new(),
            lost_starts: HashSet::new(),
            shutting_down: false,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        servers: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            RegistryMsg::Acquire {
                key,
                restart,
                reply,
            } => {
                servers.acquire(&myself, key, restart, Some(reply)).await;
            }
            RegistryMsg::Warm { key } => {
                servers
                    .acquire(&myself, key, Restart::Automatic, None)
                    .await;
            }
            RegistryMsg::Keys { id, reply } => {
                let _ = reply.send(servers.keys(id.as_deref()));
            }
            RegistryMsg::ServerUp { key, pid } => servers.server_up(key, pid),
            RegistryMsg::StartLost {
                key,
                server,
                reason,
            } => servers.start_lost(&myself, key, server, reason).await,
            RegistryMsg::Note { key, note } => servers.note(key, note),
            RegistryMsg::Status(reply) => {
                let _ = reply.send(servers.status());
            }
            RegistryMsg::Shutdown(reply) => servers.shutdown(reply),
            RegistryMsg::Retire { keys, reply } => servers.retire(keys, reply),
        }
        Ok(())
    }

    /// A server actor that stops or fails leaves its entry broken, restarted as the policy says.
    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        servers: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, reason) = match event {
            SupervisionEvent::ActorTerminated(cell, _, reason) => (
                cell,
                reason.unwrap_or_else(|| "the server stopped".to_string()),
            ),
            SupervisionEvent::ActorFailed(cell, err) => {
                (cell, format!("the server actor failed: {err}"))
            }
            _ => return Ok(()),
        };
        if let Some(key) = servers.by_actor.remove(&cell.get_id()) {
            servers.server_gone(&myself, key, reason);
        }
        Ok(())
    }
}

impl Servers {
    /// Answers `reply` with the server of `key` when it is ready, or when it cannot serve;
    /// starts it (at most once however many ask) when none runs and the restart policy lets.
    async fn acquire(
        &mut self,
        myself: &ActorRef<RegistryMsg>,
        key: ServerKey,
        restart: Restart,
        reply: Option<Waiter>,
    ) {
        let now = Instant::now();
        let mut restarting = false;
        let reply = match self.entries.acquire(&key, reply) {
            Acquire::Answer(reply, acquired) => return answer(reply, acquired),
            Acquire::Joined => return,
            Acquire::Broken(reply, reason) => {
                let decision = self
                    .restarts
                    .get(&key)
                    .map_or(Decision::Start, |r| r.decide(restart, now));
                let reason = match decision {
                    Decision::Start => {
                        restarting = true;
                        None
                    }
                    Decision::Cooling(left) if restart == Restart::Explicit => Some(format!(
                        "{reason}; not restarted yet: its restart cooldown ends in {:.1} s",
                        left.as_secs_f64()
                    )),
                    Decision::Cooling(_) | Decision::Held(_) => Some(reason),
                };
                if let Some(reason) = reason {
                    let state = ServerState::Broken;
                    return answer(reply, Acquired::Unusable { state, reason });
                }
                reply
            }
            Acquire::Absent(reply) => reply,
        };
        if self.shutting_down {
            let reason = "squiggle is shutting down".to_string();
            return answer(
                reply,
                Acquired::Unusable {
                    state: ServerState::Broken,
                    reason,
                },
            );
        }
        if restarting {
            tracing::info!(server = %key.id, root = %key.root.display(), ?restart, "restarting server");
            let limits = self.limits();
            (self.restarts.entry(key.clone()))
                .or_insert_with(|| Restarts::new(limits))
                .restarted(restart, now);
        }
        match self.spawn(myself, &key).await {
            Ok(server) => {
                self.entries.starting(key.clone(), server, reply);
            }
            Err((state, reason)) => {
                let unusable = Acquired::Unusable {
                    state,
                    reason: reason.clone(),
                };
                answer(reply, unusable);
                self.entries.unusable(key.clone(), state, reason);
            }
        }
        self.changed(&key);
    }

    /// Spawns the server of `key`, the store told first (before the process exists, so that
    /// nothing it publishes is taken for the dead one's); or why it cannot start, a broken one's
    /// reason saying when it is restarted.
    async fn spawn(
        &mut self,
        myself: &ActorRef<RegistryMsg>,
        key: &ServerKey,
    ) -> Result<ServerHandle, (ServerState, String)> {
        let one_list = self
            .args
            .config
            .servers
            .get(&key.id)
            .is_some_and(|spec| spec.tsserver_pull);
        let _ = self.args.diagnostics.cast(DiagnosticsMsg::ServerStarted {
            key: key.clone(),
            one_list,
        });
        match self.start(myself, key).await {
            Ok(server) => {
                self.by_actor.insert(server.id(), key.clone());
                Ok(server)
            }
            Err((state, reason)) => {
                tracing::debug!(server = %key.id, %state, %reason, "server cannot start");
                let reason = match state {
                    ServerState::Broken => self.broke(myself, key, reason),
                    _ => reason,
                };
                Err((state, reason))
            }
        }
    }

    /// The store and the watcher forget a server that went away.
    fn forget(&self, key: &ServerKey) {
        let _ = (self.args.diagnostics).cast(DiagnosticsMsg::ServerGone { key: key.clone() });
        self.args.watcher.forget(key.clone());
    }

    /// The restart policy's limits, from the configuration.
    fn limits(&self) -> Limits {
        let config = &self.args.config;
        let cooldown = Duration::from_millis(config.restart_cooldown_ms);
        Limits::new(cooldown, config.max_automatic_restarts)
    }

    /// Tells the restart policy that a server broke: schedules its automatic restart after the
    /// cooldown, or returns the reason with why there is none.
    fn broke(&mut self, myself: &ActorRef<RegistryMsg>, key: &ServerKey, reason: String) -> String {
        let limits = self.limits();
        let now = Instant::now();
        let restarts = (self.restarts.entry(key.clone())).or_insert_with(|| Restarts::new(limits));
        match restarts.broke(now) {
            Ok(due) => {
                let key = key.clone();
                myself.send_after(due.saturating_duration_since(now), move || {
                    RegistryMsg::Warm { key }
                });
                reason
            }
            Err(hold) => {
                let hint = crate::lock::lock(&self.args.restart_hint).clone();
                let how = hint.map(|hint| hint.replace("{id}", &key.id));
                format!("{reason}; {}", hold.describe(how.as_deref()))
            }
        }
    }

    /// The servers tried so far with this id (all when `None`), and their states.
    fn keys(&self, id: Option<&str>) -> Vec<(ServerKey, ServerState)> {
        self.entries
            .iter()
            .filter(|(key, _)| id.is_none_or(|id| key.id == id))
            .map(|(key, entry)| (key.clone(), self.status_of(key, entry).state))
            .collect()
    }

    /// Spawns the server actor for a key; its handshake runs on its own and reports back.
    async fn start(
        &self,
        myself: &ActorRef<RegistryMsg>,
        key: &ServerKey,
    ) -> Result<ServerHandle, (ServerState, String)> {
        let config = &self.args.config;
        let Some(spec) = config.servers.get(&key.id) else {
            return Err((
                ServerState::Unavailable,
                format!("no server `{}` is configured", key.id),
            ));
        };
        if !spec.enabled {
            return Err((
                ServerState::Disabled,
                "disabled by configuration".to_string(),
            ));
        }
        // Found by now (the caller picked the server by it), so this does not wait; found, not
        // probed: a command that does not run is started and reported broken with its output.
        let availability = self.args.commands.found(spec).await;
        let Some(program) = availability.program().map(Path::to_path_buf) else {
            let reason = availability.reason(spec).unwrap_or_default();
            return Err((ServerState::Unavailable, reason));
        };
        tracing::debug!(server = %key.id, root = %key.root.display(), program = %program.display(), "starting server");
        let mut spec = spec.clone();
        if !spec.env.contains_key("PATH") {
            let data = squiggle_config::install::data_dir();
            let current = std::env::var_os("PATH");
            let installed = squiggle_config::install::path_for_installed(
                &program,
                data.as_deref(),
                current.as_deref(),
            );
            if let Some(path) = installed {
                spec.env.insert("PATH".to_string(), path);
            }
        }
        let settle = Duration::from_millis(spec.settle_ms.unwrap_or(config.settle_ms));
        let args = ServerArgs {
            key: key.clone(),
            spec,
            program,
            workspace_root: self.args.workspace_root.clone(),
            registry: Arc::new(RegistryHandle(myself.clone())),
            diagnostics: self.args.diagnostics.clone(),
            init_timeout: Duration::from_millis(config.initialize_timeout_ms),
            max_file_bytes: config.max_file_bytes,
            max_open_documents: config.max_open_documents,
            watchdog: self.args.watchdog.clone(),
            watcher: self.args.watcher.clone(),
            settle,
        };
        ServerHandle::spawn_linked(args, myself.get_cell())
            .await
            .map_err(|err| (ServerState::Broken, format!("{err}")))
    }

    /// Hands a server that finished its handshake to everyone waiting for it.
    fn server_up(&mut self, key: ServerKey, pid: Option<u32>) {
        // Supervision events overtake messages: a server that died right after its handshake is
        // already marked broken and must stay so.
        let Some(answers) = self.entries.up(&key, pid) else {
            return;
        };
        for (waiter, acquired) in answers {
            let _ = waiter.send(acquired);
        }
        self.changed(&key);
    }

    /// A server's process exited with status 0 before its handshake ended: a start that did
    /// not happen rather than a crash (biome's `lsp-proxy` exits so when the daemon it connects
    /// to goes away under it, on a busy machine). It is started again at once, once per
    /// session, for those waiting for it; else it is stopped as broken, as any exit.
    async fn start_lost(
        &mut self,
        myself: &ActorRef<RegistryMsg>,
        key: ServerKey,
        server: ServerHandle,
        reason: String,
    ) {
        let again = !self.shutting_down
            && self
                .entries
                .is_starting(&key, |starting| starting.id() == server.id())
            && self.lost_starts.insert(key.clone());
        if !again {
            return server.stop_broken(reason);
        }
        tracing::info!(server = %key.id, root = %key.root.display(), %reason, "the server exited before it finished starting: starting it once more");
        // Its end is no longer this key's: the new server's entry stays.
        self.by_actor.remove(&server.id());
        server.stop_broken(reason);
        self.forget(&key);
        match self.spawn(myself, &key).await {
            Ok(started) => self.entries.restarting(&key, started),
            Err((_, reason)) => {
                for (waiter, acquired) in self.entries.gone(&key, reason) {
                    let _ = waiter.send(acquired);
                }
            }
        }
        self.changed(&key);
    }

    /// Records a note about a server (kept while it runs) and announces it if it is active.
    fn note(&mut self, key: ServerKey, note: String) {
        if !matches!(
            self.entries.get(&key),
            Some(Entry::Starting { .. } | Entry::Active { .. })
        ) {
            return;
        }
        self.notes.insert(key.clone(), note);
        if let Some(entry @ Entry::Active { .. }) = self.entries.get(&key) {
            let status = self.status_of(&key, entry);
            self.announce(status);
        }
    }

    /// Marks a server that went away as broken and ends what waited on it.
    fn server_gone(&mut self, myself: &ActorRef<RegistryMsg>, key: ServerKey, reason: String) {
        self.forget(&key);
        if self.shutting_down {
            self.args.active.remove(&key);
            self.entries.remove(&key);
            return;
        }
        tracing::info!(server = %key.id, root = %key.root.display(), %reason, "server broken");
        let reason = self.broke(myself, &key, reason);
        let answers = self.entries.gone(&key, reason);
        self.changed(&key);
        for (waiter, acquired) in answers {
            let _ = waiter.send(acquired);
        }
    }

    /// Announces a server's new state and keeps the active servers in step with its entry.
    fn changed(&self, key: &ServerKey) {
        let Some(entry) = self.entries.get(key) else {
            return;
        };
        let status = self.status_of(key, entry);
        self.announce(status);
        match entry {
            Entry::Active { server, .. } => {
                self.args.active.insert(key.clone(), server.clone());
            }
            _ => {
                self.args.active.remove(key);
            }
        }
    }

    fn announce(&self, status: ServerStatus) {
        let _ = self.args.events.send(LspEvent::Status {
            server: status.id,
            root: status.root,
            state: status.state,
            reason: status.reason,
        });
    }

    fn status_of(&self, key: &ServerKey, entry: &Entry<ServerHandle, Waiter>) -> ServerStatus {
        let (state, reason, pid) = match entry {
            Entry::Starting { .. } => (ServerState::Starting, None, None),
            Entry::Active { pid, .. } => (ServerState::Active, self.notes.get(key).cloned(), *pid),
            Entry::Unusable { state, reason, .. } => (*state, Some(reason.clone()), None),
        };
        let language = self
            .args
            .config
            .servers
            .get(&key.id)
            .map(|s| s.language_id.clone());
        let crashes = self.restarts.get(key).map_or(0, Restarts::breaks);
        ServerStatus {
            id: key.id.clone(),
            root: paths::relative_to(&self.args.workspace_root, &key.root),
            language: language.unwrap_or_default(),
            state,
            reason,
            pid,
            metrics: squiggle_protocol::ServerMetrics {
                crashes,
                ..Default::default()
            },
        }
    }

    fn status(&self) -> Vec<ServerStatus> {
        let mut statuses: Vec<ServerStatus> = self
            .entries
            .iter()
            .map(|(key, entry)| self.status_of(key, entry))
            .collect();
        statuses.sort_by(|a, b| (&a.id, &a.root).cmp(&(&b.id, &b.root)));
        statuses
    }

    /// Asks every running server to shut down and replies once all are gone.
    /// Stops the active servers among `keys` and forgets them: no longer found by checks, not
    /// broken, not restarted; their diagnostics and watches go with them.
    fn retire(&mut self, keys: Vec<ServerKey>, reply: RpcReplyPort<Vec<ServerKey>>) {
        let mut stopping = Vec::new();
        for key in keys {
            if !matches!(self.entries.get(&key), Some(Entry::Active { .. })) {
                continue;
            }
            let Some(Entry::Active { server, .. }) = self.entries.remove(&key) else {
                continue;
            };
            // Its end is not a break: the supervision event finds no key.
            self.by_actor.remove(&server.id());
            self.args.active.remove(&key);
            self.notes.remove(&key);
            let _ = self
                .args
                .diagnostics
                .cast(DiagnosticsMsg::ServerGone { key: key.clone() });
            self.args.watcher.forget(key.clone());
            tracing::info!(server = %key.id, root = %key.root.display(), "server stopped: unused");
            stopping.push((key, server));
        }
        tokio::spawn(async move {
            let stops = stopping
                .iter()
                .map(|(_, server)| server.shutdown(SERVER_SHUTDOWN_LIMIT));
            futures::future::join_all(stops).await;
            let _ = reply.send(stopping.into_iter().map(|(key, _)| key).collect());
        });
    }

    fn shutdown(&mut self, reply: RpcReplyPort<()>) {
        self.shutting_down = true;
        let running: Vec<ServerHandle> = self
            .entries
            .iter()
            .filter_map(|(_, entry)| match entry {
                Entry::Starting { server, .. } | Entry::Active { server, .. } => {
                    Some(server.clone())
                }
                Entry::Unusable { .. } => None,
            })
            .collect();
        tokio::spawn(async move {
            let stops = running
                .iter()
                .map(|server| server.shutdown(SERVER_SHUTDOWN_LIMIT));
            futures::future::join_all(stops).await;
            let _ = reply.send(());
        });
    }
}

/// Answers the caller, if one waits.
fn answer(reply: Option<Waiter>, acquired: Acquired) {
    if let Some(reply) = reply {
        let _ = reply.send(acquired);
    }
}
