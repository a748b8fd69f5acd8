//! `cargo xtask`: project tasks that need more than cargo.
//!
//! - `install-servers`: installs the real language servers the tests and demo use into
//!   `target/lsp-servers/`, from npm and PyPI.
//! - `install-agent-hosts [HOST]...`: installs the pinned agent hosts (Claude Code, Gemini CLI)
//!   whose plugin formats the tests check into `target/agent-hosts/`, from npm.
//! - `demo`: builds squiggle and checks the example project in `examples/demo`.
//! - `test [ARGS]...`: installs what the tests need and runs every test.
//! - `loop-check`: the agent loop's regression (3 seeded edits per real project against its
//!   batch checker), which `test` runs last.
//! - `dist [--dev] [--check] [--binary TARGET=PATH]...`: the PyPI wheel and the npm packages
//!   for this machine, into `target/dist/` (see docs/install.md).
//! - `bench [--quick]`: end-to-end benchmarks against the floor, a minimal raw LSP client.
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
    /// The agent loop's regression alone (the last step of `test`): 3 seeded edits per real
    /// project through the debug build's hook, against each project's batch checker.
    LoopCheck,
    /// Build the PyPI wheel (squiggle-lsp) and the npm packages (@squiggle-dev/squiggle and this
    /// machine's platform package) into target/dist/: squiggle without a Rust toolchain.
    Dist(DistArgs),
    /// Install the real language servers into target/lsp-servers/.
    InstallServers(InstallArgs),
    /// Install the pinned agent hosts (Claude Code, Gemini CLI) into target/agent-hosts/;
    /// prints `HOST VERSION COMMAND` for each.
    InstallAgentHosts(InstallAgentHostsArgs),
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
            args.agent_loop.then_some(args.seed),
            args.server.as_deref(),
        ),
    }
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
