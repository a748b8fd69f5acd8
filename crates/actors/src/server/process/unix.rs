//! Unix: a process group per server, the parent-death signal (Linux) and the watchdog.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustix::process::{kill_process_group, Pid, Signal};
use tokio::process::{Child, Command};

use super::command;
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
            // A stale group id yields ESRCH, which is no concern here.
            if let Some(pgid) = Pid::from_raw(self.pgid) {
                let _ = kill_process_group(pgid, Signal::KILL);
            }
        }
    }

    /// Spawns a helper (a sidecar) inside this group, so that it dies with the server; its
    /// output is discarded except stderr, which is piped for logging.
    pub fn spawn_member(
        &self,
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> io::Result<Child> {
        let mut cmd = command(program, args, cwd, env, Stdio::null);
        cmd.process_group(self.pgid);
        set_parent_death_signal(&mut cmd);
        cmd.spawn()
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
    let mut cmd = command(program, args, cwd, env, Stdio::piped);
    cmd.process_group(0);
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

#[cfg(target_os = "linux")]
fn set_parent_death_signal(cmd: &mut Command) {
    use rustix::process::{getpid, getppid, set_parent_process_death_signal};
    let parent = getpid();
    // SAFETY: the closure runs between fork and exec and only makes system calls (prctl,
    // getppid), which allocate nothing and take no lock.
    unsafe {
        cmd.pre_exec(move || {
            set_parent_process_death_signal(Some(Signal::KILL))?;
            // The parent may have died before prctl took effect: then the child does not run
            // (an error here makes it exit at once).
            if getppid() != Some(parent) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn set_parent_death_signal(_cmd: &mut Command) {}
