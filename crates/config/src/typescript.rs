//! Which TypeScript a `tsc` command belongs to. TypeScript 7 (the native port) serves LSP itself
//! as `tsc --lsp --stdio`; TypeScript 5 and 6 have no such mode (typescript-language-server
//! serves them through their `tsserver.js`, which TypeScript 7 does not ship).

use std::path::Path;

/// The first TypeScript major version whose `tsc` speaks LSP (`--lsp`).
pub const FIRST_WITH_LSP: u32 = 7;

/// Whether a server runs `tsc --lsp`, and so needs TypeScript 7 or newer.
pub fn runs_tsc_lsp(command: &str, args: &[String]) -> bool {
    let name = Path::new(command)
        .file_name()
        .and_then(|name| name.to_str());
    matches!(name, Some("tsc" | "tsc.cmd")) && args.iter().any(|arg| arg == "--lsp")
}

/// The version of the TypeScript package a `tsc` program belongs to (`node_modules/.bin/tsc`
/// links to `typescript/bin/tsc`), from that package's `package.json`.
pub fn version_of(program: &Path) -> Option<String> {
    let program = squiggle_protocol::paths::canonicalize(program).ok()?;
    let package = program.ancestors().nth(2)?.join("package.json");
    let manifest = crate::regular_file::read_regular_file(&package, 1024 * 1024).ok()?;
    let manifest: serde_json::Value = serde_json::from_slice(&manifest).ok()?;
    if manifest["name"] != "typescript" {
        return None;
    }
    manifest["version"].as_str().map(str::to_string)
}

/// The major number of a version (`7.0.2` -> 7).
pub fn major(version: &str) -> Option<u32> {
    version.split('.').next()?.parse().ok()
}

/// Why `program` cannot serve `tsc --lsp`, if it cannot: its TypeScript is older than 7, or
/// its version cannot be told.
pub fn why_not_lsp(program: &Path) -> Option<String> {
    match version_of(program) {
        Some(version) if major(&version).is_some_and(|m| m >= FIRST_WITH_LSP) => None,
        Some(version) => Some(format!(
            "it is TypeScript {version}; `tsc --lsp` needs TypeScript {FIRST_WITH_LSP} or newer"
        )),
        None => {
            Some("it is not part of a TypeScript package whose version can be read".to_string())
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A `node_modules` with `typescript` at `version` and its `.bin/tsc` link.
    fn install(dir: &Path, version: &str) -> std::path::PathBuf {
        let package = dir.join("node_modules/typescript");
        std::fs::create_dir_all(package.join("bin")).unwrap();
        std::fs::write(
            package.join("package.json"),
            format!(r#"{{"name": "typescript", "version": "{version}"}}"#),
        )
        .unwrap();
        std::fs::write(package.join("bin/tsc"), "#!/bin/sh\n").unwrap();
        let bin = dir.join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink("../typescript/bin/tsc", bin.join("tsc")).unwrap();
        bin.join("tsc")
    }

    #[test]
    fn typescript_7_serves_lsp_and_5_does_not() {
        let seven = tempfile::tempdir().unwrap();
        let tsc = install(seven.path(), "7.0.2");
        assert_eq!(version_of(&tsc).as_deref(), Some("7.0.2"));
        assert_eq!(why_not_lsp(&tsc), None);

        let five = tempfile::tempdir().unwrap();
        let tsc = install(five.path(), "5.9.3");
        let why = why_not_lsp(&tsc).unwrap();
        assert!(why.contains("TypeScript 5.9.3"), "{why}");
    }

    #[test]
    fn a_tsc_outside_a_typescript_package_cannot_be_told() {
        let dir = tempfile::tempdir().unwrap();
        let tsc = dir.path().join("tsc");
        std::fs::write(&tsc, "#!/bin/sh\n").unwrap();
        assert!(why_not_lsp(&tsc).is_some());
    }

    #[test]
    fn only_tsc_with_lsp_needs_typescript_7() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(runs_tsc_lsp("tsc", &args(&["--lsp", "--stdio"])));
        assert!(runs_tsc_lsp("/p/node_modules/.bin/tsc", &args(&["--lsp"])));
        assert!(!runs_tsc_lsp("tsc", &args(&["--watch"])));
        assert!(!runs_tsc_lsp(
            "typescript-language-server",
            &args(&["--lsp"])
        ));
    }
}
