//! Diagnostics computed from document text: one per marker word per line, plus imports.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

/// How character offsets within a line are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Encoding {
    /// Bytes of UTF-8.
    #[serde(rename = "utf-8")]
    Utf8,
    /// UTF-16 code units (the LSP default).
    #[default]
    #[serde(rename = "utf-16")]
    Utf16,
    /// Unicode scalar values.
    #[serde(rename = "utf-32")]
    Utf32,
}

impl Encoding {
    /// The name used on the wire (`positionEncoding`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
            Encoding::Utf32 => "utf-32",
        }
    }

    /// Length of `s` counted in this encoding.
    pub fn len(self, s: &str) -> usize {
        match self {
            Encoding::Utf8 => s.len(),
            Encoding::Utf16 => s.encode_utf16().count(),
            Encoding::Utf32 => s.chars().count(),
        }
    }
}

/// Marker words, their LSP severity and diagnostic code.
const MARKERS: [(&str, u8, &str); 4] = [
    ("ERROR", 1, "E1"),
    ("WARNING", 2, "W1"),
    ("INFO", 3, "I1"),
    ("HINT", 4, "H1"),
];

/// LSP diagnostics for every marker word and unresolved `IMPORT` in `text`, by position.
///
/// `IMPORT <name>` is unresolved unless `<root>/<name>.fake` exists right now. A literal `\n`
/// (backslash, n) after a marker becomes a line break in its message, as in the multi-line
/// messages real servers send.
pub fn diagnostics(text: &str, encoding: Encoding, root: Option<&Path>) -> Vec<Value> {
    let mut out = Vec::new();
    for (line_no, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut found: Vec<(usize, Value)> = MARKERS
            .iter()
            .filter_map(|&(word, sev, code)| {
                let at = line.find(word)?;
                let rest = line[at + word.len()..].trim();
                let message = if rest.is_empty() {
                    format!("found {word}")
                } else {
                    format!("found {word}: {}", rest.replace("\\n", "\n"))
                };
                let span = (line_no, encoding.len(&line[..at]), word.len());
                Some((at, diagnostic(span, sev, code, message)))
            })
            .collect();
        if let Some((at, name)) = import(line) {
            if !root.is_some_and(|r| r.join(format!("{name}.fake")).is_file()) {
                let span = (line_no, encoding.len(&line[..at]), encoding.len(name));
                let message = format!("unresolved import {name}");
                found.push((at, diagnostic(span, 1, "E2", message)));
            }
        }
        found.sort_by_key(|f| f.0);
        out.extend(found.into_iter().map(|f| f.1));
    }
    out
}

/// An error (code E3) for every line `NEEDS <file> <word>` of `text` whose `<file>` (a path
/// under the root, as `text_of` gives its text: the server's open copy, else the disk's) does
/// not hold `<word>`: a file another one broke.
pub fn unmet_needs(text: &str, encoding: Encoding, text_of: &dyn Fn(&str) -> String) -> Vec<Value> {
    let mut out = Vec::new();
    for (line_no, line) in text.split('\n').enumerate() {
        let Some(at) = line.find("NEEDS ") else {
            continue;
        };
        let mut words = line[at + "NEEDS ".len()..].split_whitespace();
        let (Some(file), Some(word)) = (words.next(), words.next()) else {
            continue;
        };
        if !text_of(file).contains(word) {
            let span = (line_no, encoding.len(&line[..at]), "NEEDS".len());
            let message = format!("{file} has no {word}");
            out.push(diagnostic(span, 1, "E3", message));
        }
    }
    out
}

/// The byte offset and name of `IMPORT <name>` at the start of `line`, if it is one.
fn import(line: &str) -> Option<(usize, &str)> {
    let rest = line.trim_start().strip_prefix("IMPORT")?;
    let name = rest.trim_start();
    if name.len() == rest.len() {
        return None; // `IMPORTS` and the like
    }
    let name = name
        .split(char::is_whitespace)
        .next()
        .filter(|n| !n.is_empty())?;
    Some((line.len() - rest.trim_start().len(), name))
}

/// One diagnostic over `(line, start, length)` from the `fake` source.
fn diagnostic(span: (usize, usize, usize), severity: u8, code: &str, message: String) -> Value {
    let (line, start, len) = span;
    json!({
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": start + len},
        },
        "severity": severity,
        "code": code,
        "source": "fake",
        "message": message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(diags: &[Value]) -> Vec<(u64, u64, u64)> {
        diags
            .iter()
            .map(|d| {
                let r = &d["range"];
                (
                    r["start"]["line"].as_u64().unwrap_or(99),
                    r["start"]["character"].as_u64().unwrap_or(99),
                    r["end"]["character"].as_u64().unwrap_or(99),
                )
            })
            .collect()
    }

    #[test]
    fn a_literal_backslash_n_breaks_the_message() {
        let d = diagnostics("ERROR first\\n  second", Encoding::Utf16, None);
        assert_eq!(d[0]["message"], "found ERROR: first\n  second");
    }

    #[test]
    fn utf16_offset_counts_surrogate_pairs() {
        let d = diagnostics("let s = \"😀中\"; ERROR x", Encoding::Utf16, None);
        // `let s = "` is 9 chars; 😀 is 2 UTF-16 units / 4 bytes, 中 is 1 unit / 3 bytes.
        assert_eq!(starts(&d), vec![(0, 15, 20)]);
        assert_eq!(d[0]["message"], "found ERROR: x");
        assert_eq!(d[0]["severity"], 1);
        assert_eq!(d[0]["code"], "E1");
        assert_eq!(d[0]["source"], "fake");
    }

    #[test]
    fn other_encodings() {
        let text = "let s = \"😀中\"; ERROR x";
        assert_eq!(
            starts(&diagnostics(text, Encoding::Utf32, None)),
            vec![(0, 14, 19)]
        );
        assert_eq!(
            starts(&diagnostics(text, Encoding::Utf8, None)),
            vec![(0, 19, 24)]
        );
    }

    #[test]
    fn multiple_markers_and_lines() {
        let text = "ok\r\nHINT then WARNING  careful  \nnothing\n中 INFO\nERROR";
        let d = diagnostics(text, Encoding::Utf16, None);
        assert_eq!(
            starts(&d),
            vec![(1, 0, 4), (1, 10, 17), (3, 2, 6), (4, 0, 5)]
        );
        let msgs: Vec<&str> = d.iter().filter_map(|d| d["message"].as_str()).collect();
        assert_eq!(
            msgs,
            vec![
                "found HINT: then WARNING  careful",
                "found WARNING: careful",
                "found INFO",
                "found ERROR",
            ]
        );
        let codes: Vec<&str> = d.iter().filter_map(|d| d["code"].as_str()).collect();
        assert_eq!(codes, vec!["H1", "W1", "I1", "E1"]);
        let sev: Vec<u64> = d.iter().filter_map(|d| d["severity"].as_u64()).collect();
        assert_eq!(sev, vec![4, 2, 3, 1]);
    }

    #[test]
    fn a_need_is_met_by_the_other_files_text_as_held() {
        let other = |file: &str| match file {
            "a.ts" => "export const alpha = 1;".to_string(),
            _ => String::new(),
        };
        let text = "x\n// NEEDS a.ts alpha\n// NEEDS a.ts beta\n// NEEDS b.ts alpha\n";
        let found = unmet_needs(text, Encoding::Utf16, &other);
        assert_eq!(starts(&found), vec![(2, 3, 8), (3, 3, 8)]);
        assert_eq!(found[0]["message"], "a.ts has no beta");
        assert_eq!(found[0]["code"], "E3");
    }

    #[test]
    fn no_markers_no_diagnostics() {
        assert!(diagnostics("fn main() {}\n", Encoding::Utf16, None).is_empty());
        assert!(diagnostics("", Encoding::Utf16, None).is_empty());
    }

    #[test]
    fn imports_resolve_against_files_in_the_root() -> anyhow::Result<()> {
        let root = std::env::temp_dir().join(format!("fake-imports-{}", std::process::id()));
        std::fs::create_dir_all(&root)?;
        let text = "IMPORT alpha\n  IMPORT  中beta x\nIMPORTS gamma\nIMPORT\nx IMPORT delta";
        let d = diagnostics(text, Encoding::Utf16, Some(&root));
        assert_eq!(starts(&d), vec![(0, 7, 12), (1, 10, 15)]);
        assert_eq!(d[0]["message"], "unresolved import alpha");
        assert_eq!(d[0]["code"], "E2");
        assert_eq!(d[0]["severity"], 1);
        assert_eq!(d[1]["message"], "unresolved import 中beta");
        std::fs::write(root.join("alpha.fake"), "")?;
        let d = diagnostics(text, Encoding::Utf16, Some(&root));
        assert_eq!(starts(&d), vec![(1, 10, 15)]);
        std::fs::remove_dir_all(&root)?;
        assert_eq!(diagnostics("IMPORT a", Encoding::Utf8, None).len(), 1);
        Ok(())
    }

    #[test]
    fn imports_sort_with_markers() {
        let d = diagnostics("IMPORT x ERROR", Encoding::Utf16, None);
        let codes: Vec<&str> = d.iter().filter_map(|d| d["code"].as_str()).collect();
        assert_eq!(codes, vec!["E2", "E1"]);
    }
}
