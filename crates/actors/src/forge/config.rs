//! The forge design's configuration: its servers, and its `[lsp]` TOML section.

use std::collections::BTreeMap;

use serde::Deserialize;
use squiggle_config::{Config, ServerSpec};

use super::LspError;

/// The servers the manager runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LspConfig {
    /// Each server, by the files it serves.
    pub servers: Vec<ServerConfig>,
}

/// One language server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Its name (`rust-analyzer`); from TOML, the table's key.
    #[serde(default)]
    pub name: String,
    /// The languageId its documents are opened with (`rust`).
    pub language_id: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The extensions of the files it serves, without the dot (`rs`).
    pub file_extensions: Vec<String>,
    /// The files that mark a project root (`Cargo.toml`, `.git`).
    #[serde(default)]
    pub root_markers: Vec<String>,
}

impl ServerConfig {
    /// The design's built-in preset: rust-analyzer for `.rs` files of a Cargo project.
    pub fn rust_analyzer() -> ServerConfig {
        ServerConfig {
            name: "rust-analyzer".into(),
            language_id: "rust".into(),
            command: "rust-analyzer".into(),
            args: Vec::new(),
            file_extensions: vec!["rs".into()],
            root_markers: vec!["Cargo.toml".into(), ".git".into()],
        }
    }
}

/// The TOML file's shape: only `[lsp]` is read.
#[derive(Deserialize)]
struct File {
    lsp: Option<Section>,
}

/// `[lsp]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    #[serde(default)]
    enabled: bool,
    #[serde(default)]
    servers: BTreeMap<String, ServerConfig>,
}

impl LspConfig {
    /// The `[lsp]` section of a TOML text: `None` when it is absent or `enabled = false` (off by
    /// default, so that no process starts by surprise); with no `[lsp.servers.*]`, the
    /// rust-analyzer preset. Other sections are left to their owners.
    pub fn from_toml(text: &str) -> Result<Option<LspConfig>, LspError> {
        let file: File =
            toml::from_str(text).map_err(|err| LspError::Config(format!("[lsp]: {err}")))?;
        let Some(section) = file.lsp.filter(|section| section.enabled) else {
            return Ok(None);
        };
        let mut servers: Vec<ServerConfig> = (section.servers.into_iter())
            .map(|(name, server)| ServerConfig { name, ..server })
            .collect();
        if servers.is_empty() {
            servers.push(ServerConfig::rust_analyzer());
        }
        Ok(Some(LspConfig { servers }))
    }

    /// squiggle's configuration for these servers alone, none restarted automatically.
    pub(super) fn to_squiggle(&self) -> Config {
        let servers = (self.servers.iter())
            .map(|server| {
                let spec = ServerSpec {
                    id: server.name.clone(),
                    command: server.command.clone(),
                    args: server.args.clone(),
                    extensions: server.file_extensions.clone(),
                    language_id: server.language_id.clone(),
                    root_markers: server.root_markers.clone(),
                    ..ServerSpec::default()
                };
                (server.name.clone(), spec)
            })
            .collect();
        Config {
            servers,
            max_automatic_restarts: 0,
            ..Config::default()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_lsp_section_is_read_off_by_default_and_with_the_preset_when_empty() {
        let cases: [(&str, Option<Vec<&str>>); 5] = [
            ("", None),
            ("[other]\nx = 1\n", None),
            ("[lsp]\n", None),
            ("[lsp]\nenabled = true\n", Some(vec!["rust-analyzer"])),
            (
                "[lsp]\nenabled = true\n[lsp.servers.py]\ncommand = \"pyright-langserver\"\n\
                 args = [\"--stdio\"]\nlanguage_id = \"python\"\nfile_extensions = [\"py\"]\n",
                Some(vec!["py"]),
            ),
        ];
        for (text, names) in cases {
            let config = LspConfig::from_toml(text).unwrap();
            let seen = config.map(|c| c.servers.into_iter().map(|s| s.name).collect::<Vec<_>>());
            let names = names.map(|n| n.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(seen, names, "{text:?}");
        }
    }

    #[test]
    fn a_server_becomes_a_spec_with_no_automatic_restart() {
        let config = LspConfig::from_toml(
            "[lsp]\nenabled = true\n[lsp.servers.rust]\ncommand = \"rust-analyzer\"\n\
             language_id = \"rust\"\nfile_extensions = [\"rs\"]\nroot_markers = [\"Cargo.toml\"]\n",
        )
        .unwrap()
        .unwrap();
        let squiggle = config.to_squiggle();
        assert_eq!(squiggle.max_automatic_restarts, 0);
        let spec = &squiggle.servers["rust"];
        assert_eq!(spec.command, "rust-analyzer");
        assert_eq!(spec.extensions, ["rs"]);
        assert_eq!(spec.language_id, "rust");
        assert_eq!(spec.root_markers, ["Cargo.toml"]);
        assert_eq!(squiggle.servers.len(), 1);
    }

    #[test]
    fn a_bad_key_is_named() {
        let err = LspConfig::from_toml("[lsp]\nenabled = true\n[lsp.servers.x]\ncmd = \"a\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cmd"), "{err}");
    }
}
