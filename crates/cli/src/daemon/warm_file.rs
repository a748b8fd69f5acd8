//! A daemon's warm-state file in the runtime folder, `<key>.warm`: its pid, root, when a
//! check last began or ended in it, how many are under way, and its resident memory with
//! its servers. Written (atomically) when a check begins and ends, removed when it exits;
//! read by other daemons that keep this user's warm budget.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// What a daemon says of itself for the warm budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmState {
    /// Its process id.
    pub pid: u32,
    /// Its workspace root.
    pub root: PathBuf,
    /// When a check last began or ended in it, in milliseconds since the epoch.
    pub last_use_ms: u64,
    /// How many checks are under way in it.
    pub checking: usize,
    /// Its resident memory with its servers', in bytes, when last written.
    pub memory: Option<u64>,
}

/// The warm-state file of the daemon of a key name.
pub fn path_of(dir: &Path, key_name: &str) -> PathBuf {
    dir.join(format!("{key_name}.warm"))
}

/// Writes a state file atomically (a private temporary file renamed over it); a failure is
/// only logged by the caller: the budget then does not see this daemon. Each write has a
/// temporary file of its own: a daemon's connections write at the same time (an edit hook and
/// the search after its answer), and one's rename would take the other's file away.
pub fn write(path: &Path, state: &WarmState) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_extension(format!("warm.{}.{write}.tmp", std::process::id()));
    let text = serde_json::to_vec(state)?;
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(true).write(true);
    let written = super::paths::open_private(&tmp, &mut options)
        .and_then(|mut file| std::io::Write::write_all(&mut file, &text))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Every state file of the runtime folder that reads, with its key name.
pub fn read_all(dir: &Path) -> Vec<(String, WarmState)> {
    (super::client::files(dir, "warm").into_iter())
        .filter_map(|path| {
            let name = path.file_stem()?.to_string_lossy().into_owned();
            let text = std::fs::read(&path).ok()?;
            Some((name, serde_json::from_slice(&text).ok()?))
        })
        .collect()
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_state_file_is_written_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let state = WarmState {
            pid: 42,
            root: PathBuf::from("/ws"),
            last_use_ms: 7,
            checking: 1,
            memory: Some(1 << 20),
        };
        write(&path_of(dir.path(), "k1"), &state).unwrap();
        std::fs::write(dir.path().join("k2.warm"), "not json").unwrap();
        assert_eq!(read_all(dir.path()), vec![("k1".to_string(), state)]);
    }

    #[test]
    fn writes_at_the_same_time_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_of(dir.path(), "k1");
        let writes: Vec<_> = (0..8u64)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let state = WarmState {
                        pid: 42,
                        root: PathBuf::from("/ws"),
                        last_use_ms: i,
                        checking: 0,
                        memory: None,
                    };
                    (0..50).map(|_| write(&path, &state)).collect::<Vec<_>>()
                })
            })
            .collect();
        for write in writes {
            for result in write.join().unwrap() {
                result.unwrap();
            }
        }
        assert_eq!(read_all(dir.path()).len(), 1);
        let left = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(left, 1, "no temporary file is left");
    }
}
