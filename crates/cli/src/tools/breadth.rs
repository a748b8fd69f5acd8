//! The navigation tools beyond definition, references and hover: call hierarchy,
//! implementation, type definition, a folder's diagnostics, and a definition's body.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use squiggle_protocol::folder_report::{is_glob, render_folder, select_by_glob};
use squiggle_protocol::navigation::{render_body, render_calls, CallCaps, Direction, MAX_DEPTH};

use super::{
    asked_title, bool_arg, located, output, position_arg, position_schema, string_arg, target_of,
    Output, Spec, Toolbox,
};
use crate::folders;

/// At most this many implementations or type definitions are listed.
const MAX_IMPLEMENTATIONS: usize = 30;
/// At most this many callers or callees are listed (every level).
const MAX_CALLS: usize = 40;
/// At most this many call sites are listed under one caller or callee.
const MAX_SITES: usize = 5;
/// At most this many lines of a definition's body are returned.
const MAX_BODY_LINES: u32 = 80;
/// At most this many files are checked for one lsp_workspace_diagnostics call.
const MAX_FOLDER_FILES: usize = 100;

/// The names of the tools this module answers.
pub const NAMES: &[&str] = &[
    "lsp_call_hierarchy",
    "lsp_implementation",
    "lsp_type_definition",
    "lsp_workspace_diagnostics",
];

/// The schema entry of `include_body` on lsp_goto_definition.
pub fn include_body_schema() -> (&'static str, Value) {
    (
        "include_body",
        json!({"type": "boolean", "description": "Also return the definition's whole source (capped)."}),
    )
}

/// The specs of the tools this module answers.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            name: "lsp_call_hierarchy",
            description: "Who calls a function (incoming) or what it calls (outgoing), `depth` levels deep, each call site with its line. Address it like lsp_goto_definition.",
            schema: position_schema(Some((
                "direction",
                json!({"enum": ["incoming", "outgoing"], "default": "incoming"}),
            )))
            .and_property("depth", json!({"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": 1})),
        },
        Spec {
            name: "lsp_implementation",
            description: "Where an interface or abstract method is implemented. Address it like lsp_goto_definition.",
            schema: position_schema(None),
        },
        Spec {
            name: "lsp_type_definition",
            description: "Where the type of a symbol is defined. Address it like lsp_goto_definition.",
            schema: position_schema(None),
        },
    ]
}

/// The spec of lsp_workspace_diagnostics, offered (like lsp_diagnostics) even when the
/// navigation tools are not.
pub fn diagnostics_spec() -> Spec {
    Spec {
        name: "lsp_workspace_diagnostics",
        description: "Diagnostics of the files under a folder or matching a glob (as git lists them), grouped by file; files no server checked are named.",
        schema: json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "A folder or a glob like `src/**/*.py`, relative to the workspace root; default: all."}
        }}),
    }
}

/// Adds a property to an object schema.
trait AndProperty {
    fn and_property(self, name: &str, schema: Value) -> Value;
}

impl AndProperty for Value {
    fn and_property(mut self, name: &str, schema: Value) -> Value {
        if let Some(properties) = self.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert(name.to_string(), schema);
        }
        self
    }
}

impl Toolbox {
    /// Runs one of this module's tools.
    pub(super) async fn call_breadth(
        &self,
        name: &str,
        args: &Map<String, Value>,
    ) -> Result<Output, String> {
        let squiggle = &self.squiggle;
        if name == "lsp_workspace_diagnostics" {
            return self.folder_diagnostics(string_arg(args, "path")?).await;
        }
        let file = string_arg(args, "file")?.ok_or("`file` is required")?;
        let target = target_of(args)?;
        let relative = squiggle.relative_path(file);
        match name {
            "lsp_call_hierarchy" => {
                let direction = match string_arg(args, "direction")? {
                    Some(direction) => direction.parse::<Direction>()?,
                    None => Direction::Incoming,
                };
                let depth = position_arg(args, "depth")?.unwrap_or(1);
                if depth > MAX_DEPTH {
                    return Err(format!("`depth` must be 1 to {MAX_DEPTH}, not {depth}"));
                }
                let answer = squiggle
                    .call_hierarchy(file, target, direction, depth)
                    .await
                    .map_err(|e| e.to_string())?;
                let what = match direction {
                    Direction::Incoming => "incoming calls to",
                    Direction::Outgoing => "outgoing calls from",
                };
                let title = asked_title(what, &relative, &answer);
                let caps = CallCaps {
                    max_calls: MAX_CALLS,
                    max_sites: MAX_SITES,
                };
                let text = render_calls(&title, direction, &answer.items, caps);
                let structured = json!({
                    "position": super::position_json(answer.position),
                    "symbol": answer.subject,
                    "direction": direction,
                    "depth": depth,
                    "calls": answer.items,
                    "notes": answer.notes,
                });
                Ok(output(text, &answer.notes, structured))
            }
            "lsp_implementation" => {
                let answer = squiggle
                    .implementation(file, target)
                    .await
                    .map_err(|e| e.to_string())?;
                let title = asked_title("implementations of", &relative, &answer);
                Ok(located(answer, &title, MAX_IMPLEMENTATIONS))
            }
            _ => {
                let answer = squiggle
                    .type_definition(file, target)
                    .await
                    .map_err(|e| e.to_string())?;
                let title = asked_title("type definition of", &relative, &answer);
                Ok(located(answer, &title, MAX_IMPLEMENTATIONS))
            }
        }
    }

    /// A definition's answer with the bodies of its definitions added, when asked for.
    pub(super) async fn with_bodies(
        &self,
        mut output: Output,
        locations: &[squiggle_actors::Location],
        args: &Map<String, Value>,
    ) -> Result<Output, String> {
        if !bool_arg(args, "include_body")?.unwrap_or(false) || locations.is_empty() {
            return Ok(output);
        }
        let (bodies, notes) = self
            .squiggle
            .definition_bodies(locations, MAX_BODY_LINES)
            .await;
        let text: String = bodies.iter().map(render_body).collect();
        // The body goes after the locations and before the notes.
        let at = output.text.find("note: ").unwrap_or(output.text.len());
        output.text.insert_str(at, &text);
        for note in &notes {
            output.text.push_str(&format!("note: {note}\n"));
        }
        if let Value::Object(map) = &mut output.structured {
            map.insert("bodies".to_string(), json!(bodies));
            if let Some(Value::Array(all)) = map.get_mut("notes") {
                all.extend(notes.into_iter().map(Value::String));
            }
        }
        Ok(output)
    }

    /// The diagnostics of the files under a folder or matching a glob, at the configured
    /// severities and caps.
    async fn folder_diagnostics(&self, path: Option<&str>) -> Result<Output, String> {
        let squiggle = &self.squiggle;
        let root = squiggle.workspace_root().to_path_buf();
        let path = path.unwrap_or(".");
        let (files, more) = if is_glob(path) {
            let (all, _) = folders::files_in(&root, squiggle.config(), usize::MAX);
            let relative: Vec<String> = all.iter().map(|f| squiggle.relative_path(f)).collect();
            let chosen = select_by_glob(path, &relative)?;
            let more = chosen.len() > MAX_FOLDER_FILES;
            let files: Vec<PathBuf> = (chosen.iter().take(MAX_FOLDER_FILES))
                .map(|f| root.join(f))
                .collect();
            (files, more)
        } else {
            let folder = folder_inside(&root, path)?;
            folders::files_in(&folder, squiggle.config(), MAX_FOLDER_FILES)
        };
        let answer = squiggle
            .workspace_diagnostics(&files)
            .await
            .map_err(|e| e.to_string())?;
        let mut notes = answer.notes;
        if more {
            notes.push(format!(
                "only the first {MAX_FOLDER_FILES} files (in path order) were checked; name a smaller folder or glob for the rest"
            ));
        }
        if files.is_empty() {
            notes.push(format!("no file of a known type under {path}"));
        }
        let caps = squiggle.config().caps();
        let report = &answer.items;
        let text = render_folder(report, &caps);
        let structured = json!({
            "files_asked": report.files_asked,
            "files": report.kept(&caps),
            "not_checked": report.not_checked,
            "notes": notes,
        });
        Ok(output(text, &notes, structured))
    }
}

/// `path` as a folder inside the workspace root, or why not.
fn folder_inside(root: &Path, path: &str) -> Result<PathBuf, String> {
    let joined = root.join(path);
    let folder = joined
        .canonicalize()
        .map_err(|err| format!("{path}: {err}"))?;
    if !folder.starts_with(root) {
        return Err(format!(
            "{path} is outside the workspace root {}",
            root.display()
        ));
    }
    if !folder.is_dir() {
        return Err(format!(
            "{path} is not a folder; give a folder or a glob (use lsp_diagnostics for one file)"
        ));
    }
    Ok(folder)
}
