//! A blocking LSP-framed JSON-RPC peer over a child process's stdio, for the benchmarks. The
//! child leads a process group of its own, which is killed with it (a server started through a
//! wrapper, like TypeScript 7's `tsc` node script, leaves no process behind).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
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
            .process_group(0)
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

    /// Sends a notification without params (`exit`: strict servers ignore `"params": null`).
    pub fn notify_bare(&mut self, method: &str) -> anyhow::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
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

    /// Answers a request from the peer, whatever its id (TypeScript 7 uses strings), with null
    /// (registerCapability, unregisterCapability, ...), or with a null per item
    /// (workspace/configuration: the server's defaults). A server waits for these answers.
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

    /// Kills the child's process group and reaps the child.
    pub fn kill(mut self) {
        if let Ok(pgid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: killpg has no memory-safety preconditions. The child is not reaped yet,
            // so its group id cannot have been reused; a group already gone yields ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A peer that echoes what it is sent: `cat`, in `sh` so that a second process shares its
    /// group.
    fn echo() -> Peer {
        let sh = Path::new("/bin/sh");
        Peer::spawn(sh, &["-c", "sleep 60 & cat"], Path::new("/"), &[]).unwrap()
    }

    #[test]
    fn requests_are_answered_under_their_own_ids_with_null_or_a_null_per_item() {
        let mut peer = echo();
        let register = json!({"jsonrpc": "2.0", "id": "ts1", "method": "client/registerCapability",
                              "params": {"registrations": []}});
        peer.answer_request(&register).unwrap();
        let (_, answer) = peer.next(Duration::from_secs(5)).unwrap();
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": "ts1", "result": null})
        );
        let configuration = json!({"jsonrpc": "2.0", "id": 7, "method": "workspace/configuration",
                                   "params": {"items": [{"section": "a"}, {"section": "b"}]}});
        peer.answer_request(&configuration).unwrap();
        let (_, answer) = peer.next(Duration::from_secs(5)).unwrap();
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": 7, "result": [null, null]})
        );
        peer.kill();
    }

    #[test]
    fn exit_goes_without_params() {
        let mut peer = echo();
        peer.notify_bare("exit").unwrap();
        let (_, sent) = peer.next(Duration::from_secs(5)).unwrap();
        assert_eq!(sent, json!({"jsonrpc": "2.0", "method": "exit"}));
        peer.kill();
    }

    #[test]
    fn killing_the_peer_kills_its_process_group() {
        let peer = echo();
        let group = peer.pid().to_string();
        let in_group = || {
            std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path().join("stat")).ok())
                .filter(|stat| {
                    // The fields after the command's closing parenthesis: state, ppid, pgrp. A
                    // zombie (not reaped yet by whoever inherited it) is not running.
                    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                    let fields: Vec<&str> = rest.split_whitespace().take(3).collect();
                    fields.first() != Some(&"Z") && fields.get(2) == Some(&group.as_str())
                })
                .count()
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while in_group() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(in_group() >= 2, "cat and its sleep");
        peer.kill();
        let deadline = Instant::now() + Duration::from_secs(5);
        while in_group() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(in_group(), 0, "the sleep outlived the peer");
    }
}
