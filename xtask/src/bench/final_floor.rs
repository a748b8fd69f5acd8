//! The definitive floor: a raw LSP client's time to a server's *final* answer for a document
//! version, from the server's own signal, with no quiet time added. A pull-capable server is
//! pulled (`textDocument/diagnostic`) right after the sync, typescript-language-server is asked
//! through tsserver (`semanticDiagnosticsSync`), and a push-only server's last publish for the
//! version is found by waiting generously after each publish, but the time is taken at that
//! publish. rust-analyzer is pulled once it says it is ready (serverStatus quiescent), and its
//! answer for a saved file waits for the check its save started (its `cargo check`) to end
//! and for what that check publishes. squiggle's cold and warm checks are measured against it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::peer::Peer;

/// How long any single step may take.
const LIMIT: Duration = Duration::from_secs(60);

/// How a raw client learns that the server's answer for a version is final.
#[derive(Debug, Clone, Copy)]
pub enum Signal {
    /// A `textDocument/diagnostic` pull after the sync: its answer is final.
    Pull,
    /// typescript-language-server: `workspace/executeCommand` `typescript.tsserverRequest`
    /// `semanticDiagnosticsSync` after the sync; tsserver answers it for the synced text.
    Tsserver,
    /// Push only: the last publish for the version (a publish of another version does not
    /// count; an unversioned one does), known to be the last once `generous` has passed
    /// without another. The time is taken at that publish, not after the wait.
    LastPublish { generous: Duration },
    /// rust-analyzer on a saved file: a pull sent once it says it is ready (serverStatus
    /// quiescent), and the end of the check its save started (progress tokens starting with
    /// `check`) with the publishes that follow it (the last one found after `quiet` without
    /// another). The time is taken at the last of these.
    PullAndCheck {
        check: &'static str,
        quiet: Duration,
    },
}

impl Signal {
    /// How the report names it.
    pub fn describe(&self) -> String {
        match self {
            Signal::Pull => "pull answer".to_string(),
            Signal::Tsserver => "tsserver semanticDiagnosticsSync answer".to_string(),
            Signal::LastPublish { generous } => format!(
                "last publish for the version (found after {} ms of quiet)",
                generous.as_millis()
            ),
            Signal::PullAndCheck { quiet, .. } => format!(
                "pull answer once ready, and the end of the check on save with its publishes (found after {} ms of quiet)",
                quiet.as_millis()
            ),
        }
    }
}

/// A raw client with one open document.
pub struct FinalFloor {
    peer: Peer,
    signal: Signal,
    uri: String,
    path: PathBuf,
    version: i64,
    /// Whether the server said it is ready (serverStatus quiescent), for [`Signal::PullAndCheck`].
    ready: bool,
}

/// A server as the floor runs it: its program and arguments, its files' language id, and the
/// signal of its final answer.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    /// The server's executable.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [&'a str],
    /// The LSP language id of the file opened.
    pub language: &'a str,
    /// The signal the floor waits for.
    pub signal: Signal,
}

impl FinalFloor {
    /// Starts `server` on `root` and opens `file` with `text`: the floor, and when the server's
    /// final answer for the file arrived.
    pub fn start_open(
        server: Launch<'_>,
        root: &Path,
        file: &Path,
        text: &str,
    ) -> anyhow::Result<(Self, Instant)> {
        let mut floor = Self::start(server.program, server.args, root, server.signal)?;
        let answered = floor.open(file, server.language, text)?;
        Ok((floor, answered))
    }

    /// Spawns and initializes the server for `root`, declaring pull diagnostics when it is to
    /// be pulled and versioned publishes otherwise, and, as squiggle does, configuration and
    /// dynamically registered file watching (so that the server does the same work for both:
    /// TypeScript 7 watches the project's files only for a client that can). Optional fields
    /// are left out, never null.
    pub fn start(
        program: &Path,
        args: &[&str],
        root: &Path,
        signal: Signal,
    ) -> anyhow::Result<Self> {
        let mut peer = Peer::spawn(program, args, root, &[])?;
        let root_uri = format!("file://{}", root.display());
        let id = peer.request("initialize", initialize_params(&root_uri, signal))?;
        let (_, answer) = peer.answer(id, LIMIT)?;
        if answer.get("error").is_some_and(|e| !e.is_null()) {
            bail!("initialize failed: {answer}");
        }
        peer.notify("initialized", json!({}))?;
        Ok(Self {
            peer,
            signal,
            uri: String::new(),
            path: PathBuf::new(),
            version: 0,
            ready: false,
        })
    }

    /// Opens a document; when the server's final answer for it arrived.
    pub fn open(&mut self, path: &Path, language_id: &str, text: &str) -> anyhow::Result<Instant> {
        self.uri = format!("file://{}", path.display());
        self.path = path.to_path_buf();
        self.version = 1;
        let item = json!({"uri": self.uri, "languageId": language_id, "version": 1, "text": text});
        self.peer
            .notify("textDocument/didOpen", json!({"textDocument": item}))?;
        self.save()?;
        self.final_answer()
    }

    /// Changes the open document (full text); how long until the server's final answer. For
    /// a server whose answer waits for its check on save, the text is written to the file
    /// first (as an editor saves it; not timed) and saved after the change.
    pub fn change(&mut self, text: &str) -> anyhow::Result<Duration> {
        if matches!(self.signal, Signal::PullAndCheck { .. }) {
            std::fs::write(&self.path, text)?;
        }
        self.version += 1;
        let started = Instant::now();
        let params = json!({"textDocument": {"uri": self.uri, "version": self.version},
                            "contentChanges": [{"text": text}]});
        self.peer.notify("textDocument/didChange", params)?;
        self.save()?;
        Ok(self.final_answer()?.duration_since(started))
    }

    /// `didSave` for a server whose answer waits for its check on save (the file holds the
    /// text); nothing for the others.
    fn save(&mut self) -> anyhow::Result<()> {
        if !matches!(self.signal, Signal::PullAndCheck { .. }) {
            return Ok(());
        }
        let params = json!({"textDocument": {"uri": self.uri}});
        self.peer.notify("textDocument/didSave", params)
    }

    /// Asks for (or waits for) the final answer for the current version; when it arrived.
    fn final_answer(&mut self) -> anyhow::Result<Instant> {
        match self.signal {
            Signal::Pull => {
                let params = json!({"textDocument": {"uri": self.uri}});
                let id = self.peer.request("textDocument/diagnostic", params)?;
                let (at, answer) = self.peer.answer(id, LIMIT)?;
                let kind = &answer["result"]["kind"];
                if kind != "full" && kind != "unchanged" {
                    bail!("the pull was not answered with a report: {answer}");
                }
                Ok(at)
            }
            Signal::Tsserver => {
                let params = json!({"command": "typescript.tsserverRequest",
                                    "arguments": ["semanticDiagnosticsSync", {"file": self.uri}]});
                let id = self.peer.request("workspace/executeCommand", params)?;
                let (at, answer) = self.peer.answer(id, LIMIT)?;
                if answer["result"]["success"] != true {
                    bail!("tsserver did not answer semanticDiagnosticsSync: {answer}");
                }
                Ok(at)
            }
            Signal::LastPublish { generous } => self.last_publish(generous),
            Signal::PullAndCheck { check, quiet } => self.pull_and_check(check, quiet),
        }
    }

    /// The pull once the server is ready, and the end of a check begun after the save with the
    /// publishes that follow it: when the last of them arrived.
    fn pull_and_check(&mut self, check: &str, quiet: Duration) -> anyhow::Result<Instant> {
        let deadline = Instant::now() + LIMIT;
        let pull = |peer: &mut Peer, uri: &str| {
            peer.request(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": uri}}),
            )
        };
        let mut asked = if self.ready {
            Some(pull(&mut self.peer, &self.uri)?)
        } else {
            None
        };
        let mut pulled: Option<Instant> = None;
        let mut running: HashSet<String> = HashSet::new();
        let mut began = false;
        // The end of the last check, then the last publish after it.
        let mut ended: Option<Instant> = None;
        loop {
            // Both parts in: done once the check's publishes have stopped.
            let wait = match (pulled, ended) {
                (Some(_), Some(at)) => (at + quiet).saturating_duration_since(Instant::now()),
                _ => deadline.saturating_duration_since(Instant::now()),
            };
            let Some((at, message)) = self.peer.next_within(wait) else {
                return match (pulled, ended) {
                    (Some(pulled), Some(ended)) => Ok(pulled.max(ended)),
                    _ => bail!(
                        "no final answer within {LIMIT:?} (pull answered: {}, check ended: {})",
                        pulled.is_some(),
                        ended.is_some()
                    ),
                };
            };
            let method = message["method"].as_str();
            let token = message["params"]["token"].as_str().unwrap_or_default();
            let answers_pull = asked.is_some_and(|id| message["id"] == id);
            if answers_pull && method.is_none() {
                let kind = &message["result"]["kind"];
                if kind != "full" && kind != "unchanged" {
                    bail!("the pull was not answered with a report: {message}");
                }
                pulled = Some(at);
            } else if method == Some("experimental/serverStatus") {
                let ready = message["params"]["quiescent"] == true;
                if ready && !self.ready && pulled.is_none() {
                    asked = Some(pull(&mut self.peer, &self.uri)?);
                }
                self.ready = ready;
            } else if method == Some("$/progress") && token.starts_with(check) {
                match message["params"]["value"]["kind"].as_str() {
                    Some("begin") => {
                        running.insert(token.to_string());
                        began = true;
                        ended = None;
                    }
                    Some("end") => {
                        running.remove(token);
                        if began && running.is_empty() {
                            ended = Some(at);
                        }
                    }
                    _ => {}
                }
            } else if is_publish_for(&message, &self.uri, self.version) {
                if ended.is_some() {
                    ended = Some(at);
                }
            } else {
                self.peer.answer_request(&message)?;
            }
        }
    }

    /// The arrival of the last publish for the current version: each publish for it restarts a
    /// wait of `generous`; the wait that ends in silence ends the search.
    fn last_publish(&mut self, generous: Duration) -> anyhow::Result<Instant> {
        let deadline = Instant::now() + LIMIT;
        let mut last: Option<Instant> = None;
        loop {
            let wait = match last {
                Some(at) => (at + generous).saturating_duration_since(Instant::now()),
                None => deadline.saturating_duration_since(Instant::now()),
            };
            match self.peer.next_within(wait) {
                Some((at, message)) if is_publish_for(&message, &self.uri, self.version) => {
                    last = Some(at)
                }
                Some((_, message)) => self.peer.answer_request(&message)?,
                None => return last.context("no publish for the version within the limit"),
            }
            if Instant::now() > deadline {
                bail!("the server kept publishing for {LIMIT:?}");
            }
        }
    }

    /// Stops the server: `exit` (without params, which strict servers refuse as null), then
    /// its process group is killed all the same.
    pub fn stop(mut self) {
        let _ = self.peer.notify_bare("exit");
        self.peer.kill();
    }
}

/// The initialize request's params.
fn initialize_params(root_uri: &str, signal: Signal) -> Value {
    let mut text_document = json!({"publishDiagnostics": {"versionSupport": true}});
    let mut capabilities = json!({});
    if matches!(signal, Signal::Pull | Signal::PullAndCheck { .. }) {
        text_document["diagnostic"] = json!({"dynamicRegistration": true});
    }
    if matches!(signal, Signal::PullAndCheck { .. }) {
        text_document["synchronization"] = json!({"didSave": true});
        capabilities["window"] = json!({"workDoneProgress": true});
        capabilities["experimental"] = json!({"serverStatusNotification": true});
    }
    capabilities["workspace"] = json!({"configuration": true,
                                       "didChangeWatchedFiles": {"dynamicRegistration": true}});
    capabilities["textDocument"] = text_document;
    json!({"processId": std::process::id(), "rootUri": root_uri,
           "capabilities": capabilities,
           "workspaceFolders": [{"uri": root_uri, "name": "root"}]})
}

/// Whether `message` publishes diagnostics for `uri` at `version` (or with no version).
fn is_publish_for(message: &Value, uri: &str, version: i64) -> bool {
    let params = &message["params"];
    message["method"] == "textDocument/publishDiagnostics"
        && params["uri"] == uri
        && params["version"].as_i64().is_none_or(|v| v == version)
}

/// One cold run: from spawning the server to its final answer for one opened file.
pub fn cold(server: Launch<'_>, root: &Path, file: &Path) -> anyhow::Result<Duration> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let started = Instant::now();
    // Timed to the answer, not to the end of a generous wait for a push-only server's last.
    let (floor, answered) = FinalFloor::start_open(server, root, file, &text)?;
    floor.stop();
    Ok(answered.duration_since(started))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_sends_no_nulls_and_declares_what_squiggle_does() {
        for signal in [Signal::Pull, Signal::Tsserver] {
            let params = initialize_params("file:///w", signal);
            assert_eq!(
                squiggle_protocol::strict::first_null(&params, "params"),
                None,
                "{params}"
            );
            let workspace = &params["capabilities"]["workspace"];
            assert_eq!(workspace["configuration"], true);
            assert_eq!(
                workspace["didChangeWatchedFiles"]["dynamicRegistration"],
                true
            );
        }
        let pulled = initialize_params("file:///w", Signal::Pull);
        assert!(pulled["capabilities"]["textDocument"]["diagnostic"].is_object());
        let asked = initialize_params("file:///w", Signal::Tsserver);
        assert!(asked["capabilities"]["textDocument"]["diagnostic"].is_null());
    }

    #[test]
    fn a_publish_counts_for_its_own_version_or_with_none() {
        let publish = |uri: &str, version: Option<i64>| {
            let mut params = json!({"uri": uri, "diagnostics": []});
            if let Some(version) = version {
                params["version"] = version.into();
            }
            json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
        };
        assert!(is_publish_for(
            &publish("file:///a", Some(3)),
            "file:///a",
            3
        ));
        assert!(is_publish_for(&publish("file:///a", None), "file:///a", 3));
        assert!(!is_publish_for(
            &publish("file:///a", Some(2)),
            "file:///a",
            3
        ));
        assert!(!is_publish_for(
            &publish("file:///b", Some(3)),
            "file:///a",
            3
        ));
        let log = json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"uri": "file:///a"}});
        assert!(!is_publish_for(&log, "file:///a", 3));
    }
}
