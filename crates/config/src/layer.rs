//! One source of settings (a TOML file or opencode.json) in a common shape, and how it is applied.

use crate::error::LayerError;
use crate::model::{Config, ServerSpec, Stages};
use squiggle_protocol::Severity;
use std::collections::BTreeMap;

/// Where a value came from: its dotted key and 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// The dotted key (`servers.mylang`, `lsp.servers.mylang`).
    pub key: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Place {
    /// An error at this place, naming its key.
    pub(crate) fn error(&self, message: String) -> LayerError {
        LayerError {
            line: self.line,
            column: self.column,
            key: Some(self.key.clone()),
            message,
        }
    }
}

/// The settings one source gives; `None` leaves the value as it was.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Layer {
    pub enabled: Option<bool>,
    pub diagnostic_timeout_ms: Option<u64>,
    pub first_touch_timeout_ms: Option<u64>,
    pub other_files_wait_ms: Option<u64>,
    pub restart_cooldown_ms: Option<u64>,
    pub initialize_timeout_ms: Option<u64>,
    pub settle_ms: Option<u64>,
    pub include_severities: Option<Vec<(String, Place)>>,
    pub max_diagnostics_per_file: Option<usize>,
    pub max_other_files: Option<usize>,
    pub max_total_lines: Option<usize>,
    pub navigation_tools: Option<bool>,
    pub max_file_bytes: Option<u64>,
    pub max_open_documents: Option<usize>,
    pub daemon: Option<bool>,
    pub daemon_idle_seconds: Option<u64>,
    pub servers: Vec<ServerLayer>,
}

/// The fields one source gives for one server; `None` leaves the field as it was.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ServerLayer {
    pub id: String,
    pub place: Option<Place>,
    pub enabled: Option<bool>,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub extensions: Option<Vec<String>>,
    pub language_id: Option<String>,
    pub root_markers: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub initialization_options: Option<serde_json::Value>,
    pub settings: Option<serde_json::Value>,
    pub sidecar: Option<Vec<String>>,
    pub settle_ms: Option<u64>,
    pub install_hint: Option<String>,
    pub fallback_for: Option<String>,
}

fn set<T>(target: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *target = value;
    }
}

/// Lowercases extensions and strips a leading dot; drops empty ones.
fn normalize_extensions(extensions: Vec<String>) -> Vec<String> {
    extensions
        .into_iter()
        .map(|ext| ext.trim().trim_start_matches('.').to_ascii_lowercase())
        .filter(|ext| !ext.is_empty())
        .collect()
}

fn parse_severities(names: Vec<(String, Place)>) -> Result<Vec<Severity>, LayerError> {
    let mut severities = Vec::with_capacity(names.len());
    for (name, place) in names {
        let severity: Severity = name
            .parse()
            .map_err(|err| place.error(format!("invalid value for key `{}`: {err}", place.key)))?;
        severities.push(severity);
    }
    severities.sort();
    severities.dedup();
    Ok(severities)
}

impl ServerLayer {
    fn place(&self) -> Place {
        self.place.clone().unwrap_or_else(|| Place {
            key: format!("servers.{}", self.id),
            line: 1,
            column: 1,
        })
    }

    /// Overwrites the fields this layer gives.
    fn patch(self, spec: &mut ServerSpec) {
        set(&mut spec.enabled, self.enabled);
        set(&mut spec.command, self.command);
        set(&mut spec.args, self.args);
        set(
            &mut spec.extensions,
            self.extensions.map(normalize_extensions),
        );
        set(&mut spec.language_id, self.language_id);
        set(&mut spec.root_markers, self.root_markers);
        set(&mut spec.env, self.env);
        if self.initialization_options.is_some() {
            spec.initialization_options = self.initialization_options;
        }
        if self.settings.is_some() {
            spec.settings = self.settings;
        }
        if self.sidecar.is_some() {
            spec.sidecar = self.sidecar.filter(|argv| !argv.is_empty());
        }
        if self.settle_ms.is_some() {
            spec.settle_ms = self.settle_ms;
        }
        set(&mut spec.install_hint, self.install_hint);
        if let Some(fallback_for) = self.fallback_for {
            spec.fallback_for = Some(fallback_for).filter(|id| !id.is_empty());
        }
    }

    /// Builds a server that is not built in; it must name a command and extensions.
    fn into_new_spec(self) -> Result<ServerSpec, LayerError> {
        let place = self.place();
        let mut missing = Vec::new();
        if self.command.as_deref().is_none_or(str::is_empty) {
            missing.push("`command` (the program to run)");
        }
        if self.extensions.as_ref().is_none_or(Vec::is_empty) {
            missing.push("`extensions` (the file extensions it serves)");
        }
        if !missing.is_empty() {
            return Err(place.error(format!(
                "server `{}` is not built in, so key `{}` must set {}",
                self.id,
                place.key,
                missing.join(" and ")
            )));
        }
        let command = self.command.clone().unwrap_or_default();
        let mut spec = ServerSpec {
            id: self.id.clone(),
            enabled: true,
            install_hint: format!("install `{command}` and make sure it is on PATH"),
            command,
            args: Vec::new(),
            extensions: Vec::new(),
            language_id: self.id.clone(),
            root_markers: Vec::new(),
            env: BTreeMap::new(),
            initialization_options: None,
            settings: None,
            sidecar: None,
            settle_ms: None,
            stages: Stages::default(),
            tsserver_pull: false,
            fallback_for: None,
        };
        self.patch(&mut spec);
        Ok(spec)
    }
}

impl Config {
    /// Applies one layer on top of this configuration; on error nothing is changed.
    pub(crate) fn apply_layer(&mut self, layer: Layer) -> Result<(), LayerError> {
        let mut next = self.clone();
        set(&mut next.enabled, layer.enabled);
        set(&mut next.diagnostic_timeout_ms, layer.diagnostic_timeout_ms);
        set(
            &mut next.first_touch_timeout_ms,
            layer.first_touch_timeout_ms,
        );
        set(&mut next.other_files_wait_ms, layer.other_files_wait_ms);
        set(&mut next.restart_cooldown_ms, layer.restart_cooldown_ms);
        set(&mut next.initialize_timeout_ms, layer.initialize_timeout_ms);
        set(&mut next.settle_ms, layer.settle_ms);
        if let Some(names) = layer.include_severities {
            next.include_severities = parse_severities(names)?;
        }
        set(
            &mut next.max_diagnostics_per_file,
            layer.max_diagnostics_per_file,
        );
        set(&mut next.max_other_files, layer.max_other_files);
        set(&mut next.max_total_lines, layer.max_total_lines);
        set(&mut next.navigation_tools, layer.navigation_tools);
        set(&mut next.max_file_bytes, layer.max_file_bytes);
        set(&mut next.max_open_documents, layer.max_open_documents);
        set(&mut next.daemon, layer.daemon);
        set(&mut next.daemon_idle_seconds, layer.daemon_idle_seconds);
        for server in layer.servers {
            match next.servers.get_mut(&server.id) {
                Some(spec) => server.patch(spec),
                None => {
                    let spec = server.into_new_spec()?;
                    next.servers.insert(spec.id.clone(), spec);
                }
            }
        }
        *self = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(key: &str) -> Place {
        Place {
            key: key.to_string(),
            line: 4,
            column: 2,
        }
    }

    #[test]
    fn override_replaces_only_given_fields() {
        let mut config = Config::default();
        let layer = Layer {
            servers: vec![ServerLayer {
                id: "pyright".to_string(),
                args: Some(vec!["--verbose".to_string()]),
                ..ServerLayer::default()
            }],
            ..Layer::default()
        };
        config.apply_layer(layer).expect("applies");
        let pyright = &config.servers["pyright"];
        assert_eq!(pyright.args, ["--verbose"]);
        assert_eq!(pyright.command, "pyright-langserver");
        assert_eq!(pyright.extensions, ["py", "pyi"]);
    }

    #[test]
    fn new_server_gets_defaults_and_normalized_extensions() {
        let mut config = Config::default();
        let layer = Layer {
            servers: vec![ServerLayer {
                id: "mylang".to_string(),
                command: Some("mylang-lsp".to_string()),
                extensions: Some(vec!["ML".to_string(), ".mli".to_string()]),
                ..ServerLayer::default()
            }],
            ..Layer::default()
        };
        config.apply_layer(layer).expect("applies");
        let spec = &config.servers["mylang"];
        assert_eq!(spec.extensions, ["ml", "mli"]);
        assert_eq!(spec.language_id, "mylang");
        assert!(spec.enabled);
        assert_eq!(
            spec.install_hint,
            "install `mylang-lsp` and make sure it is on PATH"
        );
    }

    #[test]
    fn new_server_without_command_names_key() {
        let mut config = Config::default();
        let layer = Layer {
            settle_ms: Some(7),
            servers: vec![ServerLayer {
                id: "mylang".to_string(),
                place: Some(place("servers.mylang")),
                extensions: Some(vec!["ml".to_string()]),
                ..ServerLayer::default()
            }],
            ..Layer::default()
        };
        let err = config.apply_layer(layer).expect_err("missing command");
        assert_eq!(
            err,
            LayerError {
                line: 4,
                column: 2,
                key: Some("servers.mylang".to_string()),
                message: "server `mylang` is not built in, so key `servers.mylang` must set \
                          `command` (the program to run)"
                    .to_string(),
            }
        );
        assert_eq!(config.settle_ms, 150, "a failed layer changes nothing");
    }

    #[test]
    fn severities_are_parsed_sorted_and_deduplicated() {
        let mut config = Config::default();
        let names = ["warning", "error", "warning"]
            .iter()
            .map(|n| (n.to_string(), place("include_severities")))
            .collect();
        let layer = Layer {
            include_severities: Some(names),
            ..Layer::default()
        };
        config.apply_layer(layer).expect("applies");
        assert_eq!(
            config.include_severities,
            [Severity::Error, Severity::Warning]
        );
    }

    #[test]
    fn bad_severity_names_key() {
        let mut config = Config::default();
        let layer = Layer {
            include_severities: Some(vec![("fatal".to_string(), place("include_severities"))]),
            ..Layer::default()
        };
        let err = config.apply_layer(layer).expect_err("bad severity");
        assert_eq!(
            err.message,
            "invalid value for key `include_severities`: unknown severity `fatal` \
             (expected error, warning, info or hint)"
        );
    }

    #[test]
    fn empty_fallback_for_clears_it() {
        let mut config = Config::default();
        let layer = Layer {
            servers: vec![ServerLayer {
                id: "basedpyright".to_string(),
                fallback_for: Some(String::new()),
                ..ServerLayer::default()
            }],
            ..Layer::default()
        };
        config.apply_layer(layer).expect("applies");
        assert_eq!(config.servers["basedpyright"].fallback_for, None);
    }
}
