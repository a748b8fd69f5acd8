//! Whether each server's command can run, found once per runtime (a file lookup, what a check
//! goes by) and probed once per runtime when asked (what a status shows).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dashmap::DashMap;
use squiggle_config::{Availability, ServerSpec};
use tokio::sync::OnceCell;

/// What is known of each server's command, by server id (the configuration is fixed for a
/// runtime).
type Known = DashMap<String, Arc<OnceCell<Availability>>>;

/// Server commands by server id, each looked up once and probed at most once, off the
/// runtime's workers; concurrent askers share the one lookup or probe.
#[derive(Debug)]
pub struct Commands {
    workspace_root: PathBuf,
    found: Known,
    probed: Known,
}

impl Commands {
    /// An empty cache for a workspace.
    pub fn new(workspace_root: &Path) -> Self {
        Self {
            workspace_root: workspace_root.to_path_buf(),
            found: DashMap::new(),
            probed: DashMap::new(),
        }
    }

    /// Where a server's command is, found without running it ([`Availability::found`]):
    /// what a check starts a server by.
    pub async fn found(&self, spec: &ServerSpec) -> Availability {
        let root = self.workspace_root.clone();
        once(&self.found, spec, move |spec| {
            Availability::found(&spec, &root)
        })
        .await
    }

    /// Whether a server's command can run, and where it is: found, then its version flag run
    /// briefly ([`Availability::probed`]). For status; a check does not wait for it.
    pub async fn availability(&self, spec: &ServerSpec) -> Availability {
        let found = self.found(spec).await;
        let root = self.workspace_root.clone();
        once(&self.probed, spec, move |spec| found.probed(&spec, &root)).await
    }

    /// Whether a check starts a server: its command is found (and not known to be unable to
    /// serve without running it).
    pub async fn starts(&self, spec: &ServerSpec) -> bool {
        self.found(spec).await.starts()
    }
}

/// The value known for `spec` in `known`, worked out by `work` (blocking) the first time.
async fn once(
    known: &Known,
    spec: &ServerSpec,
    work: impl FnOnce(ServerSpec) -> Availability + Send + 'static,
) -> Availability {
    if let Some(value) = known.get(spec.id.as_str()).and_then(|c| c.get().cloned()) {
        return value;
    }
    let cell = known.entry(spec.id.clone()).or_default().clone();
    cell.get_or_init(|| {
        let spec = spec.clone();
        async move {
            tokio::task::spawn_blocking(move || work(spec))
                .await
                .unwrap_or(Availability::NotFound)
        }
    })
    .await
    .clone()
}
