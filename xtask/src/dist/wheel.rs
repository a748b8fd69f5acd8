//! The wheel packed around a binary built elsewhere (`cargo xtask dist --binary TARGET=PATH`),
//! as the npm packages are: `wheel.py` writes what maturin's "bin" bindings make, with the
//! metadata from pyproject.toml. The release's wheels come from maturin (manylinux tags);
//! these carry [`Target::local_wheel_tag`].

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use super::targets::Target;

/// The packing script.
const SCRIPT: &str = include_str!("wheel.py");

/// Packs the wheel for `target` around `binary` into `out`; returns its path.
pub fn pack(
    workspace: &Path,
    out: &Path,
    version: &str,
    target: &Target,
    binary: &Path,
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    if !binary.is_file() {
        bail!(
            "the binary for {} is not a file: {}",
            target.rust,
            binary.display()
        );
    }
    let output = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(workspace)
        .args([version, target.local_wheel_tag])
        .arg(binary)
        .arg(target.binary())
        .arg(out)
        .output()
        .context("cannot run python3 to pack the wheel")?;
    if !output.status.success() {
        bail!(
            "packing the wheel for {} failed: {}",
            target.rust,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(PathBuf::from(
        String::from_utf8_lossy(&output.stdout).trim(),
    ))
}
