//! `squiggle hook HOST`: an agent host's edit hook. Reads the host's hook input on stdin,
//! checks the edited file, and answers in the host's hook format so the model sees the errors;
//! says nothing when the file is clean. It never breaks the host: whatever goes wrong, it
//! exits 0 without a block (with one line on stderr at most).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{Finding, HookRequest, Host, Prior};
use anyhow::Context;
use clap::ValueEnum;
use squiggle_actors::Config;
use squiggle_config::Availability;
use squiggle_protocol::{paths, Scope};

use crate::check::perform;
use crate::check_request::{CheckRequest, Format, ScopeArg, EXIT_FOUND};

/// Hook input larger than this is not read (a `Write` of a file at squiggle's 2 MiB size limit
/// takes a few MiB of JSON).
const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Arguments of `squiggle hook`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The host that runs the hook: `claude-code` (a PostToolUse hook on Write|Edit|MultiEdit)
    /// or `gemini-cli` (an AfterTool hook on write_file|replace).
    #[arg(value_enum)]
    host: HostArg,
    /// The hook that runs in the background after the edit's own (Claude Code's
    /// `asyncRewake`): it waits for the workspace's daemon to finish checking the files that
    /// import the edited one that the edit's answer did not check in time, and when the edit
    /// broke some, prints their errors on stderr and exits 2, which wakes the model (the next
    /// edit's answer then does not tell them again). Otherwise it prints nothing and exits 0;
    /// the importers it could not check are said with the next answer. Claude Code only.
    #[arg(long, conflicts_with = "with_later")]
    later: bool,
    /// The edit's own hook beside the `--later` one (the Claude Code plugin's). The same as
    /// without it: through the daemon, every edit hook looks at the files that import the
    /// edited one for a third of the time the edited file's answer took at most, and the
    /// daemon checks the rest after the answer (told by `--later`, else with the next answer).
    #[arg(long)]
    with_later: bool,
}

/// The hosts `squiggle hook` and `squiggle init` know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HostArg {
    /// Claude Code.
    ClaudeCode,
    /// Gemini CLI.
    GeminiCli,
}

impl HostArg {
    /// The host as the pure hook and settings code names it.
    pub fn host(self) -> Host {
        match self {
            HostArg::ClaudeCode => Host::ClaudeCode,
            HostArg::GeminiCli => Host::GeminiCli,
        }
    }
}

/// Exit code of `--later` when the edit broke other files: Claude Code wakes the model with
/// what is on stderr.
const EXIT_WAKE: u8 = 2;

/// Runs the hook; always exit code 0, but for `--later` with something to tell (2).
pub async fn run(args: HookArgs) -> anyhow::Result<u8> {
    let host = args.host.host();
    if args.later {
        return Ok(run_later(host).await);
    }
    // In a task of its own, so that even a panic ends in exit code 0.
    let outcome = match tokio::spawn(answer(host)).await {
        Ok(outcome) => outcome,
        Err(err) => Err(anyhow::anyhow!("internal error: {err}")),
    };
    match outcome {
        Ok(output) => {
            if !output.is_empty() {
                let mut stdout = std::io::stdout().lock();
                if let Err(err) = stdout
                    .write_all(output.as_bytes())
                    .and_then(|()| stdout.flush())
                {
                    eprintln!(
                        "squiggle hook {}: cannot write the answer: {err}",
                        host.name()
                    );
                }
            }
        }
        Err(err) => eprintln!("squiggle hook {}: {err:#}", host.name()),
    }
    Ok(0)
}

/// `--later`: what the search after the edit's answer found, on stderr with exit code 2, or
/// nothing and 0. Never fails the host: a problem is one line on stderr and exit code 0.
async fn run_later(host: Host) -> u8 {
    if host != Host::ClaudeCode {
        eprintln!(
            "squiggle hook {}: --later is for claude-code only",
            host.name()
        );
        return 0;
    }
    let outcome = match tokio::spawn(later(host)).await {
        Ok(outcome) => outcome,
        Err(err) => Err(anyhow::anyhow!("internal error: {err}")),
    };
    match outcome {
        Ok(Some(text)) => {
            eprint!("{text}");
            EXIT_WAKE
        }
        Ok(None) => 0,
        Err(err) => {
            eprintln!("squiggle hook {} --later: {err:#}", host.name());
            0
        }
    }
}

/// The errors the edit on stdin caused in other files that its answer did not name, found by
/// the workspace's daemon after it (none without a daemon: nothing went on after the answer).
async fn later(host: Host) -> anyhow::Result<Option<String>> {
    let Some(request) = read_request(host)? else {
        return Ok(None);
    };
    let Ok((root, config)) = workspace_of(&request) else {
        return Ok(None);
    };
    let Some(file) = edited_in(&root, &config, &request).unwrap_or_default() else {
        return Ok(None);
    };
    if !crate::daemon::wanted(&root, &config) {
        return Ok(None);
    }
    let check = CheckRequest {
        files: vec![file],
        format: Format::Llm,
        scope: Some(ScopeArg::Later),
        severity: None,
        left_out: false,
        prior: None,
    };
    let answer = crate::daemon::check(&root, &config, &check).await?;
    let found = answer.code == EXIT_FOUND && !answer.stdout.trim().is_empty();
    Ok(found.then_some(answer.stdout))
}

/// The host's hook input on stdin, parsed: `None` for a tool call squiggle does not look at.
fn read_request(host: Host) -> anyhow::Result<Option<HookRequest>> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut input)
        .context("cannot read the hook input")?;
    anyhow::ensure!(
        input.len() as u64 <= MAX_INPUT_BYTES,
        "the hook input is over {} MiB; ignored",
        MAX_INPUT_BYTES / 1024 / 1024
    );
    host.parse(&input).context("ignored")
}

/// The hook's answer to its input on stdin: empty when there is nothing to say.
async fn answer(host: Host) -> anyhow::Result<String> {
    let Some(request) = read_request(host)? else {
        return Ok(String::new());
    };
    let loaded = workspace_of(&request).and_then(|(root, config)| {
        let file = edited_in(&root, &config, &request)?;
        let news = untrusted_news(&root, &config);
        Ok((root, config, news, file))
    });
    let (root, config, file, news) = match loaded {
        Ok((root, config, news, Some(file))) => (root, config, file, news),
        Ok((_, _, news, None)) => return Ok(host.render_for_user(&Finding::Clean, news.as_deref())),
        // A configuration that does not load: the edit goes through, but the model is told
        // its file was not checked (a broken squiggle.toml must not pass for a clean edit);
        // the person reads it on stderr too.
        Err(err) if err.downcast_ref::<squiggle_config::ConfigError>().is_some() => {
            eprintln!("squiggle hook {}: {err:#}", host.name());
            let file = request.file.display();
            let note = format!("LSP did not check {file}, so its errors are unknown: {err:#}");
            return Ok(host.render(&Finding::Note(note)));
        }
        Err(err) => return Err(err),
    };
    let prior = request
        .prior
        .as_ref()
        .and_then(|prior| text_before(prior, &file));
    let check = CheckRequest {
        files: vec![file],
        format: Format::Llm,
        scope: Some(match request.scope {
            Scope::Edit => ScopeArg::Edit,
            Scope::Write => ScopeArg::Write,
        }),
        severity: None,
        left_out: false,
        prior,
    };
    let mut finding = Finding::Clean;
    perform(&root, config, &check, |answer| {
        finding = Finding::of(&answer.stdout, answer.code == EXIT_FOUND);
        Ok(())
    })
    .await?;
    Ok(host.render_for_user(&finding, news.as_deref()))
}

/// The edited file's text before the edit, from what the host told of it (a replacement is
/// undone on the file as it is now).
fn text_before(prior: &Prior, file: &Path) -> Option<String> {
    match prior {
        Prior::Text(text) => Some(text.clone()),
        Prior::Replaced { .. } => prior.text_before(&std::fs::read_to_string(file).ok()?),
    }
}

/// The workspace of the hook's folder: its root and configuration.
fn workspace_of(request: &HookRequest) -> anyhow::Result<(PathBuf, Config)> {
    let cwd = squiggle_protocol::paths::canonicalize(&request.cwd)
        .with_context(|| format!("the hook's cwd {} is not a folder", request.cwd.display()))?;
    let root = squiggle_config::find_workspace_root(&cwd);
    let user_file = squiggle_config::user_config_path();
    Ok((root.clone(), Config::load(&root, user_file.as_deref())?))
}

/// The notice of [`Config::untrusted_notice`] when it is news: once for each content of the
/// files it names (recorded beside the trust record), so that it is not repeated every edit.
fn untrusted_news(root: &Path, config: &Config) -> Option<String> {
    let record = squiggle_config::TrustRecord::of_this_user()?;
    let mut news = false;
    for file in &config.untrusted {
        let content = std::fs::read(file).unwrap_or_default();
        news |= record.tell_once(file, &content);
    }
    news.then(|| config.untrusted_notice(root)).flatten()
}

/// The edited file of the hook's request, resolved in the workspace at `root`; `None` when there
/// is nothing to check: squiggle is turned off, the file is outside the workspace, no enabled
/// server handles its type, or only missing optional ones would.
fn edited_in(
    root: &Path,
    config: &Config,
    request: &HookRequest,
) -> anyhow::Result<Option<PathBuf>> {
    // Its folder resolved like the root (the hook's cwd may run through a symlink), its own name
    // kept as the model knows it.
    let file = &match (request.file.parent(), request.file.file_name()) {
        (Some(folder), Some(name)) => paths::resolve(folder).join(name),
        _ => paths::resolve(&request.file),
    };
    if !config.enabled || !paths::is_within(root, file) || !handled(config, file) {
        return Ok(None);
    }
    // A file only missing optional servers would check (a pyproject.toml without taplo): the
    // model cannot install them, and `squiggle status` tells the person once.
    let found = |spec: &squiggle_config::ServerSpec| Availability::found(spec, root).starts();
    if !config.only_missing_optional(file, &found).is_empty() {
        return Ok(None);
    }
    anyhow::ensure!(
        file.is_file(),
        "{} ({}): no such file",
        file.display(),
        request.tool
    );
    Ok(Some(file.clone()))
}

/// Whether some enabled server of the configuration handles the file's type.
fn handled(config: &Config, file: &Path) -> bool {
    config
        .servers_matching(file)
        .iter()
        .any(|spec| spec.enabled)
}
