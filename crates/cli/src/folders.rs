//! A folder named to `squiggle check`: the files of known types under it, as git sees them
//! (tracked and untracked, without what `.gitignore` excludes) or, outside a git work tree,
//! as a walk that skips hidden, build and dependency folders; bounded.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use squiggle_config::Config;

/// At most this many files are checked for one folder.
pub const MAX_FOLDER_FILES: usize = 500;

/// The files under a folder that some server of the configuration handles, at most `limit`,
/// and whether more were left out.
pub fn files_in(folder: &Path, config: &Config, limit: usize) -> (Vec<PathBuf>, bool) {
    let known = |path: &Path| {
        config
            .servers_matching(path)
            .iter()
            .any(|spec| spec.enabled || !config.enabled)
    };
    match git_files(folder) {
        Some(files) => {
            let mut kept = files.into_iter().filter(|file| known(file));
            let files: Vec<PathBuf> = kept.by_ref().take(limit).collect();
            let more = kept.next().is_some();
            (files, more)
        }
        None => squiggle_config::files_under(folder, limit, &known),
    }
}

/// The files git lists under a folder (tracked, and untracked but not ignored), sorted; None
/// when git is not there or the folder is not in a work tree.
fn git_files(folder: &Path) -> Option<BTreeSet<PathBuf>> {
    let output = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(folder)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let files = output
        .stdout
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| folder.join(bytes_to_path(name)))
        // A file deleted but still in the index, or a submodule, is not a file to check.
        .filter(|path| path.is_file())
        .collect();
    Some(files)
}

/// A file name as git prints it (bytes) as a path.
fn bytes_to_path(name: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(name))
}
