//! A server's `WorkspaceEdit` turned into a plan: for every file it touches, the text before and
//! after (None: the file does not exist), computed in memory, refusing anything outside the root.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, Position, ResourceOp, TextEdit, Url,
    WorkspaceEdit,
};

use crate::encoding::{column_in_chars, PositionEncoding};
use crate::paths;

/// One file as an edit leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file's absolute path.
    pub path: PathBuf,
    /// The file relative to the workspace root, with `/` separators.
    pub file: String,
    /// Its text before the edit (None: it did not exist).
    pub before: Option<String>,
    /// Its text after the edit (None: it is deleted).
    pub after: Option<String>,
    /// The file it was renamed from, relative, when a rename created it.
    pub renamed_from: Option<String>,
}

impl FileChange {
    /// Whether the edit changes this file at all.
    pub fn changed(&self) -> bool {
        self.before != self.after
    }
}

/// Every file an edit touches, sorted by path, with its text before and after.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditPlan {
    /// The touched files (unchanged ones included, so their hashes are checked too).
    pub files: Vec<FileChange>,
}

impl EditPlan {
    /// The files whose text the edit changes.
    pub fn changed(&self) -> impl Iterator<Item = &FileChange> {
        self.files.iter().filter(|change| change.changed())
    }

    /// The relative paths of the files whose text the edit changes, sorted.
    pub fn changed_files(&self) -> Vec<&str> {
        self.changed().map(|change| change.file.as_str()).collect()
    }

    /// The content hash of each touched file before the edit, by relative path.
    pub fn hashes(&self) -> BTreeMap<String, String> {
        self.files
            .iter()
            .map(|change| (change.file.clone(), content_hash(change.before.as_deref())))
            .collect()
    }

    /// The files whose current hash differs from `expected` (a file missing from `expected`
    /// counts as changed: the edit touches more than was previewed).
    pub fn stale(&self, expected: &BTreeMap<String, String>) -> Vec<String> {
        self.hashes()
            .into_iter()
            .filter(|(file, hash)| expected.get(file) != Some(hash))
            .map(|(file, _)| file)
            .collect()
    }
}

/// Why an edit cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The edit names a file outside the workspace root (or not a `file:` URI).
    #[error("the edit touches {0}, which is outside the workspace root; nothing was written")]
    Outside(String),
    /// A text edit for a file that does not exist.
    #[error("the edit changes {0}, which does not exist")]
    Missing(String),
    /// A file could not be read.
    #[error("{file}: {reason}")]
    Unreadable {
        /// The file.
        file: String,
        /// Why it could not be read.
        reason: String,
    },
    /// A create or rename onto an existing file without `overwrite`.
    #[error("the edit creates {0}, which exists already")]
    Exists(String),
    /// A text edit's range lies outside the file or runs backwards.
    #[error("the edit's range {line}:{character} is outside {file}")]
    BadRange {
        /// The file.
        file: String,
        /// The range's start line, 1-based.
        line: u32,
        /// The range's start character.
        character: u32,
    },
    /// Two text edits of one document overlap.
    #[error("the edit has overlapping changes in {0}")]
    Overlap(String),
}

/// One touched file's text before the edit, its text now, and the file it was renamed from.
type State = (Option<String>, Option<String>, Option<PathBuf>);

/// The state of the files an edit touched so far.
struct Files<'r, R> {
    root: &'r Path,
    read: R,
    /// Each touched path's state.
    states: BTreeMap<PathBuf, State>,
}

impl<R> Files<'_, R>
where
    R: FnMut(&Path) -> Result<Option<String>, String>,
{
    /// The absolute path of a URI inside the root, else the error to give.
    fn locate(&self, uri: &Url) -> Result<PathBuf, EditError> {
        let outside = || EditError::Outside(uri.to_string());
        let path = paths::uri_to_path(uri.as_str()).ok_or_else(outside)?;
        let path = paths::normalize_lexically(Path::new(&path));
        if path.starts_with(self.root) && path != self.root {
            Ok(path)
        } else {
            Err(outside())
        }
    }

    /// The relative name of a path, for messages.
    fn name(&self, path: &Path) -> String {
        paths::relative_to(self.root, path)
    }

    /// The current text of a path (None: absent), read on first touch.
    fn current(&mut self, path: &Path) -> Result<Option<String>, EditError> {
        if let Some((_, now, _)) = self.states.get(path) {
            return Ok(now.clone());
        }
        let before = (self.read)(path).map_err(|reason| EditError::Unreadable {
            file: self.name(path),
            reason,
        })?;
        self.states
            .insert(path.to_path_buf(), (before.clone(), before.clone(), None));
        Ok(before)
    }

    /// Sets the text of a path (touched before through `current`).
    fn set(&mut self, path: &Path, text: Option<String>) {
        if let Some(state) = self.states.get_mut(path) {
            state.1 = text;
        }
    }

    /// Applies text edits to a file.
    fn edit(
        &mut self,
        uri: &Url,
        edits: &[TextEdit],
        encoding: PositionEncoding,
    ) -> Result<(), EditError> {
        let path = self.locate(uri)?;
        let Some(text) = self.current(&path)? else {
            return Err(EditError::Missing(self.name(&path)));
        };
        let new = apply_text_edits(&text, edits, encoding).map_err(|fault| match fault {
            Fault::Range(position) => EditError::BadRange {
                file: self.name(&path),
                line: position.line + 1,
                character: position.character + 1,
            },
            Fault::Overlap => EditError::Overlap(self.name(&path)),
        })?;
        self.set(&path, Some(new));
        Ok(())
    }

    /// Applies a create, rename or delete.
    fn resource(&mut self, op: &ResourceOp) -> Result<(), EditError> {
        match op {
            ResourceOp::Create(create) => {
                let path = self.locate(&create.uri)?;
                let options = create.options.as_ref();
                let overwrite = options.and_then(|o| o.overwrite).unwrap_or(false);
                let ignore = options.and_then(|o| o.ignore_if_exists).unwrap_or(false);
                match self.current(&path)? {
                    Some(_) if overwrite => self.set(&path, Some(String::new())),
                    Some(_) if ignore => {}
                    Some(_) => return Err(EditError::Exists(self.name(&path))),
                    None => self.set(&path, Some(String::new())),
                }
            }
            ResourceOp::Rename(rename) => {
                let from = self.locate(&rename.old_uri)?;
                let to = self.locate(&rename.new_uri)?;
                let options = rename.options.as_ref();
                let overwrite = options.and_then(|o| o.overwrite).unwrap_or(false);
                let ignore = options.and_then(|o| o.ignore_if_exists).unwrap_or(false);
                let Some(text) = self.current(&from)? else {
                    return Err(EditError::Missing(self.name(&from)));
                };
                if self.current(&to)?.is_some() && !overwrite {
                    if ignore {
                        return Ok(());
                    }
                    return Err(EditError::Exists(self.name(&to)));
                }
                self.set(&from, None);
                self.set(&to, Some(text));
                if let Some(state) = self.states.get_mut(&to) {
                    state.2 = Some(from);
                }
            }
            ResourceOp::Delete(delete) => {
                let path = self.locate(&delete.uri)?;
                let ignore = delete
                    .options
                    .as_ref()
                    .and_then(|o| o.ignore_if_not_exists)
                    .unwrap_or(false);
                match self.current(&path)? {
                    Some(_) => self.set(&path, None),
                    None if ignore => {}
                    None => return Err(EditError::Missing(self.name(&path))),
                }
            }
        }
        Ok(())
    }
}

/// Plans `edit` against the files as `read` finds them (`Ok(None)`: the file does not exist;
/// `Err`: it cannot be read as text). `root` is the resolved workspace root; every path the
/// edit names must lie inside it. `documentChanges` wins over `changes` when both are given.
pub fn plan_edit(
    edit: &WorkspaceEdit,
    root: &Path,
    encoding: PositionEncoding,
    read: impl FnMut(&Path) -> Result<Option<String>, String>,
) -> Result<EditPlan, EditError> {
    let mut files = Files {
        root,
        read,
        states: BTreeMap::new(),
    };
    match (&edit.document_changes, &edit.changes) {
        (Some(DocumentChanges::Edits(edits)), _) => {
            for document in edits {
                let plain = plain_edits(&document.edits);
                files.edit(&document.text_document.uri, &plain, encoding)?;
            }
        }
        (Some(DocumentChanges::Operations(operations)), _) => {
            for operation in operations {
                match operation {
                    DocumentChangeOperation::Edit(document) => {
                        let plain = plain_edits(&document.edits);
                        files.edit(&document.text_document.uri, &plain, encoding)?;
                    }
                    DocumentChangeOperation::Op(op) => files.resource(op)?,
                }
            }
        }
        (None, Some(changes)) => {
            let mut sorted: Vec<_> = changes.iter().collect();
            sorted.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
            for (uri, edits) in sorted {
                files.edit(uri, edits, encoding)?;
            }
        }
        (None, None) => {}
    }
    let changes = files
        .states
        .iter()
        .map(|(path, (before, after, from))| FileChange {
            path: path.clone(),
            file: files.name(path),
            before: before.clone(),
            after: after.clone(),
            renamed_from: from.as_deref().map(|from| files.name(from)),
        })
        .collect();
    Ok(EditPlan { files: changes })
}

/// Text edits without their annotations.
fn plain_edits(edits: &[OneOf<TextEdit, lsp_types::AnnotatedTextEdit>]) -> Vec<TextEdit> {
    edits
        .iter()
        .map(|edit| match edit {
            OneOf::Left(edit) => edit.clone(),
            OneOf::Right(annotated) => annotated.text_edit.clone(),
        })
        .collect()
}

/// What is wrong with a list of text edits.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fault {
    /// A position past the end of the text, or a range that runs backwards.
    Range(Position),
    /// Two ranges overlap.
    Overlap,
}

/// The byte offset of each line's start in `text` (lines split on `\n`).
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect()
}

/// The byte offset in `text` of an LSP position (characters past a line's end clamp to it; a
/// line past the last is an error, except the line just after a final newline... which is the
/// last line, empty).
fn offset(
    text: &str,
    starts: &[usize],
    position: Position,
    encoding: PositionEncoding,
) -> Option<usize> {
    let line = position.line as usize;
    let start = *starts.get(line)?;
    let end = starts.get(line + 1).map_or(text.len(), |next| next - 1);
    let line_text = &text[start..end];
    let line_text = line_text.strip_suffix('\r').unwrap_or(line_text);
    let column = column_in_chars(line_text, position.character, encoding) as usize;
    let within = line_text
        .char_indices()
        .nth(column - 1)
        .map_or(line_text.len(), |(at, _)| at);
    Some(start + within)
}

/// `text` with `edits` (all against the original text, as LSP says) applied; inserts at one
/// place keep their order.
fn apply_text_edits(
    text: &str,
    edits: &[TextEdit],
    encoding: PositionEncoding,
) -> Result<String, Fault> {
    let starts = line_starts(text);
    let mut spans = Vec::with_capacity(edits.len());
    for edit in edits {
        let at = |position: Position| {
            offset(text, &starts, position, encoding).ok_or(Fault::Range(position))
        };
        let (start, end) = (at(edit.range.start)?, at(edit.range.end)?);
        if end < start {
            return Err(Fault::Range(edit.range.end));
        }
        spans.push((start, end, edit.new_text.as_str()));
    }
    spans.sort_by_key(|&(start, end, _)| (start, end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new_text) in spans {
        if start < at {
            return Err(Fault::Overlap);
        }
        out.push_str(&text[at..start]);
        out.push_str(new_text);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// A short, stable hash of a file's content (FNV-1a, 64 bits, hex); `absent` for no file.
pub fn content_hash(text: Option<&str>) -> String {
    let Some(text) = text else {
        return "absent".to_string();
    };
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lsp_types::{
        CreateFile, DeleteFile, OptionalVersionedTextDocumentIdentifier, Range, RenameFile,
        TextDocumentEdit,
    };
    use std::collections::HashMap;

    fn edit(sl: u32, sc: u32, el: u32, ec: u32, new_text: &str) -> TextEdit {
        TextEdit {
            range: Range::new(Position::new(sl, sc), Position::new(el, ec)),
            new_text: new_text.to_string(),
        }
    }

    fn uri(path: &str) -> Url {
        Url::parse(&format!("file://{path}")).unwrap()
    }

    /// Plans against an in-memory file system.
    fn plan(edit: &WorkspaceEdit, disk: &[(&str, &str)]) -> Result<EditPlan, EditError> {
        let disk: HashMap<PathBuf, String> = disk
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        plan_edit(edit, Path::new("/ws"), PositionEncoding::Utf16, |path| {
            Ok(disk.get(path).cloned())
        })
    }

    fn changes(entries: Vec<(&str, Vec<TextEdit>)>) -> WorkspaceEdit {
        WorkspaceEdit {
            changes: Some(entries.into_iter().map(|(p, e)| (uri(p), e)).collect()),
            ..WorkspaceEdit::default()
        }
    }

    #[test]
    fn text_edits_apply_against_the_original_text() {
        let cases: Vec<(&str, &str, Vec<TextEdit>, &str)> = vec![
            (
                "one replace",
                "let a = 1;\n",
                vec![edit(0, 4, 0, 5, "b")],
                "let b = 1;\n",
            ),
            (
                "two on a line, given backwards",
                "f(a, a)\n",
                vec![edit(0, 5, 0, 6, "bb"), edit(0, 2, 0, 3, "bb")],
                "f(bb, bb)\n",
            ),
            (
                "inserts at one place keep their order",
                "x\n",
                vec![edit(0, 0, 0, 0, "a"), edit(0, 0, 0, 0, "b")],
                "abx\n",
            ),
            (
                "utf-16 columns after an emoji",
                "s = \"😀\"; old\n",
                vec![edit(0, 10, 0, 13, "new")],
                "s = \"😀\"; new\n",
            ),
            (
                "across lines, crlf kept",
                "a\r\nb\r\nc\r\n",
                vec![edit(0, 1, 2, 0, "-")],
                "a-c\r\n",
            ),
            (
                "a character past the line end clamps",
                "ab\ncd\n",
                vec![edit(0, 99, 0, 99, "!")],
                "ab!\ncd\n",
            ),
            (
                "insert on the empty last line",
                "a\n",
                vec![edit(1, 0, 1, 0, "b\n")],
                "a\nb\n",
            ),
        ];
        for (name, text, edits, want) in cases {
            assert_eq!(
                apply_text_edits(text, &edits, PositionEncoding::Utf16).as_deref(),
                Ok(want),
                "{name}"
            );
        }
    }

    #[test]
    fn bad_text_edits_are_refused() {
        let text = "a\nb\n";
        assert_eq!(
            apply_text_edits(text, &[edit(5, 0, 5, 1, "x")], PositionEncoding::Utf16),
            Err(Fault::Range(Position::new(5, 0)))
        );
        assert_eq!(
            apply_text_edits(text, &[edit(1, 1, 0, 0, "x")], PositionEncoding::Utf16),
            Err(Fault::Range(Position::new(0, 0)))
        );
        assert_eq!(
            apply_text_edits(
                text,
                &[edit(0, 0, 1, 1, "x"), edit(0, 1, 0, 1, "y")],
                PositionEncoding::Utf16
            ),
            Err(Fault::Overlap)
        );
    }

    #[test]
    fn utf8_servers_count_bytes() {
        let got = apply_text_edits("é x\n", &[edit(0, 3, 0, 4, "y")], PositionEncoding::Utf8);
        assert_eq!(got.as_deref(), Ok("é y\n"));
    }

    #[test]
    fn changes_plan_every_file_with_before_and_after() {
        let edit = changes(vec![
            ("/ws/b.py", vec![edit(0, 0, 0, 3, "new")]),
            ("/ws/a.py", vec![edit(1, 4, 1, 7, "new")]),
        ]);
        let plan = plan(
            &edit,
            &[("/ws/a.py", "x\nuse old\n"), ("/ws/b.py", "old = 1\n")],
        )
        .unwrap();
        let summary: Vec<_> = plan
            .files
            .iter()
            .map(|f| (f.file.as_str(), f.after.as_deref()))
            .collect();
        assert_eq!(
            summary,
            vec![("a.py", Some("x\nuse new\n")), ("b.py", Some("new = 1\n"))]
        );
        assert_eq!(plan.changed().count(), 2);
        assert_eq!(plan.hashes()["a.py"], content_hash(Some("x\nuse old\n")));
    }

    #[test]
    fn changed_files_leave_out_the_unchanged_ones() {
        let file = |name: &str, before: &str, after: &str| FileChange {
            path: PathBuf::from("/ws").join(name),
            file: name.to_string(),
            before: Some(before.to_string()),
            after: Some(after.to_string()),
            renamed_from: None,
        };
        let plan = EditPlan {
            files: vec![
                file("a.py", "x", "y"),
                file("b.py", "x", "x"),
                file("c.py", "", "z"),
            ],
        };
        assert_eq!(plan.changed_files(), ["a.py", "c.py"]);
    }

    #[test]
    fn paths_outside_the_root_are_refused() {
        for path in ["/etc/passwd", "/ws/../etc/x", "/ws2/a.py", "/ws"] {
            let edit = changes(vec![(path, vec![edit(0, 0, 0, 0, "x")])]);
            assert!(
                matches!(plan(&edit, &[]), Err(EditError::Outside(_))),
                "{path}"
            );
        }
        let create = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![
                DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                    uri: uri("/tmp/evil"),
                    options: None,
                    annotation_id: None,
                })),
            ])),
            ..WorkspaceEdit::default()
        };
        assert!(matches!(plan(&create, &[]), Err(EditError::Outside(_))));
    }

    #[test]
    fn resource_operations_create_rename_and_delete() {
        let document_edit = |path: &str, e: TextEdit| {
            DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri(path),
                    version: None,
                },
                edits: vec![OneOf::Left(e)],
            })
        };
        let edit = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![
                DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                    uri: uri("/ws/new.py"),
                    options: None,
                    annotation_id: None,
                })),
                document_edit("/ws/new.py", edit(0, 0, 0, 0, "made\n")),
                DocumentChangeOperation::Op(ResourceOp::Rename(RenameFile {
                    old_uri: uri("/ws/old.py"),
                    new_uri: uri("/ws/moved.py"),
                    options: None,
                    annotation_id: None,
                })),
                document_edit("/ws/moved.py", edit(0, 0, 0, 1, "B")),
                DocumentChangeOperation::Op(ResourceOp::Delete(DeleteFile {
                    uri: uri("/ws/gone.py"),
                    options: None,
                })),
            ])),
            ..WorkspaceEdit::default()
        };
        let disk = [("/ws/old.py", "b\n"), ("/ws/gone.py", "bye\n")];
        let plan = plan(&edit, &disk).unwrap();
        let summary: Vec<_> = plan
            .files
            .iter()
            .map(|f| {
                (
                    f.file.as_str(),
                    f.before.as_deref(),
                    f.after.as_deref(),
                    f.renamed_from.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("gone.py", Some("bye\n"), None, None),
                ("moved.py", None, Some("B\n"), Some("old.py")),
                ("new.py", None, Some("made\n"), None),
                ("old.py", Some("b\n"), None, None),
            ]
        );
    }

    #[test]
    fn edits_to_missing_files_and_creates_over_existing_ones_are_refused() {
        let missing = changes(vec![("/ws/none.py", vec![edit(0, 0, 0, 0, "x")])]);
        assert_eq!(
            plan(&missing, &[]),
            Err(EditError::Missing("none.py".to_string()))
        );
        let create = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![
                DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                    uri: uri("/ws/a.py"),
                    options: None,
                    annotation_id: None,
                })),
            ])),
            ..WorkspaceEdit::default()
        };
        assert_eq!(
            plan(&create, &[("/ws/a.py", "x")]),
            Err(EditError::Exists("a.py".to_string()))
        );
    }

    #[test]
    fn stale_names_files_whose_hash_changed_or_was_not_previewed() {
        let edit = changes(vec![("/ws/a.py", vec![edit(0, 0, 0, 1, "y")])]);
        let plan = plan(&edit, &[("/ws/a.py", "x\n")]).unwrap();
        let mut expected = plan.hashes();
        assert!(plan.stale(&expected).is_empty());
        expected.insert("a.py".to_string(), content_hash(Some("other")));
        assert_eq!(plan.stale(&expected), vec!["a.py".to_string()]);
        assert_eq!(plan.stale(&BTreeMap::new()), vec!["a.py".to_string()]);
    }

    #[test]
    fn content_hash_is_stable_and_tells_absent_from_empty() {
        assert_eq!(content_hash(Some("")), "cbf29ce484222325");
        assert_eq!(content_hash(Some("a")), "af63dc4c8601ec8c");
        assert_eq!(content_hash(None), "absent");
    }
}
