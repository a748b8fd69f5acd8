//! Choosing the servers for a file.

use crate::model::{Config, ServerSpec};
use std::path::Path;

/// The lowercase extension of a file, without the dot.
fn extension_of(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|ext| ext.to_str())
        .map(str::to_ascii_lowercase)
}

impl Config {
    /// Every configured server (enabled or not) whose extensions include this file's extension, in id order.
    pub fn servers_matching(&self, path: &Path) -> Vec<&ServerSpec> {
        let Some(extension) = extension_of(path) else {
            return Vec::new();
        };
        self.servers
            .values()
            .filter(|spec| spec.extensions.contains(&extension))
            .collect()
    }

    /// The enabled servers for this file, by extension (case-insensitive), in id order, with fallbacks resolved.
    ///
    /// A server with `fallback_for = Some(x)` is included only when `x` is not among the enabled
    /// candidates that `is_available`; and, when `x` is an enabled candidate, only if the fallback
    /// itself is available, in which case it replaces `x`. When neither is available, `x` is kept
    /// (so that its install hint is reported). Disabled servers are excluded (see `servers_matching`).
    pub fn servers_for(
        &self,
        path: &Path,
        is_available: &dyn Fn(&ServerSpec) -> bool,
    ) -> Vec<&ServerSpec> {
        let candidates: Vec<&ServerSpec> = self
            .servers_matching(path)
            .into_iter()
            .filter(|spec| spec.enabled)
            .collect();
        let candidate = |id: &str| candidates.iter().copied().find(|spec| spec.id == id);
        let included: Vec<&ServerSpec> = candidates
            .iter()
            .copied()
            .filter(|spec| match spec.fallback_for.as_deref().map(candidate) {
                None | Some(None) => true,
                Some(Some(primary)) => !is_available(primary) && is_available(spec),
            })
            .collect();
        let replaced = |spec: &ServerSpec| {
            included
                .iter()
                .any(|other| other.fallback_for.as_deref() == Some(spec.id.as_str()))
        };
        included
            .iter()
            .copied()
            .filter(|spec| !replaced(spec))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(servers: &[&ServerSpec]) -> Vec<String> {
        servers.iter().map(|s| s.id.clone()).collect()
    }

    #[test]
    fn python_uses_pyright_and_ruff_when_all_available() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/a.py"), &|_| true);
        assert_eq!(ids(&servers), ["pyright", "ruff"]);
    }

    #[test]
    fn python_falls_back_to_basedpyright_without_pyright() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/a.py"), &|s| s.id != "pyright");
        assert_eq!(ids(&servers), ["basedpyright", "ruff"]);
    }

    #[test]
    fn python_keeps_pyright_when_neither_is_available() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/a.py"), &|_| false);
        assert_eq!(ids(&servers), ["pyright", "ruff"]);
    }

    #[test]
    fn disabled_pyright_brings_in_basedpyright() {
        let mut config = Config::default();
        if let Some(pyright) = config.servers.get_mut("pyright") {
            pyright.enabled = false;
        }
        let servers = config.servers_for(Path::new("/w/a.PYI"), &|_| true);
        assert_eq!(ids(&servers), ["basedpyright", "ruff"]);
    }

    #[test]
    fn typescript_uses_eslint_and_typescript() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/a.ts"), &|_| true);
        assert_eq!(ids(&servers), ["eslint", "typescript"]);
    }

    #[test]
    fn matching_includes_disabled_servers_and_uppercase_extensions() {
        let mut config = Config::default();
        if let Some(ruff) = config.servers.get_mut("ruff") {
            ruff.enabled = false;
        }
        let matching = config.servers_matching(Path::new("/w/A.PY"));
        assert_eq!(ids(&matching), ["basedpyright", "pyright", "ruff"]);
        let chosen = config.servers_for(Path::new("/w/A.PY"), &|_| true);
        assert_eq!(ids(&chosen), ["pyright"]);
    }

    #[test]
    fn file_without_extension_matches_nothing() {
        let config = Config::default();
        assert!(config.servers_matching(Path::new("/w/Makefile")).is_empty());
    }
}
