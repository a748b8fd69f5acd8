//! File watchers servers register (`workspace/didChangeWatchedFiles`): LSP glob patterns, string
//! or relative to a base folder, and the kinds of change each wants.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use lsp_types::{FileChangeType, FileSystemWatcher, GlobPattern, OneOf, WatchKind};

use crate::paths;

/// Folders not watched unless a pattern names them: version control, build output, packages.
pub const SKIPPED_FOLDERS: &[&str] = &[".git", "target", "node_modules"];

/// One compiled watcher: a glob (with `*` inside one path segment, `**` across, braces) over
/// absolute paths or paths relative to a base folder, and the changes it wants.
#[derive(Debug, Clone)]
pub struct WatchPattern {
    base: Option<PathBuf>,
    glob: String,
    matcher: GlobMatcher,
    kinds: WatchKind,
}

/// Why a watcher could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// The glob does not parse.
    #[error("bad glob `{glob}`: {reason}")]
    BadGlob {
        /// The glob.
        glob: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The base of a relative pattern is not a file URI.
    #[error("the base `{0}` of a relative pattern is not a file URI")]
    BadBase(String),
}

impl WatchPattern {
    /// Compiles a server's watcher (default kinds: create, change and delete).
    pub fn new(watcher: &FileSystemWatcher) -> Result<Self, WatchError> {
        let (base, glob) = match &watcher.glob_pattern {
            GlobPattern::String(glob) => (None, glob.clone()),
            GlobPattern::Relative(relative) => {
                let uri = match &relative.base_uri {
                    OneOf::Left(folder) => folder.uri.as_str(),
                    OneOf::Right(uri) => uri.as_str(),
                };
                let base =
                    paths::uri_to_path(uri).ok_or_else(|| WatchError::BadBase(uri.to_string()))?;
                (Some(PathBuf::from(base)), relative.pattern.clone())
            }
        };
        let matcher = GlobBuilder::new(&glob)
            .literal_separator(true)
            .build()
            .map_err(|err| WatchError::BadGlob {
                glob: glob.clone(),
                reason: err.kind().to_string(),
            })?
            .compile_matcher();
        let kinds = watcher
            .kind
            .unwrap_or(WatchKind::Create | WatchKind::Change | WatchKind::Delete);
        Ok(Self {
            base,
            glob,
            matcher,
            kinds,
        })
    }

    /// Whether this change of this file is one the server asked about.
    pub fn matches(&self, path: &Path, change: FileChangeType) -> bool {
        let wanted = match change {
            FileChangeType::CREATED => WatchKind::Create,
            FileChangeType::CHANGED => WatchKind::Change,
            _ => WatchKind::Delete,
        };
        if !self.kinds.contains(wanted) {
            return false;
        }
        match &self.base {
            Some(base) => path
                .strip_prefix(base)
                .is_ok_and(|relative| self.matcher.is_match(relative)),
            None => self.matcher.is_match(path),
        }
    }

    /// Whether the pattern names one of the skipped folders, so that it must be watched too.
    pub fn names(&self, folder: &str) -> bool {
        self.glob
            .split(['/', '{', '}', ','])
            .any(|part| part == folder)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use lsp_types::{RelativePattern, Url};

    fn string(glob: &str, kind: Option<WatchKind>) -> WatchPattern {
        WatchPattern::new(&FileSystemWatcher {
            glob_pattern: GlobPattern::String(glob.to_string()),
            kind,
        })
        .unwrap()
    }

    fn relative(base: &str, glob: &str) -> WatchPattern {
        let base_uri = OneOf::Right(Url::parse(base).unwrap());
        let pattern = RelativePattern {
            base_uri,
            pattern: glob.to_string(),
        };
        WatchPattern::new(&FileSystemWatcher {
            glob_pattern: GlobPattern::Relative(pattern),
            kind: None,
        })
        .unwrap()
    }

    #[test]
    fn double_star_crosses_folders_and_single_star_does_not() {
        let any_py = string("**/*.py", None);
        assert!(any_py.matches(Path::new("/ws/src/deep/a.py"), FileChangeType::CREATED));
        assert!(!any_py.matches(Path::new("/ws/src/a.pyi"), FileChangeType::CREATED));
        let top = relative("file:///ws", "*.py");
        assert!(top.matches(Path::new("/ws/a.py"), FileChangeType::CHANGED));
        assert!(
            !top.matches(Path::new("/ws/src/a.py"), FileChangeType::CHANGED),
            "`*` stays in one segment"
        );
    }

    #[test]
    fn braces_and_relative_bases_match() {
        let pattern = relative("file:///ws/app", "gen/*.{ts,js}");
        assert!(pattern.matches(Path::new("/ws/app/gen/a.ts"), FileChangeType::DELETED));
        assert!(pattern.matches(Path::new("/ws/app/gen/b.js"), FileChangeType::DELETED));
        assert!(!pattern.matches(Path::new("/ws/other/gen/a.ts"), FileChangeType::DELETED));
        assert!(!pattern.matches(Path::new("/ws/app/gen/a.rs"), FileChangeType::DELETED));
    }

    #[test]
    fn watch_kinds_limit_the_changes() {
        let created_only = string("**/*.fake", Some(WatchKind::Create));
        assert!(created_only.matches(Path::new("/ws/a.fake"), FileChangeType::CREATED));
        assert!(!created_only.matches(Path::new("/ws/a.fake"), FileChangeType::CHANGED));
        assert!(!created_only.matches(Path::new("/ws/a.fake"), FileChangeType::DELETED));
    }

    #[test]
    fn patterns_that_name_skipped_folders_say_so() {
        assert!(string("**/node_modules/**/*.d.ts", None).names("node_modules"));
        assert!(string("**/{target,out}/*.json", None).names("target"));
        assert!(!string("**/*.rs", None).names("target"));
    }

    #[test]
    fn bad_globs_are_errors() {
        let watcher = FileSystemWatcher {
            glob_pattern: GlobPattern::String("a/[b".to_string()),
            kind: None,
        };
        assert!(matches!(
            WatchPattern::new(&watcher),
            Err(WatchError::BadGlob { .. })
        ));
    }
}
