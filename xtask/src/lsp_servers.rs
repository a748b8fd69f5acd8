//! The real language servers the tests and the demo use, installed from the package
//! registries into `target/lsp-servers/` (npm packages under `node_modules/.bin`, Python
//! packages in a virtual environment under `venv/bin`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// npm packages, pinned so that expected diagnostics stay exact.
const NPM_PACKAGES: &[&str] = &[
    "pyright@1.1.414",
    "typescript@5.9.3",
    "typescript-language-server@5.3.0",
    "vscode-jsonrpc@8.2.1",
];
/// TypeScript 7 (the native port, whose `tsc --lsp --stdio` is a language server), in a folder of
/// its own: beside typescript-language-server it would replace the TypeScript 5 that one needs.
/// Tests link a project's `node_modules` to it.
const NPM_TYPESCRIPT_7: &[&str] = &["typescript@7.0.2"];
/// PyPI packages, pinned likewise.
const PIP_PACKAGES: &[&str] = &["ruff==0.17.5", "mcp==2.3.0", "jsonschema==4.26.0"];

/// The folder the servers are installed into.
pub fn install_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("lsp-servers")
}

/// The folders holding the installed servers' executables (and the rust-analyzer
/// `cargo xtask test` builds), to put in front of PATH.
pub fn bin_dirs(workspace: &Path) -> Vec<PathBuf> {
    let dir = install_dir(workspace);
    let mut dirs = vec![
        dir.join("node_modules").join(".bin"),
        dir.join("venv").join("bin"),
    ];
    dirs.extend(crate::rust_analyzer::dir());
    dirs
}

/// PATH with the installed servers in front.
pub fn path_with_servers(workspace: &Path) -> anyhow::Result<std::ffi::OsString> {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let dirs = bin_dirs(workspace)
        .into_iter()
        .chain(std::env::split_paths(&current));
    std::env::join_paths(dirs).context("cannot build PATH")
}

/// Where the real-server matrix's servers are installed, laid out like `squiggle install`'s
/// data folder (`npm/node_modules/.bin`, `venv/bin`), apart from the servers above so that the
/// other tests' files are not also sent to eslint, biome or the JSON server.
pub fn matrix_dir(workspace: &Path) -> PathBuf {
    install_dir(workspace).join("matrix")
}

/// The built-in servers the matrix tests (tests/tests/it/matrix.rs): every one `squiggle install`
/// can install but those the default install already serves the other tests with, and vue,
/// whose diagnostics need a TypeScript plugin squiggle does not run.
pub const MATRIX_SERVERS: &[&str] = &[
    "json",
    "css",
    "html",
    "yaml",
    "bash",
    "dockerfile",
    "clangd",
    "intelephense",
    "svelte",
    "eslint",
    "biome",
    "basedpyright",
    "ty",
    "pylsp",
];

/// Installs the matrix's servers at their pinned versions (the same plan `squiggle install`
/// carries out) unless that plan is installed already.
pub fn install_matrix(workspace: &Path) -> anyhow::Result<()> {
    let dir = matrix_dir(workspace);
    let plan = squiggle_config::install::plan(MATRIX_SERVERS)?;
    let mut wanted: Vec<&str> = plan.npm.iter().chain(&plan.pip).copied().collect();
    // eslint lints with the project's own eslint: the matrix project links this node_modules.
    let project_packages = squiggle_config::install::Plan {
        servers: Vec::new(),
        npm: vec![ESLINT_FOR_MATRIX],
        pip: Vec::new(),
    };
    wanted.push(ESLINT_FOR_MATRIX);
    let stamp = dir.join(".installed");
    let wanted = wanted.join(" ");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(());
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    eprintln!(
        "xtask: installing the matrix servers into {}",
        dir.display()
    );
    for step in plan.steps(&dir).iter().chain(&project_packages.steps(&dir)) {
        eprintln!("xtask: {step}");
        let status = Command::new(&step.program)
            .args(&step.args)
            .status()
            .with_context(|| format!("cannot run {}", step.program.display()))?;
        if !status.success() {
            bail!("`{step}` failed ({status})");
        }
    }
    std::fs::write(&stamp, wanted)?;
    Ok(())
}

/// taplo with its language server, from crates.io (its npm and PyPI builds have none).
const TAPLO_CRATE: &str = "taplo-cli@0.10.0";

/// Builds taplo with its language server into the matrix's `cargo/bin` (minutes of compiling:
/// only `install-servers --all` does it, not `cargo xtask test`, whose taplo test then says it
/// was skipped).
pub fn install_taplo(workspace: &Path) -> anyhow::Result<()> {
    let root = matrix_dir(workspace).join("cargo");
    let stamp = root.join(".installed");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == TAPLO_CRATE) {
        return Ok(());
    }
    eprintln!(
        "xtask: building {TAPLO_CRATE} (with its language server) into {}",
        root.display()
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .args([
            "install",
            TAPLO_CRATE,
            "--locked",
            "--features",
            "lsp",
            "--root",
        ])
        .arg(&root)
        .status()
        .context("cannot run cargo install")?;
    if !status.success() {
        bail!("cargo install {TAPLO_CRATE} failed ({status})");
    }
    std::fs::write(&stamp, TAPLO_CRATE)?;
    Ok(())
}

/// The eslint the matrix's eslint project lints with.
const ESLINT_FOR_MATRIX: &str = "eslint@10.15.0";

/// Installs every pinned server that is not installed yet; returns the bin folders.
pub fn install(workspace: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let dir = install_dir(workspace);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    install_npm(&dir, NPM_PACKAGES)?;
    install_npm(&typescript_7_dir(workspace), NPM_TYPESCRIPT_7)?;
    install_pip(&dir, PIP_PACKAGES)?;
    Ok(bin_dirs(workspace))
}

/// Where TypeScript 7 is installed: its `node_modules` is what a TypeScript 7 project holds.
pub fn typescript_7_dir(workspace: &Path) -> PathBuf {
    install_dir(workspace).join("typescript-7")
}

/// Installs the npm `packages` into `dir` (once: a stamp file records what is there). npm's
/// own output goes to stderr, so that stdout stays for what xtask reports.
pub fn install_npm(dir: &Path, packages: &[&str]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stamp = dir.join(".npm-installed");
    let wanted = packages.join(" ");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(());
    }
    eprintln!("xtask: installing {wanted} (npm) into {}", dir.display());
    let manifest = dir.join("package.json");
    if !manifest.exists() {
        std::fs::write(
            &manifest,
            "{\"name\":\"squiggle-lsp-servers\",\"private\":true}\n",
        )?;
    }
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--save-exact",
        ])
        .args(packages)
        .current_dir(dir)
        .stdout(std::io::stderr())
        .status()
        .context("cannot run npm (install Node.js 18 or newer)")?;
    if !status.success() {
        bail!("npm install failed ({status})");
    }
    std::fs::write(&stamp, wanted)?;
    Ok(())
}

/// Installs the PyPI `packages` into a virtual environment at `dir/venv` (once: a stamp file
/// records what is there).
pub fn install_pip(dir: &Path, packages: &[&str]) -> anyhow::Result<()> {
    let stamp = dir.join(".pip-installed");
    let wanted = packages.join(" ");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(());
    }
    eprintln!("xtask: installing {wanted} (pip) into {}", dir.display());
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let venv = dir.join("venv");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("cannot run python3 (install Python 3.8 or newer)")?;
        if !status.success() {
            bail!("python3 -m venv failed ({status})");
        }
    }
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(packages)
        .status()
        .context("cannot run pip in the virtual environment")?;
    if !status.success() {
        bail!("pip install failed ({status})");
    }
    std::fs::write(&stamp, wanted)?;
    Ok(())
}

/// Installs Debian's gopls (and the go it runs) with apt when gopls is not on PATH, as root on
/// a machine with apt-get; elsewhere it says what to run.
pub fn install_gopls() -> anyhow::Result<()> {
    let on_path = |command: &str| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(command).is_file()))
    };
    if on_path("gopls") && on_path("go") {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0");
    if !root || !on_path("apt-get") {
        bail!("not root with apt-get here (run: apt install gopls golang-go)");
    }
    let install = || {
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "--no-install-recommends",
                "gopls",
                "golang-go",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|status| status.success())
    };
    eprintln!("xtask: installing gopls and golang-go (apt)");
    if install() {
        return Ok(());
    }
    // The package lists may be missing on a fresh machine.
    let updated = Command::new("apt-get")
        .arg("update")
        .status()
        .is_ok_and(|status| status.success());
    if updated && install() {
        return Ok(());
    }
    bail!("apt-get install gopls golang-go failed")
}
