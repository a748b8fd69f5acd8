//! Hover contents (markdown, plain text, marked strings) as plain text.

use lsp_types::{Hover, HoverContents, MarkedString, MarkupKind};

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

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{LanguageString, MarkupContent};

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
}
