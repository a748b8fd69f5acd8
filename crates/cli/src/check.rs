//! `squiggle check FILE...`: check files and print their diagnostics.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use squiggle_actors::{Config, Squiggle};
use squiggle_protocol::paths;
use squiggle_protocol::render::display_path;
use squiggle_protocol::Severity;

use crate::check_request::{answer, CheckAnswer, CheckRequest, Format, ScopeArg};
use crate::daemon::NO_DAEMON_ENV;
use crate::folders::{self, MAX_FOLDER_FILES};
use crate::progress::Progress;
use crate::workspace::{absolute, WorkspaceArgs};

/// Arguments of `squiggle check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// Output format: `text` (path:line:col: severity[code]: message, and `path: not checked:
    /// reason`), `json` (stable schema, with each file's outcome), `llm` (the blocks an
    /// agent's edit tool appends, and a line for each file not checked), or `delta`
    /// (the errors an edit introduced, as `path:line:col: severity: message` under a one-line
    /// note, and `path: not checked: reason` lines), `sarif` (SARIF 2.1.0 for code scanning:
    /// a result per diagnostic, files not checked as tool notifications) or `github` (GitHub
    /// Actions workflow commands, `::error file=...,line=...::message`, then a summary).
    /// Default: `text`, or `llm` with `--scope`.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Print exactly what an edit tool (`edit`: the first FILE only) or a write tool (`write`:
    /// the first FILE, then other files with errors) would append; the first FILE is the
    /// edited or written one. Implies `--format llm`.
    #[arg(long, value_enum, value_name = "SCOPE")]
    scope: Option<ScopeArg>,
    /// Severities to report, comma separated (default: the configuration's
    /// `include_severities`, which defaults to `error`).
    #[arg(long, value_delimiter = ',', value_name = "SEVERITY,...")]
    severity: Option<Vec<Severity>>,
    /// Check in this process, without the workspace's background daemon (as `daemon = false`
    /// in the configuration, or the environment variable SQUIGGLE_NO_DAEMON=1, do).
    #[arg(long)]
    no_daemon: bool,
    /// The files to check (relative to the current folder); a folder stands for the files of
    /// known types under it (as git lists them, so without what .gitignore excludes; else
    /// skipping hidden, build and dependency folders), at most 500.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

impl CheckArgs {
    /// The request these arguments make, for a workspace at `root`.
    fn request(&self, root: &Path, config: &Config) -> anyhow::Result<CheckRequest> {
        let format = match (self.format, self.scope) {
            (Some(format), Some(_)) if format != Format::Llm => {
                anyhow::bail!("--scope goes with --format llm")
            }
            (Some(format), _) => format,
            (None, Some(_)) => Format::Llm,
            (None, None) => Format::Text,
        };
        let (files, left_out) = files_to_check(&self.files, root, config)?;
        anyhow::ensure!(!files.is_empty(), "no files of a known type to check");
        Ok(CheckRequest {
            files,
            format,
            scope: self.scope,
            severity: self.severity.clone(),
            left_out,
            prior: None,
        })
    }
}

/// Runs `squiggle check`; returns the exit code.
pub async fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let (root, mut config) = args.workspace.load()?;
    if args.no_daemon || one_shot_in_ci(std::env::var_os("CI"), std::env::var_os(NO_DAEMON_ENV)) {
        config.daemon = false;
    }
    let request = args.request(&root, &config)?;
    perform(&root, config, &request, print_answer).await
}

/// Whether a check runs in its own process because it runs in CI (`CI` set, and not to `false`
/// or `0`): a CI job leaves no daemon behind, unless `SQUIGGLE_NO_DAEMON=0` asks for one.
fn one_shot_in_ci(ci: Option<OsString>, no_daemon: Option<OsString>) -> bool {
    let set = |value: &Option<OsString>| {
        value
            .as_deref()
            .is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
    };
    let daemon_asked = no_daemon.as_deref().is_some_and(|v| v == "0");
    set(&ci) && !daemon_asked
}

/// Prints an answer: its notes to stderr, its result to stdout. A reader that stopped early
/// (`| head -1`) is no error.
fn print_answer(answer: &CheckAnswer) -> anyhow::Result<()> {
    eprint!("{}", answer.stderr);
    match write_stdout(answer.stdout.as_bytes()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(()),
    }
}

/// Answers a check request and hands the answer to `deliver` as soon as it is known; returns
/// the exit code. The workspace's daemon answers when the configuration allows one (starting
/// it if none runs); otherwise, or when it cannot be reached, this process starts the servers,
/// answers, and shuts them down after delivering.
pub async fn perform(
    root: &Path,
    config: Config,
    request: &CheckRequest,
    deliver: impl FnOnce(&CheckAnswer) -> anyhow::Result<()>,
) -> anyhow::Result<u8> {
    if crate::daemon::wanted(root, &config) {
        match crate::daemon::check(root, &config, request).await {
            Ok(answer) => {
                deliver(&answer)?;
                return Ok(answer.code);
            }
            Err(err) => tracing::info!("checking in this process: {err:#}"),
        }
    }
    let squiggle = Squiggle::start(root, config).await?;
    let progress = Progress::start(squiggle.clone());
    // Nothing goes on after an answer given in this process: a feedback looks at the importers
    // within its answer (a daemon searches after its answers).
    let answer = answer(&squiggle, request).await;
    progress.finish().await;
    // The answer first; the servers' shutdown does not hold it up.
    let delivered = match &answer {
        Ok(answer) => deliver(answer),
        Err(_) => Ok(()),
    };
    squiggle.shutdown().await;
    let code = answer?.code;
    delivered?;
    Ok(code)
}

/// Writes the answer to stdout and flushes it.
fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// The files given, made absolute, checked to exist inside the root, without repeats; a
/// folder stands for the files of known types under it (at most [`MAX_FOLDER_FILES`], with a
/// note on stderr when there are more). The flag says whether some folder had more.
fn files_to_check(
    given: &[PathBuf],
    root: &Path,
    config: &Config,
) -> anyhow::Result<(Vec<PathBuf>, bool)> {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    let mut left_out = false;
    for name in given {
        let shown = display_path(&name.to_string_lossy()).into_owned();
        let file = absolute(name);
        if !file.exists() {
            anyhow::bail!("{shown}: no such file or folder");
        }
        if !paths::is_within(root, &file) {
            anyhow::bail!(
                "{shown}: outside the workspace root {} (see --root)",
                root.display()
            );
        }
        let found = if file.is_dir() {
            let (found, more) = folders::files_in(&file, config, MAX_FOLDER_FILES);
            if more {
                left_out = true;
                eprintln!(
                    "squiggle: {shown}: more than {MAX_FOLDER_FILES} files of known types; \
                     only the first {MAX_FOLDER_FILES} were checked"
                );
            } else if found.is_empty() {
                eprintln!("squiggle: {shown}: no files of a known type");
            }
            folders::leave_out_optional(found, root, config, &shown)
        } else {
            vec![file]
        };
        for file in found {
            if seen.insert(paths::resolve(&file)) {
                files.push(file);
            }
        }
    }
    Ok((files, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_ci_a_check_is_one_shot_unless_a_daemon_is_asked_for() {
        let os = |v: &str| Some(OsString::from(v));
        let rows = [
            (None, None, false),
            (os("true"), None, true),
            (os("1"), os(""), true),
            (os("false"), None, false),
            (os("0"), None, false),
            (os(""), None, false),
            (os("true"), os("0"), false),
        ];
        for (ci, no_daemon, one_shot) in rows {
            let case = format!("{ci:?} {no_daemon:?}");
            assert_eq!(one_shot_in_ci(ci, no_daemon), one_shot, "{case}");
        }
    }
}
