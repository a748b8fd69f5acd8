//! `squiggle check FILE...`: check files and print their diagnostics.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;
use squiggle_actors::{CheckResult, Squiggle};
use squiggle_protocol::render::{json, llm, text};
use squiggle_protocol::{merge, paths, Report, ServerReport, ServerState, Severity};

use crate::progress::Progress;
use crate::workspace::{absolute, WorkspaceArgs};

/// Arguments of `squiggle check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Output format: `text` (path:line:col: severity[code]: message), `json` (stable schema),
    /// or `llm` (the <diagnostics> block an agent's edit tool appends).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Severities to report, comma separated (default: the configuration's
    /// `include_severities`, which defaults to `error`).
    #[arg(long, value_delimiter = ',', value_name = "SEVERITY,...")]
    severity: Option<Vec<Severity>>,
    /// The files to check (relative to the current folder).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// How `check` prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Llm,
}

/// Runs `squiggle check`; returns the exit code.
pub async fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let (root, config) = args.workspace.load()?;
    let mut files: Vec<PathBuf> = args.files.iter().map(|file| absolute(file)).collect();
    for (given, file) in args.files.iter().zip(&files) {
        if !file.is_file() {
            anyhow::bail!("{}: no such file", given.display());
        }
        if !paths::is_within(&root, file) {
            anyhow::bail!(
                "{}: outside the workspace root {} (see --root)",
                given.display(),
                root.display()
            );
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|file| seen.insert(paths::resolve(file)));
    let severities = args
        .severity
        .clone()
        .unwrap_or_else(|| config.include_severities.clone());
    let max_per_file = config.max_diagnostics_per_file;
    let squiggle = Squiggle::start(&root, config).await?;
    let progress = Progress::start(squiggle.clone());
    let checks = args
        .files
        .iter()
        .map(|file| squiggle.check_file(absolute(file), None));
    let results = futures::future::join_all(checks).await;
    progress.finish().await;
    squiggle.shutdown().await;

    let report = report_of(&results, &severities);
    note_problems(&results);
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Text => {
            out.write_all(text::render_text(&report).as_bytes())?;
            eprintln!("{}", text::summary(&report));
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &json::render_json(&report))?;
            writeln!(out)?;
        }
        Format::Llm => out.write_all(llm::render_llm(&report, max_per_file).as_bytes())?,
    }
    out.flush()?;
    Ok(if report.diagnostic_count() == 0 { 0 } else { 1 })
}

/// The report of all checks: the checked files (filtered), the servers involved, who timed out.
fn report_of(results: &[CheckResult], severities: &[Severity]) -> Report {
    let mut files = BTreeMap::new();
    let mut servers: BTreeMap<(String, String), ServerReport> = BTreeMap::new();
    let mut timed_out = Vec::new();
    for result in results.iter().filter(|r| r.skipped.is_none()) {
        let kept = merge::filter_severities(result.diagnostics.clone(), severities);
        files
            .entry(result.file.clone())
            .or_insert_with(Vec::new)
            .extend(kept);
        for server in &result.servers {
            servers.insert((server.id.clone(), server.root.clone()), server.clone());
        }
        timed_out.extend(result.timed_out.iter().cloned());
    }
    timed_out.sort();
    timed_out.dedup();
    Report {
        files,
        servers: servers.into_values().collect(),
        timed_out,
    }
}

/// Tells the person at the terminal (on stderr) what kept files or servers from being checked.
fn note_problems(results: &[CheckResult]) {
    let mut noted = std::collections::BTreeSet::new();
    for result in results {
        if let Some(skip) = &result.skipped {
            eprintln!("squiggle: skipped {}: {skip}", result.file);
        }
        for server in &result.servers {
            let Some(reason) = &server.reason else {
                continue;
            };
            if matches!(server.status, ServerState::Active | ServerState::Starting)
                && !result.timed_out.contains(&server.id)
            {
                continue;
            }
            if noted.insert((server.id.clone(), reason.clone())) {
                eprintln!("squiggle: {} {}: {reason}", server.id, server.status);
            }
        }
    }
}
