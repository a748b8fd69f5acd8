//! Reading the `lsp` key of an opencode.json-style document into a [`Layer`].
//!
//! Two styles are accepted, both camelCase: llxprt style (`{"servers": {"<id>": {..}},
//! "diagnosticTimeout": ms, ..}`) and opencode style, where every other key is a server id
//! (`{"<id>": {"disabled": true, "command": ["cmd", "arg"], ..}}`).

use crate::error::LayerError;
use crate::layer::{Layer, Place, ServerLayer};
use crate::toml_layer::line_column;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Parses an opencode.json-style document into a layer (empty when it has no `lsp` key).
pub(crate) fn parse_opencode(text: &str) -> Result<Layer, LayerError> {
    let root: Value = serde_json::from_str(text).map_err(|err| LayerError {
        line: err.line().max(1),
        column: err.column().max(1),
        key: None,
        message: format!("invalid JSON: {err}"),
    })?;
    let Value::Object(root) = root else {
        return Err(LayerError {
            line: 1,
            column: 1,
            key: None,
            message: format!(
                "invalid JSON document: expected an object, found {}",
                kind(&root)
            ),
        });
    };
    let reader = Reader { text };
    match root.get("lsp") {
        None | Some(Value::Bool(true)) => Ok(Layer::default()),
        Some(Value::Bool(false)) => Ok(Layer {
            enabled: Some(false),
            ..Layer::default()
        }),
        Some(Value::Object(lsp)) => reader.lsp(lsp),
        Some(other) => Err(reader.type_error(&["lsp"], "true, false or an object", other)),
    }
}

/// The JSON type of a value, with an article, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Walks the `lsp` value, locating keys in the source text for messages.
struct Reader<'a> {
    text: &'a str,
}

impl Reader<'_> {
    /// The place of a key path: each key searched as `"key"` after the previous one.
    fn place(&self, path: &[&str]) -> Place {
        let mut offset = 0;
        let mut found = 0;
        for key in path {
            let quoted = format!("\"{key}\"");
            if let Some(at) = self.text[offset..].find(&quoted) {
                found = offset + at;
                offset = found + quoted.len();
            }
        }
        let (line, column) = line_column(self.text, found);
        Place {
            key: path.join("."),
            line,
            column,
        }
    }

    fn type_error(&self, path: &[&str], expected: &str, found: &Value) -> LayerError {
        let place = self.place(path);
        place.error(format!(
            "invalid type for key `{}`: expected {expected}, found {}",
            place.key,
            kind(found)
        ))
    }

    fn lsp(&self, lsp: &Map<String, Value>) -> Result<Layer, LayerError> {
        let mut layer = Layer::default();
        for (key, value) in lsp {
            let path = ["lsp", key.as_str()];
            match key.as_str() {
                "servers" => {
                    let Value::Object(servers) = value else {
                        return Err(self.type_error(&path, "an object", value));
                    };
                    for (id, server) in servers {
                        layer
                            .servers
                            .push(self.server(&["lsp", "servers", id], server)?);
                    }
                }
                "diagnosticTimeout" => layer.diagnostic_timeout_ms = Some(self.u64(&path, value)?),
                "firstTouchTimeout" => layer.first_touch_timeout_ms = Some(self.u64(&path, value)?),
                "maxDiagnosticsPerFile" => {
                    layer.max_diagnostics_per_file = Some(self.usize(&path, value)?);
                }
                "maxProjectDiagnosticsFiles" => {
                    layer.max_other_files = Some(self.usize(&path, value)?);
                }
                "navigationTools" => layer.navigation_tools = Some(self.bool(&path, value)?),
                "maxOpenDocuments" => {
                    layer.max_open_documents = Some(self.usize(&path, value)?);
                }
                "includeSeverities" => {
                    let place = self.place(&path);
                    let names = self.strings(&path, value)?;
                    layer.include_severities =
                        Some(names.into_iter().map(|n| (n, place.clone())).collect());
                }
                id => layer.servers.push(self.server(&["lsp", id], value)?),
            }
        }
        Ok(layer)
    }

    fn server(&self, path: &[&str], value: &Value) -> Result<ServerLayer, LayerError> {
        let Value::Object(fields) = value else {
            return Err(self.type_error(path, "an object describing a server", value));
        };
        let id = path.last().copied().unwrap_or_default();
        let mut server = ServerLayer {
            id: id.to_string(),
            place: Some(self.place(path)),
            ..ServerLayer::default()
        };
        // `command` first, so that an explicit `args` wins over the command array's tail.
        if let Some(command) = fields.get("command") {
            let key = [path, &["command"]].concat();
            match command {
                Value::String(command) => server.command = Some(command.clone()),
                Value::Array(_) => {
                    let mut argv = self.strings(&key, command)?.into_iter();
                    let Some(program) = argv.next() else {
                        let place = self.place(&key);
                        return Err(place.error(format!(
                            "invalid value for key `{}`: expected a non-empty array (the program, then its arguments)",
                            place.key
                        )));
                    };
                    server.command = Some(program);
                    server.args = Some(argv.collect());
                }
                other => {
                    return Err(self.type_error(&key, "a string or an array of strings", other))
                }
            }
        }
        for (name, value) in fields {
            let key = [path, &[name.as_str()]].concat();
            match name.as_str() {
                "command" => {}
                "enabled" => server.enabled = Some(self.bool(&key, value)?),
                "disabled" => server.enabled = Some(!self.bool(&key, value)?),
                "args" => server.args = Some(self.strings(&key, value)?),
                "extensions" => server.extensions = Some(self.strings(&key, value)?),
                "rootMarkers" => server.root_markers = Some(self.strings(&key, value)?),
                "sidecar" => server.sidecar = Some(self.strings(&key, value)?),
                "languageId" => server.language_id = Some(self.string(&key, value)?),
                "installHint" => server.install_hint = Some(self.string(&key, value)?),
                "fallbackFor" => server.fallback_for = Some(self.string(&key, value)?),
                "env" => server.env = Some(self.string_map(&key, value)?),
                "initializationOptions" | "initialization" => {
                    server.initialization_options = Some(value.clone());
                }
                "settings" => server.settings = Some(value.clone()),
                _ => tracing::warn!(key = %key.join("."), "ignoring unknown key in opencode.json"),
            }
        }
        Ok(server)
    }

    fn bool(&self, path: &[&str], value: &Value) -> Result<bool, LayerError> {
        value
            .as_bool()
            .ok_or_else(|| self.type_error(path, "a boolean", value))
    }

    fn u64(&self, path: &[&str], value: &Value) -> Result<u64, LayerError> {
        value
            .as_u64()
            .ok_or_else(|| self.type_error(path, "a non-negative integer", value))
    }

    fn usize(&self, path: &[&str], value: &Value) -> Result<usize, LayerError> {
        let number = self.u64(path, value)?;
        usize::try_from(number).map_err(|_| self.type_error(path, "a smaller integer", value))
    }

    fn string(&self, path: &[&str], value: &Value) -> Result<String, LayerError> {
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| self.type_error(path, "a string", value))
    }

    fn strings(&self, path: &[&str], value: &Value) -> Result<Vec<String>, LayerError> {
        let expected = "an array of strings";
        let Value::Array(items) = value else {
            return Err(self.type_error(path, expected, value));
        };
        items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| self.type_error(path, expected, value))
            })
            .collect()
    }

    fn string_map(
        &self,
        path: &[&str],
        value: &Value,
    ) -> Result<BTreeMap<String, String>, LayerError> {
        let expected = "an object of strings";
        let Value::Object(entries) = value else {
            return Err(self.type_error(path, expected, value));
        };
        entries
            .iter()
            .map(|(name, item)| {
                let key = [path, &[name.as_str()]].concat();
                Ok((name.clone(), self.string(&key, item)?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_or_true_lsp_gives_empty_layer() {
        assert_eq!(parse_opencode("{}"), Ok(Layer::default()));
        assert_eq!(parse_opencode(r#"{"lsp": true}"#), Ok(Layer::default()));
    }

    #[test]
    fn false_lsp_disables() {
        let layer = parse_opencode(r#"{"$schema": "x", "lsp": false}"#).expect("valid");
        assert_eq!(layer.enabled, Some(false));
    }

    #[test]
    fn llxprt_style_reads_settings_and_servers() {
        let text = r#"{"lsp": {
  "diagnosticTimeout": 500, "firstTouchTimeout": 900,
  "includeSeverities": ["error", "warning"], "maxDiagnosticsPerFile": 3,
  "maxProjectDiagnosticsFiles": 2, "navigationTools": false, "maxOpenDocuments": 50,
  "servers": {"mylang": {"command": "mylang-lsp", "args": ["--stdio"],
    "extensions": [".ml"], "rootMarkers": ["ml.toml"], "languageId": "ml",
    "env": {"A": "1"}, "initializationOptions": {"x": 1}, "settings": {"y": 2}}}
}}"#;
        let layer = parse_opencode(text).expect("valid");
        assert_eq!(layer.diagnostic_timeout_ms, Some(500));
        assert_eq!(layer.first_touch_timeout_ms, Some(900));
        assert_eq!(layer.max_diagnostics_per_file, Some(3));
        assert_eq!(layer.max_other_files, Some(2));
        assert_eq!(layer.navigation_tools, Some(false));
        assert_eq!(layer.max_open_documents, Some(50));
        let server = &layer.servers[0];
        assert_eq!(server.id, "mylang");
        assert_eq!(server.command.as_deref(), Some("mylang-lsp"));
        assert_eq!(server.args, Some(vec!["--stdio".to_string()]));
        assert_eq!(server.root_markers, Some(vec!["ml.toml".to_string()]));
        assert_eq!(server.language_id.as_deref(), Some("ml"));
        assert_eq!(server.settings, Some(serde_json::json!({"y": 2})));
        assert_eq!(
            server
                .place
                .as_ref()
                .map(|p| (p.key.as_str(), p.line, p.column)),
            Some(("lsp.servers.mylang", 5, 15))
        );
    }

    #[test]
    fn opencode_style_reads_command_array_and_disabled() {
        let text = r#"{"lsp": {"pyright": {"disabled": true},
  "mylang": {"command": ["mylang-lsp", "--stdio"], "extensions": [".ml"],
             "initialization": {"x": 1}}}}"#;
        let layer = parse_opencode(text).expect("valid");
        assert_eq!(layer.servers.len(), 2);
        let mylang = &layer.servers[0];
        assert_eq!(mylang.id, "mylang");
        assert_eq!(mylang.command.as_deref(), Some("mylang-lsp"));
        assert_eq!(mylang.args, Some(vec!["--stdio".to_string()]));
        assert_eq!(
            mylang.initialization_options,
            Some(serde_json::json!({"x": 1}))
        );
        assert_eq!(layer.servers[1].id, "pyright");
        assert_eq!(layer.servers[1].enabled, Some(false));
    }

    #[test]
    fn wrong_type_names_key_path() {
        let text = "{\n  \"lsp\": {\"servers\": {\"foo\": {\"command\": 3}}}\n}";
        let err = parse_opencode(text).expect_err("invalid");
        assert_eq!(err.key.as_deref(), Some("lsp.servers.foo.command"));
        assert_eq!((err.line, err.column), (2, 31));
        assert_eq!(
            err.message,
            "invalid type for key `lsp.servers.foo.command`: expected a string or an array of strings, found a number"
        );
    }

    #[test]
    fn wrong_lsp_type_names_lsp() {
        let err = parse_opencode(r#"{"lsp": 1}"#).expect_err("invalid");
        assert_eq!(
            err.message,
            "invalid type for key `lsp`: expected true, false or an object, found a number"
        );
    }

    #[test]
    fn syntax_error_has_json_position() {
        let err = parse_opencode("{\n  \"lsp\": ,\n}").expect_err("invalid");
        assert_eq!((err.line, err.column), (2, 10));
        assert!(err.message.starts_with("invalid JSON: "), "{}", err.message);
    }
}
