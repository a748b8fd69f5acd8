//! A folder named to `squiggle check`: the files of known types under it, as git sees them
//! (tracked and untracked, without what `.gitignore` excludes) or, outside a git work tree,
//! as a walk that skips hidden, build and dependency folders; bounded; without the files only
//! missing optional servers would check.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use squiggle_config::availability::{each_server_once, Availability};
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

/// A folder's files without those only missing optional servers would check (a
/// `pyproject.toml` without taplo), which one line on stderr sums up: one line for the person,
/// not one "not checked" per file.
pub fn leave_out_optional(
    files: Vec<PathBuf>,
    root: &Path,
    config: &Config,
    shown: &str,
) -> Vec<PathBuf> {
    let found = each_server_once(root, |spec, root| Availability::found(spec, root).starts());
    let mut servers = BTreeSet::new();
    let mut types = BTreeSet::new();
    let mut left_out = 0;
    let kept = files
        .into_iter()
        .filter(|file| {
            let missing = config.only_missing_optional(file, &found);
            if missing.is_empty() {
                return true;
            }
            left_out += 1;
            servers.extend(missing.into_iter().map(|spec| spec.id.clone()));
            let kind = file.extension().or_else(|| file.file_name());
            types.extend(kind.map(|kind| format!(".{}", kind.to_string_lossy())));
            false
        })
        .collect();
    if left_out > 0 {
        let join = |set: BTreeSet<String>| set.into_iter().collect::<Vec<_>>().join(", ");
        let (servers, types) = (join(servers), join(types));
        let files = if left_out == 1 { "file" } else { "files" };
        eprintln!(
            "squiggle: {shown}: {left_out} {files} left out ({types}): the optional servers \
             that check them are not installed ({servers}; `squiggle status` says how)"
        );
    }
    kept
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
#[cfg(unix)]
fn bytes_to_path(name: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(name))
}

/// A file name as git prints it (UTF-8 on Windows) as a path.
#[cfg(windows)]
fn bytes_to_path(name: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(name).into_owned())
}
