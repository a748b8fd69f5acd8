//! Navigation results (definitions, references, symbols, hovers) as compact values and text.

use crate::encoding::{column_in_chars, PositionEncoding};
use lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, Hover, HoverContents,
    MarkedString, MarkupKind, OneOf, Position, Range, SymbolKind, Url, WorkspaceSymbolResponse,
};
use serde::{Deserialize, Serialize};

mod diff;
mod locals;
mod lookup;
mod workspace_edit;

pub use diff::render_diff;
pub use workspace_edit::{content_hash, plan_edit, EditError, EditPlan, FileChange};

pub use locals::without_locals;
pub use lookup::{resolve_symbol, Candidate, Resolved};

mod body;
mod call_hierarchy;

pub use body::{body_of, enclosing_symbol, render_body, Body};
pub use call_hierarchy::{
    count_calls, render_calls, sort_calls, Call, CallCaps, Direction, MAX_DEPTH,
};

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
    /// The enclosing symbol's name, when the server gives it in a flat list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Nested symbols, sorted by position.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub children: Vec<Symbol>,
}

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

/// A document's lines (without `\r`), for turning server positions into character columns.
struct Lines<'a> {
    lines: Vec<&'a str>,
    encoding: PositionEncoding,
}

impl<'a> Lines<'a> {
    /// The lines of `text` (None: no lines, so columns are character+1).
    fn new(text: Option<&'a str>, encoding: PositionEncoding) -> Self {
        Lines {
            lines: text.map(split_lines).unwrap_or_default(),
            encoding,
        }
    }

    /// The 1-based character column of a position.
    fn column(&self, position: Position) -> u32 {
        match self.lines.get(position.line as usize) {
            Some(line) => column_in_chars(line, position.character, self.encoding),
            None => position.character.saturating_add(1),
        }
    }

    /// The trimmed source of a 0-based line, "" when unknown.
    fn text(&self, line: u32) -> String {
        self.lines
            .get(line as usize)
            .map(|line| line.trim().to_string())
            .unwrap_or_default()
    }
}

/// `text` split on `\n`, each line without a trailing `\r`.
fn split_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
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

/// Hover contents as plain text: markdown code fences removed (their code kept), emphasis/heading markers and link syntax `[text](url)` -> `text` stripped, HTML-ish `&nbsp;` -> space, runs of blank lines collapsed to one, trimmed; MarkedString::LanguageString -> its value; arrays joined by a blank line.
pub fn hover_text(hover: &Hover) -> String {
    match &hover.contents {
        HoverContents::Scalar(marked) => marked_text(marked),
        HoverContents::Array(items) => items
            .iter()
            .map(marked_text)
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        HoverContents::Markup(markup) => match markup.kind {
            MarkupKind::Markdown => markdown_to_text(&markup.value),
            MarkupKind::PlainText => tidy(markup.value.lines().map(str::to_string)),
        },
    }
}

/// One marked string as plain text.
fn marked_text(marked: &MarkedString) -> String {
    match marked {
        MarkedString::String(markdown) => markdown_to_text(markdown),
        MarkedString::LanguageString(code) => tidy(code.value.lines().map(str::to_string)),
    }
}

/// Lines without trailing whitespace, runs of blank lines collapsed to one, the whole trimmed.
fn tidy(lines: impl Iterator<Item = String>) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        let line = line.trim_end();
        if line.is_empty() && out.last().is_some_and(|last| last.is_empty()) {
            continue;
        }
        out.push(line.to_string());
    }
    out.join("\n").trim().to_string()
}

/// Markdown as plain text (see [`hover_text`]).
fn markdown_to_text(markdown: &str) -> String {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for raw in markdown.lines() {
        let trimmed = raw.trim_start();
        if let Some((ch, len)) = fence {
            if closes_fence(trimmed, ch, len) {
                fence = None;
            } else {
                out.push(raw.to_string());
            }
            continue;
        }
        if let Some(open) = opens_fence(trimmed) {
            fence = Some(open);
            continue;
        }
        if is_thematic_break(trimmed) {
            out.push(String::new());
            continue;
        }
        match strip_heading(trimmed) {
            Some(heading) => out.push(inline_text(heading)),
            None => out.push(inline_text(raw)),
        }
    }
    tidy(out.into_iter())
}

/// The fence character and length when `line` (left-trimmed) opens a code fence.
fn opens_fence(line: &str) -> Option<(char, usize)> {
    let ch = line.chars().next().filter(|&ch| ch == '`' || ch == '~')?;
    let len = line.chars().take_while(|&c| c == ch).count();
    (len >= 3).then_some((ch, len))
}

/// Whether `line` (left-trimmed) closes a fence opened with `len` times `ch`.
fn closes_fence(line: &str, ch: char, len: usize) -> bool {
    let run = line.chars().take_while(|&c| c == ch).count();
    run >= len && line.chars().skip(run).all(char::is_whitespace)
}

/// Whether `line` (left-trimmed) is a thematic break such as `---`, `***` or `_ _ _`.
fn is_thematic_break(line: &str) -> bool {
    let mut marks = line.chars().filter(|ch| !ch.is_whitespace());
    let Some(first) = marks.next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_') && {
        let rest: Vec<char> = marks.collect();
        rest.len() >= 2 && rest.iter().all(|&ch| ch == first)
    }
}

/// The text of an ATX heading (`# Title ##` -> `Title`), None when `line` (left-trimmed) is not one.
fn strip_heading(line: &str) -> Option<&str> {
    let hashes = line.chars().take_while(|&ch| ch == '#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &line[hashes..];
    if rest.is_empty() {
        return Some("");
    }
    let text = rest.strip_prefix([' ', '\t'])?.trim();
    let without_closing = text.trim_end_matches('#');
    if without_closing.is_empty() {
        return Some("");
    }
    Some(match without_closing.strip_suffix([' ', '\t']) {
        Some(heading) => heading.trim_end(),
        None => text,
    })
}

/// Inline markdown pieces: literal text, or a run of `*`/`_` that may open or close emphasis.
enum Piece {
    Text(String),
    Delimiter {
        ch: char,
        len: usize,
        can_open: bool,
        can_close: bool,
        matched: bool,
    },
}

/// Whether `ch` counts as punctuation for emphasis flanking.
fn is_punctuation(ch: char) -> bool {
    !ch.is_alphanumeric() && !ch.is_whitespace()
}

/// One line of markdown without emphasis markers, link syntax, escapes and entities; code spans kept verbatim.
fn inline_text(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut pieces: Vec<Piece> = Vec::new();
    let push = |pieces: &mut Vec<Piece>, text: &str| match pieces.last_mut() {
        Some(Piece::Text(last)) => last.push_str(text),
        _ => pieces.push(Piece::Text(text.to_string())),
    };
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        match ch {
            '\\' if chars.get(i + 1).is_some_and(char::is_ascii_punctuation) => {
                push(&mut pieces, &chars[i + 1].to_string());
                i += 2;
            }
            '`' => {
                let len = run_length(&chars, i, '`');
                let end = closing_backticks(&chars, i + len, len).unwrap_or(i + len);
                push(&mut pieces, &chars[i..end].iter().collect::<String>());
                i = end;
            }
            '[' | '!' => {
                let start = if ch == '!' { i + 1 } else { i };
                match link(&chars, start) {
                    Some((label, end)) => {
                        push(&mut pieces, &inline_text(&label));
                        i = end;
                    }
                    None => {
                        push(&mut pieces, &ch.to_string());
                        i += 1;
                    }
                }
            }
            '&' => match entity(&chars[i..]) {
                Some((text, len)) => {
                    push(&mut pieces, text);
                    i += len;
                }
                None => {
                    push(&mut pieces, "&");
                    i += 1;
                }
            },
            '*' | '_' => {
                let len = run_length(&chars, i, ch);
                let before = i.checked_sub(1).map(|j| chars[j]);
                let after = chars.get(i + len).copied();
                let space_or_punct =
                    |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || is_punctuation(c));
                let left = after.is_some_and(|c| !c.is_whitespace())
                    && (!after.is_some_and(is_punctuation) || space_or_punct(before));
                let right = before.is_some_and(|c| !c.is_whitespace())
                    && (!before.is_some_and(is_punctuation) || space_or_punct(after));
                let (can_open, can_close) = if ch == '*' {
                    (left, right)
                } else {
                    (
                        left && (!right || before.is_some_and(is_punctuation)),
                        right && (!left || after.is_some_and(is_punctuation)),
                    )
                };
                if len <= 3 && (can_open || can_close) {
                    pieces.push(Piece::Delimiter {
                        ch,
                        len,
                        can_open,
                        can_close,
                        matched: false,
                    });
                } else {
                    push(&mut pieces, &chars[i..i + len].iter().collect::<String>());
                }
                i += len;
            }
            _ => {
                push(&mut pieces, &ch.to_string());
                i += 1;
            }
        }
    }
    match_delimiters(&mut pieces);
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Delimiter { matched: true, .. } => {}
            Piece::Delimiter { ch, len, .. } => out.extend(std::iter::repeat_n(ch, len)),
        }
    }
    out
}

/// Pairs each closing delimiter with the nearest earlier unmatched opener of the same character and length.
fn match_delimiters(pieces: &mut [Piece]) {
    for close in 0..pieces.len() {
        let (close_ch, close_len) = match pieces[close] {
            Piece::Delimiter {
                ch,
                len,
                can_close: true,
                matched: false,
                ..
            } => (ch, len),
            _ => continue,
        };
        let opener = (0..close).rev().find(|&open| {
            matches!(pieces[open], Piece::Delimiter { ch, len, can_open: true, matched: false, .. }
                if ch == close_ch && len == close_len)
        });
        if let Some(open) = opener {
            for index in [open, close] {
                if let Piece::Delimiter { matched, .. } = &mut pieces[index] {
                    *matched = true;
                }
            }
        }
    }
}

/// How many times `ch` repeats from `start`.
fn run_length(chars: &[char], start: usize, ch: char) -> usize {
    chars[start..].iter().take_while(|&&c| c == ch).count()
}

/// The index just past a run of exactly `len` backticks at or after `from`.
fn closing_backticks(chars: &[char], from: usize, len: usize) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        if chars[i] == '`' {
            let run = run_length(chars, i, '`');
            if run == len {
                return Some(i + run);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// A link `[label](target)` starting at `start`: its label and the index just past it.
fn link(chars: &[char], start: usize) -> Option<(String, usize)> {
    if chars.get(start) != Some(&'[') {
        return None;
    }
    let close = matching(chars, start, '[', ']')?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = matching(chars, close + 1, '(', ')')?;
    Some((chars[start + 1..close].iter().collect(), end + 1))
}

/// The index of the bracket closing the one at `open`, skipping backslash escapes.
fn matching(chars: &[char], open: usize, left: char, right: char) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            c if c == left => depth += 1,
            c if c == right => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The text of an HTML entity at the start of `chars`, and its length.
fn entity(chars: &[char]) -> Option<(&'static str, usize)> {
    const ENTITIES: [(&str, &str); 6] = [
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&amp;", "&"),
        ("&quot;", "\""),
        ("&#39;", "'"),
    ];
    ENTITIES.iter().find_map(|&(name, text)| {
        let len = name.chars().count();
        (chars.len() >= len && chars[..len].iter().copied().eq(name.chars())).then_some((text, len))
    })
}

/// Whether `ch` can be part of an identifier: Unicode alphanumerics, `_` and `$`.
fn is_identifier_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_' || ch == '$'
}

/// A column on `line_text` moved onto an identifier: unchanged when it is on one; else the nearest identifier character on that line (prefer the one to the right on a tie, e.g. a column just after a word moves back onto the word's last char only if no identifier starts right there... keep it simple: nearest by distance, ties go left); None if the line has no identifier. Identifier characters: Unicode alphanumerics, `_` and `$`. Columns 1-based chars.
pub fn snap_to_identifier(line_text: &str, column: u32) -> Option<u32> {
    let target = column.saturating_sub(1) as usize;
    (0u32..)
        .zip(line_text.chars())
        .filter(|&(_, ch)| is_identifier_char(ch))
        .map(|(index, _)| index)
        .min_by_key(|&index| (index as usize).abs_diff(target))
        .map(|index| index + 1)
}

/// The identifier that the 1-based character `column` of `line_text` is on, if any.
pub fn word_at(line_text: &str, column: u32) -> Option<String> {
    let chars: Vec<char> = line_text.chars().collect();
    let at = (column as usize).checked_sub(1)?;
    if !chars.get(at).copied().is_some_and(is_identifier_char) {
        return None;
    }
    let start = (0..at)
        .rev()
        .take_while(|&i| is_identifier_char(chars[i]))
        .last()
        .unwrap_or(at);
    let end = (at..chars.len())
        .take_while(|&i| is_identifier_char(chars[i]))
        .last()
        .unwrap_or(at);
    Some(chars[start..=end].iter().collect())
}

/// `1 location`, `2 locations`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
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
        out.push_str(&format!("  {}:{}", location.line, location.column));
        if !location.text.is_empty() {
            out.push_str("  ");
            out.push_str(&location.text);
        }
        out.push('\n');
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

/// Appends outline lines for `symbols` at `depth`, stopping once `shown` reaches `max`.
fn write_outline(
    out: &mut String,
    symbols: &[Symbol],
    depth: usize,
    max: usize,
    shown: &mut usize,
) {
    for symbol in symbols {
        if *shown >= max {
            return;
        }
        *shown += 1;
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
        write_outline(out, &symbol.children, depth + 1, max, shown);
    }
}

/// An outline as indented lines `kind name  (lines a-b)` (two spaces of indent per level; `(line a)` when a==b), at most `max` symbols in all then `... and N more`; a first line `<file>: N symbols` (counting all nested).
pub fn render_outline(file: &str, symbols: &[Symbol], max: usize) -> String {
    let total = count_symbols(symbols);
    let mut out = format!("{file}: {}\n", plural(total, "symbol"));
    let mut shown = 0;
    write_outline(&mut out, symbols, 0, max, &mut shown);
    if total > shown {
        out.push_str(&format!("... and {} more\n", total - shown));
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
    use lsp_types::{
        LanguageString, LocationLink, MarkupContent, SymbolInformation, WorkspaceLocation,
        WorkspaceSymbol,
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

    fn symbol(name: &str, kind: &str, line: u32, end_line: u32, children: Vec<Symbol>) -> Symbol {
        Symbol {
            name: name.to_string(),
            kind: kind.to_string(),
            detail: None,
            file: "a.py".to_string(),
            line,
            column: 5,
            end_line,
            container: None,
            children,
        }
    }

    fn loc(file: &str, line: u32, column: u32, text: &str) -> Location {
        Location {
            file: file.to_string(),
            line,
            column,
            end_line: line,
            end_column: column + 3,
            text: text.to_string(),
        }
    }

    fn markdown(value: &str) -> Hover {
        Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: value.to_string(),
            }),
            range: None,
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

    #[test]
    fn hover_markdown_fence_keeps_code_and_drops_fences() {
        let hover =
            markdown("```python\ndef f(*args, **kwargs) -> int\n```\n---\nReturns **the** count.");
        assert_eq!(
            hover_text(&hover),
            "def f(*args, **kwargs) -> int\n\nReturns the count."
        );
    }

    #[test]
    fn hover_markdown_strips_headings_emphasis_and_links() {
        let hover = markdown(
            "# Heading\n\n\n\nSee [`Vec`](https://doc.rust-lang.org/Vec.html) and *this* _one_,\n\
             ## Sub ##\nkeep snake_case, 2 * 3 * 4, `__init__` and \\_\\_x\\_\\_.&nbsp;Done",
        );
        assert_eq!(
            hover_text(&hover),
            "Heading\n\nSee `Vec` and this one,\nSub\nkeep snake_case, 2 * 3 * 4, `__init__` and __x__. Done"
        );
    }

    #[test]
    fn hover_markdown_heading_edge_cases() {
        assert_eq!(
            hover_text(&markdown("#\n### Title ###\n#hashtag\n## C#")),
            "Title\n#hashtag\nC#"
        );
    }

    #[test]
    fn hover_markdown_bold_around_link_and_image() {
        let hover = markdown("**[go](http://x/(a))** ![logo](l.png) [not a link] ***both***");
        assert_eq!(hover_text(&hover), "go logo [not a link] both");
    }

    #[test]
    fn hover_markdown_unclosed_fence_keeps_code_to_the_end() {
        let hover = markdown("text\n~~~\n  indented **code**\n\n\n\nmore");
        assert_eq!(hover_text(&hover), "text\n  indented **code**\n\nmore");
    }

    #[test]
    fn hover_plaintext_markup_is_not_stripped() {
        let hover = Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::PlainText,
                value: "\n  **x**: int  \n\n\n\ny\n".to_string(),
            }),
            range: None,
        };
        assert_eq!(hover_text(&hover), "**x**: int\n\ny");
    }

    #[test]
    fn hover_marked_string_array_is_joined_by_a_blank_line() {
        let hover = Hover {
            contents: HoverContents::Array(vec![
                MarkedString::LanguageString(LanguageString {
                    language: "rust".to_string(),
                    value: "fn *f()".to_string(),
                }),
                MarkedString::String("   ".to_string()),
                MarkedString::String("A *doc*.".to_string()),
            ]),
            range: None,
        };
        assert_eq!(hover_text(&hover), "fn *f()\n\nA doc.");
    }

    #[test]
    fn hover_scalar_language_string_is_its_value() {
        let hover = Hover {
            contents: HoverContents::Scalar(MarkedString::LanguageString(LanguageString {
                language: "python".to_string(),
                value: "x: int".to_string(),
            })),
            range: None,
        };
        assert_eq!(hover_text(&hover), "x: int");
    }

    #[test]
    fn the_word_at_a_column() {
        assert_eq!(word_at("x = 中foo_1(y)", 5).as_deref(), Some("中foo_1"));
        assert_eq!(word_at("x = 中foo_1(y)", 10).as_deref(), Some("中foo_1"));
        assert_eq!(word_at("x = 中foo_1(y)", 1).as_deref(), Some("x"));
        assert_eq!(word_at("x = 中foo_1(y)", 2), None);
        assert_eq!(word_at("x", 0), None);
        assert_eq!(word_at("x", 9), None);
    }

    #[test]
    fn snap_keeps_a_column_on_an_identifier() {
        assert_eq!(snap_to_identifier("let 中x = 1;", 5), Some(5));
    }

    #[test]
    fn snap_moves_off_whitespace_to_the_nearest_identifier() {
        // Column 4 is 2 from `a` (column 2) and from `b` (column 6): the left one; column 5 is nearer `b`.
        assert_eq!(snap_to_identifier(" a   b", 4), Some(2));
        assert_eq!(snap_to_identifier(" a   b", 5), Some(6));
        assert_eq!(snap_to_identifier("ab  cd", 3), Some(2));
        assert_eq!(snap_to_identifier("ab  cd", 4), Some(5));
    }

    #[test]
    fn snap_after_a_word_moves_back_onto_its_last_char() {
        assert_eq!(snap_to_identifier("foo", 4), Some(3));
        assert_eq!(snap_to_identifier("foo   ", 40), Some(3));
    }

    #[test]
    fn snap_off_punctuation() {
        assert_eq!(snap_to_identifier("x.$y(", 2), Some(1));
        assert_eq!(snap_to_identifier("(x);", 4), Some(2));
        assert_eq!(snap_to_identifier("f(_)", 2), Some(1));
    }

    #[test]
    fn snap_on_a_line_without_identifiers_is_none() {
        assert_eq!(snap_to_identifier("", 1), None);
        assert_eq!(snap_to_identifier("  (); ", 3), None);
    }

    #[test]
    fn render_locations_groups_sorts_and_dedups() {
        let locations = vec![
            loc("src/b.py", 7, 1, "foo()"),
            loc("src/a.py", 12, 5, "return foo"),
            loc("src/a.py", 3, 1, ""),
            loc("src/b.py", 7, 1, "foo()"),
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
            loc("a.py", 1, 1, "x"),
            loc("a.py", 2, 1, "y"),
            loc("b.py", 1, 1, "z"),
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
            render_outline("a.py", &outline(), 50),
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
            render_outline("a.py", &outline(), 3),
            "a.py: 5 symbols\n\
             class Klass  (lines 1-9)\n\
             \x20 method __init__  (lines 2-4)\n\
             \x20 method run  (lines 6-9)\n\
             ... and 2 more\n"
        );
    }

    #[test]
    fn render_outline_of_nothing() {
        assert_eq!(render_outline("empty.py", &[], 10), "empty.py: 0 symbols\n");
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

    #[test]
    fn symbol_json_skips_empty_optionals_and_children() {
        let json =
            serde_json::to_string(&symbol("f", "function", 1, 2, Vec::new())).expect("serializes");
        assert_eq!(
            json,
            "{\"name\":\"f\",\"kind\":\"function\",\"file\":\"a.py\",\"line\":1,\"column\":5,\"end_line\":2}"
        );
        let back: Symbol = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, symbol("f", "function", 1, 2, Vec::new()));
    }
}
