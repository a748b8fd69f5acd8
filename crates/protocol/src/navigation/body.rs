//! A definition's whole source ("its body"), found from the outline of its file and capped by
//! lines, so that a model does not need a second read.

use serde::{Deserialize, Serialize};

use super::lines::split_lines;
use super::types::Symbol;

/// The source of a symbol: its lines, where they are, and how many were left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Body {
    /// The file, relative to the workspace root.
    pub file: String,
    /// 1-based first line shown.
    pub line: u32,
    /// 1-based last line of the symbol (shown or not).
    pub end_line: u32,
    /// The lines shown, joined with `\n` (no trailing newline).
    pub source: String,
    /// How many of the symbol's lines were left out at the end (0: all shown).
    pub cut: u32,
}

/// The symbol whose name starts at `line`:`column` (1-based); failing that, the outermost one
/// whose name is on `line` (a function, not its parameter); failing that, the innermost one
/// whose lines hold `line`.
pub fn enclosing_symbol(symbols: &[Symbol], line: u32, column: u32) -> Option<&Symbol> {
    named_at(symbols, line, Some(column))
        .or_else(|| named_at(symbols, line, None))
        .or_else(|| holding(symbols, line))
}

/// The outermost symbol whose name is on `line` (at `column`, when given).
fn named_at(symbols: &[Symbol], line: u32, column: Option<u32>) -> Option<&Symbol> {
    symbols.iter().find_map(|symbol| {
        let here = symbol.line == line && column.is_none_or(|column| symbol.column == column);
        here.then_some(symbol)
            .or_else(|| named_at(&symbol.children, line, column))
    })
}

/// The innermost symbol whose lines hold `line`.
fn holding(symbols: &[Symbol], line: u32) -> Option<&Symbol> {
    symbols
        .iter()
        .filter(|symbol| symbol.line <= line && line <= symbol.end_line)
        .find_map(|symbol| holding(&symbol.children, line).or(Some(symbol)))
}

/// Lines `line..=end_line` (1-based) of `text`, at most `max_lines` of them; None when `line`
/// is past the end of the text. An end before the start shows the one line.
pub fn body_of(file: &str, text: &str, line: u32, end_line: u32, max_lines: u32) -> Option<Body> {
    let lines = split_lines(text);
    let first = line.max(1);
    if first as usize > lines.len() {
        return None;
    }
    let end_line = end_line.clamp(first, lines.len() as u32);
    let shown_end = end_line.min(first.saturating_add(max_lines.max(1)) - 1);
    let source = lines[(first - 1) as usize..shown_end as usize].join("\n");
    Some(Body {
        file: file.to_string(),
        line: first,
        end_line,
        source: source.trim_end().to_string(),
        cut: end_line - shown_end,
    })
}

/// A body as text: `path:a-b` (or `path:a`), then the source, then `... N more lines` when cut.
pub fn render_body(body: &Body) -> String {
    let lines = if body.line == body.end_line {
        format!("{}", body.line)
    } else {
        format!("{}-{}", body.line, body.end_line)
    };
    let mut out = format!("{}:{lines}\n{}\n", body.file, body.source);
    if body.cut > 0 {
        let s = if body.cut == 1 { "" } else { "s" };
        out.push_str(&format!("... {} more line{s}\n", body.cut));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::navigation::SymbolRange;

    fn symbol(name: &str, line: u32, end_line: u32, children: Vec<Symbol>) -> Symbol {
        Symbol {
            name: name.to_string(),
            kind: "function".to_string(),
            detail: None,
            file: "a.py".to_string(),
            line,
            column: 1,
            end_line,
            range: SymbolRange::at(line, 1),
            container: None,
            children,
        }
    }

    const TEXT: &str =
        "class A:\r\n    def f(self):\r\n        return 1\r\n\r\ndef g():\r\n    pass\r\n";

    #[test]
    fn the_symbol_named_on_the_line_wins_over_its_container() {
        let outline = vec![
            symbol("A", 1, 3, vec![symbol("f", 2, 3, vec![])]),
            symbol("g", 5, 6, vec![]),
        ];
        let name = |line, column| enclosing_symbol(&outline, line, column).map(|s| s.name.as_str());
        assert_eq!(name(2, 9), Some("f"));
        assert_eq!(name(1, 7), Some("A"));
        assert_eq!(name(3, 9), Some("f"));
        assert_eq!(name(4, 1), None);
    }

    #[test]
    fn a_body_is_its_lines_without_carriage_returns() {
        let body = body_of("a.py", TEXT, 1, 3, 50).unwrap();
        assert_eq!(body.source, "class A:\n    def f(self):\n        return 1");
        assert_eq!((body.line, body.end_line, body.cut), (1, 3, 0));
        assert_eq!(
            render_body(&body),
            "a.py:1-3\nclass A:\n    def f(self):\n        return 1\n"
        );
    }

    #[test]
    fn a_long_body_is_cut_with_a_count() {
        let body = body_of("a.py", TEXT, 1, 6, 2).unwrap();
        assert_eq!(body.source, "class A:\n    def f(self):");
        assert_eq!(body.cut, 4);
        assert!(render_body(&body).ends_with("    def f(self):\n... 4 more lines\n"));
    }

    #[test]
    fn lines_past_the_end_are_clamped_or_none() {
        assert_eq!(body_of("a.py", TEXT, 6, 99, 50).unwrap().end_line, 7);
        assert_eq!(body_of("a.py", TEXT, 5, 2, 50).unwrap().source, "def g():");
        assert_eq!(body_of("a.py", TEXT, 40, 41, 50), None);
    }
}
