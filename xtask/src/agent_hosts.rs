//! The agent hosts whose plugin formats the tests check (tests/tests/it/agent_plugins.rs): Claude
//! Code and Gemini CLI, pinned, installed from npm into `target/agent-hosts/<host>/`, each in a
//! folder of its own, and reused by later runs.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::lsp_servers;

/// One agent host: its name (and folder), its pinned npm package, and its command.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// The folder under `target/agent-hosts/`, and the name `install-agent-hosts` takes.
    pub name: &'static str,
    /// The npm package, without its version.
    pub package: &'static str,
    /// The pinned version.
    pub version: &'static str,
    /// The command the package installs.
    pub command: &'static str,
}

/// The hosts, pinned so that a new release cannot change what the tests check unnoticed.
pub const HOSTS: &[Host] = &[
    Host {
        name: "claude-code",
        package: "@anthropic-ai/claude-code",
        version: "2.1.332",
        command: "claude",
    },
    Host {
        name: "gemini-cli",
        package: "@google/gemini-cli",
        version: "0.61.0",
        command: "gemini",
    },
];

/// The names `install-agent-hosts` accepts.
pub const NAMES: &[&str] = &["claude-code", "gemini-cli"];

/// Where the hosts are installed.
pub fn install_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("agent-hosts")
}

/// Installs `host` (once: a later run finds it) and returns its command's path.
pub fn install(workspace: &Path, host: &Host) -> anyhow::Result<PathBuf> {
    let dir = install_dir(workspace).join(host.name);
    let spec = format!("{}@{}", host.package, host.version);
    lsp_servers::install_npm(&dir, &[&spec])
        .with_context(|| format!("cannot install {spec} from npm into {}", dir.display()))?;
    let command = dir.join("node_modules").join(".bin").join(host.command);
    if !command.is_file() {
        bail!(
            "{spec} was installed into {} but has no {}",
            dir.display(),
            command.display()
        );
    }
    Ok(command)
}

/// Installs the hosts named (all when none is), printing `NAME VERSION PATH` for each on
/// stdout, for the tests to read.
pub fn install_named(workspace: &Path, names: &[String]) -> anyhow::Result<()> {
    for host in HOSTS {
        if names.is_empty() || names.iter().any(|name| name == host.name) {
            let command = install(workspace, host)?;
            println!("{} {} {}", host.name, host.version, command.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_hosts() {
        let names: Vec<_> = HOSTS.iter().map(|host| host.name).collect();
        assert_eq!(names, NAMES);
    }
}
