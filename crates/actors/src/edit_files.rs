//! A server's `WorkspaceEdit` on disk: planned against the files as they are, and written
//! atomically per file (a temporary file in the same folder, then a rename), only inside the
//! workspace root.

use std::io::Write;
use std::path::{Path, PathBuf};

use async_lsp::lsp_types::WorkspaceEdit;
use squiggle_protocol::navigation::{plan_edit, EditError, EditPlan};
use squiggle_protocol::{paths, PositionEncoding};

/// Why an edit was not (or not all) written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The edit cannot be planned against the files on disk.
    #[error(transparent)]
    Plan(#[from] EditError),
    /// A file resolves outside the workspace root once links are followed.
    #[error("{} resolves outside the workspace root; nothing was written", .0.display())]
    Outside(PathBuf),
    /// Writing a file failed, after `written` others were written.
    #[error("cannot write {file}: {cause} ({})", written_before(*.written))]
    Write {
        /// The file, relative to the root.
        file: String,
        /// What the system said.
        cause: String,
        /// How many files were written before it.
        written: usize,
    },
    /// The task writing the files did not finish (the runtime is shutting down).
    #[error("the write did not finish: {0}")]
    Interrupted(String),
}

/// What was written before a failed write, for its message.
fn written_before(written: usize) -> String {
    match written {
        0 => "nothing was written".to_string(),
        n => format!("{n} file(s) were written before it"),
    }
}

/// The text of a file for planning: None when it does not exist; an error when it is not a
/// regular text file within `limit` bytes.
pub fn read_current(path: &Path, limit: u64) -> Result<Option<String>, String> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err.to_string()),
        Ok(_) => {}
    }
    let bytes = squiggle_config::read_regular_file(path, limit).map_err(|err| err.to_string())?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "not UTF-8 text".to_string())
}

/// Plans `edit` against the files on disk under `root` (resolved).
pub fn plan_on_disk(
    edit: &WorkspaceEdit,
    root: &Path,
    encoding: PositionEncoding,
    limit: u64,
) -> Result<EditPlan, EditError> {
    plan_edit(edit, root, encoding, |path| read_current(path, limit))
}

/// Applies an edit a server asked for (`workspace/applyEdit`): planned on disk, then written;
/// an error (a path outside the root, a stale range, a failed write) says why nothing (or not
/// all) was written.
pub fn apply_on_disk(
    edit: &WorkspaceEdit,
    root: &Path,
    encoding: PositionEncoding,
    limit: u64,
) -> Result<Vec<PathBuf>, WriteError> {
    let plan = plan_on_disk(edit, root, encoding, limit)?;
    write_plan(&plan, root)
}

/// Writes what the plan changes: each file atomically, deleted files removed; nothing is
/// written unless every file lies inside `root` once links are resolved. Returns the paths
/// changed.
pub fn write_plan(plan: &EditPlan, root: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let changed: Vec<_> = plan.changed().collect();
    if let Some(outside) = changed
        .iter()
        .find(|change| !paths::is_within(root, &change.path) || change.path == root)
    {
        return Err(WriteError::Outside(outside.path.clone()));
    }
    let mut written = Vec::new();
    for change in changed {
        let done = match &change.after {
            Some(text) => write_atomically(&change.path, text),
            None => match std::fs::remove_file(&change.path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        done.map_err(|err| WriteError::Write {
            file: change.file.clone(),
            cause: err.to_string(),
            written: written.len(),
        })?;
        written.push(change.path.clone());
    }
    Ok(written)
}

/// Writes `text` to `path` through a temporary file in the same folder, keeping the old file's
/// permissions.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let folder = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent folder"))?;
    std::fs::create_dir_all(folder)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = folder.join(format!(".{name}.squiggle-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        if let Ok(metadata) = std::fs::metadata(path) {
            std::fs::set_permissions(&temp, metadata.permissions())?;
        }
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use async_lsp::lsp_types::{Position, Range, TextEdit, Url};

    fn rename_edit(path: &Path) -> WorkspaceEdit {
        let uri = Url::from_file_path(path).unwrap();
        let edit = TextEdit {
            range: Range::new(Position::new(0, 0), Position::new(0, 3)),
            new_text: "new".to_string(),
        };
        WorkspaceEdit {
            changes: Some([(uri, vec![edit])].into_iter().collect()),
            ..WorkspaceEdit::default()
        }
    }

    #[test]
    fn a_planned_edit_is_written_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = paths::resolve(dir.path());
        let file = root.join("a.py");
        std::fs::write(&file, "old = 1\n").unwrap();
        let plan =
            plan_on_disk(&rename_edit(&file), &root, PositionEncoding::Utf16, 1 << 20).unwrap();
        assert_eq!(write_plan(&plan, &root).unwrap(), vec![file.clone()]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new = 1\n");
        let names: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_root_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = paths::resolve(dir.path());
        let target = outside.path().join("victim.py");
        std::fs::write(&target, "old\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        let through = root.join("out").join("victim.py");
        let plan = plan_on_disk(
            &rename_edit(&through),
            &root,
            PositionEncoding::Utf16,
            1 << 20,
        )
        .unwrap();
        assert!(write_plan(&plan, &root).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old\n");
    }
}
