//! Renderers of a [`Report`](crate::Report) for people, programs and language models, and for
//! CI (SARIF for code scanning, GitHub workflow commands).

pub mod github;
pub mod json;
pub mod llm;
pub mod plain;
pub mod sarif;
pub mod text;

pub use github::render_github;
pub use json::render_json;
pub use llm::{
    escape, not_checked_note, render_file_block, render_llm, render_marked_block,
    render_tagged_block, BlockFormat,
};
pub use plain::{cut_chars, display_path, escape_controls, one_line, one_line_cut};
pub use sarif::render_sarif;
pub use text::{not_checked_line, render_text, summary};
