//! Whether a server's command can run here: found on disk (a file lookup, what a check goes by),
//! and (for commands with a known version flag, what `squiggle status` adds) running it briefly
//! succeeds.

use std::path::{Path, PathBuf};

use crate::locate::locate_command;
use crate::probe::{probe, version_args, PROBE_LIMIT};
use crate::spec::ServerSpec;
use crate::typescript;

/// Whether a server's command can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Found, and it runs (or it has no version flag to tell otherwise).
    Runs(PathBuf),
    /// Not found at the path given, in the project's `node_modules/.bin`, or on `PATH`.
    NotFound,
    /// Found, but it cannot serve, as its files tell without running it (a `tsc` older than
    /// TypeScript 7 for `tsc --lsp`).
    CannotRun {
        /// Where it was found.
        path: PathBuf,
        /// Why it cannot serve.
        why: String,
    },
    /// Found, but its version flag fails (rustup's proxy without the component, a broken shim):
    /// known only by probing. A check still starts it, and reports it broken with its output.
    DoesNotRun {
        /// Where it was found.
        path: PathBuf,
        /// What running its version flag said.
        why: String,
    },
}

impl Availability {
    /// Finds a server's command and, when it has a known version flag, runs that briefly in
    /// `workspace_root` with the server's environment. Blocking: it may take up to a few seconds.
    pub fn of(spec: &ServerSpec, workspace_root: &Path) -> Self {
        Self::found(spec, workspace_root).probed(spec, workspace_root)
    }

    /// Finds a server's command without running anything: where it is (the project's
    /// `node_modules/.bin`, `PATH`, the folders `squiggle install` fills), and for `tsc --lsp`
    /// whether its TypeScript package is 7 or newer. `Runs` here means "found, start it".
    /// Blocking, but only file lookups.
    pub fn found(spec: &ServerSpec, workspace_root: &Path) -> Self {
        let installed = crate::install::data_dir()
            .map(|data| crate::install::bin_dirs(&data))
            .unwrap_or_default();
        let Some(path) = find(&spec.command, workspace_root, &installed) else {
            return Availability::NotFound;
        };
        if typescript::runs_tsc_lsp(&spec.command, &spec.args) {
            if let Some(why) = typescript::why_not_lsp(&path) {
                return Availability::CannotRun { path, why };
            }
        }
        Availability::Runs(path)
    }

    /// A command [`Availability::found`] found, probed: when it has a known version flag, that
    /// is run briefly in `workspace_root` with the server's environment. Blocking: it may take
    /// up to a few seconds.
    pub fn probed(self, spec: &ServerSpec, workspace_root: &Path) -> Self {
        let Availability::Runs(path) = self else {
            return self;
        };
        let Some(args) = version_args(&spec.command) else {
            return Availability::Runs(path);
        };
        match probe(&path, args, &spec.env, workspace_root, PROBE_LIMIT) {
            Ok(()) => Availability::Runs(path),
            Err(why) => Availability::DoesNotRun { path, why },
        }
    }

    /// Whether the command runs.
    pub fn runs(&self) -> bool {
        matches!(self, Availability::Runs(_))
    }

    /// Whether a check starts it: found, and not known to be unable to serve without running
    /// it (one whose version flag fails is still started, and then reported broken).
    pub fn starts(&self) -> bool {
        matches!(
            self,
            Availability::Runs(_) | Availability::DoesNotRun { .. }
        )
    }

    /// The program to run, if it runs.
    pub fn program(&self) -> Option<&Path> {
        match self {
            Availability::Runs(path) => Some(path),
            _ => None,
        }
    }

    /// Why the server cannot run, with the command that installs it; None when it runs.
    pub fn reason(&self, spec: &ServerSpec) -> Option<String> {
        match self {
            Availability::Runs(_) => None,
            Availability::NotFound => Some(spec.not_installed()),
            // Found, and it works, but it is not the kind this server needs (TypeScript 5's
            // `tsc` for `tsc --lsp`): not a failure of it, so not "does not run".
            Availability::CannotRun { path, why } => Some(format!(
                "`{}` ({}): {why} (install: {})",
                spec.command,
                path.display(),
                spec.install_hint
            )),
            Availability::DoesNotRun { path, why } => Some(format!(
                "`{}` ({}) is found but does not run: {why} (install: {})",
                spec.command,
                path.display(),
                spec.install_hint
            )),
        }
    }
}

/// `judge` (of a server, in `workspace_root`) asked once per server, however many files ask:
/// `each_server_once(root, |spec, root| Availability::found(spec, root).starts())` is whether a
/// check would start each server (file lookups only).
pub fn each_server_once<'a>(
    workspace_root: &'a Path,
    judge: impl Fn(&ServerSpec, &Path) -> bool + 'a,
) -> impl Fn(&ServerSpec) -> bool + 'a {
    let known = std::cell::RefCell::new(std::collections::HashMap::new());
    move |spec| {
        *(known.borrow_mut().entry(spec.id.clone())).or_insert_with(|| judge(spec, workspace_root))
    }
}

/// Finds a command where [`locate_command`] looks (the project's `node_modules/.bin`, then
/// `PATH`), then in the folders `squiggle install` fills (`installed`), last: what a project or
/// the user installed comes first.
fn find(command: &str, workspace_root: &Path, installed: &[PathBuf]) -> Option<PathBuf> {
    locate_command(command, workspace_root, &[]).or_else(|| {
        let bare = !command.contains('/') && !command.contains(std::path::MAIN_SEPARATOR);
        let found = crate::locate::locate_command_in(command, workspace_root, installed, None);
        found.filter(|path| bare && installed.iter().any(|dir| path.starts_with(dir)))
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::builtin::builtin_servers;
    use std::os::unix::fs::PermissionsExt;

    fn spec(id: &str) -> ServerSpec {
        builtin_servers().remove(id).expect("built in")
    }

    fn tool(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    #[test]
    fn a_missing_command_is_not_found_with_its_install_hint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = spec("rust-analyzer");
        spec.command = dir.path().join("rust-analyzer").display().to_string();
        let availability = Availability::of(&spec, dir.path());
        assert_eq!(availability, Availability::NotFound);
        assert_eq!(
            availability.reason(&spec).unwrap_or_default(),
            format!(
                "`{}` is not installed (install: rustup component add rust-analyzer)",
                spec.command
            )
        );
    }

    #[test]
    fn a_proxy_without_its_component_cannot_run_and_says_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        let proxy = tool(
            dir.path(),
            "rust-analyzer",
            "echo \"error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.\" >&2; exit 1",
        );
        let mut spec = spec("rust-analyzer");
        spec.command = proxy.display().to_string();
        assert_eq!(
            Availability::found(&spec, dir.path()),
            Availability::Runs(proxy.clone()),
            "found without running it"
        );
        let availability = Availability::of(&spec, dir.path());
        assert!(!availability.runs());
        assert!(
            availability.starts(),
            "a check starts it, and reports it broken"
        );
        assert_eq!(availability.program(), None);
        assert_eq!(
            availability.reason(&spec).unwrap_or_default(),
            format!(
                "`{0}` ({0}) is found but does not run: `rust-analyzer --version` exited with status 1: error: Unknown binary 'rust-analyzer' in official toolchain 'stable'. (install: rustup component add rust-analyzer)",
                proxy.display()
            )
        );
    }

    #[test]
    fn a_command_installed_by_squiggle_is_found_after_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("data/venv/bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        let ruff = tool(&bin, "squiggle-test-only-ruff", "echo ruff 0.1");
        let installed = [bin.clone()];
        assert_eq!(
            find("squiggle-test-only-ruff", dir.path(), &installed),
            Some(ruff)
        );
        assert_eq!(find("squiggle-test-only-ruff", dir.path(), &[]), None);
        assert_eq!(find("no-such-server", dir.path(), &installed), None);
    }

    #[test]
    fn a_working_command_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ruff = tool(dir.path(), "ruff", "echo ruff 0.1");
        let mut spec = spec("ruff");
        spec.command = ruff.display().to_string();
        assert_eq!(
            Availability::of(&spec, dir.path()),
            Availability::Runs(ruff)
        );
    }

    #[test]
    fn finding_a_command_never_runs_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("ran");
        let ruff = tool(
            dir.path(),
            "ruff",
            &format!("touch {}; exit 1", marker.display()),
        );
        let mut spec = spec("ruff");
        spec.command = ruff.display().to_string();
        assert_eq!(
            Availability::found(&spec, dir.path()),
            Availability::Runs(ruff)
        );
        assert!(!marker.exists(), "not run");
    }

    #[test]
    fn a_command_without_a_version_flag_is_not_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("ran");
        let pyright = tool(
            dir.path(),
            "pyright-langserver",
            &format!("touch {}; exit 1", marker.display()),
        );
        let mut spec = spec("pyright");
        spec.command = pyright.display().to_string();
        assert_eq!(
            Availability::of(&spec, dir.path()),
            Availability::Runs(pyright)
        );
        assert!(!marker.exists(), "not run");
    }
}
