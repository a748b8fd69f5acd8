//! Content-Length framing, and the single locked writer for everything sent.

use std::io::{self, BufRead, Write};
use std::sync::{Mutex, PoisonError};

use anyhow::Context as _;
use serde_json::Value;

use super::observe::EventLog;

/// Reads one frame body; `Ok(None)` once the input ends.
pub fn read_frame(input: &mut impl BufRead) -> anyhow::Result<Option<Vec<u8>>> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                let n: usize = value.trim().parse().context("bad Content-Length")?;
                length = Some(n);
            }
        }
    }
    let mut body = vec![0; length.unwrap_or(0)];
    match input.read_exact(&mut body) {
        Ok(()) => Ok(Some(body)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `body` wrapped in a Content-Length header.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Stdout shared by the main loop and the publisher thread; logs what it sends.
#[derive(Debug)]
pub struct Output {
    stdout: Mutex<io::Stdout>,
    log: EventLog,
}

impl Output {
    /// An output writing to this process's stdout and recording to `log`.
    pub fn new(log: EventLog) -> Output {
        Output {
            stdout: Mutex::new(io::stdout()),
            log,
        }
    }

    /// Sends one JSON-RPC message as a frame and records it as `out`.
    pub fn send(&self, message: &Value) -> anyhow::Result<()> {
        let bytes = frame(&serde_json::to_vec(message)?);
        let stdout = self.stdout.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stdout = stdout.lock();
        // Logged before it is written: whatever the client does in answer to it is logged
        // after it, so the log's order is the order of cause and effect.
        self.log.record("out", message);
        stdout.write_all(&bytes)?;
        stdout.flush()?;
        Ok(())
    }

    /// Writes raw bytes (garbage, malformed frames) without logging.
    pub fn raw(&self, bytes: &[u8]) -> anyhow::Result<()> {
        let stdout = self.stdout.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stdout = stdout.lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
        Ok(())
    }

    /// Records an incoming message as `in`.
    pub fn record_in(&self, message: &Value) {
        self.log.record("in", message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_frames_and_eof() -> anyhow::Result<()> {
        let mut data = frame(br#"{"a":1}"#);
        data.extend_from_slice(b"content-length: 2\r\nContent-Type: x\r\n\r\n{}");
        data.extend_from_slice(b"Content-Length: 10\r\n\r\n{}");
        let mut input = io::Cursor::new(data);
        assert_eq!(read_frame(&mut input)?, Some(br#"{"a":1}"#.to_vec()));
        assert_eq!(read_frame(&mut input)?, Some(b"{}".to_vec()));
        assert_eq!(read_frame(&mut input)?, None);
        Ok(())
    }
}
