//! A blocking LSP-framed JSON-RPC peer over a child process's stdio, for the benchmarks.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use serde_json::{json, Value};

/// A child process spoken to with Content-Length frames.
pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    frames: Receiver<(Instant, Value)>,
    next_id: i64,
    /// Answers read while waiting for another one.
    unclaimed: Vec<(Instant, Value)>,
}

impl Peer {
    /// Spawns `program args` in `cwd` with extra environment variables.
    pub fn spawn(
        program: &Path,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, String)],
    ) -> anyhow::Result<Self> {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse::<usize>().ok();
                        }
                    }
                }
                let Some(length) = length else { continue };
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let Ok(value) = serde_json::from_slice(&body) else {
                    continue;
                };
                if tx.send((Instant::now(), value)).is_err() {
                    return;
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            frames,
            next_id: 1,
            unclaimed: Vec::new(),
        })
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one message.
    pub fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Sends a request and returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> anyhow::Result<i64> {
        let (id, message) = self.prepare(method, params);
        self.send(&message)?;
        Ok(id)
    }

    /// A request with the next id, to send later with [`Peer::send`].
    pub fn prepare(&mut self, method: &str, params: Value) -> (i64, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        (id, message)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> anyhow::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// The next message, with when it arrived, within `limit`.
    pub fn next(&self, limit: Duration) -> anyhow::Result<(Instant, Value)> {
        match self.frames.recv_timeout(limit) {
            Ok(frame) => Ok(frame),
            Err(RecvTimeoutError::Timeout) => Err(anyhow!("no message within {limit:?}")),
            Err(RecvTimeoutError::Disconnected) => Err(anyhow!("the peer closed its output")),
        }
    }

    /// The next message, or None when nothing comes within `limit`.
    pub fn next_within(&self, limit: Duration) -> Option<(Instant, Value)> {
        self.frames.recv_timeout(limit).ok()
    }

    /// Waits for the answer to request `id` (answers to others are kept for later), answering
    /// the peer's own requests with null.
    pub fn answer(&mut self, id: i64, limit: Duration) -> anyhow::Result<(Instant, Value)> {
        if let Some(at) = self.unclaimed.iter().position(|(_, m)| m["id"] == id) {
            return Ok(self.unclaimed.remove(at));
        }
        let deadline = Instant::now() + limit;
        loop {
            let (at, message) = self.next(deadline.saturating_duration_since(Instant::now()))?;
            if message.get("method").is_some() {
                self.answer_request(&message)?;
            } else if message["id"] == id {
                return Ok((at, message));
            } else if message.get("id").is_some() {
                self.unclaimed.push((at, message));
            }
        }
    }

    /// Answers a request from the peer with null (registerCapability, ...), or with a null
    /// per item (workspace/configuration: the server's defaults).
    pub fn answer_request(&mut self, message: &Value) -> anyhow::Result<()> {
        if message.get("method").is_some() && message.get("id").is_some() {
            let result = match message["method"].as_str() {
                Some("workspace/configuration") => {
                    let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; items])
                }
                _ => Value::Null,
            };
            self.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))?;
        }
        Ok(())
    }

    /// Kills the child and reaps it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
