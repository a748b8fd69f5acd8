//! `squiggle trust`: the user's word that a project's configuration may run what it names.
//!
//! A project file's `[servers]` tables say what squiggle runs as the user, so they apply only
//! once the user has trusted that file with its content (see `squiggle_config::trust`). This
//! command shows what each project file would run, records the trust (or, with `--revoke`,
//! removes it), and stops the workspace's daemon, which loaded the configuration as it was.

use std::path::Path;

use anyhow::Context;
use squiggle_config::{project_files, ProjectFile, TrustRecord};

use crate::workspace::WorkspaceArgs;

/// Arguments of `squiggle trust`.
#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Remove the trust instead: the project files' servers no longer run.
    #[arg(long)]
    revoke: bool,
}

/// Runs `squiggle trust`: exit code 0, or 2 when there is no user folder to record it in.
pub async fn run(args: TrustArgs) -> anyhow::Result<u8> {
    let root = args.workspace.root()?;
    let record = TrustRecord::of_this_user()
        .context("cannot record trust: no configuration folder (set XDG_CONFIG_HOME or HOME, or APPDATA on Windows)")?;
    let files = project_files(&root)?;
    if files.is_empty() {
        println!(
            "{} has no project configuration file (squiggle.toml, .squiggle/config.toml, .dispatch/lsp.json, opencode.json): nothing to trust",
            root.display()
        );
        return Ok(0);
    }
    for file in &files {
        let shown = shown(&root, &file.path);
        match args.revoke {
            true => match record.revoke(&file.path)? {
                true => println!("no longer trusted: {shown}"),
                false => println!("not trusted before: {shown}"),
            },
            false if !file.needs_trust => {
                println!("{shown} names no server commands or settings: it needs no trust");
            }
            false => {
                record
                    .trust(&file.path, file.text.as_bytes())
                    .with_context(|| format!("cannot record the trust of {shown}"))?;
                println!("trusted {shown} as it is now; it runs:");
                print_servers(file);
            }
        }
    }
    // The daemon holds the configuration it loaded; the next check starts one with this.
    crate::daemon::stop_for(Some(&root)).await?;
    Ok(0)
}

/// Each server a project file names, with the command it runs.
fn print_servers(file: &ProjectFile) {
    for server in &file.servers {
        println!("  {}: {}", server.id, server.command_line());
    }
}

/// A project file's path relative to the root when it is inside it.
fn shown(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}
