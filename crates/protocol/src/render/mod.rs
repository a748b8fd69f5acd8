//! Renderers of a [`Report`](crate::Report) for people, programs and language models.

pub mod json;
pub mod llm;
pub mod text;

pub use json::render_json;
pub use llm::{escape, render_file_block, render_llm};
pub use text::{render_text, summary};

/// A message on one line: line breaks and the whitespace around them collapse to one space.
pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
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
            "mismatched types expected u32 found &str"
        );
    }
}
