//! `squiggle status` and `squiggle servers`: which language servers squiggle would use.

use std::io::Write;
use std::path::Path;

use clap::ValueEnum;
use serde_json::json;
use squiggle_config::{Config, ServerSpec};

use crate::workspace::WorkspaceArgs;

/// Arguments of `squiggle status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
}

/// Arguments of `squiggle servers`.
#[derive(Debug, clap::Args)]
pub struct ServersArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
}

/// How server lists are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    Text,
    Json,
}

/// Runs `squiggle status`: the workspace's configured servers and whether each can run.
pub fn status(args: StatusArgs) -> anyhow::Result<u8> {
    let (root, config) = args.workspace.load()?;
    if !config.enabled {
        writeln!(
            std::io::stdout(),
            "LSP disabled by configuration (lsp = false)"
        )?;
        return Ok(0);
    }
    print_servers(&config, &root, args.format)?;
    Ok(0)
}

/// Runs `squiggle servers`: the built-in table.
pub fn servers(args: ServersArgs) -> anyhow::Result<u8> {
    let root = std::env::current_dir()?;
    print_servers(&Config::default(), &root, args.format)?;
    Ok(0)
}

/// One row of a server list.
struct Row<'a> {
    spec: &'a ServerSpec,
    state: &'static str,
    detail: String,
}

fn rows<'a>(config: &'a Config, root: &Path) -> Vec<Row<'a>> {
    config
        .servers
        .values()
        .map(|spec| {
            let found = squiggle_config::locate_command(&spec.command, root, &[]);
            let (state, detail) = match (&found, spec.enabled) {
                (_, false) => ("disabled", "disabled by configuration".to_string()),
                (Some(path), true) => ("installed", path.display().to_string()),
                (None, true) => ("unavailable", spec.not_installed()),
            };
            Row {
                spec,
                state,
                detail,
            }
        })
        .collect()
}

fn print_servers(config: &Config, root: &Path, format: ListFormat) -> anyhow::Result<()> {
    let rows = rows(config, root);
    let mut out = std::io::stdout().lock();
    match format {
        ListFormat::Json => {
            let list: Vec<_> = rows
                .iter()
                .map(|row| {
                    json!({
                        "id": row.spec.id,
                        "command": row.spec.command,
                        "args": row.spec.args,
                        "extensions": row.spec.extensions,
                        "language": row.spec.language_id,
                        "state": row.state,
                        "detail": row.detail,
                        "install_hint": row.spec.install_hint,
                    })
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &list)?;
            writeln!(out)?;
        }
        ListFormat::Text => {
            let id_width = rows.iter().map(|r| r.spec.id.len()).max().unwrap_or(0);
            for row in &rows {
                let extensions = row
                    .spec
                    .extensions
                    .iter()
                    .map(|e| format!(".{e}"))
                    .collect::<Vec<_>>()
                    .join(" ");
                writeln!(
                    out,
                    "{:id_width$}  {:11}  {}  [{}]",
                    row.spec.id, row.state, row.detail, extensions
                )?;
            }
        }
    }
    Ok(())
}
