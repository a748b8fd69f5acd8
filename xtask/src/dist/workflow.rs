//! The release workflow (`.github/workflows/release.yml`) checked with actionlint (and its
//! `run:` scripts with shellcheck), pinned from PyPI into the packaging tools' venv. `cargo
//! xtask test` runs it, so that a workflow that runs only on a tag is not first found broken
//! on the tag.

use std::path::Path;
use std::process::Command;

use anyhow::Context;

/// Runs actionlint on every workflow file; fails with its findings.
pub fn check(workspace: &Path) -> anyhow::Result<()> {
    let bin = super::tools(workspace)?;
    let workflows = workspace.join(".github").join("workflows");
    let mut files: Vec<_> = std::fs::read_dir(&workflows)
        .with_context(|| format!("cannot read {}", workflows.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "yml" || ext == "yaml")
        })
        .collect();
    files.sort();
    eprintln!("xtask: actionlint on {} workflow file(s)", files.len());
    super::check::command_ok(
        Command::new(bin.join("actionlint"))
            .arg("-no-color")
            .arg(format!("-shellcheck={}", bin.join("shellcheck").display()))
            .args(&files)
            .current_dir(workspace),
    )
    .context("actionlint found problems in the workflows")
}
