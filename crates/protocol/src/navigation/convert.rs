//! Conversion of lsp_types answers (locations, definitions, document and workspace symbols) into navigation values.

use super::lines::Lines;
use super::types::{Location, Symbol, SymbolRange};
use crate::encoding::PositionEncoding;
use lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, OneOf, Range, SymbolKind, Url,
    WorkspaceSymbolResponse,
};

/// The lowercase name of a symbol kind ("function", "class", "method", "variable", "constant", "module", "interface", "enum", "struct", "field", "property", "constructor", "type parameter", ...).
pub fn symbol_kind_name(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::FILE => "file",
        SymbolKind::MODULE => "module",
        SymbolKind::NAMESPACE => "namespace",
        SymbolKind::PACKAGE => "package",
        SymbolKind::CLASS => "class",
        SymbolKind::METHOD => "method",
        SymbolKind::PROPERTY => "property",
        SymbolKind::FIELD => "field",
        SymbolKind::CONSTRUCTOR => "constructor",
        SymbolKind::ENUM => "enum",
        SymbolKind::INTERFACE => "interface",
        SymbolKind::FUNCTION => "function",
        SymbolKind::VARIABLE => "variable",
        SymbolKind::CONSTANT => "constant",
        SymbolKind::STRING => "string",
        SymbolKind::NUMBER => "number",
        SymbolKind::BOOLEAN => "boolean",
        SymbolKind::ARRAY => "array",
        SymbolKind::OBJECT => "object",
        SymbolKind::KEY => "key",
        SymbolKind::NULL => "null",
        SymbolKind::ENUM_MEMBER => "enum member",
        SymbolKind::STRUCT => "struct",
        SymbolKind::EVENT => "event",
        SymbolKind::OPERATOR => "operator",
        SymbolKind::TYPE_PARAMETER => "type parameter",
        _ => "symbol",
    }
}

/// Converts a range in `file` (relative path) to a Location, using the file's text (None: columns = character+1 and text "").
pub fn location_from_lsp(
    file: &str,
    range: &Range,
    text: Option<&str>,
    encoding: PositionEncoding,
) -> Location {
    let lines = Lines::new(text, encoding);
    Location {
        file: file.to_string(),
        line: range.start.line.saturating_add(1),
        column: lines.column(range.start),
        end_line: range.end.line.saturating_add(1),
        end_column: lines.column(range.end),
        text: lines.text(range.start.line),
    }
}

/// The ranges a definition response points at: (uri, range) pairs, using target_selection_range for LocationLinks.
pub fn definition_targets(response: &GotoDefinitionResponse) -> Vec<(Url, Range)> {
    match response {
        GotoDefinitionResponse::Scalar(location) => vec![(location.uri.clone(), location.range)],
        GotoDefinitionResponse::Array(locations) => locations
            .iter()
            .map(|location| (location.uri.clone(), location.range))
            .collect(),
        GotoDefinitionResponse::Link(links) => links
            .iter()
            .map(|link| (link.target_uri.clone(), link.target_selection_range))
            .collect(),
    }
}

/// `Some(name)` unless it is empty or blank.
fn non_blank(name: Option<&String>) -> Option<String> {
    name.filter(|name| !name.trim().is_empty()).cloned()
}

/// Sorts symbols by the position of their names, keeping the server's order on ties.
fn sort_by_position(symbols: &mut [Symbol]) {
    symbols.sort_by_key(|symbol| (symbol.line, symbol.column));
}

/// A symbol's extent from an LSP range, 1-based, columns in characters.
pub(crate) fn symbol_range(range: &Range, lines: &Lines<'_>) -> SymbolRange {
    SymbolRange {
        start_line: range.start.line.saturating_add(1),
        start_char: lines.column(range.start),
        end_line: range.end.line.saturating_add(1),
        end_char: lines.column(range.end),
    }
}

/// One nested document symbol and its children.
fn nested_symbol(symbol: &DocumentSymbol, file: &str, lines: &Lines<'_>) -> Symbol {
    let mut children: Vec<Symbol> = symbol
        .children
        .iter()
        .flatten()
        .map(|child| nested_symbol(child, file, lines))
        .collect();
    sort_by_position(&mut children);
    Symbol {
        name: symbol.name.clone(),
        kind: symbol_kind_name(symbol.kind).to_string(),
        detail: non_blank(symbol.detail.as_ref()),
        file: file.to_string(),
        line: symbol.selection_range.start.line.saturating_add(1),
        column: lines.column(symbol.selection_range.start),
        end_line: symbol.range.end.line.saturating_add(1),
        range: symbol_range(&symbol.range, lines),
        container: None,
        children,
    }
}

/// Converts a document-symbol response for `file` into a nested outline (flat SymbolInformation lists stay flat, with `container` set from container_name); children sorted by position.
pub fn document_symbols(
    response: &DocumentSymbolResponse,
    file: &str,
    text: Option<&str>,
    encoding: PositionEncoding,
) -> Vec<Symbol> {
    let lines = Lines::new(text, encoding);
    let mut symbols: Vec<Symbol> = match response {
        DocumentSymbolResponse::Nested(symbols) => symbols
            .iter()
            .map(|symbol| nested_symbol(symbol, file, &lines))
            .collect(),
        DocumentSymbolResponse::Flat(infos) => infos
            .iter()
            .map(|info| Symbol {
                name: info.name.clone(),
                kind: symbol_kind_name(info.kind).to_string(),
                detail: None,
                file: file.to_string(),
                line: info.location.range.start.line.saturating_add(1),
                column: lines.column(info.location.range.start),
                end_line: info.location.range.end.line.saturating_add(1),
                range: symbol_range(&info.location.range, &lines),
                container: non_blank(info.container_name.as_ref()),
                children: Vec::new(),
            })
            .collect(),
    };
    sort_by_position(&mut symbols);
    symbols
}

/// A workspace symbol's (uri, name, kind, container, range-or-None).
pub type WorkspaceSymbolEntry = (Url, String, &'static str, Option<String>, Option<Range>);

/// The (uri, name, kind, container, range-or-None) of each workspace symbol, for the caller to place with each file's text (WorkspaceSymbol may carry only a URI: range None).
pub fn workspace_symbol_entries(response: &WorkspaceSymbolResponse) -> Vec<WorkspaceSymbolEntry> {
    match response {
        WorkspaceSymbolResponse::Flat(infos) => infos
            .iter()
            .map(|info| {
                (
                    info.location.uri.clone(),
                    info.name.clone(),
                    symbol_kind_name(info.kind),
                    non_blank(info.container_name.as_ref()),
                    Some(info.location.range),
                )
            })
            .collect(),
        WorkspaceSymbolResponse::Nested(symbols) => symbols
            .iter()
            .map(|symbol| {
                let (uri, range) = match &symbol.location {
                    OneOf::Left(location) => (location.uri.clone(), Some(location.range)),
                    OneOf::Right(location) => (location.uri.clone(), None),
                };
                (
                    uri,
                    symbol.name.clone(),
                    symbol_kind_name(symbol.kind),
                    non_blank(symbol.container_name.as_ref()),
                    range,
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{
        LocationLink, Position, SymbolInformation, WorkspaceLocation, WorkspaceSymbol,
    };

    const TEXT: &str = "fn main() {}\r\n    let s = \"😀中\"; foo(1)\n";

    fn range(start: (u32, u32), end: (u32, u32)) -> Range {
        Range::new(Position::new(start.0, start.1), Position::new(end.0, end.1))
    }

    fn url(path: &str) -> Url {
        Url::parse(&format!("file:///ws/{path}")).expect("valid url")
    }

    fn lsp_location(path: &str, r: Range) -> lsp_types::Location {
        lsp_types::Location::new(url(path), r)
    }

    fn doc_symbol(
        name: &str,
        kind: SymbolKind,
        r: Range,
        selection: Range,
        children: Option<Vec<DocumentSymbol>>,
    ) -> DocumentSymbol {
        #[allow(deprecated)]
        DocumentSymbol {
            name: name.to_string(),
            detail: None,
            kind,
            tags: None,
            deprecated: None,
            range: r,
            selection_range: selection,
            children,
        }
    }

    fn info(name: &str, kind: SymbolKind, r: Range, container: Option<&str>) -> SymbolInformation {
        #[allow(deprecated)]
        SymbolInformation {
            name: name.to_string(),
            kind,
            tags: None,
            deprecated: None,
            location: lsp_location("a.py", r),
            container_name: container.map(str::to_string),
        }
    }

    #[test]
    fn symbol_kind_names_are_lowercase_words() {
        assert_eq!(symbol_kind_name(SymbolKind::FUNCTION), "function");
        assert_eq!(symbol_kind_name(SymbolKind::CLASS), "class");
        assert_eq!(
            symbol_kind_name(SymbolKind::TYPE_PARAMETER),
            "type parameter"
        );
        assert_eq!(symbol_kind_name(SymbolKind::ENUM_MEMBER), "enum member");
        assert_eq!(symbol_kind_name(SymbolKind::STRUCT), "struct");
    }

    #[test]
    fn location_from_lsp_converts_utf16_after_emoji_and_cjk_and_trims_text() {
        // Line 2 is `    let s = "😀中"; foo(1)`: foo starts at UTF-16 offset 19, char column 19.
        let location = location_from_lsp(
            "src/a.rs",
            &range((1, 19), (1, 22)),
            Some(TEXT),
            PositionEncoding::Utf16,
        );
        assert_eq!(
            location,
            Location {
                file: "src/a.rs".to_string(),
                line: 2,
                column: 19,
                end_line: 2,
                end_column: 22,
                text: "let s = \"😀中\"; foo(1)".to_string(),
            }
        );
    }

    #[test]
    fn location_from_lsp_converts_utf8_byte_offsets() {
        // foo starts at byte 4 + 9 + 4 + 3 + 3 = 23.
        let location = location_from_lsp(
            "a.rs",
            &range((1, 23), (1, 26)),
            Some(TEXT),
            PositionEncoding::Utf8,
        );
        assert_eq!((location.column, location.end_column), (19, 22));
    }

    #[test]
    fn location_from_lsp_strips_carriage_return_from_text() {
        let location = location_from_lsp(
            "a.rs",
            &range((0, 3), (0, 7)),
            Some(TEXT),
            PositionEncoding::Utf16,
        );
        assert_eq!(location.text, "fn main() {}");
    }

    #[test]
    fn location_from_lsp_without_text_uses_character_plus_one() {
        let location = location_from_lsp(
            "a.rs",
            &range((1, 19), (2, 0)),
            None,
            PositionEncoding::Utf16,
        );
        assert_eq!(
            location,
            Location {
                file: "a.rs".to_string(),
                line: 2,
                column: 20,
                end_line: 3,
                end_column: 1,
                text: String::new(),
            }
        );
    }

    #[test]
    fn definition_targets_of_a_scalar_location() {
        let response = GotoDefinitionResponse::Scalar(lsp_location("a.py", range((3, 4), (3, 7))));
        assert_eq!(
            definition_targets(&response),
            vec![(url("a.py"), range((3, 4), (3, 7)))]
        );
    }

    #[test]
    fn definition_targets_of_a_location_array_keep_order() {
        let response = GotoDefinitionResponse::Array(vec![
            lsp_location("b.py", range((9, 0), (9, 1))),
            lsp_location("a.py", range((1, 2), (1, 3))),
        ]);
        assert_eq!(
            definition_targets(&response),
            vec![
                (url("b.py"), range((9, 0), (9, 1))),
                (url("a.py"), range((1, 2), (1, 3))),
            ]
        );
    }

    #[test]
    fn definition_targets_of_links_use_the_selection_range() {
        let response = GotoDefinitionResponse::Link(vec![LocationLink {
            origin_selection_range: Some(range((0, 0), (0, 3))),
            target_uri: url("lib.rs"),
            target_range: range((10, 0), (20, 1)),
            target_selection_range: range((10, 7), (10, 10)),
        }]);
        assert_eq!(
            definition_targets(&response),
            vec![(url("lib.rs"), range((10, 7), (10, 10)))]
        );
    }

    #[test]
    fn definition_targets_of_an_empty_array_is_empty() {
        assert!(definition_targets(&GotoDefinitionResponse::Array(Vec::new())).is_empty());
    }

    #[test]
    fn document_symbols_nest_and_sort_children_by_position() {
        let text = "class A:\n    def b(self): pass\n    def a(self): pass\n";
        let mut class = doc_symbol(
            "A",
            SymbolKind::CLASS,
            range((0, 0), (2, 21)),
            range((0, 6), (0, 7)),
            Some(vec![
                doc_symbol(
                    "a",
                    SymbolKind::METHOD,
                    range((2, 4), (2, 21)),
                    range((2, 8), (2, 9)),
                    None,
                ),
                doc_symbol(
                    "b",
                    SymbolKind::METHOD,
                    range((1, 4), (1, 21)),
                    range((1, 8), (1, 9)),
                    Some(Vec::new()),
                ),
            ]),
        );
        class.detail = Some("class A".to_string());
        let response = DocumentSymbolResponse::Nested(vec![
            doc_symbol(
                "late",
                SymbolKind::VARIABLE,
                range((3, 0), (3, 4)),
                range((3, 0), (3, 4)),
                None,
            ),
            class,
        ]);
        let symbols = document_symbols(&response, "a.py", Some(text), PositionEncoding::Utf16);
        let method = |name: &str, line: u32| Symbol {
            name: name.to_string(),
            kind: "method".to_string(),
            detail: None,
            file: "a.py".to_string(),
            line,
            column: 9,
            end_line: line,
            range: SymbolRange {
                start_line: line,
                start_char: 5,
                end_line: line,
                end_char: 22,
            },
            container: None,
            children: Vec::new(),
        };
        assert_eq!(
            symbols,
            vec![
                Symbol {
                    name: "A".to_string(),
                    kind: "class".to_string(),
                    detail: Some("class A".to_string()),
                    file: "a.py".to_string(),
                    line: 1,
                    column: 7,
                    end_line: 3,
                    range: SymbolRange {
                        start_line: 1,
                        start_char: 1,
                        end_line: 3,
                        end_char: 22,
                    },
                    container: None,
                    children: vec![method("b", 2), method("a", 3)],
                },
                Symbol {
                    name: "late".to_string(),
                    kind: "variable".to_string(),
                    detail: None,
                    file: "a.py".to_string(),
                    line: 4,
                    column: 1,
                    end_line: 4,
                    range: SymbolRange {
                        start_line: 4,
                        start_char: 1,
                        end_line: 4,
                        end_char: 1,
                    },
                    container: None,
                    children: Vec::new(),
                },
            ]
        );
    }

    #[test]
    fn document_symbols_convert_utf16_name_columns() {
        let text = "/* 😀 */ fn f() {}\n";
        let response = DocumentSymbolResponse::Nested(vec![doc_symbol(
            "f",
            SymbolKind::FUNCTION,
            range((0, 9), (0, 19)),
            range((0, 12), (0, 13)),
            None,
        )]);
        let symbols = document_symbols(&response, "a.rs", Some(text), PositionEncoding::Utf16);
        assert_eq!((symbols[0].line, symbols[0].column), (1, 12));
    }

    #[test]
    fn flat_symbol_information_stays_flat_with_containers() {
        let response = DocumentSymbolResponse::Flat(vec![
            info(
                "method",
                SymbolKind::METHOD,
                range((1, 4), (2, 0)),
                Some("Klass"),
            ),
            info("Klass", SymbolKind::CLASS, range((0, 0), (2, 0)), Some("")),
        ]);
        let symbols = document_symbols(&response, "a.py", None, PositionEncoding::Utf16);
        let summary: Vec<_> = symbols
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.kind.as_str(),
                    s.line,
                    s.column,
                    s.end_line,
                    s.container.as_deref(),
                    s.children.len(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("Klass", "class", 1, 1, 3, None, 0),
                ("method", "method", 2, 5, 3, Some("Klass"), 0),
            ]
        );
    }

    #[test]
    fn workspace_symbol_entries_from_symbol_information() {
        let response = WorkspaceSymbolResponse::Flat(vec![info(
            "run",
            SymbolKind::FUNCTION,
            range((4, 4), (4, 7)),
            Some("Runner"),
        )]);
        assert_eq!(
            workspace_symbol_entries(&response),
            vec![(
                url("a.py"),
                "run".to_string(),
                "function",
                Some("Runner".to_string()),
                Some(range((4, 4), (4, 7))),
            )]
        );
    }

    #[test]
    fn workspace_symbol_entries_from_workspace_symbols_with_and_without_range() {
        let response = WorkspaceSymbolResponse::Nested(vec![
            WorkspaceSymbol {
                name: "Config".to_string(),
                kind: SymbolKind::STRUCT,
                tags: None,
                container_name: None,
                location: OneOf::Left(lsp_location("src/config.rs", range((2, 11), (2, 17)))),
                data: None,
            },
            WorkspaceSymbol {
                name: "load".to_string(),
                kind: SymbolKind::FUNCTION,
                tags: None,
                container_name: Some("config".to_string()),
                location: OneOf::Right(WorkspaceLocation {
                    uri: url("src/load.rs"),
                }),
                data: None,
            },
        ]);
        assert_eq!(
            workspace_symbol_entries(&response),
            vec![
                (
                    url("src/config.rs"),
                    "Config".to_string(),
                    "struct",
                    None,
                    Some(range((2, 11), (2, 17))),
                ),
                (
                    url("src/load.rs"),
                    "load".to_string(),
                    "function",
                    Some("config".to_string()),
                    None,
                ),
            ]
        );
    }
}
