//! Spawning a language server process so that it can never outlive squiggle.
//!
//! Three layers make sure of that: the server runs in its own process group, which squiggle kills
//! as a whole (so grandchildren die too); on Linux the parent-death signal kills the server when
//! squiggle's spawning thread dies, even on SIGKILL; and `kill_on_drop` covers the rest.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::process::{Child, Command};

use crate::watchdog::Watchdog;

/// A spawned server's process group; dropping it kills every process in the group.
#[derive(Debug)]
pub struct ProcessGroup {
    pgid: i32,
    /// Kills the group should squiggle die without running any cleanup.
    watchdog: Option<Arc<Watchdog>>,
    /// Set once the group was killed after its leader was reaped: from then on the group id may
    /// belong to someone else.
    retired: AtomicBool,
}

impl ProcessGroup {
    /// Kills what is left of the group after its leader was reaped, and never signals it again.
    pub fn retire(&self) {
        self.kill();
        self.retired.store(true, Ordering::SeqCst);
        if let Some(watchdog) = &self.watchdog {
            watchdog.forget(self.pgid);
        }
    }

    /// Sends SIGKILL to every process in the group (harmless if they are all gone).
    pub fn kill(&self) {
        if self.pgid > 0 && !self.retired.load(Ordering::SeqCst) {
            // SAFETY: killpg has no memory-safety preconditions; a stale group id yields ESRCH.
            unsafe {
                libc::killpg(self.pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns `program args` in `cwd` with piped stdio, in a new process group, with the
/// parent-death signal set. Must be called from an async context (a runtime worker thread),
/// because the parent-death signal follows the spawning thread.
pub fn spawn(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
    watchdog: Option<Arc<Watchdog>>,
) -> io::Result<(Child, ProcessGroup)> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    set_parent_death_signal(&mut cmd);
    let child = cmd.spawn()?;
    let pgid = child.id().map_or(0, |pid| pid as i32);
    if let Some(watchdog) = &watchdog {
        watchdog.watch(pgid);
    }
    Ok((
        child,
        ProcessGroup {
            pgid,
            watchdog,
            retired: AtomicBool::new(false),
        },
    ))
}

impl ProcessGroup {
    /// Spawns a helper (a sidecar) inside this group, so that it dies with the server; its
    /// output is discarded except stderr, which is piped for logging.
    pub fn spawn_member(
        &self,
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> io::Result<Child> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(self.pgid);
        set_parent_death_signal(&mut cmd);
        cmd.spawn()
    }
}

#[cfg(target_os = "linux")]
fn set_parent_death_signal(cmd: &mut Command) {
    // SAFETY: getpid is async-signal-safe and has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only calls async-signal-safe functions
    // (prctl, getppid, _exit).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn set_parent_death_signal(_cmd: &mut Command) {}
