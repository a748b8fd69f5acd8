//! Navigation results (definitions, references, symbols, hovers) as compact values and text.
//!
//! Layout: `types` (Location, Symbol), `convert` (from lsp_types answers), `lines` (a document's
//! lines and columns), `markdown` (hover contents as text), `words` (the identifier at a column),
//! `render` (locations, outlines, symbol lists as text), and the features built on them:
//! `lookup`, `locals`, `body`, `call_hierarchy`, `workspace_edit`, `diff`.

mod body;
mod call_hierarchy;
mod convert;
mod diff;
mod lines;
mod locals;
mod lookup;
mod markdown;
mod render;
mod types;
mod words;
mod workspace_edit;

pub use body::{body_of, enclosing_symbol, render_body, Body};
pub use call_hierarchy::{
    count_calls, render_calls, sort_calls, Call, CallCaps, Direction, MAX_DEPTH,
};
pub use convert::{
    definition_targets, document_symbols, location_from_lsp, symbol_kind_name,
    workspace_symbol_entries, WorkspaceSymbolEntry,
};
pub use diff::{changed_lines, render_diff, ChangedLine};
pub use locals::without_locals;
pub use lookup::{resolve_symbol, Candidate, Resolved};
pub use markdown::hover_text;
pub use render::{render_locations, render_outline, render_symbols};
pub use types::{Location, Symbol, SymbolRange};
pub use words::{snap_to_identifier, word_at};
pub use workspace_edit::{content_hash, plan_edit, EditError, EditPlan, FileChange};
