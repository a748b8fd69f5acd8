//! Which importers an edit most likely reached: the names on the lines it changed (a symbol
//! made private, a parameter added, a type changed), and whether an importer's text names
//! one of them. An importer that does not name any can still break (through a re-export, an
//! inferred type), so these come first, not alone.

use std::collections::HashSet;
use std::time::Duration;

use squiggle_protocol::navigation::changed_lines;

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
    "lambda",
    "let",
    "list",
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
    "this",
    "throw",
    "true",
    "True",
    "try",
    "tuple",
    "type",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// The names on the lines that differ between `before` and `after`, but the common ones.
pub(crate) fn changed_names(before: &str, after: &str) -> HashSet<String> {
    (changed_lines(before, after, DIFF_TIME).into_iter())
        .flat_map(words)
        .filter(|word| word.len() > 1 && !COMMON.contains(word))
        .map(str::to_string)
        .collect()
}

/// Whether `text` has one of `names` as a whole word.
pub(crate) fn names_any(text: &str, names: &HashSet<String>) -> bool {
    !names.is_empty() && words(text).any(|word| names.contains(word))
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
            assert_eq!(sorted(changed_names(before, after)), *names, "{name}");
        }
    }

    #[test]
    fn an_importer_names_one_as_a_whole_word() {
        let names: HashSet<String> = ["Shape".to_string()].into();
        assert!(names_any("let s: Shape = f();", &names));
        assert!(!names_any("let s: Shapes = f();", &names));
        assert!(!names_any("let s = f();", &names));
        assert!(!names_any("Shape", &HashSet::new()));
    }
}
