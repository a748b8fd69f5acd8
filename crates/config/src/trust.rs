//! Which project configurations this user trusts. A project's configuration file
//! (`squiggle.toml`, `.squiggle/config.toml`, `opencode.json`) can name the commands squiggle
//! runs as the user (its `[servers]` tables: command, arguments, environment, settings), and a
//! cloned repository is not the user's word. So those tables apply only once the user has
//! trusted that file, at that path, with that exact content (`squiggle trust`); a change to the
//! file ends the trust. The record is kept outside every project, in the user's configuration
//! folder (`<config>/squiggle/trusted/`): one file per trusted path, named by a hash of the
//! path and holding the SHA-256 of the content trusted, readable and writable by the user
//! alone. What a host passes itself (serve's `LSP_BOOTSTRAP`, `--config FILE`, the Rust API's
//! own `Config`) is the host's and needs no record.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::atomic_write::write_atomically;
use crate::regular_file::read_regular_file;
use crate::root::may_configure;

/// The most a trust record holds (a hash and a path).
const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// The record of the project configurations one user trusts: a folder of this user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustRecord {
    /// The folder holding one record file per trusted configuration file.
    dir: PathBuf,
}

impl TrustRecord {
    /// The record in the user's configuration folder (`$XDG_CONFIG_HOME/squiggle/trusted`, else
    /// `~/.config/squiggle/trusted`); None when neither variable is set (nothing is trusted).
    pub fn of_this_user() -> Option<Self> {
        Self::beside(&crate::root::user_config_path()?)
    }

    /// The record beside a user configuration file: `trusted/` in the same folder.
    pub fn beside(user_file: &Path) -> Option<Self> {
        Some(Self::in_folder(user_file.parent()?.join("trusted")))
    }

    /// The record kept in `dir`.
    pub fn in_folder(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// Whether the configuration file at `file` (as found: a link is trusted at its own path)
    /// is trusted with the content `content`.
    pub fn trusts(&self, file: &Path, content: &[u8]) -> bool {
        let record = self.record_of(file);
        // A record another user could have written says nothing of this user's trust.
        if !may_configure(&record) {
            return false;
        }
        read_regular_file(&record, MAX_RECORD_BYTES)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .is_some_and(|text| text.lines().next() == Some(hex_sha256(content).as_str()))
    }

    /// Trusts the file at `file` with the content `content`, in place of what was trusted
    /// there before.
    pub fn trust(&self, file: &Path, content: &[u8]) -> io::Result<()> {
        make_private_folder(&self.dir)?;
        let text = format!("{}\n{}\n", hex_sha256(content), file.display());
        let record = self.record_of(file);
        write_atomically(&record, text.as_bytes())?;
        set_private(&record)
    }

    /// Ends the trust of the file at `file`; whether there was one.
    pub fn revoke(&self, file: &Path) -> io::Result<bool> {
        match std::fs::remove_file(self.record_of(file)) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Whether the user is to be told now that `file`, with `content`, was not used because it
    /// is not trusted: yes the first time for each content (recorded), no after (a hook says
    /// it once, not after every edit).
    pub fn tell_once(&self, file: &Path, content: &[u8]) -> bool {
        let told = self.record_of(file).with_extension("told");
        let hash = hex_sha256(content);
        let before = read_regular_file(&told, MAX_RECORD_BYTES).unwrap_or_default();
        if before == hash.as_bytes() {
            return false;
        }
        let written = make_private_folder(&self.dir)
            .and_then(|()| write_atomically(&told, hash.as_bytes()))
            .and_then(|()| set_private(&told));
        if let Err(err) = written {
            tracing::debug!("cannot record that {} was told: {err}", file.display());
        }
        true
    }

    /// The record file of a configuration file's path.
    fn record_of(&self, file: &Path) -> PathBuf {
        let path = file.as_os_str().as_encoded_bytes();
        self.dir.join(&hex_sha256(path)[..32])
    }
}

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Makes `dir` (and its parents), the last one readable by this user alone.
fn make_private_folder(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Makes a record file readable and writable by this user alone.
fn set_private(file: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_trusted_with_the_content_trusted_and_no_other() {
        let dir = tempfile::tempdir().expect("tempdir");
        let record = TrustRecord::in_folder(dir.path().join("trusted"));
        let file = Path::new("/p/squiggle.toml");
        assert!(!record.trusts(file, b"a"));
        record.trust(file, b"a").expect("trusts");
        assert!(record.trusts(file, b"a"));
        assert!(!record.trusts(file, b"a "), "a changed file is not trusted");
        assert!(
            !record.trusts(Path::new("/q/squiggle.toml"), b"a"),
            "the same content at another path is not trusted"
        );
        record.trust(file, b"b").expect("trusts");
        assert!(record.trusts(file, b"b") && !record.trusts(file, b"a"));
        assert!(record.revoke(file).expect("revokes"));
        assert!(!record.trusts(file, b"b"));
        assert!(!record.revoke(file).expect("revokes"));
    }

    #[test]
    fn an_untrusted_content_is_told_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let record = TrustRecord::in_folder(dir.path().join("trusted"));
        let file = Path::new("/p/squiggle.toml");
        assert!(record.tell_once(file, b"a"));
        assert!(!record.tell_once(file, b"a"));
        assert!(record.tell_once(file, b"b"), "a new content is news");
        assert!(!record.trusts(file, b"b"), "being told is not trusting");
    }

    #[cfg(unix)]
    #[test]
    fn a_record_others_may_write_trusts_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let record = TrustRecord::in_folder(dir.path().join("trusted"));
        let file = Path::new("/p/squiggle.toml");
        record.trust(file, b"a").expect("trusts");
        let written = record.record_of(file);
        let mode = std::fs::metadata(&written).expect("record").permissions();
        assert_eq!(mode.mode() & 0o777, 0o600);
        std::fs::set_permissions(&written, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        assert!(!record.trusts(file, b"a"));
    }

    #[test]
    fn sha256_is_the_standard_one() {
        assert_eq!(
            hex_sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
