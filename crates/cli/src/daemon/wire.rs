//! What a client and a daemon say to each other, one JSON line each, one request per
//! connection: the daemon greets every connection it accepts at once ([`Reply::Hello`]), the
//! client sends its request, the daemon answers it. The greeting is how a client tells a
//! daemon that answers (whose check may take long) from one that is hung, or from something
//! else listening on the socket: it waits for the greeting only briefly.

use std::io;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use squiggle_protocol::ServerStatus;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};

use super::path_watch::Identity;
use crate::check_request::{CheckAnswer, CheckRequest};

/// The largest request a daemon reads, in bytes.
pub const MAX_REQUEST: u64 = 1 << 20;
/// The largest answer a client reads, in bytes.
pub const MAX_REPLY: u64 = 64 << 20;

/// A request to a daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Request {
    /// Check files and answer as `squiggle check` would.
    Check {
        /// The check asked for.
        request: CheckRequest,
    },
    /// Say who you are and what you run.
    Status,
    /// Restart the broken servers with this id (every broken one when `None`), even those
    /// held after a crash loop, once their cooldown passed.
    Restart {
        /// The server id.
        server: Option<String>,
    },
    /// Stop: shut the servers down and exit.
    Stop,
    /// Stop for this user's warm budget, unless a check is under way or one came since
    /// `last_use_ms` (then the answer is [`Reply::Kept`]).
    Evict {
        /// The last use the asking daemon saw, in milliseconds since the epoch.
        last_use_ms: u64,
    },
}

/// A daemon's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// The greeting, sent as soon as a connection is accepted, before any request.
    Hello {
        /// The daemon's process id.
        pid: u32,
        /// Which folder its workspace root was when it started (a root deleted and made
        /// again is another folder: the client retires the daemon).
        root: Option<Identity>,
    },
    /// The answer to a check.
    Checked {
        /// What to print and the exit code.
        answer: CheckAnswer,
    },
    /// The request could not be answered; the client checks in its own process.
    Failed {
        /// Why.
        error: String,
    },
    /// The daemon's status.
    Status {
        /// What it is and runs.
        status: DaemonStatus,
    },
    /// The servers with the id asked for, after a restart.
    Restarted {
        /// Their states.
        servers: Vec<ServerStatus>,
    },
    /// The daemon is stopping.
    Stopping,
    /// The daemon stays: it is in use.
    Kept,
}

/// What `squiggle daemon status` shows of one daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonStatus {
    /// The workspace root it serves.
    pub root: PathBuf,
    /// Its process id.
    pub pid: u32,
    /// How long it has run, in seconds.
    pub uptime_secs: u64,
    /// How many checks it answered.
    pub checks: u64,
    /// Its resident memory (not its servers'), in bytes, when known.
    pub rss_bytes: Option<u64>,
    /// How many seconds it stays without a request before it exits.
    pub idle_exit_secs: u64,
    /// Its language servers.
    pub servers: Vec<ServerStatus>,
    /// Its resident memory with its servers' (and theirs), in bytes, when known.
    #[serde(default)]
    pub memory_with_servers: Option<u64>,
    /// How many seconds ago a check last began or ended in it (`None`: none yet).
    #[serde(default)]
    pub last_use_secs: Option<u64>,
    /// How many checks are under way in it.
    #[serde(default)]
    pub checking: usize,
}

/// Reads one JSON line of at most `limit` bytes.
pub async fn read_message<T: DeserializeOwned>(
    reader: &mut (impl AsyncBufRead + Unpin),
    limit: u64,
) -> io::Result<T> {
    let mut line = Vec::new();
    reader.take(limit + 1).read_until(b'\n', &mut line).await?;
    if line.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("message over {limit} bytes"),
        ));
    }
    if line.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the other side hung up",
        ));
    }
    serde_json::from_slice(&line).map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))
}

/// Returns once the other side has hung up (or the connection failed): what it sends after
/// its one request is read and dropped.
pub async fn hung_up(reader: &mut (impl AsyncRead + Unpin)) {
    let mut bytes = [0u8; 512];
    while let Ok(1..) = reader.read(&mut bytes).await {}
}

/// Writes one JSON line and flushes it.
pub async fn write_message<T: Serialize>(
    writer: &mut (impl AsyncWrite + Unpin),
    message: &T,
) -> io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    writer.write_all(&line).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::check_request::Format;

    fn check_request() -> Request {
        Request::Check {
            request: CheckRequest {
                files: vec![PathBuf::from("/ws/a.py")],
                format: Format::Delta,
                scope: None,
                severity: None,
                left_out: false,
                prior: None,
            },
        }
    }

    #[tokio::test]
    async fn a_request_goes_over_as_one_line_and_back() {
        let mut bytes = Vec::new();
        write_message(&mut bytes, &check_request()).await.unwrap();
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1);
        let mut reader = bytes.as_slice();
        let back: Request = read_message(&mut reader, MAX_REQUEST).await.unwrap();
        assert_eq!(back, check_request());
    }

    #[tokio::test]
    async fn an_oversized_request_is_refused() {
        let mut bytes = vec![b' '; 2048];
        bytes.push(b'\n');
        let mut reader = bytes.as_slice();
        let err = read_message::<Request>(&mut reader, 1024)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }

    #[tokio::test]
    async fn a_hang_up_is_seen_after_whatever_came_before_it() {
        let (mut ours, theirs) = tokio::io::duplex(64);
        let (mut read, mut write) = tokio::io::split(theirs);
        let hung_up = tokio::spawn(async move { hung_up(&mut read).await });
        ours.write_all(&[b'x'; 4096]).await.unwrap();
        assert!(!hung_up.is_finished());
        drop(write.shutdown().await);
        drop(ours);
        tokio::time::timeout(std::time::Duration::from_secs(5), hung_up)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn a_cut_request_is_refused() {
        let mut reader: &[u8] = b"{\"kind\":\"status\"}";
        let err = read_message::<Request>(&mut reader, 1024)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
