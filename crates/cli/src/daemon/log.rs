//! The daemon's log (its stderr, which the starting client points at the log file): lines
//! that never fail the daemon. A log that cannot be written (a full disk, a read-only file)
//! is replaced by nowhere at start, and a line that cannot be written later is dropped.

use std::fmt::Arguments;
use std::io::Write;
use std::os::fd::AsRawFd;

/// Writes one line to the log, prefixed with the daemon's pid; a failure is ignored.
pub fn note(line: Arguments<'_>) {
    let _ = writeln!(
        std::io::stderr(),
        "squiggle daemon {}: {line}",
        std::process::id()
    );
}

/// Writes the first line to the log; when it cannot be written, points stdout and stderr at
/// `/dev/null`, so that nothing the daemon (or a library in it) prints can fail it. Returns
/// whether the log is kept.
pub fn open(first: Arguments<'_>) -> bool {
    let line = format!("squiggle daemon {}: {first}\n", std::process::id());
    let written = (std::io::stderr().write_all(line.as_bytes()))
        .and_then(|()| std::io::stderr().flush())
        .is_ok();
    if !written {
        to_nowhere();
    }
    written
}

/// Points stdout and stderr at `/dev/null`.
fn to_nowhere() {
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: dup2 of a descriptor this function owns onto a standard one; no memory is
        // involved, and the standard streams are unbuffered or flushed by then.
        unsafe { libc::dup2(null.as_raw_fd(), fd) };
    }
}
