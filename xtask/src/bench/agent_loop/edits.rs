//! The edits of the agent loop: the kinds agents make (misspell a use, delete a used import,
//! add a required parameter, change a declared type, un-export a symbol), drawn at random
//! from a file's text. Pure: a seeded generator and a text in, the edited text out.

use fastrand::Rng;

/// The languages the loop edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// TypeScript.
    Ts,
    /// Python.
    Py,
    /// Rust.
    Rs,
}

/// The kinds of edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A use of a name misspelt.
    Misspell,
    /// An import line deleted.
    DeleteImport,
    /// A required parameter added to a function.
    AddParameter,
    /// A declared type changed.
    ChangeType,
    /// A symbol no longer exported (Python: its definition renamed).
    Unexport,
}

/// Every kind, in the order the loop cycles through them.
pub const KINDS: [Kind; 5] = [
    Kind::Misspell,
    Kind::DeleteImport,
    Kind::AddParameter,
    Kind::ChangeType,
    Kind::Unexport,
];

impl Kind {
    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Misspell => "misspell a use",
            Kind::DeleteImport => "delete an import",
            Kind::AddParameter => "add a required parameter",
            Kind::ChangeType => "change a declared type",
            Kind::Unexport => "un-export a symbol",
        }
    }
}

/// One edit: the replaced snippet and its replacement, at a byte offset of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// What kind of edit it is.
    pub kind: Kind,
    /// Where the replaced text starts.
    pub at: usize,
    /// The text replaced.
    pub old: String,
    /// Its replacement.
    pub new: String,
}

impl Edit {
    /// The text with the edit made.
    pub fn apply(&self, text: &str) -> String {
        format!(
            "{}{}{}",
            &text[..self.at],
            self.new,
            &text[self.at + self.old.len()..]
        )
    }
}

/// An edit of `kind` drawn from `text`, or `None` when the text offers no place for it.
pub fn draw(rng: &mut Rng, lang: Lang, kind: Kind, text: &str) -> Option<Edit> {
    let mut places = match kind {
        Kind::Misspell => misspellings(lang, text),
        Kind::DeleteImport => import_lines(lang, text),
        Kind::AddParameter => parameters(lang, text),
        Kind::ChangeType => type_changes(lang, text),
        Kind::Unexport => unexports(lang, text),
    };
    if places.is_empty() {
        return None;
    }
    let (at, old, new) = places.swap_remove(rng.usize(..places.len()));
    Some(Edit { kind, at, old, new })
}

/// A place: byte offset, text replaced, replacement.
type Place = (usize, String, String);

/// The lines of a text with their byte offsets.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |line| {
        let start = at;
        at += line.len();
        (start, line)
    })
}

/// Whether a line is code worth editing (not blank, not a comment or docstring line).
fn code_line(lang: Lang, line: &str) -> bool {
    let trimmed = line.trim_start();
    let comment = match lang {
        Lang::Py => trimmed.starts_with('#') || trimmed.starts_with("\"\"\""),
        Lang::Ts | Lang::Rs => {
            trimmed.starts_with("//") || trimmed.starts_with('*') || trimmed.starts_with("/*")
        }
    };
    !trimmed.is_empty() && !comment && !trimmed.starts_with('@') && !trimmed.starts_with("#[")
}

/// Words never misspelt (keywords and the like).
const KEYWORDS: &[&str] = &[
    "self",
    "Self",
    "None",
    "True",
    "False",
    "return",
    "const",
    "function",
    "export",
    "import",
    "from",
    "class",
    "async",
    "await",
    "yield",
    "while",
    "match",
    "impl",
    "struct",
    "enum",
    "where",
    "break",
    "continue",
    "else",
    "elif",
    "true",
    "false",
    "null",
    "undefined",
    "type",
    "interface",
    "extends",
    "readonly",
    "string",
    "number",
    "boolean",
    "unknown",
    "never",
    "void",
    "this",
    "super",
    "static",
    "public",
    "private",
    "lambda",
    "pass",
    "raise",
    "with",
    "assert",
    "global",
    "print",
    "isinstance",
    "typeof",
    "instanceof",
    "usize",
    "u8",
    "u32",
    "bool",
    "char",
    "String",
    "Vec",
    "Option",
    "Some",
    "Result",
    "Box",
    "mut",
    "loop",
    "unsafe",
    "crate",
    "super",
    "dyn",
    "ref",
    "move",
    "mod",
    "pub",
    "use",
    "let",
    "for",
    "not",
    "and",
];

/// Misspelt uses: a name's occurrence other than its first in the file (the first is likely
/// its declaration or import), on a code line, outside quotes and comments; `Zq` appended.
fn misspellings(lang: Lang, text: &str) -> Vec<Place> {
    let mut seen = std::collections::HashSet::new();
    let mut places = Vec::new();
    for (start, line) in lines(text) {
        if !code_line(lang, line) || import_line(lang, line) {
            continue;
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        let mut quotes = 0;
        while i < bytes.len() {
            let byte = bytes[i];
            if byte == b'"' || byte == b'\'' || byte == b'`' {
                quotes += 1;
            }
            if byte == b'#' && lang == Lang::Py || bytes[i..].starts_with(b"//") {
                break;
            }
            let starts = (byte.is_ascii_alphabetic() || byte == b'_')
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
            if !starts {
                i += 1;
                continue;
            }
            let end = (i..bytes.len())
                .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_'))
                .unwrap_or(bytes.len());
            let word = &line[i..end];
            let member = i > 0 && bytes[i - 1] == b'.';
            let fresh = seen.insert(word.to_owned());
            if !fresh && !member && quotes % 2 == 0 && word.len() >= 4 && !KEYWORDS.contains(&word)
            {
                places.push((start + i, word.to_owned(), format!("{word}Zq")));
            }
            i = end;
        }
    }
    places
}

/// Whether a line is a whole import statement of one line.
fn import_line(lang: Lang, line: &str) -> bool {
    let line = line.trim_end();
    match lang {
        Lang::Ts => line.starts_with("import ") && (line.ends_with(';') || line.contains(" from ")),
        Lang::Py => {
            (line.starts_with("import ") || line.starts_with("from ") && line.contains(" import "))
                && !line.ends_with('(')
                && !line.ends_with('\\')
        }
        Lang::Rs => line.starts_with("use ") && line.ends_with(';'),
    }
}

/// Deleted import lines.
fn import_lines(lang: Lang, text: &str) -> Vec<Place> {
    (lines(text))
        .filter(|(_, line)| import_line(lang, line))
        // `from __future__` changes nothing a checker reports.
        .filter(|(_, line)| !line.contains("__future__"))
        .map(|(start, line)| (start, line.to_owned(), String::new()))
        .collect()
}

/// A required parameter added first (after `self`) to a function definition.
fn parameters(lang: Lang, text: &str) -> Vec<Place> {
    let (opener, parameter) = match lang {
        Lang::Ts => ("function ", "extraZq: number"),
        Lang::Py => ("def ", "extra_zq"),
        Lang::Rs => ("fn ", "extra_zq: u8"),
    };
    let mut places = Vec::new();
    for (start, line) in lines(text) {
        let Some(found) = line.find(opener) else {
            continue;
        };
        if !code_line(lang, line)
            || (found > 0 && line.as_bytes()[found - 1].is_ascii_alphanumeric())
        {
            continue;
        }
        let Some(open) = line[found..].find('(').map(|i| found + i) else {
            continue;
        };
        // A generic parameter list before the `(` is fine; a name must follow the opener.
        let name = line[found + opener.len()..open].trim();
        if name.is_empty()
            || !name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            continue;
        }
        let after = &line[open + 1..];
        let receiver = ["self", "&self", "&mut self", "mut self", "cls"]
            .iter()
            .find(|receiver| {
                after.starts_with(*receiver) && after[receiver.len()..].starts_with([',', ')', ':'])
            });
        let (at, old, new) = match receiver {
            Some(receiver) => {
                let at = open + 1 + receiver.len();
                (at, String::new(), format!(", {parameter}"))
            }
            None if after.starts_with(')') => (open + 1, String::new(), parameter.to_owned()),
            None if after.trim().is_empty() => {
                // Parameters on the next lines.
                (open + 1, String::new(), format!("{parameter}, "))
            }
            None => (open + 1, String::new(), format!("{parameter}, ")),
        };
        places.push((start + at, old, new));
    }
    places
}

/// Declared types swapped for another.
fn type_changes(lang: Lang, text: &str) -> Vec<Place> {
    let swaps: &[(&str, &str)] = match lang {
        Lang::Ts => &[
            (": string", ": number"),
            (": number", ": string"),
            (": boolean", ": string"),
        ],
        Lang::Py => &[
            ("-> str:", "-> int:"),
            ("-> bool:", "-> str:"),
            ("-> int:", "-> str:"),
            (": str", ": int"),
        ],
        Lang::Rs => &[
            (": usize", ": u8"),
            ("-> usize", "-> u8"),
            ("-> bool", "-> u8"),
            (": bool", ": u8"),
        ],
    };
    let mut places = Vec::new();
    for (start, line) in lines(text) {
        if !code_line(lang, line) {
            continue;
        }
        for (from, to) in swaps {
            for (i, _) in line.match_indices(from) {
                let next = line.as_bytes().get(i + from.len()).copied().unwrap_or(b' ');
                if !(next.is_ascii_alphanumeric() || next == b'_') {
                    places.push((start + i, (*from).to_owned(), (*to).to_owned()));
                }
            }
        }
    }
    places
}

/// Exported symbols made private: TypeScript's `export` and Rust's `pub` dropped from a
/// declaration, a Python module's public function or class renamed.
fn unexports(lang: Lang, text: &str) -> Vec<Place> {
    let mut places = Vec::new();
    for (start, line) in lines(text) {
        match lang {
            Lang::Ts => {
                let declarations = ["const ", "function ", "interface ", "type ", "class "];
                if let Some(rest) = line.strip_prefix("export ") {
                    if declarations.iter().any(|d| rest.starts_with(d)) {
                        places.push((start, "export ".to_owned(), String::new()));
                    }
                }
            }
            Lang::Py => {
                for opener in ["def ", "class "] {
                    let Some(rest) = line.strip_prefix(opener) else {
                        continue;
                    };
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && !name.starts_with('_') {
                        let at = start + opener.len();
                        places.push((at, name.clone(), format!("{name}_gone")));
                    }
                }
            }
            Lang::Rs => {
                let trimmed = line.trim_start();
                let indent = line.len() - trimmed.len();
                let items = [
                    "pub fn ",
                    "pub struct ",
                    "pub enum ",
                    "pub const ",
                    "pub trait ",
                ];
                if items.iter().any(|item| trimmed.starts_with(item)) {
                    places.push((start + indent, "pub ".to_owned(), String::new()));
                }
            }
        }
    }
    places
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Every place `kind` finds in `text`, as the edited lines.
    fn all(lang: Lang, kind: Kind, text: &str) -> Vec<String> {
        let places = match kind {
            Kind::Misspell => misspellings(lang, text),
            Kind::DeleteImport => import_lines(lang, text),
            Kind::AddParameter => parameters(lang, text),
            Kind::ChangeType => type_changes(lang, text),
            Kind::Unexport => unexports(lang, text),
        };
        places
            .into_iter()
            .map(|(at, old, new)| {
                let edit = Edit { kind, at, old, new };
                let edited = edit.apply(text);
                let line = text[..at].matches('\n').count();
                edited.lines().nth(line).unwrap_or_default().to_owned()
            })
            .collect()
    }

    #[test]
    fn each_kind_finds_its_places_in_typescript() {
        let text = "import { pipe } from './function'\n\
                    export function mapAll(fa: string, f: number): string {\n  return pipe(fa, f)\n}\n\
                    export const ok = mapAll('pipe', 1)\n";
        // The import line is gone: the line in its place is the next one.
        assert_eq!(
            all(Lang::Ts, Kind::DeleteImport, text),
            ["export function mapAll(fa: string, f: number): string {"]
        );
        assert_eq!(
            all(Lang::Ts, Kind::Misspell, text),
            ["export const ok = mapAllZq('pipe', 1)"]
        );
        assert_eq!(
            all(Lang::Ts, Kind::AddParameter, text),
            ["export function mapAll(extraZq: number, fa: string, f: number): string {"]
        );
        assert_eq!(
            all(Lang::Ts, Kind::ChangeType, text),
            [
                "export function mapAll(fa: number, f: number): string {",
                "export function mapAll(fa: string, f: number): number {",
                "export function mapAll(fa: string, f: string): string {",
            ]
        );
        assert_eq!(
            all(Lang::Ts, Kind::Unexport, text),
            [
                "function mapAll(fa: string, f: number): string {",
                "const ok = mapAll('pipe', 1)"
            ]
        );
    }

    #[test]
    fn each_kind_finds_its_places_in_python_and_rust() {
        let py = "from .core import Config\n\nclass Sorter:\n    def sort(self, config: str) -> bool:\n        return Config(config)  # Config\n";
        assert_eq!(all(Lang::Py, Kind::DeleteImport, py), [""]);
        // `Config`'s first use after its import line counts as its first sight; the comment
        // is not code.
        assert_eq!(
            all(Lang::Py, Kind::Misspell, py),
            ["        return Config(configZq)  # Config"]
        );
        assert_eq!(
            all(Lang::Py, Kind::AddParameter, py),
            ["    def sort(self, extra_zq, config: str) -> bool:"]
        );
        assert_eq!(
            all(Lang::Py, Kind::ChangeType, py),
            [
                "    def sort(self, config: str) -> str:",
                "    def sort(self, config: int) -> bool:"
            ]
        );
        assert_eq!(all(Lang::Py, Kind::Unexport, py), ["class Sorter_gone:"]);
        let rs = "use crate::ast;\n\npub fn width(x: usize) -> bool {\n    x > 1\n}\n";
        assert_eq!(all(Lang::Rs, Kind::DeleteImport, rs), [""]);
        assert_eq!(
            all(Lang::Rs, Kind::AddParameter, rs),
            ["pub fn width(extra_zq: u8, x: usize) -> bool {"]
        );
        assert_eq!(
            all(Lang::Rs, Kind::Unexport, rs),
            ["fn width(x: usize) -> bool {"]
        );
    }

    #[test]
    fn a_seed_draws_the_same_edit_every_time() {
        let text = "def a(x: str) -> str:\n    return a(x)\n";
        let draw_with = |seed| draw(&mut Rng::with_seed(seed), Lang::Py, Kind::ChangeType, text);
        assert_eq!(draw_with(7), draw_with(7));
        assert!(draw(&mut Rng::with_seed(1), Lang::Py, Kind::DeleteImport, text).is_none());
    }
}
