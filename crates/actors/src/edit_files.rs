//! A server's `WorkspaceEdit` on disk: planned against the files as they are, and written
//! atomically per file (`squiggle_config::write_atomically`: a temporary file made exclusively
//! in the same folder, then a rename), only inside the workspace root.

use std::path::{Path, PathBuf};

use async_lsp::lsp_types::WorkspaceEdit;
use squiggle_protocol::navigation::{plan_edit, EditError, EditPlan, FileChange};
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
    /// Writing a file failed, after the files in `written` were written.
    #[error("cannot write {file}: {cause} ({})", written_before(.written))]
    Write {
        /// The file, relative to the root.
        file: String,
        /// What the system said.
        cause: String,
        /// The files written (or deleted) before it, relative to the root, in order.
        written: Vec<String>,
    },
    /// The task writing the files did not finish (the runtime is shutting down, or it failed).
    #[error("the write did not finish: {0}")]
    Interrupted(String),
}

/// What was written before a failed write, for its message.
fn written_before(written: &[String]) -> String {
    match written {
        [] => "nothing was written".to_string(),
        files => format!(
            "the apply stopped part way: {} written, the other files not",
            files.join(", ")
        ),
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
/// written unless every file lies inside `root` once links are resolved. A file named through
/// a link inside the root is written at the link's target (the link stays a link). Returns the
/// paths changed.
pub fn write_plan(plan: &EditPlan, root: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let changed: Vec<_> = plan.changed().collect();
    if let Some(outside) = changed
        .iter()
        .find(|change| !paths::is_within(root, &change.path) || change.path == root)
    {
        return Err(WriteError::Outside(outside.path.clone()));
    }
    let mut written: Vec<&FileChange> = Vec::new();
    for change in changed {
        let done = match &change.after {
            Some(text) => write_inside(root, &change.path, text),
            None => match std::fs::remove_file(&change.path) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        done.map_err(|err| WriteError::Write {
            file: change.file.clone(),
            cause: err.to_string(),
            written: written.iter().map(|done| done.file.clone()).collect(),
        })?;
        written.push(change);
    }
    Ok(written.iter().map(|done| done.path.clone()).collect())
}

/// Writes `text` atomically to the file `path` resolves to, checked again to lie inside `root`
/// just before (a link may have been planted since the plan).
fn write_inside(root: &Path, path: &Path, text: &str) -> std::io::Result<()> {
    let root = paths::resolve(root);
    let target = paths::resolve(path);
    if !target.starts_with(&root) || target == root {
        return Err(std::io::Error::other(format!(
            "it resolves to {}, outside the workspace root",
            target.display()
        )));
    }
    squiggle_config::write_atomically(&target, text.as_bytes())
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

    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `name` is a valid NUL-terminated path that outlives the call.
        let status = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
        assert_eq!(status, 0, "mkfifo {}", path.display());
    }

    /// Plans a rename of the first three characters of each file to `new`.
    fn plan_for(root: &Path, files: &[&Path]) -> EditPlan {
        let mut edit = WorkspaceEdit::default();
        for file in files {
            let one = rename_edit(file);
            edit.changes
                .get_or_insert_with(Default::default)
                .extend(one.changes.unwrap());
        }
        plan_on_disk(&edit, root, PositionEncoding::Utf16, 1 << 20).unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn links_and_fifos_planted_at_the_old_temporary_names_are_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = paths::resolve(dir.path());
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "victim\n").unwrap();
        let (a, b) = (root.join("a.fake"), root.join("b.fake"));
        std::fs::write(&a, "old a\n").unwrap();
        std::fs::write(&b, "old b\n").unwrap();
        // The names the write used to take, `.<name>.squiggle-<pid>.tmp`: a link to a file
        // outside, and a FIFO that made the apply wait forever.
        let pid = std::process::id();
        std::os::unix::fs::symlink(&victim, root.join(format!(".a.fake.squiggle-{pid}.tmp")))
            .unwrap();
        mkfifo(&root.join(format!(".b.fake.squiggle-{pid}.tmp")));

        let written = write_plan(&plan_for(&root, &[&a, &b]), &root).unwrap();

        assert_eq!(written, vec![a.clone(), b.clone()]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b\n");
        for file in [&a, &b] {
            assert!(std::fs::symlink_metadata(file)
                .unwrap()
                .file_type()
                .is_file());
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim\n");
        assert_eq!(
            std::fs::read_dir(&root).unwrap().count(),
            4,
            "no temporary file left"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_inside_the_root_is_written_at_its_target_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = paths::resolve(dir.path());
        let real = root.join("real.py");
        std::fs::write(&real, "old = 1\n").unwrap();
        let link = root.join("link.py");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        write_plan(&plan_for(&root, &[&link]), &root).unwrap();

        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new = 1\n");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[cfg(unix)]
    #[test]
    fn a_write_that_stops_part_way_names_the_files_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = paths::resolve(dir.path());
        let (a, b, c) = (root.join("a.py"), root.join("b.py"), root.join("c.py"));
        for file in [&a, &b, &c] {
            std::fs::write(file, "old = 1\n").unwrap();
        }
        let plan = plan_for(&root, &[&a, &b, &c]);
        // b.py becomes a FIFO after the plan: it is refused, a.py is written already.
        std::fs::remove_file(&b).unwrap();
        mkfifo(&b);

        let err = write_plan(&plan, &root).unwrap_err();

        assert_eq!(
            err.to_string(),
            "cannot write b.py: not a regular file (a FIFO) (the apply stopped part way: a.py \
             written, the other files not)"
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new = 1\n");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "old = 1\n");
        assert_eq!(
            std::fs::read_dir(&root).unwrap().count(),
            3,
            "no temporary file left"
        );
    }
}
