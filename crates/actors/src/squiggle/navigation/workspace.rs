//! Workspace symbol search that works from a cold start: the workspace root's servers (not one
//! per nested project), each with one file of its language open so that it loads the project.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use squiggle_protocol::navigation::{location_from_lsp, workspace_symbol_entries, SymbolRange};
use squiggle_protocol::{paths, Symbol};

use super::{Answer, NavError, Ready};
use crate::key::ServerKey;
use crate::registry::restarts::Restart;
use crate::registry::Acquired;
use crate::server::navigate::{NavAnswer, NavRequest};
use crate::server::ServerHandle;
use crate::squiggle::{Squiggle, ASK_LIMIT};

/// A server for the workspace root and the file to open on it so that it loads the project.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RootPick {
    /// The server, for the workspace root.
    key: ServerKey,
    /// A file of its language.
    file: PathBuf,
    /// Whether the file belongs to a nested project's server (so it is closed again after).
    borrowed: bool,
}

impl Squiggle {
    /// Symbols whose names match `query` across the workspace: asked of the workspace root's
    /// servers (started if need be, each with a file of its language opened so that it has
    /// loaded the project) and of every other running server that searches.
    pub async fn workspace_symbols(&self, query: &str) -> Result<Answer<Vec<Symbol>>, NavError> {
        if !self.inner.config.enabled {
            return Err(NavError::Disabled);
        }
        let picks = self.root_picks().await;
        let prepared = picks.iter().map(|pick| self.prepare_searcher(pick));
        let mut searchers = Vec::new();
        let mut notes = Vec::new();
        for (ready, mut said) in futures::future::join_all(prepared).await {
            searchers.extend(ready);
            notes.append(&mut said);
        }
        for (key, server) in self.active_servers() {
            if searchers.iter().any(|ready: &Ready| ready.key == key) {
                continue;
            }
            let Some(info) = server.info(ASK_LIMIT).await else {
                continue;
            };
            if info.provides.workspace_symbols {
                searchers.push(Ready { key, server, info });
            }
        }
        if searchers.is_empty() && notes.is_empty() {
            notes.push("no language server for this workspace searches symbols".to_string());
        }
        let symbols = self.search(&searchers, query, &mut notes).await;
        for pick in picks.iter().filter(|pick| pick.borrowed) {
            if let Some(ready) = searchers.iter().find(|ready| ready.key == pick.key) {
                ready.server.close(pick.file.clone());
            }
        }
        Ok(Answer {
            items: symbols,
            position: None,
            subject: None,
            notes,
        })
    }

    /// The workspace root's servers, each with the file to open on it.
    async fn root_picks(&self) -> Vec<RootPick> {
        let samples = self.workspace_samples().await;
        let servers = &self.inner.config.servers;
        let rank = |id: &str, file: &Path| {
            let extension = file.extension().map(|e| e.to_string_lossy().to_lowercase());
            servers
                .get(id)
                .into_iter()
                .flat_map(|spec| spec.extensions.iter())
                .position(|e| Some(e.to_lowercase()) == extension)
                .unwrap_or(usize::MAX)
        };
        root_picks(&samples, &self.inner.workspace_root, &rank)
    }

    /// The root server of `pick`, started (within the first-touch timeout) and with its file
    /// open (waiting, like any first question about a file, for the server to load the
    /// project), if it searches symbols; notes for what did not go as it should.
    async fn prepare_searcher(&self, pick: &RootPick) -> (Option<Ready>, Vec<String>) {
        let mut notes = Vec::new();
        let limit = Duration::from_millis(self.inner.config.first_touch_timeout_ms);
        let acquired = self
            .inner
            .registry
            .acquire(pick.key.clone(), Restart::Automatic, limit);
        let server = match acquired.await {
            Some(Acquired::Ready { server, .. }) => server,
            Some(Acquired::Unusable { .. }) => return (None, notes),
            None => {
                let id = &pick.key.id;
                notes.push(format!("{id} is still starting; results may be incomplete"));
                return (None, notes);
            }
        };
        let Some(info) = server.info(ASK_LIMIT).await else {
            return (None, notes);
        };
        if !info.provides.workspace_symbols {
            return (None, notes);
        }
        let ready = Ready {
            key: pick.key.clone(),
            server,
            info,
        };
        match self.text_of(&pick.file, None).await {
            Ok(text) => {
                let text: Arc<str> = Arc::from(text);
                self.open_on(&ready, &pick.file, &text, &mut notes).await;
            }
            Err(skip) => {
                tracing::debug!(file = %pick.file.display(), %skip, "not opened for the search")
            }
        }
        (Some(ready), notes)
    }

    /// Each server's symbols matching `query`, placed with their files' texts, sorted by file
    /// and position, without repeats.
    async fn search(
        &self,
        searchers: &[Ready],
        query: &str,
        notes: &mut Vec<String>,
    ) -> Vec<Symbol> {
        // Each server's entries, with the encoding their positions are in; the files they name
        // are read afterwards, all at once, off the runtime's workers.
        let mut found = Vec::new();
        for ready in searchers {
            self.note_busy(ready, notes).await;
            let Some(NavAnswer::WorkspaceSymbols(Some(response))) = self
                .navigate(ready, NavRequest::WorkspaceSymbols(query.to_string()))
                .await
            else {
                continue;
            };
            for (uri, name, kind, container, range) in workspace_symbol_entries(&response) {
                let Some(path) = paths::uri_to_path(uri.as_str()).map(PathBuf::from) else {
                    continue;
                };
                found.push((path, name, kind, container, range, ready.info.encoding));
            }
        }
        let texts = self
            .read_texts(found.iter().map(|(path, ..)| path.clone()))
            .await;
        let mut symbols = Vec::new();
        for (path, name, kind, container, range, encoding) in found {
            let relative = paths::relative_to(&self.inner.workspace_root, &path);
            let text = texts.get(&path).cloned().flatten();
            let (line, column, extent) = match range {
                Some(range) => {
                    let at = location_from_lsp(&relative, &range, text.as_deref(), encoding);
                    let extent = SymbolRange {
                        start_line: at.line,
                        start_char: at.column,
                        end_line: at.end_line,
                        end_char: at.end_column,
                    };
                    (at.line, at.column, extent)
                }
                None => (1, 1, SymbolRange::at(1, 1)),
            };
            symbols.push(Symbol {
                name,
                kind: kind.to_string(),
                detail: None,
                file: relative,
                line,
                column,
                end_line: line,
                range: extent,
                container,
                children: Vec::new(),
            });
        }
        symbols.sort_by(|a, b| {
            (&a.file, a.line, a.column, &a.name).cmp(&(&b.file, b.line, b.column, &b.name))
        });
        symbols.dedup();
        symbols
    }

    /// The running servers, by key.
    fn active_servers(&self) -> Vec<(ServerKey, ServerHandle)> {
        let mut active: Vec<_> = self
            .inner
            .active
            .iter()
            .map(|entry| (entry.key().clone(), entry.value().clone()))
            .collect();
        active.sort_by(|a, b| a.0.cmp(&b.0));
        active
    }
}

/// For each server id among `samples` (files with the server that would serve each), the
/// server for the workspace `root` and the file to open on it: one whose own project is the
/// root if there is one, else one of a nested project (borrowed); the best by `rank` (the
/// server's own order of extensions), then the shallowest, then by name.
fn root_picks(
    samples: &[(ServerKey, PathBuf)],
    root: &Path,
    rank: &dyn Fn(&str, &Path) -> usize,
) -> Vec<RootPick> {
    let mut best: BTreeMap<&str, (bool, usize, usize, &Path)> = BTreeMap::new();
    for (key, file) in samples {
        let borrowed = key.root != root;
        let score = (
            borrowed,
            rank(&key.id, file),
            file.components().count(),
            file.as_path(),
        );
        let entry = best.entry(key.id.as_str()).or_insert(score);
        if score < *entry {
            *entry = score;
        }
    }
    best.into_iter()
        .map(|(id, (borrowed, _, _, file))| RootPick {
            key: ServerKey {
                id: id.to_string(),
                root: root.to_path_buf(),
            },
            file: file.to_path_buf(),
            borrowed,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, root: &str) -> ServerKey {
        ServerKey {
            id: id.to_string(),
            root: PathBuf::from(root),
        }
    }

    fn rank(_: &str, file: &Path) -> usize {
        match file.extension().and_then(|e| e.to_str()) {
            Some("ts") => 0,
            Some("js") => 1,
            _ => 2,
        }
    }

    #[test]
    fn one_root_server_per_id_with_a_file_of_the_roots_own_project() {
        let samples = vec![
            (key("pyright", "/ws/sub1"), PathBuf::from("/ws/sub1/a.py")),
            (key("pyright", "/ws"), PathBuf::from("/ws/pkg/deep/b.py")),
            (key("pyright", "/ws"), PathBuf::from("/ws/pkg/c.py")),
            (key("ruff", "/ws/sub2"), PathBuf::from("/ws/sub2/d.py")),
        ];
        assert_eq!(
            root_picks(&samples, Path::new("/ws"), &rank),
            vec![
                RootPick {
                    key: key("pyright", "/ws"),
                    file: PathBuf::from("/ws/pkg/c.py"),
                    borrowed: false,
                },
                RootPick {
                    key: key("ruff", "/ws"),
                    file: PathBuf::from("/ws/sub2/d.py"),
                    borrowed: true,
                },
            ]
        );
    }

    #[test]
    fn the_servers_first_extension_beats_a_shallower_config_script() {
        let samples = vec![
            (
                key("typescript", "/ws"),
                PathBuf::from("/ws/jest.config.js"),
            ),
            (key("typescript", "/ws"), PathBuf::from("/ws/src/index.ts")),
        ];
        let picks = root_picks(&samples, Path::new("/ws"), &rank);
        assert_eq!(picks[0].file, PathBuf::from("/ws/src/index.ts"));
    }

    #[test]
    fn no_samples_no_servers() {
        assert!(root_picks(&[], Path::new("/ws"), &rank).is_empty());
    }
}
