//! The crates as crates.io would take them: every published crate has its licence,
//! description, repository and readme, the others say `publish = false`, and `cargo package`
//! (without compiling each crate, which would cost a full build per crate) makes a `.crate`
//! holding the README and both licence files. `cargo xtask test` runs it.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, ensure, Context};
use serde_json::Value;

/// The crates published to crates.io, in the order they must be published.
pub const PUBLISHED: &[&str] = &[
    "squiggle-protocol",
    "squiggle-config",
    "squiggle-actors",
    "squiggle",
];

/// What each published crate must say about itself.
const METADATA: &[&str] = &["license", "description", "repository", "readme"];

/// What each `.crate` must hold besides the code.
const FILES: &[&str] = &["README.md", "LICENSE-MIT", "LICENSE-APACHE"];

/// Checks the metadata, packages the published crates and looks inside each `.crate`.
pub fn check(workspace: &Path, cargo: &str) -> anyhow::Result<()> {
    eprintln!("xtask: cargo package of {}", PUBLISHED.join(", "));
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(workspace)
        .output()
        .context("cannot run cargo metadata")?;
    ensure!(
        output.status.success(),
        "cargo metadata failed ({})",
        output.status
    );
    let metadata: Value = serde_json::from_slice(&output.stdout)?;
    let packages = metadata["packages"]
        .as_array()
        .context("cargo metadata lists no packages")?;
    let mut version = "";
    for package in packages {
        let name = package["name"].as_str().unwrap_or_default();
        let published = PUBLISHED.contains(&name);
        // `publish = false` is an empty list of registries.
        let unpublished = package["publish"].as_array().is_some_and(Vec::is_empty);
        ensure!(
            published != unpublished,
            "{name}: {} (xtask/src/dist/crates.rs lists the published crates)",
            if published {
                "published, yet its Cargo.toml says publish = false"
            } else {
                "not published, so its Cargo.toml must say publish = false"
            }
        );
        if published {
            for key in METADATA {
                ensure!(
                    package[key].as_str().is_some_and(|value| !value.is_empty()),
                    "{name} has no {key} in its Cargo.toml"
                );
            }
            version = package["version"].as_str().unwrap_or_default();
        }
    }
    let mut package = Command::new(cargo);
    package
        .args(["package", "--quiet", "--no-verify", "--allow-dirty"])
        .current_dir(workspace);
    for name in PUBLISHED {
        package.args(["--package", name]);
    }
    let status = package.status().context("cannot run cargo package")?;
    if !status.success() {
        bail!("cargo package failed ({status})");
    }
    for name in PUBLISHED {
        let file = workspace
            .join("target")
            .join("package")
            .join(format!("{name}-{version}.crate"));
        let listing = Command::new("tar")
            .arg("-tzf")
            .arg(&file)
            .output()
            .with_context(|| format!("cannot list {}", file.display()))?;
        ensure!(listing.status.success(), "cannot list {}", file.display());
        let listing = String::from_utf8_lossy(&listing.stdout);
        for wanted in FILES {
            let path = format!("{name}-{version}/{wanted}");
            ensure!(
                listing.lines().any(|line| line == path),
                "{} holds no {wanted}",
                file.display()
            );
        }
    }
    Ok(())
}
