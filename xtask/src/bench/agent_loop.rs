//! The agent loop against the build: on real projects, seeded random edits of the kinds agents
//! make (`agent_loop/edits`), each written to the project and told to `squiggle hook
//! claude-code` on a warm daemon as Claude Code tells it (with `originalFile`), then reverted
//! and told again. The oracle is the project's batch checker on the same tree
//! (`agent_loop/oracle`); what the model read is parsed from the hook's answer
//! (`agent_loop/block`).
//!
//! Per project: edited-file hits (every error the checker reports in the edited file was in
//! the block, or the block was cut by its cap), partial, false clean, false or stale errors (an
//! error the checker does not have), stale after the revert, the other files the edit broke
//! (new errors there per the checker) and how many the block named, other files blamed wrongly,
//! and the hook's latency. `cargo xtask test` runs 3 edits per project and fails on any false
//! clean, partial answer, false or stale error or file blamed wrongly; the benchmark also holds
//! the broken files named to 90%.

mod block;
mod edits;
mod oracle;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::stats::Stats;
pub use edits::KINDS;
use edits::{Kind, Lang};
pub use oracle::Checker;

/// The most one hook call may take before the loop gives up on it (a cold start on a busy
/// machine included).
const HOOK_LIMIT: Duration = Duration::from_secs(180);

/// A project of the loop.
#[derive(Debug, Clone)]
pub struct Project {
    /// How the report names it.
    pub label: String,
    /// The fixture under `tests/fixtures`.
    pub fixture: &'static str,
    /// The built-in server kept (every other is turned off, so the answer is its alone).
    pub server: &'static str,
    /// The language edited.
    pub lang: Lang,
    /// The folder (relative to the project) whose files are edited.
    pub sources: &'static str,
    /// The batch checker.
    pub checker: Checker,
    /// The `node_modules` the copy links to (TypeScript 7), if any.
    pub modules: Option<PathBuf>,
}

/// What the loop saw on one project.
#[derive(Debug, Default)]
pub struct Tally {
    /// Edits made (each also reverted).
    pub edits: usize,
    /// Edits whose file the hook said was not checked.
    pub not_checked: usize,
    /// Edits after which every error the checker reports in the file was in the block.
    pub hits: usize,
    /// Edits after which the checker and the block agreed the file is clean.
    pub clean: usize,
    /// Edits after which the block held some of the file's errors but not all (uncapped).
    pub partial: usize,
    /// Edits after which the block held none of the file's errors.
    pub false_clean: usize,
    /// Edits after which the block held an error the checker does not report in the file.
    pub false_errors: usize,
    /// Reverts after which the block held an error the checker does not report.
    pub stale_after_revert: usize,
    /// Reverts whose file the hook said was not checked.
    pub reverts_not_checked: usize,
    /// Other files with new errors per the checker, over the edits whose file was checked.
    pub broken_files: usize,
    /// Of those, the files the block named (the edit hook's or the later hook's).
    pub named_files: usize,
    /// Of those, the files only the later hook named (`--later`, after the edit hook's answer).
    pub named_later: usize,
    /// Of those, the files neither named nor covered by a line saying importers were not
    /// checked: missed in silence.
    pub missed_silently: usize,
    /// Edits whose answer said files that import the edited one were not checked.
    pub unsearched: usize,
    /// Other files the block named with errors the checker does not call new.
    pub blamed_wrongly: usize,
    /// The hook calls, the edits' and the reverts'.
    pub latency: Vec<Duration>,
    /// The later hook's calls, from their start (with the edit hook's) to their end.
    pub later_latency: Vec<Duration>,
    /// What went wrong, edit by edit.
    pub misses: Vec<Value>,
}

impl Tally {
    /// The share of broken other files the block named (1 when none broke).
    pub fn named_share(&self) -> f64 {
        match self.broken_files {
            0 => 1.0,
            broken => self.named_files as f64 / broken as f64,
        }
    }

    /// The report's row.
    pub fn row(&self, label: &str, variant: &str) -> Value {
        let stats = Stats::of(&self.latency);
        let later = Stats::of(&self.later_latency);
        json!({
            "project": label,
            "variant": variant,
            "edits": self.edits,
            "hits": self.hits,
            "clean": self.clean,
            "partial": self.partial,
            "false_clean": self.false_clean,
            "false_or_stale_errors": self.false_errors,
            "not_checked": self.not_checked,
            "stale_after_revert": self.stale_after_revert,
            "reverts_not_checked": self.reverts_not_checked,
            "other_files_broken": self.broken_files,
            "other_files_named": self.named_files,
            "other_files_named_later": self.named_later,
            "other_files_missed_silently": self.missed_silently,
            "edits_saying_importers_unchecked": self.unsearched,
            "other_files_blamed_wrongly": self.blamed_wrongly,
            "hook_median_ms": stats.median_ms,
            "hook_p90_ms": stats.p90_ms,
            "later_hook_median_ms": later.median_ms,
            "later_hook_p90_ms": later.p90_ms,
            "misses": self.misses,
        })
    }

    /// What the block got wrong, if anything: a false clean, a partial answer, a false or
    /// stale error, a file blamed wrongly (what `cargo xtask test` fails on).
    pub fn untruths(&self) -> Vec<String> {
        let mut failures = self.failures();
        failures.retain(|failure| !failure.contains("broken other files named"));
        failures
    }

    /// What breaks the loop's targets, if anything: [`Tally::untruths`], and fewer than 90% of
    /// the broken other files named.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        let counts = [
            (self.false_clean, "false cleans"),
            (self.partial, "partial answers"),
            (self.false_errors, "edits with false or stale errors"),
            (self.stale_after_revert, "stale answers after a revert"),
            (self.blamed_wrongly, "other files blamed wrongly"),
        ];
        for (count, what) in counts {
            if count > 0 {
                failures.push(format!("{count} {what}"));
            }
        }
        if self.named_share() < 0.9 {
            failures.push(format!(
                "{} of {} broken other files named (under 90%)",
                self.named_files, self.broken_files
            ));
        }
        failures
    }
}

/// How a loop runs: how many edits, of which kinds (cycled), from which seed, and whether the
/// other-files search is on (off: the copy's `max_dependent_files` is 0, the edited file
/// alone, for comparison).
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// How many edits.
    pub count: usize,
    /// The kinds, in turn.
    pub kinds: &'a [Kind],
    /// The generator's seed.
    pub seed: u64,
    /// Whether the other-files search is on.
    pub dependents: bool,
    /// Which hooks tell the model what an edit broke elsewhere.
    pub door: Door,
}

/// Which hooks an edit runs, and so where what the daemon found after its answer reaches the
/// model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// The Claude Code plugin's: the edit hook, and the background hook beside it.
    ClaudeCode,
    /// The plain edit hook alone (Gemini CLI's, and what `check --scope edit`, serve and MCP
    /// answer): what the daemon found comes with the next answer, here a hook on the edited
    /// file that changes nothing, after an agent's think time ([`THINK`]).
    NextAnswer,
}

impl Door {
    /// [`Door::NextAnswer`] when `next_answer`, else [`Door::ClaudeCode`].
    pub fn of(next_answer: bool) -> Self {
        match next_answer {
            true => Door::NextAnswer,
            false => Door::ClaudeCode,
        }
    }
}

/// How long an agent thinks between a tool's answer and its next call, for [`Door::NextAnswer`]
/// (models take seconds; the daemon's search after an answer stops when the next call comes).
const THINK: Duration = Duration::from_secs(10);

/// The regression's edits: the kinds that break other files first.
pub const REGRESSION_KINDS: [Kind; 3] = [Kind::Unexport, Kind::AddParameter, Kind::DeleteImport];

/// Runs a loop on a fresh copy of `project` under `dir`, through the hook of `squiggle`.
pub fn run(
    project: &Project,
    workspace: &Path,
    squiggle: &Path,
    dir: &Path,
    plan: Plan<'_>,
) -> anyhow::Result<Tally> {
    let dependents = plan.dependents;
    let variant = if dependents {
        "loop"
    } else {
        "loop-edited-only"
    };
    let name: String = project
        .label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let copy = dir.join(format!("{variant}-{name}"));
    let disabled = super::fixture::builtins_but(project.server);
    let root = super::fixture::copy(workspace, project.fixture, &copy, &disabled)?;
    if let Some(modules) = &project.modules {
        super::fixture::link_modules(&root, modules)?;
    }
    if !dependents {
        // A top-level key: before the copy's `[servers.*]` tables.
        let toml = root.join("squiggle.toml");
        let tables = std::fs::read_to_string(&toml)?;
        std::fs::write(&toml, format!("max_dependent_files = 0\n{tables}"))?;
    }
    // Without the search, nothing comes after the answer: the edit hook alone.
    let door = dependents.then_some(plan.door);
    let hook = Hook::new(squiggle, &root, &copy, door)?;
    let result = edit_loop(project, &root, &hook, plan);
    hook.stop_daemon();
    result
}

/// The loop itself, on the copy at `root`.
fn edit_loop(project: &Project, root: &Path, hook: &Hook, plan: Plan<'_>) -> anyhow::Result<Tally> {
    let files = sources(root, project)?;
    anyhow::ensure!(!files.is_empty(), "no files to edit in {}", root.display());
    let baseline = project.checker.errors(root)?;
    // The daemon warms up on the first file, unchanged (a cold start is not the loop's).
    let first = std::fs::read_to_string(&files[0])?;
    for _ in 0..3 {
        let (seen, _) = hook.call(&files[0], &first, "x", "x")?.now;
        if seen.not_checked.is_none() {
            break;
        }
    }
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let mut tally = Tally::default();
    for i in 0..plan.count {
        let kind = plan.kinds[i % plan.kinds.len()];
        let Some((file, original, edit)) = pick(&mut rng, project.lang, kind, &files) else {
            continue;
        };
        let relative = relative(root, &file);
        let edited = edit.apply(&original);
        std::fs::write(&file, &edited)?;
        let after = project.checker.errors(root)?;
        let answers = hook.call(&file, &original, &edit.old, &edit.new)?;
        tally.edits += 1;
        tally.latency.push(answers.now.1);
        tally
            .later_latency
            .extend(answers.later.as_ref().map(|later| later.1));
        let later = answers.later.map(|later| later.0).unwrap_or_default();
        judge_edit(
            &mut tally,
            &relative,
            kind,
            &baseline,
            &after,
            (&answers.now.0, &later),
        );
        std::fs::write(&file, &original)?;
        let answers = hook.call(&file, &edited, &edit.new, &edit.old)?;
        tally.latency.push(answers.now.1);
        tally
            .later_latency
            .extend(answers.later.as_ref().map(|later| later.1));
        let later = answers.later.map(|later| later.0).unwrap_or_default();
        judge_revert(
            &mut tally,
            &relative,
            &baseline,
            &answers.now.0.with(&later),
        );
    }
    Ok(tally)
}

/// Tallies the answer to an edit of `file` against the checker's errors after it.
fn judge_edit(
    tally: &mut Tally,
    file: &str,
    kind: Kind,
    before: &std::collections::BTreeSet<oracle::Place>,
    after: &std::collections::BTreeSet<oracle::Place>,
    (now, later): (&block::Seen, &block::Seen),
) {
    let seen = &now.clone().with(later);
    let in_file = |errors: &std::collections::BTreeSet<oracle::Place>, name: &str| {
        errors
            .iter()
            .filter(|(f, ..)| f == name)
            .map(|(_, l, c)| (*l, *c))
            .collect::<std::collections::BTreeSet<_>>()
    };
    let expected = in_file(after, file);
    let mut miss = |what: &str, detail: Value| {
        tally
            .misses
            .push(json!({"file": file, "kind": kind.name(), "what": what, "detail": detail}));
    };
    // Other files: new errors per the checker, and what the block named.
    let broken: std::collections::BTreeSet<&String> = after
        .difference(before)
        .map(|(f, ..)| f)
        .filter(|f| *f != file)
        .collect();
    let named = broken.iter().filter(|f| seen.names(f)).count();
    let named_later = (broken.iter())
        .filter(|f| later.names(f) && !now.names(f))
        .count();
    if named < broken.len() && seen.not_checked.is_none() {
        let said: Vec<&String> = (seen.others.keys()).chain(&seen.named_only).collect();
        let unsearched = seen.unsearched.as_deref();
        miss(
            "other files not named",
            json!({"broken": broken, "named": said, "unsearched": unsearched}),
        );
    }
    let mut wrong = 0;
    for (other, places) in &seen.others {
        let new_there: std::collections::BTreeSet<(u64, u64)> = in_file(after, other)
            .difference(&in_file(before, other))
            .copied()
            .collect();
        if !places.is_subset(&new_there) {
            wrong += 1;
            miss(
                "other file blamed wrongly",
                json!({"other": other, "shown": places, "new": new_there}),
            );
        }
    }
    tally.blamed_wrongly += wrong;
    if let Some(note) = &seen.not_checked {
        // The edit's own file was not checked, and the block says so: what it broke elsewhere
        // is as unknown as its own errors, and no file is claimed clean.
        tally.not_checked += 1;
        miss("not checked", json!(note));
        return;
    }
    tally.broken_files += broken.len();
    tally.named_files += named;
    tally.named_later += named_later;
    if seen.unsearched.is_some() {
        tally.unsearched += 1;
    } else {
        tally.missed_silently += broken.len() - named;
    }
    let missing: Vec<_> = expected.difference(&seen.file).collect();
    let extra: Vec<_> = seen.file.difference(&expected).collect();
    if !expected.is_empty() && seen.file.is_empty() {
        tally.false_clean += 1;
        miss("false clean", json!({"expected": expected}));
    } else if !missing.is_empty() && !seen.capped {
        tally.partial += 1;
        miss("partial", json!({"missing": missing}));
    } else if expected.is_empty() {
        tally.clean += 1;
    } else {
        tally.hits += 1;
    }
    if !extra.is_empty() {
        tally.false_errors += 1;
        miss(
            "false or stale errors",
            json!({"extra": extra, "expected": expected}),
        );
    }
}

/// Tallies the answer to a revert of `file`: the checker's errors are the baseline's again.
fn judge_revert(
    tally: &mut Tally,
    file: &str,
    baseline: &std::collections::BTreeSet<oracle::Place>,
    seen: &block::Seen,
) {
    if seen.not_checked.is_some() {
        tally.reverts_not_checked += 1;
        return;
    }
    let known =
        |name: &str, place: &(u64, u64)| baseline.contains(&(name.to_owned(), place.0, place.1));
    let stale_here = seen.file.iter().any(|place| !known(file, place));
    let stale_elsewhere = seen
        .others
        .iter()
        .any(|(other, places)| places.iter().any(|place| !known(other, place)));
    if stale_here || stale_elsewhere {
        tally.stale_after_revert += 1;
        tally.misses.push(json!({
            "file": file, "what": "stale after revert",
            "detail": {"file": seen.file, "others": seen.others}
        }));
    }
}

/// An edit of `kind` in one of `files`, drawn at random (a file with no place for the kind is
/// passed over): the file, its text and the edit.
fn pick(
    rng: &mut fastrand::Rng,
    lang: Lang,
    kind: Kind,
    files: &[PathBuf],
) -> Option<(PathBuf, String, edits::Edit)> {
    for _ in 0..50 {
        let file = &files[rng.usize(..files.len())];
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if let Some(edit) = edits::draw(rng, lang, kind, &text) {
            return Some((file.clone(), text, edit));
        }
    }
    None
}

/// The project's files to edit: those of its language under its sources folder, in path order.
fn sources(root: &Path, project: &Project) -> anyhow::Result<Vec<PathBuf>> {
    let extension = match project.lang {
        Lang::Ts => "ts",
        Lang::Py => "py",
        Lang::Rs => "rs",
    };
    let keep = |path: &Path| {
        path.extension().is_some_and(|e| e == extension)
            && !path.to_string_lossy().contains("_vendored")
    };
    let (files, _) = squiggle_config::files_under(&root.join(project.sources), 10_000, &keep);
    Ok(files)
}

/// A path relative to the project, as the checker and the block name it.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What the hooks of one edit told the model, and how long each took.
struct Answers {
    /// The edit hook's.
    now: (block::Seen, Duration),
    /// The later hook's, when it ran (what it woke the model with, if it did), or the next
    /// answer's ([`Door::NextAnswer`]).
    later: Option<(block::Seen, Duration)>,
}

/// `squiggle hook claude-code` for a project, with its own daemon folders.
struct Hook {
    squiggle: PathBuf,
    root: PathBuf,
    /// What runs after the edit hook's answer, if anything.
    door: Option<Door>,
    env: Vec<(&'static str, PathBuf)>,
}

impl Hook {
    /// The hook of `squiggle` in `root`, keeping its daemon's files under `scratch`.
    fn new(
        squiggle: &Path,
        root: &Path,
        scratch: &Path,
        door: Option<Door>,
    ) -> anyhow::Result<Self> {
        let state = scratch.with_extension("state");
        let runtime = scratch.with_extension("run");
        for folder in [&state, &runtime] {
            if folder.exists() {
                std::fs::remove_dir_all(folder)?;
            }
        }
        Ok(Self {
            squiggle: squiggle.to_path_buf(),
            root: root.to_path_buf(),
            door,
            env: vec![
                ("SQUIGGLE_RUNTIME_DIR", runtime),
                ("XDG_STATE_HOME", state),
                ("XDG_CONFIG_HOME", root.join(".no-user-config")),
            ],
        })
    }

    /// Tells the hooks of an Edit of `file` that replaced `old` by `new` in `original`, as
    /// Claude Code does (the later hook, when the loop runs it, at the same time as the edit
    /// hook, as the plugin's `asyncRewake` hook): what the model read from each, and how long
    /// each took. The later hook is waited for: an agent thinks longer than it runs. With
    /// [`Door::NextAnswer`], the edit hook alone, and after [`THINK`] the next answer: a hook on
    /// the file that changes nothing (the same texts: what the daemon found still holds).
    fn call(&self, file: &Path, original: &str, old: &str, new: &str) -> anyhow::Result<Answers> {
        let input = Self::input(&self.root, file, original, old, new);
        let relative = relative(&self.root, file);
        if self.door == Some(Door::NextAnswer) {
            let (stdout, _, _, took) = self.run(&[], &input)?;
            let now = (block::read(&stdout, &relative)?, took);
            std::thread::sleep(THINK);
            // The next call: a hook on the file as it is now, changing nothing (another edit
            // would be an edit of its own, with its own search).
            let text = std::fs::read_to_string(file)?;
            let next = Self::input(&self.root, file, &text, "x", "x");
            let (stdout, _, _, took) = self.run(&[], &next)?;
            let next = (block::read(&stdout, &relative)?, took);
            return Ok(Answers {
                now,
                later: Some(next),
            });
        }
        let claude = self.door == Some(Door::ClaudeCode);
        std::thread::scope(|scope| {
            let later = claude.then(|| scope.spawn(|| self.run(&["--later"], &input)));
            // As the plugin runs it.
            let flags: &[&str] = if claude { &["--with-later"] } else { &[] };
            let (stdout, _, _, took) = self.run(flags, &input)?;
            let now = (block::read(&stdout, &relative)?, took);
            let later = match later {
                Some(later) => {
                    let (_, stderr, code, took) = later
                        .join()
                        .map_err(|_| anyhow::anyhow!("the later hook's thread panicked"))??;
                    let told = match code {
                        Some(2) => block::read_later(&stderr, &relative),
                        _ => block::Seen::default(),
                    };
                    Some((told, took))
                }
                None => None,
            };
            Ok(Answers { now, later })
        })
    }

    /// Claude Code's PostToolUse input for an Edit of `file` in `root` that replaced `old` by
    /// `new` in `original`.
    fn input(root: &Path, file: &Path, original: &str, old: &str, new: &str) -> String {
        json!({
            "session_id": "loop",
            "cwd": root,
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": file, "old_string": old, "new_string": new},
            "tool_response": {"filePath": file, "originalFile": original},
        })
        .to_string()
    }

    /// Runs `squiggle hook claude-code` with `flags` on `input`: its stdout, stderr, exit code
    /// and time.
    fn run(
        &self,
        flags: &[&str],
        input: &str,
    ) -> anyhow::Result<(String, String, Option<i32>, Duration)> {
        let started = Instant::now();
        let mut child = self
            .command()
            .args(["hook", "claude-code"])
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run squiggle hook")?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input.as_bytes())?;
        }
        let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut out = String::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_string(&mut out);
                }
                out
            })
        };
        let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if started.elapsed() > HOOK_LIMIT {
                let _ = child.kill();
                bail!("squiggle hook took over {} s", HOOK_LIMIT.as_secs());
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let took = started.elapsed();
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        Ok((stdout, stderr, status.code(), took))
    }

    /// `squiggle` in the project, with the daemon on and its folders set.
    fn command(&self) -> Command {
        let mut command = Command::new(&self.squiggle);
        command
            .current_dir(&self.root)
            .env("SQUIGGLE_NO_DAEMON", "0")
            .envs(self.env.iter().map(|(key, value)| (*key, value)));
        command
    }

    /// Stops the project's daemon (and its servers).
    fn stop_daemon(&self) {
        let _ = self
            .command()
            .args(["daemon", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The loop's projects on this machine (fp-ts with TypeScript 5 and 7, isort, the Rust crate),
/// and a note for each one that cannot run.
pub fn projects(workspace: &Path, dir: &Path) -> (Vec<Project>, Vec<String>) {
    let mut found = Vec::new();
    let mut notes = Vec::new();
    let servers = crate::lsp_servers::path_with_servers(workspace).unwrap_or_default();
    let tool = |name: &str| super::catalog::on_path(&servers, name);
    match (tool("typescript-language-server"), tool("tsc")) {
        (Some(_), Some(tsc)) => found.push(Project {
            label: "fp-ts, typescript-language-server".into(),
            fixture: "real-ts",
            server: "typescript",
            lang: Lang::Ts,
            sources: "src",
            checker: Checker::Tsc(tsc),
            modules: None,
        }),
        _ => notes.push(
            "loop on fp-ts (TypeScript 5): typescript-language-server or tsc is not installed"
                .into(),
        ),
    }
    match super::catalog::typescript_7(workspace) {
        Ok(modules) => found.push(Project {
            label: "fp-ts, tsc --lsp (TypeScript 7)".into(),
            fixture: "real-ts",
            server: "typescript-native",
            lang: Lang::Ts,
            sources: "src",
            checker: Checker::Tsc(modules.join(".bin/tsc")),
            modules: Some(modules),
        }),
        Err(why) => notes.push(format!("loop on fp-ts (TypeScript 7): {why}")),
    }
    match (tool("pyright-langserver"), tool("pyright")) {
        (Some(_), Some(pyright)) => found.push(Project {
            label: "isort, pyright".into(),
            fixture: "real-py",
            server: "pyright",
            lang: Lang::Py,
            sources: "isort",
            checker: Checker::Pyright(pyright),
            modules: None,
        }),
        _ => notes.push("loop on isort: pyright is not installed".into()),
    }
    match tool("rust-analyzer") {
        Some(_) => found.push(Project {
            label: "regex-syntax, rust-analyzer".into(),
            fixture: "real-rust",
            server: "rust-analyzer",
            lang: Lang::Rs,
            sources: "src",
            checker: Checker::Cargo {
                target: dir.join("loop-cargo-target"),
            },
            modules: None,
        }),
        None => notes.push("loop on regex-syntax: rust-analyzer is not installed".into()),
    }
    (found, notes)
}

/// `cargo xtask test`'s regression: 3 edits per project with the debug build; an error when a
/// project's block told an untruth (or it cannot run). How many broken files it named is
/// printed, and held to 90% by the benchmark (`bench-run --loop`).
pub fn regression(workspace: &Path) -> anyhow::Result<()> {
    let squiggle = workspace.join("target/debug/squiggle");
    let dir = workspace.join("target/loop-test");
    std::fs::create_dir_all(&dir)?;
    let path = crate::lsp_servers::path_with_servers(workspace)?;
    std::env::set_var("PATH", &path);
    let (projects, notes) = projects(workspace, &dir);
    let mut failures = notes;
    for project in &projects {
        let started = Instant::now();
        let plan = Plan {
            count: 3,
            kinds: &REGRESSION_KINDS,
            seed: 24,
            dependents: true,
            door: Door::ClaudeCode,
        };
        match run(project, workspace, &squiggle, &dir, plan) {
            Ok(tally) => {
                eprintln!(
                    "xtask: agent loop on {}: {} ({:.0} s)",
                    project.label,
                    tally.row(&project.label, "loop"),
                    started.elapsed().as_secs_f64()
                );
                failures.extend(
                    tally
                        .untruths()
                        .into_iter()
                        .map(|f| format!("{}: {f}", project.label)),
                );
            }
            Err(err) => failures.push(format!("{}: {err:#}", project.label)),
        }
    }
    if !failures.is_empty() {
        bail!(
            "the agent loop missed its targets:\n  {}",
            failures.join("\n  ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::BTreeSet;

    use super::*;

    fn places(list: &[(&str, u64, u64)]) -> BTreeSet<oracle::Place> {
        list.iter()
            .map(|(file, line, column)| (file.to_string(), *line, *column))
            .collect()
    }

    fn seen(file: &[(u64, u64)], others: &[(&str, u64, u64)]) -> block::Seen {
        let mut seen = block::Seen {
            file: file.iter().copied().collect(),
            ..Default::default()
        };
        for (other, line, column) in others {
            seen.others
                .entry(other.to_string())
                .or_default()
                .insert((*line, *column));
        }
        seen
    }

    #[test]
    fn each_answer_is_judged_against_the_checker() {
        let before = places(&[("b.ts", 1, 1)]);
        let after = places(&[("a.ts", 3, 5), ("b.ts", 1, 1), ("c.ts", 2, 2)]);
        let judged = |seen: &block::Seen| {
            let mut tally = Tally::default();
            let later = block::Seen::default();
            judge_edit(
                &mut tally,
                "a.ts",
                Kind::Unexport,
                &before,
                &after,
                (seen, &later),
            );
            tally
        };
        // Right about the file, and c.ts named: a hit, every broken file named.
        let right = judged(&seen(&[(3, 5)], &[("c.ts", 2, 2)]));
        assert_eq!(
            (right.hits, right.broken_files, right.named_files),
            (1, 1, 1)
        );
        assert!(right.failures().is_empty(), "{:?}", right.failures());
        // Silent: a false clean, and c.ts not named.
        let silent = judged(&seen(&[], &[]));
        assert_eq!((silent.false_clean, silent.named_files), (1, 0));
        assert_eq!(silent.failures().len(), 2);
        // The regression fails on the false clean; the unnamed file is the benchmark's.
        assert_eq!(silent.untruths(), ["1 false cleans"]);
        // An error the checker does not have, and b.ts's old error blamed on the edit.
        let wrong = judged(&seen(&[(3, 5), (9, 9)], &[("b.ts", 1, 1), ("c.ts", 2, 2)]));
        assert_eq!(
            (wrong.hits, wrong.false_errors, wrong.blamed_wrongly),
            (1, 1, 1)
        );
        // Not checked, and said so: neither a false clean nor a broken file missed.
        let mut unknown = seen(&[], &[]);
        unknown.not_checked = Some("LSP did not check a.ts".into());
        let unknown = judged(&unknown);
        assert_eq!((unknown.not_checked, unknown.broken_files), (1, 0));
        assert!(unknown.failures().is_empty());
    }

    #[test]
    fn a_revert_is_stale_when_the_block_keeps_an_error_the_checker_dropped() {
        let baseline = places(&[("a.ts", 1, 1)]);
        let mut tally = Tally::default();
        judge_revert(&mut tally, "a.ts", &baseline, &seen(&[(1, 1)], &[]));
        assert_eq!(tally.stale_after_revert, 0);
        judge_revert(&mut tally, "a.ts", &baseline, &seen(&[(1, 1), (4, 2)], &[]));
        judge_revert(&mut tally, "a.ts", &baseline, &seen(&[], &[("b.ts", 1, 1)]));
        assert_eq!(tally.stale_after_revert, 2);
        let mut unknown = seen(&[(4, 2)], &[]);
        unknown.not_checked = Some("LSP did not check a.ts".into());
        judge_revert(&mut tally, "a.ts", &baseline, &unknown);
        assert_eq!(
            (tally.stale_after_revert, tally.reverts_not_checked),
            (2, 1)
        );
    }
}
