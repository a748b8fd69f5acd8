//! Walks over a workspace's own files: a quick look at which kinds it holds (to start its
//! servers early), and the files under a folder (to check them all).

use std::collections::HashSet;
use std::fs::DirEntry;
use std::path::{Path, PathBuf};

/// Folders that never hold a project's own sources.
const SKIPPED: &[&str] = &[
    "target",
    "node_modules",
    "__pycache__",
    "venv",
    "dist",
    "build",
];

/// A folder's readable entries, sorted by name (none when it cannot be read).
fn sorted_entries(folder: &Path) -> Vec<DirEntry> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(DirEntry::file_name);
    entries
}

/// What a walk found in one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// A folder to walk into.
    Folder,
    /// Not a folder; `regular` when it is a regular file (not a link or a device).
    File {
        /// Whether it is a regular file.
        regular: bool,
    },
}

/// What `entry` is to a walk: `None` for a hidden, build or dependency folder, or an entry
/// whose type cannot be read.
fn look(entry: &DirEntry) -> Option<Found> {
    let kind = entry.file_type().ok()?;
    if !kind.is_dir() {
        return Some(Found::File {
            regular: kind.is_file(),
        });
    }
    let name = entry.file_name();
    let name = name.to_string_lossy();
    (!name.starts_with('.') && !SKIPPED.contains(&name.as_ref())).then_some(Found::Folder)
}

/// One file for each (folder, extension) pair under `root`, looking at no more than `limit`
/// folder entries; hidden folders and build or dependency folders are skipped.
pub fn sample_files(root: &Path, limit: usize) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let mut samples = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    let mut looked = 0;
    while let Some(folder) = folders.pop() {
        for entry in sorted_entries(&folder) {
            looked += 1;
            if looked > limit {
                return samples;
            }
            match look(&entry) {
                Some(Found::Folder) => folders.push(entry.path()),
                Some(Found::File { .. }) => {
                    if let Some(extension) = entry.path().extension() {
                        if seen.insert((folder.clone(), extension.to_ascii_lowercase())) {
                            samples.push(entry.path());
                        }
                    }
                }
                None => {}
            }
        }
    }
    samples
}

/// The files under `dir` that `keep` accepts, at most `limit` of them: a folder's files by
/// name, then its subfolders' the same way, depth first; hidden folders and build or
/// dependency folders are skipped. The flag says whether more were left out.
pub fn files_under(dir: &Path, limit: usize, keep: &dyn Fn(&Path) -> bool) -> (Vec<PathBuf>, bool) {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        // Reversed, so that popping the folders visits them in name order.
        let mut here = Vec::new();
        for entry in sorted_entries(&folder).into_iter().rev() {
            match look(&entry) {
                Some(Found::Folder) => folders.push(entry.path()),
                Some(Found::File { regular: true }) if keep(&entry.path()) => {
                    here.push(entry.path());
                }
                _ => {}
            }
        }
        here.reverse();
        for file in here {
            if files.len() == limit {
                return (files, true);
            }
            files.push(file);
        }
    }
    (files, false)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn touch(root: &Path, relative: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn one_file_per_folder_and_extension_skipping_dependency_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "a.py",
            "b.py",
            "c.ts",
            "sub/d.py",
            "node_modules/x/e.js",
            ".git/f.sample",
            "target/g.rs",
        ] {
            touch(root, file);
        }
        let mut found: Vec<String> = sample_files(root, 100)
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        found.sort();
        assert_eq!(found, vec!["a.py", "c.ts", "sub/d.py"]);
    }

    #[test]
    fn files_under_keeps_what_is_asked_for_skipping_hidden_and_build_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "b.py",
            "a.py",
            "notes.txt",
            "pkg/c.py",
            "pkg/deep/d.py",
            ".venv/e.py",
            "node_modules/f.py",
        ] {
            touch(root, file);
        }
        let is_python = |path: &Path| path.extension().is_some_and(|e| e == "py");
        let relative = |files: Vec<PathBuf>| -> Vec<String> {
            files
                .iter()
                .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
                .collect()
        };
        let (all, more) = files_under(root, 10, &is_python);
        assert_eq!(relative(all), ["a.py", "b.py", "pkg/c.py", "pkg/deep/d.py"]);
        assert!(!more);
        let (first, more) = files_under(root, 3, &is_python);
        assert_eq!(relative(first), ["a.py", "b.py", "pkg/c.py"]);
        assert!(more, "the bound was hit");
        let (exact, more) = files_under(root, 4, &is_python);
        assert_eq!(exact.len(), 4);
        assert!(!more, "exactly the bound is not more");
    }

    #[test]
    fn the_limit_bounds_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..10 {
            touch(dir.path(), &format!("f{i}/x.py"));
        }
        assert!(sample_files(dir.path(), 5).len() < 5);
    }
}
