//! `cargo xtask demo`: build squiggle and check the example project with deliberate errors.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};

use crate::lsp_servers;

/// Builds squiggle, makes sure a Python language server is available (installing pyright and
/// ruff into `target/lsp-servers/` if none is on PATH), and checks `examples/demo`.
pub fn run(workspace: &Path) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(&cargo)
        .args(["build", "--quiet", "--package", "squiggle"])
        .current_dir(workspace)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("building squiggle failed ({status})");
    }
    if !on_path("pyright-langserver") && !on_path("ruff") {
        lsp_servers::install(workspace)?;
    }
    let example = workspace.join("examples").join("demo");
    let squiggle = workspace.join("target").join("debug").join("squiggle");
    println!(
        "$ squiggle check --root examples/demo examples/demo/app.py examples/demo/shapes.py\n"
    );
    let status = Command::new(squiggle)
        .args(["check", "--no-daemon", "--root"])
        .arg(&example)
        .arg(example.join("app.py"))
        .arg(example.join("shapes.py"))
        .current_dir(workspace)
        .env("PATH", lsp_servers::path_with_servers(workspace)?)
        .status()
        .context("cannot run squiggle")?;
    // Exit code 1 means "diagnostics found", which is what the example is for.
    match status.code() {
        Some(0 | 1) => Ok(()),
        _ => bail!("squiggle check failed ({status})"),
    }
}

fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}
