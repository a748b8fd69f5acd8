//! A scriptable fake LSP server on stdio, for exact, fault-injected test scenarios: squiggle's
//! integration tests drive it, and `cargo xtask bench` measures squiggle against it.
//!
//! Usage: `fake-lsp [--scenario NAME | --script FILE]` (the binary of this crate, or the
//! tests' `fake-lsp-under-test`, whose `main` is [`main`]); see [`script::Script`].
//!
//! # Layout
//!
//! - `script`: the behaviour model (`Script`) and the named presets.
//! - `wire`: Content-Length framing, and the single locked writer for everything sent.
//! - `observe`: the `FAKE_LSP_LOG` event log and the `FAKE_LSP_PID_DIR` pid files.
//! - `publisher`: `publishDiagnostics` (plus scripted noise) and other messages, now or later.
//! - `pull`: pull diagnostics: result ids, the scripted first cancellation, the delayed refresh.
//! - `diagnose`: diagnostics computed from document text.
//! - `check`: the check on save, which finds what the pull answers never hold.
//! - `symbols`: symbols computed from document text.
//! - `breadth`: implementation, type definition, call hierarchy, `workspace/diagnostic`.
//! - `refactor`: rename and code actions.

mod breadth;
mod check;
mod diagnose;
mod observe;
mod publisher;
mod pull;
mod refactor;
mod script;
mod symbols;
mod wire;

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{json, Value};

use diagnose::Encoding;
use observe::EventLog;
use publisher::{Noise, Publisher};
use pull::Pull;
use script::{Script, ServerRequest, Trigger};
use wire::Output;

pub use script::PRESETS as SCENARIOS;

/// The command line: `fake-lsp [--scenario NAME | --script FILE]`.
#[derive(Debug, clap::Parser)]
#[command(name = "fake-lsp")]
struct Args {
    /// A built-in scenario (default when neither is given: `default`).
    #[arg(long, value_name = "NAME", conflicts_with = "script",
          value_parser = clap::builder::PossibleValuesParser::new(SCENARIOS))]
    scenario: Option<String>,
    /// A JSON script file describing the server's behaviour (see crates/fake-lsp/src/script.rs).
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Only sleep this many seconds, reading nothing: the grandchild a `spawn_grandchild`
    /// server starts (the same program on every platform, where `sleep` may not exist).
    #[arg(long, value_name = "SECONDS", hide = true, conflicts_with_all = ["scenario", "script"])]
    sleep: Option<u64>,
}

/// The binary's `main`: reads the command line and runs the server (see [`run`]).
pub fn main() -> anyhow::Result<()> {
    let args: Args = clap::Parser::parse();
    if let Some(seconds) = args.sleep {
        std::thread::sleep(Duration::from_secs(seconds));
        return Ok(());
    }
    run(args.scenario.as_deref(), args.script.as_deref())
}

/// Runs the fake server on stdin/stdout until `exit` or end of input, as the named scenario or
/// script file says (the `default` scenario when neither is given).
pub fn run(scenario: Option<&str>, script: Option<&Path>) -> anyhow::Result<()> {
    let script = match script {
        Some(file) => Script::load(file)?,
        None => Script::preset(scenario.unwrap_or("default"))?,
    };
    let log = EventLog::from_env()?;
    observe::write_pid_file(std::process::id(), "pid")?;
    let first_starts = script.exit_clean_first_starts as usize;
    if first_starts > 0 && observe::starts() <= first_starts {
        eprintln!("fake-server: exiting at start, as scripted");
        return Ok(());
    }
    let grandchild = if script.spawn_grandchild {
        Some(spawn_grandchild()?)
    } else {
        None
    };
    let output = Arc::new(Output::new(log));
    let noise = Noise {
        garbage: script.garbage_before_publish,
        malformed: script.malformed_body,
        unknown_notifications: script.unknown_notification,
    };
    let publisher = Publisher::start(Arc::clone(&output), noise)?;
    let refresh_after = script.refresh_after_ms.map(Duration::from_millis);
    let pull = Pull::new(script.pull_cancel_first, refresh_after);
    let mut server = Server {
        script,
        output,
        publisher,
        encoding: Encoding::Utf16,
        root: None,
        root_dir: None,
        status: false,
        docs: HashMap::new(),
        loaded: false,
        configured_at: None,
        loaded_at: None,
        checks: 0,
        next_request: 1,
        progress_tokens: 0,
        pulls_seen: 0,
        watch_events: 0,
        pull,
        _grandchild: grandchild,
        pending_command: None,
    };
    server.serve(&mut io::stdin().lock())
}

/// Spawns this program as `--sleep 1000` (in our process group on Unix, our Job Object on
/// Windows) and records its pid.
fn spawn_grandchild() -> anyhow::Result<Child> {
    let program = std::env::current_exe().context("finding the fake server's own program")?;
    let child = Command::new(program)
        .args(["--sleep", "1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("spawning the grandchild `fake-lsp --sleep 1000`")?;
    eprintln!("fake-server: spawned grandchild {}", child.id());
    observe::write_pid_file(child.id(), "grandchild")?;
    Ok(child)
}

/// Exits with status 3, as scripted.
fn crash() -> ! {
    eprintln!("fake-server: crashing on purpose");
    std::process::exit(3)
}

/// What the loop does after a message.
enum Flow {
    Continue,
    Exit,
}

/// An open document as last reported by the client.
#[derive(Debug)]
struct Doc {
    text: String,
    version: Option<i64>,
}

/// The server's session state.
#[derive(Debug)]
struct Server {
    script: Script,
    output: Arc<Output>,
    publisher: Publisher,
    encoding: Encoding,
    root: Option<String>,
    /// The root URI as a local path, where `IMPORT`s are resolved.
    root_dir: Option<PathBuf>,
    /// Whether to send `experimental/serverStatus` (scripted and declared by the client).
    status: bool,
    docs: HashMap<String, Doc>,
    /// Whether a document was ever opened (the project is loaded from then on).
    loaded: bool,
    /// With `configure_ms`: when the configuration is loaded (before, publishes are empty).
    configured_at: Option<Instant>,
    /// With `loading_ms`: when the project is loaded (before, pulls are answered empty).
    loaded_at: Option<Instant>,
    /// With `check_on_save_ms`: how many checks on save began.
    checks: u64,
    next_request: u64,
    progress_tokens: u64,
    /// How many pulls came so far (for `pull_busy_ms`).
    pulls_seen: usize,
    watch_events: u32,
    pull: Pull,
    /// Kept (never waited on) so the grandchild outlives nothing but us.
    _grandchild: Option<Child>,
    /// A `workspace/executeCommand` waiting for the client's answer to our applyEdit: (its
    /// id, our request's id).
    pending_command: Option<(Value, Value)>,
}

impl Server {
    fn serve(&mut self, input: &mut impl io::BufRead) -> anyhow::Result<()> {
        let mut count: u64 = 0;
        while let Some(body) = wire::read_frame(input)? {
            count += 1;
            let message = serde_json::from_slice::<Value>(&body);
            if let Ok(message) = &message {
                self.output.record_in(message);
            }
            if self.script.crash_on_message == Some(count) {
                crash();
            }
            let message = match message {
                Ok(message) => message,
                Err(e) => {
                    eprintln!("fake-server: ignoring unparsable frame: {e}");
                    continue;
                }
            };
            let method = message.get("method").and_then(Value::as_str);
            if method.is_some() && method == self.script.crash_on_method.as_deref() {
                crash();
            }
            if let Flow::Exit = self.handle(&message)? {
                break;
            }
        }
        Ok(())
    }

    fn handle(&mut self, message: &Value) -> anyhow::Result<Flow> {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A response to one of our requests: the applyEdit a command waits for?
            if let Some((command, ours)) = self.pending_command.take() {
                if message.get("id") == Some(&ours) {
                    let answer = message.get("result").cloned().unwrap_or(Value::Null);
                    self.respond(&command, answer)?;
                } else {
                    self.pending_command = Some((command, ours));
                }
            }
            return Ok(Flow::Continue);
        };
        let params = message.get("params").unwrap_or(&Value::Null);
        if self.script.strict && message.get("params").is_some() {
            if let Some(field) = squiggle_protocol::strict::first_null(params, "params") {
                let error = format!("null value is not allowed for field {field}");
                eprintln!("fake-server: refusing {method}: {error}");
                if let Some(id) = message.get("id") {
                    self.respond_error(id, json!({"code": -32602, "message": error}))?;
                }
                return Ok(Flow::Continue);
            }
        }
        match message.get("id") {
            Some(id) => self.request(method, id, params)?,
            None => return self.notification(method, params),
        }
        Ok(Flow::Continue)
    }

    fn request(&mut self, method: &str, id: &Value, params: &Value) -> anyhow::Result<()> {
        match method {
            "initialize" => {
                if self.script.hang_on_initialize {
                    eprintln!("fake-server: not answering initialize, as scripted");
                    return Ok(());
                }
                if self.script.initialize_delay_ms > 0 {
                    std::thread::sleep(Duration::from_millis(self.script.initialize_delay_ms));
                }
                let result = self.initialize(params);
                self.respond(id, result)
            }
            "shutdown" if self.script.shutdown_hangs => {
                eprintln!("fake-server: not answering shutdown, as scripted");
                Ok(())
            }
            "shutdown" => self.respond(id, Value::Null),
            "textDocument/documentSymbol" if self.script.symbols => {
                let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
                let text = self.text_of(uri);
                self.respond(id, symbols::document_symbols(&text, self.encoding))
            }
            "textDocument/definition" if self.script.definition => {
                let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
                let at = |key: &str| params["position"][key].as_u64().unwrap_or_default() as usize;
                let text = self.text_of(uri);
                let found =
                    symbols::definitions(uri, &text, at("line"), at("character"), self.encoding);
                self.respond(id, found)
            }
            "textDocument/hover" if self.script.hover => {
                let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
                let at = |key: &str| params["position"][key].as_u64().unwrap_or_default() as usize;
                let text = self.text_of(uri);
                self.respond(
                    id,
                    symbols::hover(&text, at("line"), at("character"), self.encoding),
                )
            }
            "workspace/symbol" if self.script.workspace_symbols => {
                let query = params["query"].as_str().unwrap_or_default();
                let found = match (&self.root_dir, self.loaded) {
                    (Some(root), true) => symbols::workspace_symbols(root, query, self.encoding),
                    _ => json!([]),
                };
                self.respond(id, found)
            }
            "textDocument/diagnostic" if self.script.pull && self.script.pull_error.is_some() => {
                let message = self.script.pull_error.clone().unwrap_or_default();
                self.respond_error(id, json!({"code": -32603, "message": message}))
            }
            "textDocument/diagnostic"
                if self.script.pull && self.loaded_at.is_some_and(|at| at > Instant::now()) =>
            {
                // Still loading the project: nothing yet, at once (rust-analyzer does so).
                self.respond(id, json!({"kind": "full", "items": []}))
            }
            "textDocument/diagnostic" if self.script.pull => {
                let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
                let previous = params["previousResultId"].as_str();
                let text = self.text_of(uri);
                let items = self.diagnose(&text);
                let token = self.script.pull_progress.then(|| {
                    self.progress_tokens += 1;
                    format!("fake-pull-work-{}", self.progress_tokens)
                });
                if let Some(token) = &token {
                    let begin = json!({"kind": "begin", "title": "Checking"});
                    self.output.send(&progress(token, begin))?;
                }
                if let Some(ms) = self.script.pull_busy_ms.get(self.pulls_seen) {
                    std::thread::sleep(Duration::from_millis(*ms));
                }
                self.pulls_seen += 1;
                match self.pull.answer(uri, text, items, previous) {
                    Ok(report) => {
                        self.respond(id, report)?;
                        if let Some(token) = &token {
                            self.output.send(&progress(token, json!({"kind": "end"})))?;
                        }
                        self.pull.answered(&self.output);
                        Ok(())
                    }
                    Err(error) => self.respond_error(id, error),
                }
            }
            method if breadth::ERRING.contains(&method) && self.script.breadth_error.is_some() => {
                let message = self.script.breadth_error.clone().unwrap_or_default();
                self.respond_error(id, json!({"code": -32603, "message": message}))
            }
            "workspace/diagnostic" if self.script.workspace_diagnostics => {
                let report = match &self.root_dir {
                    Some(root) => breadth::workspace_report(root, self.encoding),
                    None => json!({"items": []}),
                };
                self.respond(id, report)
            }
            "textDocument/prepareRename" if self.script.refactor.prepare => {
                let (text, line, character) = self.position_of(params);
                let answer =
                    refactor::prepare_rename(&self.script.refactor, &text, line, character);
                self.respond(id, answer)
            }
            "textDocument/rename" if self.script.refactor.rename => {
                if let Some(message) = self.script.refactor.rename_error.clone() {
                    return self.respond_error(id, json!({"code": -32603, "message": message}));
                }
                let (text, line, character) = self.position_of(params);
                let open: HashMap<String, String> = self
                    .docs
                    .iter()
                    .map(|(uri, doc)| (uri.clone(), doc.text.clone()))
                    .collect();
                let root = self.root_dir.clone().unwrap_or_default();
                let new_name = params["newName"].as_str().unwrap_or_default();
                let answer = refactor::rename(&root, &open, &text, line, character, new_name);
                self.respond(id, answer)
            }
            "textDocument/codeAction" if self.script.refactor.actions => {
                let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
                let line =
                    |end: &str| params["range"][end]["line"].as_u64().unwrap_or_default() as usize;
                let answer =
                    refactor::code_actions(uri, &self.text_of(uri), line("start"), line("end"));
                self.respond(id, answer)
            }
            "codeAction/resolve" if self.script.refactor.actions => {
                let answer = refactor::resolve(params, |uri| self.text_of(uri));
                self.respond(id, answer)
            }
            "workspace/executeCommand" if self.script.refactor.actions => {
                let edit = self
                    .script
                    .refactor
                    .apply_edit
                    .clone()
                    .unwrap_or(Value::Null);
                // `$ROOT` may be in a key (the `changes` map's URIs), so it is replaced in the text.
                let root = self.root.as_deref().unwrap_or_default();
                let edit: Value = serde_json::from_str(&edit.to_string().replace("$ROOT", root))?;
                let request = self.client_request("workspace/applyEdit", json!({"edit": edit}));
                self.pending_command = Some((id.clone(), request["id"].clone()));
                self.output.send(&request)
            }
            _ => self.respond_error(
                id,
                json!({"code": -32601, "message": format!("method not found: {method}")}),
            ),
        }
    }

    fn notification(&mut self, method: &str, params: &Value) -> anyhow::Result<Flow> {
        let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
        let version = params["textDocument"]["version"].as_i64();
        match method {
            "initialized" => {
                if let (Some(ms), true) = (self.script.loading_ms, self.status) {
                    let after = Duration::from_millis(ms);
                    self.loaded_at = Some(Instant::now() + after);
                    self.publisher.send(server_status(false), Duration::ZERO);
                    self.publisher.send(server_status(true), after);
                }
                self.send_server_requests()?;
                self.register_dynamic()?;
                if let Some(ms) = self.script.configure_ms {
                    let after = Duration::from_millis(ms);
                    self.configured_at = Some(Instant::now() + after);
                    let register = self.client_request(
                        "client/registerCapability",
                        json!({"registrations": [{"id": "fake-configured", "method": "workspace/didChangeConfiguration"}]}),
                    );
                    self.publisher.send(register, after);
                }
            }
            "workspace/didChangeWatchedFiles" => self.watched_files_changed(),
            "exit" => return Ok(Flow::Exit),
            "textDocument/didOpen" => {
                let text = params["textDocument"]["text"].as_str().unwrap_or_default();
                self.crash_on_text(text);
                if let Some(edit) = self.script.apply_edit_on_open.clone() {
                    let root = self.root.as_deref().unwrap_or_default();
                    let edit: Value =
                        serde_json::from_str(&edit.to_string().replace("$ROOT", root))?;
                    let request = self.client_request("workspace/applyEdit", json!({"edit": edit}));
                    self.output.send(&request)?;
                }
                let doc = Doc {
                    text: text.to_owned(),
                    version,
                };
                self.docs.insert(uri.to_owned(), doc);
                self.loaded = true;
                self.touch(uri, Trigger::Open);
            }
            "textDocument/didChange" => {
                let changes = params["contentChanges"].as_array().map(Vec::as_slice);
                let full = changes
                    .unwrap_or_default()
                    .iter()
                    .rev()
                    .find(|c| c.get("range").is_none())
                    .and_then(|c| c["text"].as_str());
                if let Some(text) = full {
                    self.crash_on_text(text);
                }
                let doc = self.docs.entry(uri.to_owned()).or_insert(Doc {
                    text: String::new(),
                    version: None,
                });
                match full {
                    Some(text) => doc.text = text.to_owned(),
                    None => eprintln!("fake-server: ignoring ranged change for {uri}"),
                }
                doc.version = version.or(doc.version);
                self.touch(uri, Trigger::Change);
            }
            "textDocument/didSave" => {
                if let (Some(text), Some(doc)) = (params["text"].as_str(), self.docs.get_mut(uri)) {
                    doc.text = text.to_owned();
                }
                self.touch(uri, Trigger::Save);
                if let Some(ms) = self.script.check_on_save_ms {
                    self.check_on_save(uri, Duration::from_millis(ms));
                }
            }
            "textDocument/didClose" => {
                self.docs.remove(uri);
                if self.script.clear_on_close {
                    self.output.send(&publish_params(uri, None, Vec::new()))?;
                }
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// Runs a check of the saved file as rust-analyzer's flycheck does: progress begins now and
    /// ends after `takes`; what it found is published shortly after the end.
    fn check_on_save(&mut self, uri: &str, takes: Duration) {
        let token = format!("fake/flycheck/{}", self.checks);
        self.checks += 1;
        let begin = json!({"kind": "begin", "title": "fake check"});
        self.publisher.send(progress(&token, begin), Duration::ZERO);
        self.publisher
            .send(progress(&token, json!({"kind": "end"})), takes);
        let doc = self.docs.get(uri);
        let text = doc.map(|doc| doc.text.as_str()).unwrap_or_default();
        let version = doc.and_then(|doc| doc.version);
        let found = check::findings(text);
        self.publisher.publish(
            publish_params(uri, version, found),
            takes + Duration::from_millis(30),
        );
        // The whole project is checked: every other file with `NEEDS` lines gets its list.
        let root = (self.root.as_deref().unwrap_or("file://")).trim_end_matches('/');
        let text_of = |file: &str| self.text_of(&format!("{root}/{file}"));
        let others = self
            .root_dir
            .as_deref()
            .map(check::files_under)
            .unwrap_or_default();
        for path in others {
            let other = format!("file://{}", path.display());
            let text = self.text_of(&other);
            if other == uri || !text.contains("NEEDS ") {
                continue;
            }
            let found = diagnose::unmet_needs(&text, self.encoding, &text_of);
            self.publisher.publish(
                publish_params(&other, None, found),
                takes + Duration::from_millis(30),
            );
        }
    }

    /// Crashes when the script says so for a document holding this text.
    fn crash_on_text(&self, text: &str) {
        if self
            .script
            .crash_on_text
            .as_deref()
            .is_some_and(|needle| text.contains(needle))
        {
            crash();
        }
    }

    /// Builds the InitializeResult and remembers the root and encoding.
    fn initialize(&mut self, params: &Value) -> Value {
        self.root = root_uri(params);
        self.root_dir = self
            .root
            .as_deref()
            .and_then(|uri| uri.strip_prefix("file://"))
            .map(|path| PathBuf::from(percent_decode(path)));
        let declared = &params["capabilities"]["experimental"]["serverStatusNotification"];
        self.status = self.script.server_status && declared.as_bool() == Some(true);
        let offered = params["capabilities"]["general"]["positionEncodings"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut capabilities = json!({
            "textDocumentSync": {"openClose": true, "change": 1, "save": {"includeText": false}},
        });
        if let Some(wanted @ (Encoding::Utf8 | Encoding::Utf32)) = self.script.position_encoding {
            if offered.iter().any(|e| e.as_str() == Some(wanted.name())) {
                self.encoding = wanted;
                capabilities["positionEncoding"] = wanted.name().into();
            }
        }
        if self.script.symbols {
            capabilities["documentSymbolProvider"] = true.into();
        }
        if self.script.workspace_symbols {
            capabilities["workspaceSymbolProvider"] = true.into();
        }
        if self.script.definition {
            capabilities["definitionProvider"] = true.into();
        }
        if self.script.hover {
            capabilities["hoverProvider"] = true.into();
        }
        if self.script.pull && !self.script.pull_register {
            capabilities["diagnosticProvider"] = json!({"interFileDependencies": false, "workspaceDiagnostics": self.script.workspace_diagnostics});
        }
        if self.script.breadth_error.is_some() {
            for provider in [
                "implementationProvider",
                "typeDefinitionProvider",
                "callHierarchyProvider",
            ] {
                capabilities[provider] = true.into();
            }
        }
        refactor::declare(&self.script.refactor, &mut capabilities);
        json!({
            "capabilities": capabilities,
            "serverInfo": {"name": "fake-server", "version": "0.1"},
        })
    }

    /// Sends the scripted server-to-client requests without waiting for answers.
    fn send_server_requests(&mut self) -> anyhow::Result<()> {
        for request in self.script.server_requests.clone() {
            let (method, params) = match request {
                ServerRequest::Configuration => (
                    "workspace/configuration",
                    json!({"items": [{"section": "fake"}, {"section": "fake.nested"}]}),
                ),
                ServerRequest::RegisterCapability => (
                    "client/registerCapability",
                    json!({"registrations": [{
                        "id": "fake-watch-1",
                        "method": "workspace/didChangeWatchedFiles",
                        "registerOptions": {"watchers": [{"globPattern": "**/*.fake"}]},
                    }]}),
                ),
                ServerRequest::WorkDoneProgressCreate => (
                    "window/workDoneProgress/create",
                    json!({"token": "fake-progress-1"}),
                ),
                ServerRequest::WorkspaceFolders => ("workspace/workspaceFolders", Value::Null),
            };
            let message = self.client_request(method, params);
            self.output.send(&message)?;
        }
        Ok(())
    }

    /// Registers the scripted watchers and pull diagnostics, without waiting for answers.
    fn register_dynamic(&mut self) -> anyhow::Result<()> {
        if !self.script.watch.is_empty() {
            let root = self
                .root
                .as_deref()
                .unwrap_or_default()
                .trim_end_matches('/');
            let watchers: Vec<Value> = self
                .script
                .watch
                .iter()
                .map(|w| replace_root(w, root))
                .collect();
            let message = self.client_request(
                "client/registerCapability",
                json!({"registrations": [{
                    "id": "fake-watch-1",
                    "method": "workspace/didChangeWatchedFiles",
                    "registerOptions": {"watchers": watchers},
                }]}),
            );
            self.output.send(&message)?;
        }
        if self.script.pull && self.script.pull_register {
            let message = self.client_request(
                "client/registerCapability",
                json!({"registrations": [{
                    "id": "fake-pull-1",
                    "method": "textDocument/diagnostic",
                    "registerOptions": {
                        "interFileDependencies": false,
                        "workspaceDiagnostics": false,
                        "documentSelector": null,
                    },
                }]}),
            );
            self.output.send(&message)?;
        }
        Ok(())
    }

    /// Re-publishes every open document as after a change; unregisters watchers if scripted.
    fn watched_files_changed(&mut self) {
        self.watch_events += 1;
        let mut uris: Vec<String> = self.docs.keys().cloned().collect();
        uris.sort();
        for uri in uris {
            self.touch(&uri, Trigger::Change);
        }
        if self.script.unregister_after_events == Some(self.watch_events) {
            let message = self.client_request(
                "client/unregisterCapability",
                json!({"unregisterations": [{
                    "id": "fake-watch-1",
                    "method": "workspace/didChangeWatchedFiles",
                }]}),
            );
            self.publisher.send(message, Duration::ZERO);
        }
    }

    /// A server-to-client request with the next `fake-req-<n>` id (params omitted if null).
    fn client_request(&mut self, method: &str, params: Value) -> Value {
        let id = format!("fake-req-{}", self.next_request);
        self.next_request += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        message
    }

    /// Publishes diagnostics for `uri` (and `also_publish` files) if `trigger` is scripted.
    ///
    /// On the wire: status (not quiescent), progress create and begin, the empty list,
    /// then after the delay the real lists, progress end, status (quiescent).
    fn touch(&mut self, uri: &str, trigger: Trigger) {
        if !self.script.diagnose_on.contains(&trigger) {
            return;
        }
        let mut delay = Duration::from_millis(self.script.publish_delay_ms);
        let version = self
            .docs
            .get(uri)
            .and_then(|d| d.version)
            .filter(|_| !self.script.unversioned);
        let now = Instant::now();
        if let Some(at) = self.configured_at.filter(|at| *at > now) {
            // Not configured yet: an empty placeholder now (straight out, not behind the
            // queued registration), the diagnostics once configured, after the registration.
            let placeholder = publish_params(uri, version, Vec::new());
            if let Err(err) = self.output.send(&placeholder) {
                eprintln!("fake-server: cannot publish the placeholder: {err}");
            }
            let diagnostics = self.diagnose(&self.text_of(uri));
            self.publisher
                .publish(publish_params(uri, version, diagnostics), at - now);
            return;
        }
        if self.status {
            self.publisher.send(server_status(false), Duration::ZERO);
        }
        let token = self.script.progress_ms.map(|ms| {
            self.progress_tokens += 1;
            let token = format!("fake-work-{}", self.progress_tokens);
            let create = json!({"token": token});
            let create = self.client_request("window/workDoneProgress/create", create);
            self.publisher.send(create, Duration::ZERO);
            let begin = json!({"kind": "begin", "title": "Indexing", "cancellable": false});
            self.publisher.send(progress(&token, begin), Duration::ZERO);
            delay += Duration::from_millis(ms);
            token
        });
        if token.is_some() || self.script.publish_empty_first {
            self.publisher
                .publish(publish_params(uri, version, Vec::new()), Duration::ZERO);
        }
        let slow = (self.script.slow_files.iter())
            .filter(|(end, _)| uri.ends_with(end.as_str()))
            .map(|(_, ms)| Duration::from_millis(*ms))
            .sum::<Duration>();
        let diagnostics = self.diagnose(&self.text_of(uri));
        self.publisher
            .publish(publish_params(uri, version, diagnostics), delay + slow);
        let root = self.root.as_deref().unwrap_or("file://");
        for (path, text) in &self.script.also_publish {
            let other = format!("{}/{}", root.trim_end_matches('/'), path);
            let diagnostics = self.diagnose(text);
            self.publisher
                .publish(publish_params(&other, None, diagnostics), delay);
        }
        if let Some(token) = token {
            let end = json!({"kind": "end"});
            self.publisher.send(progress(&token, end), Duration::ZERO);
        }
        if self.status {
            self.publisher.send(server_status(true), Duration::ZERO);
        }
    }

    /// The diagnostics for `text`, with `IMPORT`s resolved against the root folder.
    fn diagnose(&self, text: &str) -> Vec<Value> {
        let mut found = diagnose::diagnostics(text, self.encoding, self.root_dir.as_deref());
        // `NEEDS <file> <word>`: the other document as this server holds it (open or on disk).
        let root = self
            .root
            .as_deref()
            .unwrap_or("file://")
            .trim_end_matches('/');
        let text_of = |file: &str| self.text_of(&format!("{root}/{file}"));
        found.extend(diagnose::unmet_needs(text, self.encoding, &text_of));
        found
    }

    /// The document text as last seen, else read from disk, else empty.
    /// The document text and the (line, character) of a position request.
    fn position_of(&self, params: &Value) -> (String, usize, usize) {
        let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
        let at = |key: &str| params["position"][key].as_u64().unwrap_or_default() as usize;
        (self.text_of(uri), at("line"), at("character"))
    }

    fn text_of(&self, uri: &str) -> String {
        if let Some(doc) = self.docs.get(uri) {
            return doc.text.clone();
        }
        uri.strip_prefix("file://")
            .and_then(|path| std::fs::read_to_string(percent_decode(path)).ok())
            .unwrap_or_default()
    }

    fn respond(&self, id: &Value, result: Value) -> anyhow::Result<()> {
        self.output
            .send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    fn respond_error(&self, id: &Value, error: Value) -> anyhow::Result<()> {
        self.output
            .send(&json!({"jsonrpc": "2.0", "id": id, "error": error}))
    }
}

/// A `$/progress` notification for `token`.
fn progress(token: &str, value: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": token, "value": value}})
}

/// rust-analyzer's `experimental/serverStatus` notification.
fn server_status(quiescent: bool) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "experimental/serverStatus",
        "params": {"health": "ok", "quiescent": quiescent},
    })
}

/// `value` with every `$ROOT` in its strings replaced by `root`.
fn replace_root(value: &Value, root: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("$ROOT", root)),
        Value::Array(items) => Value::Array(items.iter().map(|v| replace_root(v, root)).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), replace_root(v, root)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A `textDocument/publishDiagnostics` notification.
fn publish_params(uri: &str, version: Option<i64>, diagnostics: Vec<Value>) -> Value {
    let mut params = json!({"uri": uri, "diagnostics": diagnostics});
    if let Some(version) = version {
        params["version"] = version.into();
    }
    json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
}

/// The workspace root URI from InitializeParams, if any.
fn root_uri(params: &Value) -> Option<String> {
    if let Some(uri) = params["rootUri"].as_str() {
        return Some(uri.to_owned());
    }
    if let Some(uri) = params["workspaceFolders"][0]["uri"].as_str() {
        return Some(uri.to_owned());
    }
    params["rootPath"].as_str().map(|p| format!("file://{p}"))
}

/// Decodes `%XX` escapes in a URI path.
fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_a_scenario_or_a_script_not_both() {
        use clap::Parser;
        let args = Args::try_parse_from(["fake-lsp", "--scenario", "pull"]).expect("parses");
        assert!(
            matches!(args, Args { scenario: Some(ref s), script: None, sleep: None } if s == "pull")
        );
        let both = ["fake-lsp", "--scenario", "pull", "--script", "x.json"];
        assert!(Args::try_parse_from(both).is_err());
        let sleeper = Args::try_parse_from(["fake-lsp", "--sleep", "5"]).expect("parses");
        assert_eq!(sleeper.sleep, Some(5));
        assert!(Args::try_parse_from(["fake-lsp", "--sleep", "5", "--scenario", "pull"]).is_err());
        assert!(Args::try_parse_from(["fake-lsp", "--scenario", "nope"]).is_err());
    }

    #[test]
    fn decodes_percent_escapes() {
        assert_eq!(percent_decode("/a%20b/c%zz"), "/a b/c%zz");
    }

    #[test]
    fn replaces_root_in_nested_strings() {
        let w = json!({"globPattern": {"baseUri": "$ROOT", "pattern": "$ROOT/x"}, "kind": 3});
        let r = replace_root(&w, "file:///r");
        assert_eq!(
            r,
            json!({"globPattern": {"baseUri": "file:///r", "pattern": "file:///r/x"}, "kind": 3})
        );
    }

    #[test]
    fn publish_includes_version_when_known() {
        let p = publish_params("file:///x", Some(3), Vec::new());
        assert_eq!(p["params"]["version"], 3);
        assert!(publish_params("file:///x", None, Vec::new())["params"]
            .get("version")
            .is_none());
    }
}
