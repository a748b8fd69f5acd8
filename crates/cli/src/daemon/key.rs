//! Which daemon serves a check: one per canonical workspace root, environment (`PATH`, where
//! server commands are found, and where the squiggle program is), configuration, squiggle build
//! and the servers found, named by a stable hash of each. A check retires the daemons of its
//! root and environment with another configuration or build, never another environment's: two
//! environments on one workspace keep one each.

use std::path::Path;

use squiggle_actors::Config;
use squiggle_config::Availability;

/// A daemon's identity: a hash of its workspace root and one of everything it runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaemonKey {
    /// The hash of the canonical workspace root.
    pub root: u64,
    /// The hash of the environment (`PATH`); `None` in the names of older builds' daemons.
    pub env: Option<u64>,
    /// The hash of the root, the configuration, the server search path and the build.
    pub setup: u64,
}

impl DaemonKey {
    /// The key of a workspace root and a description of everything else a daemon runs with.
    pub fn new(root: &Path, env: &[u8], setup: &[&[u8]]) -> Self {
        let root_bytes = root.as_os_str().as_encoded_bytes();
        let mut all = vec![root_bytes, env];
        all.extend_from_slice(setup);
        DaemonKey {
            root: fnv1a(&[root_bytes]),
            env: Some(fnv1a(&[env])),
            setup: fnv1a(&all),
        }
    }

    /// Whether a check under this key retires the daemon of `other`: same root and
    /// environment (or an older build's, which names none), another configuration or build.
    pub fn retires(&self, other: &DaemonKey) -> bool {
        other.root == self.root && (other.env.is_none() || other.env == self.env) && other != self
    }

    /// The key for this process's build, environment, configuration and the servers it would
    /// start now. The environment is `PATH` (where server commands are found) and where this
    /// program is: two installations (pip's and cargo's, say) keep a daemon each rather than
    /// retire each other's at every call, while an upgrade in place retires the old one.
    pub fn of(root: &Path, config: &Config) -> Self {
        let found = servers_found(root, config);
        let config = config_bytes(config);
        let mut env = std::env::var_os("PATH").unwrap_or_default();
        env.push("\0");
        env.push(std::env::current_exe().unwrap_or_default());
        Self::new(
            root,
            env.as_encoded_bytes(),
            &[
                env!("CARGO_PKG_VERSION").as_bytes(),
                build_identity().as_bytes(),
                &config,
                &found,
            ],
        )
    }

    /// The name its socket and lock files are made of.
    pub fn name(&self) -> String {
        match self.env {
            Some(env) => format!("{:016x}-{env:016x}-{:016x}", self.root, self.setup),
            None => format!("{:016x}-{:016x}", self.root, self.setup),
        }
    }

    /// The key a file name (`<name>.sock`, `<name>.lock`) stands for.
    pub fn parse(name: &str) -> Option<Self> {
        let stem = name.split('.').next()?;
        let parts: Vec<&str> = stem.split('-').collect();
        if parts.iter().any(|part| part.len() != 16) {
            return None;
        }
        let hex = |part: &str| u64::from_str_radix(part, 16).ok();
        match parts[..] {
            [root, env, setup] => Some(DaemonKey {
                root: hex(root)?,
                env: Some(hex(env)?),
                setup: hex(setup)?,
            }),
            [root, setup] => Some(DaemonKey {
                root: hex(root)?,
                env: None,
                setup: hex(setup)?,
            }),
            _ => None,
        }
    }
}

/// The configuration as a key holds it: its JSON with every object's keys sorted, so that the
/// key follows what the configuration says, not the order a file gave its keys in, nor a
/// `Debug` format that may change.
fn config_bytes(config: &Config) -> Vec<u8> {
    let mut value = serde_json::to_value(config).unwrap_or_default();
    value.sort_all_objects();
    serde_json::to_vec(&value).unwrap_or_default()
}

/// What a daemon would start for each enabled server now (file lookups only): the command
/// found, with that file's size and time of change (an upgrade in place counts), or why not.
/// `squiggle install`, a new `node_modules/typescript` (TypeScript 7's `tsc --lsp` in place of
/// typescript-language-server) or an upgraded server changes it, and with it the key: the next
/// check gets a fresh daemon that runs what is there now, and retires the old.
fn servers_found(root: &Path, config: &Config) -> Vec<u8> {
    let mut found = String::new();
    for spec in config.servers.values().filter(|spec| spec.enabled) {
        let what = match Availability::found(spec, root) {
            Availability::Runs(path) => format!("runs {}", file_identity(&path)),
            Availability::CannotRun { path, .. } => format!("cannot {}", file_identity(&path)),
            Availability::DoesNotRun { path, .. } => format!("fails {}", file_identity(&path)),
            Availability::NotFound => "missing".to_string(),
        };
        found.push_str(&format!("{}={what}\n", spec.id));
    }
    found.into_bytes()
}

/// A file's path, size and time of last change (of what a symlink points at).
fn file_identity(path: &Path) -> String {
    let meta = std::fs::metadata(path).ok();
    let modified = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let size = meta.map(|m| m.len()).unwrap_or_default();
    format!("{}:{size}:{modified}", path.display())
}

/// Which binary this is (its path, size and time of last change), so that a rebuilt or
/// upgraded squiggle starts its own daemon.
fn build_identity() -> String {
    file_identity(&std::env::current_exe().unwrap_or_default())
}

/// The 64-bit FNV-1a hash of the parts, each followed by a separator; stable across builds.
pub(super) fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.iter().chain(std::iter::once(&0xff)) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn one_root_and_setup_give_one_name() {
        let a = DaemonKey::new(Path::new("/ws"), b"/bin", &[b"v1", b"config"]);
        let b = DaemonKey::new(Path::new("/ws"), b"/bin", &[b"v1", b"config"]);
        assert_eq!(a.name(), b.name());
        assert_eq!(a.name().len(), 50);
    }

    #[test]
    fn a_check_retires_its_environments_other_setups_only() {
        let key = |env: &[u8], config: &[u8]| DaemonKey::new(Path::new("/ws"), env, &[config]);
        let this = key(b"/bin", b"config");
        let older = DaemonKey {
            env: None,
            ..key(b"/bin", b"old")
        };
        let cases = [
            (key(b"/bin", b"config"), false, "itself"),
            (
                key(b"/bin", b"other config"),
                true,
                "another configuration, same PATH",
            ),
            (key(b"/usr/bin", b"config"), false, "another PATH"),
            (
                key(b"/usr/bin", b"other config"),
                false,
                "another PATH and configuration",
            ),
            (older, true, "an older build's, which names no environment"),
            (
                DaemonKey::new(Path::new("/ws2"), b"/bin", &[b"x"]),
                false,
                "another root",
            ),
        ];
        for (other, retired, what) in cases {
            assert_eq!(this.retires(&other), retired, "{what}");
        }
    }

    #[test]
    fn another_setup_shares_the_root_part_only() {
        let a = DaemonKey::new(Path::new("/ws"), b"", &[b"v1", b"config"]);
        let b = DaemonKey::new(Path::new("/ws"), b"", &[b"v1", b"other config"]);
        let c = DaemonKey::new(Path::new("/ws2"), b"", &[b"v1", b"config"]);
        assert_eq!(a.root, b.root);
        assert_ne!(a.setup, b.setup);
        assert_ne!(a.root, c.root);
        assert_ne!(a.setup, c.setup);
    }

    #[test]
    fn parts_do_not_run_together() {
        let a = DaemonKey::new(Path::new("/ws"), b"", &[b"ab", b"c"]);
        let b = DaemonKey::new(Path::new("/ws"), b"", &[b"a", b"bc"]);
        assert_ne!(a.setup, b.setup);
    }

    #[test]
    fn the_configuration_part_follows_what_it_says_not_the_order_of_its_keys() {
        let with_options = |options: &str| {
            let mut config = Config::default();
            let spec = config.servers.get_mut("pyright").expect("built-in server");
            spec.initialization_options = Some(serde_json::from_str(options).unwrap());
            spec.env.insert("B".into(), "2".into());
            spec.env.insert("A".into(), "1".into());
            config
        };
        let a = with_options(r#"{"python": {"venv": ".venv", "strict": true}, "b": [1, 2]}"#);
        let b = with_options(r#"{"b": [1, 2], "python": {"strict": true, "venv": ".venv"}}"#);
        let c = with_options(r#"{"b": [2, 1], "python": {"strict": true, "venv": ".venv"}}"#);
        assert_eq!(config_bytes(&a), config_bytes(&b));
        assert_ne!(config_bytes(&a), config_bytes(&c));
        let root = Path::new("/ws");
        assert_eq!(DaemonKey::of(root, &a), DaemonKey::of(root, &b));
        assert_ne!(DaemonKey::of(root, &a).setup, DaemonKey::of(root, &c).setup);
        // Every key is in it, objects' keys in order (so the bytes are the same in any run).
        let text = String::from_utf8(config_bytes(&a)).unwrap();
        assert!(text.contains(r#""daemon_idle_seconds":900"#), "{text}");
        assert!(
            text.contains(r#""python":{"strict":true,"venv":".venv"}"#),
            "{text}"
        );
        assert!(text.contains(r#""env":{"A":"1","B":"2"}"#), "{text}");
    }

    #[test]
    fn names_parse_back() {
        let key = DaemonKey::new(Path::new("/ws"), b"/bin", &[b"x"]);
        assert_eq!(DaemonKey::parse(&format!("{}.sock", key.name())), Some(key));
        let older = DaemonKey { env: None, ..key };
        assert_eq!(
            DaemonKey::parse(&format!("{}.lock", older.name())),
            Some(older)
        );
        assert_eq!(DaemonKey::parse("notes.txt"), None);
        assert_eq!(DaemonKey::parse("zz-yy.sock"), None);
    }

    #[test]
    fn the_hash_is_fnv1a() {
        // Fixed values, so that names stay the same from build to build.
        assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        // FNV-1a 64 of the bytes "a", 0xff.
        assert_eq!(fnv1a(&[b"a"]), 0x089b_c907_b544_c769);
    }
}
