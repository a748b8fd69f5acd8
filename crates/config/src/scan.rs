//! Walks over a workspace's own files: a quick look at which kinds it holds (to start its
//! servers early), and the files under a folder (to check them all).

use std::collections::HashSet;
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

/// One file for each (folder, extension) pair under `root`, looking at no more than `limit`
/// folder entries; hidden folders and build or dependency folders are skipped.
pub fn sample_files(root: &Path, limit: usize) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let mut samples = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    let mut looked = 0;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            looked += 1;
            if looked > limit {
                return samples;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') && !SKIPPED.contains(&name.as_ref()) {
                    folders.push(entry.path());
                }
            } else if let Some(extension) = entry.path().extension() {
                if seen.insert((folder.clone(), extension.to_ascii_lowercase())) {
                    samples.push(entry.path());
                }
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
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        // Reversed, so that popping the folders visits them in name order.
        entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
        let mut here = Vec::new();
        for entry in entries {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') && !SKIPPED.contains(&name.as_ref()) {
                    folders.push(entry.path());
                }
            } else if kind.is_file() && keep(&entry.path()) {
                here.push(entry.path());
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
