//! Strict servers (TypeScript 7's `tsc --lsp`) refuse `null` where LSP makes a field optional:
//! an absent field must be left out. This finds a `null` in a message, for the fake server that
//! refuses like them and for the tests that check what squiggle sends.

use serde_json::Value;

/// The path of the first `null` in `value` (`params.textDocument.identifier`, `at` naming the
/// value itself), if any.
pub fn first_null(value: &Value, at: &str) -> Option<String> {
    match value {
        Value::Null => Some(at.to_string()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| first_null(item, &format!("{at}[{i}]"))),
        Value::Object(fields) => fields
            .iter()
            .find_map(|(name, field)| first_null(field, &format!("{at}.{name}"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_null_is_named_by_its_path() {
        let params =
            json!({"textDocument": {"uri": "u"}, "list": [1, {"x": null}], "identifier": null});
        let found = first_null(&params, "params");
        assert!(
            matches!(
                found.as_deref(),
                Some("params.identifier" | "params.list[1].x")
            ),
            "{found:?}"
        );
        assert_eq!(first_null(&json!({"a": [1, "b"]}), "params"), None);
        assert_eq!(
            first_null(&json!(null), "params").as_deref(),
            Some("params")
        );
    }
}
