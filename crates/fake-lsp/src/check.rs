//! The fake server's check on save (like rust-analyzer's `cargo check`): what it finds in a
//! saved text, which its own pull answers never hold, and the project's files it looks at.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The word a line holds to be found by the check.
const WORD: &str = "CHECK";

/// One error (code C1, source `fake-check`) per line holding `CHECK`, over the line.
pub fn findings(text: &str) -> Vec<Value> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.contains(WORD))
        .map(|(n, line)| {
            let end = line.encode_utf16().count();
            json!({
                "range": {"start": {"line": n, "character": 0}, "end": {"line": n, "character": end}},
                "severity": 1,
                "code": "C1",
                "source": "fake-check",
                "message": format!("check found: {}", line.trim()),
            })
        })
        .collect()
}

/// The files under `dir`, in name order, but for hidden ones and those in hidden folders.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            !path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    entries
        .into_iter()
        .flat_map(|path| match path.is_dir() {
            true => files_under(&path),
            false => vec![path],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_line_is_one_error() {
        let found = findings("ok\nCHECK borrow\nERROR x\n  CHECK again");
        let lines: Vec<u64> = found
            .iter()
            .map(|d| d["range"]["start"]["line"].as_u64().unwrap_or(99))
            .collect();
        assert_eq!(lines, vec![1, 3]);
        assert_eq!(found[0]["message"], "check found: CHECK borrow");
    }
}
