//! Identifiers on a line of source: the word at a column, and snapping a column onto one.

/// Whether `ch` can be part of an identifier: Unicode alphanumerics, `_` and `$`.
pub(super) fn is_identifier_char(ch: char) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
