//! The files that import a file: a reverse-import index of the workspace's TypeScript,
//! JavaScript and Python files, kept between calls and brought up to date at each one by the
//! files' size and modification time (a file is read again only when those changed). What
//! each language's imports name is in `importers/scan`.

mod scan;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use scan::{Import, Lang};

/// At most this many files are indexed; a larger workspace is searched in its first ones
/// (folders in name order).
const MAX_FILES: usize = 20_000;

/// Files larger than this are not read for imports (generated code, bundles).
const MAX_BYTES: u64 = 1024 * 1024;

/// One indexed file: what it imports, and the stat it was read at.
#[derive(Debug)]
struct Indexed {
    len: u64,
    modified: Option<SystemTime>,
    lang: Lang,
    imports: Vec<Import>,
}

/// The reverse-import index of one workspace.
#[derive(Debug, Default)]
pub(crate) struct Importers {
    files: HashMap<PathBuf, Indexed>,
}

impl Importers {
    /// The workspace files under `root` that import `target`, at most `limit`: the direct
    /// importers (in path order), then the importers of those among them that pass its names
    /// on (a script's `export ... from`, a Python package's `__init__`). Blocking: it walks the
    /// workspace.
    pub(crate) fn of(&mut self, root: &Path, target: &Path, limit: usize) -> Vec<PathBuf> {
        if limit == 0 || scan::lang_of(target).is_none() {
            return Vec::new();
        }
        self.refresh(root);
        let direct = self.direct(target);
        let mut found: Vec<PathBuf> = direct.iter().map(|(path, _)| path.clone()).collect();
        let mut seen: HashSet<PathBuf> = found.iter().cloned().collect();
        seen.insert(target.to_path_buf());
        for (passer, _) in direct.iter().filter(|(_, passes_on)| *passes_on) {
            for (path, _) in self.direct(passer) {
                if seen.insert(path.clone()) {
                    found.push(path);
                }
            }
        }
        found.truncate(limit);
        found
    }

    /// Brings the index up to date with the files under `root`.
    fn refresh(&mut self, root: &Path) {
        let (paths, _) =
            squiggle_config::files_under(root, MAX_FILES, &|path| scan::lang_of(path).is_some());
        let present: HashSet<&PathBuf> = paths.iter().collect();
        self.files.retain(|path, _| present.contains(path));
        for path in &paths {
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            let modified = meta.modified().ok();
            let fresh = self
                .files
                .get(path)
                .is_some_and(|known| known.len == meta.len() && known.modified == modified);
            if fresh {
                continue;
            }
            let Some(lang) = scan::lang_of(path) else {
                continue;
            };
            let imports = match meta.len() <= MAX_BYTES {
                true => std::fs::read(path)
                    .map(|bytes| scan::imports(lang, &String::from_utf8_lossy(&bytes)))
                    .unwrap_or_default(),
                false => Vec::new(),
            };
            let indexed = Indexed {
                len: meta.len(),
                modified,
                lang,
                imports,
            };
            self.files.insert(path.clone(), indexed);
        }
    }

    /// The files that import `target` directly, in path order, each with whether it passes
    /// the imported names on.
    fn direct(&self, target: &Path) -> Vec<(PathBuf, bool)> {
        let Some(lang) = scan::lang_of(target) else {
            return Vec::new();
        };
        let mut found = BTreeSet::new();
        match lang {
            Lang::Script => {
                for (path, indexed) in &self.files {
                    if indexed.lang != Lang::Script || path == target {
                        continue;
                    }
                    let mut names = false;
                    let mut passes_on = false;
                    for import in &indexed.imports {
                        if let Import::Relative { spec, reexport } = import {
                            if scan::script_names(path, spec, target) {
                                names = true;
                                passes_on |= *reexport;
                            }
                        }
                    }
                    if names {
                        found.insert((path.clone(), passes_on));
                    }
                }
            }
            Lang::Python => {
                let is_package = |dir: &Path| {
                    self.files.contains_key(&dir.join("__init__.py"))
                        || self.files.contains_key(&dir.join("__init__.pyi"))
                };
                let Some(wanted) = scan::module_name(target, &is_package) else {
                    return Vec::new();
                };
                for (path, indexed) in &self.files {
                    if indexed.lang != Lang::Python || path == target {
                        continue;
                    }
                    let Some(module) = scan::module_name(path, &is_package) else {
                        continue;
                    };
                    let package = path.file_stem().is_some_and(|stem| stem == "__init__");
                    let names = indexed.imports.iter().any(|import| match import {
                        Import::Module { level, name, names } => {
                            scan::python_targets((&module, package), *level, name, names)
                                .contains(&wanted)
                        }
                        Import::Relative { .. } => false,
                    });
                    if names {
                        found.insert((path.clone(), package));
                    }
                }
            }
        }
        found.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn names(root: &Path, found: &[PathBuf]) -> Vec<String> {
        (found.iter())
            .map(|path| path.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn script_importers_come_first_then_those_of_a_file_that_re_exports() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "src/util.ts", "export const x = 1;\n");
        write(root, "src/a.ts", "import { x } from './util';\n");
        write(root, "src/index.ts", "export * from './util';\n");
        write(root, "app/main.ts", "import { x } from '../src';\n");
        write(root, "app/other.ts", "import { y } from './y';\n");
        write(
            root,
            "node_modules/p/i.ts",
            "import { x } from '../../src/util';\n",
        );
        let mut importers = Importers::default();
        let found = importers.of(root, &root.join("src/util.ts"), 10);
        assert_eq!(
            names(root, &found),
            ["src/a.ts", "src/index.ts", "app/main.ts"]
        );
        assert_eq!(importers.of(root, &root.join("src/util.ts"), 1).len(), 1);
    }

    #[test]
    fn python_importers_by_absolute_and_relative_imports_and_through_the_package() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "src/click/__init__.py", "from .core import Context\n");
        write(root, "src/click/core.py", "class Context: ...\n");
        write(
            root,
            "src/click/decorators.py",
            "from .core import Context\n",
        );
        write(root, "src/click/types.py", "import os\n");
        write(root, "tests/test_x.py", "import click\n");
        write(root, "tests/test_y.py", "from click.core import Context\n");
        let mut importers = Importers::default();
        let found = importers.of(root, &root.join("src/click/core.py"), 10);
        assert_eq!(
            names(root, &found),
            [
                "src/click/__init__.py",
                "src/click/decorators.py",
                "tests/test_y.py",
                "tests/test_x.py",
            ]
        );
    }

    #[test]
    fn a_changed_file_is_read_again_and_a_deleted_one_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "m.py", "X = 1\n");
        write(root, "a.py", "import os\n");
        let mut importers = Importers::default();
        assert!(importers.of(root, &root.join("m.py"), 10).is_empty());
        // Another size: read again whatever the modification time says.
        write(root, "a.py", "import m  # now\n");
        assert_eq!(
            names(root, &importers.of(root, &root.join("m.py"), 10)),
            ["a.py"]
        );
        std::fs::remove_file(root.join("a.py")).unwrap();
        assert!(importers.of(root, &root.join("m.py"), 10).is_empty());
        assert_eq!(importers.files.len(), 1);
    }
}
