//! The workspace a command works in: its root and its configuration.

use std::path::{Path, PathBuf};

use anyhow::Context;
use squiggle_config::Config;

/// The configuration file given with `--config`, as loaded (a daemon started for this
/// command loads it too).
static EXTRA_CONFIG_FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The configuration file this command applied with `--config`, if any (for the daemon it
/// starts).
#[cfg(unix)]
pub fn extra_config_file() -> Option<&'static Path> {
    EXTRA_CONFIG_FILE.get().map(PathBuf::as_path)
}

/// Where a command works, as the flags and the current folder say.
#[derive(Debug, clap::Args)]
pub struct WorkspaceArgs {
    /// The workspace root (default: the nearest folder upward holding `.git` or a squiggle
    /// config file, else the current folder).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// A configuration file applied on top of the user and project files.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl WorkspaceArgs {
    /// The resolved workspace root and its configuration. A project file not used because the
    /// user has not trusted it is said on stderr (a daemon's log, `serve`'s and `mcp`'s logs).
    pub fn load(&self) -> anyhow::Result<(PathBuf, Config)> {
        let root = self.root()?;
        let user_file = squiggle_config::user_config_path();
        let mut config = Config::load(&root, user_file.as_deref())?;
        if let Some(file) = &self.config {
            let file = absolute(file);
            config.apply_file(&file)?;
            let _ = EXTRA_CONFIG_FILE.set(file);
        }
        if let Some(notice) = config.untrusted_notice(&root) {
            tracing::warn!("{notice}");
        }
        Ok((root, config))
    }

    /// The resolved workspace root.
    pub fn root(&self) -> anyhow::Result<PathBuf> {
        let cwd = std::env::current_dir().context("cannot read the current folder")?;
        match &self.root {
            Some(root) => squiggle_protocol::paths::canonicalize(cwd.join(root))
                .with_context(|| format!("--root {}: no such folder", root.display())),
            None => Ok(squiggle_config::find_workspace_root(&cwd)),
        }
    }
}

/// A path given on the command line, made absolute against the current folder.
pub fn absolute(path: &Path) -> PathBuf {
    match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => path.to_path_buf(),
    }
}
