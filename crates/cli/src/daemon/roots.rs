//! Which workspace roots get a daemon. A hook run from `/` or from the home folder (no project
//! marker above it) has that folder as its root; a daemon there would watch the whole tree
//! (tens of thousands of watches, and the CPU to keep them), so such a root is checked
//! one-shot instead.

use std::path::Path;

/// Why a daemon is refused for `root` (canonical), or `None` when it may have one. Refused:
/// the filesystem root, and `home` (canonical) or a folder above it unless it holds `.git`
/// or a squiggle project file.
pub fn refusal(root: &Path, home: Option<&Path>) -> Option<&'static str> {
    if root.parent().is_none() {
        return Some("the workspace root is the filesystem root");
    }
    let marked = root.join(".git").exists()
        || root.join("squiggle.toml").is_file()
        || root.join(".squiggle/config.toml").is_file();
    let holds_home = home.is_some_and(|home| home.starts_with(root));
    (holds_home && !marked)
        .then_some("the workspace root is the home folder, with no project in it")
}

/// [`refusal`] with this process's `$HOME`.
pub fn refusal_here(root: &Path) -> Option<&'static str> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .and_then(|home| squiggle_protocol::paths::canonicalize(home).ok());
    refusal(root, home.as_deref())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_filesystem_root_and_a_bare_home_are_refused() {
        let scratch = std::env::temp_dir().join(format!("squiggle-roots-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(scratch.join("home")).unwrap();
        let home = squiggle_protocol::paths::canonicalize(scratch.join("home")).unwrap();
        assert!(refusal(Path::new("/"), Some(&home)).is_some());
        assert!(refusal(Path::new("/"), None).is_some());
        assert!(refusal(&home, Some(&home)).is_some());
        assert!(refusal(home.parent().unwrap(), Some(&home)).is_some());
        assert_eq!(refusal(&home.join("project"), Some(&home)), None);
        assert_eq!(refusal(&home, None), None);

        // A home that is a project (dotfiles in git, a squiggle.toml) is one like any other.
        std::fs::write(home.join("squiggle.toml"), "").unwrap();
        assert_eq!(refusal(&home, Some(&home)), None);
        std::fs::remove_file(home.join("squiggle.toml")).unwrap();
        std::fs::create_dir(home.join(".git")).unwrap();
        assert_eq!(refusal(&home, Some(&home)), None);
        let _ = std::fs::remove_dir_all(&scratch);
    }
}
