//! Notices, without polling, that a path the daemon depends on (its socket, its workspace
//! root) was removed, moved away or replaced: an OS file watcher on a folder wakes the daemon,
//! which then looks at the path itself and compares its [`Identity`] with the one it recorded.
//! Where no watcher can be made, it looks every [`FALLBACK`] instead.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use super::log::note;

/// How long after a change in a watched folder the paths are looked at once more.
const RECHECK: Duration = Duration::from_millis(100);
/// How often the path is looked at when no file watcher can be made.
const FALLBACK: Duration = Duration::from_secs(2);

/// Which file a path names: its device, inode and time of birth. A folder deleted and made
/// again under the same name is another one, even when it gets the freed inode number back
/// (ext4 gives it at once): its birth time differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The device the file is on.
    pub dev: u64,
    /// Its inode on that device.
    pub ino: u64,
    /// When it was made, in nanoseconds since the epoch, where the file system says.
    pub born_ns: Option<u64>,
}

impl Identity {
    /// The identity of the file `path` names now (following symlinks); `None` when there is
    /// none.
    pub fn of(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        let born_ns = meta
            .created()
            .ok()
            .and_then(|born| born.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|since| u64::try_from(since.as_nanos()).ok());
        Some(Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            born_ns,
        })
    }
}

/// One path watched, known by the identity it had when the watch began.
#[derive(Debug, Clone)]
pub struct Watched {
    /// The path.
    pub path: PathBuf,
    /// Which file it named then.
    pub identity: Identity,
    /// The folder whose changes wake the watch: the path's parent, or the path itself when it
    /// is a folder (its own deletion or move reaches its watch).
    pub folder: PathBuf,
}

impl Watched {
    /// Whether the path still names the file the watch began with.
    fn is_ours(&self) -> bool {
        Identity::of(&self.path) == Some(self.identity)
    }
}

/// Watches a few paths with one OS watcher.
#[derive(Debug)]
pub struct PathWatch {
    watched: Vec<Watched>,
    /// Woken by any change in a watched folder.
    changed: Arc<Notify>,
    /// The OS watcher; `None` when none could be made (then [`FALLBACK`] polling).
    watcher: Option<RecommendedWatcher>,
}

impl PathWatch {
    /// Starts watching the paths.
    pub fn new(watched: Vec<Watched>) -> Self {
        let changed = Arc::new(Notify::new());
        let wake = changed.clone();
        let failed = |err: &notify::Error| note(format_args!("cannot watch its files: {err}"));
        let watcher = notify::recommended_watcher(move |_event| wake.notify_one())
            .inspect_err(failed)
            .ok()
            .and_then(|mut watcher| {
                for folder in watched.iter().map(|w| &w.folder) {
                    watcher
                        .watch(folder, RecursiveMode::NonRecursive)
                        .inspect_err(failed)
                        .ok()?;
                }
                Some(watcher)
            });
        Self {
            watched,
            changed,
            watcher,
        }
    }

    /// Whether the `index`th path still names the file the watch began with.
    pub fn is_ours(&self, index: usize) -> bool {
        self.watched.get(index).is_some_and(Watched::is_ours)
    }

    /// Returns the index of a path that no longer names its file, once one does not (at once
    /// if one does not now). Cancel-safe: it looks at the paths again each time it is called.
    pub async fn gone(&self) -> usize {
        loop {
            if let Some(index) = self.watched.iter().position(|w| !w.is_ours()) {
                return index;
            }
            match self.watcher {
                Some(_) => {
                    self.changed.notified().await;
                    if let Some(index) = self.watched.iter().position(|w| !w.is_ours()) {
                        return index;
                    }
                    // A folder's entries are reported removed before the folder is, and the
                    // folder's own removal is not reported while a process (this daemon, its
                    // servers) has it as its current folder: look once more a moment after
                    // a change, so that the last entry's event is not the last look.
                    tokio::time::sleep(RECHECK).await;
                }
                None => tokio::time::sleep(FALLBACK).await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("squiggle-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn a_removed_socket_is_noticed_and_a_present_one_is_not() {
        let dir = scratch("socket-watch");
        let socket = dir.join("d.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let identity = Identity::of(&socket).unwrap();
        let watch = PathWatch::new(vec![Watched {
            path: socket.clone(),
            identity,
            folder: dir.clone(),
        }]);
        assert!(watch.watcher.is_some(), "a watcher on Linux");

        let early = tokio::time::timeout(Duration::from_millis(200), watch.gone()).await;
        assert!(early.is_err(), "the socket is there");
        let waiting = tokio::spawn(async move { watch.gone().await });
        std::fs::remove_file(&socket).unwrap();
        let noticed = tokio::time::timeout(Duration::from_secs(10), waiting).await;
        let _ = std::fs::remove_dir_all(&dir);
        assert!(noticed.is_ok(), "its removal is noticed");
    }

    #[tokio::test]
    async fn a_folder_made_again_under_its_name_is_another_one() {
        let dir = scratch("root-watch");
        let root = dir.join("ws");
        std::fs::create_dir(&root).unwrap();
        let other = dir.join("other");
        std::fs::create_dir(&other).unwrap();
        let watched = |path: &Path| Watched {
            path: path.to_path_buf(),
            identity: Identity::of(path).unwrap(),
            folder: path.to_path_buf(),
        };
        let watch = PathWatch::new(vec![watched(&other), watched(&root)]);
        let waiting = tokio::spawn(async move { watch.gone().await });
        std::fs::remove_dir(&root).unwrap();
        std::fs::create_dir(&root).unwrap();
        let noticed = tokio::time::timeout(Duration::from_secs(10), waiting).await;
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            noticed.unwrap().unwrap(),
            1,
            "the replaced folder is noticed"
        );
    }
}
