//! Finding configuration files, the workspace root and per-server project roots.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The project file names, in order of preference within one folder.
const PROJECT_FILES: [&str; 2] = ["squiggle.toml", ".squiggle/config.toml"];

/// `$XDG_CONFIG_HOME/squiggle/config.toml`, else `$HOME/.config/squiggle/config.toml`; None if neither variable is set.
pub fn user_config_path() -> Option<PathBuf> {
    user_config_path_from(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`user_config_path`] for given values of `XDG_CONFIG_HOME` and `HOME` (empty counts as unset).
pub fn user_config_path_from(
    xdg_config_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let base = match (
        xdg_config_home.filter(|v| !v.is_empty()),
        home.filter(|v| !v.is_empty()),
    ) {
        (Some(xdg), _) => PathBuf::from(xdg),
        (None, Some(home)) => PathBuf::from(home).join(".config"),
        (None, None) => return None,
    };
    Some(base.join("squiggle").join("config.toml"))
}

/// `path` made absolute against the current directory when possible, so that upward walks see every ancestor.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The project configuration file in one folder, `squiggle.toml` preferred.
fn project_file_in(dir: &Path) -> Option<PathBuf> {
    PROJECT_FILES
        .iter()
        .map(|name| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The project configuration file for a workspace: nearest `squiggle.toml` or `.squiggle/config.toml` upward from `start`.
pub fn find_project_file(start: &Path) -> Option<PathBuf> {
    absolute(start).ancestors().find_map(project_file_in)
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

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, "").expect("write");
    }

    fn markers(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn user_config_prefers_xdg() {
        assert_eq!(
            user_config_path_from(Some("/x".into()), Some("/h".into())),
            Some(PathBuf::from("/x/squiggle/config.toml"))
        );
    }

    #[test]
    fn user_config_falls_back_to_home() {
        assert_eq!(
            user_config_path_from(Some("".into()), Some("/h".into())),
            Some(PathBuf::from("/h/.config/squiggle/config.toml"))
        );
        assert_eq!(user_config_path_from(None, None), None);
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
