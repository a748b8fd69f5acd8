//! The files that import a file, directly or through others: a reverse-import index of the
//! workspace's TypeScript, JavaScript and Python files, kept between calls and brought up to
//! date at each one by the files' size and modification time (a file is read again only when
//! those changed, and who-imports-what is made again only then). What each language's imports
//! name is in `importers/scan`; which importers an edit most likely reached, in
//! `importers/changed`.

mod changed;
mod scan;

pub(crate) use changed::{changed_names, names_in, quoted_names};

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

/// What a file's imports of some files take of some names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Takes {
    /// Its imports of them list what they take: these of the names.
    Listed(HashSet<String>),
    /// One takes a whole module or its default (it can use any name: its text says), or the
    /// file is not an indexed script (a Python import may take a module by a listed name).
    Whole,
    /// None of its imports takes one of them: it imports them through others.
    Through,
}

/// The reverse-import index of one workspace.
#[derive(Debug, Default)]
pub(crate) struct Importers {
    files: HashMap<PathBuf, Indexed>,
    /// Who imports what, made again when a file changed.
    reverse: Option<Reverse>,
}

/// The importers of each import target.
#[derive(Debug, Default)]
struct Reverse {
    /// A script import's key (see `scan::script_key`) -> the files that import it.
    scripts: HashMap<PathBuf, BTreeSet<PathBuf>>,
    /// A Python module's dotted name -> the files that import it.
    modules: HashMap<String, BTreeSet<PathBuf>>,
    /// Each Python file's module name.
    module_of: HashMap<PathBuf, String>,
}

impl Importers {
    /// The workspace files under `root` that import one of `targets`, directly or through
    /// files that do (types flow on: a broken interface breaks what extends it, and what uses
    /// that), the nearest first (breadth first, each level the smallest file first: the
    /// quickest for a server to check), at most `limit`, none of `skip` (whose importers are
    /// still followed) nor the targets. Blocking: it walks the workspace.
    pub(crate) fn of(
        &mut self,
        root: &Path,
        targets: &[PathBuf],
        limit: usize,
        skip: &HashSet<PathBuf>,
    ) -> Vec<PathBuf> {
        if limit > 0 && targets.iter().any(|target| scan::lang_of(target).is_some()) {
            self.refresh(root);
        }
        self.of_indexed(targets, limit, skip)
    }

    /// [`Importers::of`], over the index as it was last brought up to date (no walk of the
    /// workspace: for a search's later rounds, which the files it looks at cannot change).
    pub(crate) fn of_indexed(
        &self,
        targets: &[PathBuf],
        limit: usize,
        skip: &HashSet<PathBuf>,
    ) -> Vec<PathBuf> {
        let level: Vec<PathBuf> = (targets.iter())
            .filter(|target| scan::lang_of(target).is_some())
            .cloned()
            .collect();
        if limit == 0 || level.is_empty() {
            return Vec::new();
        }
        let Some(reverse) = &self.reverse else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let mut seen: HashSet<PathBuf> = targets.iter().cloned().collect();
        let mut level = level;
        while !level.is_empty() {
            let mut next: Vec<PathBuf> = (level.iter())
                .flat_map(|file| reverse.direct(file))
                .filter(|importer| seen.insert(importer.clone()))
                .collect();
            // Stable: files of one size stay in path order.
            next.sort_by_key(|file| self.files.get(file).map_or(u64::MAX, |f| f.len));
            for importer in next.iter().filter(|file| !skip.contains(*file)) {
                found.push(importer.clone());
                if found.len() == limit {
                    return found;
                }
            }
            level = next;
        }
        found
    }

    /// Which of `names` `file`'s imports of `targets` take, as far as they say (see
    /// [`Takes`]).
    pub(crate) fn taken(&self, file: &Path, targets: &[PathBuf], names: &HashSet<String>) -> Takes {
        let Some(indexed) = self.files.get(file).filter(|f| f.lang == Lang::Script) else {
            return Takes::Whole;
        };
        let keys: Vec<PathBuf> = targets.iter().flat_map(|t| scan::script_keys(t)).collect();
        let of_targets = (indexed.imports.iter()).filter_map(|import| match import {
            Import::Relative { spec, names } => keys
                .contains(&scan::script_key(file, spec))
                .then_some(names),
            Import::Module { .. } => None,
        });
        let mut taken = Takes::Through;
        for listed in of_targets {
            let Some(listed) = listed else {
                return Takes::Whole;
            };
            let listed = listed.iter().filter(|name| names.contains(*name)).cloned();
            match &mut taken {
                Takes::Listed(taken) => taken.extend(listed),
                _ => taken = Takes::Listed(listed.collect()),
            }
        }
        taken
    }

    /// Brings the index up to date with the files under `root`.
    fn refresh(&mut self, root: &Path) {
        let (paths, _) =
            squiggle_config::files_under(root, MAX_FILES, &|path| scan::lang_of(path).is_some());
        let present: HashSet<&PathBuf> = paths.iter().collect();
        let known = self.files.len();
        self.files.retain(|path, _| present.contains(path));
        let mut changed = self.files.len() != known;
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
            changed = true;
        }
        if changed || self.reverse.is_none() {
            self.reverse = Some(Reverse::of(&self.files));
        }
    }
}

impl Reverse {
    /// Who imports what, from every file's imports.
    fn of(files: &HashMap<PathBuf, Indexed>) -> Self {
        let is_package = |dir: &Path| {
            files.contains_key(&dir.join("__init__.py"))
                || files.contains_key(&dir.join("__init__.pyi"))
        };
        let mut reverse = Reverse::default();
        for (path, indexed) in files {
            match indexed.lang {
                Lang::Script => {
                    for import in &indexed.imports {
                        if let Import::Relative { spec, .. } = import {
                            let key = scan::script_key(path, spec);
                            reverse.scripts.entry(key).or_default().insert(path.clone());
                        }
                    }
                }
                Lang::Python => {
                    let Some(module) = scan::module_name(path, &is_package) else {
                        continue;
                    };
                    let package = path.file_stem().is_some_and(|stem| stem == "__init__");
                    for import in &indexed.imports {
                        if let Import::Module { level, name, names } = import {
                            for target in
                                scan::python_targets((&module, package), *level, name, names)
                            {
                                reverse
                                    .modules
                                    .entry(target)
                                    .or_default()
                                    .insert(path.clone());
                            }
                        }
                    }
                    reverse.module_of.insert(path.clone(), module);
                }
            }
        }
        reverse
    }

    /// The files that import `target` directly, in path order.
    fn direct(&self, target: &Path) -> Vec<PathBuf> {
        let found: BTreeSet<&PathBuf> = match scan::lang_of(target) {
            Some(Lang::Script) => (scan::script_keys(target).iter())
                .filter_map(|key| self.scripts.get(key))
                .flatten()
                .collect(),
            Some(Lang::Python) => self
                .module_of
                .get(target)
                .and_then(|module| self.modules.get(module))
                .into_iter()
                .flatten()
                .collect(),
            None => BTreeSet::new(),
        };
        found
            .into_iter()
            .filter(|path| *path != target)
            .cloned()
            .collect()
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
        found
            .iter()
            .map(|path| path.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn the_direct_importers_come_first_the_smallest_first_then_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "src/util.ts", "export const x = 1;\n");
        write(
            root,
            "src/a.ts",
            "import { x } from './util';\nconst long = 1;\n",
        );
        write(root, "src/b.ts", "import { x } from './util';\n");
        write(root, "src/index.ts", "export * from './util';\n");
        write(root, "app/main.ts", "import { x } from '../src';\n");
        write(root, "app/other.ts", "import { y } from './y';\n");
        write(
            root,
            "node_modules/p/i.ts",
            "import { x } from '../../src/util';\n",
        );
        let mut importers = Importers::default();
        let none = HashSet::new();
        let found = importers.of(root, &[root.join("src/util.ts")], 10, &none);
        assert_eq!(
            names(root, &found),
            ["src/index.ts", "src/b.ts", "src/a.ts", "app/main.ts"]
        );
        let first = importers.of(root, &[root.join("src/util.ts")], 1, &none);
        assert_eq!(names(root, &first), ["src/index.ts"]);
        // A file skipped is not named, but what imports it still is.
        let skip = HashSet::from([root.join("src/index.ts")]);
        let found = importers.of(root, &[root.join("src/util.ts")], 10, &skip);
        assert_eq!(names(root, &found), ["src/b.ts", "src/a.ts", "app/main.ts"]);
    }

    #[test]
    fn an_importer_takes_the_names_its_imports_list_any_through_a_whole_module_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.ts", "export const x = 1;\nexport const z = 2;\n");
        write(root, "b.ts", "import { y, x as w } from './a';\n");
        write(
            root,
            "c.ts",
            "import { z } from './a';\nimport * as m from './m';\n",
        );
        write(root, "d.ts", "import * as a from './a';\n");
        write(root, "e.ts", "import { c } from './c';\n");
        write(root, "f.py", "from a import x\n");
        let mut importers = Importers::default();
        let targets = [root.join("a.ts")];
        importers.of(root, &targets, 10, &HashSet::new());
        let names: HashSet<String> = ["x".to_string()].into();
        let listed = |names: &[&str]| Takes::Listed(names.iter().map(|n| n.to_string()).collect());
        let table = [
            ("b.ts", listed(&["x"])),
            ("c.ts", listed(&[])),
            ("d.ts", Takes::Whole),
            ("e.ts", Takes::Through),
            ("f.py", Takes::Whole),
            ("missing.ts", Takes::Whole),
        ];
        for (file, takes) in table {
            let found = importers.taken(&root.join(file), &targets, &names);
            assert_eq!(found, takes, "{file}");
        }
    }

    #[test]
    fn the_importers_of_several_files_are_one_search_without_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.ts", "export const a = 1;\n");
        write(root, "b.ts", "import { a } from './a';\n");
        write(
            root,
            "c.ts",
            "import { a } from './a';\nimport { b } from './b';\n",
        );
        write(root, "d.ts", "import { c } from './c';\n");
        let mut importers = Importers::default();
        let targets = [root.join("b.ts"), root.join("c.ts")];
        let found = importers.of(root, &targets, 10, &HashSet::new());
        // c.ts imports b.ts, but is one of the targets.
        assert_eq!(names(root, &found), ["d.ts"]);
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
        let found = importers.of(root, &[root.join("src/click/core.py")], 10, &HashSet::new());
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
        assert!(importers
            .of(root, &[root.join("m.py")], 10, &HashSet::new())
            .is_empty());
        // Another size: read again whatever the modification time says.
        write(root, "a.py", "import m  # now\n");
        assert_eq!(
            names(
                root,
                &importers.of(root, &[root.join("m.py")], 10, &HashSet::new())
            ),
            ["a.py"]
        );
        std::fs::remove_file(root.join("a.py")).unwrap();
        assert!(importers
            .of(root, &[root.join("m.py")], 10, &HashSet::new())
            .is_empty());
        assert_eq!(importers.files.len(), 1);
    }
}
