//! Hover contents (markdown, plain text, marked strings) as plain text.

use lsp_types::{Hover, HoverContents, MarkedString, MarkupKind};
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::ops::Range;

/// Hover contents as plain text: markdown parsed as CommonMark and written back with its line layout (see [`markdown_to_text`]); MarkedString::LanguageString -> its value; arrays joined by a blank line.
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

/// Markdown as plain text, keeping the author's lines: code blocks keep their code without the
/// fences, headings lose their `#` marks, emphasis, link and image syntax give way to their text
/// (`[text](url)` -> `text`), code spans stay as written, entities are decoded (`&nbsp;` -> a
/// space), list and quote markers and indentation are kept as written, and blocks are separated
/// as in the source (a blank line where it has one); then [`tidy`].
fn markdown_to_text(markdown: &str) -> String {
    let mut writer = Writer::new(markdown);
    for (event, range) in Parser::new_ext(markdown, Options::empty()).into_offset_iter() {
        writer.event(event, range);
    }
    tidy(writer.out.lines().map(str::to_string))
}

/// Writes parser events as text lines, taking line layout and prefixes from the source.
struct Writer<'a> {
    /// The markdown being converted.
    source: &'a str,
    /// The byte offsets of its line breaks, to tell which line an offset is on.
    newlines: Vec<usize>,
    /// The text written so far.
    out: String,
    /// Where the last written block or inline piece ends in the source (None: nothing yet).
    last_end: Option<usize>,
    /// A line was started for a list item and nothing is on it yet.
    line_open: bool,
    /// The next inline piece starts a line and is preceded by its source prefix (indent, markers).
    need_prefix: bool,
    /// Inside a heading (its `#` marks are not part of the prefix).
    in_heading: bool,
    /// Inside a code block: the prefix each of its lines takes (its container's indent and
    /// quote marks); None outside one.
    code_prefix: Option<String>,
    /// The code block is written from the source already (an indented one): skip its text.
    code_written: bool,
    /// The next code text starts a line.
    code_line_start: bool,
}

impl<'a> Writer<'a> {
    /// A writer over `source` with nothing written.
    fn new(source: &'a str) -> Self {
        Writer {
            source,
            newlines: source.match_indices('\n').map(|(at, _)| at).collect(),
            out: String::new(),
            last_end: None,
            line_open: false,
            need_prefix: false,
            in_heading: false,
            code_prefix: None,
            code_written: false,
            code_line_start: true,
        }
    }

    /// Handles one parser event found at `range` of the source.
    fn event(&mut self, event: Event<'a>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag, range),
            Event::Text(text) if self.code_prefix.is_some() => self.code(&text),
            Event::Text(text) => self.inline(&text.replace('\u{a0}', " "), range),
            Event::Code(_) | Event::InlineHtml(_) | Event::InlineMath(_) => {
                let written = &self.source[range.clone()];
                self.inline(written, range);
            }
            Event::Html(html) => self.out.push_str(&html),
            Event::SoftBreak | Event::HardBreak => {
                self.out.push('\n');
                self.need_prefix = true;
                self.last_end = Some(range.end);
            }
            Event::Rule => {
                self.begin_line(range.start);
                self.finish_block(range.end);
            }
            Event::FootnoteReference(_) | Event::TaskListMarker(_) | Event::DisplayMath(_) => {
                self.inline(&self.source[range.clone()], range);
            }
        }
    }

    /// The start of a block: a new line for leaf blocks and list items.
    fn start(&mut self, tag: Tag<'a>, range: Range<usize>) {
        match tag {
            Tag::Item => {
                if !self.line_open {
                    self.begin_line(range.start);
                }
                self.line_open = true;
            }
            Tag::Paragraph | Tag::Heading { .. } | Tag::HtmlBlock => {
                if !self.line_open {
                    self.begin_line(range.start);
                }
                self.line_open = false;
                self.in_heading = matches!(tag, Tag::Heading { .. });
            }
            Tag::CodeBlock(kind) => {
                if !self.line_open {
                    self.begin_line(range.start);
                }
                self.line_open = false;
                self.need_prefix = false;
                let from = line_start(self.source, range.start);
                self.code_written = matches!(kind, CodeBlockKind::Indented);
                if self.code_written {
                    // An indented block's indent is what marks it as code: keep its lines as written.
                    self.out.push_str(&self.source[from..range.end]);
                }
                let prefix = self.source[from..range.start]
                    .chars()
                    .map(|ch| {
                        if ch == '>' || ch.is_whitespace() {
                            ch
                        } else {
                            ' '
                        }
                    })
                    .collect();
                self.code_prefix = Some(prefix);
                self.code_line_start = true;
            }
            Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
            | Tag::Superscript
            | Tag::Subscript
            | Tag::Link { .. }
            | Tag::Image { .. } => self.inline("", range.start..range.start),
            _ => {}
        }
    }

    /// The end of a block: remembers where it ends for the spacing before the next one.
    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        match tag {
            TagEnd::CodeBlock | TagEnd::HtmlBlock => {
                self.code_prefix = None;
                let kept = self.out.trim_end_matches('\n').len();
                self.out.truncate(kept);
                self.finish_block(range.end);
            }
            TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item => {
                self.in_heading = false;
                self.finish_block(range.end);
            }
            _ => {}
        }
    }

    /// Ends the current line before a block starting at `start`: with a blank line when the
    /// source has one between the previous block and this one.
    fn begin_line(&mut self, start: usize) {
        if let Some(end) = self.last_end {
            let end_line = self.line_of(self.source[..end].trim_end().len());
            let start_line = self.line_of(start);
            self.out.push_str(if start_line > end_line + 1 {
                "\n\n"
            } else {
                "\n"
            });
        }
        self.last_end = Some(start);
        self.need_prefix = true;
    }

    /// The 0-based line that byte `at` of the source is on.
    fn line_of(&self, at: usize) -> usize {
        self.newlines.partition_point(|&newline| newline < at)
    }

    /// Marks a block as written up to `end` (an empty one still takes its line).
    fn finish_block(&mut self, end: usize) {
        self.line_open = false;
        self.need_prefix = false;
        self.last_end = Some(end);
    }

    /// Writes inline text found at `range`, preceded by its line's source prefix when it starts one.
    fn inline(&mut self, text: &str, range: Range<usize>) {
        if self.need_prefix {
            let prefix = &self.source[line_start(self.source, range.start)..range.start];
            // An escaped character's text starts after its backslash.
            let prefix = prefix.strip_suffix('\\').unwrap_or(prefix);
            let prefix = if self.in_heading {
                prefix.trim_end_matches([' ', '\t']).trim_end_matches('#')
            } else {
                prefix
            };
            self.out.push_str(prefix);
            self.need_prefix = false;
        }
        self.out.push_str(text);
        self.line_open = false;
        self.last_end = Some(range.end);
    }

    /// Writes code text verbatim, each line after the block's prefix (none for an indented block,
    /// written from the source already).
    fn code(&mut self, text: &str) {
        if self.code_written {
            return;
        }
        let prefix = self.code_prefix.as_deref().unwrap_or_default();
        for piece in text.split_inclusive('\n') {
            if self.code_line_start {
                self.out.push_str(prefix);
            }
            self.out.push_str(piece);
            self.code_line_start = piece.ends_with('\n');
        }
    }
}

/// The index where the line holding byte `at` of `source` begins.
fn line_start(source: &str, at: usize) -> usize {
    source[..at].rfind('\n').map_or(0, |newline| newline + 1)
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
    #[test]
    fn hover_markdown_keeps_list_and_quote_markers_and_indentation() {
        let hover = markdown(
            "`int` *docs*:\n\n* `x`: an *int*\n  continued\n  - nested\n\n1. first\n\n> quoted **bold**\n> more",
        );
        assert_eq!(
            hover_text(&hover),
            "`int` docs:\n\n* `x`: an int\n  continued\n  - nested\n\n1. first\n\n> quoted bold\n> more"
        );
    }

    #[test]
    fn hover_markdown_code_keeps_its_indent_in_items_and_as_indented_blocks() {
        let hover = markdown(
            "- item\n\n  ```\n  code in item\n  ```\n- next\n\n    indented code\n\nafter",
        );
        assert_eq!(
            hover_text(&hover),
            "- item\n\n  code in item\n- next\n\n    indented code\n\nafter"
        );
    }

    #[test]
    fn hover_markdown_escapes_and_entities_are_decoded_and_code_spans_kept() {
        let hover = markdown("\\*not em\\* &lt;T&gt; &amp; &copy; ``a`b`` 2 * 3 * 4 snake_case");
        assert_eq!(
            hover_text(&hover),
            "*not em* <T> & © ``a`b`` 2 * 3 * 4 snake_case"
        );
    }

    #[test]
    fn hover_markdown_autolinks_references_setext_and_hard_breaks_read_as_text() {
        let hover = markdown(
            "Setext\n======\nsee <http://x.org> and [ref][r]\n\n[r]: http://x\n\nline one\\\nline two",
        );
        assert_eq!(
            hover_text(&hover),
            "Setext\nsee http://x.org and ref\n\nline one\nline two"
        );
    }

    #[test]
    fn hover_markdown_of_nothing_or_empty_blocks_is_empty() {
        assert_eq!(hover_text(&markdown("a\n- - x")), "a\n- - x");
        for empty in ["", "   ", "#", "```", "---", "\r\n\r\n"] {
            assert_eq!(hover_text(&markdown(empty)), "", "{empty:?}");
        }
    }
}
