//! Writing a file someone named: never in place and never through a link at its name. The new
//! text goes to a temporary file created exclusively (`O_CREAT | O_EXCL`, which refuses an
//! existing name, a link or a FIFO included) under an unpredictable name in the same folder,
//! and is renamed over the file; a failed write removes its temporary file and leaves the file
//! as it was.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::Path;

use crate::regular_file::{kind_name, ReadError};

/// The longest file name kept in a temporary file's name (the whole name must stay under the
/// system's limit of 255 bytes).
const LONGEST_NAME_KEPT: usize = 200;

/// Writes `bytes` to `path` atomically: a temporary file `.<name>.squiggle-<random>.tmp` in the
/// same folder, synced, then renamed over `path`.
///
/// `path` is expected resolved (no link on the way), and checked by the caller to lie where it
/// may be written. The file at `path`, if any, must be a regular file: a link there is refused,
/// not replaced or followed, and so is a FIFO, a device or a folder. An existing file keeps its
/// permissions; a new one gets `0666` less the umask. Missing folders are made. A file with
/// other hard links is replaced by a new file, so the other names keep the old text.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other(format!(
            "{} names no file",
            path.display()
        )));
    };
    let kept = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => Some(meta.permissions()),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(io::Error::other(
                "a symbolic link took the file's place; not written through",
            ))
        }
        Ok(meta) => return Err(ReadError::NotRegular(kind_name(meta.file_type())).into()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    std::fs::create_dir_all(folder)?;
    let mut prefix = OsString::from(".");
    if name.len() <= LONGEST_NAME_KEPT {
        prefix.push(name);
        prefix.push(".");
    }
    prefix.push("squiggle-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    if kept.is_none() {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    // Dropped on any error below, which removes it.
    let mut temp = builder.tempfile_in(folder)?;
    temp.as_file_mut().write_all(bytes)?;
    if let Some(permissions) = kept {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    // The rename itself to disk; a folder that cannot be synced is no reason to fail.
    if let Ok(folder) = std::fs::File::open(folder) {
        let _ = folder.sync_all();
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::regular_file::tests::mkfifo;

    /// The names in a folder, sorted.
    fn names(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .expect("read_dir")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    /// The first names the temporary file of `name` is tried under once this thread's random
    /// numbers are seeded with `seed` (tempfile draws them from fastrand's thread-local
    /// generator).
    fn predicted_names(seed: u64, name: &str, count: usize) -> Vec<String> {
        fastrand::seed(seed);
        let mut rng = fastrand::Rng::new();
        (0..count)
            .map(|_| {
                let random: String = (0..6).map(|_| rng.alphanumeric()).collect();
                format!(".{name}.squiggle-{random}.tmp")
            })
            .collect()
    }

    #[test]
    fn the_file_is_replaced_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.py");
        std::fs::write(&path, "old\n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");

        write_atomically(&path, b"new\n").expect("written");

        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\n");
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o640, "the permissions are kept");
        assert_eq!(names(dir.path()), ["a.py"]);
    }

    #[test]
    fn a_new_file_is_made_in_a_new_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/new.py");
        write_atomically(&path, b"x\n").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "x\n");
        assert_eq!(names(&dir.path().join("sub")), ["new.py"]);
    }

    #[test]
    fn links_and_fifos_planted_at_temporary_names_are_never_opened() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "victim\n").expect("write");
        let path = dir.path().join("a.fake");
        std::fs::write(&path, "old\n").expect("write");
        // The name the write used to take (`.<name>.squiggle-<pid>.tmp`), and the very names
        // it tries first now, as an attacker who could predict them would plant them.
        let old_name = format!(".a.fake.squiggle-{}.tmp", std::process::id());
        std::os::unix::fs::symlink(&victim, dir.path().join(&old_name)).expect("symlink");
        let seed = 25;
        let first = predicted_names(seed, "a.fake", 2);
        std::os::unix::fs::symlink(&victim, dir.path().join(&first[0])).expect("symlink");
        mkfifo(&dir.path().join(&first[1]));
        let mut planted = vec![
            "a.fake".to_string(),
            old_name,
            first[0].clone(),
            first[1].clone(),
        ];
        planted.sort();
        // The prediction holds: a temporary file made after the same seed takes that name.
        fastrand::seed(seed);
        let probe = tempfile::Builder::new()
            .prefix(".a.fake.squiggle-")
            .suffix(".tmp")
            .tempfile_in(outside.path())
            .expect("probe");
        assert_eq!(probe.path().file_name(), Some(first[0].as_ref()));
        drop(probe);

        fastrand::seed(seed);
        write_atomically(&path, b"new\n").expect("written past the planted names");

        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\n");
        let kind = std::fs::symlink_metadata(&path).expect("lstat").file_type();
        assert!(kind.is_file(), "the file is still a regular file: {kind:?}");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "victim\n");
        assert_eq!(
            names(dir.path()),
            planted,
            "only the planted names are left"
        );
    }

    #[test]
    fn a_link_a_fifo_or_a_folder_at_the_file_itself_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "victim\n").expect("write");
        let link = dir.path().join("link.py");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        let fifo = dir.path().join("fifo.py");
        mkfifo(&fifo);
        let folder = dir.path().join("folder.py");
        std::fs::create_dir(&folder).expect("mkdir");

        let through_link = write_atomically(&link, b"new\n").expect_err("refused");
        let into_fifo = write_atomically(&fifo, b"new\n").expect_err("refused");
        let onto_folder = write_atomically(&folder, b"new\n").expect_err("refused");

        assert!(
            through_link.to_string().contains("symbolic link"),
            "{through_link}"
        );
        assert_eq!(into_fifo.to_string(), "not a regular file (a FIFO)");
        assert_eq!(onto_folder.to_string(), "not a regular file (a folder)");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "victim\n");
        assert!(std::fs::symlink_metadata(&link)
            .expect("lstat")
            .file_type()
            .is_symlink());
        assert_eq!(
            names(dir.path()),
            ["fifo.py", "folder.py", "link.py", "victim.txt"]
        );
    }
}
