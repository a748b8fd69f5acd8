//! The documents a server has open, shared between the server actor (which syncs them) and the
//! client loop (which needs their text to convert positions).

use std::path::PathBuf;
use std::sync::Arc;

use async_lsp::lsp_types::Url;
use dashmap::DashMap;

/// One open document: its URI, the version last sent and its text.
#[derive(Debug, Clone)]
pub struct Document {
    /// The URI it was opened under (made once: every later message reuses it).
    pub uri: Url,
    /// The version sent with the last didOpen/didChange.
    pub version: i32,
    /// The full text sent with it.
    pub text: Arc<str>,
}

/// Open documents by absolute path.
pub type Documents = Arc<DashMap<PathBuf, Document>>;
