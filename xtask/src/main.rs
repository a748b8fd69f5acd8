//! `cargo xtask`: project tasks that need more than cargo.
//!
//! - `install-servers`: installs the real language servers the tests and demo use into
//!   `target/lsp-servers/`, from npm and PyPI.
//! - `install-agent-hosts [HOST]...`: installs the pinned agent hosts (Claude Code, Gemini CLI)
//!   whose plugin formats the tests check into `target/agent-hosts/`, from npm.
//! - `demo`: builds squiggle and checks the example project in `examples/demo`.
//! - `test [ARGS]...`: installs what the tests need and runs every test.
//! - `loop-check`: the agent loop's regression (3 seeded edits per real project against its
//!   batch checker), which `test` runs after the tests.
//! - `windows-check`: squiggle type-checked for Windows and run under Wine (8 cases), which
//!   `test` runs last (docs/development.md).
//! - `dist [--dev] [--check] [--binary TARGET=PATH]...`: the PyPI wheel and the npm packages
//!   for this machine, into `target/dist/` (see docs/install.md).
//! - `bench [--quick]`: end-to-end benchmarks against the floor, a minimal raw LSP client.
//! - `fake-server [ARGS]...`: the fake LSP server (`fake-lsp`) on stdio.
//! - `bench-run [--quick] [--load-only] [--daemon-only] [--fleet] [--loop [--seed N]] [--server LABEL]`:
//!   the measurements `bench` runs with release binaries.
//!
//! # Layout
//!
//! - `lsp_servers`: the real servers the tests use, installed from npm and PyPI.
//! - `rust_analyzer`: rust-analyzer built once from crates.io into a cache folder.
//! - `agent_hosts`: the pinned agent hosts (Claude Code, Gemini CLI) installed from npm.
//! - `demo`, `test`, `bench`, `dist`: the tasks of the same names (`dist/` holds the package
//!   targets, the npm packages, their install check and the release workflow's actionlint).
//! - `layout`: the test that each crate's Layout names every module it declares.

mod agent_hosts;
mod bench;
mod demo;
mod dist;
#[cfg(test)]
mod layout;
mod lsp_servers;
mod rust_analyzer;
mod test;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

/// Project tasks for squiggle that need more than cargo.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    /// The task to run.
    #[command(subcommand)]
    task: Task,
}

/// One task; each has its own `--help`.
#[derive(Debug, Subcommand)]
enum Task {
    /// Build squiggle and check the example project (examples/demo).
    Demo,
    /// Install the test language servers and run every test.
    Test(TestArgs),
    /// End-to-end benchmarks against a minimal raw LSP client (target/bench/report.json).
    Bench(BenchArgs),
    /// The measurements `bench` runs, with the release binaries it built first.
    #[command(hide = true)]
    BenchRun(BenchRunArgs),
    /// The agent loop's regression alone (a step of `test`): 3 seeded edits per real
    /// project through the debug build's hook, against each project's batch checker.
    LoopCheck,
    /// The Windows part of `test` alone: squiggle type-checked for x86_64-pc-windows-gnu and
    /// -msvc, then built for -gnu with the fake server and run under Wine (MinGW-w64 and Wine
    /// installed from Debian when missing).
    WindowsCheck,
    /// Build the PyPI wheel (squiggle-lsp) and the npm packages (@squiggle-dev/squiggle and this
    /// machine's platform package) into target/dist/: squiggle without a Rust toolchain.
    Dist(DistArgs),
    /// Install the real language servers into target/lsp-servers/.
    InstallServers(InstallArgs),
    /// Install the pinned agent hosts (Claude Code, Gemini CLI) into target/agent-hosts/;
    /// prints `HOST VERSION COMMAND` for each.
    InstallAgentHosts(InstallAgentHostsArgs),
    /// Run the fake LSP server on stdio (the `fake-lsp` binary the tests and benchmarks run):
    /// `--scenario NAME` or `--script FILE`; `cargo xtask fake-server --help` gives its own help.
    #[command(disable_help_flag = true)]
    FakeServer(FakeServerArgs),
}

/// Arguments of `fake-server`: the fake server's own, passed on as given.
#[derive(Debug, Args)]
struct FakeServerArgs {
    /// The fake server's arguments (`--scenario NAME`, `--script FILE`, `--help`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

/// Arguments of `test`.
#[derive(Debug, Args)]
struct TestArgs {
    /// Passed on to `cargo test --workspace` as given (e.g. `-p squiggle-tests --test it -- serve::`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CARGO_TEST_ARGS"
    )]
    cargo_test: Vec<String>,
}

/// Arguments of `dist`.
#[derive(Debug, Args)]
struct DistArgs {
    /// Build with the dev profile (unoptimised, and no second build after `cargo build`: what
    /// `cargo xtask test` packages) instead of release (optimised and stripped).
    #[arg(long)]
    dev: bool,
    /// Then install the wheel into a fresh venv and the npm packages into a fresh prefix, from
    /// the local files, and run `squiggle --version` and a check of examples/demo through each;
    /// `cargo package` the crates (without compiling them); and lint the release workflow.
    #[arg(long)]
    check: bool,
    /// Build nothing: pack the npm packages (the launcher, and a platform package for each
    /// binary given) from binaries built elsewhere, as the release workflow does.
    #[arg(long = "binary", value_name = "TARGET=PATH", conflicts_with_all = ["dev", "check"])]
    binaries: Vec<String>,
}

/// Arguments of `bench`.
#[derive(Debug, Args)]
struct BenchArgs {
    /// Fewer runs of each scenario, and no micro-benchmarks.
    #[arg(long)]
    quick: bool,
}

/// Arguments of `bench-run`.
#[derive(Debug, Args)]
struct BenchRunArgs {
    /// Fewer runs of each scenario.
    #[arg(long)]
    quick: bool,
    /// Only the load run and the soak (target/bench/load-report.json).
    #[arg(long, conflicts_with = "daemon_only")]
    load_only: bool,
    /// Only the fake server's cold and warm rows, the daemon scenario and the fleet.
    #[arg(long)]
    daemon_only: bool,
    /// Only the fleet scenario: 30 throwaway workspaces through the daemon, and 4 worktrees
    /// round-robin under a warm budget (target/bench/fleet-report.json).
    #[arg(long, conflicts_with_all = ["load_only", "daemon_only"])]
    fleet: bool,
    /// Only the agent loop: seeded random edits on the real projects through `squiggle hook
    /// claude-code` on a warm daemon, each reverted, against the project's batch checker
    /// (target/bench/loop-report.json).
    #[arg(long = "loop", conflicts_with_all = ["load_only", "daemon_only", "fleet"])]
    agent_loop: bool,
    /// Only the real server whose label starts with LABEL (`rust-analyzer`, `pyright`...):
    /// its cold and warm rows against the floor and its project's false cleans; with
    /// `--loop`, the projects whose label starts with LABEL (`isort`, `fp-ts`...).
    #[arg(long, value_name = "LABEL", conflicts_with_all = ["load_only", "daemon_only", "fleet"])]
    server: Option<String>,
    /// With `--loop`: the seed that picks the edits (the benchmark's table uses 24; others
    /// try edits the table has not seen).
    #[arg(long, default_value_t = 24, requires = "agent_loop")]
    seed: u64,
    /// With `--loop`: the plain edit hook alone (as Gemini CLI, `check --scope edit`, serve
    /// and MCP answer), no background hook beside it: what the daemon finds after an answer is
    /// read from the next answer, a hook on the edited file that changes nothing, after an
    /// agent's think time (10 s). Without it, the Claude Code plugin's two hooks.
    #[arg(long, requires = "agent_loop")]
    next_answer: bool,
}

/// Arguments of `install-servers`.
#[derive(Debug, Args)]
struct InstallArgs {
    /// Also the real-server matrix's servers (into target/lsp-servers/matrix/), with taplo
    /// built from crates.io.
    #[arg(long)]
    all: bool,
    /// Also rust-analyzer, built from crates.io into the cache folder the tests use (about 10
    /// minutes, once; `cargo xtask test` does this itself).
    #[arg(long)]
    rust_analyzer: bool,
}

/// Arguments of `install-agent-hosts`.
#[derive(Debug, Args)]
struct InstallAgentHostsArgs {
    /// The hosts to install (default: all).
    #[arg(value_name = "HOST",
          value_parser = clap::builder::PossibleValuesParser::new(agent_hosts::NAMES))]
    hosts: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::InstallServers(InstallArgs { all, rust_analyzer }) => {
            let workspace = workspace_root()?;
            lsp_servers::install(&workspace)?;
            if all {
                lsp_servers::install_matrix(&workspace)?;
                lsp_servers::install_taplo(&workspace)?;
            }
            if rust_analyzer {
                let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
                let dir = rust_analyzer::ensure(&workspace, &cargo)?;
                eprintln!("xtask: rust-analyzer is in {}", dir.display());
            }
            Ok(())
        }
        Task::InstallAgentHosts(args) => {
            agent_hosts::install_named(&workspace_root()?, &args.hosts)
        }
        Task::Demo => demo::run(&workspace_root()?),
        Task::LoopCheck => bench::agent_loop::regression(&workspace_root()?),
        Task::WindowsCheck => test::windows(&workspace_root()?),
        Task::FakeServer(args) => fake_server(&workspace_root()?, &args.args),
        Task::Dist(args) => dist::run(
            &workspace_root()?,
            if args.dev {
                dist::Profile::Dev
            } else {
                dist::Profile::Release
            },
            args.check,
            &args.binaries,
        ),
        Task::Test(args) => test::run(&workspace_root()?, &args.cargo_test),
        Task::Bench(args) => bench::run(&workspace_root()?, args.quick),
        Task::BenchRun(args) => bench::measure(
            &workspace_root()?,
            args.quick,
            args.load_only,
            args.daemon_only,
            args.fleet,
            (args.agent_loop).then_some((args.seed, bench::agent_loop::Door::of(args.next_answer))),
            args.server.as_deref(),
        ),
    }
}

/// Runs the fake LSP server with `args`, its stdio this process's, built first; ends with its
/// exit code.
fn fake_server(workspace: &std::path::Path, args: &[String]) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--package",
            "squiggle-fake-lsp",
            "--bin",
            "fake-lsp",
            "--",
        ])
        .args(args)
        .current_dir(workspace)
        .status()
        .context("cannot run cargo")?;
    std::process::exit(status.code().unwrap_or(1));
}

/// The repository root (the folder above `xtask/`).
fn workspace_root() -> anyhow::Result<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map(PathBuf::from)
        .context("xtask has no parent folder")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn fake_server_passes_its_arguments_and_help_to_the_fake_server() {
        // (arguments after `fake-server`, what reaches the fake server)
        let table: [&[&str]; 3] = [&["--help"], &["--scenario", "crash"], &[]];
        for args in table {
            let argv = ["xtask", "fake-server"].iter().chain(args);
            let cli = Cli::try_parse_from(argv).expect("parses");
            let Task::FakeServer(passed) = cli.task else {
                panic!("not fake-server: {cli:?}");
            };
            assert_eq!(passed.args, args, "{args:?}");
        }
    }

    #[test]
    fn test_passes_every_argument_on() {
        let cli =
            Cli::try_parse_from(["xtask", "test", "-p", "squiggle-tests", "--", "--nocapture"])
                .expect("parses");
        let Task::Test(args) = cli.task else {
            panic!("not test: {cli:?}");
        };
        assert_eq!(
            args.cargo_test,
            ["-p", "squiggle-tests", "--", "--nocapture"]
        );
    }
}
