//! What one source of settings (a TOML file or opencode.json) gives, and the one place it is
//! applied. The keys themselves are declared once, in [`crate::model`]; here are the checks
//! their values get while they are read, and the wording of a reader's errors.

use crate::error::LayerError;
use crate::model::{Config, Patch};
use crate::spec::{ServerPatch, ServerSpec};
use serde::de::{Deserialize, Deserializer, Error as _, Unexpected};
use squiggle_protocol::Severity;

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

/// Everything one source gives: the global keys, then its servers in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Layer {
    /// The global keys (its `servers` already moved to [`Layer::servers`]).
    pub patch: Patch,
    /// The servers it configures, in the order they are applied.
    pub servers: Vec<ServerEntry>,
}

/// What one source gives for one server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerEntry {
    /// The server id (`pyright`).
    pub id: String,
    /// Where the server's table or object starts, for errors about it as a whole.
    pub place: Place,
    /// Its keys.
    pub patch: ServerPatch,
}

impl ServerEntry {
    /// Builds a server that is not built in; it must name a command and extensions.
    fn into_new_spec(self) -> Result<ServerSpec, LayerError> {
        let mut missing = Vec::new();
        if self.patch.command.as_deref().is_none_or(str::is_empty) {
            missing.push("`command` (the program to run)");
        }
        if self.patch.extensions.as_ref().is_none_or(Vec::is_empty) {
            missing.push("`extensions` (the file extensions it serves)");
        }
        if !missing.is_empty() {
            return Err(self.place.error(format!(
                "server `{}` is not built in, so key `{}` must set {}",
                self.id,
                self.place.key,
                missing.join(" and ")
            )));
        }
        let command = self.patch.command.clone().unwrap_or_default();
        let mut spec = ServerSpec {
            id: self.id.clone(),
            install_hint: format!("install `{command}` and make sure it is on PATH"),
            language_id: self.id,
            ..ServerSpec::default()
        };
        self.patch.apply_to(&mut spec);
        Ok(spec)
    }
}

impl Config {
    /// Applies one layer on top of this configuration; on error nothing is changed.
    pub(crate) fn apply_layer(&mut self, layer: Layer) -> Result<(), LayerError> {
        let mut next = self.clone();
        layer.patch.apply_to(&mut next);
        for server in layer.servers {
            match next.servers.get_mut(&server.id) {
                Some(spec) => server.patch.apply_to(spec),
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

/// `include_severities`: names of severities, sorted and without repeats.
pub(crate) fn severities<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<Severity>>, D::Error> {
    /// One severity, read by its name; a bad name is an error at that name.
    struct Named(Severity);
    impl<'de> Deserialize<'de> for Named {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            /// Parses the name inside the deserializer, which then places the error.
            struct Visitor;
            impl serde::de::Visitor<'_> for Visitor {
                type Value = Named;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a severity (error, warning, info or hint)")
                }
                fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Named, E> {
                    name.parse()
                        .map(Named)
                        .map_err(|err| E::custom(format!("invalid value: {err}")))
                }
            }
            deserializer.deserialize_str(Visitor)
        }
    }
    let mut severities: Vec<Severity> = Vec::<Named>::deserialize(deserializer)?
        .into_iter()
        .map(|named| named.0)
        .collect();
    severities.sort();
    severities.dedup();
    Ok(Some(severities))
}

/// `extensions`: lowercase, without a leading dot, empty ones dropped.
pub(crate) fn extensions<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<String>>, D::Error> {
    let extensions = Vec::<String>::deserialize(deserializer)?
        .into_iter()
        .map(|ext| ext.trim().trim_start_matches('.').to_ascii_lowercase())
        .filter(|ext| !ext.is_empty())
        .collect();
    Ok(Some(extensions))
}

/// A command and its arguments, where an empty list means none (`sidecar = []`).
pub(crate) fn argv<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<Vec<String>>>, D::Error> {
    let argv = Vec::<String>::deserialize(deserializer)?;
    Ok(Some(Some(argv).filter(|argv| !argv.is_empty())))
}

/// A text (a server id, a token prefix), where an empty one means none (`fallback_for = ""`).
pub(crate) fn optional_text<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    let id = String::deserialize(deserializer)?;
    Ok(Some(Some(id).filter(|id| !id.is_empty())))
}

/// An opencode `command`: a program, or the program and its arguments in one array.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandLine {
    /// The program to run.
    pub program: String,
    /// Its arguments, when given in the same array.
    pub args: Option<Vec<String>>,
}

impl<'de> Deserialize<'de> for CommandLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Accepts a string or an array of strings.
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = CommandLine;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an array of strings")
            }
            fn visit_str<E: serde::de::Error>(self, program: &str) -> Result<CommandLine, E> {
                Ok(CommandLine {
                    program: program.to_string(),
                    args: None,
                })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<CommandLine, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                let mut argv = argv.into_iter();
                let Some(program) = argv.next() else {
                    return Err(A::Error::invalid_value(
                        Unexpected::Other("an empty array"),
                        &"a non-empty array (the program, then its arguments)",
                    ));
                };
                Ok(CommandLine {
                    program,
                    args: Some(argv.collect()),
                })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// The keys (and aliases) serde reads into `T`, asked of its derived `Deserialize`.
pub(crate) fn keys_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    /// A deserializer that only notes the field names a struct asks for.
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(Self::Error::custom("probed"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

/// Which format an error message speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// A squiggle TOML file.
    Toml,
    /// opencode.json.
    Json,
}

/// Rewrites a serde message (`invalid type: X, expected Y`, `unknown field ...`) for a person
/// editing the file, naming the key.
pub(crate) fn describe(raw: &str, key: Option<&str>, format: Format) -> String {
    if let (Some(rest), Some(key)) = (raw.strip_prefix("unknown field `"), key) {
        if let Some(end) = rest.find('`') {
            let expected = rest[end + 1..].trim_start_matches([',', ' ']);
            return format!("unknown key `{key}`; {}", keys_expected(expected));
        }
    }
    let for_key = key.map(|k| format!(" for key `{k}`")).unwrap_or_default();
    for (prefix, what) in [
        ("invalid type: ", "invalid type"),
        ("invalid value: ", "invalid value"),
    ] {
        if let Some(rest) = raw.strip_prefix(prefix) {
            return match rest.rfind(", expected ") {
                Some(at) => {
                    let found = article(&rest[..at]);
                    let expected = expected_name(&rest[at + ", expected ".len()..], format);
                    format!("{what}{for_key}: expected {expected}, found {found}")
                }
                None => format!("{what}{for_key}: {rest}"),
            };
        }
    }
    let format = match format {
        Format::Toml => "TOML",
        Format::Json => "JSON",
    };
    match key {
        Some(key) => format!("invalid {format} at key `{key}`: {raw}"),
        None => format!("invalid {format}: {raw}"),
    }
}

/// serde's list of expected fields as the keys of a TOML file: snake_case names only (the
/// camelCase aliases are opencode.json's).
fn keys_expected(expected: &str) -> String {
    let Some(list) = expected.strip_prefix("expected one of ") else {
        return expected.to_string();
    };
    let keys: Vec<&str> = list
        .split(", ")
        .filter(|name| !name.chars().any(|c| c.is_ascii_uppercase()))
        .collect();
    format!("expected one of the keys {}", keys.join(", "))
}

fn expected_name(expected: &str, format: Format) -> String {
    let object = match format {
        Format::Toml => "a table",
        Format::Json => "an object",
    };
    match expected {
        "u64" | "usize" | "u32" => "a non-negative integer".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => object.to_string(),
        other if other.starts_with("struct ") => object.to_string(),
        other => other.to_string(),
    }
}

fn article(found: &str) -> String {
    for (word, with) in [
        ("string", "a string"),
        ("integer", "an integer"),
        ("floating point", "a float"),
        ("boolean", "a boolean"),
        ("sequence", "an array"),
        ("map", "a table"),
    ] {
        if let Some(rest) = found.strip_prefix(word) {
            return format!("{with}{rest}");
        }
    }
    found.to_string()
}

/// The 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
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

    fn server(id: &str, patch: ServerPatch) -> ServerEntry {
        ServerEntry {
            id: id.to_string(),
            place: place(&format!("servers.{id}")),
            patch,
        }
    }

    /// The defaults with one server's patch applied.
    fn with_server(id: &str, patch: ServerPatch) -> Config {
        let mut config = Config::default();
        let layer = Layer {
            servers: vec![server(id, patch)],
            ..Layer::default()
        };
        config.apply_layer(layer).expect("applies");
        config
    }

    #[test]
    fn override_replaces_only_given_fields() {
        let args = Some(vec!["--verbose".to_string()]);
        let config = with_server(
            "pyright",
            ServerPatch {
                args,
                ..ServerPatch::default()
            },
        );
        let pyright = &config.servers["pyright"];
        assert_eq!(pyright.args, ["--verbose"]);
        assert_eq!(pyright.command, "pyright-langserver");
        assert_eq!(pyright.extensions, ["py", "pyi"]);
    }

    #[test]
    fn new_server_gets_defaults() {
        let patch = ServerPatch {
            command: Some("mylang-lsp".to_string()),
            extensions: Some(vec!["ml".to_string()]),
            ..ServerPatch::default()
        };
        let config = with_server("mylang", patch);
        let spec = &config.servers["mylang"];
        assert_eq!(spec.extensions, ["ml"]);
        assert_eq!(spec.language_id, "mylang");
        assert!(spec.enabled);
        assert_eq!(
            spec.install_hint,
            "install `mylang-lsp` and make sure it is on PATH"
        );
    }

    #[test]
    fn new_server_without_command_names_key_and_changes_nothing() {
        let mut config = Config::default();
        let layer = Layer {
            patch: Patch {
                settle_ms: Some(7),
                ..Patch::default()
            },
            servers: vec![server(
                "mylang",
                ServerPatch {
                    extensions: Some(vec!["ml".to_string()]),
                    ..ServerPatch::default()
                },
            )],
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
    fn value_checks_normalize() {
        #[derive(Debug, serde::Deserialize)]
        struct Values {
            #[serde(deserialize_with = "severities")]
            severities: Option<Vec<Severity>>,
            #[serde(deserialize_with = "extensions")]
            extensions: Option<Vec<String>>,
            #[serde(deserialize_with = "argv")]
            sidecar: Option<Option<Vec<String>>>,
            #[serde(deserialize_with = "optional_text")]
            fallback_for: Option<Option<String>>,
        }
        let values: Values = serde_json::from_str(
            r#"{"severities": ["warning", "error", "warning"], "extensions": [".ML", "", "mli"],
                "sidecar": [], "fallback_for": ""}"#,
        )
        .expect("valid");
        assert_eq!(
            values.severities,
            Some(vec![Severity::Error, Severity::Warning])
        );
        assert_eq!(
            values.extensions,
            Some(vec!["ml".to_string(), "mli".to_string()])
        );
        assert_eq!(values.sidecar, Some(None));
        assert_eq!(values.fallback_for, Some(None));
    }

    #[test]
    fn command_line_is_a_string_or_a_non_empty_array() {
        let parse = |json: &str| serde_json::from_str::<CommandLine>(json);
        assert_eq!(
            parse(r#""x""#).expect("string").args,
            None,
            "a string gives no arguments"
        );
        let array = parse(r#"["x", "--stdio"]"#).expect("array");
        assert_eq!(
            (array.program.as_str(), array.args),
            ("x", Some(vec!["--stdio".to_string()]))
        );
        let empty = parse("[]").expect_err("empty").to_string();
        assert!(
            empty.starts_with("invalid value: an empty array, expected a non-empty array"),
            "{empty}"
        );
    }

    #[test]
    fn keys_of_lists_names_and_aliases() {
        let keys = keys_of::<Patch>();
        assert!(keys.contains(&"lsp") && !keys.contains(&"enabled"));
        assert!(keys.contains(&"diagnostic_timeout_ms") && keys.contains(&"diagnosticTimeout"));
        assert!(keys.contains(&"servers"));
        assert!(keys_of::<ServerPatch>().contains(&"rootMarkers"));
    }

    #[test]
    fn describe_speaks_of_keys() {
        assert_eq!(
            describe(
                "unknown field `bogus`, expected one of `lsp`, `diagnosticTimeout`, `diagnostic_timeout_ms`",
                Some("bogus"),
                Format::Toml
            ),
            "unknown key `bogus`; expected one of the keys `lsp`, `diagnostic_timeout_ms`"
        );
        assert_eq!(
            describe(
                "invalid type: integer `3`, expected a map",
                Some("lsp.servers"),
                Format::Json
            ),
            "invalid type for key `lsp.servers`: expected an object, found an integer `3`"
        );
        assert_eq!(
            describe("expected value", None, Format::Json),
            "invalid JSON: expected value"
        );
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("a\néé = x", 7), (2, 4));
        assert_eq!(line_column("abc", 0), (1, 1));
        assert_eq!(line_column("abc", 99), (1, 4));
    }
}
