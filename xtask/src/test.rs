//! `cargo xtask test`: install what the tests need (the matrix's servers too, the agent hosts,
//! and a rust-analyzer built once), then run every test; then build, install and run the pip
//! and npm packages, package the crates and lint the release workflow (`dist --dev --check`),
//! type-check for macOS, and type-check for Windows and run the Wine suite (`test/windows.rs`).

mod failures;
mod windows;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context};

use crate::{agent_hosts, dist, lsp_servers, rust_analyzer};
use failures::Failures;

/// Installs the test language servers and runs `cargo test` for the whole workspace, with the
/// servers on PATH; extra args go to `cargo test`. The binaries the tests drive need nothing
/// here: Cargo builds them for the tests (see tests/tests/it/support.rs).
pub fn run(workspace: &Path, extra: &[String]) -> anyhow::Result<()> {
    lsp_servers::install(workspace)?;
    lsp_servers::install_matrix(workspace)?;
    // From crates.io and Debian: a failure here costs only their matrix tests, said below.
    if let Err(err) = lsp_servers::install_taplo(workspace) {
        eprintln!("xtask: taplo was not installed: {err:#}");
    }
    if let Err(err) = lsp_servers::install_gopls() {
        eprintln!("xtask: gopls was not installed: {err:#}");
    }
    // The plugin tests install a missing host themselves and fail saying why it could not be
    // installed; installing here first keeps them from racing to do it.
    for host in agent_hosts::HOSTS {
        if let Err(err) = agent_hosts::install(workspace, host) {
            eprintln!(
                "xtask: ERROR: {} {} could not be installed, so its plugin test will fail: {err:#}",
                host.package, host.version
            );
        }
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    // Built once into a cache folder (lsp_servers::bin_dirs puts it on the tests' PATH); where
    // it cannot be built, its tests fail saying it is not installed.
    if let Err(err) = rust_analyzer::ensure(workspace, &cargo) {
        eprintln!(
            "xtask: ERROR: rust-analyzer {} could not be built, so its tests will fail: {err:#}",
            rust_analyzer::VERSION
        );
    }
    let mut tests = Command::new(&cargo)
        .args(["test", "--workspace"])
        .args(extra)
        .current_dir(workspace)
        .env("PATH", lsp_servers::path_with_servers(workspace)?)
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run cargo test")?;
    // Passed on as it comes, and each failure's message said again at the end.
    let mut failures = Failures::default();
    if let Some(output) = tests.stdout.take() {
        let mut stdout = std::io::stdout();
        for line in BufReader::new(output).split(b'\n') {
            let line = line.context("cannot read cargo test's output")?;
            stdout.write_all(&line)?;
            stdout.write_all(b"\n")?;
            failures.read(&String::from_utf8_lossy(&line));
        }
    }
    let status = tests.wait().context("cannot run cargo test")?;
    if !status.success() {
        eprint!("{}", failures.summary());
        bail!("tests failed ({status})");
    }
    report_matrix_skips(workspace)?;
    // The agent loop's regression: 3 seeded edits per real project against its batch checker,
    // with target/debug/squiggle (the tests have their own build of it): build it first.
    let status = Command::new(&cargo)
        .args(["build", "--package", "squiggle"])
        .current_dir(workspace)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("building squiggle failed ({status})");
    }
    crate::bench::agent_loop::regression(workspace)?;
    // The packages people install without a Rust toolchain, from the dev build just made (no
    // second build), installed afresh and run; the crates packaged; and the release workflow
    // that builds them all, linted.
    dist::run(workspace, dist::Profile::Dev, true, &[])?;
    check_macos(workspace, &cargo)?;
    self::windows(workspace)
}

/// Type-checks squiggle for both Windows targets, then runs the Wine suite and says its count.
pub fn windows(workspace: &Path) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    ensure_rust_src()?;
    windows::ensure_tools()?;
    windows::check(workspace, &cargo)?;
    let passed = windows::wine_suite(workspace, &cargo)?;
    eprintln!(
        "xtask: Windows: {passed} of {} cases passed under Wine",
        windows::CASE_COUNT
    );
    Ok(())
}

/// Adds the toolchain's `rust-src` component when it is missing: `-Zbuild-std` builds the
/// macOS and Windows standard libraries from it (a fresh machine's toolchain may lack it).
fn ensure_rust_src() -> anyhow::Result<()> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let output = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .context("cannot run rustc --print sysroot")?;
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let library = Path::new(&sysroot).join("lib/rustlib/src/rust/library/Cargo.lock");
    if library.is_file() {
        return Ok(());
    }
    eprintln!("xtask: adding the toolchain's rust-src (rustup component add rust-src)");
    let status = Command::new("rustup")
        .args(["component", "add", "rust-src"])
        .status()
        .context("cannot run rustup (rust-src is needed to type-check for macOS and Windows)")?;
    if !status.success() || !library.is_file() {
        bail!(
            "the toolchain's rust-src could not be added ({status}); it is needed to build the \
             macOS and Windows standard libraries: rustup component add rust-src"
        );
    }
    Ok(())
}

/// The target the macOS type-check builds for (Apple silicon; x86_64 macOS differs in nothing
/// squiggle uses).
const MACOS: &str = "aarch64-apple-darwin";

/// Type-checks squiggle for macOS, with its standard library built from the toolchain's
/// rust-src (no macOS target can be installed here; the check links nothing, so no Apple SDK is
/// needed), in its own target folder that later runs reuse.
fn check_macos(workspace: &Path, cargo: &str) -> anyhow::Result<()> {
    ensure_rust_src()?;
    eprintln!("xtask: type-checking squiggle for macOS ({MACOS}, std built from rust-src)");
    let status = Command::new(cargo)
        .args([
            "check",
            "--quiet",
            "-Zbuild-std=std,panic_abort",
            "--target",
            MACOS,
        ])
        .args(["--package", "squiggle", "--target-dir"])
        .arg(workspace.join("target").join("macos-check"))
        .current_dir(workspace)
        // -Zbuild-std is unstable: the stable toolchain takes it with this.
        .env("RUSTC_BOOTSTRAP", "1")
        .status()
        .context("cannot run cargo check")?;
    if !status.success() {
        bail!("squiggle does not type-check for macOS ({MACOS}): {status}");
    }
    Ok(())
}

/// The matrix servers this task could not install (gopls from Debian needs root and apt, taplo
/// is built from crates.io): their tests pass without checking anything where they are
/// missing, so this says plainly which did not run; and the built-ins no registry has, whose
/// real servers no test here can run.
fn report_matrix_skips(workspace: &Path) -> anyhow::Result<()> {
    let taplo = lsp_servers::matrix_dir(workspace).join("cargo").join("bin");
    let path = lsp_servers::path_with_servers(workspace)?;
    let dirs: Vec<_> = std::iter::once(taplo)
        .chain(std::env::split_paths(&path))
        .collect();
    let here = |command: &str| dirs.iter().any(|dir| dir.join(command).is_file());
    for (server, commands, how) in [
        ("gopls", &["gopls", "go"][..], "apt install gopls golang-go"),
        ("taplo", &["taplo"][..], "cargo xtask install-servers --all"),
    ] {
        if !commands.iter().all(|command| here(command)) {
            eprintln!("xtask: the matrix's {server} test did not run: it is not installed ({how})");
        }
    }
    // No registry this runs with has these: their built-ins are tested with the fake server.
    for (server, from) in [
        ("jdtls", "Eclipse's download server"),
        ("luau-lsp", "its GitHub releases"),
    ] {
        if !here(server) {
            eprintln!(
                "xtask: {server} is not installed (it comes from {from}): its built-in is \
                 verified with the fake server only"
            );
        }
    }
    Ok(())
}
