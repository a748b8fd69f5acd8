//! The push floor of the burst: the least any LSP client can do to hear from its servers about
//! each change of a burst. It keeps servers running with the burst's files open, sends every
//! change to every server at once, and times each change to its first publish from each server
//! (the burst's own measure; cold and warm checks use the definitive floor, `final_floor`).

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::peer::Peer;

/// How long any single step may take.
const LIMIT: Duration = Duration::from_secs(60);

/// A minimal client of one server.
struct Floor {
    peer: Peer,
}

impl Floor {
    /// Spawns and initializes the server for `root`.
    fn start(program: &Path, args: &[&str], root: &Path) -> anyhow::Result<Self> {
        let mut peer = Peer::spawn(program, args, root, &[])?;
        let root_uri = format!("file://{}", root.display());
        let id = peer.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": root_uri, "capabilities": {},
                   "workspaceFolders": [{"uri": root_uri, "name": "root"}]}),
        )?;
        peer.answer(id, LIMIT)?;
        peer.notify("initialized", json!({}))?;
        Ok(Self { peer })
    }

    /// Opens a document and waits for its first publish.
    fn open(&mut self, path: &Path, language_id: &str, text: &str) -> anyhow::Result<()> {
        let uri = format!("file://{}", path.display());
        let item = json!({"uri": uri, "languageId": language_id, "version": 1, "text": text});
        self.peer
            .notify("textDocument/didOpen", json!({"textDocument": item}))?;
        let deadline = Instant::now() + LIMIT;
        loop {
            let (_, message) = self
                .peer
                .next(deadline.saturating_duration_since(Instant::now()))?;
            if is_publish_for(&message, &uri) {
                return Ok(());
            }
            self.peer.answer_request(&message)?;
        }
    }

    /// Stops the server.
    fn stop(self) {
        self.peer.kill();
    }
}

fn is_publish_for(message: &Value, uri: &str) -> bool {
    message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
}

/// The floor's burst: `servers` servers with the same files open, kept running so that its
/// bursts can alternate with squiggle's. Each burst changes every file on every server
/// `rounds` times at once.
pub struct BurstFloor {
    peers: Vec<Floor>,
    /// Each file's URI and original text.
    documents: Vec<(String, String)>,
    /// The version the next change sends.
    version: i64,
}

impl BurstFloor {
    /// Starts `servers` servers for `root` and opens `files` on each.
    pub fn start(
        program: &Path,
        args: &[&str],
        root: &Path,
        files: &[std::path::PathBuf],
        language_id: &str,
        servers: usize,
    ) -> anyhow::Result<Self> {
        let mut documents = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            documents.push((format!("file://{}", file.display()), text));
        }
        let mut peers = Vec::new();
        for _ in 0..servers {
            let mut floor = Floor::start(program, args, root)?;
            for (file, (_, text)) in files.iter().zip(&documents) {
                floor.open(file, language_id, text)?;
            }
            peers.push(floor);
        }
        Ok(Self {
            peers,
            documents,
            version: 2,
        })
    }

    /// One burst of `rounds` changes to every file on every server, round `r` sending
    /// `text(original, r)`; for each change, when its last server published for it (from the
    /// start of the burst). This is the server time a client cannot go below in the same burst.
    pub fn burst(
        &mut self,
        rounds: usize,
        text: impl Fn(&str, usize) -> String,
    ) -> anyhow::Result<Vec<Duration>> {
        let first = self.version;
        let mut messages = Vec::new();
        for round in 0..rounds {
            let version = first + round as i64;
            for (uri, original) in &self.documents {
                let params = json!({"textDocument": {"uri": uri, "version": version},
                                    "contentChanges": [{"text": text(original, round)}]});
                messages.push(
                    json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}),
                );
            }
        }
        self.version += rounds as i64;
        let started = Instant::now();
        for floor in &mut self.peers {
            for message in &messages {
                floor.peer.send(message)?;
            }
        }
        // (uri, version) -> the latest first arrival over all servers.
        let mut done: HashMap<(String, i64), Instant> = HashMap::new();
        for floor in &mut self.peers {
            // Each change's first publish from this server.
            let mut seen: HashMap<(String, i64), Instant> = HashMap::new();
            while seen.len() < messages.len() {
                let (at, message) = floor.peer.next(LIMIT)?;
                if message["method"] != "textDocument/publishDiagnostics" {
                    floor.peer.answer_request(&message)?;
                    continue;
                }
                let params = &message["params"];
                let Some(version) = params["version"].as_i64() else {
                    bail!("the server publishes without a version: a burst's changes cannot be told apart");
                };
                let uri = params["uri"].as_str().unwrap_or_default().to_string();
                if version >= first {
                    seen.entry((uri, version)).or_insert(at);
                }
            }
            for (key, at) in seen {
                let latest = done.entry(key).or_insert(at);
                *latest = (*latest).max(at);
            }
        }
        Ok(done.values().map(|at| at.duration_since(started)).collect())
    }

    /// Stops the servers.
    pub fn stop(self) {
        for floor in self.peers {
            floor.stop();
        }
    }
}
