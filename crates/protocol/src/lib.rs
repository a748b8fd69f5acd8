//! squiggle-protocol: the pure part of squiggle: value types, conversion from LSP, merging,
//! rendering, framing, paths. No processes, no actors, no I/O beyond reading the file system
//! where a function says so.
//!
//! # Layout
//!
//! - `diagnostic`: the value types every door shares (diagnostic, severity, server status).
//! - `convert`: a server's LSP diagnostics into squiggle's.
//! - `encoding`: position encodings, and their offsets as character columns.
//! - `publish`: lean readers of pushed and pulled diagnostics, straight from a frame's bytes.
//! - `merge`: merging, filtering and ordering the diagnostics of several servers.
//! - `outcome`: whether a file was checked, and if not, why.
//! - `server_report`: one server's part in a check, and what its answer rests on.
//! - `report`: what a check produced: diagnostics per file and the servers involved.
//! - `render`: reports as text for people, JSON for programs, text for language models.
//! - `feedback`: the text an edit tool appends after an edit, within caps.
//! - `delta`: the new errors since the last snapshot.
//! - `baseline`: which of a file's errors are new since what was last shown for it.
//! - `navigation`: definitions, references, symbols and hovers as values and text.
//! - `service`: the contract of `squiggle serve`: methods, params and results.
//! - `frame_guard`: a tolerant reader of LSP `Content-Length` frames.
//! - `line_limit`: MCP stdio lines over a size limit or nested too deep, and the id each carries.
//! - `watch`: file-watcher registrations: LSP globs and the kinds of change.
//! - `paths`: paths and `file://` URIs, the same on every OS.
//! - `strict`: finding a `null` a strict server would refuse.
//! - `folder_report`: the diagnostics of many files under a folder, grouped and capped.

#![warn(missing_docs)]
#![deny(clippy::print_stdout)]

pub mod baseline;
pub mod convert;
pub mod delta;
pub mod diagnostic;
pub mod encoding;
pub mod feedback;
pub mod folder_report;
pub mod frame_guard;
pub mod line_limit;
pub mod merge;
pub mod navigation;
pub mod outcome;
pub mod paths;
pub mod publish;
pub mod render;
pub mod report;
pub mod server_report;
pub mod service;
pub mod strict;
pub mod watch;

pub use baseline::Baseline;
pub use convert::{convert_diagnostics, severity_from_lsp};
pub use delta::DeltaKey;
pub use diagnostic::{
    Diagnostic, Origin, ServerMetrics, ServerState, ServerStatus, Severity, UnknownSeverity,
};
pub use encoding::{column_in_chars, lsp_character, PositionEncoding};
pub use feedback::{
    not_checked_section, render_earlier, render_feedback, render_feedback_marked, render_later,
    unfinished_section, unsearched_section, Caps, NewMarks, NewOnly, Scope, Unsearched,
};
pub use frame_guard::{encode_frame, BadFrame, FrameGuard};
pub use navigation::{Location, Symbol};
pub use outcome::{Outcome, OutcomeKind};
pub use render::BlockFormat;
pub use report::{Basis, Report, ServerReport};
