//! A document's lines, for turning server positions into character columns and source text.

use crate::encoding::{column_in_chars, PositionEncoding};
use lsp_types::Position;

/// A document's lines (without `\r`), for turning server positions into character columns.
pub(super) struct Lines<'a> {
    lines: Vec<&'a str>,
    encoding: PositionEncoding,
}

impl<'a> Lines<'a> {
    /// The lines of `text` (None: no lines, so columns are character+1).
    pub(super) fn new(text: Option<&'a str>, encoding: PositionEncoding) -> Self {
        Lines {
            lines: text.map(split_lines).unwrap_or_default(),
            encoding,
        }
    }

    /// The 1-based character column of a position.
    pub(super) fn column(&self, position: Position) -> u32 {
        match self.lines.get(position.line as usize) {
            Some(line) => column_in_chars(line, position.character, self.encoding),
            None => position.character.saturating_add(1),
        }
    }

    /// The trimmed source of a 0-based line, "" when unknown.
    pub(super) fn text(&self, line: u32) -> String {
        self.lines
            .get(line as usize)
            .map(|line| line.trim().to_string())
            .unwrap_or_default()
    }
}

/// `text` split on `\n`, each line without a trailing `\r`.
pub(super) fn split_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}
