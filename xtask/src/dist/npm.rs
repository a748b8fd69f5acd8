//! The npm packages, in the shape biome ships: the launcher `@squiggle-dev/squiggle`, whose
//! `squiggle` command (`packaging/npm/squiggle.js`) runs the binary of the platform package npm
//! installed beside it, with one optional dependency per platform; and one platform package per
//! binary, holding only that binary, limited by its `os`, `cpu` and `libc` fields to the
//! machines it runs on. Each is staged under `OUT/stage/` and packed with `npm pack` into `OUT`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::targets::{Target, LAUNCHER, TARGETS};

/// What the packages say about themselves on npm.
const DESCRIPTION: &str = "Language-server diagnostics and navigation for coding agents";

/// The repository, as npm's `repository` field.
fn repository() -> Value {
    json!({
        "type": "git",
        "url": "git+https://github.com/squiggle-dev/squiggle.git"
    })
}

/// The launcher's package.json: every platform package at `version` as an optional dependency
/// (npm installs the one whose os, cpu and libc match).
pub fn launcher_manifest(version: &str) -> Value {
    let platforms: serde_json::Map<String, Value> = TARGETS
        .iter()
        .map(|target| (target.package(), json!(version)))
        .collect();
    json!({
        "name": LAUNCHER,
        "version": version,
        "description": DESCRIPTION,
        "license": "MIT OR Apache-2.0",
        "repository": repository(),
        "homepage": "https://github.com/squiggle-dev/squiggle",
        "keywords": ["lsp", "diagnostics", "language-server", "agents", "mcp"],
        "bin": { "squiggle": "bin/squiggle.js" },
        "files": ["bin", "LICENSE-MIT", "LICENSE-APACHE"],
        "engines": { "node": ">=18" },
        "optionalDependencies": platforms,
        "publishConfig": { "access": "public" },
    })
}

/// A platform package's package.json.
pub fn platform_manifest(target: &Target, version: &str) -> Value {
    let mut manifest = json!({
        "name": target.package(),
        "version": version,
        "description": format!("The squiggle binary for {}; install {LAUNCHER}", target.title),
        "license": "MIT OR Apache-2.0",
        "repository": repository(),
        "homepage": "https://github.com/squiggle-dev/squiggle",
        "os": [target.os],
        "cpu": [target.cpu],
        "files": [target.binary(), "LICENSE-MIT", "LICENSE-APACHE"],
        "preferUnplugged": true,
        "publishConfig": { "access": "public" },
    });
    if let Some(libc) = target.libc {
        manifest["libc"] = json!([libc]);
    }
    manifest
}

/// Stages and packs the launcher and one platform package per `(target, binary)` into `out`,
/// in place of the tarballs there; returns them, the launcher's first.
pub fn pack(
    workspace: &Path,
    out: &Path,
    version: &str,
    binaries: &[(&Target, PathBuf)],
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    // Only these tarballs stay beside the stage.
    super::remove_files(out, "tgz")?;
    let stage = out.join("stage");
    if stage.exists() {
        std::fs::remove_dir_all(&stage)
            .with_context(|| format!("cannot clear {}", stage.display()))?;
    }
    let packaging = workspace.join("packaging");
    let launcher = stage.join("squiggle");
    std::fs::create_dir_all(launcher.join("bin"))?;
    write_manifest(&launcher, &launcher_manifest(version))?;
    copy_executable(
        &packaging.join("npm").join("squiggle.js"),
        &launcher.join("bin").join("squiggle.js"),
    )?;
    copy(&packaging.join("README.md"), &launcher.join("README.md"))?;
    copy_licences(workspace, &launcher)?;
    let mut folders = vec![launcher];
    for (target, binary) in binaries {
        let folder = stage.join(format!("cli-{}", target.rust));
        std::fs::create_dir_all(&folder)?;
        write_manifest(&folder, &platform_manifest(target, version))?;
        copy_executable(binary, &folder.join(target.binary()))?;
        std::fs::write(
            folder.join("README.md"),
            format!(
                "# {}\n\nThe squiggle binary for {}. Install {LAUNCHER}, which runs it.\n",
                target.package(),
                target.title
            ),
        )?;
        copy_licences(workspace, &folder)?;
        folders.push(folder);
    }
    folders.iter().map(|folder| npm_pack(folder, out)).collect()
}

fn write_manifest(folder: &Path, manifest: &Value) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(manifest)? + "\n";
    std::fs::write(folder.join("package.json"), text)
        .with_context(|| format!("cannot write {}", folder.join("package.json").display()))
}

fn copy(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    Ok(())
}

/// Copies `from` to `to` with mode 0755, which `npm pack` keeps.
fn copy_executable(from: &Path, to: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    copy(from, to)?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

fn copy_licences(workspace: &Path, folder: &Path) -> anyhow::Result<()> {
    for name in ["LICENSE-MIT", "LICENSE-APACHE"] {
        copy(&workspace.join(name), &folder.join(name))?;
    }
    Ok(())
}

/// `npm pack` of `folder` into `out`; returns the tarball.
fn npm_pack(folder: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let output = Command::new("npm")
        .args(["pack", "--json", "--loglevel=error", "--pack-destination"])
        .arg(out)
        .current_dir(folder)
        .output()
        .context("cannot run npm (install Node.js 18 or newer)")?;
    if !output.status.success() {
        bail!(
            "npm pack in {} failed ({}): {}",
            folder.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let report: Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("npm pack printed no JSON in {}", folder.display()))?;
    let name = report[0]["filename"]
        .as_str()
        .context("npm pack named no tarball")?;
    Ok(out.join(name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::dist::targets::find;

    #[test]
    fn the_launcher_depends_on_every_platform_package_at_its_version() {
        let manifest = launcher_manifest("1.2.3");
        assert_eq!(manifest["name"], "@squiggle-dev/squiggle");
        assert_eq!(manifest["bin"]["squiggle"], "bin/squiggle.js");
        let platforms = manifest["optionalDependencies"].as_object().unwrap();
        assert_eq!(platforms.len(), TARGETS.len());
        for target in TARGETS {
            assert_eq!(platforms[&target.package()], "1.2.3");
        }
    }

    #[test]
    fn a_platform_package_is_limited_to_its_os_cpu_and_libc() {
        let linux = platform_manifest(find("aarch64-unknown-linux-musl").unwrap(), "1.2.3");
        assert_eq!(linux["name"], "@squiggle-dev/cli-linux-arm64-musl");
        assert_eq!(linux["os"], json!(["linux"]));
        assert_eq!(linux["cpu"], json!(["arm64"]));
        assert_eq!(linux["libc"], json!(["musl"]));
        assert_eq!(
            linux["files"],
            json!(["squiggle", "LICENSE-MIT", "LICENSE-APACHE"])
        );
        let mac = platform_manifest(find("x86_64-apple-darwin").unwrap(), "1.2.3");
        assert_eq!(mac["os"], json!(["darwin"]));
        assert_eq!(mac["cpu"], json!(["x64"]));
        assert!(mac.get("libc").is_none());
        let windows = platform_manifest(find("aarch64-pc-windows-msvc").unwrap(), "1.2.3");
        assert_eq!(windows["name"], "@squiggle-dev/cli-win32-arm64");
        assert_eq!(windows["os"], json!(["win32"]));
        assert_eq!(
            windows["files"],
            json!(["squiggle.exe", "LICENSE-MIT", "LICENSE-APACHE"])
        );
    }
}
