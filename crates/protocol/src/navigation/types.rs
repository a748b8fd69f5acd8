//! The value types navigation answers are made of: places and symbols.

use serde::{Deserialize, Serialize};

/// A place in the workspace: 1-based, columns in characters, with its line of source.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    /// The file, relative to the workspace root, with `/` separators.
    pub file: String,
    /// 1-based start line.
    pub line: u32,
    /// 1-based start column, in characters.
    pub column: u32,
    /// 1-based end line.
    pub end_line: u32,
    /// 1-based end column, in characters, exclusive.
    pub end_column: u32,
    /// The source line, trimmed ("" when unknown).
    pub text: String,
}

/// A symbol in an outline or a search result; `line`/`column` point at its name, `end_line` is where its body ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// The symbol's name.
    pub name: String,
    /// Its kind, as [`symbol_kind_name`] names it.
    pub kind: String,
    /// The server's detail (often a signature or type), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The file, relative to the workspace root, with `/` separators.
    pub file: String,
    /// 1-based line of the name.
    pub line: u32,
    /// 1-based column of the name, in characters.
    pub column: u32,
    /// 1-based line where the symbol's body ends.
    pub end_line: u32,
    /// The symbol's whole extent (its body, not only its name), as the reference's MCP contract
    /// names it: `range {startLine, startChar, endLine, endChar}`, 1-based like `line` and
    /// `column`, characters.
    pub range: SymbolRange,
    /// The enclosing symbol's name, when the server gives it in a flat list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Nested symbols, sorted by position.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub children: Vec<Symbol>,
}

/// A symbol's extent: 1-based lines, 1-based columns in characters, the end exclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SymbolRange {
    /// The line it starts on.
    pub start_line: u32,
    /// The column it starts at.
    pub start_char: u32,
    /// The line it ends on.
    pub end_line: u32,
    /// The column it ends at (exclusive).
    pub end_char: u32,
}

impl SymbolRange {
    /// The extent of one place: `line:column` to `line:column` (a symbol whose extent the
    /// server did not give).
    pub fn at(line: u32, column: u32) -> Self {
        SymbolRange {
            start_line: line,
            start_char: column,
            end_line: line,
            end_char: column,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A location three characters long on one line, for tests.
    pub(in crate::navigation) fn location(
        file: &str,
        line: u32,
        column: u32,
        text: &str,
    ) -> Location {
        Location {
            file: file.to_string(),
            line,
            column,
            end_line: line,
            end_column: column + 3,
            text: text.to_string(),
        }
    }

    /// A symbol in `a.py` at column 5, for tests.
    pub(in crate::navigation) fn symbol(
        name: &str,
        kind: &str,
        line: u32,
        end_line: u32,
        children: Vec<Symbol>,
    ) -> Symbol {
        Symbol {
            name: name.to_string(),
            kind: kind.to_string(),
            detail: None,
            file: "a.py".to_string(),
            line,
            column: 5,
            end_line,
            range: SymbolRange::at(line, 5),
            container: None,
            children,
        }
    }

    #[test]
    fn symbol_json_skips_empty_optionals_and_children() {
        let json =
            serde_json::to_string(&symbol("f", "function", 1, 2, Vec::new())).expect("serializes");
        assert_eq!(
            json,
            "{\"name\":\"f\",\"kind\":\"function\",\"file\":\"a.py\",\"line\":1,\"column\":5,\"end_line\":2,\"range\":{\"startLine\":1,\"startChar\":5,\"endLine\":1,\"endChar\":5}}"
        );
        let back: Symbol = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, symbol("f", "function", 1, 2, Vec::new()));
    }
}
