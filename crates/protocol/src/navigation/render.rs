//! Navigation values as compact text: grouped locations, outlines, symbol lists.

use super::types::{Location, Symbol};

/// `1 location`, `2 locations`.
pub(super) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Appends one location line: `<indent><place>`, then two spaces and the line's source text
/// when there is one.
pub(super) fn push_location_line(out: &mut String, indent: &str, place: &str, text: &str) {
    out.push_str(indent);
    out.push_str(place);
    if !text.is_empty() {
        out.push_str("  ");
        out.push_str(text);
    }
    out.push('\n');
}

/// Locations grouped by file (files in first-seen order... no: sorted by path, locations by line), as compact text: a first line `<title>: N locations in M files` (or `<title>: none`), then per file `path` followed by indented `  line:col  <source text>` lines, at most `max` locations in all, then `... and N more` when cut.
pub fn render_locations(title: &str, locations: &[Location], max: usize) -> String {
    let mut sorted: Vec<&Location> = locations.iter().collect();
    sorted.sort_by(|a, b| {
        (&a.file, a.line, a.column, a.end_line, a.end_column, &a.text).cmp(&(
            &b.file,
            b.line,
            b.column,
            b.end_line,
            b.end_column,
            &b.text,
        ))
    });
    sorted.dedup();
    if sorted.is_empty() {
        return format!("{title}: none\n");
    }
    let mut files: Vec<&str> = sorted.iter().map(|l| l.file.as_str()).collect();
    files.dedup();
    let mut out = format!(
        "{title}: {} in {}\n",
        plural(sorted.len(), "location"),
        plural(files.len(), "file")
    );
    let mut current: Option<&str> = None;
    for location in sorted.iter().take(max) {
        if current != Some(location.file.as_str()) {
            out.push_str(&location.file);
            out.push('\n');
            current = Some(location.file.as_str());
        }
        let place = format!("{}:{}", location.line, location.column);
        push_location_line(&mut out, "  ", &place, &location.text);
    }
    if sorted.len() > max {
        out.push_str(&format!("... and {} more\n", sorted.len() - max));
    }
    out
}

/// How many symbols there are, nested ones included.
fn count_symbols(symbols: &[Symbol]) -> usize {
    symbols
        .iter()
        .map(|symbol| 1 + count_symbols(&symbol.children))
        .sum()
}

/// Which symbols of an outline are shown: the `count` after the first `skip` (in outline order,
/// nested ones included), and how many have been met so far.
struct Page {
    skip: usize,
    count: usize,
    seen: usize,
}

/// Appends outline lines for the `symbols` at `depth` that fall in `page`.
fn write_outline(out: &mut String, symbols: &[Symbol], depth: usize, page: &mut Page) {
    for symbol in symbols {
        if page.seen >= page.skip.saturating_add(page.count) {
            return;
        }
        page.seen += 1;
        if page.seen > page.skip {
            let lines = if symbol.line == symbol.end_line {
                format!("(line {})", symbol.line)
            } else {
                format!("(lines {}-{})", symbol.line, symbol.end_line)
            };
            out.push_str(&format!(
                "{}{} {}  {lines}\n",
                "  ".repeat(depth),
                symbol.kind,
                symbol.name
            ));
        }
        write_outline(out, &symbol.children, depth + 1, page);
    }
}

/// An outline as indented lines `kind name  (lines a-b)` (two spaces of indent per level; `(line a)` when a==b), at most `max` symbols in all from the `offset`-th on (in outline order, nested ones counted); a first line `<file>: N symbols` (counting all nested, with `, from symbol M` after an offset), and when more follow, `... and N more (offset: K shows them)` naming the offset that pages on.
pub fn render_outline(file: &str, symbols: &[Symbol], offset: usize, max: usize) -> String {
    let total = count_symbols(symbols);
    let mut out = format!("{file}: {}", plural(total, "symbol"));
    if offset > 0 {
        out.push_str(&format!(", from symbol {}", offset + 1));
    }
    out.push('\n');
    let mut page = Page {
        skip: offset,
        count: max,
        seen: 0,
    };
    write_outline(&mut out, symbols, 0, &mut page);
    if total > page.seen {
        out.push_str(&format!(
            "... and {} more (offset: {} shows them)\n",
            total - page.seen,
            page.seen
        ));
    }
    out
}

/// Workspace symbols as lines `kind name  path:line` (with ` in <container>` before the path when there is one), at most `max`, then `... and N more`; first line `N symbols` / `no symbols`.
pub fn render_symbols(symbols: &[Symbol], max: usize) -> String {
    if symbols.is_empty() {
        return "no symbols\n".to_string();
    }
    let mut out = format!("{}\n", plural(symbols.len(), "symbol"));
    for symbol in symbols.iter().take(max) {
        out.push_str(&format!("{} {}", symbol.kind, symbol.name));
        if let Some(container) = &symbol.container {
            out.push_str(&format!(" in {container}"));
        }
        out.push_str(&format!("  {}:{}\n", symbol.file, symbol.line));
    }
    if symbols.len() > max {
        out.push_str(&format!("... and {} more\n", symbols.len() - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::navigation::types::tests::{location, symbol};

    #[test]
    fn render_locations_groups_sorts_and_dedups() {
        let locations = vec![
            location("src/b.py", 7, 1, "foo()"),
            location("src/a.py", 12, 5, "return foo"),
            location("src/a.py", 3, 1, ""),
            location("src/b.py", 7, 1, "foo()"),
        ];
        assert_eq!(
            render_locations("references to foo", &locations, 10),
            "references to foo: 3 locations in 2 files\n\
             src/a.py\n\
             \x20 3:1\n\
             \x20 12:5  return foo\n\
             src/b.py\n\
             \x20 7:1  foo()\n"
        );
    }

    #[test]
    fn render_locations_caps_in_all_and_counts_the_rest() {
        let locations = vec![
            location("a.py", 1, 1, "x"),
            location("a.py", 2, 1, "y"),
            location("b.py", 1, 1, "z"),
        ];
        assert_eq!(
            render_locations("definition", &locations, 2),
            "definition: 3 locations in 2 files\na.py\n  1:1  x\n  2:1  y\n... and 1 more\n"
        );
        assert_eq!(
            render_locations("definition", &locations[..1], 0),
            "definition: 1 location in 1 file\n... and 1 more\n"
        );
    }

    #[test]
    fn render_locations_empty_is_none() {
        assert_eq!(
            render_locations("references", &[], 10),
            "references: none\n"
        );
    }

    fn outline() -> Vec<Symbol> {
        vec![
            symbol(
                "Klass",
                "class",
                1,
                9,
                vec![
                    symbol("__init__", "method", 2, 4, Vec::new()),
                    symbol(
                        "run",
                        "method",
                        6,
                        9,
                        vec![symbol("T", "type parameter", 6, 6, Vec::new())],
                    ),
                ],
            ),
            symbol("main", "function", 11, 12, Vec::new()),
        ]
    }

    #[test]
    fn render_outline_indents_children() {
        assert_eq!(
            render_outline("a.py", &outline(), 0, 50),
            "a.py: 5 symbols\n\
             class Klass  (lines 1-9)\n\
             \x20 method __init__  (lines 2-4)\n\
             \x20 method run  (lines 6-9)\n\
             \x20   type parameter T  (line 6)\n\
             function main  (lines 11-12)\n"
        );
    }

    #[test]
    fn render_outline_caps_nested_symbols_in_all() {
        assert_eq!(
            render_outline("a.py", &outline(), 0, 3),
            "a.py: 5 symbols\n\
             class Klass  (lines 1-9)\n\
             \x20 method __init__  (lines 2-4)\n\
             \x20 method run  (lines 6-9)\n\
             ... and 2 more (offset: 3 shows them)\n"
        );
    }

    #[test]
    fn render_outline_pages_on_from_an_offset() {
        assert_eq!(
            render_outline("a.py", &outline(), 3, 1),
            "a.py: 5 symbols, from symbol 4\n\
             \x20   type parameter T  (line 6)\n\
             ... and 1 more (offset: 4 shows them)\n"
        );
        assert_eq!(
            render_outline("a.py", &outline(), 4, 10),
            "a.py: 5 symbols, from symbol 5\nfunction main  (lines 11-12)\n"
        );
        assert_eq!(
            render_outline("a.py", &outline(), 9, 10),
            "a.py: 5 symbols, from symbol 10\n"
        );
    }

    #[test]
    fn render_outline_of_nothing() {
        assert_eq!(
            render_outline("empty.py", &[], 0, 10),
            "empty.py: 0 symbols\n"
        );
    }

    #[test]
    fn render_symbols_with_containers_and_cap() {
        let mut method = symbol("run", "method", 6, 9, Vec::new());
        method.container = Some("Klass".to_string());
        method.file = "src/k.py".to_string();
        let symbols = vec![
            method,
            symbol("run", "function", 3, 4, Vec::new()),
            symbol("runner", "variable", 8, 8, Vec::new()),
        ];
        assert_eq!(
            render_symbols(&symbols, 2),
            "3 symbols\n\
             method run in Klass  src/k.py:6\n\
             function run  a.py:3\n\
             ... and 1 more\n"
        );
        assert_eq!(
            render_symbols(&symbols[1..2], 5),
            "1 symbol\nfunction run  a.py:3\n"
        );
    }

    #[test]
    fn render_symbols_empty() {
        assert_eq!(render_symbols(&[], 5), "no symbols\n");
    }
}
