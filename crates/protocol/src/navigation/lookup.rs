//! Finding a symbol by the name a model gives: plain, `Class.method` or `module.function`,
//! with an optional line hint; an ambiguous name is said, with its candidates, not hidden.

use super::lines::split_lines;
use super::types::Symbol;
use super::words::is_identifier_char;

/// A symbol of the outline that the name asked about matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its kind ("function", "method", ...).
    pub kind: String,
    /// Its name.
    pub name: String,
    /// The enclosing symbols' names, outermost first, joined by `.` (None at the top level).
    pub container: Option<String>,
    /// 1-based line of its name.
    pub line: u32,
    /// 1-based column of its name, in characters.
    pub column: u32,
}

/// Where a named symbol was found, and how sure that is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// 1-based line asked about.
    pub line: u32,
    /// 1-based column asked about, in characters (the name's first character).
    pub column: u32,
    /// The outline symbol used; None when the name was found only in the text.
    pub used: Option<Candidate>,
    /// Every outline symbol the name matches, by position, when there is more than one and the
    /// line hint did not name one of their lines.
    pub ambiguous: Vec<Candidate>,
    /// How often the name occurs in the text, when the position came from the text.
    pub occurrences: usize,
}

impl Resolved {
    /// What the model should know about how `name` was resolved: the candidates of an
    /// ambiguous name and the one used, or that the name is not in the outline.
    pub fn note(&self, name: &str) -> Option<String> {
        if !self.ambiguous.is_empty() {
            let listed: Vec<String> = self.ambiguous.iter().map(describe).collect();
            return Some(format!(
                "`{name}` matches {} symbols: {}; used the one at line {}; give `line` to pick another",
                self.ambiguous.len(),
                listed.join(", "),
                self.line
            ));
        }
        if self.used.is_none() {
            let of = match self.occurrences {
                0 | 1 => String::new(),
                n => format!(" (1 of {n} in the file)"),
            };
            return Some(format!(
                "`{name}` is not in the file's outline; used its occurrence at {}:{}{of}",
                self.line, self.column
            ));
        }
        None
    }
}

/// `class Circle (line 7)`, `method area in Circle (line 12)`.
fn describe(candidate: &Candidate) -> String {
    match &candidate.container {
        Some(container) => format!(
            "{} {} in {container} (line {})",
            candidate.kind, candidate.name, candidate.line
        ),
        None => format!(
            "{} {} (line {})",
            candidate.kind, candidate.name, candidate.line
        ),
    }
}

/// Where the symbol `name` is in `file` (relative path), from its outline and text.
///
/// `name` is a symbol's name, or a qualified one (`Class.method`, `module.function`,
/// `a::b`) whose qualifiers end the chain of the file's module path and enclosing symbols.
/// With a `line_hint` (1-based), the outline symbol or whole-word occurrence nearest to it wins
/// (the outline's on a tie, then the earlier); without one, the outline's least nested symbol
/// (then the earlier), else the first occurrence in the text. None when it is nowhere.
pub fn resolve_symbol(
    symbols: &[Symbol],
    file: &str,
    text: &str,
    name: &str,
    line_hint: Option<u32>,
) -> Option<Resolved> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let parts = qualified_parts(name);
    let module = module_path(file);
    let mut matches = collect(symbols, &mut Vec::new(), &|symbol, _| symbol.name == name);
    if matches.is_empty() && parts.len() > 1 {
        let (last, qualifiers) = parts.split_last()?;
        matches = collect(symbols, &mut Vec::new(), &|symbol, chain| {
            let full: Vec<&str> = module.iter().chain(chain).copied().collect();
            symbol.name == *last && full.ends_with(qualifiers)
        });
    }
    matches.sort_by_key(|(c, _)| (c.line, c.column));
    let occurrences = text_occurrences(text, name, &parts);
    let chosen = choose(&matches, &occurrences, line_hint)?;
    let hinted = line_hint.is_some_and(|hint| matches.iter().any(|(c, _)| c.line == hint));
    let ambiguous = if matches.len() > 1 && !hinted {
        matches.iter().map(|(c, _)| c.clone()).collect()
    } else {
        Vec::new()
    };
    Some(match chosen {
        Choice::Outline(index) => {
            let used = matches[index].0.clone();
            Resolved {
                line: used.line,
                column: used.column,
                used: Some(used),
                ambiguous,
                occurrences: 0,
            }
        }
        Choice::Text(line, column) => Resolved {
            line,
            column,
            used: None,
            ambiguous: Vec::new(),
            occurrences: occurrences.len(),
        },
    })
}

/// What was chosen: an outline match (its index) or a text occurrence.
enum Choice {
    Outline(usize),
    Text(u32, u32),
}

/// The outline match or text occurrence to use (see [`resolve_symbol`]).
fn choose(
    matches: &[(Candidate, usize)],
    occurrences: &[(u32, u32)],
    line_hint: Option<u32>,
) -> Option<Choice> {
    match line_hint {
        Some(hint) => {
            let outline = matches.iter().enumerate().map(|(index, (c, _))| {
                (
                    (c.line.abs_diff(hint), 0, c.line, c.column),
                    Choice::Outline(index),
                )
            });
            let text = occurrences.iter().map(|&(line, column)| {
                (
                    (line.abs_diff(hint), 1, line, column),
                    Choice::Text(line, column),
                )
            });
            outline
                .chain(text)
                .min_by_key(|(key, _)| *key)
                .map(|(_, choice)| choice)
        }
        None => match matches
            .iter()
            .enumerate()
            .min_by_key(|(_, (c, depth))| (*depth, c.line, c.column))
        {
            Some((index, _)) => Some(Choice::Outline(index)),
            None => occurrences
                .first()
                .map(|&(line, column)| Choice::Text(line, column)),
        },
    }
}

/// The parts of a qualified name (`a.b`, `a::b`), or the name alone.
fn qualified_parts(name: &str) -> Vec<&str> {
    let parts: Vec<&str> = name.split("::").flat_map(|part| part.split('.')).collect();
    if parts.iter().any(|part| part.trim().is_empty()) {
        vec![name]
    } else {
        parts
    }
}

/// A file's module path: its folders and stem (`pkg/mod.py` -> `pkg`, `mod`), without a
/// package file's own stem (`__init__`, `index`, `mod`, `lib`).
fn module_path(file: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = file.split('/').filter(|p| !p.is_empty()).collect();
    if let Some(last) = parts.last_mut() {
        *last = last.split('.').next().unwrap_or(last);
        if matches!(*last, "__init__" | "index" | "mod" | "lib") {
            parts.pop();
        }
    }
    parts
}

/// The outline symbols that `keep` accepts (given the enclosing symbols' names), as candidates
/// with their nesting depth.
fn collect<'a>(
    symbols: &'a [Symbol],
    chain: &mut Vec<&'a str>,
    keep: &dyn Fn(&Symbol, &[&str]) -> bool,
) -> Vec<(Candidate, usize)> {
    let mut found = Vec::new();
    for symbol in symbols {
        // A flat outline names the container instead of nesting.
        let flat: Vec<&str> = symbol
            .container
            .as_deref()
            .map(|c| c.split('.').collect())
            .unwrap_or_default();
        let depth = chain.len();
        chain.extend(flat.iter().copied());
        if keep(symbol, chain) {
            found.push((candidate(symbol, chain), chain.len()));
        }
        chain.truncate(depth);
        chain.push(&symbol.name);
        found.extend(collect(&symbol.children, chain, keep));
        chain.pop();
    }
    found
}

/// The candidate for `symbol` inside `chain`.
fn candidate(symbol: &Symbol, chain: &[&str]) -> Candidate {
    Candidate {
        kind: symbol.kind.clone(),
        name: symbol.name.clone(),
        container: (!chain.is_empty()).then(|| chain.join(".")),
        line: symbol.line,
        column: symbol.column,
    }
}

/// The whole-word occurrences of `name` in `text` as (line, column) of its last part: the
/// qualified form as written first (`shapes.make_circle`), else the last part alone.
fn text_occurrences(text: &str, name: &str, parts: &[&str]) -> Vec<(u32, u32)> {
    let lines = split_lines(text);
    let find = |word: &str, offset: u32| -> Vec<(u32, u32)> {
        (1u32..)
            .zip(&lines)
            .flat_map(|(line, line_text)| {
                word_columns(line_text, word)
                    .into_iter()
                    .map(move |column| (line, column + offset))
            })
            .collect()
    };
    let last = parts.last().copied().unwrap_or(name);
    let found = find(name, (name.chars().count() - last.chars().count()) as u32);
    if found.is_empty() && last != name {
        find(last, 0)
    } else {
        found
    }
}

/// The 1-based columns where `word` occurs in `line` as a whole word.
pub(super) fn word_columns(line: &str, word: &str) -> Vec<u32> {
    let mut columns = Vec::new();
    let mut before: Option<char> = None;
    for (column, (byte, ch)) in (1u32..).zip(line.char_indices()) {
        if line[byte..].starts_with(word)
            && !before.is_some_and(is_identifier_char)
            && !line[byte + word.len()..]
                .chars()
                .next()
                .is_some_and(is_identifier_char)
        {
            columns.push(column);
        }
        before = Some(ch);
    }
    columns
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::navigation::SymbolRange;

    fn symbol(name: &str, kind: &str, line: u32, children: Vec<Symbol>) -> Symbol {
        Symbol {
            name: name.to_string(),
            kind: kind.to_string(),
            detail: None,
            file: "pkg/shapes.py".to_string(),
            line,
            column: 5,
            end_line: line,
            range: SymbolRange::at(line, 1),
            container: None,
            children,
        }
    }

    /// `area` is a function (line 3), a method of Circle (line 12) and of Square (line 22).
    fn outline() -> Vec<Symbol> {
        vec![
            symbol("area", "function", 3, Vec::new()),
            symbol(
                "Circle",
                "class",
                10,
                vec![symbol(
                    "area",
                    "method",
                    12,
                    vec![symbol("r", "variable", 13, Vec::new())],
                )],
            ),
            symbol(
                "Square",
                "class",
                20,
                vec![symbol("area", "method", 22, Vec::new())],
            ),
            symbol("r", "variable", 30, Vec::new()),
        ]
    }

    fn at(found: Option<Resolved>) -> Option<(u32, u32)> {
        found.map(|r| (r.line, r.column))
    }

    /// 39 lines of `x`, then a use of `area` on line 40.
    fn text() -> String {
        "x
"
        .repeat(39)
            + "print(area(c))
"
    }

    #[test]
    fn a_unique_name_is_used_without_a_note() {
        let found = resolve_symbol(&outline(), "pkg/shapes.py", &text(), "Circle", None).unwrap();
        assert_eq!((found.line, found.column), (10, 5));
        assert_eq!(found.note("Circle"), None);
    }

    #[test]
    fn an_ambiguous_name_lists_its_candidates_and_says_which_it_used() {
        let found = resolve_symbol(&outline(), "pkg/shapes.py", &text(), "area", None).unwrap();
        assert_eq!((found.line, found.column), (3, 5));
        assert_eq!(
            found.note("area").unwrap(),
            "`area` matches 3 symbols: function area (line 3), method area in Circle (line 12), \
             method area in Square (line 22); used the one at line 3; give `line` to pick another"
        );
    }

    #[test]
    fn without_a_hint_the_least_nested_symbol_wins_over_an_earlier_local() {
        let found = resolve_symbol(&outline(), "pkg/shapes.py", &text(), "r", None).unwrap();
        assert_eq!(found.line, 30);
        assert_eq!(found.ambiguous.len(), 2);
    }

    #[test]
    fn a_line_hint_on_a_candidate_picks_it_and_is_not_ambiguous() {
        let found = resolve_symbol(&outline(), "pkg/shapes.py", &text(), "area", Some(22)).unwrap();
        assert_eq!(at(Some(found.clone())), Some((22, 5)));
        assert_eq!(found.note("area"), None);
    }

    #[test]
    fn a_line_hint_picks_the_nearest_candidate_ties_going_to_the_earlier() {
        let find = |hint| {
            at(resolve_symbol(
                &outline(),
                "pkg/shapes.py",
                "",
                "area",
                Some(hint),
            ))
        };
        assert_eq!(find(11), Some((12, 5)));
        assert_eq!(find(17), Some((12, 5)));
        assert_eq!(find(7), Some((3, 5)));
    }

    #[test]
    fn a_line_hint_beats_a_same_name_definition_elsewhere() {
        // `area` is used on line 40; the outline's nearest `area` is on line 22.
        let found = resolve_symbol(&outline(), "pkg/shapes.py", &text(), "area", Some(40)).unwrap();
        assert_eq!((found.line, found.column), (40, 7));
        assert!(found.used.is_none());
    }

    #[test]
    fn class_dot_method_picks_the_method_of_that_class() {
        let found =
            resolve_symbol(&outline(), "pkg/shapes.py", &text(), "Square.area", None).unwrap();
        assert_eq!(found.line, 22);
        assert_eq!(found.used.unwrap().container.as_deref(), Some("Square"));
        let rust = resolve_symbol(&outline(), "pkg/shapes.py", &text(), "Circle::area", None);
        assert_eq!(at(rust), Some((12, 5)));
    }

    #[test]
    fn module_dot_function_matches_the_files_module_path() {
        let find = |name| {
            at(resolve_symbol(
                &outline(),
                "pkg/shapes.py",
                &text(),
                name,
                None,
            ))
        };
        assert_eq!(find("shapes.area"), Some((3, 5)));
        assert_eq!(find("pkg.shapes.Circle.area"), Some((12, 5)));
        assert_eq!(find("shapes.Circle.area.r"), Some((13, 5)));
        let package = resolve_symbol(&outline(), "pkg/__init__.py", &text(), "pkg.area", None);
        assert_eq!(at(package), Some((3, 5)));
    }

    #[test]
    fn a_qualified_name_not_in_the_outline_is_found_as_written_in_the_text() {
        let text = "import shapes\narea = 1\nx = shapes.area(2)\n";
        let found = resolve_symbol(&[], "app.py", text, "shapes.area", None).unwrap();
        assert_eq!((found.line, found.column), (3, 12));
        let last_only = resolve_symbol(&[], "app.py", "area = 1\n", "shapes.area", None);
        assert_eq!(at(last_only), Some((1, 1)));
        assert_eq!(
            resolve_symbol(&outline(), "pkg/shapes.py", "", "Triangle.area", None),
            None
        );
    }

    #[test]
    fn a_name_found_only_in_the_text_says_so() {
        let text = "foobar = 1\n_foo = foo_ + $foo\nx = foo(foo)\r\n\n😀 foo\n";
        let found = resolve_symbol(&[], "a.py", text, "foo", None).unwrap();
        assert_eq!((found.line, found.column), (3, 5));
        assert_eq!(
            found.note("foo").unwrap(),
            "`foo` is not in the file's outline; used its occurrence at 3:5 (1 of 3 in the file)"
        );
        let find = |name, hint| at(resolve_symbol(&[], "a.py", text, name, hint));
        assert_eq!(find("foo", Some(5)), Some((5, 3)));
        assert_eq!(find("foo", Some(4)), Some((3, 5)));
        assert_eq!(find("foobar", Some(5)), Some((1, 1)));
        assert_eq!(find("oba", None), None);
        assert_eq!(find("", None), None);
        assert_eq!(find("Foo", None), None);
    }

    #[test]
    fn a_flat_outline_qualifies_by_its_container_names() {
        let mut method = symbol("area", "method", 12, Vec::new());
        method.container = Some("Circle".to_string());
        let flat = vec![symbol("area", "function", 3, Vec::new()), method];
        let found = resolve_symbol(&flat, "a.py", "", "Circle.area", None).unwrap();
        assert_eq!(found.line, 12);
        let plain = resolve_symbol(&flat, "a.py", "", "area", None).unwrap();
        assert_eq!(plain.line, 3);
        assert_eq!(
            plain.note("area").unwrap(),
            "`area` matches 2 symbols: function area (line 3), method area in Circle (line 12); \
             used the one at line 3; give `line` to pick another"
        );
    }

    #[test]
    fn a_name_with_dots_is_first_matched_whole() {
        let outline = vec![
            symbol("(*T).Run", "method", 4, Vec::new()),
            symbol("Run", "function", 9, Vec::new()),
        ];
        let found = resolve_symbol(&outline, "t.go", "", "(*T).Run", None);
        assert_eq!(at(found), Some((4, 5)));
    }
}
