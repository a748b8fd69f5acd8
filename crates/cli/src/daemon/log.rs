//! The daemon's log (its stderr, which the starting client points at the log file): lines
//! that never fail the daemon. A log that cannot be written (a full disk, a read-only file)
//! is replaced by nowhere at start, and a line that cannot be written later is dropped.

#[cfg(unix)]
use std::fmt::Arguments;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many more bytes this process may write to its stderr (set for a daemon by [`limit`]):
/// a daemon's log stays bounded however long it runs and whatever repeats.
static LEFT: AtomicU64 = AtomicU64::new(u64::MAX);

/// The most a daemon writes to its log in one run.
pub const MAX_LOG_BYTES: u64 = 8 << 20;

/// Bounds what this process writes to stderr from now on at `bytes`; the last line says so.
#[cfg(unix)]
pub fn limit(bytes: u64) {
    LEFT.store(bytes, Ordering::SeqCst);
}

/// Writes one line to the log, prefixed with the daemon's pid; a failure is ignored.
#[cfg(unix)]
pub fn note(line: Arguments<'_>) {
    let line = format!("squiggle daemon {}: {line}\n", std::process::id());
    let _ = Stderr.write_all(line.as_bytes());
}

/// The daemon's stderr within its bound: what is over it is dropped (and said once).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stderr;

impl Write for Stderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let len = bytes.len() as u64;
        let taken = LEFT.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
            left.checked_sub(len)
        });
        match taken {
            Ok(_) => std::io::stderr().write_all(bytes)?,
            // Over the bound: said once, then nothing more.
            Err(left) if left > 0 => {
                LEFT.store(0, Ordering::SeqCst);
                let _ = std::io::stderr().write_all(
                    format!(
                        "squiggle daemon {}: the log reached its bound ({MAX_LOG_BYTES} bytes); \
                         nothing more is written until the daemon restarts\n",
                        std::process::id()
                    )
                    .as_bytes(),
                );
            }
            Err(_) => {}
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Writes the first line to the log; when it cannot be written, points stdout and stderr at
/// `/dev/null`, so that nothing the daemon (or a library in it) prints can fail it. Returns
/// whether the log is kept.
#[cfg(unix)]
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
#[cfg(unix)]
fn to_nowhere() {
    use std::os::fd::AsRawFd;
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: dup2 of a descriptor this function owns onto a standard one; no memory is
        // involved, and the standard streams are unbuffered or flushed by then.
        unsafe { libc::dup2(null.as_raw_fd(), fd) };
    }
}
