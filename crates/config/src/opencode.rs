//! Reading the `lsp` key of an opencode.json-style document into a [`Layer`].
//!
//! Two styles are accepted, both camelCase: llxprt style (`{"servers": {"<id>": {..}},
//! "diagnosticTimeout": ms, ..}`) and opencode style, where every other key is a server id
//! (`{"<id>": {"disabled": true, "command": ["cmd", "arg"], ..}}`). The keys are squiggle's own
//! (their camelCase aliases, declared in [`crate::model`]); opencode's server keys `command` (as
//! an array), `disabled` and `initialization` are read here. Unknown server keys are ignored
//! with a warning: the file is opencode's too.
//!
//! Each object is first split into its entries, each value kept as the exact text it has in
//! the file ([`RawValue`]), so that every entry's place is its offset in the file and an error
//! from serde_json (line and column within the value) can be placed in the file.

use crate::error::LayerError;
use crate::model::Patch;
use crate::patch::{
    describe, keys_of, line_column, CommandLine, Format, Layer, Place, ServerEntry,
};
use crate::spec::ServerPatch;
use serde::de::value::MapDeserializer;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::cell::Cell;
use std::collections::BTreeMap;

/// The entries of one JSON object, each value as its text in the file.
type Entries<'a> = BTreeMap<String, &'a RawValue>;

/// Parses an opencode.json-style document into a layer (empty when it has no `lsp` key).
pub(crate) fn parse_opencode(text: &str) -> Result<Layer, LayerError> {
    let file = File { text };
    match file.lsp_key()? {
        None => Ok(Layer::default()),
        Some(lsp) => file.lsp_value(lsp),
    }
}

/// Reads `.dispatch/lsp.json` (the dispatch design's configuration file): a document like
/// opencode.json's (its `lsp` key), or, without an `lsp` key, the `lsp` object itself (settings
/// and servers by id).
pub(crate) fn parse_dispatch(text: &str) -> Result<Layer, LayerError> {
    let file = File { text };
    if let Some(lsp) = file.lsp_key()? {
        return file.lsp_value(lsp);
    }
    let whole: &RawValue =
        serde_json::from_str(text).map_err(|err| file.error(text, &err, None))?;
    match whole.get().starts_with('{') {
        true => file.lsp(whole),
        false => Err(file.place(whole, &["lsp"]).error(format!(
            "invalid type for .dispatch/lsp.json: expected an object, found {}",
            kind(whole.get())
        ))),
    }
}

/// A value that is there, even as `null` (which `Option` alone would read as absent).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The JSON type of a value's text, with an article, for messages.
fn kind(json: &str) -> &'static str {
    match json.as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ => "a number",
    }
}

/// The file being read, for placing its values.
struct File<'a> {
    text: &'a str,
}

impl<'a> File<'a> {
    /// The document's `lsp` key, as its text in the file (None when it has none).
    fn lsp_key(&self) -> Result<Option<&'a RawValue>, LayerError> {
        /// The document: only `lsp` is squiggle's.
        #[derive(Deserialize)]
        struct Document<'a> {
            #[serde(borrow, default, deserialize_with = "present")]
            lsp: Option<&'a RawValue>,
        }
        let document: Document<'a> =
            serde_json::from_str(self.text).map_err(|err| self.error(self.text, &err, None))?;
        Ok(document.lsp)
    }

    /// The layer an `lsp` value gives: `true` none, `false` squiggle disabled, an object its
    /// settings and servers.
    fn lsp_value(&self, lsp: &'a RawValue) -> Result<Layer, LayerError> {
        match lsp.get() {
            "true" => Ok(Layer::default()),
            "false" => Ok(Layer {
                patch: Patch {
                    enabled: Some(false),
                    ..Patch::default()
                },
                ..Layer::default()
            }),
            object if object.starts_with('{') => self.lsp(lsp),
            other => Err(self.place(lsp, &["lsp"]).error(format!(
                "invalid type for key `lsp`: expected true, false or an object, found {}",
                kind(other)
            ))),
        }
    }

    /// The byte offset of `value` in the file: its text is a slice of the file's.
    fn offset(&self, value: &str) -> usize {
        (value.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize)
    }

    /// The place of a value, under its dotted key.
    fn place(&self, value: &RawValue, path: &[&str]) -> Place {
        let (line, column) = line_column(self.text, self.offset(value.get()));
        Place {
            key: path.join("."),
            line,
            column,
        }
    }

    /// A serde_json error met reading `json` (a slice of the file), placed in the file.
    fn error(&self, json: &str, err: &serde_json::Error, key: Option<String>) -> LayerError {
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let full = err.to_string();
        let raw = full.strip_suffix(&suffix).unwrap_or(&full);
        let within = json
            .split_inclusive('\n')
            .take(err.line().saturating_sub(1))
            .map(str::len)
            .sum::<usize>()
            + err.column().saturating_sub(1);
        let (line, column) = line_column(self.text, self.offset(json) + within);
        LayerError {
            line,
            column,
            message: describe(raw, key.as_deref(), Format::Json),
            key,
        }
    }

    /// `T` read from some entries of an object, an error placed at the entry it came from.
    fn read<T: Deserialize<'a>>(
        &self,
        path: &[&str],
        entries: &[(String, &'a RawValue)],
    ) -> Result<T, LayerError> {
        let current: Cell<Option<(&str, &RawValue)>> = Cell::new(None);
        let pairs = entries.iter().map(|(key, value)| {
            current.set(Some((key, value)));
            (key.as_str(), *value)
        });
        T::deserialize(MapDeserializer::new(pairs)).map_err(|err: serde_json::Error| match current
            .get()
        {
            Some((key, value)) => {
                let key = [path, &[key]].concat().join(".");
                self.error(value.get(), &err, Some(key))
            }
            None => self.error(self.text, &err, Some(path.join("."))),
        })
    }

    /// The `lsp` object: settings, `servers`, and (opencode style) servers by id.
    fn lsp(&self, lsp: &'a RawValue) -> Result<Layer, LayerError> {
        let settings = keys_of::<Patch>();
        let mut known = Vec::new();
        let mut servers = Vec::new();
        for (key, value) in self.read_one::<Entries>(&["lsp"], lsp)? {
            if key == "servers" {
                for (id, server) in self.read_one::<Entries>(&["lsp", "servers"], value)? {
                    servers.push(self.server(&["lsp", "servers", id.as_str()], server)?);
                }
            } else if settings.contains(&key.as_str()) {
                known.push((key, value));
            } else {
                servers.push(self.server(&["lsp", key.as_str()], value)?);
            }
        }
        let patch = self.read(&["lsp"], &known)?;
        Ok(Layer { patch, servers })
    }

    /// One server's object.
    fn server(&self, path: &[&str], value: &'a RawValue) -> Result<ServerEntry, LayerError> {
        let keys = keys_of::<ServerPatch>();
        let mut known = Vec::new();
        let mut command = None;
        let mut disabled = None;
        for (name, field) in self.read_one::<Entries>(path, value)? {
            let key = [path, &[name.as_str()]].concat();
            match name.as_str() {
                "command" => command = Some(self.read_one::<CommandLine>(&key, field)?),
                "disabled" => disabled = Some(self.read_one::<bool>(&key, field)?),
                "initialization" => known.push(("initializationOptions".to_string(), field)),
                name if keys.contains(&name) => {
                    // The last of two names for one key wins, as opencode reads them.
                    known.retain(|(earlier, _)| earlier != name);
                    known.push((name.to_string(), field));
                }
                _ => tracing::warn!(key = %key.join("."), "ignoring unknown key in opencode.json"),
            }
        }
        let mut patch: ServerPatch = self.read(path, &known)?;
        if let Some(command) = command {
            patch.command = Some(command.program);
            // An explicit `args` wins over the command array's tail.
            patch.args = patch.args.or(command.args);
        }
        if let Some(disabled) = disabled {
            patch.enabled = patch.enabled.or(Some(!disabled));
        }
        Ok(ServerEntry {
            id: path.last().copied().unwrap_or_default().to_string(),
            place: self.place(value, path),
            patch,
        })
    }

    /// One value read as `T` (an object's entries, for one), an error placed in it.
    fn read_one<T: Deserialize<'a>>(
        &self,
        path: &[&str],
        value: &'a RawValue,
    ) -> Result<T, LayerError> {
        serde_json::from_str(value.get())
            .map_err(|err| self.error(value.get(), &err, Some(path.join("."))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use squiggle_protocol::Severity;

    #[test]
    fn absent_or_true_lsp_gives_empty_layer() {
        assert_eq!(parse_opencode("{}"), Ok(Layer::default()));
        assert_eq!(parse_opencode(r#"{"lsp": true}"#), Ok(Layer::default()));
    }

    #[test]
    fn false_lsp_disables() {
        let layer = parse_opencode(r#"{"$schema": "x", "lsp": false}"#).expect("valid");
        assert_eq!(layer.patch.enabled, Some(false));
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
        let patch = &layer.patch;
        assert_eq!(patch.diagnostic_timeout_ms, Some(500));
        assert_eq!(patch.first_touch_timeout_ms, Some(900));
        assert_eq!(patch.max_diagnostics_per_file, Some(3));
        assert_eq!(patch.max_other_files, Some(2));
        assert_eq!(patch.navigation_tools, Some(false));
        assert_eq!(patch.max_open_documents, Some(50));
        assert_eq!(
            patch.include_severities,
            Some(vec![Severity::Error, Severity::Warning])
        );
        let entry = &layer.servers[0];
        assert_eq!(entry.id, "mylang");
        assert_eq!(
            (
                entry.place.key.as_str(),
                entry.place.line,
                entry.place.column
            ),
            ("lsp.servers.mylang", 5, 25)
        );
        let server = &entry.patch;
        assert_eq!(server.command.as_deref(), Some("mylang-lsp"));
        assert_eq!(server.args, Some(vec!["--stdio".to_string()]));
        assert_eq!(server.root_markers, Some(vec!["ml.toml".to_string()]));
        assert_eq!(server.language_id.as_deref(), Some("ml"));
        assert_eq!(server.settings, Some(Some(serde_json::json!({"y": 2}))));
        assert_eq!(server.extensions, Some(vec!["ml".to_string()]));
    }

    #[test]
    fn opencode_style_reads_command_array_and_disabled() {
        let text = r#"{"lsp": {"pyright": {"disabled": true},
  "mylang": {"command": ["mylang-lsp", "--stdio"], "extensions": [".ml"],
             "initialization": {"x": 1}}}}"#;
        let layer = parse_opencode(text).expect("valid");
        assert_eq!(layer.servers.len(), 2);
        assert_eq!(layer.servers[0].id, "mylang");
        let mylang = &layer.servers[0].patch;
        assert_eq!(mylang.command.as_deref(), Some("mylang-lsp"));
        assert_eq!(mylang.args, Some(vec!["--stdio".to_string()]));
        assert_eq!(
            mylang.initialization_options,
            Some(Some(serde_json::json!({"x": 1})))
        );
        assert_eq!(layer.servers[1].id, "pyright");
        assert_eq!(layer.servers[1].patch.enabled, Some(false));
    }

    #[test]
    fn wrong_type_names_key_path() {
        let text = "{\n  \"lsp\": {\"servers\": {\"foo\": {\"command\": 3}}}\n}";
        let err = parse_opencode(text).expect_err("invalid");
        assert_eq!(err.key.as_deref(), Some("lsp.servers.foo.command"));
        assert_eq!((err.line, err.column), (2, 42));
        assert_eq!(
            err.message,
            "invalid type for key `lsp.servers.foo.command`: expected a string or an array of strings, found an integer `3`"
        );
    }

    /// The key, line, column and message of the error reading `text`.
    fn placed(text: &str) -> (String, usize, usize, String) {
        let err = parse_opencode(text).expect_err("invalid");
        (
            err.key.unwrap_or_default(),
            err.line,
            err.column,
            err.message,
        )
    }

    #[test]
    fn a_value_equal_to_a_key_does_not_move_the_error() {
        // A search for the text `"command"` would land on languageId's value.
        let text = "{\"lsp\": {\"foo\": {\"languageId\": \"command\",\n  \"command\": 3}}}";
        let (key, line, column, _) = placed(text);
        assert_eq!(
            (key.as_str(), line, column),
            ("lsp.foo.command", 2, 14),
            "at the 3"
        );
        // Nor the place of a server: `"bar"` appears first as a value.
        let text = "{\"lsp\": {\"foo\": {\"fallbackFor\": \"bar\"},\n  \"bar\": {\"extensions\": [\"b\"]}}}";
        let layer = parse_opencode(text).expect("valid");
        let bar = &layer.servers[0];
        assert_eq!(bar.id, "bar");
        assert_eq!(
            (bar.place.line, bar.place.column),
            (2, 10),
            "at bar's object"
        );
    }

    #[test]
    fn settings_errors_name_the_key_as_written() {
        assert_eq!(
            placed("{\"lsp\": {\"maxOpenDocuments\": -1}}"),
            (
                "lsp.maxOpenDocuments".to_string(),
                1,
                31,
                "invalid value for key `lsp.maxOpenDocuments`: expected a non-negative integer, \
                 found an integer `-1`"
                    .to_string()
            )
        );
        let err = parse_opencode(r#"{"lsp": {"includeSeverities": ["error", "fatal"]}}"#)
            .expect_err("invalid");
        assert_eq!(
            err.message,
            "invalid value for key `lsp.includeSeverities`: unknown severity `fatal` (expected error, warning, info or hint)"
        );
    }

    #[test]
    fn empty_command_array_is_refused() {
        let err = parse_opencode(r#"{"lsp": {"x": {"command": []}}}"#).expect_err("invalid");
        assert_eq!(err.key.as_deref(), Some("lsp.x.command"));
        assert_eq!(
            err.message,
            "invalid value for key `lsp.x.command`: expected a non-empty array (the program, then its arguments), found an empty array"
        );
    }

    #[test]
    fn unknown_server_keys_are_ignored_and_enabled_beats_disabled() {
        let text = r#"{"lsp": {"ruff": {"disabled": true, "enabled": true, "color": "red"}}}"#;
        let layer = parse_opencode(text).expect("valid");
        assert_eq!(layer.servers[0].patch.enabled, Some(true));
    }

    #[test]
    fn initialization_options_win_over_initialization() {
        let text = r#"{"lsp": {"x": {"initialization": {"a": 1}, "initializationOptions": {"b": 2},
            "command": "x", "extensions": ["x"]}}}"#;
        let layer = parse_opencode(text).expect("valid");
        assert_eq!(
            layer.servers[0].patch.initialization_options,
            Some(Some(serde_json::json!({"b": 2})))
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
