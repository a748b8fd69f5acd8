//! Finding a server's command on disk.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Finds a command: if it contains a path separator, that path (relative ones against workspace_root) if it is an executable file; else the first executable `command` in `extra_dirs`, then `workspace_root/node_modules/.bin`, then each `PATH` entry.
pub fn locate_command(
    command: &str,
    workspace_root: &Path,
    extra_dirs: &[PathBuf],
) -> Option<PathBuf> {
    locate_command_in(
        command,
        workspace_root,
        extra_dirs,
        std::env::var_os("PATH").as_deref(),
    )
}

/// [`locate_command`] with a given value of `PATH` (None: no PATH lookup).
pub fn locate_command_in(
    command: &str,
    workspace_root: &Path,
    extra_dirs: &[PathBuf],
    path_var: Option<&OsStr>,
) -> Option<PathBuf> {
    if command.is_empty() {
        return None;
    }
    if command.contains('/') || command.contains(std::path::MAIN_SEPARATOR) {
        return executable_at(&workspace_root.join(command));
    }
    let path_dirs: Vec<PathBuf> = path_var
        .map(|value| std::env::split_paths(value).collect())
        .unwrap_or_default();
    extra_dirs
        .iter()
        .cloned()
        .chain(std::iter::once(
            workspace_root.join("node_modules").join(".bin"),
        ))
        .chain(
            path_dirs
                .into_iter()
                .filter(|dir| !dir.as_os_str().is_empty()),
        )
        .find_map(|dir| executable_in(&dir, command))
}

/// `dir/command` (or, on Windows, with an executable extension) if it is an executable file.
fn executable_in(dir: &Path, command: &str) -> Option<PathBuf> {
    executable_at(&dir.join(command))
}

/// `candidate` if it is an executable file; on Windows, where only a name with a program's
/// extension runs, `candidate` if its extension is one, else it with the first `PATHEXT`
/// extension that names a file (`tsc` -> `tsc.cmd`: npm's extension-less launcher beside it is
/// a shell script for other systems).
fn executable_at(candidate: &Path) -> Option<PathBuf> {
    if !cfg!(windows) {
        return is_executable(candidate).then(|| candidate.to_path_buf());
    }
    let extensions = program_extensions(std::env::var_os("PATHEXT").as_deref());
    let runs = |path: &Path| {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        ext.is_some_and(|ext| extensions.contains(&ext)) && is_executable(path)
    };
    if runs(candidate) {
        return Some(candidate.to_path_buf());
    }
    extensions.iter().find_map(|ext| {
        let mut name = candidate.as_os_str().to_owned();
        name.push(".");
        name.push(ext);
        let path = PathBuf::from(name);
        runs(&path).then_some(path)
    })
}

/// The extensions of programs Windows runs, lower case without the dot, in `PATHEXT`'s order
/// (its default when unset: `.COM;.EXE;.BAT;.CMD`).
fn program_extensions(pathext: Option<&OsStr>) -> Vec<String> {
    let value = pathext
        .and_then(OsStr::to_str)
        .filter(|v| !v.trim().is_empty())
        .unwrap_or(".COM;.EXE;.BAT;.CMD");
    value
        .split(';')
        .map(|ext| ext.trim().trim_start_matches('.').to_ascii_lowercase())
        .filter(|ext| !ext.is_empty())
        .collect()
}

/// Whether `path` is a file the current user may run (following symlinks; on Windows any file,
/// its extension being checked by [`executable_at`]).
fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    if !metadata.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[test]
fn windows_program_extensions_follow_pathext() {
    let cases: [(Option<&str>, &[&str]); 3] = [
        (None, &["com", "exe", "bat", "cmd"]),
        (Some(" "), &["com", "exe", "bat", "cmd"]),
        (Some(".EXE;.CMD;;.Py"), &["exe", "cmd", "py"]),
    ];
    for (pathext, want) in cases {
        assert_eq!(
            program_extensions(pathext.map(OsStr::new)),
            want,
            "{pathext:?}"
        );
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn file(path: &Path, mode: u32) -> PathBuf {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, "#!/bin/sh\n").expect("write");
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
        path.to_path_buf()
    }

    #[test]
    fn finds_command_on_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        fs::create_dir_all(&a).expect("mkdir");
        let tool = file(&b.join("tool"), 0o755);
        let path_var = std::env::join_paths([&a, &b]).expect("join");
        let found = locate_command_in("tool", &dir.path().join("ws"), &[], Some(&path_var));
        assert_eq!(found, Some(tool));
    }

    #[test]
    fn skips_non_executable_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        file(&a.join("tool"), 0o644);
        let tool = file(&b.join("tool"), 0o755);
        let path_var = std::env::join_paths([&a, &b]).expect("join");
        let found = locate_command_in("tool", dir.path(), &[], Some(&path_var));
        assert_eq!(found, Some(tool));
    }

    #[test]
    fn node_modules_bin_before_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        let local = file(&ws.join("node_modules/.bin/tool"), 0o755);
        let bin = dir.path().join("bin");
        file(&bin.join("tool"), 0o755);
        let found = locate_command_in("tool", &ws, &[], Some(bin.as_os_str()));
        assert_eq!(found, Some(local));
    }

    #[test]
    fn extra_dirs_before_node_modules() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        file(&ws.join("node_modules/.bin/tool"), 0o755);
        let extra = dir.path().join("lsp-servers/bin");
        let installed = file(&extra.join("tool"), 0o755);
        let found = locate_command_in("tool", &ws, &[extra], None);
        assert_eq!(found, Some(installed));
    }

    #[test]
    fn relative_path_command_resolves_against_workspace() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tool = file(&dir.path().join("scripts/tool"), 0o755);
        let found = locate_command_in("scripts/tool", dir.path(), &[], None);
        assert_eq!(found, Some(tool));
    }

    #[test]
    fn absolute_path_command_must_be_executable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plain = file(&dir.path().join("plain"), 0o644);
        let command = plain.to_str().expect("utf-8");
        assert_eq!(locate_command_in(command, dir.path(), &[], None), None);
    }

    #[test]
    fn missing_command_is_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let found = locate_command_in(
            "no-such-tool",
            dir.path(),
            &[],
            Some(dir.path().as_os_str()),
        );
        assert_eq!(found, None);
    }

    #[test]
    fn directory_is_not_a_command() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("bin/tool")).expect("mkdir");
        let bin = dir.path().join("bin");
        assert_eq!(
            locate_command_in("tool", dir.path(), &[], Some(bin.as_os_str())),
            None
        );
    }
}
