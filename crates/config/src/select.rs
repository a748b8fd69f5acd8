//! Choosing the servers for a file.

use crate::model::Config;
use crate::spec::ServerSpec;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The lowercase extension of a file, without the dot; for a file without one (`Dockerfile`),
/// its lowercase name.
fn extension_of(path: &Path) -> Option<String> {
    path.extension()
        .or_else(|| path.file_name())
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

    /// The enabled servers for this file, by extension (case-insensitive; a file without an
    /// extension, such as `Dockerfile`, by its lowercase name), in id order, one per role.
    ///
    /// Servers linked by `fallback_for` form one role (pyright <- basedpyright <- ty): of the
    /// enabled candidates in a role, only the first that `is_available` runs, in fallback order
    /// (the primary, then its fallbacks by id, then theirs). When none is available, the
    /// primary is kept (so that its install hint is reported). Disabling a server lets the next
    /// one in its role run. Disabled servers are excluded (see `servers_matching`).
    pub fn servers_for(
        &self,
        path: &Path,
        is_available: &dyn Fn(&ServerSpec) -> bool,
    ) -> Vec<&ServerSpec> {
        let mut chosen: Vec<&ServerSpec> = self
            .roles_for(path)
            .into_iter()
            .filter_map(|role| {
                let first = role.first().copied();
                role.into_iter()
                    .find(|member| is_available(member))
                    .or(first)
            })
            .collect();
        chosen.sort_by(|a, b| a.id.cmp(&b.id));
        chosen
    }

    /// The servers that would check a file when each of them is optional and none
    /// `is_available`: a file only missing configuration-file linters would check (a
    /// `pyproject.toml` without taplo), which is the person's concern, not a model's. Empty
    /// when some server would check it, a missing one is not optional, or none handles it.
    pub fn only_missing_optional(
        &self,
        path: &Path,
        is_available: &dyn Fn(&ServerSpec) -> bool,
    ) -> Vec<&ServerSpec> {
        let servers = self.servers_for(path, is_available);
        if servers
            .iter()
            .all(|spec| spec.optional && !is_available(spec))
        {
            servers
        } else {
            Vec::new()
        }
    }

    /// The roles of the enabled servers for this file, each in fallback order (the primary,
    /// then its fallbacks by id, then theirs), ordered by their primary's id. A server without
    /// fallback links is a role of its own. Whoever picks from a role looks at its members in
    /// this order and stops at the first that will do, so a later member is never looked at
    /// (nor probed) when an earlier one is used.
    pub fn roles_for(&self, path: &Path) -> Vec<Vec<&ServerSpec>> {
        let candidates: Vec<&ServerSpec> = self
            .servers_matching(path)
            .into_iter()
            .filter(|spec| spec.enabled)
            .collect();
        let mut roles: Vec<Vec<&ServerSpec>> = Vec::new();
        for spec in &candidates {
            let role = role_of(&candidates, spec);
            if !roles.iter().any(|known| known[0].id == role[0].id) {
                roles.push(role);
            }
        }
        roles.sort_by(|a, b| a[0].id.cmp(&b[0].id));
        roles
    }
}

/// The role of `spec` among `candidates`: its primary (followed through `fallback_for` while
/// the server named is a candidate), then every candidate linked to it, breadth first, each
/// level by id.
fn role_of<'a>(candidates: &[&'a ServerSpec], spec: &'a ServerSpec) -> Vec<&'a ServerSpec> {
    let find = |id: &str| candidates.iter().copied().find(|c| c.id == id);
    // Up the fallback links; in a cycle (a configuration mistake), its smallest id leads.
    let mut path = vec![spec];
    let primary = loop {
        let last = path[path.len() - 1];
        match last.fallback_for.as_deref().and_then(find) {
            None => break last,
            Some(next) => match path.iter().position(|p| p.id == next.id) {
                Some(start) => {
                    let cycle = &path[start..];
                    break cycle
                        .iter()
                        .copied()
                        .min_by(|a, b| a.id.cmp(&b.id))
                        .unwrap_or(last);
                }
                None => path.push(next),
            },
        }
    };
    let mut role = vec![primary];
    let mut next = 0;
    while next < role.len() {
        let id = role[next].id.clone();
        let fallbacks = candidates.iter().copied().filter(|c| {
            c.fallback_for.as_deref() == Some(id.as_str()) && !role.iter().any(|r| r.id == c.id)
        });
        let fallbacks: Vec<&ServerSpec> = fallbacks.collect();
        role.extend(fallbacks);
        next += 1;
    }
    role
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
    /// Whether an enabled server stands by for another of its role (one before it in fallback
    /// order runs) or is replaced by one after it (it does not run, that one does); None for
    /// servers used as they are, for disabled ones, and when no server of the role runs.
    pub fn standby<'a>(
        &'a self,
        spec: &ServerSpec,
        is_available: &dyn Fn(&ServerSpec) -> bool,
    ) -> Option<Standby<'a>> {
        if !spec.enabled {
            return None;
        }
        let enabled: Vec<&ServerSpec> = self.servers.values().filter(|s| s.enabled).collect();
        let own = enabled.iter().copied().find(|s| s.id == spec.id)?;
        let role = role_of(&enabled, own);
        let chosen = role.iter().position(|member| is_available(member))?;
        let place = role.iter().position(|member| member.id == spec.id)?;
        let id = &role[chosen].id;
        match chosen.cmp(&place) {
            std::cmp::Ordering::Less => Some(Standby::NotNeeded { primary: id }),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(Standby::ReplacedBy { fallback: id }),
        }
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
    fn only_a_file_left_to_missing_optional_servers_is_the_persons_concern() {
        let config = Config::default();
        let missing =
            |spec: &ServerSpec| !["taplo", "json", "pyright", "bash"].contains(&spec.id.as_str());
        let toml = config.only_missing_optional(Path::new("/w/pyproject.toml"), &missing);
        assert_eq!(ids(&toml), ["taplo"]);
        let json = config.only_missing_optional(Path::new("/w/a.json"), &missing);
        assert_eq!(ids(&json), ["json"]);
        // A missing type checker or shell linter is not optional; a running server checks.
        for file in ["/w/a.py", "/w/a.sh", "/w/a.yaml", "/w/a.txt"] {
            assert!(
                (config.only_missing_optional(Path::new(file), &missing)).is_empty(),
                "{file}"
            );
        }
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
        assert_eq!(
            ids(&matching),
            ["basedpyright", "pylsp", "pyright", "ruff", "ty"]
        );
        let chosen = config.servers_for(Path::new("/w/A.PY"), &|_| true);
        assert_eq!(ids(&chosen), ["pylsp", "pyright"]);
    }

    #[test]
    fn python_type_checkers_form_one_role_down_to_ty() {
        let config = Config::default();
        let only =
            |wanted: &'static [&'static str]| move |s: &ServerSpec| wanted.contains(&s.id.as_str());
        let file = Path::new("/w/a.py");
        assert_eq!(
            ids(&config.servers_for(file, &only(&["ty", "ruff"]))),
            ["ruff", "ty"]
        );
        assert_eq!(
            ids(&config.servers_for(file, &only(&["ty", "basedpyright", "pylsp"]))),
            ["basedpyright", "pylsp"]
        );
        assert_eq!(
            ids(&config.servers_for(file, &only(&["ty", "pyright", "basedpyright"]))),
            ["pyright", "ruff"]
        );
        let ty = &config.servers["ty"];
        assert_eq!(
            config.standby(ty, &only(&["ty", "pyright"])),
            Some(Standby::NotNeeded { primary: "pyright" })
        );
        assert_eq!(
            config.standby(&config.servers["pyright"], &only(&["ty"])),
            Some(Standby::ReplacedBy { fallback: "ty" })
        );
        assert_eq!(config.standby(ty, &only(&["ty"])), None);
    }

    #[test]
    fn disabling_the_servers_before_ty_chooses_ty() {
        let mut config = Config::default();
        for id in ["pyright", "basedpyright"] {
            if let Some(spec) = config.servers.get_mut(id) {
                spec.enabled = false;
            }
        }
        let servers = config.servers_for(Path::new("/w/a.py"), &|_| true);
        assert_eq!(ids(&servers), ["ruff", "ty"]);
    }

    #[test]
    fn javascript_gets_one_linter_biome_when_eslint_is_missing() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/a.js"), &|s| {
            s.id != "eslint" && s.id != "typescript-native"
        });
        assert_eq!(ids(&servers), ["biome", "typescript"]);
    }

    #[test]
    fn roles_list_each_role_once_in_fallback_order() {
        let config = Config::default();
        let roles: Vec<Vec<String>> = config
            .roles_for(Path::new("/w/a.py"))
            .iter()
            .map(|role| ids(role))
            .collect();
        assert_eq!(
            roles,
            [vec!["pyright", "basedpyright", "ty"], vec!["ruff", "pylsp"]]
        );
        let ts: Vec<Vec<String>> = (config.roles_for(Path::new("/w/a.ts")).iter())
            .map(|role| ids(role))
            .collect();
        assert_eq!(
            ts,
            [
                vec!["eslint", "biome"],
                vec!["typescript-native", "typescript"]
            ]
        );
    }

    #[test]
    fn a_later_member_of_a_role_is_not_looked_at_when_an_earlier_one_is_available() {
        let config = Config::default();
        let asked = std::cell::RefCell::new(Vec::new());
        let servers = config.servers_for(Path::new("/w/a.ts"), &|s| {
            asked.borrow_mut().push(s.id.clone());
            true
        });
        assert_eq!(ids(&servers), ["eslint", "typescript-native"]);
        assert_eq!(*asked.borrow(), ["eslint", "typescript-native"]);
    }

    #[test]
    fn a_fallback_cycle_ends() {
        let mut config = Config::default();
        if let Some(pyright) = config.servers.get_mut("pyright") {
            pyright.fallback_for = Some("ty".to_string());
        }
        let servers = config.servers_for(Path::new("/w/a.py"), &|_| true);
        assert_eq!(servers.iter().filter(|s| s.id != "ruff").count(), 1);
    }

    #[test]
    fn a_file_without_extension_goes_by_its_name() {
        let config = Config::default();
        let servers = config.servers_for(Path::new("/w/Dockerfile"), &|_| true);
        assert_eq!(ids(&servers), ["dockerfile"]);
        let servers = config.servers_for(Path::new("/w/app.dockerfile"), &|_| true);
        assert_eq!(ids(&servers), ["dockerfile"]);
        let servers = config.servers_for(Path::new("/w/a.scss"), &|_| true);
        assert_eq!(ids(&servers), ["css"]);
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
