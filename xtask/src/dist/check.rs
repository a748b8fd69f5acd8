//! `cargo xtask dist --check` (and `cargo xtask test`): installs the wheel (maturin's, and the
//! one `dist --binary` packs around the same binary) into fresh venvs and the npm tarballs into
//! a fresh npm prefix, from the local files only, and runs the
//! installed `squiggle` of each: `--version`, and a check of `examples/demo` with the test
//! language servers (pyright and ruff from `target/lsp-servers/`), whose output must be the
//! demo's three errors. The launcher's SQUIGGLE_BINARY override is run too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{bail, ensure, Context};

use super::targets::PYPI;
use super::{Built, VERSION};
use crate::lsp_servers;

/// What `squiggle check` prints for examples/demo with the pinned pyright and ruff.
const DEMO_ERRORS: &str = "\
app.py:7:18: error[reportAssignmentType]: Type \"Literal['circle']\" is not assignable to declared type \"int\"; \"Literal['circle']\" is not assignable to \"int\"
app.py:13:11: error[reportUndefinedVariable, F821]: \"totl\" is not defined (Pyright, Ruff)
shapes.py:14:41: error[reportCallIssue]: No parameter named \"colour\"
";

/// Installs `built` afresh under `target/dist/check/` and runs what it installed.
pub fn run(workspace: &Path, built: &Built) -> anyhow::Result<()> {
    lsp_servers::install(workspace)?;
    let dir = super::out_dir(workspace).join("check");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;
    let wheel_name = built
        .wheel
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let prefix = format!("{}-{VERSION}-", PYPI.replace('-', "_"));
    ensure!(
        wheel_name.starts_with(&prefix),
        "the wheel {wheel_name} is not {PYPI} {VERSION}"
    );
    let from_pip = install_wheel(&dir.join("venv"), &built.wheel)?;
    // The wheel `dist --binary` packs around a binary built elsewhere, from the same binary.
    let packed = super::wheel::pack(
        workspace,
        &dir.join("packed"),
        VERSION,
        built.target,
        &built.binary,
    )?;
    let from_packed = install_wheel(&dir.join("venv-packed"), &packed)?;
    let from_npm = install_npm(&dir, &built.npm)?;
    let installs = [
        ("pip", &from_pip),
        ("pip (the wheel packed by dist --binary)", &from_packed),
        ("npm", &from_npm),
    ];
    for (how, squiggle) in installs {
        eprintln!(
            "xtask: running squiggle installed with {how}: {}",
            squiggle.display()
        );
        let version = run_ok(squiggle, &["--version"], &[], workspace)?;
        ensure!(
            version.status.success() && stdout(&version) == format!("squiggle {VERSION}\n"),
            "`squiggle --version` installed with {how} printed {:?} (exit {}), not \"squiggle {VERSION}\"",
            stdout(&version),
            version.status
        );
        check_demo(workspace, how, squiggle)?;
    }
    // The launcher runs what SQUIGGLE_BINARY names, with the arguments and exit status.
    let echo = run_ok(
        &from_npm,
        &["through", "the override"],
        &[("SQUIGGLE_BINARY", "/bin/echo")],
        workspace,
    )?;
    ensure!(
        echo.status.success() && stdout(&echo) == "through the override\n",
        "the npm launcher with SQUIGGLE_BINARY=/bin/echo printed {:?} ({})",
        stdout(&echo),
        echo.status
    );
    let refused = run_ok(
        &from_npm,
        &[],
        &[("SQUIGGLE_BINARY", "/bin/false")],
        workspace,
    )?;
    ensure!(
        refused.status.code() == Some(1),
        "the npm launcher did not pass /bin/false's exit status on: {}",
        refused.status
    );
    eprintln!("xtask: the pip and npm packages install and run");
    Ok(())
}

/// A fresh venv at `venv` with the wheel installed from its file (no index); returns its
/// `squiggle`.
fn install_wheel(venv: &Path, wheel: &Path) -> anyhow::Result<PathBuf> {
    command_ok(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    command_ok(
        Command::new(venv.join("bin").join("python"))
            .args(["-m", "pip", "install", "--quiet", "--no-index", "--no-deps"])
            .arg(wheel),
    )?;
    Ok(venv.join("bin").join("squiggle"))
}

/// A fresh npm prefix with the tarballs installed (offline: the other platforms' packages,
/// optional dependencies, are skipped); returns its `squiggle`.
fn install_npm(dir: &Path, tarballs: &[PathBuf]) -> anyhow::Result<PathBuf> {
    let prefix = dir.join("npm");
    std::fs::create_dir_all(&prefix)?;
    command_ok(
        Command::new("npm")
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&prefix)
            .args(tarballs),
    )?;
    Ok(prefix.join("node_modules").join(".bin").join("squiggle"))
}

/// `squiggle check` of the demo through `squiggle`: exit 1 and the demo's errors.
fn check_demo(workspace: &Path, how: &str, squiggle: &Path) -> anyhow::Result<()> {
    let demo = workspace.join("examples").join("demo");
    let (root, app, shapes) = (
        demo.display().to_string(),
        demo.join("app.py").display().to_string(),
        demo.join("shapes.py").display().to_string(),
    );
    let check = run_ok(
        squiggle,
        &["check", "--no-daemon", "--root", &root, &app, &shapes],
        &[],
        workspace,
    )?;
    ensure!(
        check.status.code() == Some(1) && stdout(&check) == DEMO_ERRORS,
        "`squiggle check` of examples/demo installed with {how} exited {} and printed:\n{}\n(stderr: {})\nexpected exit 1 and:\n{DEMO_ERRORS}",
        check.status,
        stdout(&check),
        String::from_utf8_lossy(&check.stderr)
    );
    Ok(())
}

/// Runs `program` with `args` in `cwd`, the test language servers on PATH, no user
/// configuration, and `env` on top; returns its output whatever its exit status.
fn run_ok(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    cwd: &Path,
) -> anyhow::Result<Output> {
    let path: OsString = lsp_servers::path_with_servers(cwd)?;
    let no_config = super::out_dir(cwd).join("check").join("no-user-config");
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env("PATH", path)
        .env("XDG_CONFIG_HOME", no_config)
        .env_remove("SQUIGGLE_BINARY")
        .envs(env.iter().copied())
        .output()
        .with_context(|| format!("cannot run {}", program.display()))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs `command`, failing with its output unless it succeeds.
pub(super) fn command_ok(command: &mut Command) -> anyhow::Result<()> {
    let output = command
        .output()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !output.status.success() {
        bail!(
            "{command:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}
