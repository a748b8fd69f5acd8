//! Reading a squiggle TOML file into a [`Layer`], with errors that name the line and key.

use crate::error::LayerError;
use crate::layer::{Layer, Place, ServerLayer};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// The top level of a squiggle TOML file, every key optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    lsp: Option<bool>,
    diagnostic_timeout_ms: Option<u64>,
    first_touch_timeout_ms: Option<u64>,
    other_files_wait_ms: Option<u64>,
    restart_cooldown_ms: Option<u64>,
    initialize_timeout_ms: Option<u64>,
    settle_ms: Option<u64>,
    include_severities: Option<Vec<Spanned<String>>>,
    max_diagnostics_per_file: Option<usize>,
    max_other_files: Option<usize>,
    max_total_lines: Option<usize>,
    navigation_tools: Option<bool>,
    max_file_bytes: Option<u64>,
    max_open_documents: Option<usize>,
    daemon: Option<bool>,
    daemon_idle_seconds: Option<u64>,
    servers: Option<BTreeMap<String, Spanned<TomlServer>>>,
}

/// One `[servers.<id>]` table, every key optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlServer {
    enabled: Option<bool>,
    command: Option<String>,
    args: Option<Vec<String>>,
    extensions: Option<Vec<String>>,
    language_id: Option<String>,
    root_markers: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    initialization_options: Option<serde_json::Value>,
    settings: Option<serde_json::Value>,
    sidecar: Option<Vec<String>>,
    settle_ms: Option<u64>,
    install_hint: Option<String>,
    fallback_for: Option<String>,
}

/// Parses TOML text into a layer.
pub(crate) fn parse_toml(text: &str) -> Result<Layer, LayerError> {
    let file: TomlFile = toml::from_str(text).map_err(|err| toml_error(text, &err))?;
    let place = |key: String, span: Range<usize>| {
        let (line, column) = line_column(text, span.start);
        Place { key, line, column }
    };
    let include_severities = file.include_severities.map(|names| {
        names
            .into_iter()
            .map(|name| {
                let p = place("include_severities".to_string(), name.span());
                (name.into_inner(), p)
            })
            .collect()
    });
    let servers = file
        .servers
        .unwrap_or_default()
        .into_iter()
        .map(|(id, server)| {
            let p = place(format!("servers.{id}"), server.span());
            let s = server.into_inner();
            ServerLayer {
                id,
                place: Some(p),
                enabled: s.enabled,
                command: s.command,
                args: s.args,
                extensions: s.extensions,
                language_id: s.language_id,
                root_markers: s.root_markers,
                env: s.env,
                initialization_options: s.initialization_options,
                settings: s.settings,
                sidecar: s.sidecar,
                settle_ms: s.settle_ms,
                install_hint: s.install_hint,
                fallback_for: s.fallback_for,
            }
        })
        .collect();
    Ok(Layer {
        enabled: file.lsp,
        diagnostic_timeout_ms: file.diagnostic_timeout_ms,
        first_touch_timeout_ms: file.first_touch_timeout_ms,
        other_files_wait_ms: file.other_files_wait_ms,
        restart_cooldown_ms: file.restart_cooldown_ms,
        initialize_timeout_ms: file.initialize_timeout_ms,
        settle_ms: file.settle_ms,
        include_severities,
        max_diagnostics_per_file: file.max_diagnostics_per_file,
        max_other_files: file.max_other_files,
        max_total_lines: file.max_total_lines,
        navigation_tools: file.navigation_tools,
        max_file_bytes: file.max_file_bytes,
        max_open_documents: file.max_open_documents,
        daemon: file.daemon,
        daemon_idle_seconds: file.daemon_idle_seconds,
        servers,
    })
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

/// Turns a toml error into a message naming the key and what was expected.
fn toml_error(text: &str, err: &toml::de::Error) -> LayerError {
    let span = err.span().unwrap_or(0..0);
    let (line, column) = line_column(text, span.start);
    let raw = err.message().trim();
    let unknown = raw.strip_prefix("unknown field `").and_then(|rest| {
        let end = rest.find('`')?;
        Some((&rest[..end], rest[end + 1..].trim_start_matches([',', ' '])))
    });
    let key = key_at(text, span.start, unknown.map(|(field, _)| field));
    let message = match (unknown, &key) {
        (Some((_, expected)), Some(key)) => {
            let expected = expected.replace("expected one of", "expected one of the keys");
            format!("unknown key `{key}`; {expected}")
        }
        _ => describe(raw, key.as_deref()),
    };
    LayerError {
        line,
        column,
        key,
        message,
    }
}

/// Rewrites serde's `invalid type: X, expected Y` for a person editing the file.
fn describe(raw: &str, key: Option<&str>) -> String {
    let for_key = key.map(|k| format!(" for key `{k}`")).unwrap_or_default();
    for (prefix, what) in [
        ("invalid type: ", "invalid type"),
        ("invalid value: ", "invalid value"),
    ] {
        if let Some(rest) = raw.strip_prefix(prefix) {
            if let Some(at) = rest.rfind(", expected ") {
                let found = article(&rest[..at]);
                let expected = expected_name(&rest[at + ", expected ".len()..]);
                return format!("{what}{for_key}: expected {expected}, found {found}");
            }
        }
    }
    match key {
        Some(key) => format!("invalid TOML at key `{key}`: {raw}"),
        None => format!("invalid TOML: {raw}"),
    }
}

fn expected_name(expected: &str) -> String {
    match expected {
        "u64" | "usize" | "u32" => "a non-negative integer".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => "a table".to_string(),
        other if other.starts_with("struct ") => "a table".to_string(),
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

/// The dotted key at a byte offset, worked out from the table header above and the key on the line.
fn key_at(text: &str, offset: usize, unknown_field: Option<&str>) -> Option<String> {
    let offset = offset.min(text.len());
    let lines = line_starts(text);
    let current = lines.iter().rposition(|&start| start <= offset)?;
    let mut header: Option<String> = None;
    let mut line_key: Option<(String, usize)> = None;
    for index in (0..=current).rev() {
        let line = line_text(text, &lines, index);
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            header = Some(header_name(trimmed));
            break;
        }
        if line_key.is_none() {
            if let Some(key) = leading_key(line) {
                line_key = Some((key, lines[index]));
            }
        }
    }
    let mut parts: Vec<String> = Vec::new();
    if let Some(header) = header.filter(|h| !h.is_empty()) {
        parts.push(header);
    }
    match (unknown_field, line_key) {
        (Some(field), Some((key, start))) => {
            let key_offset = start + text[start..].find(key.as_str()).unwrap_or(0);
            if key_offset != offset {
                parts.push(key);
            }
            parts.push(field.to_string());
        }
        (Some(field), None) => {
            if parts
                .last()
                .is_none_or(|last| last.rsplit('.').next() != Some(field))
            {
                parts.push(field.to_string());
            }
        }
        (None, Some((key, _))) => parts.push(key),
        (None, None) => {}
    }
    let key = parts.join(".");
    Some(key).filter(|k| !k.is_empty())
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

fn line_text<'a>(text: &'a str, starts: &[usize], index: usize) -> &'a str {
    let start = starts[index];
    let end = starts.get(index + 1).map_or(text.len(), |&next| next - 1);
    text[start..end].trim_end_matches('\r')
}

/// `servers.mylang` for `[servers.mylang]  # comment`.
fn header_name(trimmed: &str) -> String {
    let inner = trimmed.trim_start_matches('[');
    let end = inner.find(']').unwrap_or(inner.len());
    inner[..end]
        .split('.')
        .map(|part| part.trim().trim_matches('"').trim_matches('\''))
        .collect::<Vec<_>>()
        .join(".")
}

/// `settle_ms` for `settle_ms = "x"`; None when the line does not start with `key =`.
fn leading_key(line: &str) -> Option<String> {
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    let simple = key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | '\'' | ' '));
    if key.is_empty() || !simple {
        return None;
    }
    Some(
        key.split('.')
            .map(|part| part.trim().trim_matches('"').trim_matches('\''))
            .collect::<Vec<_>>()
            .join("."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> LayerError {
        parse_toml(text).expect_err("invalid")
    }

    #[test]
    fn max_open_documents_is_read() {
        let layer = parse_toml("max_open_documents = 64\n").expect("valid");
        assert_eq!(layer.max_open_documents, Some(64));
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
        assert_eq!(layer.enabled, Some(true));
        assert_eq!(layer.diagnostic_timeout_ms, Some(4000));
        assert_eq!(layer.max_file_bytes, Some(1024));
        let severities = layer.include_severities.expect("severities");
        assert_eq!(severities[1].0, "warning");
        assert_eq!(severities[1].1.line, 4);
        assert_eq!(layer.servers.len(), 2);
        let mylang = &layer.servers[0];
        assert_eq!(mylang.id, "mylang");
        assert_eq!(
            mylang.place,
            Some(Place {
                key: "servers.mylang".to_string(),
                line: 8,
                column: 1
            })
        );
        assert_eq!(
            mylang.settings,
            Some(serde_json::json!({"python": {"analysis": {"typeCheckingMode": "strict"}}}))
        );
        assert_eq!(
            mylang.initialization_options,
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(layer.servers[1].enabled, Some(false));
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
    fn syntax_error_has_position() {
        let err = error("settle_ms = = 1\n");
        assert_eq!((err.line, err.column), (1, 13));
        assert_eq!(err.key.as_deref(), Some("settle_ms"));
        assert_eq!(
            err.message,
            "invalid TOML at key `settle_ms`: extra `=`, expected nothing"
        );
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("a\néé = x", 7), (2, 4));
        assert_eq!(line_column("abc", 0), (1, 1));
        assert_eq!(line_column("abc", 99), (1, 4));
    }
}
