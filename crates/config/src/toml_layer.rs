//! Reading a squiggle TOML file into a [`Layer`], with errors that name the line and key.
//!
//! Positions come from toml's spans; the key of an error is the entry of toml's own parse
//! tree ([`DeTable`]) whose key or value holds the error's span.

use crate::error::LayerError;
use crate::model::Patch;
use crate::patch::{describe, keys_of, line_column, Format, Layer, Place, ServerEntry};
use crate::spec::ServerPatch;
use toml::de::{DeString, DeTable, DeValue};
use toml::Spanned;

/// Parses TOML text into a layer.
pub(crate) fn parse_toml(text: &str) -> Result<Layer, LayerError> {
    let mut patch: Patch = toml::from_str(text).map_err(|err| toml_error(text, &err))?;
    refuse_aliases(text)?;
    let servers = patch
        .servers
        .take()
        .unwrap_or_default()
        .into_iter()
        .map(|(id, server)| {
            let (line, column) = line_column(text, server.span().start);
            ServerEntry {
                place: Place {
                    key: format!("servers.{id}"),
                    line,
                    column,
                },
                id,
                patch: server.into_inner(),
            }
        })
        .collect();
    Ok(Layer { patch, servers })
}

/// Refuses opencode.json's camelCase names for keys (serde aliases, which serde would accept
/// here too): a TOML file writes the keys' own snake_case names.
fn refuse_aliases(text: &str) -> Result<(), LayerError> {
    let Ok(tree) = DeTable::parse(text) else {
        return Ok(());
    };
    let refuse = |key: &Spanned<DeString<'_>>, path: String, keys: &[&str]| {
        let name = key.get_ref().as_ref();
        if !keys.contains(&name) || !name.chars().any(|c| c.is_ascii_uppercase()) {
            return Ok(());
        }
        let names: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
        let raw = format!(
            "unknown field `{name}`, expected one of {}",
            names.join(", ")
        );
        let (line, column) = line_column(text, key.span().start);
        Err(LayerError {
            line,
            column,
            message: describe(&raw, Some(&path), Format::Toml),
            key: Some(path),
        })
    };
    for (key, value) in tree.get_ref() {
        refuse(key, key.get_ref().to_string(), keys_of::<Patch>())?;
        let (true, DeValue::Table(servers)) = (key.get_ref() == "servers", value.get_ref()) else {
            continue;
        };
        for (id, server) in servers {
            let DeValue::Table(fields) = server.get_ref() else {
                continue;
            };
            for (field, _) in fields {
                let path = format!("servers.{}.{}", id.get_ref(), field.get_ref());
                refuse(field, path, keys_of::<ServerPatch>())?;
            }
        }
    }
    Ok(())
}

/// Turns a toml error into a message naming the key and what was expected.
fn toml_error(text: &str, err: &toml::de::Error) -> LayerError {
    let span = err.span().unwrap_or(0..0);
    let (line, column) = line_column(text, span.start);
    let (tree, _) = DeTable::parse_recoverable(text);
    let mut path = Vec::new();
    let key = if key_path(tree.get_ref(), span.start, &mut path) {
        Some(path.join("."))
    } else {
        let mut last = None;
        unfinished(tree.get_ref(), span.start, &mut Vec::new(), &mut last);
        last.map(|(_, path)| path)
    };
    LayerError {
        line,
        column,
        message: describe(err.message().trim(), key.as_deref(), Format::Toml),
        key,
    }
}

/// Finds the innermost entry whose key or value holds `offset`, leaving its dotted path in
/// `path`; false (and `path` as it was) when none does.
fn key_path(table: &DeTable<'_>, offset: usize, path: &mut Vec<String>) -> bool {
    for (key, value) in table {
        path.push(key.get_ref().to_string());
        if key.span().contains(&offset) || in_value(value, offset, path) {
            return true;
        }
        path.pop();
    }
    false
}

/// For a syntax error: the entry whose value the parser could not read (toml's recovered tree
/// holds it with an empty span), the last one that starts before `offset`, as `last`.
fn unfinished(
    table: &DeTable<'_>,
    offset: usize,
    path: &mut Vec<String>,
    last: &mut Option<(usize, String)>,
) {
    for (key, value) in table {
        path.push(key.get_ref().to_string());
        let start = key.span().start;
        if value.span().is_empty() && start <= offset && last.as_ref().is_none_or(|l| l.0 <= start)
        {
            *last = Some((start, path.join(".")));
        }
        if let DeValue::Table(inner) = value.get_ref() {
            unfinished(inner, offset, path, last);
        }
        path.pop();
    }
}

/// Whether `offset` is inside `value`, extending `path` with the keys of any table inside it.
fn in_value(value: &Spanned<DeValue<'_>>, offset: usize, path: &mut Vec<String>) -> bool {
    let inner = match value.get_ref() {
        DeValue::Table(table) => key_path(table, offset, path),
        DeValue::Array(items) => items.iter().any(|item| match item.get_ref() {
            DeValue::Table(table) => key_path(table, offset, path),
            _ => false,
        }),
        _ => false,
    };
    inner || value.span().contains(&offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use squiggle_protocol::Severity;

    fn error(text: &str) -> LayerError {
        parse_toml(text).expect_err("invalid")
    }

    /// The key, line and column of the error reading `text`.
    fn placed(text: &str) -> (String, usize, usize) {
        let err = error(text);
        (err.key.unwrap_or_default(), err.line, err.column)
    }

    #[test]
    fn max_open_documents_is_read() {
        let layer = parse_toml("max_open_documents = 64\n").expect("valid");
        assert_eq!(layer.patch.max_open_documents, Some(64));
    }

    #[test]
    fn full_example_parses() {
        let text = r#"
lsp = true
diagnostic_timeout_ms = 4000
include_severities = ["error", "warning"]
max_file_bytes = 1024
[servers.pyright]
enabled = false
[servers.mylang]
command = "mylang-lsp"
args = ["--stdio"]
extensions = ["ml", ".mli"]
env = { FOO = "1" }
initialization_options = { a = 1 }
settings = { python = { analysis = { typeCheckingMode = "strict" } } }
sidecar = ["generator", "--watch"]
"#;
        let layer = parse_toml(text).expect("valid");
        assert_eq!(layer.patch.enabled, Some(true));
        assert_eq!(layer.patch.diagnostic_timeout_ms, Some(4000));
        assert_eq!(layer.patch.max_file_bytes, Some(1024));
        assert_eq!(
            layer.patch.include_severities,
            Some(vec![Severity::Error, Severity::Warning])
        );
        assert_eq!(layer.servers.len(), 2);
        let mylang = &layer.servers[0];
        assert_eq!(mylang.id, "mylang");
        assert_eq!(
            mylang.place,
            Place {
                key: "servers.mylang".to_string(),
                line: 8,
                column: 1
            }
        );
        let mylang = &mylang.patch;
        assert_eq!(
            mylang.extensions,
            Some(vec!["ml".to_string(), "mli".to_string()])
        );
        assert_eq!(
            mylang.settings,
            Some(Some(
                serde_json::json!({"python": {"analysis": {"typeCheckingMode": "strict"}}})
            ))
        );
        assert_eq!(
            mylang.initialization_options,
            Some(Some(serde_json::json!({"a": 1})))
        );
        assert_eq!(layer.servers[1].patch.enabled, Some(false));
    }

    #[test]
    fn wrong_type_names_key_and_expectation() {
        let err = error("lsp = true\nsettle_ms = \"fast\"\n");
        assert_eq!((err.line, err.column), (2, 13));
        assert_eq!(err.key.as_deref(), Some("settle_ms"));
        assert_eq!(
            err.message,
            "invalid type for key `settle_ms`: expected a non-negative integer, found a string \"fast\""
        );
    }

    #[test]
    fn wrong_type_in_server_table_names_dotted_key() {
        let err = error("[servers.pyright]\nenabled = \"no\"\n");
        assert_eq!((err.line, err.column), (2, 11));
        assert_eq!(err.key.as_deref(), Some("servers.pyright.enabled"));
        assert_eq!(
            err.message,
            "invalid type for key `servers.pyright.enabled`: expected a boolean, found a string \"no\""
        );
    }

    #[test]
    fn wrong_type_inside_multiline_array_names_array_key() {
        let err = error("include_severities = [\n  \"error\",\n  3,\n]\n");
        assert_eq!((err.line, err.column), (3, 3));
        assert_eq!(err.key.as_deref(), Some("include_severities"));
    }

    #[test]
    fn server_that_is_not_a_table_says_table_expected() {
        let err = error("[servers]\nx = 1\n");
        assert_eq!(err.key.as_deref(), Some("servers.x"));
        assert_eq!(
            err.message,
            "invalid type for key `servers.x`: expected a table, found an integer `1`"
        );
    }

    #[test]
    fn negative_number_is_invalid_value() {
        let err = error("max_other_files = -1\n");
        assert_eq!(
            err.message,
            "invalid value for key `max_other_files`: expected a non-negative integer, found an integer `-1`"
        );
    }

    #[test]
    fn unknown_top_level_key_is_named() {
        let err = error("settle_ms = 1\nbogus = 2\n");
        assert_eq!((err.line, err.column), (2, 1));
        assert_eq!(err.key.as_deref(), Some("bogus"));
        assert!(
            err.message.starts_with(
                "unknown key `bogus`; expected one of the keys `lsp`, `diagnostic_timeout_ms`"
            ),
            "{}",
            err.message
        );
    }

    #[test]
    fn unknown_server_key_is_named_with_table() {
        let err = error("[servers.pyright]\ncomand = \"x\"\n");
        assert_eq!((err.line, err.column), (2, 1));
        assert_eq!(err.key.as_deref(), Some("servers.pyright.comand"));
        assert!(err.message.starts_with(
            "unknown key `servers.pyright.comand`; expected one of the keys `enabled`"
        ));
    }

    #[test]
    fn unknown_key_in_inline_server_table_is_named() {
        let err = error("[servers]\nfoo = { command = \"x\", bogus = 1 }\n");
        assert_eq!(err.line, 2);
        assert_eq!(err.key.as_deref(), Some("servers.foo.bogus"));
    }

    #[test]
    fn a_value_that_looks_like_a_key_or_table_does_not_mislead() {
        let text =
            "[servers.x]\ninstall_hint = \"\"\"\n[servers.y]\ncommand = 1\n\"\"\"\ncommand = 3\n";
        assert_eq!(placed(text), ("servers.x.command".to_string(), 6, 11));
        let text = "lsp = true\nsettle_ms = \"settle_ms\"\n";
        assert_eq!(placed(text), ("settle_ms".to_string(), 2, 13));
    }

    #[test]
    fn camel_case_names_are_opencode_s_not_toml_s() {
        let text = "lsp = true\ndiagnosticTimeout = 5\n";
        assert_eq!(placed(text), ("diagnosticTimeout".to_string(), 2, 1));
        let expected = "unknown key `diagnosticTimeout`; expected one of the keys `lsp`, `diagnostic_timeout_ms`";
        assert!(error(text).message.starts_with(expected));
        let text = "[servers.pyright]\nrootMarkers = []\n";
        assert_eq!(placed(text).0, "servers.pyright.rootMarkers");
        let layer = parse_toml("[servers.x]\nsettings = { typeCheckingMode = \"strict\" }\n");
        assert!(layer.is_ok(), "keys inside values are the server's own");
    }

    #[test]
    fn camel_case_names_are_not_offered_for_toml() {
        let err = error("[servers.pyright]\nbogus = 1\n");
        assert!(!err.message.contains("rootMarkers"), "{}", err.message);
        assert!(err.message.contains("`root_markers`"), "{}", err.message);
    }

    #[test]
    fn syntax_error_has_position() {
        let err = error("settle_ms = = 1\n");
        assert_eq!((err.line, err.column), (1, 13));
        assert_eq!(err.key.as_deref(), Some("settle_ms"));
        assert_eq!(
            err.message,
            "invalid TOML at key `settle_ms`: extra `=`, expected nothing"
        );
    }
}
