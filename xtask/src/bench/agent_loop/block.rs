//! What a model reads in the answer of `squiggle hook claude-code`: the edited file's errors,
//! whether its block was cut short, the other files' errors, and whether the file was checked.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// The hook's answer as places.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Whether it said the edited file was not checked (and why).
    pub not_checked: Option<String>,
    /// The edited file's errors: (line, column).
    pub file: BTreeSet<(u64, u64)>,
    /// Whether the edited file's block ended in `... and N more`.
    pub capped: bool,
    /// Other files' errors, by file.
    pub others: BTreeMap<String, BTreeSet<(u64, u64)>>,
    /// Other files named, past the caps, as having new errors (without them).
    pub named_only: BTreeSet<String>,
    /// Whether it said files that import the edited one were not checked for what the edit
    /// caused there (the line saying so).
    pub unsearched: Option<String>,
}

impl Seen {
    /// Whether the block names `file` among the other files.
    pub fn names(&self, file: &str) -> bool {
        self.others.contains_key(file) || self.named_only.contains(file)
    }
}

/// Reads the hook's stdout (one JSON line, or nothing when clean) for the edited `file`.
pub fn read(stdout: &str, file: &str) -> anyhow::Result<Seen> {
    let stdout = stdout.trim();
    if stdout.is_empty() {
        return Ok(Seen::default());
    }
    let answer: Value = serde_json::from_str(stdout)?;
    let text = (answer["reason"].as_str())
        .or_else(|| answer["hookSpecificOutput"]["additionalContext"].as_str())
        .unwrap_or_default();
    Ok(read_text(text, file))
}

/// Reads what `squiggle hook claude-code --later` woke the model with (its stderr when it
/// exited 2, else nothing) for the edited `file`.
pub fn read_later(stderr: &str, file: &str) -> Seen {
    read_text(stderr, file)
}

impl Seen {
    /// This answer with what `later` said added (the other files it named, and those it could
    /// not check): what the model read in all.
    pub fn with(mut self, later: &Seen) -> Seen {
        for (file, places) in &later.others {
            self.others.entry(file.clone()).or_default().extend(places);
        }
        self.named_only.extend(later.named_only.iter().cloned());
        if self.unsearched.is_none() {
            self.unsearched.clone_from(&later.unsearched);
        }
        self
    }
}

/// Reads a feedback text for the edited `file`.
fn read_text(text: &str, file: &str) -> Seen {
    let mut seen = Seen::default();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some((_, names)) = line.split_once(" more files with new errors: ") {
            let names = names.split(", ").filter(|name| *name != "...");
            seen.named_only.extend(names.map(str::to_owned));
            continue;
        }
        // A search after an earlier answer that could not check some importers, said with the
        // next answer.
        if line.starts_with("LSP did not finish checking ") && line.contains(" that import") {
            seen.unsearched = Some(line.to_owned());
            continue;
        }
        if let Some(rest) = line.strip_prefix("LSP did not check ") {
            if rest.starts_with(file) {
                seen.not_checked = Some(line.to_owned());
            } else if line.contains(" that import") {
                seen.unsearched = Some(line.to_owned());
            }
            continue;
        }
        if line.starts_with("LSP ") || line.is_empty() {
            current = None;
            continue;
        }
        // A file's block starts with its path and a colon on a line of its own.
        if place_of(line).is_none() && !line.starts_with("... and ") {
            current = line
                .strip_suffix(':')
                .map(|path| path.trim_matches('"').to_owned());
            continue;
        }
        let Some(name) = &current else { continue };
        if line.starts_with("... and ") {
            if name == file {
                seen.capped = true;
            }
            continue;
        }
        let Some(place) = place_of(line) else {
            continue;
        };
        if name == file {
            seen.file.insert(place);
        } else {
            seen.others.entry(name.clone()).or_default().insert(place);
        }
    }
    seen
}

/// The `line:col` a diagnostic line starts with (after a `NEW ` mark).
fn place_of(line: &str) -> Option<(u64, u64)> {
    let line = line.strip_prefix("NEW ").unwrap_or(line);
    let (place, _) = line.split_once(' ')?;
    let (l, c) = place.split_once(':')?;
    Some((l.parse().ok()?, c.parse().ok()?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_block_gives_the_files_places_and_a_note_says_not_checked() {
        let text = "LSP did not check a.py, so its errors are unknown: x timed out\n\
                    LSP errors detected in this file, please fix:\na.py:\n\
                    NEW 3:5 bad [x] (E1)\n9:1 old 1:1 (E2)\n... and 2 more\n\n\
                    LSP errors detected in other files:\nb.py:\nNEW 1:2 m (E3)\nc d.py:\n4:4 warning: w\n\
                    ... and 2 more files with new errors: c.py, d.py";
        let answer = serde_json::json!({"decision": "block", "reason": text}).to_string();
        let seen = read(&answer, "a.py").unwrap();
        assert!(seen.not_checked.is_some());
        assert_eq!(seen.file, BTreeSet::from([(3, 5), (9, 1)]));
        assert!(seen.capped);
        assert_eq!(seen.others["b.py"], BTreeSet::from([(1, 2)]));
        assert_eq!(seen.others["c d.py"], BTreeSet::from([(4, 4)]));
        assert!(seen.names("b.py") && seen.names("c.py") && seen.names("d.py"));
        assert!(!seen.names("e.py"));
        assert_eq!(read("", "a.py").unwrap(), Seen::default());
    }

    #[test]
    fn a_line_saying_importers_were_not_checked_is_not_the_files() {
        let line = "LSP did not check 3 other files that import a.py, so errors this edit \
                    caused there are unknown.";
        let text = format!("LSP errors detected in other files:\nb.py:\nNEW 1:2 m (E3)\n{line}");
        let answer = serde_json::json!({"decision": "block", "reason": text}).to_string();
        let seen = read(&answer, "a.py").unwrap();
        assert_eq!(seen.unsearched.as_deref(), Some(line));
        assert!(seen.not_checked.is_none());
        assert_eq!(seen.others.keys().collect::<Vec<_>>(), ["b.py"]);
    }

    #[test]
    fn what_the_later_hook_said_it_could_not_check_is_what_the_model_read() {
        let now = read("", "a.py").unwrap();
        let line = "LSP did not check 9 other files that import a.py, so errors this edit \
                    caused there are unknown.";
        let later = read_later(&format!("{line}\n"), "a.py");
        assert_eq!(now.with(&later).unsearched.as_deref(), Some(line));
    }
}
