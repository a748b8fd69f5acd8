//! The navigation tools beyond definition, references and hover: call hierarchy,
//! implementation, type definition, a folder's diagnostics, and a definition's body.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use squiggle_protocol::folder_report::{is_glob, render_folder, select_by_glob};
use squiggle_protocol::navigation::{render_body, render_calls, CallCaps, Direction, MAX_DEPTH};

use super::catalog::{CallHierarchyArgs, PositionArgs};
use super::error::PathError;
use super::{asked_title, located, output, Output, ToolError, Toolbox};
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

impl Toolbox {
    /// Who calls a function, or what it calls, `depth` levels deep.
    pub(super) async fn call_hierarchy(
        &self,
        args: CallHierarchyArgs,
    ) -> Result<Output, ToolError> {
        let squiggle = &self.squiggle;
        let (file, target) = (&args.at.file, args.at.target()?);
        let (direction, depth) = (args.direction, args.depth);
        if depth > MAX_DEPTH {
            return Err(ToolError::BadArgument {
                key: "depth",
                expected: format!("1 to {MAX_DEPTH}"),
                got: depth.to_string(),
            });
        }
        let answer = squiggle
            .call_hierarchy(file, target, direction, depth)
            .await?;
        let what = match direction {
            Direction::Incoming => "incoming calls to",
            Direction::Outgoing => "outgoing calls from",
        };
        let title = asked_title(what, &squiggle.relative_path(file), &answer);
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

    /// Where an interface or abstract method is implemented, or (`of_type`) where the type of
    /// a symbol is defined.
    pub(super) async fn implementations(
        &self,
        args: PositionArgs,
        of_type: bool,
    ) -> Result<Output, ToolError> {
        let (squiggle, file, target) = (&self.squiggle, &args.file, args.target()?);
        let (answer, what) = if of_type {
            let answer = squiggle.type_definition(file, target).await?;
            (answer, "type definition of")
        } else {
            let answer = squiggle.implementation(file, target).await?;
            (answer, "implementations of")
        };
        let title = asked_title(what, &squiggle.relative_path(file), &answer);
        Ok(located(answer, &title, MAX_IMPLEMENTATIONS))
    }

    /// A definition's answer with the bodies of its definitions added, when asked for.
    pub(super) async fn with_bodies(
        &self,
        mut output: Output,
        locations: &[squiggle_actors::Location],
        include_body: bool,
    ) -> Output {
        if !include_body || locations.is_empty() {
            return output;
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
        output
    }

    /// The diagnostics of the files under a folder or matching a glob, at the configured
    /// severities and caps.
    pub(super) async fn folder_diagnostics(&self, path: Option<&str>) -> Result<Output, ToolError> {
        let squiggle = &self.squiggle;
        let root = squiggle.workspace_root().to_path_buf();
        let path = path.unwrap_or(".");
        let (files, more) = if is_glob(path) {
            let (all, _) = folders::files_in(&root, squiggle.config(), usize::MAX);
            let relative: Vec<String> = all.iter().map(|f| squiggle.relative_path(f)).collect();
            let chosen = select_by_glob(path, &relative).map_err(PathError::BadGlob)?;
            let more = chosen.len() > MAX_FOLDER_FILES;
            let files: Vec<PathBuf> = chosen
                .iter()
                .take(MAX_FOLDER_FILES)
                .map(|f| root.join(f))
                .collect();
            (files, more)
        } else {
            let folder = folder_inside(&root, path)?;
            folders::files_in(&folder, squiggle.config(), MAX_FOLDER_FILES)
        };
        let answer = squiggle.workspace_diagnostics(&files).await?;
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
fn folder_inside(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    let joined = root.join(path);
    let folder =
        squiggle_protocol::paths::canonicalize(&joined).map_err(|err| PathError::Unresolved {
            path: path.to_string(),
            reason: err.to_string(),
        })?;
    if !folder.starts_with(root) {
        return Err(PathError::Outside {
            path: path.to_string(),
            root: root.display().to_string(),
        });
    }
    if !folder.is_dir() {
        return Err(PathError::NotAFolder(path.to_string()));
    }
    Ok(folder)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_folder_must_be_one_inside_the_root() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .canonicalize()
            .unwrap();
        assert_eq!(folder_inside(&root, "src").unwrap(), root.join("src"));
        assert_eq!(
            folder_inside(&root, "Cargo.toml"),
            Err(PathError::NotAFolder("Cargo.toml".into()))
        );
        assert!(matches!(
            folder_inside(&root, ".."),
            Err(PathError::Outside { .. })
        ));
        let missing = folder_inside(&root, "no-such-folder").unwrap_err();
        assert!(
            missing.to_string().starts_with("no-such-folder: "),
            "{missing}"
        );
    }
}
