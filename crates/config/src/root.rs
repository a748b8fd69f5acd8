//! Finding configuration files, the workspace root and per-server project roots.

use std::path::{Path, PathBuf};

use crate::user_folders::UserFolders;

/// The project file names, in order of preference within one folder.
const PROJECT_FILES: [&str; 2] = ["squiggle.toml", ".squiggle/config.toml"];

/// `$XDG_CONFIG_HOME/squiggle/config.toml`; else, on Windows, `%APPDATA%\squiggle\config.toml`;
/// else `$HOME/.config/squiggle/config.toml`; None if none of them is set.
pub fn user_config_path() -> Option<PathBuf> {
    user_config_path_from(&UserFolders::from_env())
}

/// [`user_config_path`] for given values of the folders' variables.
pub fn user_config_path_from(folders: &UserFolders) -> Option<PathBuf> {
    let base = match (&folders.xdg_config, &folders.app_data, &folders.home) {
        (Some(xdg), _, _) => PathBuf::from(xdg),
        (None, Some(app_data), _) => PathBuf::from(app_data),
        (None, None, Some(home)) => PathBuf::from(home).join(".config"),
        (None, None, None) => return None,
    };
    Some(base.join("squiggle").join("config.toml"))
}

/// `path` made absolute against the current directory when possible, so that upward walks see every ancestor.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The project configuration file in one folder, `squiggle.toml` preferred; one that another
/// user could have written is not read (see [`may_configure`]), and said so.
fn project_file_in(dir: &Path) -> Option<PathBuf> {
    let found = (PROJECT_FILES.iter())
        .map(|name| dir.join(name))
        .find(|candidate| candidate.is_file())?;
    if may_configure(&found) {
        return Some(found);
    }
    tracing::warn!(
        file = %found.display(),
        "not read: a configuration file must be owned by you (or root) and writable by no one else, as its server commands run as you (if it is yours: chmod go-w on it)"
    );
    None
}

/// The project configuration file for a workspace: nearest `squiggle.toml` or `.squiggle/config.toml` upward from `start`, up to the project root (the nearest folder holding `.git`): a file above it configures other projects, not this one.
pub fn find_project_file(start: &Path) -> Option<PathBuf> {
    for dir in absolute(start).ancestors() {
        if let Some(found) = project_file_in(dir) {
            return Some(found);
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Whether a configuration file may configure a project of this user: its server commands run
/// as this user, so only a file this user (or root) owns, and no one else can write, may.
#[cfg(unix)]
pub(crate) fn may_configure(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|meta| {
        let me = rustix::process::geteuid().as_raw();
        owned_and_kept(me, meta.uid(), meta.mode())
    })
}

/// Windows keeps no owner bits here: its folders' access lists decide who writes there.
#[cfg(not(unix))]
pub(crate) fn may_configure(_path: &Path) -> bool {
    true
}

/// Whether a file owned by `owner`, with permission bits `mode`, is this user's (`me`) own:
/// owned by them or by root, and neither group- nor world-writable.
#[cfg_attr(not(unix), allow(dead_code))]
fn owned_and_kept(me: u32, owner: u32, mode: u32) -> bool {
    (owner == me || owner == 0) && mode & 0o022 == 0
}

/// The workspace root for the CLI: the nearest folder upward from `start` holding `.git`, `squiggle.toml` or `.squiggle/config.toml`; else `start`.
pub fn find_workspace_root(start: &Path) -> PathBuf {
    absolute(start)
        .ancestors()
        .find(|dir| dir.join(".git").exists() || project_file_in(dir).is_some())
        .map_or_else(|| start.to_path_buf(), Path::to_path_buf)
}

/// The project root of a file for one server: from the file's folder upward, the nearest folder holding one of `markers`, never above `workspace_root`; none found -> workspace_root.
pub fn find_root(file: &Path, workspace_root: &Path, markers: &[String]) -> PathBuf {
    let Some(folder) = file.parent().filter(|_| !markers.is_empty()) else {
        return workspace_root.to_path_buf();
    };
    folder
        .ancestors()
        .take_while(|dir| dir.starts_with(workspace_root))
        .find(|dir| markers.iter().any(|marker| dir.join(marker).exists()))
        .map_or_else(|| workspace_root.to_path_buf(), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn only_a_file_of_this_user_or_root_that_no_one_else_writes_configures() {
        // (me, owner, mode, may configure)
        let table = [
            (1000, 1000, 0o644, true),
            (1000, 0, 0o644, true),
            (1000, 1001, 0o644, false),
            (1000, 1000, 0o664, false),
            (1000, 1000, 0o646, false),
            (1000, 0, 0o666, false),
            (0, 0, 0o600, true),
            (0, 1000, 0o644, false),
        ];
        for (me, owner, mode, may) in table {
            assert_eq!(
                owned_and_kept(me, owner, mode),
                may,
                "{me} {owner} {mode:o}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_world_writable_project_file_is_not_read_nor_a_root_marker() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let shared = dir.path().join("shared");
        let project = shared.join("checkout");
        fs::create_dir_all(&project).expect("mkdir");
        let hostile = shared.join("squiggle.toml");
        touch(&hostile);
        fs::set_permissions(&hostile, fs::Permissions::from_mode(0o666)).expect("chmod");
        assert_eq!(find_project_file(&project), None);
        assert_eq!(find_workspace_root(&project), project);
    }

    #[test]
    fn the_project_file_search_stops_at_the_project_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("checkout");
        fs::create_dir_all(project.join(".git")).expect("mkdir");
        touch(&dir.path().join("squiggle.toml"));
        assert_eq!(find_project_file(&project.join("src")), None);
        touch(&project.join("squiggle.toml"));
        assert_eq!(
            find_project_file(&project.join("src")),
            Some(project.join("squiggle.toml"))
        );
    }

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, "").expect("write");
    }

    fn markers(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_user_config_follows_xdg_then_windows_then_home() {
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        let folders = |xdg_config, app_data, home| UserFolders {
            xdg_config,
            app_data,
            home,
            ..UserFolders::default()
        };
        let cases = [
            (
                folders(os("/x"), os("/a"), os("/h")),
                Some("/x/squiggle/config.toml"),
            ),
            (
                folders(None, os("/a"), os("/h")),
                Some("/a/squiggle/config.toml"),
            ),
            (
                folders(None, None, os("/h")),
                Some("/h/.config/squiggle/config.toml"),
            ),
            (folders(None, None, None), None),
        ];
        for (given, want) in cases {
            assert_eq!(
                user_config_path_from(&given),
                want.map(PathBuf::from),
                "{given:?}"
            );
        }
    }

    #[test]
    fn project_file_found_upward_in_dot_squiggle() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join(".squiggle/config.toml");
        touch(&file);
        let deep = dir.path().join("a/b");
        fs::create_dir_all(&deep).expect("mkdir");
        assert_eq!(find_project_file(&deep), Some(file));
    }

    #[test]
    fn nearest_project_file_wins() {
        let dir = tempfile::tempdir().expect("tempdir");
        touch(&dir.path().join("squiggle.toml"));
        let inner = dir.path().join("a/.squiggle/config.toml");
        touch(&inner);
        assert_eq!(find_project_file(&dir.path().join("a")), Some(inner));
    }

    #[test]
    fn squiggle_toml_preferred_within_one_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        touch(&dir.path().join("squiggle.toml"));
        touch(&dir.path().join(".squiggle/config.toml"));
        assert_eq!(
            find_project_file(dir.path()),
            Some(dir.path().join("squiggle.toml"))
        );
    }

    #[test]
    fn workspace_root_is_nearest_git_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("repo/.git")).expect("mkdir");
        let deep = dir.path().join("repo/src/x");
        fs::create_dir_all(&deep).expect("mkdir");
        assert_eq!(find_workspace_root(&deep), dir.path().join("repo"));
    }

    #[test]
    fn workspace_root_is_nearest_squiggle_toml() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join(".git")).expect("mkdir");
        touch(&dir.path().join("sub/squiggle.toml"));
        let deep = dir.path().join("sub/x");
        fs::create_dir_all(&deep).expect("mkdir");
        assert_eq!(find_workspace_root(&deep), dir.path().join("sub"));
    }

    #[test]
    fn find_root_picks_nearest_marker() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path();
        touch(&ws.join("pyproject.toml"));
        touch(&ws.join("pkg/setup.py"));
        let file = ws.join("pkg/src/mod.py");
        touch(&file);
        let root = find_root(&file, ws, &markers(&["pyproject.toml", "setup.py"]));
        assert_eq!(root, ws.join("pkg"));
    }

    #[test]
    fn find_root_ignores_marker_above_workspace_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        touch(&dir.path().join("Cargo.toml"));
        let ws = dir.path().join("ws");
        let file = ws.join("src/main.rs");
        touch(&file);
        assert_eq!(find_root(&file, &ws, &markers(&["Cargo.toml"])), ws);
    }

    #[test]
    fn find_root_without_markers_is_workspace_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a/b.sh");
        touch(&file);
        assert_eq!(find_root(&file, dir.path(), &[]), dir.path());
    }

    #[test]
    fn find_root_of_file_outside_workspace_is_workspace_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        let file = dir.path().join("other/Cargo.toml");
        touch(&file);
        assert_eq!(find_root(&file, &ws, &markers(&["Cargo.toml"])), ws);
    }
}
