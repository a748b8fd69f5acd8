//! Choosing the servers for a file.

use crate::model::{Config, ServerSpec};
use std::collections::{BTreeMap, BTreeSet};
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

/// How an enabled server stands beside its fallback (or the server it is a fallback for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standby<'a> {
    /// A fallback whose primary runs, so the fallback is not used.
    NotNeeded {
        /// The server it is a fallback for.
        primary: &'a str,
    },
    /// A server that does not run, replaced by its fallback, which does.
    ReplacedBy {
        /// The fallback used instead.
        fallback: &'a str,
    },
}

impl std::fmt::Display for Standby<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Standby::NotNeeded { primary } => {
                write!(f, "fallback, not needed: {primary} is installed")
            }
            Standby::ReplacedBy { fallback } => write!(f, "{fallback} is used instead"),
        }
    }
}

impl Config {
    /// Whether an enabled server stands by for another (a fallback whose primary runs) or is
    /// replaced by its fallback (it does not run, the fallback does); None for servers used
    /// as they are, and for disabled ones.
    pub fn standby<'a>(
        &'a self,
        spec: &ServerSpec,
        is_available: &dyn Fn(&ServerSpec) -> bool,
    ) -> Option<Standby<'a>> {
        if !spec.enabled {
            return None;
        }
        let enabled = |id: &str| self.servers.get(id).filter(|other| other.enabled);
        if let Some(primary) = spec.fallback_for.as_deref().and_then(enabled) {
            if is_available(primary) {
                return Some(Standby::NotNeeded {
                    primary: &primary.id,
                });
            }
        }
        if is_available(spec) {
            return None;
        }
        self.servers
            .values()
            .find(|other| {
                other.enabled
                    && other.fallback_for.as_deref() == Some(spec.id.as_str())
                    && is_available(other)
            })
            .map(|fallback| Standby::ReplacedBy {
                fallback: &fallback.id,
            })
    }

    /// For every extension an enabled server serves (sorted), the servers a file of that type
    /// goes to, as [`Config::servers_for`] picks them.
    pub fn servers_by_extension(
        &self,
        is_available: &dyn Fn(&ServerSpec) -> bool,
    ) -> BTreeMap<String, Vec<&ServerSpec>> {
        let extensions: BTreeSet<&String> = self
            .servers
            .values()
            .filter(|spec| spec.enabled)
            .flat_map(|spec| &spec.extensions)
            .collect();
        extensions
            .into_iter()
            .map(|extension| {
                let file = format!("file.{extension}");
                let servers = self.servers_for(Path::new(&file), is_available);
                (extension.clone(), servers)
            })
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
    fn typescript_uses_eslint_and_typescript_language_server_below_typescript_7() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/a.ts"), &|s| s.id != "typescript-native");
        assert_eq!(ids(&servers), ["eslint", "typescript"]);
    }

    #[test]
    fn typescript_7_serves_itself_in_place_of_typescript_language_server() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/a.tsx"), &|_| true);
        assert_eq!(ids(&servers), ["eslint", "typescript-native"]);
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

    #[test]
    fn basedpyright_is_not_needed_when_pyright_runs() {
        let config = Config::default();
        let basedpyright = &config.servers["basedpyright"];
        let standby = config.standby(basedpyright, &|s| s.id != "basedpyright");
        assert_eq!(standby, Some(Standby::NotNeeded { primary: "pyright" }));
        assert_eq!(
            standby.map(|s| s.to_string()).as_deref(),
            Some("fallback, not needed: pyright is installed")
        );
        assert_eq!(config.standby(&config.servers["pyright"], &|_| true), None);
    }

    #[test]
    fn pyright_that_does_not_run_is_replaced_by_basedpyright() {
        let config = Config::default();
        let available = |s: &ServerSpec| s.id != "pyright";
        let pyright = &config.servers["pyright"];
        let standby = config.standby(pyright, &available);
        assert_eq!(
            standby,
            Some(Standby::ReplacedBy {
                fallback: "basedpyright"
            })
        );
        assert_eq!(
            standby.map(|s| s.to_string()).as_deref(),
            Some("basedpyright is used instead")
        );
        assert_eq!(
            config.standby(&config.servers["basedpyright"], &available),
            None
        );
    }

    #[test]
    fn neither_python_checker_running_leaves_both_as_they_are() {
        let config = Config::default();
        for id in ["pyright", "basedpyright"] {
            assert_eq!(
                config.standby(&config.servers[id], &|_| false),
                None,
                "{id}"
            );
        }
    }

    #[test]
    fn a_fallback_of_a_disabled_server_is_used() {
        let mut config = Config::default();
        if let Some(pyright) = config.servers.get_mut("pyright") {
            pyright.enabled = false;
        }
        assert_eq!(
            config.standby(&config.servers["basedpyright"], &|_| true),
            None
        );
        assert_eq!(config.standby(&config.servers["pyright"], &|_| true), None);
    }

    #[test]
    fn servers_by_extension_lists_what_each_file_type_goes_to() {
        let mut config = Config::default();
        if let Some(gopls) = config.servers.get_mut("gopls") {
            gopls.enabled = false;
        }
        let plan =
            config.servers_by_extension(&|s| s.id != "pyright" && s.id != "typescript-native");
        assert_eq!(ids(&plan["py"]), ["basedpyright", "ruff"]);
        assert_eq!(ids(&plan["pyi"]), ["basedpyright", "ruff"]);
        assert_eq!(ids(&plan["rs"]), ["rust-analyzer"]);
        assert_eq!(ids(&plan["tsx"]), ["eslint", "typescript"]);
        assert!(!plan.contains_key("go"), "gopls is disabled");
        let keys: Vec<&String> = plan.keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }
}
