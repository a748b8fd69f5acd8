//! `squiggle init HOST`: writes squiggle's edit hook and the `squiggle mcp` server into an agent
//! host's project settings files, merged into what is there, and prints what it changed.

use std::path::PathBuf;

use anyhow::Context;
use squiggle_config::host_settings::{merge, settings_files, Merged};

use crate::hook::HostArg;

/// Arguments of `squiggle init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The host to set up: `claude-code` (a PostToolUse hook in `.claude/settings.json`, the
    /// MCP server in `.mcp.json`) or `gemini-cli` (an AfterTool hook and the MCP server in
    /// `.gemini/settings.json`).
    #[arg(value_enum)]
    host: HostArg,
    /// The project folder (default: the nearest folder upward holding `.git` or a squiggle
    /// config file, else the current folder).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// Runs `squiggle init`: every file is merged first, and nothing is written when any of them
/// is refused.
pub fn run(args: InitArgs) -> anyhow::Result<u8> {
    let host = args.host.host();
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let root = match &args.root {
        Some(root) => std::fs::canonicalize(cwd.join(root))
            .with_context(|| format!("--root {}: no such folder", root.display()))?,
        None => squiggle_config::find_workspace_root(&cwd),
    };
    let mut merged: Vec<(PathBuf, Merged)> = Vec::new();
    for file in settings_files(host) {
        let path = root.join(file.path);
        let existing = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => anyhow::bail!(
                "{}: cannot read: {err}; nothing was changed",
                path.display()
            ),
        };
        let result = merge(existing.as_deref(), &file.entries).map_err(|err| {
            anyhow::anyhow!(
                "{}: {err}; nothing was changed (fix the file, or move it away, and run \
                 `squiggle init {}` again)",
                path.display(),
                host.name()
            )
        })?;
        merged.push((path, result));
    }
    let mut changed = false;
    for (path, result) in &merged {
        if let Some(text) = &result.text {
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder)
                    .with_context(|| format!("cannot create {}", folder.display()))?;
            }
            std::fs::write(path, text)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            changed = true;
        }
        for note in &result.notes {
            println!("{}: {note}", path.display());
        }
    }
    if changed {
        println!(
            "New {} sessions in {} pick these up.",
            host.title(),
            root.display()
        );
    } else {
        println!("Nothing to change.");
    }
    if squiggle_config::locate_command("squiggle", &root, &[]).is_none() {
        eprintln!(
            "squiggle: note: `squiggle` is not on PATH here; the host runs it by that name, so \
             put it on PATH (or write its full path into the commands above)"
        );
    }
    Ok(0)
}
