//! Unix: the forked guard process.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// How many process groups the watchdog can hold at once.
const SLOTS: usize = 4096;
/// A record: `+` or `-`, then a process group id in native byte order.
const RECORD: usize = 5;

/// The send flag that keeps a send to a gone watchdog from raising SIGPIPE (Linux); elsewhere
/// none, and Rust programs ignore SIGPIPE, so such a send fails with EPIPE all the same.
#[cfg(target_os = "linux")]
const NO_SIGPIPE: libc::c_int = libc::MSG_NOSIGNAL;
#[cfg(not(target_os = "linux"))]
const NO_SIGPIPE: libc::c_int = 0;

/// The squiggle side of the watchdog; dropping it (or squiggle dying) sets the watchdog off.
#[derive(Debug)]
pub struct Watchdog {
    socket: OwnedFd,
}

impl Watchdog {
    /// Starts the watchdog process.
    pub fn spawn() -> io::Result<Self> {
        // Close-on-exec on every platform (SOCK_CLOEXEC where there is one), so that no server
        // inherits either end.
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let (ours, theirs) = (OwnedFd::from(ours), OwnedFd::from(theirs));
        // SAFETY: fork has no preconditions; the child only calls async-signal-safe functions.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                // SAFETY: we are the forked child; the function never returns.
                unsafe { intermediate(theirs.as_raw_fd(), ours.as_raw_fd()) }
            }
            child => {
                drop(theirs);
                let mut status = 0;
                // SAFETY: child is our own child process; status is a valid int.
                unsafe { libc::waitpid(child, &mut status, 0) };
                Ok(Self { socket: ours })
            }
        }
    }

    /// Tells the watchdog to kill this process group if squiggle dies.
    pub fn watch(&self, pgid: i32) {
        self.send(b'+', pgid);
    }

    /// Tells the watchdog the group is gone (its id may be reused).
    pub fn forget(&self, pgid: i32) {
        self.send(b'-', pgid);
    }

    fn send(&self, op: u8, pgid: i32) {
        let mut record = [0u8; RECORD];
        record[0] = op;
        record[1..].copy_from_slice(&pgid.to_ne_bytes());
        // SAFETY: record is a valid buffer of RECORD bytes. A 5-byte send on a stream socket is
        // not split in practice.
        unsafe {
            libc::send(
                self.socket.as_raw_fd(),
                record.as_ptr().cast(),
                RECORD,
                NO_SIGPIPE,
            );
        }
    }
}

/// The first child: forks the watchdog and exits, so that the watchdog is reparented to init.
///
/// # Safety
/// Must only be called in a freshly forked child.
unsafe fn intermediate(socket: i32, parent_end: i32) -> ! {
    // SAFETY: async-signal-safe calls only.
    unsafe {
        libc::close(parent_end);
        if libc::fork() == 0 {
            watch(socket);
        }
        libc::_exit(0)
    }
}

/// The watchdog: reads records until the socket closes, then kills every group still listed.
///
/// # Safety
/// Must only be called in a freshly forked child.
unsafe fn watch(socket: i32) -> ! {
    // SAFETY: async-signal-safe calls only; buffers live on this stack frame.
    unsafe {
        for signal in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
        close_all_but(socket);
        let mut groups = [0i32; SLOTS];
        let mut buf = [0u8; 512];
        let mut held = 0usize;
        loop {
            let n = libc::read(socket, buf.as_mut_ptr().add(held).cast(), buf.len() - held);
            if n <= 0 {
                break;
            }
            held += n as usize;
            let whole = held - held % RECORD;
            let mut at = 0;
            while at < whole {
                let pgid = i32::from_ne_bytes([buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]]);
                match buf[at] {
                    b'+' => {
                        if let Some(slot) = groups.iter_mut().find(|g| **g == 0) {
                            *slot = pgid;
                        }
                    }
                    _ => {
                        if let Some(slot) = groups.iter_mut().find(|g| **g == pgid) {
                            *slot = 0;
                        }
                    }
                }
                at += RECORD;
            }
            buf.copy_within(whole..held, 0);
            held -= whole;
        }
        for pgid in groups {
            if pgid > 0 {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
        libc::_exit(0)
    }
}

/// Closes every descriptor but `keep`, so the watchdog holds no pipe of squiggle's open.
///
/// # Safety
/// Async-signal-safe; only for a forked child.
unsafe fn close_all_but(keep: i32) {
    // SAFETY: close_range and close are async-signal-safe and only affect this process.
    unsafe {
        #[cfg(target_os = "linux")]
        let closed = {
            let below = keep == 0
                || libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32) == 0;
            let above =
                libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32) == 0;
            below && above
        };
        #[cfg(not(target_os = "linux"))]
        let closed = false;
        if !closed {
            for fd in 0..65_536 {
                if fd != keep {
                    libc::close(fd);
                }
            }
        }
    }
}
