//! The identity of one running language server: a server id and the root it serves.

use std::path::PathBuf;

/// One server instance: which server, for which project root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey {
    /// The server id from the configuration.
    pub id: String,
    /// The resolved project root it serves.
    pub root: PathBuf,
}

impl ServerKey {
    /// The root folder's name, for `workspaceFolders`.
    pub fn root_name(&self) -> String {
        self.root
            .file_name()
            .map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned())
    }
}
