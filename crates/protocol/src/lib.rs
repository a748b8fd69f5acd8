//! squiggle-protocol: the pure part of squiggle: value types, conversion from LSP, merging,
//! rendering, framing, paths. No processes, no actors, no I/O beyond reading the file system
//! where a function says so.

#![deny(clippy::print_stdout)]

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
pub mod service;
pub mod strict;
pub mod watch;

pub use convert::{convert_diagnostics, severity_from_lsp};
pub use delta::DeltaKey;
pub use diagnostic::{Diagnostic, Origin, ServerState, ServerStatus, Severity, UnknownSeverity};
pub use encoding::{column_in_chars, lsp_character, PositionEncoding};
pub use feedback::{not_checked_section, render_feedback, Caps, Scope};
pub use frame_guard::{encode_frame, BadFrame, FrameGuard};
pub use navigation::{Location, Symbol};
pub use outcome::{Outcome, OutcomeKind};
pub use report::{Basis, Report, ServerReport};
