//! Which importers an edit most likely reached: the names on the lines it changed (a symbol
//! made private, a parameter added, a type changed), and whether an importer's text names
//! one of them. An importer that does not name any can still break (through a re-export, an
//! inferred type), so these come first, not alone.

use std::collections::HashSet;
use std::time::Duration;

use squiggle_protocol::navigation::{changed_lines, ChangedLine};

/// How long the line diff of an edit may take (`changed_lines`): past it, the diff is still
/// right but may be longer (a whole file rewritten gives more names, no fewer).
const DIFF_TIME: Duration = Duration::from_millis(50);

/// Words on changed lines that name nothing in particular (keywords and common built-ins of
/// TypeScript, JavaScript and Python): every importer has them.
const COMMON: &[&str] = &[
    "and",
    "any",
    "as",
    "assert",
    "async",
    "await",
    "bigint",
    "bool",
    "boolean",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "def",
    "default",
    "del",
    "dict",
    "do",
    "elif",
    "else",
    "enum",
    "except",
    "export",
    "extends",
    "false",
    "False",
    "finally",
    "float",
    "for",
    "from",
    "function",
    "global",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "int",
    "interface",
    "is",
    "keyof",
    "lambda",
    "let",
    "list",
    "never",
    "new",
    "None",
    "nonlocal",
    "not",
    "null",
    "number",
    "object",
    "of",
    "or",
    "pass",
    "private",
    "protected",
    "public",
    "raise",
    "readonly",
    "return",
    "self",
    "static",
    "str",
    "string",
    "super",
    "switch",
    "symbol",
    "this",
    "throw",
    "true",
    "True",
    "try",
    "tuple",
    "type",
    "typeof",
    "undefined",
    "unknown",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// The names an edit from `before` to `after` changed, but the common ones: those on the lines
/// that differ, and those of the top-level declarations that hold them or, in `after`, one of
/// `error_lines` (1-based): a type changed in a function's body changes what it returns, and
/// an import deleted breaks the interface that extends what it imported.
pub(crate) fn changed_names(before: &str, after: &str, error_lines: &[u32]) -> HashSet<String> {
    let changed = changed_lines(before, after, DIFF_TIME);
    let (before_lines, after_lines) = (lines_of(before), lines_of(after));
    let on_lines = changed.iter().flat_map(|line| words(line.text()));
    let holding = (changed.iter())
        .map(|line| match line {
            ChangedLine::Removed(at, _) => declared_at(&before_lines, *at),
            ChangedLine::Added(at, _) => declared_at(&after_lines, *at),
        })
        .chain(
            (error_lines.iter())
                .map(|line| declared_at(&after_lines, (*line as usize).saturating_sub(1))),
        )
        .flatten();
    (on_lines.chain(holding))
        .filter(|word| word.len() > 1 && !COMMON.contains(word))
        .map(str::to_string)
        .collect()
}

/// A text's lines.
fn lines_of(text: &str) -> Vec<&str> {
    text.split('\n').collect()
}

/// The name of the top-level declaration that holds line `at` (0-based) of `lines`: the
/// nearest line at or above it that starts in the first column (but a closing bracket, a
/// comment or a decorator), if it declares one (`export interface Category<F>`, `export const
/// f =`, `def parse(`, `class A:`, `x: int = 1`).
fn declared_at<'a>(lines: &[&'a str], at: usize) -> Option<&'a str> {
    let continues = |line: &str| {
        (line.chars().next()).is_none_or(|c| c.is_whitespace() || "})]*/#@".contains(c))
    };
    let line = (lines.get(..=at)?.iter().rev()).find(|line| !continues(line))?;
    let mut rest = line.trim_end();
    for prefix in ["export ", "default ", "declare ", "abstract ", "async "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest).trim_start();
    }
    let keyword = words(rest).next()?;
    let after_keyword = rest.strip_prefix(keyword)?.trim_start_matches(['*', ' ']);
    let declares = [
        "class",
        "const",
        "def",
        "enum",
        "function",
        "interface",
        "let",
        "namespace",
        "type",
        "var",
    ];
    match declares.contains(&keyword) {
        true => words(after_keyword)
            .next()
            .filter(|name| after_keyword.starts_with(name)),
        // `x = 1`, `x: int = 1` (Python).
        false => {
            let assigned = after_keyword.starts_with(':')
                || (after_keyword.starts_with('=') && !after_keyword.starts_with("=="));
            assigned.then_some(keyword)
        }
    }
}

/// The names a diagnostic's message quotes (`Property 'of' does not exist on type
/// 'Applicative<F>'`: `Applicative`), each quote's first word where it starts with one (a
/// quoted signature names half the project), but the common ones: what an importer broken by
/// an edit now lacks, which breaks the files that take it in turn.
pub(crate) fn quoted_names(message: &str) -> impl Iterator<Item = String> + '_ {
    ['\'', '"', '`'].into_iter().flat_map(move |quote| {
        (message.split(quote).skip(1).step_by(2))
            .filter_map(|quoted| words(quoted).next().filter(|w| quoted.starts_with(w)))
            .filter(|word| word.len() > 1 && !COMMON.contains(word))
            .map(str::to_string)
    })
}

/// The ones of `names` that `text` has as whole words, not as segments of a path: an import
/// of `'./Pointed'` names a module, not its `Pointed` (every importer of the file has it).
pub(crate) fn names_in(text: &str, names: &HashSet<String>) -> HashSet<String> {
    let in_path = |word: &str| {
        let at = word.as_ptr() as usize - text.as_ptr() as usize;
        text[..at].ends_with('/')
    };
    match names.is_empty() {
        true => HashSet::new(),
        false => (words(text))
            .filter(|word| names.contains(*word) && !in_path(word))
            .map(str::to_string)
            .collect(),
    }
}

/// The identifier-like words of a text.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|word| word.chars().next().is_some_and(|c| !c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: HashSet<String>) -> Vec<String> {
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        names
    }

    #[test]
    fn the_names_an_edit_changed() {
        // (edit, before, after, names)
        let table: &[(&str, &str, &str, &[&str])] = &[
            (
                "un-export",
                "import { A } from './a';\nexport interface Shape { x: A }\nconst y = 1;\n",
                "import { A } from './a';\ninterface Shape { x: A }\nconst y = 1;\n",
                &["Shape"],
            ),
            (
                "a parameter added",
                "def parse(line: str) -> tuple:\n    return 1\n",
                "def parse(line: str, extra: int) -> tuple:\n    return 1\n",
                &["extra", "line", "parse"],
            ),
            ("nothing changed", "const a = 1;\n", "const a = 1;\n", &[]),
            ("only common words", "return x;\n", "return;\n", &[]),
        ];
        for (name, before, after, names) in table {
            assert_eq!(sorted(changed_names(before, after, &[])), *names, "{name}");
        }
    }

    #[test]
    fn an_edit_changes_the_declarations_that_hold_its_lines_and_its_files_errors() {
        let before = "import { Semi } from './semi'\n\n/**\n * doc\n */\nexport interface Category<F> extends Semi<F> {\n  id: F\n}\n\nexport function total(xs: number[]) {\n  let sum: number = 0\n  return sum\n}\n";
        // The import deleted, the error it makes in `Category`; a type changed in `total`.
        let after = before
            .replace("import { Semi } from './semi'\n", "")
            .replace("let sum: number", "let sum: string");
        let names = changed_names(before, &after, &[5]);
        assert_eq!(sorted(names), ["Category", "Semi", "semi", "sum", "total"]);
    }

    #[test]
    fn a_declaration_is_named_by_its_first_line() {
        let text = "export const f = (\n  a: A\n) => {\n  a\n}\n\n@decorated\nclass A:\n    x = 1\n\nLIMIT: int = 3\nprint(x)\n  y\nexport { a, b }\n";
        let lines = lines_of(text);
        // (line, declared there)
        let table = [
            (0, Some("f")),
            (3, Some("f")),
            (4, Some("f")),
            (8, Some("A")),
            (10, Some("LIMIT")),
            (12, None),
            (13, None),
            (99, None),
        ];
        for (at, name) in table {
            assert_eq!(declared_at(&lines, at), name, "line {at}");
        }
    }

    #[test]
    fn a_message_names_what_it_quotes() {
        // (message, names)
        let table: &[(&str, &[&str])] = &[
            (
                "Property 'of' does not exist on type 'Applicative<F>'.",
                &["Applicative"],
            ),
            (
                "'\"./Pointed\"' has no exported member named 'Pointed'. Did you mean 'Pointed1'?",
                &["Pointed", "Pointed1"],
            ),
            ("\"reasn\" is not defined", &["reasn"]),
            ("Expected 2 arguments, but got 1.", &[]),
            (
                "Type '(a: A) => HKT<M, B>' is not assignable to type 'OptionT<M, A>'.",
                &["OptionT"],
            ),
        ];
        for (message, names) in table {
            let found: HashSet<String> = quoted_names(message).collect();
            assert_eq!(sorted(found), *names, "{message}");
        }
    }

    #[test]
    fn an_importer_names_one_as_a_whole_word() {
        let names: HashSet<String> = ["Shape".to_string(), "Pointed".to_string()].into();
        // (text, the names it has)
        let table: &[(&str, &[&str])] = &[
            ("let s: Shape = f();", &["Shape"]),
            ("let s: Shapes = f();", &[]),
            ("let s = f();", &[]),
            ("import { Pointed1 } from './Pointed'", &[]),
            ("import { Pointed1 } from \"../src/Pointed.js\"", &[]),
            (
                "import { Pointed } from './Pointed'\nlet s: Shape",
                &["Pointed", "Shape"],
            ),
        ];
        for (text, has) in table {
            assert_eq!(sorted(names_in(text, &names)), *has, "{text}");
        }
        assert!(names_in("Shape", &HashSet::new()).is_empty());
    }
}
