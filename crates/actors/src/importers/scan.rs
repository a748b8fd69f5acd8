//! What a source file imports, read from its text by its language's import syntax, and whether
//! an import names a given file. Pure: the index ([`super::Importers`]) does the file system.
//!
//! Only imports that name files of the same workspace are read: relative specifiers in
//! TypeScript and JavaScript (`./x`, `../y/z.js`), and modules in Python (absolute, found by
//! their package chain, and relative). A bare package name (`react`), a path alias from
//! `tsconfig.json` and Python's `sys.path` tricks are not followed: a file reached only that way
//! is not searched (its server may still report it, see `Squiggle::feedback`).

use std::path::{Component, Path, PathBuf};

/// The languages whose imports are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    /// TypeScript and JavaScript, in every module flavour.
    Script,
    /// Python (sources and stubs).
    Python,
}

/// The extensions of script files, longest first where one ends another.
const SCRIPT_EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];

/// The language of a file, by its extension.
pub(crate) fn lang_of(path: &Path) -> Option<Lang> {
    let extension = path.extension()?.to_str()?;
    if SCRIPT_EXTENSIONS.contains(&extension) {
        Some(Lang::Script)
    } else if matches!(extension, "py" | "pyi") {
        Some(Lang::Python)
    } else {
        None
    }
}

/// One import read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Import {
    /// A script specifier that starts with `./` or `../`, as written, with the names the
    /// import takes from it where it lists them (`import { a, b as c } from`, `export { d }
    /// from`: `a`, `b`, `d`); none where it takes the whole module or its default (`* as m`,
    /// `export *`, a default import, `require`, `import()`, an import for its effects).
    Relative {
        /// The specifier.
        spec: String,
        /// The names listed.
        names: Option<Vec<String>>,
    },
    /// A Python module: `level` leading dots (0: absolute) and the dotted name after them
    /// (empty for `from . import x`), with the names imported from it (`from m import a, b`:
    /// each may be a submodule).
    Module {
        /// The number of leading dots.
        level: usize,
        /// The dotted name.
        name: String,
        /// The names imported from it.
        names: Vec<String>,
    },
}

/// The imports of a file's text.
pub(crate) fn imports(lang: Lang, text: &str) -> Vec<Import> {
    match lang {
        Lang::Script => script_imports(text),
        Lang::Python => python_imports(text),
    }
}

/// A script's relative specifiers after `from`, `import`, `import(` and `require(`, with the
/// names listed between the `import` or `export` before a `from` and it.
fn script_imports(text: &str) -> Vec<Import> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    // Where the last `import` or `export` ended: a `from`'s clause starts there.
    let mut clause_from = None;
    let mut i = 0;
    while i < bytes.len() {
        let word_start = i == 0 || !is_word(bytes[i - 1]);
        if !word_start || !bytes[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let end = (i..bytes.len())
            .find(|&j| !is_word(bytes[j]))
            .unwrap_or(bytes.len());
        let word = &text[i..end];
        let clause = (word == "from")
            .then(|| clause_from.map(|from| &text[from..i]))
            .flatten();
        if matches!(word, "import" | "export") {
            clause_from = Some(end);
        }
        if matches!(word, "from" | "import" | "require") {
            let mut j = end;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if word != "from" && j < bytes.len() && bytes[j] == b'(' {
                j += 1;
                while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
            }
            if let Some(spec) = quoted_at(text, j) {
                if spec.starts_with("./") || spec.starts_with("../") {
                    found.push(Import::Relative {
                        spec: spec.to_owned(),
                        names: clause.and_then(listed_names),
                    });
                }
            }
        }
        i = end;
    }
    found
}

/// The names an import or export clause lists (`{ a, type b, c as d }`: `a`, `b`, `c`), if it
/// takes nothing else (no `*`, no default import, no `default as`).
fn listed_names(clause: &str) -> Option<Vec<String>> {
    let clause = without_comments(clause);
    let clause = clause.trim();
    let clause = clause.strip_prefix("type ").unwrap_or(clause);
    let (open, close) = (clause.find('{')?, clause.rfind('}')?);
    let outside = format!("{}{}", &clause[..open], clause.get(close + 1..)?);
    if clause.contains('*') || outside.contains(|c: char| c != ',' && !c.is_whitespace()) {
        return None;
    }
    let names: Vec<String> = (clause[open + 1..close].split(','))
        .filter_map(|part| {
            let part = part.trim();
            let part = part.strip_prefix("type ").unwrap_or(part);
            part.split_whitespace().next().map(str::to_owned)
        })
        .collect();
    // `{ default as Foo }` takes the default export, whatever its name.
    (!names.iter().any(|name| name == "default")).then_some(names)
}

/// A script's text without its `//` and `/* */` comments.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('/') {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        rest = match (after.strip_prefix("//"), after.strip_prefix("/*")) {
            (Some(line), _) => line.find('\n').map_or("", |end| &line[end..]),
            (_, Some(block)) => block.find("*/").map_or("", |end| &block[end + 2..]),
            _ => {
                out.push('/');
                &after[1..]
            }
        };
    }
    out.push_str(rest);
    out
}

/// Whether a byte continues an identifier.
fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$'
}

/// The string literal that starts at `at` (single or double quotes), if one does.
fn quoted_at(text: &str, at: usize) -> Option<&str> {
    let quote = *text.as_bytes().get(at)?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let rest = &text[at + 1..];
    let close = rest.find(|c: char| c as u32 == u32::from(quote) || c == '\n')?;
    (rest.as_bytes()[close] == quote).then(|| &rest[..close])
}

/// A Python file's `import a.b` and `from x import y` statements, a parenthesised name list
/// across lines included.
fn python_imports(text: &str) -> Vec<Import> {
    let mut found = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = strip_comment(line).trim();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                if let Some(name) = part.split_whitespace().next() {
                    found.push(Import::Module {
                        level: 0,
                        name: name.to_owned(),
                        names: Vec::new(),
                    });
                }
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let Some((module, names)) = rest.split_once(" import") else {
                continue;
            };
            let module = module.trim();
            let level = module.chars().take_while(|c| *c == '.').count();
            let mut names = names.trim().to_owned();
            if names.starts_with('(') {
                while !names.contains(')') {
                    match lines.next() {
                        Some(more) => {
                            names.push(' ');
                            names.push_str(strip_comment(more));
                        }
                        None => break,
                    }
                }
            } else {
                while names.ends_with('\\') {
                    names.pop();
                    match lines.next() {
                        Some(more) => names.push_str(strip_comment(more)),
                        None => break,
                    }
                }
            }
            let names = names
                .trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
                .split(',')
                .filter_map(|part| part.split_whitespace().next())
                .filter(|name| *name != "*" && !name.contains(')'))
                .map(str::to_owned)
                .collect();
            found.push(Import::Module {
                level,
                name: module[level..].to_owned(),
                names,
            });
        }
    }
    found
}

/// A line without its `#` comment (a `#` inside a string is rare on an import line).
fn strip_comment(line: &str) -> &str {
    line.split_once('#').map_or(line, |(code, _)| code)
}

/// A path with `.` and `..` components resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What a script specifier resolves to, without its extension: `./x.js`, `./x` and `./x.ts`
/// from the same folder all name `<folder>/x`.
pub(crate) fn script_key(importer: &Path, spec: &str) -> PathBuf {
    let base = normalize(&importer.parent().unwrap_or(Path::new("")).join(spec));
    strip_script_extension(&base)
}

/// A script path without its extension (and a declaration file's `.d`).
fn strip_script_extension(path: &Path) -> PathBuf {
    match path.extension().and_then(|e| e.to_str()) {
        Some(extension) if SCRIPT_EXTENSIONS.contains(&extension) => {
            let stem = path.with_extension("");
            match stem.extension().and_then(|e| e.to_str()) {
                Some("d") => stem.with_extension(""),
                _ => stem,
            }
        }
        _ => path.to_path_buf(),
    }
}

/// The keys a script file is imported by (see [`script_key`]): its path without extension,
/// and for an `index` file also its folder.
pub(crate) fn script_keys(target: &Path) -> Vec<PathBuf> {
    let key = strip_script_extension(target);
    let mut keys = Vec::new();
    if key.file_name().is_some_and(|name| name == "index") {
        keys.extend(key.parent().map(Path::to_path_buf));
    }
    keys.push(key);
    keys
}

/// Whether a script import of `importer` names `target`.
#[cfg(test)]
fn script_names(importer: &Path, spec: &str, target: &Path) -> bool {
    script_keys(target).contains(&script_key(importer, spec))
}

/// A Python file's module name, from its package chain: the folders above it that hold an
/// `__init__.py` (`is_package`); `src/click/core.py` is `click.core`, `src/click/__init__.py`
/// is `click`, a script in a folder that is not a package is its stem.
pub(crate) fn module_name(path: &Path, is_package: &dyn Fn(&Path) -> bool) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let mut parts = Vec::new();
    if stem != "__init__" {
        parts.push(stem.to_owned());
    }
    let mut folder = path.parent();
    while let Some(dir) = folder {
        if !is_package(dir) {
            break;
        }
        parts.push(dir.file_name()?.to_str()?.to_owned());
        folder = dir.parent();
    }
    parts.reverse();
    (!parts.is_empty()).then(|| parts.join("."))
}

/// The modules a Python import may load, as absolute dotted names: the module itself and each
/// imported name as a submodule of it. `importer` is the importing file's module name and
/// whether it is a package (`__init__.py`), for relative imports.
pub(crate) fn python_targets(
    importer: (&str, bool),
    level: usize,
    name: &str,
    names: &[String],
) -> Vec<String> {
    let base = if level == 0 {
        name.to_owned()
    } else {
        let (module, is_package) = importer;
        let mut parts: Vec<&str> = module.split('.').collect();
        // A module's own package is its name less the last part; a package's is itself.
        let up = if is_package { level - 1 } else { level };
        if up > parts.len() {
            return Vec::new();
        }
        parts.truncate(parts.len() - up);
        if !name.is_empty() {
            parts.push(name);
        }
        parts.join(".")
    };
    let mut targets = Vec::new();
    if !base.is_empty() {
        targets.push(base.clone());
    }
    for imported in names {
        targets.push(if base.is_empty() {
            imported.clone()
        } else {
            format!("{base}.{imported}")
        });
    }
    targets
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn relative(spec: &str) -> Import {
        Import::Relative {
            spec: spec.into(),
            names: None,
        }
    }

    fn listing(spec: &str, names: &[&str]) -> Import {
        Import::Relative {
            spec: spec.into(),
            names: Some(names.iter().map(|name| name.to_string()).collect()),
        }
    }

    #[test]
    fn script_imports_are_the_relative_specifiers_of_every_import_form() {
        let text = r#"
import { a } from './a'
import * as b from "../lib/b.js";
import './side-effect'
import React from 'react'
export { c } from './c'
export * from './d';
export const e = 1; import f from './f'
const g = require('./g')
const h = await import( './h')
import type { T } from "./types"
import {
  type U,
  V as W, // the V of v
  /* Z */ Z,
} from './v'
import X, { Y } from './x'
export { default as Z } from './z'
"#;
        assert_eq!(
            script_imports(text),
            vec![
                listing("./a", &["a"]),
                relative("../lib/b.js"),
                relative("./side-effect"),
                listing("./c", &["c"]),
                relative("./d"),
                relative("./f"),
                relative("./g"),
                relative("./h"),
                listing("./types", &["T"]),
                listing("./v", &["U", "V", "Z"]),
                relative("./x"),
                relative("./z"),
            ]
        );
    }

    #[test]
    fn a_script_specifier_names_a_file_with_any_extension_or_a_folder_by_its_index() {
        let importer = Path::new("/w/src/app/main.ts");
        let table = [
            ("./util", "/w/src/app/util.ts", true),
            ("./util.js", "/w/src/app/util.ts", true),
            ("./util.js", "/w/src/app/util.tsx", true),
            ("../lib", "/w/src/lib/index.ts", true),
            ("../lib/index.js", "/w/src/lib/index.ts", true),
            ("./types", "/w/src/app/types.d.ts", true),
            ("./util", "/w/src/app/utils.ts", false),
            ("./util", "/w/src/other/util.ts", false),
            ("../lib", "/w/src/lib/main.ts", false),
        ];
        for (spec, target, expected) in table {
            assert_eq!(
                script_names(importer, spec, Path::new(target)),
                expected,
                "{spec} -> {target}"
            );
        }
    }

    fn module(level: usize, name: &str, names: &[&str]) -> Import {
        Import::Module {
            level,
            name: name.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
        }
    }

    #[test]
    fn python_imports_read_both_statements_with_parentheses_and_continuations() {
        let text = "import os, click.core as core\n\
                    from . import utils  # the helpers\n\
                    from .core import (\n    Context,\n    Command as Cmd,\n)\n\
                    from ..types import \\\n    ParamType\n\
                    def f():\n    from click.exceptions import UsageError\n\
                    from x import *\n";
        assert_eq!(
            python_imports(text),
            vec![
                module(0, "os", &[]),
                module(0, "click.core", &[]),
                module(1, "", &["utils"]),
                module(1, "core", &["Context", "Command"]),
                module(2, "types", &["ParamType"]),
                module(0, "click.exceptions", &["UsageError"]),
                module(0, "x", &[]),
            ]
        );
    }

    #[test]
    fn a_python_module_is_named_by_its_package_chain() {
        let packages = |dir: &Path| dir.ends_with("src/click") || dir.ends_with("click/sub");
        let table = [
            ("/w/src/click/core.py", Some("click.core")),
            ("/w/src/click/__init__.py", Some("click")),
            ("/w/src/click/sub/x.pyi", Some("click.sub.x")),
            ("/w/scripts/run.py", Some("run")),
        ];
        for (path, expected) in table {
            assert_eq!(
                module_name(Path::new(path), &packages).as_deref(),
                expected,
                "{path}"
            );
        }
    }

    #[test]
    fn python_targets_resolve_relative_imports_from_modules_and_packages() {
        let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        // (importer and whether it is a package, level, module, names) -> targets
        type Case<'a> = ((&'a str, bool), usize, &'a str, Vec<String>, Vec<&'a str>);
        let table: [Case; 5] = [
            (
                ("a.b", false),
                0,
                "click.core",
                names(&[]),
                vec!["click.core"],
            ),
            (
                ("click.decorators", false),
                1,
                "core",
                names(&["Context"]),
                vec!["click.core", "click.core.Context"],
            ),
            (
                ("click", true),
                1,
                "",
                names(&["core"]),
                vec!["click", "click.core"],
            ),
            (
                ("click.sub.x", false),
                2,
                "core",
                names(&[]),
                vec!["click.core"],
            ),
            (("top", false), 3, "core", names(&[]), vec![]),
        ];
        for (importer, level, name, imported, expected) in table {
            assert_eq!(
                python_targets(importer, level, name, &imported),
                expected,
                "{importer:?} {level} {name}"
            );
        }
    }
}
