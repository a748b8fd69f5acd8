//! Where each server's command lives, looked up once per runtime.

use std::path::{Path, PathBuf};

use dashmap::DashMap;
use squiggle_config::ServerSpec;

/// Located server commands, cached by command name.
#[derive(Debug)]
pub struct Commands {
    workspace_root: PathBuf,
    found: DashMap<String, Option<PathBuf>>,
}

impl Commands {
    /// An empty cache for a workspace.
    pub fn new(workspace_root: &Path) -> Self {
        Self {
            workspace_root: workspace_root.to_path_buf(),
            found: DashMap::new(),
        }
    }

    /// The executable for a server, if it is installed.
    pub fn locate(&self, spec: &ServerSpec) -> Option<PathBuf> {
        self.found
            .entry(spec.command.clone())
            .or_insert_with(|| {
                squiggle_config::locate_command(&spec.command, &self.workspace_root, &[])
            })
            .clone()
    }
}
