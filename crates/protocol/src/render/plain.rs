//! The rules every plain-text rendering follows, so that what a server or a file name holds
//! cannot break or forge output lines: one line per message, and file names with control
//! characters quoted.

use std::borrow::Cow;

/// Whether a character ends a line somewhere: the line breaks of ASCII and Unicode.
fn breaks_lines(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Whether a character may not appear as it is in a plain-text line.
fn unsafe_in_line(c: char) -> bool {
    (c.is_control() && c != '\t') || breaks_lines(c)
}

/// A message on one line, its structure kept: each of its lines (split at `\n`, `\r` and the
/// Unicode line separators, the whitespace around them dropped) joined to the one before by
/// `; ` (pyright's `Type "str" is not assignable to declared type "int"` then its indented
/// reason), or by a space when the line before ends in punctuation (`parameters:` then a
/// list); other control characters are shown escaped (`\u{1b}`).
pub fn one_line(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let lines = (message.split(breaks_lines))
        .map(str::trim)
        .filter(|line| !line.is_empty());
    for line in lines {
        match out.chars().last() {
            None => {}
            Some(':' | ';' | ',' | '.' | '!' | '?' | '-' | '(' | '[' | '{') => out.push(' '),
            Some(_) => out.push_str("; "),
        }
        out.push_str(&escape_controls(line));
    }
    out
}

/// [`one_line`] of at most `max_chars` characters: a longer one is cut there and ends in `…`
/// (a server's message can be megabytes long; only its start reaches a model). Only what is
/// kept is built.
pub fn one_line_cut(message: &str, max_chars: usize) -> String {
    // Twice the characters kept, and some: enough for the breaks and indentation one_line drops.
    let read = max_chars.saturating_mul(2).saturating_add(64);
    let end = (message.char_indices().nth(read)).map_or(message.len(), |(at, _)| at);
    let line = one_line(&message[..end]);
    match cut_chars(&line, max_chars) {
        Cow::Borrowed(_) if end < message.len() => format!("{line}…"),
        Cow::Borrowed(_) => line,
        Cow::Owned(cut) => cut,
    }
}

/// The text cut after `max_chars` characters, with `…` in place of the rest; a text that fits
/// is returned as it is.
pub fn cut_chars(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
    }
}

/// The text with control characters and line breaks escaped as Rust writes them (`\n`,
/// `\u{1b}`); text without any is returned as it is.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_in_line) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_in_line(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A file name as plain output shows it: as it is, or, when it holds a control character or a
/// line break, quoted with Rust's escapes (`"evil\nfake.py"`), so that it stays on its line.
pub fn display_path(path: &str) -> Cow<'_, str> {
    if path.chars().any(unsafe_in_line) {
        Cow::Owned(format!("{path:?}"))
    } else {
        Cow::Borrowed(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_keeps_single_line_messages() {
        assert_eq!(
            one_line("expected `u32`, found `&str`"),
            "expected `u32`, found `&str`"
        );
    }

    #[test]
    fn one_line_collapses_line_breaks_and_indentation() {
        assert_eq!(
            one_line("mismatched types\n  expected u32\r\n\n   found &str\n"),
            "mismatched types; expected u32; found &str"
        );
    }

    #[test]
    fn one_line_keeps_a_messages_lines_apart() {
        // (message, one line)
        let table = [
            (
                "Type \"Literal['circle']\" is not assignable to declared type \"int\"\n  \"Literal['circle']\" is not assignable to \"int\"",
                "Type \"Literal['circle']\" is not assignable to declared type \"int\"; \"Literal['circle']\" is not assignable to \"int\"",
            ),
            (
                "Arguments missing for parameters:\n  \"x\", \"y\"",
                "Arguments missing for parameters: \"x\", \"y\"",
            ),
            ("One sentence.\nAnother", "One sentence. Another"),
            ("\n\n  only one  \n", "only one"),
        ];
        for (message, line) in table {
            assert_eq!(one_line(message), line, "{message:?}");
        }
    }

    #[test]
    fn one_line_treats_lone_carriage_returns_and_unicode_separators_as_breaks() {
        assert_eq!(one_line("a\rb\u{2028}c\u{85}d"), "a; b; c; d");
    }

    #[test]
    fn one_line_escapes_other_control_characters_and_keeps_tabs() {
        assert_eq!(
            one_line("\u{1b}[31mred\u{1b}[0m\tx"),
            "\\u{1b}[31mred\\u{1b}[0m\tx"
        );
    }

    #[test]
    fn one_line_cut_keeps_what_fits_and_cuts_the_rest_with_an_ellipsis() {
        // (message, at most, line)
        let table = [
            ("short", 5, "short".to_string()),
            ("shorter\n  than", 20, "shorter; than".to_string()),
            ("one two three", 7, "one two…".to_string()),
            ("é".repeat(9).as_str(), 3, "ééé…".to_string()),
            (
                "x".repeat(4 << 20).as_str(),
                10,
                format!("{}…", "x".repeat(10)),
            ),
        ]
        .map(|(message, at_most, line)| (message.to_string(), at_most, line));
        for (message, at_most, line) in table {
            assert_eq!(one_line_cut(&message, at_most), line, "{at_most}");
        }
    }

    #[test]
    fn plain_names_are_shown_as_they_are() {
        assert!(matches!(
            display_path("src/a b.py"),
            Cow::Borrowed("src/a b.py")
        ));
        assert!(matches!(escape_controls("x \"y\""), Cow::Borrowed(_)));
    }

    #[test]
    fn a_name_with_a_newline_is_quoted_and_stays_on_one_line() {
        let name = "evil\nfake.py:99:1: error[X]: injected line\nz.py";
        assert_eq!(
            display_path(name),
            "\"evil\\nfake.py:99:1: error[X]: injected line\\nz.py\""
        );
        assert!(!display_path(name).contains('\n'));
        assert_eq!(escape_controls("a\tb\nc\u{7f}"), "a\tb\\nc\\u{7f}");
    }
}
