//! A scriptable fake LSP server on stdio, for exact, fault-injected test scenarios.
//!
//! Usage: `fake-server [--scenario NAME | --script FILE]`; see [`script::Script`].

mod diagnose;
mod observe;
mod publisher;
mod script;
mod wire;

use std::collections::HashMap;
use std::io;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{json, Value};

use diagnose::Encoding;
use observe::EventLog;
use publisher::{Noise, Publisher};
use script::{Script, ServerRequest, Trigger};
use wire::Output;

/// Runs the fake server on stdin/stdout until `exit` or end of input.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let script = Script::from_args(args)?;
    let log = EventLog::from_env()?;
    observe::write_pid_file(std::process::id(), "pid")?;
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
    let mut server = Server {
        script,
        output,
        publisher,
        encoding: Encoding::Utf16,
        root: None,
        docs: HashMap::new(),
        next_request: 1,
        _grandchild: grandchild,
    };
    server.serve(&mut io::stdin().lock())
}

/// Spawns `sleep 1000` in our process group and records its pid.
fn spawn_grandchild() -> anyhow::Result<Child> {
    let child = Command::new("sleep")
        .arg("1000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("spawning grandchild `sleep 1000`")?;
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
    docs: HashMap<String, Doc>,
    next_request: u64,
    /// Kept (never waited on) so the grandchild outlives nothing but us.
    _grandchild: Option<Child>,
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
            return Ok(Flow::Continue); // a response to one of our requests
        };
        let params = message.get("params").unwrap_or(&Value::Null);
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
            "textDocument/diagnostic" if self.script.pull => {
                let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
                let items = diagnose::diagnostics(&self.text_of(uri), self.encoding);
                self.respond(id, json!({"kind": "full", "items": items}))
            }
            _ => self.output.send(&json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32601, "message": format!("method not found: {method}")},
            })),
        }
    }

    fn notification(&mut self, method: &str, params: &Value) -> anyhow::Result<Flow> {
        let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
        let version = params["textDocument"]["version"].as_i64();
        match method {
            "initialized" => self.send_server_requests()?,
            "exit" => return Ok(Flow::Exit),
            "textDocument/didOpen" => {
                let text = params["textDocument"]["text"].as_str().unwrap_or_default();
                let doc = Doc {
                    text: text.to_owned(),
                    version,
                };
                self.docs.insert(uri.to_owned(), doc);
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
            }
            "textDocument/didClose" => {
                self.docs.remove(uri);
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// Builds the InitializeResult and remembers the root and encoding.
    fn initialize(&mut self, params: &Value) -> Value {
        self.root = root_uri(params);
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
        if self.script.pull {
            capabilities["diagnosticProvider"] =
                json!({"interFileDependencies": false, "workspaceDiagnostics": false});
        }
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
            let id = format!("fake-req-{}", self.next_request);
            self.next_request += 1;
            let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
            if !params.is_null() {
                message["params"] = params;
            }
            self.output.send(&message)?;
        }
        Ok(())
    }

    /// Publishes diagnostics for `uri` (and `also_publish` files) if `trigger` is scripted.
    fn touch(&self, uri: &str, trigger: Trigger) {
        if !self.script.diagnose_on.contains(&trigger) {
            return;
        }
        let delay = Duration::from_millis(self.script.publish_delay_ms);
        let version = self.docs.get(uri).and_then(|d| d.version);
        if self.script.publish_empty_first {
            self.publisher
                .publish(publish_params(uri, version, Vec::new()), Duration::ZERO);
        }
        let diagnostics = diagnose::diagnostics(&self.text_of(uri), self.encoding);
        self.publisher
            .publish(publish_params(uri, version, diagnostics), delay);
        let root = self.root.as_deref().unwrap_or("file://");
        for (path, text) in &self.script.also_publish {
            let other = format!("{}/{}", root.trim_end_matches('/'), path);
            let diagnostics = diagnose::diagnostics(text, self.encoding);
            self.publisher
                .publish(publish_params(&other, None, diagnostics), delay);
        }
    }

    /// The document text as last seen, else read from disk, else empty.
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
    fn decodes_percent_escapes() {
        assert_eq!(percent_decode("/a%20b/c%zz"), "/a b/c%zz");
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
