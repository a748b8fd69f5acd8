//! Windows: a Job Object per server. Every process the server starts joins its job, and the
//! job is made to kill them all when its last handle closes: squiggle holds the only one, and
//! the kernel closes it when squiggle ends in any way, so no guard process is needed.
//!
//! The server is created suspended and resumed only once it is in its job, so that nothing it
//! starts in its first instants can escape.

use std::collections::BTreeMap;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::{Child, Command};
use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, CREATE_NO_WINDOW, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME,
};

use super::command;
use crate::watchdog::Watchdog;

/// A spawned server's Job Object; dropping it kills every process in the job.
#[derive(Debug)]
pub struct ProcessGroup {
    job: OwnedHandle,
}

impl ProcessGroup {
    /// Kills what is left of the job after the server was reaped. A job is a handle, not a
    /// number that can be reused, so it stays safe to kill again.
    pub fn retire(&self) {
        self.kill();
    }

    /// Ends every process in the job (harmless if they are all gone).
    pub fn kill(&self) {
        // SAFETY: the handle is a job this value owns.
        unsafe { TerminateJobObject(self.job.as_raw_handle(), 1) };
    }

    /// Spawns a helper (a sidecar) inside this job, so that it dies with the server; its output
    /// is discarded except stderr, which is piped for logging.
    pub fn spawn_member(
        &self,
        program: &Path,
        args: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> io::Result<Child> {
        start_in(&self.job, command(program, args, cwd, env, Stdio::null))
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns `program args` in `cwd` with piped stdio, in a new Job Object that dies with
/// squiggle. There is no watchdog on Windows (the job is its own).
pub fn spawn(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
    _watchdog: Option<Arc<Watchdog>>,
) -> io::Result<(Child, ProcessGroup)> {
    let job = kill_on_close_job()?;
    let child = start_in(&job, command(program, args, cwd, env, Stdio::piped))?;
    Ok((child, ProcessGroup { job }))
}

/// A new Job Object whose processes are all ended when its last handle closes. The handle is
/// not inheritable, so no server holds its own job open.
fn kill_on_close_job() -> io::Result<OwnedHandle> {
    // SAFETY: no security attributes and no name are valid arguments.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: raw is a fresh job handle that nothing else owns.
    let job = unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) };
    // SAFETY: all-zero is a valid value of this plain C struct.
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: the pointer and size describe `limits`, of the class's struct.
    let set = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            std::mem::size_of_val(&limits) as u32,
        )
    };
    if set == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(job)
}

/// Starts `cmd` suspended and without a console window, puts it in `job`, then lets it run.
/// If it cannot join the job it is ended: a server that could outlive squiggle is not started.
fn start_in(job: &OwnedHandle, mut cmd: Command) -> io::Result<Child> {
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    let mut child = cmd.spawn()?;
    let (Some(process), Some(pid)) = (child.raw_handle(), child.id()) else {
        return Err(io::Error::other("the spawned process has no handle"));
    };
    // SAFETY: both handles are live: the job is owned by the caller, the process by `child`.
    let assigned = unsafe { AssignProcessToJobObject(job.as_raw_handle(), process) };
    if assigned == 0 {
        let err = io::Error::last_os_error();
        let _ = child.start_kill();
        return Err(err);
    }
    if let Err(err) = resume_threads(pid) {
        let _ = child.start_kill();
        return Err(err);
    }
    Ok(child)
}

/// Resumes every thread of process `pid` (a process created suspended has one, its main
/// thread, whose handle the standard library does not hand out).
fn resume_threads(pid: u32) -> io::Result<()> {
    // SAFETY: a thread snapshot takes no process id; the handle is closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: snapshot is a fresh handle that nothing else owns.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot as RawHandle) };
    // SAFETY: all-zero is a valid value of this plain C struct; dwSize is set as required.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: entry is a valid THREADENTRY32 with its size set.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opening a thread by id; the handle is closed right after use.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: thread is a live handle with the suspend-resume right.
                unsafe {
                    if ResumeThread(thread) != u32::MAX {
                        resumed += 1;
                    }
                    CloseHandle(thread);
                }
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!(
            "cannot resume the new process {pid}: none of its threads could be opened"
        )));
    }
    Ok(())
}
