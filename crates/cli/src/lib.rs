//! `squiggle`: language-server diagnostics for coding agents, people, hooks and CI.
//!
//! The whole command is this library; the `squiggle` binary (`src/main.rs`) calls [`main`]. The
//! integration tests build the same `main` into a binary of their own package
//! (`squiggle-under-test`, see tests/tests/it/support.rs), so that Cargo builds it fresh for them.
//!
//! # Layout
//!
//! - `check`: `squiggle check FILE...`.
//! - `check_request`: one check as asked for and its answer, the contract `check`, `hook` and the
//!   daemon share, and its answering with a running squiggle (`check_request/wire_paths`: its
//!   file names on the daemon's wire, bytes and all).
//! - `folders`: the files under a folder given to `check`, as git sees them.
//! - `progress`: what a check waits for, shown on a terminal.
//! - `serve`: `squiggle serve`, JSON-RPC for agent hosts (`serve/message`: one frame read;
//!   `serve/rpc_error`: the error answers).
//! - `answers`: the answers of `serve`'s check methods.
//! - `stdio`: stdin and stdout on threads of their own, for `serve`.
//! - `mcp`: `squiggle mcp`, the MCP server.
//! - `mcp_stdio`: MCP's stdio transport, answering a line over the size limit.
//! - `tools`: the navigation and diagnostics tools `mcp` and `serve` share (`tools/catalog`:
//!   every tool written once, with its serve method and arguments; `tools/args`: arguments
//!   read and described from one declaration; `tools/error`: why a tool gave no answer).
//! - `daemon`: the per-workspace background daemon `check` goes through (`daemon/key`: which
//!   daemon serves a workspace; `daemon/paths`: its private runtime folder; `daemon/wire`: its
//!   messages; `daemon/server`: the daemon; `daemon/path_watch`: noticing, without polling, that
//!   its socket or root was removed or replaced; `daemon/client`: asking it, or starting
//!   it; `daemon/process`: finding and ending one that does not answer; `daemon/roots`: which
//!   roots get one; `daemon/log`: its log, which never fails it and stays bounded;
//!   `daemon/accept`: backing off when accepting fails).
//! - `hosts`: the agent hosts, Claude Code and Gemini CLI: their hook formats and settings
//!   files, `squiggle hook claude-code|gemini-cli` (`hosts/hook`), run by the hosts after each
//!   edit, and `squiggle init claude-code|gemini-cli` (`hosts/init`), which writes the hook and
//!   the MCP server into their settings (`hosts/settings`, `hosts/ordered_json`).
//! - `install`: `squiggle install`, language servers from the package registries.
//! - `servers`: `squiggle status` and `squiggle servers`.
//! - `trust`: `squiggle trust`, the user's word that a project's configuration may run its
//!   servers.
//! - `workspace`: the workspace a command works in: its root and its configuration.

mod answers;
mod check;
mod check_request;
mod daemon;
mod folders;
mod hosts;
mod install;
mod mcp;
mod mcp_stdio;
mod progress;
mod serve;
mod servers;
mod stdio;
mod tools;
mod trust;
mod workspace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc rather than the system allocator (declared here, in the library, so that every binary
/// built on it has it, the tests' too): in the 64-check burst benchmark it cut the CPU
/// `squiggle serve` spends by about a fifth (glibc's malloc spent it consolidating and
/// unlinking chunks); see docs/benchmarks.md. It is built without transparent huge pages
/// (`no_thp`), which otherwise raised the memory scenario's peak RSS from 23 to 36 MiB.
#[cfg(target_os = "linux")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit code for usage and configuration errors.
const EXIT_USAGE: u8 = 2;

/// Red squiggles for coding agents: runs the right language servers on your files and prints
/// their diagnostics.
#[derive(Debug, Parser)]
#[command(name = "squiggle", version, about, long_about = None)]
#[command(
    after_help = "Logs go to stderr; set SQUIGGLE_LOG=debug (or e.g. squiggle=trace) for more."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check files with their language servers and print the diagnostics.
    ///
    /// Each file is checked (with or without diagnostics) when at least one of its servers gave
    /// its final answer; otherwise it is not checked, and the output says why: no server for
    /// the type, not installed (with the install command), broken, timed out, disabled, too
    /// large, binary or unreadable.
    #[command(after_long_help = check_request::EXIT_CODES)]
    Check(check::CheckArgs),
    /// Show the configured servers for a workspace, whether each is installed, and why not.
    Status(servers::StatusArgs),
    /// List the built-in language servers, installed or not, with install hints.
    Servers(servers::ServersArgs),
    /// Install pinned versions of built-in servers (npm, PyPI) into the per-user data folder.
    ///
    /// The folder is $SQUIGGLE_DATA_DIR, else $XDG_DATA_HOME/squiggle, else
    /// ~/.local/share/squiggle; nothing is installed globally. squiggle finds servers there after
    /// the project's node_modules/.bin and PATH. `--all-for-workspace` installs every missing
    /// server the workspace's files would use.
    Install(install::InstallArgs),
    /// Serve JSON-RPC on stdin/stdout for agent hosts in other languages.
    ///
    /// LSP-framed JSON-RPC 2.0: sends `lsp/ready` once set up, then answers `lsp/checkFile`,
    /// `lsp/diagnostics`, `lsp/getDiagnosticEpoch`, `lsp/diagnosticsAfter`, `lsp/status`,
    /// `lsp/shutdown`, `squiggle/checkFile` (with whether the file was checked, and why not),
    /// `squiggle/feedback`, `squiggle/restart` (broken servers, after their cooldown),
    /// `squiggle/workspaceDiagnostics`, the navigation methods (`lsp/definition`,
    /// `lsp/references`, `lsp/hover`, `lsp/documentSymbols`, `lsp/workspaceSymbols`,
    /// `squiggle/callHierarchy`, `squiggle/implementation`, `squiggle/typeDefinition`,
    /// `lsp/rename`, `lsp/codeActions`) and `$/cancelRequest`. The environment variable
    /// LSP_BOOTSTRAP may hold {"workspaceRoot": "...", "config": {...} | false}. Stdout carries
    /// protocol bytes only; logs go to stderr. Every language server dies with the service.
    Serve(serve::ServeArgs),
    /// Serve MCP on stdio: navigation tools (lsp_goto_definition, lsp_find_references,
    /// lsp_hover, lsp_document_symbols, lsp_workspace_symbols, lsp_call_hierarchy,
    /// lsp_implementation, lsp_type_definition), refactoring tools (lsp_rename,
    /// lsp_code_actions), lsp_diagnostics and lsp_workspace_diagnostics.
    ///
    /// `navigation_tools = false` in the configuration hides the navigation and refactoring
    /// tools. Stdout
    /// carries protocol bytes only; logs go to stderr.
    Mcp(mcp::McpArgs),
    /// Answer an agent host's edit hook: read its hook input on stdin, check the edited file,
    /// and answer so the model sees the errors (nothing when the file is clean).
    ///
    /// Always exits 0: malformed input, another tool, a file outside the workspace or any
    /// failure end without a block (with one line on stderr at most). `squiggle init HOST`
    /// sets it up.
    Hook(hosts::hook::HookArgs),
    /// Set squiggle up for an agent host in this project: its edit hooks and the `squiggle mcp`
    /// server, merged into the host's project settings files.
    Init(hosts::init::InitArgs),
    /// See or stop the per-workspace background daemons that keep servers warm for `check`.
    ///
    /// `squiggle check` starts one per workspace root and configuration when none runs, and
    /// asks it from then on; it exits after `daemon_idle_seconds` (900) without a request.
    /// `--no-daemon`, `daemon = false` or SQUIGGLE_NO_DAEMON=1 check in-process instead.
    Daemon(daemon::DaemonArgs),
    /// Restart this workspace's language servers in its daemon: those that broke, including
    /// one held after a crash loop ("run `squiggle restart ID`" in its reason).
    ///
    /// Prints each server's state afterwards; exit code 1 when one is still broken (its
    /// restart cooldown has not passed), 2 for an id that is not configured.
    Restart(daemon::RestartArgs),
    /// Trust this project's configuration files to run the servers they name.
    ///
    /// A project's squiggle.toml, .squiggle/config.toml or opencode.json may name the commands
    /// squiggle runs as you (their [servers] tables). Until you trust a file, with its exact
    /// content, those tables are not used: only the built-in servers run, and squiggle says so
    /// once. This shows what each file runs and records your trust outside the project (in
    /// $XDG_CONFIG_HOME/squiggle/trusted, else ~/.config/squiggle/trusted); any change to the
    /// file ends it. It stops the workspace's daemon, so the next check uses the files.
    Trust(trust::TrustArgs),
}

/// Runs the command line: parses the arguments, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A hook's stderr can reach the host's user (Gemini CLI shows it when stdout is empty), so
    // a hook logs nothing unless SQUIGGLE_LOG asks.
    init_logging(match cli.command {
        Command::Hook(_) => tracing::level_filters::LevelFilter::OFF,
        _ => tracing::level_filters::LevelFilter::WARN,
    });
    // Two workers: squiggle's work is short message handling, but when servers answer a burst
    // faster than one thread can take their answers in, a second worker drains the backlog
    // (measured: the slowest of 64 concurrent checks came about 1 ms sooner than on one thread,
    // for about 15% more CPU; see docs/benchmarks.md). Servers are spawned from the
    // workers, which live as long as the runtime, so their parent-death signal fires only when
    // squiggle exits.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("squiggle: cannot start the async runtime: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let outcome = match cli.command {
        Command::Check(args) => runtime.block_on(check::run(args)),
        Command::Serve(args) => runtime.block_on(serve::run(args)),
        Command::Mcp(args) => runtime.block_on(mcp::run(args)),
        Command::Hook(args) => runtime.block_on(hosts::hook::run(args)),
        Command::Init(args) => hosts::init::run(args),
        Command::Daemon(args) => runtime.block_on(daemon::run(args)),
        Command::Restart(args) => runtime.block_on(daemon::restart(args)),
        Command::Status(args) => servers::status(args),
        Command::Servers(args) => servers::servers(args),
        Command::Install(args) => install::run(args),
        Command::Trust(args) => runtime.block_on(trust::run(args)),
    };
    // Anything still running (a server that ignored shutdown) is killed with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match outcome {
        Ok(code) => ExitCode::from(code),
        // A reader that stopped early (`squiggle status | head -1`) is no error.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("squiggle: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Whether an error comes from writing to a stdout whose reader is gone.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let kind = match (
            cause.downcast_ref::<std::io::Error>(),
            cause.downcast_ref::<serde_json::Error>(),
        ) {
            (Some(io), _) => Some(io.kind()),
            (None, Some(json)) => json.io_error_kind(),
            (None, None) => None,
        };
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}

/// Logs go to stderr, filtered by `SQUIGGLE_LOG` (default: `default`, warnings for most commands).
fn init_logging(default: tracing::level_filters::LevelFilter) {
    let filter = std::env::var("SQUIGGLE_LOG")
        .ok()
        .and_then(|spec| spec.parse::<tracing_subscriber::filter::Targets>().ok())
        .unwrap_or_else(|| tracing_subscriber::filter::Targets::new().with_default(default));
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                // Bounded in a daemon, whose stderr is its log (see daemon::log).
                .with_writer(|| daemon::log::Stderr)
                .with_target(false)
                // Colour codes only for a terminal: a daemon's stderr is its log file, and a
                // piped stderr is read by programs.
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                // A stderr that cannot be written (a daemon's log on a full disk) is no reason
                // to print about it to that stderr, which panics.
                .log_internal_errors(false),
        )
        .with(filter)
        .try_init();
}
