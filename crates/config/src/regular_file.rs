//! Reading a file someone named: regular files only, never more than a limit, and never
//! waiting on a FIFO or a device.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The path names a FIFO, a device, a socket or a folder.
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    /// The file holds more bytes than the limit.
    #[error("too large ({bytes} bytes, limit {limit})")]
    TooLarge {
        /// Its size (at least this many bytes).
        bytes: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// Opening or reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl ReadError {
    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(err) if err.kind() == std::io::ErrorKind::NotFound)
    }
}

impl From<ReadError> for std::io::Error {
    fn from(err: ReadError) -> Self {
        match err {
            ReadError::Io(err) => err,
            other => std::io::Error::other(other),
        }
    }
}

/// The content of the regular file at `path` (symlinks followed), at most `limit` bytes.
///
/// The type is checked before opening, and again on the opened file: the open does not wait
/// (`O_NONBLOCK` on Unix), so a FIFO swapped in between is refused instead of blocking.
pub fn read_regular_file(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let kind = std::fs::metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(ReadError::NotRegular(kind_name(kind)));
    }
    let file = open_without_waiting(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(ReadError::NotRegular(kind_name(metadata.file_type())));
    }
    if metadata.len() > limit {
        return Err(ReadError::TooLarge {
            bytes: metadata.len(),
            limit,
        });
    }
    let mut content = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or_default());
    // One byte more than the limit tells a file that grew since the stat.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut content)?;
    let bytes = content.len() as u64;
    if bytes > limit {
        return Err(ReadError::TooLarge { bytes, limit });
    }
    Ok(content)
}

/// Opens a file for reading without waiting for a writer (a FIFO) or a device.
fn open_without_waiting(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// What a file that is not regular is, for messages.
pub(crate) fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

#[cfg(all(test, unix))]
pub(crate) mod tests {
    use super::*;

    /// Makes a FIFO at `path` (for the tests of what refuses one).
    pub(crate) fn mkfifo(path: &Path) {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no NUL");
        // SAFETY: `name` is a valid NUL-terminated path that outlives the call.
        let status = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
        assert_eq!(status, 0, "mkfifo {}", path.display());
    }

    #[test]
    fn reads_a_regular_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.py");
        std::fs::write(&path, "x = 1\n").expect("write");
        assert_eq!(read_regular_file(&path, 100).expect("read"), b"x = 1\n");
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("fifo.py");
        mkfifo(&path);
        let err = read_regular_file(&path, 100).expect_err("refused");
        assert_eq!(err.to_string(), "not a regular file (a FIFO)");
    }

    #[test]
    fn the_opened_file_is_checked_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("fifo.py");
        mkfifo(&path);
        // As if the FIFO had replaced a regular file after the first check.
        let file = open_without_waiting(&path).expect("opens at once");
        assert!(!file.metadata().expect("fstat").is_file());
    }

    #[test]
    fn a_character_device_is_refused() {
        let err = read_regular_file(Path::new("/dev/zero"), 100).expect_err("refused");
        assert_eq!(err.to_string(), "not a regular file (a character device)");
    }

    #[test]
    fn a_folder_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = read_regular_file(dir.path(), 100).expect_err("refused");
        assert_eq!(err.to_string(), "not a regular file (a folder)");
    }

    #[test]
    fn a_file_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.toml");
        std::fs::write(&path, "0123456789").expect("write");
        let err = read_regular_file(&path, 9).expect_err("refused");
        assert_eq!(err.to_string(), "too large (10 bytes, limit 9)");
        assert_eq!(
            read_regular_file(&path, 10).expect("at the limit").len(),
            10
        );
    }

    #[test]
    fn a_missing_file_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = read_regular_file(&dir.path().join("nope"), 9).expect_err("missing");
        assert!(err.is_not_found(), "{err}");
    }
}
