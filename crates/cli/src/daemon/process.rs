//! The daemon process behind a key, found without asking it (for one that does not answer):
//! the pid its lock file holds, trusted only when that process is this user's, is
//! `squiggle daemon run --key <that key>`, and the lock is held; and ending it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};
use rustix::process::{kill_process, Pid, Signal};

use super::key::DaemonKey;
use super::paths::uid;

/// How long a daemon has to exit after SIGTERM before it gets SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long a process may take to die after SIGKILL.
const KILL_LIMIT: Duration = Duration::from_secs(2);

/// A running daemon process of this user, known by its lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonProcess {
    /// Its process id.
    pub pid: u32,
    /// The workspace root it was started for.
    pub root: PathBuf,
}

/// Writes the daemon's pid into its (held) lock file, for clients that must find it without
/// its answer.
pub fn record_pid(lock: &mut std::fs::File) -> std::io::Result<()> {
    lock.set_len(0)?;
    let mut writer: &std::fs::File = lock;
    std::io::Seek::rewind(&mut writer)?;
    writeln!(writer, "{}", std::process::id())
}

/// The daemon that holds the lock of `key` in `dir`, when it is one of this user's squiggle
/// daemons for that key; `None` for anything else (no lock, a lock no one holds, a pid that
/// is now another program or another user's).
pub fn of_key(dir: &Path, key: &DaemonKey) -> Option<DaemonProcess> {
    let path = dir.join(format!("{}.lock", key.name()));
    let lock = std::fs::File::open(&path).ok()?;
    if !is_held(&lock) {
        return None;
    }
    let pid: u32 = std::fs::read_to_string(&path).ok()?.trim().parse().ok()?;
    let root = daemon_root(pid, &key.name())?;
    is_alive(pid).then_some(DaemonProcess { pid, root })
}

/// Whether someone holds the lock on the file (this process takes and drops it otherwise).
fn is_held(lock: &std::fs::File) -> bool {
    let taken = flock(lock, FlockOperation::NonBlockingLockShared).is_ok();
    if taken {
        let _ = flock(lock, FlockOperation::Unlock);
    }
    !taken
}

/// The workspace root of process `pid` when it is this user's `squiggle daemon run --key
/// <key>`; `None` otherwise.
fn daemon_root(pid: u32, key: &str) -> Option<PathBuf> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let real_uid: u32 = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    if real_uid != uid() {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    root_in_command(&cmdline, key)
}

/// The `--root` of a NUL-separated command line when it is `... daemon run --key <key> ...`.
fn root_in_command(cmdline: &[u8], key: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let has = |window: &[&[u8]]| args.windows(window.len()).any(|w| w == window);
    if !has(&[b"daemon", b"run"]) || !has(&[b"--key", key.as_bytes()]) {
        return None;
    }
    let at = args.iter().position(|arg| *arg == b"--root")?;
    let root = args.get(at + 1)?;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(root)))
}

/// Ends a daemon: SIGTERM (and SIGCONT, so that a stopped one can act on it), then SIGKILL
/// when it has not exited within [`TERM_GRACE`]; returns whether it is gone. Its servers die
/// with it (their parent-death signal).
pub async fn end(pid: u32) -> bool {
    signal(pid, Signal::TERM);
    signal(pid, Signal::CONT);
    if exited_within(pid, TERM_GRACE).await {
        return true;
    }
    kill(pid).await
}

/// SIGKILLs a daemon and waits briefly for it to be gone; returns whether it is.
pub async fn kill(pid: u32) -> bool {
    signal(pid, Signal::KILL);
    exited_within(pid, KILL_LIMIT).await
}

/// Sends a signal to a process.
/// The pid was checked to be one of this user's squiggle daemons just before.
fn signal(pid: u32, signal: Signal) {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let _ = kill_process(pid, signal);
}

/// Waits until a process is gone, for at most `limit`; returns whether it is.
pub async fn exited_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while is_alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// Whether a process still runs (a zombie does not count).
pub fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => (stat_fields(&stat).and_then(|mut fields| fields.next()))
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The fields of a `/proc/<pid>/stat` line after the name in parentheses (which may itself
/// hold spaces and parentheses): the state first, then the parent pid.
pub fn stat_fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_daemon_of_the_key_is_recognized() {
        let line = b"/usr/bin/squiggle\0daemon\0run\0--key\0k1\0--root\0/ws\0";
        assert_eq!(root_in_command(line, "k1"), Some(PathBuf::from("/ws")));
        assert_eq!(root_in_command(line, "k2"), None);
        assert_eq!(
            root_in_command(b"vim\0--key\0k1\0--root\0/ws\0", "k1"),
            None
        );
    }

    #[test]
    fn this_process_is_alive_and_not_a_daemon() {
        assert!(is_alive(std::process::id()));
        assert_eq!(daemon_root(std::process::id(), "k"), None);
    }
}
