//! `squiggle check FILE...`: check files and print their diagnostics.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::ValueEnum;
use squiggle_actors::{CheckResult, Scope, Squiggle};
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
    /// `llm` (the <diagnostics> blocks an agent's edit tool appends), or `delta` (the errors an
    /// edit introduced, as `path:line:col: severity: message` under a one-line note).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// With `--format llm`: print exactly what an edit tool (`edit`: the first FILE only) or a
    /// write tool (`write`: the first FILE, then other files with errors) would append; the
    /// first FILE is the edited or written one.
    #[arg(long, value_enum, value_name = "SCOPE")]
    scope: Option<ScopeArg>,
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
    Delta,
}

/// Which tool's feedback `--scope` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ScopeArg {
    Edit,
    Write,
}

/// Runs `squiggle check`; returns the exit code.
pub async fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let (root, mut config) = args.workspace.load()?;
    if args.scope.is_some() && args.format != Format::Llm {
        anyhow::bail!("--scope goes with --format llm");
    }
    let files = files_to_check(&args.files, &root)?;
    if let Some(severities) = &args.severity {
        config.include_severities = severities.clone();
    }
    let severities = config.include_severities.clone();
    let max_per_file = config.max_diagnostics_per_file;
    let squiggle = Squiggle::start(&root, config).await?;
    let progress = Progress::start(squiggle.clone());
    let (first, rest) = files.split_first().context("no files to check")?;
    let mut results =
        futures::future::join_all(rest.iter().map(|file| squiggle.check_file(file, None))).await;
    // With a scope, the first file is the edited one, checked after the others are known.
    let (mut output, first_result) = match args.scope {
        Some(scope) => {
            let scope = match scope {
                ScopeArg::Edit => Scope::Edit,
                ScopeArg::Write => Scope::Write,
            };
            let feedback = squiggle.feedback(first, None, scope).await;
            (Some(feedback.text), feedback.check)
        }
        None => (None, squiggle.check_file(first, None).await),
    };
    results.insert(0, first_result);
    progress.finish().await;
    if args.format == Format::Delta {
        output = Some(squiggle.new_errors(&files).await.text);
    }
    let report = report_of(&results, &severities);
    let output = match (output, args.format) {
        (Some(text), _) => text,
        (None, Format::Json) => format!(
            "{}\n",
            serde_json::to_string_pretty(&json::render_json(&report))?
        ),
        (None, Format::Llm) => llm::render_llm(&report, max_per_file),
        (None, _) => {
            eprintln!("{}", text::summary(&report));
            text::render_text(&report)
        }
    };
    note_problems(&results);
    // The answer first; the servers' shutdown does not hold it up.
    let mut out = std::io::stdout().lock();
    out.write_all(output.as_bytes())?;
    out.flush()?;
    drop(out);
    squiggle.shutdown().await;
    Ok(if report.diagnostic_count() > 0 { 1 } else { 0 })
}

/// The files given, made absolute, checked to exist inside the root, without repeats.
fn files_to_check(given: &[PathBuf], root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for name in given {
        let file = absolute(name);
        if !file.is_file() {
            anyhow::bail!("{}: no such file", name.display());
        }
        if !paths::is_within(root, &file) {
            anyhow::bail!(
                "{}: outside the workspace root {} (see --root)",
                name.display(),
                root.display()
            );
        }
        if seen.insert(paths::resolve(&file)) {
            files.push(file);
        }
    }
    Ok(files)
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
            let key = (server.id.clone(), server.root.clone());
            // Over several files, a server's answers rest on the weakest basis among them.
            let guessed = (servers.get(&key).and_then(|s| s.basis)).filter(|b| b.is_guess());
            let mut server = server.clone();
            if server.basis.is_some() && guessed.is_some() {
                server.basis = guessed;
            }
            servers.insert(key, server);
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
