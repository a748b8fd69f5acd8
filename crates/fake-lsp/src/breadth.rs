//! Answers for the navigation requests beyond definitions: a scripted error for
//! implementation, type definition and call hierarchy, and `workspace/diagnostic` over the
//! `.fake` files under the root.

use std::path::Path;

use serde_json::{json, Value};

use super::diagnose::{self, Encoding};
use super::symbols::fake_files;

/// The requests [`super::script::Script::breadth_error`] answers with an error.
pub const ERRING: &[&str] = &[
    "textDocument/implementation",
    "textDocument/typeDefinition",
    "textDocument/prepareCallHierarchy",
];

/// The `workspace/diagnostic` answer: a full report for every `.fake` file under `root`
/// (read from disk), sorted by path.
pub fn workspace_report(root: &Path, encoding: Encoding) -> Value {
    let mut files = Vec::new();
    fake_files(root, &mut files);
    files.sort();
    let items: Vec<Value> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).ok()?;
            Some(json!({
                "kind": "full",
                "uri": format!("file://{}", file.display()),
                "version": null,
                "items": diagnose::diagnostics(&text, encoding, Some(root)),
            }))
        })
        .collect();
    json!({ "items": items })
}
