//! Fresh copies of the test fixtures (`tests/fixtures/<name>`) for the benchmark to work in, so
//! that nothing a server or squiggle writes lands in the source tree.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Copies `tests/fixtures/<name>` to `dest` (replacing what was there) with a `squiggle.toml`
/// that turns the built-in servers in `disable` off; returns the copy's canonical path.
pub fn copy(
    workspace: &Path,
    name: &str,
    dest: &Path,
    disable: &[String],
) -> anyhow::Result<PathBuf> {
    let source = workspace.join("tests/fixtures").join(name);
    if dest.exists() {
        std::fs::remove_dir_all(dest)
            .with_context(|| format!("cannot clear {}", dest.display()))?;
    }
    copy_dir(&source, dest)?;
    std::fs::write(dest.join("squiggle.toml"), turned_off(disable))?;
    Ok(std::fs::canonicalize(dest)?)
}

/// Writes a benchmark workspace's `squiggle.toml`, trusted as written in this user's trust
/// record (its servers are the benchmark's own, run as `squiggle trust` would allow them).
pub fn write_config(root: &Path, text: &str) -> anyhow::Result<()> {
    let file = root.join("squiggle.toml");
    std::fs::write(&file, text)?;
    let record = squiggle_config::TrustRecord::of_this_user()
        .context("neither XDG_CONFIG_HOME nor HOME is set: no trust record for the benchmark's configuration")?;
    record
        .trust(&file, text.as_bytes())
        .with_context(|| format!("cannot trust {}", file.display()))
}

/// Introduces an error in `file`: its one `find` replaced by `replace`.
pub fn seed(file: &Path, (find, replace): (&str, &str)) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file)?;
    anyhow::ensure!(
        text.matches(find).count() == 1,
        "the seed is not once in {}",
        file.display()
    );
    std::fs::write(file, text.replacen(find, replace, 1))?;
    Ok(())
}

/// The configuration that turns these servers off.
pub fn turned_off(ids: &[String]) -> String {
    ids.iter()
        .map(|id| format!("[servers.{id}]\nenabled = false\n"))
        .collect()
}

/// Every built-in server but `keep`: turned off, so squiggle waits for `keep` alone (a role's
/// fallbacks would otherwise step in for the ones turned off).
pub fn builtins_but(keep: &str) -> Vec<String> {
    (squiggle_config::builtin_servers().into_keys())
        .filter(|id| id != keep)
        .collect()
}

/// Makes the copy at `root` a project of the TypeScript installed at `node_modules` (its
/// `node_modules` a link to that folder), as `npm install` would have.
pub fn link_modules(root: &Path, node_modules: &Path) -> anyhow::Result<()> {
    std::os::unix::fs::symlink(node_modules, root.join("node_modules"))
        .with_context(|| format!("cannot link {}/node_modules", root.display()))
}

/// Copies a folder's files and subfolders (also the rust-analyzer source to build).
pub(crate) fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_holds_the_fixture_and_a_config_turning_servers_off() -> anyhow::Result<()> {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .context("no workspace")?;
        let dest =
            std::env::temp_dir().join(format!("squiggle-bench-fixture-{}", std::process::id()));
        let first = copy(
            workspace,
            "python",
            &dest,
            &["ruff".into(), "basedpyright".into()],
        )?;
        assert!(first.join("orders.py").is_file());
        assert_eq!(
            std::fs::read_to_string(first.join("squiggle.toml"))?,
            "[servers.ruff]\nenabled = false\n[servers.basedpyright]\nenabled = false\n"
        );
        // A second copy replaces the first.
        std::fs::write(first.join("stray.py"), "x = 1\n")?;
        let again = copy(workspace, "python", &dest, &[])?;
        assert!(!again.join("stray.py").exists());
        // A linked node_modules goes with the copy it is in, not with what it links to.
        let modules =
            std::env::temp_dir().join(format!("squiggle-bench-modules-{}", std::process::id()));
        std::fs::create_dir_all(modules.join("typescript"))?;
        link_modules(&again, &modules)?;
        assert!(again.join("node_modules/typescript").is_dir());
        copy(workspace, "python", &dest, &[])?;
        assert!(!dest.join("node_modules").exists());
        assert!(modules.join("typescript").is_dir());
        std::fs::remove_dir_all(&modules)?;
        std::fs::remove_dir_all(&dest)?;
        Ok(())
    }
}
