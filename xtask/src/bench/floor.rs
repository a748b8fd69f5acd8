//! The floor: the least any LSP client can do for a file's diagnostics. It spawns the server,
//! initializes, opens or changes the document, waits for its publishDiagnostics and then for
//! the same quiet time squiggle waits — nothing else. squiggle's cost is measured against it.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::peer::Peer;

/// How long any single step may take.
const LIMIT: Duration = Duration::from_secs(60);

/// A minimal client holding one open document.
pub struct Floor {
    peer: Peer,
    uri: String,
    version: i32,
    quiet: Duration,
}

impl Floor {
    /// Spawns and initializes the server for `root`; `quiet` is the settle time.
    pub fn start(
        program: &Path,
        args: &[&str],
        root: &Path,
        quiet: Duration,
    ) -> anyhow::Result<Self> {
        let mut peer = Peer::spawn(program, args, root, &[])?;
        let root_uri = format!("file://{}", root.display());
        let id = peer.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": root_uri, "capabilities": {},
                   "workspaceFolders": [{"uri": root_uri, "name": "root"}]}),
        )?;
        peer.answer(id, LIMIT)?;
        peer.notify("initialized", json!({}))?;
        Ok(Self {
            peer,
            uri: String::new(),
            version: 0,
            quiet,
        })
    }

    /// Opens a document and returns how long until its diagnostics were final.
    pub fn open(&mut self, path: &Path, language_id: &str, text: &str) -> anyhow::Result<Duration> {
        self.uri = format!("file://{}", path.display());
        self.version = 1;
        let started = Instant::now();
        let item = json!({"uri": self.uri, "languageId": language_id, "version": 1, "text": text});
        self.peer
            .notify("textDocument/didOpen", json!({"textDocument": item}))?;
        Ok(self.settle()?.duration_since(started))
    }

    /// Changes the open document and returns how long until its diagnostics were final.
    pub fn change(&mut self, text: &str) -> anyhow::Result<Duration> {
        self.version += 1;
        let started = Instant::now();
        let params = json!({"textDocument": {"uri": self.uri, "version": self.version},
                            "contentChanges": [{"text": text}]});
        self.peer.notify("textDocument/didChange", params)?;
        Ok(self.settle()?.duration_since(started))
    }

    /// Waits for the document's diagnostics and then for the quiet time; returns when the
    /// quiet time ended.
    fn settle(&mut self) -> anyhow::Result<Instant> {
        let deadline = Instant::now() + LIMIT;
        let mut last = loop {
            let (at, message) = self
                .peer
                .next(deadline.saturating_duration_since(Instant::now()))?;
            if self.is_publish(&message) {
                break at;
            }
            self.peer.answer_request(&message)?;
        };
        loop {
            let wait = (last + self.quiet).saturating_duration_since(Instant::now());
            match self.peer.next_within(wait) {
                Some((at, message)) if self.is_publish(&message) => last = at,
                Some((_, message)) => self.peer.answer_request(&message)?,
                None => return Ok(last + self.quiet),
            }
            if Instant::now() > deadline {
                bail!("the server kept publishing");
            }
        }
    }

    fn is_publish(&self, message: &Value) -> bool {
        message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["uri"] == self.uri.as_str()
    }

    /// Stops the server.
    pub fn stop(self) {
        self.peer.kill();
    }
}

/// One cold run: from spawning the server to final diagnostics of one file.
pub fn cold(
    program: &Path,
    args: &[&str],
    root: &Path,
    file: &Path,
    language_id: &str,
    quiet: Duration,
) -> anyhow::Result<Duration> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let started = Instant::now();
    let mut floor = Floor::start(program, args, root, quiet)?;
    floor.open(file, language_id, &text)?;
    let took = started.elapsed();
    floor.stop();
    Ok(took)
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
            let mut floor = Floor::start(program, args, root, Duration::ZERO)?;
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
