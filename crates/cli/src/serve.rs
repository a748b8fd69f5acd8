//! `squiggle serve`: the JSON-RPC service for agent hosts in other languages. LSP-framed
//! JSON-RPC 2.0 on stdin/stdout (stdout carries protocol bytes only); see
//! `squiggle_protocol::service` for the contract.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use squiggle_actors::{ServerState, Severity, Squiggle};
use squiggle_config::Config;
use squiggle_protocol::service::{
    error_code, method, service_diagnostics, Bootstrap, CancelParams, CheckFileParams,
    DiagnosticsAfterParams, FeedbackParams, FeedbackResult, ServiceStatus,
};
use squiggle_protocol::{encode_frame, FrameGuard};
use tokio::sync::oneshot;

use crate::servers::idle_status;
use crate::tools::Toolbox;
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
    let (out, written) = crate::stdio::write_stdout();
    let service = Arc::new(Service {
        squiggle: squiggle.clone(),
        tools: Toolbox::new(squiggle.clone()),
        severities,
        in_flight: Mutex::default(),
        out,
    });
    service.send(&json!({"jsonrpc": "2.0", "method": method::READY, "params": {}}).to_string());

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

/// The workspace root and configuration: `LSP_BOOTSTRAP` first, then `--root` and `--config`.
fn load(args: &WorkspaceArgs) -> anyhow::Result<(PathBuf, Config)> {
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

/// Reads requests from stdin and answers each in its own task, until shutdown or end of input.
async fn read_requests(service: Arc<Service>) -> Ending {
    let mut stdin = crate::stdio::read_stdin();
    let mut guard = FrameGuard::new();
    loop {
        let Some(chunk) = stdin.recv().await else {
            return Ending::Gone;
        };
        guard.push(&chunk);
        while let Some(body) = guard.next_body() {
            if service.clone().dispatch(&body).await {
                return Ending::Shutdown;
            }
        }
    }
}

impl Service {
    /// Queues one message (JSON text) for stdout.
    fn send(&self, body: &str) {
        let _ = self.out.send(encode_frame(body.as_bytes()));
    }

    fn reply(&self, id: Value, result: Result<Json, (i64, String)>) {
        let body = match result {
            Ok(Json(result)) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                    .to_string()
            }
        };
        self.send(&body);
    }

    /// Handles one frame; true once `lsp/shutdown` has been answered.
    async fn dispatch(self: Arc<Self>, body: &[u8]) -> bool {
        let message: Value = match serde_json::from_slice(body) {
            Ok(message) => message,
            Err(err) => {
                self.reply(
                    Value::Null,
                    Err((error_code::PARSE_ERROR, format!("not JSON: {err}"))),
                );
                return false;
            }
        };
        let id = message.get("id").cloned();
        let Some(name) = message
            .get("method")
            .and_then(Value::as_str)
            .map(String::from)
        else {
            if id.is_some() && (message.get("result").is_some() || message.get("error").is_some()) {
                return false; // A response to nothing we asked: ignore it.
            }
            let reason = "not a JSON-RPC request: `method` is missing".to_string();
            self.reply(
                id.unwrap_or(Value::Null),
                Err((error_code::INVALID_REQUEST, reason)),
            );
            return false;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            if name == method::CANCEL {
                self.cancel(params);
            }
            return false;
        };
        if name == method::SHUTDOWN {
            self.squiggle.shutdown().await;
            self.reply(id, Ok(Json("null".to_string())));
            return true;
        }
        let (cancel, cancelled) = oneshot::channel();
        self.lock_in_flight().insert(id.to_string(), cancel);
        tokio::spawn(async move {
            let result = tokio::select! {
                result = self.handle(&name, params.clone(), false) => result,
                Ok(()) = cancelled => self.handle(&name, params, true).await,
            };
            self.lock_in_flight().remove(&id.to_string());
            self.reply(id, result);
        });
        false
    }

    fn cancel(&self, params: Value) {
        let Ok(CancelParams { id }) = serde_json::from_value::<CancelParams>(params) else {
            return;
        };
        if let Some(cancel) = self.lock_in_flight().remove(&id.to_string()) {
            let _ = cancel.send(());
        }
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<()>>> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Answers a request; `hurry` (after a cancel) answers at once with what is known so far.
    async fn handle(&self, name: &str, params: Value, hurry: bool) -> Result<Json, (i64, String)> {
        let squiggle = &self.squiggle;
        let result = match name {
            method::CHECK_FILE => {
                let CheckFileParams { file_path, text } = parse(params)?;
                let diagnostics = if hurry {
                    let file = squiggle.relative_path(&file_path);
                    squiggle
                        .diagnostics()
                        .await
                        .remove(&file)
                        .unwrap_or_default()
                } else {
                    squiggle.check_file(&file_path, text).await.diagnostics
                };
                Json::of(&service_diagnostics(diagnostics, &self.severities))
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
            method::FEEDBACK => {
                let FeedbackParams {
                    file_path,
                    text,
                    scope,
                } = parse(params)?;
                if hurry {
                    Json::of(&FeedbackResult {
                        text: String::new(),
                        diagnostics: Vec::new(),
                    })
                } else {
                    let feedback = squiggle.feedback(&file_path, text, scope).await;
                    let diagnostics =
                        service_diagnostics(feedback.check.diagnostics, &self.severities);
                    Json::of(&FeedbackResult {
                        text: feedback.text,
                        diagnostics,
                    })
                }
            }
            _ => {
                let Some(tool) = navigation_tool(name) else {
                    return Err((error_code::METHOD_NOT_FOUND, format!("no method `{name}`")));
                };
                if hurry {
                    // Cancelled: nothing is known yet, and asking again would only take longer.
                    return Ok(Json::of(&json!({"text": "", "notes": ["cancelled"]})));
                }
                let args = match parse::<Value>(params)? {
                    Value::Object(args) => args,
                    _ => {
                        return Err((
                            error_code::INVALID_PARAMS,
                            "params must be an object".to_string(),
                        ))
                    }
                };
                let output = self
                    .tools
                    .call(tool, &args)
                    .await
                    .map_err(|e| (error_code::INVALID_PARAMS, e))?;
                let mut result = output.structured;
                if let Value::Object(map) = &mut result {
                    map.insert("text".to_string(), Value::String(output.text));
                }
                Json::of(&result)
            }
        };
        Ok(result)
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
        let runs = |spec: &squiggle_config::ServerSpec| {
            availability
                .get(spec.id.as_str())
                .is_some_and(squiggle_config::Availability::runs)
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
                        let (state, reason) = idle_status(spec, config, found, &runs);
                        (state, None, Some(reason))
                    }
                };
                ServiceStatus {
                    id: spec.id.clone(),
                    status,
                    language: spec.language_id.clone(),
                    server_pid,
                    reason,
                }
            })
            .collect()
    }
}

/// The tool behind a navigation method of the service (same arguments and results as MCP).
fn navigation_tool(method: &str) -> Option<&'static str> {
    Some(match method {
        "lsp/definition" => "lsp_goto_definition",
        "lsp/references" => "lsp_find_references",
        "lsp/hover" => "lsp_hover",
        "lsp/documentSymbols" => "lsp_document_symbols",
        "lsp/workspaceSymbols" => "lsp_workspace_symbols",
        _ => return None,
    })
}

/// Which state of a server running for several roots `lsp/status` shows: the liveliest.
fn rank(state: ServerState) -> u8 {
    match state {
        ServerState::Active => 0,
        ServerState::Starting => 1,
        ServerState::Broken => 2,
        ServerState::Unavailable => 3,
        ServerState::Disabled => 4,
    }
}

/// A method's params, or an invalid-params error that says what is wrong.
fn parse<T: DeserializeOwned>(params: Value) -> Result<T, (i64, String)> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|err| (error_code::INVALID_PARAMS, format!("invalid params: {err}")))
}
