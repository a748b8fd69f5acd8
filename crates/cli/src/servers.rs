//! `squiggle status` and `squiggle servers`: which language servers squiggle would use, whether
//! each can run (found, and its version flag works: these commands probe), and why not.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;

use clap::ValueEnum;
use serde_json::{json, Value};
use squiggle_actors::ServerState;
use squiggle_config::{Availability, Config, ServerSpec, Standby};

use crate::workspace::WorkspaceArgs;

/// Arguments of `squiggle status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    workspace: WorkspaceArgs,
    /// List every configured server and file type, not only those of the workspace's files.
    #[arg(long)]
    all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
}

/// Arguments of `squiggle servers`.
#[derive(Debug, clap::Args)]
pub struct ServersArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
}

/// How server lists are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    Text,
    Json,
}

/// Runs `squiggle status`: the workspace root, the configured servers and whether each can
/// run, and which servers each file type goes to.
pub fn status(args: StatusArgs) -> anyhow::Result<u8> {
    let (root, config) = args.workspace.load()?;
    let mut out = std::io::stdout().lock();
    if !config.enabled {
        writeln!(out, "workspace root: {}", root.display())?;
        writeln!(out, "LSP disabled by configuration (lsp = false)")?;
        return Ok(0);
    }
    let availability = probe_all(&config, &root);
    let rows = rows(&config, &availability);
    let runs = |spec: &ServerSpec| {
        availability
            .get(spec.id.as_str())
            .is_some_and(Availability::runs)
    };
    // A check uses the first of a role whose command is found, whether its probe passed or not.
    let starts = |spec: &ServerSpec| {
        availability
            .get(spec.id.as_str())
            .is_some_and(Availability::starts)
    };
    let file_types = file_types(&config, &starts, &runs);
    match args.format {
        ListFormat::Json => {
            let file_types: serde_json::Map<String, Value> = file_types
                .iter()
                .map(|(extension, servers)| {
                    let ids = |used: bool| {
                        servers
                            .iter()
                            .filter(|(_, runs)| *runs == used)
                            .map(|(id, _)| id.clone())
                            .collect::<Vec<_>>()
                    };
                    let entry = json!({"servers": ids(true), "unavailable": ids(false)});
                    (extension.clone(), entry)
                })
                .collect();
            let needs = workspace_needs(&config, &root, &starts, &runs);
            let status = json!({
                "workspace_root": root.display().to_string(),
                "servers": rows_json(&rows),
                "file_types": file_types,
                "workspace": needs.to_json(),
            });
            serde_json::to_writer_pretty(&mut out, &status)?;
            writeln!(out)?;
        }
        ListFormat::Text => {
            writeln!(out, "workspace root: {}\n", root.display())?;
            let needs = workspace_needs(&config, &root, &starts, &runs);
            // What the workspace's files use first; the rest folded into one line.
            let builtin = squiggle_config::builtin_servers();
            let shown = |id: &str| args.all || needs.used.contains(id) || !builtin.contains_key(id);
            let (rows, folded): (Vec<_>, Vec<_>) =
                rows.into_iter().partition(|row| shown(&row.spec.id));
            write_rows(&mut out, &rows)?;
            let file_types: BTreeMap<String, Chosen> = file_types
                .into_iter()
                .filter(|(extension, _)| args.all || needs.file_types.contains(extension))
                .collect();
            if !file_types.is_empty() {
                writeln!(out, "\nfile types:")?;
            }
            for line in file_type_lines(&file_types) {
                write_wrapped(&mut out, &line, 2)?;
            }
            for line in needs.lines() {
                write_wrapped(&mut out, &line, 4)?;
            }
            if !folded.is_empty() {
                let ids: Vec<&str> = folded.iter().map(|row| row.spec.id.as_str()).collect();
                let line = format!("also known (squiggle status --all): {}", ids.join(", "));
                writeln!(out)?;
                write_wrapped(&mut out, &line, 2)?;
            }
        }
    }
    Ok(0)
}

/// Runs `squiggle servers`: the built-in table, and whether each server can run here.
pub fn servers(args: ServersArgs) -> anyhow::Result<u8> {
    let root = std::env::current_dir()?;
    let config = Config::default();
    let availability = probe_all(&config, &root);
    let rows = rows(&config, &availability);
    let mut out = std::io::stdout().lock();
    match args.format {
        ListFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &rows_json(&rows))?;
            writeln!(out)?;
        }
        ListFormat::Text => write_rows(&mut out, &rows)?,
    }
    Ok(0)
}

/// What `lsp/status` says of a server that has not been started: disabled, a fallback that is
/// not needed, unavailable (why, and what replaces it), or ready to start on demand.
/// `starts` says whether a check would start a server (its command is found), which decides
/// which member of a role is used.
pub fn idle_status(
    spec: &ServerSpec,
    config: &Config,
    availability: Option<&Availability>,
    starts: &dyn Fn(&ServerSpec) -> bool,
) -> (ServerState, String) {
    match standing(spec, config, availability, starts) {
        Standing::Disabled => (
            ServerState::Disabled,
            "disabled by configuration".to_string(),
        ),
        Standing::NotNeeded(why) | Standing::NotUsed(why) => (ServerState::Disabled, why),
        Standing::Runs(_) => (
            ServerState::Idle,
            "starts on the first file that needs it".to_string(),
        ),
        Standing::Unavailable(why) => (ServerState::Unavailable, why),
    }
}

/// How a configured server stands here.
enum Standing {
    /// Turned off by configuration.
    Disabled,
    /// A fallback whose primary runs; why.
    NotNeeded(String),
    /// Its command is found and works, but is not the kind it needs (TypeScript 5's `tsc` for
    /// `tsc --lsp`), and its fallback serves instead; why. A choice, not a failure.
    NotUsed(String),
    /// Its command runs; where it is.
    Runs(String),
    /// Its command is missing or does not run; why, with the install hint.
    Unavailable(String),
}

fn standing(
    spec: &ServerSpec,
    config: &Config,
    availability: Option<&Availability>,
    starts: &dyn Fn(&ServerSpec) -> bool,
) -> Standing {
    if !spec.enabled {
        return Standing::Disabled;
    }
    let standby = config.standby(spec, starts);
    if let Some(standby @ Standby::NotNeeded { .. }) = standby {
        return Standing::NotNeeded(standby.to_string());
    }
    let availability = availability.cloned().unwrap_or(Availability::NotFound);
    if let (Availability::CannotRun { path, why }, Some(replaced)) = (&availability, standby) {
        let found = format!("`{}` ({})", spec.command, path.display());
        return Standing::NotUsed(format!("{found}: {why}; {replaced}"));
    }
    match (availability.program(), availability.reason(spec)) {
        (Some(path), _) => Standing::Runs(path.display().to_string()),
        (None, reason) => {
            let reason = reason.unwrap_or_default();
            Standing::Unavailable(match standby {
                Some(replaced) => format!("{reason}; {replaced}"),
                None => reason,
            })
        }
    }
}

/// Each enabled server's command, found and probed, all at once.
fn probe_all<'a>(config: &'a Config, root: &Path) -> HashMap<&'a str, Availability> {
    std::thread::scope(|scope| {
        let probes: Vec<_> = config
            .servers
            .values()
            .filter(|spec| spec.enabled)
            .map(|spec| {
                let probe = scope.spawn(move || Availability::of(spec, root));
                (spec.id.as_str(), probe)
            })
            .collect();
        probes
            .into_iter()
            .map(|(id, probe)| (id, probe.join().unwrap_or(Availability::NotFound)))
            .collect()
    })
}

/// The servers a file type goes to, by id, each with whether its command runs.
type Chosen = Vec<(String, bool)>;

/// One row of a server list.
struct Row<'a> {
    spec: &'a ServerSpec,
    state: &'static str,
    detail: String,
}

fn rows<'a>(config: &'a Config, availability: &HashMap<&str, Availability>) -> Vec<Row<'a>> {
    let starts = |spec: &ServerSpec| {
        availability
            .get(spec.id.as_str())
            .is_some_and(Availability::starts)
    };
    config
        .servers
        .values()
        .map(|spec| {
            let found = availability.get(spec.id.as_str());
            let (state, detail) = match standing(spec, config, found, &starts) {
                Standing::Disabled => ("disabled", "disabled by configuration".to_string()),
                Standing::NotNeeded(why) => ("not needed", why),
                Standing::NotUsed(why) => ("not used", why),
                Standing::Runs(path) => ("installed", path),
                Standing::Unavailable(why) => ("unavailable", why),
            };
            Row {
                spec,
                state,
                detail,
            }
        })
        .collect()
}

fn rows_json(rows: &[Row<'_>]) -> Vec<Value> {
    rows.iter()
        .map(|row| {
            json!({
                "id": row.spec.id,
                "command": row.spec.command,
                "args": row.spec.args,
                "extensions": row.spec.extensions,
                "language": row.spec.language_id,
                "state": row.state,
                "detail": row.detail,
                "install_hint": row.spec.install_hint,
            })
        })
        .collect()
}

/// Lines are wrapped to this many characters (a word longer than that, a path, stays whole).
const WIDTH: usize = 100;

fn write_rows(out: &mut impl Write, rows: &[Row<'_>]) -> std::io::Result<()> {
    let id_width = rows.iter().map(|r| r.spec.id.len()).max().unwrap_or(0);
    for row in rows {
        let extensions = row
            .spec
            .extensions
            .iter()
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(" ");
        let line = format!(
            "{:id_width$}  {:11}  {}  [{}]",
            row.spec.id, row.state, row.detail, extensions
        );
        write_wrapped(out, &line, id_width + 15)?;
    }
    Ok(())
}

/// Writes `line` wrapped at spaces to [`WIDTH`] characters, its later lines indented by
/// `indent` spaces.
fn write_wrapped(out: &mut impl Write, line: &str, indent: usize) -> std::io::Result<()> {
    for part in wrap(line, indent) {
        writeln!(out, "{part}")?;
    }
    Ok(())
}

/// `line` cut at spaces into lines of at most [`WIDTH`] characters where its words allow (a
/// word longer than a line, a path, is not moved to a line of its own), the later ones
/// indented by `indent` spaces; leading spaces (columns) are kept.
fn wrap(line: &str, indent: usize) -> Vec<String> {
    let body = line.trim_start_matches(' ');
    let mut lines = vec![line[..line.len() - body.len()].to_string()];
    let mut fresh = true;
    for word in body.split(' ') {
        let current = lines.last_mut().expect("one line at least");
        let width = current.chars().count();
        let length = word.chars().count();
        // A word too long for any line (a path) stays where it is rather than alone on one.
        if !fresh && width + 1 + length > WIDTH && indent + length <= WIDTH {
            // An empty word is a second space between columns: the break stands for it.
            if !word.is_empty() {
                lines.push(format!("{:indent$}{word}", ""));
            }
            continue;
        }
        if !fresh {
            current.push(' ');
        }
        current.push_str(word);
        fresh = false;
    }
    for line in &mut lines {
        line.truncate(line.trim_end().len());
    }
    lines
}

/// For each extension an enabled server serves, the servers its files go to (the first of each
/// role that `starts`) and whether each runs.
fn file_types(
    config: &Config,
    starts: &dyn Fn(&ServerSpec) -> bool,
    runs: &dyn Fn(&ServerSpec) -> bool,
) -> BTreeMap<String, Chosen> {
    config
        .servers_by_extension(starts)
        .into_iter()
        .map(|(extension, servers)| {
            let servers = servers
                .into_iter()
                .map(|spec| (spec.id.clone(), runs(spec)))
                .collect();
            (extension, servers)
        })
        .collect()
}

/// The most files looked at to learn which file types a workspace holds.
const SAMPLE_FILES: usize = 5000;

/// What the workspace's own files need: the file types found, and the servers they would use
/// that do not run here, with the command that installs each.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WorkspaceNeeds {
    /// The file types found (extensions, or names of files without one), sorted.
    pub file_types: Vec<String>,
    /// The servers its files would use that do not run here, by id, with their install hint.
    pub missing: Vec<(String, String)>,
    /// The enabled servers its files go to, used or standing by (fallbacks), by id.
    pub used: BTreeSet<String>,
    /// Which of the missing servers are optional (configuration-file linters).
    pub optional: BTreeSet<String>,
}

impl WorkspaceNeeds {
    /// The missing servers `squiggle install` can install.
    pub fn installable(&self) -> Vec<String> {
        let installable = squiggle_config::install::installable();
        self.missing
            .iter()
            .filter(|(id, _)| installable.contains(&id.as_str()))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// For each missing server `squiggle install` cannot install, the first built-in that
    /// serves its files in its place (`fallback_for`), is enabled, does not run and can be
    /// installed: `(missing, installable stand-in)` (typescript-native, which needs TypeScript
    /// 7 in the project, is stood in for by typescript-language-server).
    pub fn stand_ins(
        &self,
        config: &Config,
        runs: &dyn Fn(&ServerSpec) -> bool,
    ) -> Vec<(String, String)> {
        let installable = squiggle_config::install::installable();
        self.manual()
            .into_iter()
            .filter_map(|(id, _)| {
                let stand_in = config.servers.values().find(|spec| {
                    spec.fallback_for.as_deref() == Some(id.as_str())
                        && spec.enabled
                        && installable.contains(&spec.id.as_str())
                        && !runs(spec)
                })?;
                Some((id, stand_in.id.clone()))
            })
            .collect()
    }

    /// The missing servers `squiggle install` cannot install, with the command that does.
    pub fn manual(&self) -> Vec<(String, String)> {
        let installable = self.installable();
        self.missing
            .iter()
            .filter(|(id, _)| !installable.contains(id))
            .cloned()
            .collect()
    }

    /// `squiggle install a b` for the installable missing servers, if any.
    fn install_command(&self) -> Option<String> {
        let ids = self.installable();
        (!ids.is_empty()).then(|| format!("squiggle install {}", ids.join(" ")))
    }

    /// The text lines of `squiggle status` for it.
    fn lines(&self) -> Vec<String> {
        let types: Vec<String> = self.file_types.iter().map(|t| format!(".{t}")).collect();
        let mut lines = vec![
            String::new(),
            format!("this workspace's files: {}", types.join(" ")),
        ];
        if self.missing.is_empty() {
            lines.push("every server they need runs".to_string());
            return lines;
        }
        lines.push("missing servers they need:".to_string());
        let name = |id: &str| match self.optional.contains(id) {
            true => format!("{id} (optional)"),
            false => id.to_string(),
        };
        for (id, hint) in self.manual() {
            lines.push(format!("  {}: {hint}", name(&id)));
        }
        if let Some(command) = self.install_command() {
            let installable: Vec<String> = self.installable().iter().map(|id| name(id)).collect();
            lines.push(format!("  {}: {command}", installable.join(", ")));
        }
        lines
    }

    /// The `workspace` member of `squiggle status --format json`.
    fn to_json(&self) -> Value {
        let missing: Vec<Value> = self.missing.iter()
            .map(|(id, hint)| {
                json!({"id": id, "install_hint": hint, "optional": self.optional.contains(id)})
            })
            .collect();
        json!({
            "file_types": self.file_types,
            "missing": missing,
            "install_command": self.install_command(),
        })
    }
}

/// The file types under `root` (sampled) and the servers they would use (the first of each role
/// that `starts`) that do not run.
pub fn workspace_needs(
    config: &Config,
    root: &Path,
    starts: &dyn Fn(&ServerSpec) -> bool,
    runs: &dyn Fn(&ServerSpec) -> bool,
) -> WorkspaceNeeds {
    let mut file_types = BTreeSet::new();
    let mut missing = BTreeMap::new();
    let (mut used, mut optional) = (BTreeSet::new(), BTreeSet::new());
    for file in squiggle_config::sample_files(root, SAMPLE_FILES) {
        let servers = config.servers_for(&file, starts);
        if servers.is_empty() {
            continue;
        }
        let enabled = config.servers_matching(&file).into_iter();
        used.extend(
            enabled
                .filter(|spec| spec.enabled)
                .map(|spec| spec.id.clone()),
        );
        let kind = file.extension().or_else(|| file.file_name());
        if let Some(kind) = kind {
            file_types.insert(kind.to_string_lossy().to_ascii_lowercase());
        }
        for spec in servers.into_iter().filter(|spec| !runs(spec)) {
            missing.insert(spec.id.clone(), spec.install_hint.clone());
            if spec.optional {
                optional.insert(spec.id.clone());
            }
        }
    }
    WorkspaceNeeds {
        file_types: file_types.into_iter().collect(),
        missing: missing.into_iter().collect(),
        used,
        optional,
    }
}

/// One line per group of extensions whose files go to the same servers: `.py .pyi: pyright,
/// ruff`, `.rs: nothing runs (rust-analyzer is unavailable)`.
fn file_type_lines(file_types: &BTreeMap<String, Chosen>) -> Vec<String> {
    let mut groups: Vec<(Vec<&str>, &Chosen)> = Vec::new();
    for (extension, servers) in file_types {
        match groups.iter_mut().find(|(_, same)| *same == servers) {
            Some((extensions, _)) => extensions.push(extension),
            None => groups.push((vec![extension], servers)),
        }
    }
    groups
        .into_iter()
        .map(|(extensions, servers)| {
            let extensions = extensions
                .iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(" ");
            let names = |used: bool| {
                servers
                    .iter()
                    .filter(|(_, runs)| *runs == used)
                    .map(|(id, _)| id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let (used, missing) = (names(true), names(false));
            let verb = if missing.contains(", ") { "are" } else { "is" };
            match (used.is_empty(), missing.is_empty()) {
                (_, true) => format!("{extensions}: {used}"),
                (true, false) => {
                    format!("{extensions}: nothing runs ({missing} {verb} unavailable)")
                }
                (false, false) => format!("{extensions}: {used} ({missing} {verb} unavailable)"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_needs_name_the_install_command() {
        let needs = WorkspaceNeeds {
            file_types: vec!["py".into(), "rs".into(), "yaml".into()],
            missing: vec![
                (
                    "ruff".into(),
                    "squiggle install ruff (or pip install ruff)".into(),
                ),
                (
                    "rust-analyzer".into(),
                    "rustup component add rust-analyzer".into(),
                ),
                ("yaml".into(), "squiggle install yaml (or ...)".into()),
            ],
            used: BTreeSet::new(),
            optional: BTreeSet::from(["yaml".to_string()]),
        };
        assert_eq!(
            needs.lines(),
            [
                "",
                "this workspace's files: .py .rs .yaml",
                "missing servers they need:",
                "  rust-analyzer: rustup component add rust-analyzer",
                "  ruff, yaml (optional): squiggle install ruff yaml",
            ]
        );
        assert_eq!(
            needs.to_json()["install_command"],
            "squiggle install ruff yaml"
        );
    }

    #[test]
    fn a_workspace_with_nothing_missing_says_so() {
        let dir = std::env::temp_dir().join(format!("squiggle-needs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("notes.txt"), "x").expect("write");
        std::fs::write(dir.join("app.py"), "x = 1\n").expect("write");
        let none = workspace_needs(&Config::default(), &dir, &|_| true, &|_| true);
        let all = workspace_needs(&Config::default(), &dir, &|_| false, &|_| false);
        std::fs::remove_dir_all(&dir).expect("clean up");
        assert_eq!(none.file_types, ["py"]);
        assert!(none.missing.is_empty());
        assert_eq!(none.lines()[2], "every server they need runs");
        let ids: Vec<&str> = all.missing.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["pyright", "ruff"]);
        assert_eq!(all.installable(), ["pyright", "ruff"]);
    }

    #[test]
    fn a_type_checker_squiggle_cannot_install_gets_its_installable_stand_in() {
        let dir = std::env::temp_dir().join(format!("squiggle-stand-in-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("app.ts"), "export const x = 1;\n").expect("write");
        let config = Config::default();
        // Nothing runs: typescript-native (TypeScript 7's tsc) is the role's first, and squiggle
        // cannot install it; typescript-language-server serves .ts files in its place.
        let none = workspace_needs(&config, &dir, &|_| false, &|_| false);
        let stand_ins = none.stand_ins(&config, &|_| false);
        // typescript-language-server already runs: nothing to stand in with.
        let running = none.stand_ins(&config, &|spec| spec.id == "typescript");
        std::fs::remove_dir_all(&dir).expect("clean up");
        assert!(
            none.manual()
                .iter()
                .any(|(id, _)| id == "typescript-native"),
            "{:?}",
            none.missing
        );
        assert_eq!(
            stand_ins,
            [("typescript-native".to_string(), "typescript".to_string())]
        );
        assert!(running.is_empty(), "{running:?}");
    }

    fn types(entries: &[(&str, &[(&str, bool)])]) -> BTreeMap<String, Chosen> {
        entries
            .iter()
            .map(|(ext, servers)| {
                let servers = servers
                    .iter()
                    .map(|(id, runs)| (id.to_string(), *runs))
                    .collect();
                (ext.to_string(), servers)
            })
            .collect()
    }

    #[test]
    fn file_types_with_the_same_servers_share_a_line() {
        let lines = file_type_lines(&types(&[
            ("py", &[("pyright", true), ("ruff", true)]),
            ("pyi", &[("pyright", true), ("ruff", true)]),
            ("rs", &[("rust-analyzer", false)]),
            ("ts", &[("eslint", false), ("typescript", true)]),
        ]));
        assert_eq!(
            lines,
            [
                ".py .pyi: pyright, ruff",
                ".rs: nothing runs (rust-analyzer is unavailable)",
                ".ts: typescript (eslint is unavailable)",
            ]
        );
    }

    #[test]
    fn a_not_needed_fallback_is_said_so_not_shown_as_unavailable() {
        let config = Config::default();
        let availability = HashMap::from([
            (
                "pyright",
                Availability::Runs("/bin/pyright-langserver".into()),
            ),
            ("basedpyright", Availability::NotFound),
        ]);
        let rows = rows(&config, &availability);
        let row = rows
            .iter()
            .find(|r| r.spec.id == "basedpyright")
            .map(|r| (r.state, r.detail.as_str()));
        assert_eq!(
            row,
            Some(("not needed", "fallback, not needed: pyright is installed"))
        );
        let runs = |spec: &ServerSpec| spec.id == "pyright";
        let spec = &config.servers["basedpyright"];
        assert_eq!(
            idle_status(spec, &config, availability.get("basedpyright"), &runs),
            (
                ServerState::Disabled,
                "fallback, not needed: pyright is installed".to_string()
            )
        );
    }

    #[test]
    fn a_primary_that_does_not_run_names_its_replacement() {
        let config = Config::default();
        let availability = HashMap::from([
            ("pyright", Availability::NotFound),
            (
                "basedpyright",
                Availability::Runs("/bin/basedpyright-langserver".into()),
            ),
        ]);
        let rows = rows(&config, &availability);
        let pyright = rows
            .iter()
            .find(|r| r.spec.id == "pyright")
            .map(|r| (r.state, r.detail.clone()));
        assert_eq!(
            pyright,
            Some((
                "unavailable",
                "`pyright-langserver` is not installed (install: squiggle install pyright (or npm install -g pyright, or pip install pyright)); basedpyright is used instead".to_string()
            ))
        );
    }

    #[test]
    fn an_older_tsc_replaced_by_its_fallback_is_not_used_not_a_failure() {
        let config = Config::default();
        let why = "it is TypeScript 5.9.3; `tsc --lsp` needs TypeScript 7 or newer".to_string();
        let availability = HashMap::from([
            (
                "typescript-native",
                Availability::CannotRun {
                    path: "/p/node_modules/.bin/tsc".into(),
                    why,
                },
            ),
            (
                "typescript",
                Availability::Runs("/p/node_modules/.bin/typescript-language-server".into()),
            ),
        ]);
        let rows = rows(&config, &availability);
        let row = rows
            .iter()
            .find(|r| r.spec.id == "typescript-native")
            .map(|r| (r.state, r.detail.clone()));
        assert_eq!(
            row,
            Some((
                "not used",
                "`tsc` (/p/node_modules/.bin/tsc): it is TypeScript 5.9.3; `tsc --lsp` needs TypeScript 7 or newer; typescript is used instead".to_string()
            ))
        );
    }

    #[test]
    fn long_lines_wrap_at_spaces_under_their_column() {
        let words = ["word"; 30].join(" ");
        let lines = wrap(&format!("id  state  {words}"), 11);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        assert!(lines[1].starts_with("           word"), "{lines:?}");
        assert_eq!(lines.join(" ").split_whitespace().count(), 32);
        let path = format!("  {}", "/long".repeat(30));
        assert_eq!(
            wrap(&path, 4),
            [path.as_str()],
            "a word longer than a line stays whole"
        );
    }

    #[test]
    fn a_command_that_does_not_run_is_unavailable_with_why() {
        let config = Config::default();
        let why =
            "`rust-analyzer --version` exited with status 1: error: Unknown binary".to_string();
        let availability = HashMap::from([(
            "rust-analyzer",
            Availability::DoesNotRun {
                path: "/home/u/.cargo/bin/rust-analyzer".into(),
                why,
            },
        )]);
        let rows = rows(&config, &availability);
        let row = rows
            .iter()
            .find(|r| r.spec.id == "rust-analyzer")
            .map(|r| (r.state, r.detail.clone()));
        assert_eq!(
            row,
            Some((
                "unavailable",
                "`rust-analyzer` (/home/u/.cargo/bin/rust-analyzer) is found but does not run: `rust-analyzer --version` exited with status 1: error: Unknown binary (install: rustup component add rust-analyzer)".to_string()
            ))
        );
    }
}
