//! The false-clean rate: cold `squiggle check --format json` runs on a real-size project with
//! one introduced error; a run that does not report every expected diagnostic is a miss (an
//! answer that would have told an agent "clean", or less than the truth).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{json, Value};

use super::stats::Stats;

/// A real-size fixture and the diagnostics every cold run must report.
#[derive(Debug)]
pub struct Project {
    /// How the report names it.
    pub label: &'static str,
    /// The fixture folder under `tests/fixtures`, and the file checked (relative to it).
    pub fixture: &'static str,
    pub file: &'static str,
    /// The name of its copy under `target/bench` (after `false-clean-`).
    pub copy: &'static str,
    /// The (line, column, code) each run must report.
    pub expected: &'static [(u64, u64, &'static str)],
    /// The `node_modules` the copy links to (TypeScript 7 for `tsc --lsp`), if any.
    pub modules: Option<PathBuf>,
    /// The error introduced in `file` (text found, its replacement), where the fixture holds
    /// none; each run is then cold for the build too (the copy's `target/` is removed).
    pub seed: Option<(&'static str, &'static str)>,
}

/// The outcome of the runs on one project.
#[derive(Debug)]
pub struct Outcome {
    pub runs: usize,
    pub misses: usize,
    /// Time from process start to the first byte printed, over all runs.
    pub timing: Stats,
    /// What each missed run reported instead (its diagnostics and servers), for the report.
    pub missed: Vec<Value>,
    /// Each server's `id:basis` as seen over the runs, with how often.
    pub bases: Vec<(String, usize)>,
}

/// Runs `runs` cold checks of `project` (in a fresh copy under `dir`).
pub fn measure(
    project: &Project,
    workspace: &Path,
    squiggle: &Path,
    dir: &Path,
    runs: usize,
) -> anyhow::Result<Outcome> {
    let root = super::fixture::copy(
        workspace,
        project.fixture,
        &dir.join(format!("false-clean-{}", project.copy)),
        &[],
    )?;
    if let Some(modules) = &project.modules {
        super::fixture::link_modules(&root, modules)?;
    }
    if let Some(seed) = project.seed {
        super::fixture::seed(&root.join(project.file), seed)?;
    }
    let mut timings = Vec::new();
    let mut misses = 0;
    let mut missed = Vec::new();
    let mut bases: Vec<(String, usize)> = Vec::new();
    for _ in 0..runs {
        if project.seed.is_some() {
            let _ = std::fs::remove_dir_all(root.join("target"));
        }
        let (took, stdout) = cold_json(squiggle, &root, project.file)?;
        timings.push(took);
        let report: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        for basis in server_bases(&report) {
            match bases.iter_mut().find(|(b, _)| *b == basis) {
                Some((_, count)) => *count += 1,
                None => bases.push((basis, 1)),
            }
        }
        let found = found(&report, project.file);
        let complete = project
            .expected
            .iter()
            .all(|(line, column, code)| found.contains(&(*line, *column, code.to_string())));
        if !complete {
            misses += 1;
            missed.push(json!({"diagnostics": report["files"][project.file], "servers": report["servers"], "stdout": if report.is_null() { stdout } else { String::new() }}));
        }
    }
    Ok(Outcome {
        runs,
        misses,
        timing: Stats::of(&timings),
        missed,
        bases,
    })
}

/// One cold `squiggle check --format json FILE`: the time to its first printed byte, and all
/// it printed.
fn cold_json(squiggle: &Path, root: &Path, file: &str) -> anyhow::Result<(Duration, String)> {
    let started = Instant::now();
    let mut child = Command::new(squiggle)
        .args([
            "check",
            "--no-daemon",
            "--root",
            ".",
            "--format",
            "json",
            file,
        ])
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start squiggle check")?;
    let mut stdout = child.stdout.take().context("no stdout")?;
    let mut first = [0u8; 1];
    let read = stdout.read(&mut first)?;
    let took = started.elapsed();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest)?;
    child.wait()?;
    let mut all = first[..read].to_vec();
    all.extend(rest);
    Ok((took, String::from_utf8_lossy(&all).into_owned()))
}

/// The (line, column, code) of each diagnostic reported for `file`, with the codes of the
/// other servers that reported the same problem (its `also`) at the same place.
fn found(report: &Value, file: &str) -> Vec<(u64, u64, String)> {
    let mut found = Vec::new();
    for d in report["files"][file].as_array().into_iter().flatten() {
        let at = (
            d["line"].as_u64().unwrap_or(0),
            d["column"].as_u64().unwrap_or(0),
        );
        let also = d["also"].as_array().into_iter().flatten();
        for code in std::iter::once(&d["code"]).chain(also.map(|other| &other["code"])) {
            found.push((at.0, at.1, code.as_str().unwrap_or_default().to_string()));
        }
    }
    found
}

/// Each active server's `id:basis` in a report.
fn server_bases(report: &Value) -> Vec<String> {
    report["servers"]
        .as_array()
        .map(|servers| {
            servers
                .iter()
                .filter(|s| s["status"] == "active")
                .map(|s| {
                    format!(
                        "{}:{}",
                        s["id"].as_str().unwrap_or("?"),
                        s["basis"].as_str().unwrap_or("none")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_positions_codes_and_bases_from_a_json_report() {
        let report = json!({
            "files": {"isort/api.py": [
                {"line": 98, "column": 5, "code": "reportUndefinedVariable"},
                {"line": 98, "column": 5, "code": "F821"}
            ]},
            "servers": [
                {"id": "pyright", "status": "active", "basis": "pull"},
                {"id": "basedpyright", "status": "unavailable"}
            ]
        });
        assert_eq!(
            found(&report, "isort/api.py"),
            vec![
                (98, 5, "reportUndefinedVariable".to_string()),
                (98, 5, "F821".to_string())
            ]
        );
        assert_eq!(found(&report, "other.py"), vec![]);
        assert_eq!(server_bases(&report), vec!["pyright:pull".to_string()]);
        assert_eq!(found(&Value::Null, "isort/api.py"), vec![]);
    }

    #[test]
    fn a_code_carried_by_a_collapsed_diagnostic_counts() {
        let report = json!({"files": {"isort/api.py": [
            {"line": 98, "column": 5, "code": "reportUndefinedVariable",
             "also": [{"code": "F821", "source": "Ruff"}]}
        ]}});
        assert_eq!(
            found(&report, "isort/api.py"),
            vec![
                (98, 5, "reportUndefinedVariable".to_string()),
                (98, 5, "F821".to_string())
            ]
        );
    }
}
