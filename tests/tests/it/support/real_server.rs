//! Real language servers as the tests run them: one built-in server alone in squiggle's
//! default configuration, its command found where `cargo xtask install-servers` puts it.

use std::path::{Path, PathBuf};

use squiggle_actors::{Config, Squiggle};

use super::{fixture, real_servers_turn_async, require_server};

/// What a real-server test holds until it ends: its turn among such tests and the folder of
/// its copy of a fixture.
#[derive(Debug)]
pub struct Held {
    _dir: tempfile::TempDir,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

/// A built-in server the tests run: its id in squiggle's defaults, its command, and how to
/// install it.
#[derive(Debug, Clone, Copy)]
pub struct BuiltIn {
    /// The server's id in squiggle's built-in table.
    pub id: &'static str,
    /// The executable it runs.
    pub command: &'static str,
    /// How to install it, said when it is missing.
    pub hint: &'static str,
}

/// pyright.
pub const PYRIGHT: BuiltIn = BuiltIn::new("pyright", "pyright-langserver", "npm install pyright");

/// ruff.
pub const RUFF: BuiltIn = BuiltIn::new("ruff", "ruff", "pip install ruff");

/// typescript-language-server.
pub const TYPESCRIPT: BuiltIn = BuiltIn::new(
    "typescript",
    "typescript-language-server",
    "npm install typescript typescript-language-server",
);

/// rust-analyzer.
pub const RUST_ANALYZER: BuiltIn = BuiltIn::new(
    "rust-analyzer",
    "rust-analyzer",
    "rustup component add rust-analyzer",
);

impl BuiltIn {
    /// A built-in server by its id, command and install hint.
    const fn new(id: &'static str, command: &'static str, hint: &'static str) -> Self {
        Self { id, command, hint }
    }

    /// Its executable, or a panic with its install hint.
    pub fn require(self) -> PathBuf {
        require_server(self.command, self.hint)
    }

    /// squiggle's default configuration with only this server enabled, run from its installed
    /// executable (or a panic with its install hint).
    pub fn alone(self) -> Config {
        let program = self.require();
        let mut config = Config::default();
        for spec in config.servers.values_mut() {
            spec.enabled = spec.id == self.id;
        }
        config.servers.get_mut(self.id).unwrap().command = program.display().to_string();
        config
    }

    /// [`BuiltIn::alone`] with deadlines, not sleeps, for a cold server on a busy machine: a
    /// minute to load the project, 30 s for a file's diagnostics.
    pub fn alone_patient(self) -> Config {
        let mut config = self.alone();
        config.first_touch_timeout_ms = 60_000;
        config.diagnostic_timeout_ms = 30_000;
        config.dependent_files_wait_ms = 30_000;
        config
    }

    /// A runtime on `root` with only this server ([`BuiltIn::alone`]).
    pub async fn start(self, root: &Path) -> Squiggle {
        Squiggle::start(root, self.alone()).await.unwrap()
    }

    /// A runtime on `root` with only this server, patient ([`BuiltIn::alone_patient`]).
    pub async fn start_patient(self, root: &Path) -> Squiggle {
        Squiggle::start(root, self.alone_patient()).await.unwrap()
    }

    /// A real-server test's set-up: its turn among such tests, a copy of the fixture `name`,
    /// and a runtime on it with only this server ([`BuiltIn::alone`]); keep the [`Held`] until
    /// the test ends.
    pub async fn on_fixture(self, name: &str) -> (Held, Squiggle, PathBuf) {
        set_up(name, self.alone()).await
    }

    /// [`BuiltIn::on_fixture`] with a patient runtime ([`BuiltIn::alone_patient`]).
    pub async fn on_fixture_patient(self, name: &str) -> (Held, Squiggle, PathBuf) {
        set_up(name, self.alone_patient()).await
    }
}

/// Takes the real servers' turn, copies the fixture `name` and starts a runtime on it.
async fn set_up(name: &str, config: Config) -> (Held, Squiggle, PathBuf) {
    let turn = real_servers_turn_async().await;
    let (dir, project) = fixture(name);
    let squiggle = Squiggle::start(&project, config).await.unwrap();
    let held = Held {
        _dir: dir,
        _turn: turn,
    };
    (held, squiggle, project)
}
