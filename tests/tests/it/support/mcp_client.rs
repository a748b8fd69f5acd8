//! The one MCP test client: a running `squiggle mcp`, driven over its stdio with
//! newline-delimited JSON-RPC (MCP's stdio transport), or an MCP server on any pair of pipes
//! (`serve`'s descriptors 3 and 4: [`Mcp::over`]). It can ask and wait ([`Mcp::call`]),
//! keep several requests in flight and claim their answers by id in any order
//! ([`Mcp::start_call`], [`Mcp::answer`]), and write raw lines ([`Mcp::write_line`]).

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{path_with_servers, squiggle_bin};

/// A running `squiggle mcp`, already past the handshake. Dropping it closes its stdin (the
/// server exits on EOF) and reaps it; a test that panics kills it first.
pub struct Mcp {
    /// `None` for a server on pipes of a process someone else owns.
    child: Option<std::process::Child>,
    /// `None` once closed.
    stdin: Option<Box<dyn Write + Send>>,
    /// The lines the server writes to stdout.
    lines: std::sync::mpsc::Receiver<String>,
    /// Messages read while looking for another answer.
    unclaimed: Vec<Value>,
    /// The id of the last request sent.
    last_id: i64,
}

impl Mcp {
    /// Starts `squiggle mcp --root <root>` and completes the MCP handshake within `limit`.
    pub fn start(root: &Path, limit: Duration) -> Self {
        let mut command = std::process::Command::new(squiggle_bin());
        command
            .args(["mcp", "--root"])
            .arg(root)
            .env("PATH", path_with_servers())
            .env("XDG_CONFIG_HOME", root.join(".no-user-config"));
        Self::spawn(command, limit)
    }

    /// Starts `command`, an MCP server on stdio (an agent host's configuration of `squiggle
    /// mcp`, for one), and completes the MCP handshake within `limit`.
    pub fn spawn(mut command: std::process::Command, limit: Duration) -> Self {
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        Self::handshake(Some(child), Box::new(stdin), stdout, limit)
    }

    /// An MCP server that reads `to_server` and writes `from_server`, past the handshake
    /// within `limit`.
    pub fn over(
        to_server: impl Write + Send + 'static,
        from_server: impl Read + Send + 'static,
        limit: Duration,
    ) -> Self {
        Self::handshake(None, Box::new(to_server), from_server, limit)
    }

    fn handshake(
        child: Option<std::process::Child>,
        stdin: Box<dyn Write + Send>,
        stdout: impl Read + Send + 'static,
        limit: Duration,
    ) -> Self {
        let stdout = std::io::BufReader::new(stdout);
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut mcp = Self {
            child,
            stdin: Some(stdin),
            lines,
            unclaimed: Vec::new(),
            last_id: 0,
        };
        let init = mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "squiggle-tests", "version": "0"}
            }),
            limit,
        );
        assert!(
            init["result"]["serverInfo"].is_object(),
            "initialize answered: {init}"
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    /// Writes one line as it is (it need not be JSON).
    pub fn write_line(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        self.write_line(message.to_string().as_bytes());
    }

    /// A fresh request id, for a request written by hand.
    pub fn next_id(&mut self) -> i64 {
        self.last_id += 1;
        self.last_id
    }

    /// Sends a request without waiting; returns its id (for [`Mcp::answer`]).
    pub fn start_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Calls a tool without waiting; returns the request's id (for [`Mcp::answer`]).
    pub fn start_call(&mut self, tool: &str, arguments: Value) -> i64 {
        self.start_request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// The answer to request `id` (the whole message), within `limit`; other messages read
    /// meanwhile are kept for their own claim.
    pub fn answer(&mut self, id: i64, limit: Duration) -> Value {
        if let Some(at) = self.unclaimed.iter().position(|m| m["id"] == id) {
            return self.unclaimed.remove(at);
        }
        let deadline = Instant::now() + limit;
        loop {
            let line = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|err| panic!("no answer to request {id} in time: {err}"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|err| panic!("stdout carries JSON-RPC only ({err}): {line}"));
            if message["id"] == id {
                return message;
            }
            self.unclaimed.push(message);
        }
    }

    /// Sends a request and returns its answer (the whole message), within `limit`.
    pub fn request(&mut self, method: &str, params: Value, limit: Duration) -> Value {
        let id = self.start_request(method, params);
        self.answer(id, limit)
    }

    /// Calls a tool; returns its result (`content`, `structuredContent`, `isError`).
    pub fn call(&mut self, tool: &str, arguments: Value, limit: Duration) -> Value {
        let id = self.start_call(tool, arguments);
        self.answer(id, limit)["result"].clone()
    }

    /// Closes stdin and waits for the server to exit, within `limit`.
    pub fn close(mut self, limit: Duration) {
        drop(self.stdin.take());
        let Some(child) = self.child.as_mut() else {
            return;
        };
        let deadline = Instant::now() + limit;
        while child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "squiggle mcp did not exit on EOF in time"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let Some(child) = self.child.as_mut() else {
            return;
        };
        if std::thread::panicking() {
            let _ = child.kill();
        }
        // Reaps it once it has exited on EOF; a hung one is killed rather than waited for.
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(child.try_wait(), Ok(None)) {
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
