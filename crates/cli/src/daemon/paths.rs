//! Where daemons live: a private per-user runtime folder for their sockets and locks, and a
//! state folder for their logs.

use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The environment variable that names the runtime folder outright (tests use it).
pub const RUNTIME_ENV: &str = "SQUIGGLE_RUNTIME_DIR";

/// The longest socket path a Unix socket can be bound at anywhere squiggle runs: `sun_path`
/// holds 104 bytes on macOS (108 on Linux), the closing NUL included.
const MAX_SOCKET_PATH: usize = 103;

/// The longest file name in the runtime folder: a daemon's socket, `<16>-<16>-<16>.sock`.
const MAX_NAME: usize = 3 * 16 + 2 + ".sock".len();

/// The runtime folder the environment names, and the folder of squiggle's it is made in (made
/// private first), if any: `$SQUIGGLE_RUNTIME_DIR` as it is; else one folder per home folder
/// (`HOME`: another home's daemons are another environment's, with a budget of their own) in
/// `$XDG_RUNTIME_DIR/squiggle`, else in `/tmp/squiggle-$UID`. A folder too long to bind a
/// daemon's socket in is stood in for by `/tmp/squiggle-$UID/<hash of its path>`: its own
/// folder still (two named folders never share daemons), at a path that fits.
pub fn runtime_dir_from(
    explicit: Option<&OsStr>,
    xdg: Option<&OsStr>,
    home: Option<&OsStr>,
    uid: u32,
) -> (PathBuf, Option<PathBuf>) {
    let given = |value: Option<&OsStr>| value.filter(|v| !v.is_empty()).map(PathBuf::from);
    let (dir, base) = match (given(explicit), given(xdg)) {
        (Some(dir), _) => (dir, None),
        (None, xdg) => {
            let base = xdg.map_or_else(|| short_dir(uid), |xdg| xdg.join("squiggle"));
            match given(home) {
                Some(home) => {
                    let hash = super::key::fnv1a(&[home.as_os_str().as_encoded_bytes()]);
                    (base.join(format!("home-{hash:016x}")), Some(base))
                }
                None => (base, None),
            }
        }
    };
    match dir.as_os_str().len() + 1 + MAX_NAME <= MAX_SOCKET_PATH {
        true => (dir, base),
        false => (
            short_dir(uid).join(format!(
                "{:016x}",
                super::key::fnv1a(&[dir.as_os_str().as_encoded_bytes()])
            )),
            Some(short_dir(uid)),
        ),
    }
}

/// This user's runtime folder when the environment names none (or one too long).
fn short_dir(uid: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/squiggle-{uid}"))
}

/// The folder for daemon logs: `$XDG_STATE_HOME/squiggle`, else `~/.local/state/squiggle`.
pub fn log_dir_from(state: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    let given = |value: Option<&OsStr>| value.filter(|v| !v.is_empty()).map(PathBuf::from);
    match (given(state), given(home)) {
        (Some(state), _) => Some(state.join("squiggle")),
        (None, Some(home)) => Some(home.join(".local/state/squiggle")),
        (None, None) => None,
    }
}

/// This user's id.
pub fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// The runtime folder, made (0700) if missing; refused unless it belongs to this user and no
/// one else may enter it (nor the folder it stands in, when it stands in for a longer one).
pub fn runtime_dir() -> io::Result<PathBuf> {
    let (dir, base) = runtime_dir_from(
        std::env::var_os(RUNTIME_ENV).as_deref(),
        std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
        std::env::var_os("HOME").as_deref(),
        uid(),
    );
    if let Some(base) = base {
        private_dir(&base)?;
    }
    private_dir(&dir)?;
    Ok(dir)
}

/// Makes `dir` (0700) if missing, in a folder that must exist (a runtime folder named for a
/// path that is not there makes no folders on the way to it); refused unless it belongs to
/// this user and no one else may enter it.
fn private_dir(dir: &Path) -> io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            let parent = dir.parent().unwrap_or(dir);
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "the daemon folder {} cannot be made: {} does not exist (set {RUNTIME_ENV} to a folder that does)",
                    dir.display(),
                    parent.display()
                ),
            ));
        }
        Err(err) => return Err(err),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != uid() || meta.mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the daemon folder {} must be a folder of this user that no one else can \
                 enter (mode 0700); fix or remove it, or set {RUNTIME_ENV}",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// The log folder, made if missing.
pub fn log_dir() -> io::Result<PathBuf> {
    let dir = log_dir_from(
        std::env::var_os("XDG_STATE_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
    .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "neither XDG_STATE_HOME nor HOME"))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    Ok(dir)
}

/// Makes a file readable and writable by this user only.
pub fn make_private(path: &Path) -> io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

/// Opens a file of squiggle's own (a daemon log, a lock) with `options`, readable and
/// writable by this user only: a link at its name is refused, not followed (`O_NOFOLLOW`), a
/// FIFO is not waited on (`O_NONBLOCK`) and, like any file that is not regular, refused; the
/// permissions are set on the opened file (`fchmod`), so a link's target is never touched.
pub fn open_private(path: &Path, options: &mut std::fs::OpenOptions) -> io::Result<std::fs::File> {
    let file = options
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link; squiggle does not follow it",
                    path.display()
                ),
            ),
            _ => err,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    if meta.mode() & 0o777 != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_folder_in_a_missing_folder_makes_nothing_on_the_way() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("not/there/squiggle");
        let err = private_dir(&missing).expect_err("its parent is missing");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains(RUNTIME_ENV), "{err}");
        assert!(
            !dir.path().join("not").exists(),
            "no folder made on the way"
        );
        let here = dir.path().join("squiggle");
        private_dir(&here).expect("made");
        private_dir(&here).expect("there already");
        let mode = std::fs::metadata(&here).expect("metadata").mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn the_explicit_folder_wins_then_xdg_then_tmp_with_a_folder_per_home() {
        let os = |s: &'static str| Some(OsStr::new(s));
        let home = format!("home-{:016x}", super::super::key::fnv1a(&[b"/home/a"]));
        let cases = [
            (
                (os("/t/run"), os("/run/user/7"), os("/home/a")),
                "/t/run".to_string(),
                None,
            ),
            (
                (None, os("/run/user/7"), os("/home/a")),
                format!("/run/user/7/squiggle/{home}"),
                Some("/run/user/7/squiggle"),
            ),
            (
                (os(""), os(""), os("/home/a")),
                format!("/tmp/squiggle-7/{home}"),
                Some("/tmp/squiggle-7"),
            ),
            (
                (None, os("/run/user/7"), None),
                "/run/user/7/squiggle".to_string(),
                None,
            ),
        ];
        for ((explicit, xdg, home), dir, base) in cases {
            assert_eq!(
                runtime_dir_from(explicit, xdg, home, 7),
                (PathBuf::from(&dir), base.map(PathBuf::from)),
                "{dir}"
            );
        }
        let (a, _) = runtime_dir_from(None, os("/run/user/7"), os("/home/a"), 7);
        let (b, _) = runtime_dir_from(None, os("/run/user/7"), os("/home/b"), 7);
        assert_ne!(a, b, "another home, another folder");
    }

    #[test]
    fn a_folder_too_long_for_a_socket_is_stood_in_for_by_a_short_one_of_its_own() {
        let long = format!("/work/{}", "a".repeat(60));
        let longer = format!("{long}b");
        let os = |s: &str| Some(OsStr::new(s).to_os_string());
        let (stand_in, base) = runtime_dir_from(os(&long).as_deref(), None, None, 7);
        let (from_xdg, _) = runtime_dir_from(None, os(&long).as_deref(), os("/h").as_deref(), 7);

        assert_eq!(stand_in.parent(), Some(Path::new("/tmp/squiggle-7")));
        assert_eq!(base, Some(PathBuf::from("/tmp/squiggle-7")));
        assert_ne!(
            stand_in,
            runtime_dir_from(os(&longer).as_deref(), None, None, 7).0
        );
        assert_eq!(from_xdg.parent(), Some(Path::new("/tmp/squiggle-7")));
        for dir in [stand_in, from_xdg] {
            let socket = dir.join(format!("{}.sock", ["0123456789abcdef"; 3].join("-")));
            assert!(
                socket.as_os_str().len() <= MAX_SOCKET_PATH,
                "{}",
                socket.display()
            );
        }
        let fits = "/run/user/1000/squiggle";
        assert_eq!(
            runtime_dir_from(os(fits).as_deref(), None, None, 7).0,
            PathBuf::from(fits)
        );
    }

    #[test]
    fn logs_go_to_the_state_folder() {
        let os = |s: &'static str| Some(OsStr::new(s));
        assert_eq!(
            log_dir_from(os("/s"), os("/h")),
            Some(PathBuf::from("/s/squiggle"))
        );
        assert_eq!(
            log_dir_from(None, os("/h")),
            Some(PathBuf::from("/h/.local/state/squiggle"))
        );
        assert_eq!(log_dir_from(None, None), None);
    }

    fn append() -> std::fs::OpenOptions {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        options
    }

    #[test]
    fn a_log_is_made_private_and_appended_to() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("daemon-x.log");
        std::fs::write(&log, "before\n").expect("write");
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).expect("chmod");

        let mut file = open_private(&log, &mut append()).expect("opened");
        std::io::Write::write_all(&mut file, b"after\n").expect("write");

        assert_eq!(
            std::fs::read_to_string(&log).expect("read"),
            "before\nafter\n"
        );
        let mode = std::fs::metadata(&log).expect("stat").mode();
        assert_eq!(mode & 0o777, 0o600);
        let new = dir.path().join("daemon-y.log");
        open_private(&new, &mut append()).expect("created");
        assert_eq!(std::fs::metadata(&new).expect("stat").mode() & 0o777, 0o600);
    }

    #[test]
    fn a_link_at_the_log_name_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("someone-elses.txt");
        std::fs::write(&target, "theirs\n").expect("write");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let log = dir.path().join("daemon-x.log");
        std::os::unix::fs::symlink(&target, &log).expect("symlink");

        let err = open_private(&log, &mut append()).expect_err("refused");

        assert_eq!(
            err.to_string(),
            format!(
                "{} is a symbolic link; squiggle does not follow it",
                log.display()
            )
        );
        assert_eq!(
            std::fs::metadata(&target).expect("stat").mode() & 0o777,
            0o644
        );
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "theirs\n");
    }

    #[test]
    fn a_fifo_at_the_log_name_is_refused_without_waiting() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("daemon-x.log");
        let name = std::ffi::CString::new(log.as_os_str().as_encoded_bytes()).expect("no NUL");
        // SAFETY: `name` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);

        // Opened for reading as well, as a reader of its own makes the open go through.
        let err = open_private(&log, append().read(true)).expect_err("refused");

        assert_eq!(
            err.to_string(),
            format!("{} is not a regular file", log.display())
        );
    }
}
