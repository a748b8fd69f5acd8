//! Position encodings negotiated with a server, and turning their offsets into character columns.

use lsp_types::PositionEncodingKind;

/// The unit a server counts `character` offsets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units, the LSP default.
    #[default]
    Utf16,
    /// UTF-32 code units (Unicode scalar values).
    Utf32,
}

impl PositionEncoding {
    /// The encoding a server announced; `None` or an unknown kind means UTF-16.
    pub fn from_kind(kind: Option<&PositionEncodingKind>) -> Self {
        match kind.map(PositionEncodingKind::as_str) {
            Some("utf-8") => PositionEncoding::Utf8,
            Some("utf-32") => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        }
    }

    /// The LSP kind naming this encoding.
    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
            PositionEncoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    /// How many code units of this encoding `ch` takes.
    fn units(self, ch: char) -> u32 {
        match self {
            PositionEncoding::Utf8 => ch.len_utf8() as u32,
            PositionEncoding::Utf16 => ch.len_utf16() as u32,
            PositionEncoding::Utf32 => 1,
        }
    }
}

/// 0-based LSP `character` on `line_text` (in this encoding's code units) -> 1-based column in chars.
///
/// Offsets past the end of line clamp to line length + 1; an offset inside a surrogate pair /
/// multi-byte char rounds down to that char.
pub fn column_in_chars(line_text: &str, character: u32, encoding: PositionEncoding) -> u32 {
    let mut start = 0u32;
    let mut column = 1u32;
    for ch in line_text.chars() {
        let end = start.saturating_add(encoding.units(ch));
        if character < end {
            return column;
        }
        start = end;
        column = column.saturating_add(1);
    }
    column
}

/// The server's 0-based `character` for a 1-based character column on a line (inverse of column_in_chars; columns past the end clamp to the line's end).
pub fn lsp_character(line_text: &str, column: u32, encoding: PositionEncoding) -> u32 {
    line_text
        .chars()
        .take(column.saturating_sub(1) as usize)
        .fold(0u32, |units, ch| units.saturating_add(encoding.units(ch)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMOJI_LINE: &str = "let s = \"😀中\"; ERROR";

    #[test]
    fn from_kind_maps_known_kinds() {
        assert_eq!(
            PositionEncoding::from_kind(Some(&PositionEncodingKind::UTF8)),
            PositionEncoding::Utf8
        );
        assert_eq!(
            PositionEncoding::from_kind(Some(&PositionEncodingKind::UTF16)),
            PositionEncoding::Utf16
        );
        assert_eq!(
            PositionEncoding::from_kind(Some(&PositionEncodingKind::UTF32)),
            PositionEncoding::Utf32
        );
    }

    #[test]
    fn from_kind_defaults_to_utf16_for_none_and_unknown() {
        assert_eq!(PositionEncoding::from_kind(None), PositionEncoding::Utf16);
        let unknown = PositionEncodingKind::new("utf-7");
        assert_eq!(
            PositionEncoding::from_kind(Some(&unknown)),
            PositionEncoding::Utf16
        );
    }

    #[test]
    fn kind_roundtrips_through_from_kind() {
        for encoding in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            assert_eq!(
                PositionEncoding::from_kind(Some(&encoding.kind())),
                encoding
            );
        }
    }

    #[test]
    fn ascii_offsets_are_the_same_in_every_encoding() {
        for encoding in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            assert_eq!(column_in_chars("let x = 1;", 0, encoding), 1);
            assert_eq!(column_in_chars("let x = 1;", 4, encoding), 5);
        }
    }

    #[test]
    fn utf16_offset_after_emoji_and_cjk_gives_char_column() {
        // `let s = "` is 9 units, 😀 is 2, 中 is 1, `"; ` is 3: E is at UTF-16 offset 15,
        // and it is the 15th char.
        assert_eq!(column_in_chars(EMOJI_LINE, 15, PositionEncoding::Utf16), 15);
    }

    #[test]
    fn utf8_offset_after_emoji_and_cjk_gives_char_column() {
        // 😀 is 4 bytes and 中 is 3 bytes: E is at byte 9 + 4 + 3 + 3 = 19.
        assert_eq!(column_in_chars(EMOJI_LINE, 19, PositionEncoding::Utf8), 15);
    }

    #[test]
    fn utf32_offset_is_the_char_index() {
        assert_eq!(column_in_chars(EMOJI_LINE, 14, PositionEncoding::Utf32), 15);
    }

    #[test]
    fn offset_inside_surrogate_pair_rounds_down() {
        // The emoji starts at UTF-16 offset 9 (column 10); offset 10 is its low surrogate.
        assert_eq!(column_in_chars(EMOJI_LINE, 9, PositionEncoding::Utf16), 10);
        assert_eq!(column_in_chars(EMOJI_LINE, 10, PositionEncoding::Utf16), 10);
        assert_eq!(column_in_chars(EMOJI_LINE, 11, PositionEncoding::Utf16), 11);
    }

    #[test]
    fn offset_inside_multibyte_char_rounds_down() {
        // 中 occupies bytes 13..16 (column 11).
        assert_eq!(column_in_chars(EMOJI_LINE, 13, PositionEncoding::Utf8), 11);
        assert_eq!(column_in_chars(EMOJI_LINE, 15, PositionEncoding::Utf8), 11);
        assert_eq!(column_in_chars(EMOJI_LINE, 16, PositionEncoding::Utf8), 12);
    }

    #[test]
    fn offset_past_end_clamps_to_length_plus_one() {
        assert_eq!(column_in_chars("abc", 3, PositionEncoding::Utf16), 4);
        assert_eq!(column_in_chars("abc", 100, PositionEncoding::Utf16), 4);
        assert_eq!(column_in_chars("中", 100, PositionEncoding::Utf8), 2);
        assert_eq!(column_in_chars("", 5, PositionEncoding::Utf32), 1);
    }

    #[test]
    fn lsp_character_after_emoji_and_cjk_in_every_encoding() {
        // E is the 15th char: UTF-16 offset 15, byte 19, scalar 14.
        assert_eq!(lsp_character(EMOJI_LINE, 15, PositionEncoding::Utf16), 15);
        assert_eq!(lsp_character(EMOJI_LINE, 15, PositionEncoding::Utf8), 19);
        assert_eq!(lsp_character(EMOJI_LINE, 15, PositionEncoding::Utf32), 14);
        // 中 (column 11) follows the 2-unit emoji.
        assert_eq!(lsp_character(EMOJI_LINE, 11, PositionEncoding::Utf16), 11);
        assert_eq!(lsp_character(EMOJI_LINE, 11, PositionEncoding::Utf8), 13);
    }

    #[test]
    fn lsp_character_roundtrips_column_in_chars_on_char_boundaries() {
        for encoding in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            for column in 1..=20 {
                let character = lsp_character(EMOJI_LINE, column, encoding);
                assert_eq!(column_in_chars(EMOJI_LINE, character, encoding), column);
            }
        }
    }

    #[test]
    fn lsp_character_past_end_clamps_to_line_end() {
        assert_eq!(lsp_character("中😀", 3, PositionEncoding::Utf16), 3);
        assert_eq!(lsp_character("中😀", 50, PositionEncoding::Utf16), 3);
        assert_eq!(lsp_character("中😀", 50, PositionEncoding::Utf8), 7);
        assert_eq!(lsp_character("", 9, PositionEncoding::Utf32), 0);
    }

    #[test]
    fn lsp_character_column_zero_and_one_are_the_line_start() {
        assert_eq!(lsp_character("abc", 0, PositionEncoding::Utf16), 0);
        assert_eq!(lsp_character("abc", 1, PositionEncoding::Utf16), 0);
    }
}
