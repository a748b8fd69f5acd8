//! `squiggle serve`: the JSON-RPC service for agent hosts in other languages. LSP-framed
//! JSON-RPC 2.0 on stdin/stdout (stdout carries protocol bytes only); see
//! `squiggle_protocol::service` for the contract.

mod message;
mod rpc_error;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use squiggle_actors::{LspEvent, ServerMetrics, ServerState, Severity, Squiggle};
use squiggle_config::model::FeedbackFormat;
use squiggle_config::Config;
use squiggle_protocol::service::{
    method, service_diagnostics, Bootstrap, CheckFileParams, DiagnosticsAfterParams,
    FeedbackParams, RestartParams, RestartedServer, ServiceStatus,
};
use squiggle_protocol::{encode_frame, BadFrame, FrameGuard};
use tokio::sync::oneshot;

use message::{Incoming, RawId};
use rpc_error::{ErrorCode, RpcError};

use crate::answers::Checks;
use crate::servers::idle_status;
use crate::tools::{by_method, Toolbox};
use crate::workspace::WorkspaceArgs;

/// How long `lsp/diagnosticsAfter` waits when the request does not say.
const DEFAULT_AFTER_WAIT: Duration = Duration::from_millis(250);

/// Arguments of `squiggle serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
}

/// What every request handler shares.
struct Service {
    squiggle: Squiggle,
    /// The navigation tools, answering `lsp/definition` and the like.
    tools: Toolbox,
    severities: Vec<Severity>,
    /// Requests still being worked on, by id, with the switch that ends their wait early.
    in_flight: Mutex<HashMap<String, oneshot::Sender<()>>>,
    /// Frames to write to stdout, in order.
    out: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
}

/// A result already written as JSON text: answers are serialized once, from their own types.
struct Json(String);

impl Json {
    fn of(value: &impl Serialize) -> Self {
        Self(serde_json::to_string(value).unwrap_or_else(|_| "null".to_string()))
    }
}

/// What one body read from stdin led to.
enum Dispatched {
    /// It was handled or is being worked on.
    Going,
    /// It was not JSON, and was answered with a parse error.
    NotJson,
    /// `lsp/shutdown` was answered.
    Shutdown,
}

/// How the main loop ended.
enum Ending {
    /// `lsp/shutdown` was answered.
    Shutdown,
    /// Stdin closed or a signal arrived.
    Gone,
}

/// Runs the service until `lsp/shutdown`, stdin closing, or SIGTERM/SIGINT.
pub async fn run(args: ServeArgs) -> anyhow::Result<u8> {
    let (root, config) = load(&args.workspace)?;
    let severities = config.include_severities.clone();
    let squiggle = Squiggle::start(&root, config).await?;
    squiggle.search_after_answers();
    squiggle
        .set_restart_hint("send `squiggle/restart` with `{\"serverId\": \"{id}\"}` to restart it");
    let (out, written) = crate::stdio::write_stdout();
    let service = Arc::new(Service {
        squiggle: squiggle.clone(),
        tools: Toolbox::new(squiggle.clone()),
        severities,
        in_flight: Mutex::default(),
        out,
    });
    service.send(&json!({"jsonrpc": "2.0", "method": method::READY, "params": {}}).to_string());
    tokio::spawn(tell_caused_elsewhere(Arc::downgrade(&service)));
    serve_mcp_on_extra_fds(&squiggle);

    let ending = tokio::select! {
        ending = read_requests(service.clone()) => ending,
        () = terminated() => Ending::Gone,
    };
    if matches!(ending, Ending::Gone) {
        squiggle.shutdown().await;
    }
    drop(service);
    let _ = tokio::time::timeout(Duration::from_secs(2), written).await;
    Ok(0)
}

/// MCP on descriptors 3 (read) and 4 (written) when the host passed them, as the integration
/// contract's host does for its navigation tools: the same toolbox as `squiggle mcp`, over this
/// service's language servers. Its end ends nothing else; the service's end ends it.
fn serve_mcp_on_extra_fds(squiggle: &Squiggle) {
    #[cfg(unix)]
    if let Some(transport) = crate::mcp_stdio::extra_fds() {
        tracing::info!("serving MCP on file descriptors 3 and 4");
        let tools = Toolbox::new(squiggle.clone());
        tokio::spawn(async move {
            if let Err(err) = crate::mcp::serve_on(transport, tools).await {
                tracing::warn!("MCP on file descriptors 3 and 4 ended: {err:#}");
            }
        });
    }
    #[cfg(not(unix))]
    let _ = squiggle;
}

/// Sends `squiggle/causedElsewhere` for each time the search after an edit's answer finds
/// errors the edit caused in other files, while the service runs.
async fn tell_caused_elsewhere(service: std::sync::Weak<Service>) {
    let Some(mut events) = service
        .upgrade()
        .map(|service| service.squiggle.subscribe())
    else {
        return;
    };
    loop {
        let (edited, files) = match events.recv().await {
            Ok(LspEvent::Caused { edited, files }) => (edited, files),
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let Some(service) = service.upgrade() else {
            return;
        };
        let files: serde_json::Map<String, Value> = (files.into_iter())
            .map(|(file, list)| (file, service_diagnostics(list, &service.severities)))
            .filter(|(_, list)| !list.is_empty())
            .map(|(file, list)| (file, json!(list)))
            .collect();
        if files.is_empty() {
            continue;
        }
        let params = json!({"edited": edited, "files": files});
        let note = json!({"jsonrpc": "2.0", "method": method::CAUSED_ELSEWHERE, "params": params});
        service.send(&note.to_string());
    }
}

/// The workspace root and configuration: `LSP_BOOTSTRAP` first, then `--root` and `--config`;
/// `feedback_format = "auto"` is the reference's tagged block here (its hosts are built on it).
fn load(args: &WorkspaceArgs) -> anyhow::Result<(PathBuf, Config)> {
    let (root, mut config) = load_configured(args)?;
    if config.feedback_format == FeedbackFormat::Auto {
        config.feedback_format = FeedbackFormat::Tagged;
    }
    Ok((root, config))
}

/// [`load`] as configured.
fn load_configured(args: &WorkspaceArgs) -> anyhow::Result<(PathBuf, Config)> {
    let Ok(raw) = std::env::var("LSP_BOOTSTRAP") else {
        return args.load();
    };
    let bootstrap: Bootstrap =
        serde_json::from_str(&raw).context("LSP_BOOTSTRAP is not valid JSON")?;
    let mut args = WorkspaceArgs {
        root: args.root.clone(),
        config: args.config.clone(),
    };
    if args.root.is_none() {
        args.root = bootstrap.workspace_root.map(PathBuf::from);
    }
    let (root, mut config) = args.load()?;
    if let Some(lsp) = bootstrap.config {
        let document = json!({ "lsp": lsp }).to_string();
        config.apply_opencode_json(&document, Path::new("LSP_BOOTSTRAP"))?;
    }
    Ok((root, config))
}

/// Resolves when the process is asked to terminate.
#[cfg(unix)]
async fn terminated() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// Resolves when the process is asked to terminate: Ctrl+C, Ctrl+Break, or its console closing.
#[cfg(windows)]
async fn terminated() {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    let (Ok(mut c), Ok(mut brk), Ok(mut close)) = (ctrl_c(), ctrl_break(), ctrl_close()) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = c.recv() => {}
        _ = brk.recv() => {}
        _ = close.recv() => {}
    }
}

/// Reads requests from stdin and answers each in its own task, until shutdown or end of input.
/// A bad frame is answered with an error (id null) and costs nothing after it.
async fn read_requests(service: Arc<Service>) -> Ending {
    let mut stdin = crate::stdio::read_stdin();
    let mut guard = FrameGuard::named("client");
    loop {
        let Some(chunk) = stdin.recv().await else {
            return Ending::Gone;
        };
        guard.push(&chunk);
        while let Some(frame) = guard.next_body() {
            let body = match frame {
                Ok(body) => body,
                Err(bad) => {
                    service.refuse_frame(bad);
                    continue;
                }
            };
            match service.clone().dispatch(&body).await {
                Dispatched::Going => {}
                Dispatched::NotJson => guard.reject(BadFrame::NotJson),
                Dispatched::Shutdown => return Ending::Shutdown,
            }
        }
    }
}

impl Service {
    /// Queues one message (JSON text) for stdout.
    fn send(&self, body: &str) {
        let _ = self.out.send(encode_frame(body.as_bytes()));
    }

    /// Answers the request `id` (its exact JSON text) with a result or an error.
    fn reply(&self, id: &RawId, result: Result<Json, RpcError>) {
        let id = id.as_json();
        let body = match result {
            Ok(Json(result)) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            Err(error) => {
                let error = error.to_json();
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
            }
        };
        self.send(&body);
    }

    /// Answers a bad frame (its id is unknown) with a parse error.
    fn refuse_frame(&self, bad: BadFrame) {
        let message = format!("bad frame: {bad}; skipped to the next Content-Length header");
        self.reply(
            &RawId::null(),
            Err(RpcError::new(ErrorCode::ParseError, message)),
        );
    }

    /// Handles one frame's body: requests are answered in tasks of their own.
    async fn dispatch(self: Arc<Self>, body: &[u8]) -> Dispatched {
        let (id, name, params) = match message::read(body) {
            Ok(Incoming::Request { id, method, params }) => (id, method, params),
            Ok(Incoming::Cancel(id)) => {
                self.cancel(&id);
                return Dispatched::Going;
            }
            Ok(Incoming::Notification | Incoming::Response) => return Dispatched::Going,
            Err(refusal) => {
                let not_json = refusal.not_json();
                self.reply(&refusal.id, Err(refusal.error));
                return match not_json {
                    true => Dispatched::NotJson,
                    false => Dispatched::Going,
                };
            }
        };
        if name == method::SHUTDOWN {
            self.squiggle.shutdown().await;
            self.reply(&id, Ok(Json("null".to_string())));
            return Dispatched::Shutdown;
        }
        let key = id.key();
        let (cancel, cancelled) = oneshot::channel();
        self.lock_in_flight().insert(key.clone(), cancel);
        let answer = async move {
            let work = async {
                tokio::select! {
                    result = self.handle(&name, params.clone(), false) => result,
                    Ok(()) = cancelled => self.handle(&name, params, true).await,
                }
            };
            // A request that fails inside squiggle is still answered.
            let result = AssertUnwindSafe(work)
                .catch_unwind()
                .await
                .unwrap_or_else(|_| {
                    let message = format!("internal error while answering `{name}`");
                    Err(RpcError::new(ErrorCode::InternalError, message))
                });
            self.lock_in_flight().remove(&key);
            self.reply(&id, result);
        };
        // Polled once here, before the next frame is read, so a check takes its place in its
        // file's queue in the order requests arrived; then it goes on in a task of its own.
        // The poll ignores tokio's task budget: this loop polls every request of a burst, and
        // once the budget was spent, `select!` returned at once, before the check took its
        // place (from about the 128th request of a burst on).
        let mut answer = Box::pin(answer);
        let first = tokio::task::unconstrained(async { futures::poll!(answer.as_mut()) });
        if first.await.is_pending() {
            tokio::spawn(answer);
        }
        Dispatched::Going
    }

    /// Ends the wait of the request `id`, if it is still being worked on.
    fn cancel(&self, id: &RawId) {
        if let Some(cancel) = self.lock_in_flight().remove(&id.key()) {
            let _ = cancel.send(());
        }
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<()>>> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Answers a request; `hurry` (after a cancel) answers at once with what is known so far.
    async fn handle(&self, name: &str, params: Value, hurry: bool) -> Result<Json, RpcError> {
        let squiggle = &self.squiggle;
        let result = match name {
            method::CHECK_FILE => {
                let CheckFileParams { file_path, text } = parse(params)?;
                Json::of(&self.checks().diagnostics(&file_path, text, hurry).await)
            }
            method::SQUIGGLE_CHECK_FILE => {
                let CheckFileParams { file_path, text } = parse(params)?;
                Json::of(&self.checks().check_file(&file_path, text, hurry).await)
            }
            method::DIAGNOSTICS => self.all(squiggle.diagnostics().await),
            method::GET_DIAGNOSTIC_EPOCH => Json::of(&squiggle.epoch().await),
            method::DIAGNOSTICS_AFTER => {
                let DiagnosticsAfterParams {
                    after_epoch,
                    wait_ms,
                } = parse(params)?;
                let wait = if hurry {
                    Duration::ZERO
                } else {
                    wait_ms.map_or(DEFAULT_AFTER_WAIT, Duration::from_millis)
                };
                self.all(squiggle.diagnostics_after(after_epoch, wait).await)
            }
            method::STATUS => Json::of(&self.status().await),
            method::RESTART => {
                let RestartParams { server_id } = parse(params)?;
                Json::of(&self.restart(server_id.as_deref()).await?)
            }
            method::FEEDBACK => {
                let FeedbackParams {
                    file_path,
                    text,
                    scope,
                } = parse(params)?;
                Json::of(&self.checks().feedback(&file_path, text, scope, hurry).await)
            }
            _ => {
                let Some(tool) = by_method(name) else {
                    let message = format!("no method `{name}`");
                    return Err(RpcError::new(ErrorCode::MethodNotFound, message));
                };
                if hurry {
                    // Cancelled: nothing is known yet, and asking again would only take longer.
                    return Ok(Json::of(&json!({"text": "", "notes": ["cancelled"]})));
                }
                let args = match parse::<Value>(params)? {
                    Value::Object(args) => args,
                    _ => {
                        let message = "params must be an object";
                        return Err(RpcError::new(ErrorCode::InvalidParams, message));
                    }
                };
                let output = self.tools.call(tool.name, &args).await?;
                let mut result = output.structured;
                if let Value::Object(map) = &mut result {
                    map.insert("text".to_string(), Value::String(output.text));
                }
                Json::of(&result)
            }
        };
        Ok(result)
    }

    /// The check methods' answers, at the configured severities.
    fn checks(&self) -> Checks<'_> {
        Checks {
            squiggle: &self.squiggle,
            severities: &self.severities,
        }
    }

    /// Every file's diagnostics at the configured severities, files sorted, clean files left out.
    fn all(
        &self,
        all: std::collections::BTreeMap<String, Vec<squiggle_actors::Diagnostic>>,
    ) -> Json {
        let files: std::collections::BTreeMap<String, _> = all
            .into_iter()
            .map(|(file, diagnostics)| (file, service_diagnostics(diagnostics, &self.severities)))
            .filter(|(_, diagnostics)| !diagnostics.is_empty())
            .collect();
        Json::of(&files)
    }

    /// Restarts the broken servers (with this id) whose cooldown has passed; every server
    /// squiggle has tried with that id, in its state afterwards. An id that is not configured
    /// is an error.
    async fn restart(&self, id: Option<&str>) -> Result<Vec<RestartedServer>, RpcError> {
        if let Some(id) = id.filter(|id| !self.squiggle.config().servers.contains_key(*id)) {
            let message = format!("no server `{id}` is configured");
            return Err(RpcError::new(ErrorCode::InvalidParams, message));
        }
        let restarted = self.squiggle.restart(id).await;
        Ok(restarted
            .into_iter()
            .map(|status| RestartedServer {
                id: status.id,
                root: status.root,
                status: status.state,
                reason: status.reason,
                server_pid: status.pid,
            })
            .collect())
    }

    /// Every configured server, sorted by id: what it does now, or what it would do.
    async fn status(&self) -> Vec<ServiceStatus> {
        let config = self.squiggle.config();
        if !config.enabled {
            return vec![ServiceStatus {
                id: "lsp".to_string(),
                status: ServerState::Disabled,
                language: String::new(),
                server_pid: None,
                reason: Some("LSP disabled by configuration".to_string()),
                metrics: ServerMetrics::default(),
            }];
        }
        let running = self.squiggle.status().await;
        // Whether each enabled command runs: found and probed once per session, in parallel.
        let enabled: Vec<_> = config.servers.values().filter(|s| s.enabled).collect();
        let probes = enabled.iter().map(|spec| self.squiggle.availability(spec));
        let found = futures::future::join_all(probes).await;
        let availability: HashMap<&str, _> = enabled
            .iter()
            .map(|spec| spec.id.as_str())
            .zip(found)
            .collect();
        // A check uses the first of a role whose command is found, probe or not.
        let starts = |spec: &squiggle_config::ServerSpec| {
            availability
                .get(spec.id.as_str())
                .is_some_and(squiggle_config::Availability::starts)
        };
        config
            .servers
            .values()
            .map(|spec| {
                let seen = running
                    .iter()
                    .filter(|s| s.id == spec.id)
                    .min_by_key(|s| rank(s.state));
                let (status, server_pid, reason) = match seen {
                    Some(seen) => (seen.state, seen.pid, seen.reason.clone()),
                    None => {
                        let found = availability.get(spec.id.as_str());
                        let (state, reason) = idle_status(spec, config, found, &starts);
                        (state, None, Some(reason))
                    }
                };
                // Of every root it serves, together.
                let roots = running.iter().filter(|s| s.id == spec.id);
                let metrics = ServerMetrics::together(roots.map(|s| &s.metrics));
                ServiceStatus {
                    id: spec.id.clone(),
                    status,
                    language: spec.language_id.clone(),
                    server_pid,
                    reason,
                    metrics,
                }
            })
            .collect()
    }
}

/// Which state of a server running for several roots `lsp/status` shows: the liveliest.
fn rank(state: ServerState) -> u8 {
    match state {
        ServerState::Active => 0,
        ServerState::Starting => 1,
        ServerState::Idle => 2,
        ServerState::Broken => 3,
        ServerState::Unavailable => 4,
        ServerState::Disabled => 5,
    }
}

/// A method's params, or an invalid-params error that says what is wrong.
fn parse<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|err| RpcError::new(ErrorCode::InvalidParams, format!("invalid params: {err}")))
}
