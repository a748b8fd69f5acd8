//! `squiggle init HOST`: writes squiggle's edit hooks and the `squiggle mcp` server into an agent
//! host's project settings files, merged into what is there, and prints what it changed. It
//! reads and writes only regular files inside the project, each written atomically.

use std::path::{Path, PathBuf};

use super::settings::{merge, settings_files, Merged};
use anyhow::Context;
use squiggle_protocol::paths;

use super::hook::HostArg;

/// Arguments of `squiggle init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The host to set up: `claude-code` (PostToolUse hooks in `.claude/settings.json`: the
    /// edit hook, and the search after its answer run in the background; the MCP server in
    /// `.mcp.json`) or `gemini-cli` (an AfterTool hook and the MCP server in
    /// `.gemini/settings.json`).
    #[arg(value_enum)]
    host: HostArg,
    /// The project folder (default: the nearest folder upward holding `.git` or a squiggle
    /// config file, else the current folder).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// The most a host settings file may hold to be read; far more than any real one.
const MAX_SETTINGS_BYTES: u64 = 8 << 20;

/// Runs `squiggle init`: every file is read and merged first, and nothing is written when any
/// of them is refused. Files are read and written only inside the project, regular files only
/// (see [`settings_file`]), each written atomically.
pub fn run(args: InitArgs) -> anyhow::Result<u8> {
    let host = args.host.host();
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let root = match &args.root {
        Some(root) => squiggle_protocol::paths::canonicalize(cwd.join(root))
            .with_context(|| format!("--root {}: no such folder", root.display()))?,
        None => paths::resolve(&squiggle_config::find_workspace_root(&cwd)),
    };
    let mut merged: Vec<(String, PathBuf, Merged)> = Vec::new();
    for file in settings_files(host) {
        let (name, target, existing) = settings_file(&root, file.path)?;
        let result = merge(existing.as_deref(), &file.entries).map_err(|err| {
            anyhow::anyhow!(
                "{name}: {err}; nothing was changed (fix the file, or move it away, and run \
                 `squiggle init {}` again)",
                host.name()
            )
        })?;
        merged.push((name, target, result));
    }
    let mut written: Vec<&str> = Vec::new();
    for (name, target, result) in &merged {
        if let Some(text) = &result.text {
            squiggle_config::write_atomically(target, text.as_bytes()).map_err(|err| {
                let before = match written.as_slice() {
                    [] => "nothing was changed".to_string(),
                    files => format!("{} was written before it", files.join(", ")),
                };
                anyhow::anyhow!("{name}: cannot write: {err}; it is as it was, {before}")
            })?;
            written.push(name);
        }
        for note in &result.notes {
            println!("{name}: {note}");
        }
    }
    if !written.is_empty() {
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

/// A settings file of the project (`relative` to `root`): its name for messages (the file, and
/// the file a link there leads to), the file to write (links resolved), and its text (None: not
/// there yet). Refused, naming the file and what to do: a link leading out of the project (by
/// the file or by one of its folders), a FIFO, device or folder, a file over
/// [`MAX_SETTINGS_BYTES`], and text that is not UTF-8.
fn settings_file(root: &Path, relative: &str) -> anyhow::Result<(String, PathBuf, Option<String>)> {
    let path = root.join(relative);
    let target = paths::resolve(&path);
    let name = match target == path {
        true => path.display().to_string(),
        false => format!("{} (a link to {})", path.display(), target.display()),
    };
    if !target.starts_with(root) || target == root {
        anyhow::bail!(
            "{name}: leads outside the project {}; nothing was changed (squiggle writes only \
             inside the project: put the file itself there instead of a link, or add the \
             entries by hand)",
            root.display()
        );
    }
    let existing = match squiggle_config::read_regular_file(&target, MAX_SETTINGS_BYTES) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
            anyhow::anyhow!(
                "{name}: not UTF-8 text; nothing was changed (fix the file, or move it away)"
            )
        })?),
        Err(err) if err.is_not_found() => None,
        Err(err) => anyhow::bail!(
            "{name}: cannot read: {err}; nothing was changed (put a regular settings file \
             there, or move it away, and run init again)"
        ),
    };
    Ok((name, target, existing))
}
