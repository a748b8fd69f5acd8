//! The oracle of the agent loop: the project's own batch checker on the same tree (`tsc
//! --noEmit -p .`, `pyright --outputjson`, `cargo check --message-format json`), its errors
//! as (file, line, column), 1-based, columns in characters.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use serde_json::Value;

/// An error the checker reports: file (relative to the project), line, column.
pub type Place = (String, u64, u64);

/// A batch checker.
#[derive(Debug, Clone)]
pub enum Checker {
    /// `tsc --noEmit -p .` of this TypeScript.
    Tsc(PathBuf),
    /// `pyright --outputjson .`.
    Pyright(PathBuf),
    /// `cargo check --workspace --all-targets --message-format json`, in its own target folder
    /// (so it never waits for the language server's check).
    Cargo {
        /// The target folder.
        target: PathBuf,
    },
}

impl Checker {
    /// How the report names it.
    pub fn name(&self) -> &'static str {
        match self {
            Checker::Tsc(_) => "tsc --noEmit -p .",
            Checker::Pyright(_) => "pyright --outputjson",
            Checker::Cargo { .. } => "cargo check --message-format json",
        }
    }

    /// The errors the checker reports on the project at `root` now.
    pub fn errors(&self, root: &Path) -> anyhow::Result<BTreeSet<Place>> {
        let mut command = match self {
            Checker::Tsc(tsc) => {
                let mut command = Command::new(tsc);
                command.args(["--noEmit", "-p", "."]);
                command
            }
            Checker::Pyright(pyright) => {
                let mut command = Command::new(pyright);
                command.args(["--outputjson", "."]);
                command
            }
            Checker::Cargo { target } => {
                let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
                let mut command = Command::new(cargo);
                command
                    .args([
                        "check",
                        "--workspace",
                        "--all-targets",
                        "--message-format",
                        "json",
                    ])
                    .env("CARGO_TARGET_DIR", target);
                command
            }
        };
        let output = command
            .current_dir(root)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.name()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        match self {
            Checker::Tsc(_) => Ok(tsc_errors(&stdout)),
            Checker::Pyright(_) => pyright_errors(&stdout, root)
                .with_context(|| format!("pyright: {}", String::from_utf8_lossy(&output.stderr))),
            Checker::Cargo { .. } => Ok(cargo_errors(&stdout)),
        }
    }
}

/// `src/a.ts(3,5): error TS2322: ...` lines.
fn tsc_errors(stdout: &str) -> BTreeSet<Place> {
    stdout
        .lines()
        .filter_map(|line| {
            let (place, rest) = line.split_once("): error ")?;
            let _ = rest;
            let (file, position) = place.rsplit_once('(')?;
            let (line, column) = position.split_once(',')?;
            Some((file.to_owned(), line.parse().ok()?, column.parse().ok()?))
        })
        .collect()
}

/// `generalDiagnostics` of severity error; pyright counts columns in UTF-16 units, which the
/// fixtures' error lines do not tell apart from characters.
fn pyright_errors(stdout: &str, root: &Path) -> anyhow::Result<BTreeSet<Place>> {
    let report: Value = serde_json::from_str(stdout).context("its output is not JSON")?;
    let diagnostics = report["generalDiagnostics"]
        .as_array()
        .context("no generalDiagnostics")?;
    Ok(diagnostics
        .iter()
        .filter(|d| d["severity"] == "error")
        .filter_map(|d| {
            let file = Path::new(d["file"].as_str()?);
            let file = file.strip_prefix(root).unwrap_or(file);
            let start = &d["range"]["start"];
            Some((
                file.display().to_string(),
                start["line"].as_u64()? + 1,
                start["character"].as_u64()? + 1,
            ))
        })
        .collect())
}

/// `compiler-message`s of level error, at their primary span.
fn cargo_errors(stdout: &str) -> BTreeSet<Place> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-message")
        .filter(|message| message["message"]["level"] == "error")
        .filter_map(|message| {
            let spans = message["message"]["spans"].as_array()?;
            let span = spans.iter().find(|span| span["is_primary"] == true)?;
            Some((
                span["file_name"].as_str()?.to_owned(),
                span["line_start"].as_u64()?,
                span["column_start"].as_u64()?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn each_checkers_output_gives_its_error_places() {
        let tsc = "src/a.ts(3,5): error TS2322: Type 'x'.\n  continued\nsrc/b (1).ts(1,1): error TS1: y\n";
        assert_eq!(
            tsc_errors(tsc),
            BTreeSet::from([("src/a.ts".into(), 3, 5), ("src/b (1).ts".into(), 1, 1)])
        );
        let pyright = r#"{"generalDiagnostics": [
            {"file": "/w/a.py", "severity": "error", "range": {"start": {"line": 2, "character": 4}}},
            {"file": "/w/b.py", "severity": "warning", "range": {"start": {"line": 0, "character": 0}}}
        ]}"#;
        assert_eq!(
            pyright_errors(pyright, Path::new("/w")).unwrap(),
            BTreeSet::from([("a.py".into(), 3, 5)])
        );
        let cargo = concat!(
            r#"{"reason":"compiler-message","message":{"level":"error","spans":[{"is_primary":false,"file_name":"src/x.rs","line_start":1,"column_start":1},{"is_primary":true,"file_name":"src/a.rs","line_start":7,"column_start":9}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"level":"error","spans":[]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"level":"warning","spans":[{"is_primary":true,"file_name":"src/b.rs","line_start":1,"column_start":1}]}}"#,
            "\n",
        );
        assert_eq!(
            cargo_errors(cargo),
            BTreeSet::from([("src/a.rs".into(), 7, 9)])
        );
    }
}
