//! rust-analyzer for the tests. The toolchain here has no rust-analyzer component and none can
//! be downloaded, so `cargo xtask test` builds the pinned version from crates.io (the package
//! `ra_ap_rust-analyzer`) once, about 10 minutes on 2 cores, into a cache folder outside
//! `target/` that later runs and clean checkouts reuse.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// The version built: the newest that builds with this toolchain's rustc (1.95).
pub const VERSION: &str = "0.0.349";

/// Its salsa must be pinned to this version to build.
const SALSA: &str = "0.28.2";

/// Where the binary is kept: `$XDG_CACHE_HOME/squiggle/rust-analyzer-<version>` (else under
/// `~/.cache`), the folder the tests look in too (tests/tests/it/support.rs, `rust_analyzer_dir`).
pub fn dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(
        cache
            .join("squiggle")
            .join(format!("rust-analyzer-{VERSION}")),
    )
}

/// Whether the rust-analyzer in `dir` runs.
fn runs(dir: &Path) -> bool {
    Command::new(dir.join("rust-analyzer"))
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The folder holding a working rust-analyzer, built first if it is not there yet (in
/// `target/rust-analyzer-build`, kept until the build succeeds so that a second try resumes).
pub fn ensure(workspace: &Path, cargo: &str) -> anyhow::Result<PathBuf> {
    let dir = dir().context("no cache folder: neither XDG_CACHE_HOME nor HOME is set")?;
    if runs(&dir) {
        return Ok(dir);
    }
    eprintln!(
        "xtask: building rust-analyzer {VERSION} from crates.io into {} (once; about 10 minutes on 2 cores)",
        dir.display()
    );
    let work = workspace.join("target").join("rust-analyzer-build");
    let source = fetch_source(cargo, &work)?;
    let build = work.join("build");
    crate::bench::fixture::copy_dir(&source, &build)?;
    // A workspace of its own, not a stray member of the one it is built under.
    let manifest = build.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)?;
    if !text.lines().any(|line| line.trim() == "[workspace]") {
        std::fs::write(&manifest, format!("{text}\n[workspace]\n"))?;
    }
    let step = |args: &[&str]| -> anyhow::Result<()> {
        let status = Command::new(cargo)
            .args(args)
            .current_dir(&build)
            .status()
            .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
        if !status.success() {
            bail!("cargo {} failed ({status})", args.join(" "));
        }
        Ok(())
    };
    step(&["generate-lockfile", "-q"])?;
    step(&["update", "-q", "-p", "salsa", "--precise", SALSA])?;
    step(&[
        "update",
        "-q",
        "-p",
        "salsa-macro-rules",
        "--precise",
        SALSA,
    ])?;
    let status = Command::new(cargo)
        .args(["build", "--release", "--bin", "rust-analyzer"])
        .current_dir(&build)
        // It uses `assert_matches`, which this rustc still gates behind a feature flag.
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            "RUSTFLAGS",
            "-Zcrate-attr=feature(assert_matches) -Awarnings",
        )
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("building rust-analyzer failed ({status})");
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Copied under another name, then renamed: an interrupted copy is never taken for a binary.
    let partial = dir.join(".rust-analyzer.partial");
    std::fs::copy(build.join("target/release/rust-analyzer"), &partial)
        .context("cannot copy the built rust-analyzer")?;
    std::fs::rename(&partial, dir.join("rust-analyzer"))?;
    if !runs(&dir) {
        bail!("the built rust-analyzer does not run");
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(dir)
}

/// Downloads the source of `ra_ap_rust-analyzer` (and its dependencies) through a throwaway
/// crate that depends on it, and returns the folder cargo unpacked it into.
fn fetch_source(cargo: &str, work: &Path) -> anyhow::Result<PathBuf> {
    let fetcher = work.join("fetch");
    std::fs::create_dir_all(fetcher.join("src"))?;
    std::fs::write(
        fetcher.join("Cargo.toml"),
        format!(
            "[package]\nname = \"fetch-rust-analyzer\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\nra_ap_rust-analyzer = \"={VERSION}\"\n\n[workspace]\n"
        ),
    )?;
    std::fs::write(fetcher.join("src/lib.rs"), "")?;
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(&fetcher)
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cannot download ra_ap_rust-analyzer {VERSION}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let manifest = (metadata["packages"].as_array().into_iter().flatten())
        .find(|p| p["name"] == "ra_ap_rust-analyzer" && p["version"] == VERSION)
        .and_then(|p| p["manifest_path"].as_str())
        .context("cargo metadata does not list ra_ap_rust-analyzer")?;
    Ok(Path::new(manifest)
        .parent()
        .context("a manifest path without a folder")?
        .to_path_buf())
}
