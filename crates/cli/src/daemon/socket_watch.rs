//! Notices, without polling, that the daemon's socket file was removed or replaced: an OS file
//! watcher on the socket's folder wakes the daemon, which then looks at the file itself. Where
//! no watcher can be made, it looks every [`FALLBACK`] instead.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::Notify;

/// How often the socket is looked at when no file watcher can be made.
const FALLBACK: Duration = Duration::from_secs(2);

/// Watches one socket file, made by this daemon (known by its inode).
#[derive(Debug)]
pub struct SocketWatch {
    socket: PathBuf,
    inode: u64,
    /// Woken by any change in the socket's folder.
    changed: Arc<Notify>,
    /// The OS watcher; `None` when none could be made (then [`FALLBACK`] polling).
    watcher: Option<RecommendedWatcher>,
}

impl SocketWatch {
    /// Starts watching `socket`, the file with `inode`.
    pub fn new(socket: &Path, inode: u64) -> Self {
        let changed = Arc::new(Notify::new());
        let wake = changed.clone();
        let watcher = (socket.parent()).and_then(|folder| {
            let mut watcher = notify::recommended_watcher(move |_event| wake.notify_one())
                .inspect_err(|err| eprintln!("squiggle daemon: cannot watch its socket: {err}"))
                .ok()?;
            watcher
                .watch(folder, RecursiveMode::NonRecursive)
                .inspect_err(|err| eprintln!("squiggle daemon: cannot watch its socket: {err}"))
                .ok()?;
            Some(watcher)
        });
        Self {
            socket: socket.to_path_buf(),
            inode,
            changed,
            watcher,
        }
    }

    /// Whether the socket file is still the one this daemon made.
    pub fn is_ours(&self) -> bool {
        std::fs::metadata(&self.socket).is_ok_and(|meta| meta.ino() == self.inode)
    }

    /// Returns once the socket file is no longer this daemon's (at once if it is not now).
    /// Cancel-safe: it looks at the file again each time it is called.
    pub async fn gone(&self) {
        while self.is_ours() {
            match self.watcher {
                Some(_) => self.changed.notified().await,
                None => tokio::time::sleep(FALLBACK).await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_removed_socket_is_noticed_and_a_present_one_is_not() {
        let dir =
            std::env::temp_dir().join(format!("squiggle-socket-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("d.sock");
        let _ = std::fs::remove_file(&socket);
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let inode = std::fs::metadata(&socket).unwrap().ino();
        let watch = SocketWatch::new(&socket, inode);
        assert!(watch.watcher.is_some(), "a watcher on Linux");

        let early = tokio::time::timeout(Duration::from_millis(200), watch.gone()).await;
        assert!(early.is_err(), "the socket is there");
        let waiting = tokio::spawn(async move { watch.gone().await });
        std::fs::remove_file(&socket).unwrap();
        let noticed = tokio::time::timeout(Duration::from_secs(10), waiting).await;
        let _ = std::fs::remove_dir_all(&dir);
        assert!(noticed.is_ok(), "its removal is noticed");
    }
}
