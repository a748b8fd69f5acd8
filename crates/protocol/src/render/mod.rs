//! Renderers of a [`Report`](crate::Report) for people, programs and language models.

pub mod json;
pub mod llm;
pub mod plain;
pub mod text;

pub use json::render_json;
pub use llm::{escape, not_checked_note, render_file_block, render_llm};
pub use plain::{display_path, escape_controls, one_line};
pub use text::{not_checked_line, render_text, summary};
