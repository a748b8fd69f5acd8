//! `cargo xtask`: project tasks that need more than cargo.
//!
//! - `fake-server [--scenario NAME | --script FILE]`: the scriptable LSP server tests use.
//! - `install-servers`: installs the real language servers the tests and demo use into
//!   `target/lsp-servers/`, from npm and PyPI.
//! - `demo`: builds squiggle and checks the example project in `examples/demo`.
//! - `test`: installs what the tests need and runs every test.
//! - `bench`: end-to-end benchmarks against the floor, a minimal raw LSP client.

mod bench;
mod demo;
mod fake_server;
mod lsp_servers;
mod test;

use std::path::PathBuf;

use anyhow::Context;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  demo              build squiggle and check the example project (examples/demo)
  test              install the test language servers and run every test
  bench [--quick]   end-to-end benchmarks against a minimal raw LSP client (target/bench/report.json)
  install-servers [--all]
                    install the real language servers into target/lsp-servers/
                    (--all: the real-server matrix's too, into target/lsp-servers/matrix/,
                    with taplo built from crates.io)
  fake-server       run the fake LSP server on stdio [--scenario NAME | --script FILE]";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    match args.first().map(String::as_str) {
        Some("fake-server") => fake_server::run(rest),
        Some("install-servers") => {
            let workspace = workspace_root()?;
            lsp_servers::install(&workspace)?;
            if rest.iter().any(|arg| arg == "--all") {
                lsp_servers::install_matrix(&workspace)?;
                lsp_servers::install_taplo(&workspace)?;
            }
            Ok(())
        }
        Some("demo") => demo::run(&workspace_root()?),
        Some("test") => test::run(&workspace_root()?, rest),
        Some("bench") => bench::run(&workspace_root()?, rest),
        Some("bench-run") => bench::measure(&workspace_root()?, rest),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => anyhow::bail!("{USAGE}"),
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
