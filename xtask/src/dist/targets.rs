//! The platforms squiggle ships packages for: the Rust target each is built for and its npm
//! platform package, with the `os`, `cpu` and `libc` values npm matches against the machine.
//! `cargo xtask dist` builds the one it runs on; `.github/workflows/release.yml` builds them all.

use std::process::Command;

use anyhow::{bail, Context};

/// The npm scope every package is published under.
pub const SCOPE: &str = "@squiggle-dev";

/// The npm package people install: the launcher (`packaging/npm/squiggle.js`).
pub const LAUNCHER: &str = "@squiggle-dev/squiggle";

/// The PyPI distribution (`pyproject.toml`; `squiggle` itself is taken on PyPI).
pub const PYPI: &str = "squiggle-lsp";

/// One platform squiggle ships a binary for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The Rust target triple it is built for.
    pub rust: &'static str,
    /// Node's `process.platform` there, npm's `os` field.
    pub os: &'static str,
    /// Node's `process.arch` there, npm's `cpu` field.
    pub cpu: &'static str,
    /// npm's `libc` field on Linux (`glibc` or `musl`).
    pub libc: Option<&'static str>,
    /// How the package describes it.
    pub title: &'static str,
    /// The platform tag of a wheel packed around a binary built elsewhere (`dist --binary`):
    /// `linux_*` rather than manylinux, since that binary's glibc need is not checked (pip
    /// installs it; PyPI takes only the release's maturin wheels).
    pub local_wheel_tag: &'static str,
}

/// Every platform the release builds, in the order the launcher lists them.
pub const TARGETS: &[Target] = &[
    Target {
        rust: "x86_64-unknown-linux-gnu",
        os: "linux",
        cpu: "x64",
        libc: Some("glibc"),
        title: "Linux x64 (glibc)",
        local_wheel_tag: "linux_x86_64",
    },
    Target {
        rust: "x86_64-unknown-linux-musl",
        os: "linux",
        cpu: "x64",
        libc: Some("musl"),
        title: "Linux x64 (musl)",
        local_wheel_tag: "musllinux_1_2_x86_64",
    },
    Target {
        rust: "aarch64-unknown-linux-gnu",
        os: "linux",
        cpu: "arm64",
        libc: Some("glibc"),
        title: "Linux arm64 (glibc)",
        local_wheel_tag: "linux_aarch64",
    },
    Target {
        rust: "aarch64-unknown-linux-musl",
        os: "linux",
        cpu: "arm64",
        libc: Some("musl"),
        title: "Linux arm64 (musl)",
        local_wheel_tag: "musllinux_1_2_aarch64",
    },
    Target {
        rust: "x86_64-apple-darwin",
        os: "darwin",
        cpu: "x64",
        libc: None,
        title: "macOS x64",
        local_wheel_tag: "macosx_10_12_x86_64",
    },
    Target {
        rust: "aarch64-apple-darwin",
        os: "darwin",
        cpu: "arm64",
        libc: None,
        title: "macOS arm64",
        local_wheel_tag: "macosx_11_0_arm64",
    },
    // No daemon there yet: every check runs in the calling process (docs/install.md).
    Target {
        rust: "x86_64-pc-windows-msvc",
        os: "win32",
        cpu: "x64",
        libc: None,
        title: "Windows x64",
        local_wheel_tag: "win_amd64",
    },
    Target {
        rust: "aarch64-pc-windows-msvc",
        os: "win32",
        cpu: "arm64",
        libc: None,
        title: "Windows arm64",
        local_wheel_tag: "win_arm64",
    },
];

impl Target {
    /// Its npm package, named the way the launcher derives it from `process.platform`,
    /// `process.arch` and the C library: `@squiggle-dev/cli-linux-x64-musl`.
    pub fn package(&self) -> String {
        let musl = if self.libc == Some("musl") {
            "-musl"
        } else {
            ""
        };
        format!("{SCOPE}/cli-{}-{}{musl}", self.os, self.cpu)
    }

    /// The binary's file name there (the launcher picks the same one).
    pub fn binary(&self) -> &'static str {
        if self.os == "win32" {
            "squiggle.exe"
        } else {
            "squiggle"
        }
    }
}

/// The target named `rust`, if squiggle ships for it.
pub fn find(rust: &str) -> anyhow::Result<&'static Target> {
    if let Some(target) = TARGETS.iter().find(|target| target.rust == rust) {
        return Ok(target);
    }
    bail!(
        "squiggle ships no package for {rust} (the targets are: {})",
        TARGETS
            .iter()
            .map(|target| target.rust)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The target of this machine's Rust toolchain (`rustc -vV`'s host).
pub fn host() -> anyhow::Result<&'static Target> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("cannot run rustc -vV")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let host = text
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .context("rustc -vV names no host")?;
    find(host.trim())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn package_names_follow_the_launchers_rule() {
        let names: Vec<_> = TARGETS.iter().map(Target::package).collect();
        assert_eq!(
            names,
            [
                "@squiggle-dev/cli-linux-x64",
                "@squiggle-dev/cli-linux-x64-musl",
                "@squiggle-dev/cli-linux-arm64",
                "@squiggle-dev/cli-linux-arm64-musl",
                "@squiggle-dev/cli-darwin-x64",
                "@squiggle-dev/cli-darwin-arm64",
                "@squiggle-dev/cli-win32-x64",
                "@squiggle-dev/cli-win32-arm64",
            ]
        );
        // The launcher builds the same name from Node's platform, arch and C library.
        let launcher = include_str!("../../../packaging/npm/squiggle.js");
        assert!(launcher.contains("`@squiggle-dev/cli-${process.platform}-${process.arch}${libc}`"));
        assert!(launcher.contains("\"-musl\""));
        // And the binary's name: squiggle.exe on Windows only.
        assert!(launcher.contains(r#"process.platform === "win32" ? "squiggle.exe" : "squiggle""#));
        let exe: Vec<_> = TARGETS.iter().map(|t| (t.os, t.binary())).collect();
        assert!(exe
            .iter()
            .all(|(os, binary)| (*os == "win32") == binary.ends_with(".exe")));
    }

    #[test]
    fn finds_a_target_and_refuses_an_unknown_one() {
        assert_eq!(find("aarch64-apple-darwin").unwrap().title, "macOS arm64");
        assert_eq!(
            find("x86_64-pc-windows-msvc").unwrap().package(),
            "@squiggle-dev/cli-win32-x64"
        );
        let err = find("riscv64gc-unknown-linux-gnu").unwrap_err().to_string();
        assert!(
            err.contains("no package for riscv64gc-unknown-linux-gnu"),
            "{err}"
        );
    }

    #[test]
    fn the_release_workflow_builds_every_target() {
        let workflow = include_str!("../../../.github/workflows/release.yml");
        for target in TARGETS {
            assert!(
                workflow.contains(target.rust),
                "release.yml does not build {}",
                target.rust
            );
        }
    }
}
