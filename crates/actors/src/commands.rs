//! Whether each server's command can run, found and probed once per runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dashmap::DashMap;
use squiggle_config::{Availability, ServerSpec};
use tokio::sync::OnceCell;

/// Server commands by server id (the configuration is fixed for a runtime), each looked up and
/// probed once, off the runtime's workers; concurrent askers share the one probe.
#[derive(Debug)]
pub struct Commands {
    workspace_root: PathBuf,
    found: DashMap<String, Arc<OnceCell<Availability>>>,
}

impl Commands {
    /// An empty cache for a workspace.
    pub fn new(workspace_root: &Path) -> Self {
        Self {
            workspace_root: workspace_root.to_path_buf(),
            found: DashMap::new(),
        }
    }

    /// Whether a server's command can run, and where it is.
    pub async fn availability(&self, spec: &ServerSpec) -> Availability {
        if let Some(found) = self
            .found
            .get(spec.id.as_str())
            .and_then(|c| c.get().cloned())
        {
            return found;
        }
        let cell = self.found.entry(spec.id.clone()).or_default().clone();
        cell.get_or_init(|| {
            let spec = spec.clone();
            let root = self.workspace_root.clone();
            async move {
                tokio::task::spawn_blocking(move || Availability::of(&spec, &root))
                    .await
                    .unwrap_or(Availability::NotFound)
            }
        })
        .await
        .clone()
    }

    /// Whether a server's command runs.
    pub async fn runs(&self, spec: &ServerSpec) -> bool {
        if let Some(runs) =
            (self.found.get(spec.id.as_str())).and_then(|cell| cell.get().map(Availability::runs))
        {
            return runs;
        }
        self.availability(spec).await.runs()
    }
}
