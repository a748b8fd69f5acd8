//! Cold and warm checks on real language servers, each against the definitive floor (a raw
//! client's time to the server's final answer, from the server's own signal): cold is
//! `squiggle check` from process start to its printed answer against the floor's spawn to final
//! answer; warm is one `lsp/checkFile` with a changed text on a running `squiggle serve` (and,
//! where asked, `Squiggle::check_file`) against the floor's change to final answer. The two
//! sides take turns run by run, so that both see the machine in the same state.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde_json::{json, Value};

use super::final_floor::{self, FinalFloor, Launch, Signal};
use super::stats::Stats;
use super::{check, row, serve, shutdown, target, time_cold_check, time_warm_api, variant};

/// The limit on a warm check, against the floor's median.
#[derive(Debug, Clone, Copy)]
pub enum WarmLimit {
    /// At most `ratio` times the floor plus `plus_ms`.
    Within { ratio: f64, plus_ms: f64 },
    /// The ratio of medians, reported against a limit.
    Ratio(f64),
}

/// A real server, the fixture file it is measured on and the targets it is held to.
#[derive(Debug)]
pub struct Server {
    /// How the table names it (squiggle's built-in id).
    pub label: &'static str,
    pub program: PathBuf,
    pub args: &'static [&'static str],
    /// The file's LSP language id, for the floor.
    pub language: &'static str,
    /// The signal the floor waits for.
    pub signal: Signal,
    /// The fixture folder (under `tests/fixtures`) and the file in it.
    pub fixture: &'static str,
    pub file: &'static str,
    /// How a line comment starts in the file's language (each warm run appends one).
    pub comment: &'static str,
    /// Also measure the warm check through the embedding API.
    pub api: bool,
    pub warm_limit: WarmLimit,
    /// The limit on cold `squiggle check` / floor, if any.
    pub cold_limit: Option<f64>,
    /// The `node_modules` the fixture's copy links to (TypeScript 7 for `tsc --lsp`), if any.
    pub modules: Option<PathBuf>,
    /// The error introduced in `file` (text found, its replacement), where the fixture's file
    /// holds none (a cold check is timed to its first printed line).
    pub seed: Option<(&'static str, &'static str)>,
}

impl Server {
    /// How the floor runs it.
    fn launch(&self) -> Launch<'_> {
        Launch {
            program: &self.program,
            args: self.args,
            language: self.language,
            signal: self.signal,
        }
    }
}

/// Measures `server` cold and warm against its definitive floor; pushes rows and targets.
pub fn measure(
    server: &Server,
    workspace: &Path,
    squiggle: &Path,
    dir: &Path,
    runs: (usize, usize),
    results: &mut super::Results<'_>,
) -> anyhow::Result<()> {
    let (cold_runs, warm_runs) = runs;
    let root = super::fixture::copy(
        workspace,
        server.fixture,
        &dir.join(format!("answers-{}", server.label)),
        &super::fixture::builtins_but(server.label),
    )?;
    if let Some(modules) = &server.modules {
        super::fixture::link_modules(&root, modules)?;
    }
    let file = root.join(server.file);
    if let Some(seed) = server.seed {
        super::fixture::seed(&file, seed)?;
    }
    let label = server.label;
    let source = format!("tests/fixtures/{}/{}", server.fixture, server.file);
    let basis = server.signal.describe();

    let (cold_check, cold_floor) = cold(server, squiggle, &root, &file, cold_runs)
        .with_context(|| format!("cold, {label}"))?;
    results.rows.push(row(
        "cold",
        label,
        "squiggle check",
        &cold_check,
        Some(&cold_floor),
    ));
    results
        .rows
        .push(floor_row("cold", label, &cold_floor, &basis, &source));
    let ratio = cold_check.median_ms / cold_floor.median_ms.max(0.001);
    let name = format!(
        "cold squiggle check / definitive floor ({label}, {source}, medians {:.1} / {:.1} ms)",
        cold_check.median_ms, cold_floor.median_ms
    );
    match server.cold_limit {
        Some(limit) => results
            .targets
            .push(target(&name, ratio, "x", limit, ratio <= limit)),
        None => results
            .measures
            .push(json!({"measure": name, "value": ratio, "unit": "x"})),
    }

    let (warm_serve, warm_floor) = warm(server, squiggle, &root, &file, warm_runs)
        .with_context(|| format!("warm, {label}"))?;
    if server.api {
        let warm_api = time_warm_api(&root, &file, warm_runs, server.comment, Duration::ZERO)?;
        results.rows.push(row(
            "warm",
            label,
            "Squiggle API",
            &warm_api,
            Some(&warm_floor),
        ));
    }
    results.rows.push(row(
        "warm",
        label,
        "squiggle serve",
        &warm_serve,
        Some(&warm_floor),
    ));
    results
        .rows
        .push(floor_row("warm", label, &warm_floor, &basis, &source));
    let name = format!("{label}, {source}");
    results.targets.push(warm_target(
        &name,
        server.warm_limit,
        &warm_serve,
        &warm_floor,
    ));
    Ok(())
}

/// A floor row, naming the signal it was timed to and the file.
fn floor_row(scenario: &str, label: &str, stats: &Stats, basis: &str, file: &str) -> Value {
    let mut floor = row(scenario, label, "floor", stats, None);
    floor["floor"] = Value::String(basis.to_string());
    floor["file"] = Value::String(file.to_string());
    floor
}

/// The warm target: lsp/checkFile against the floor, by the server's limit.
fn warm_target(label: &str, limit: WarmLimit, serve: &Stats, floor: &Stats) -> Value {
    let ratio = serve.median_ms / floor.median_ms.max(0.001);
    match limit {
        WarmLimit::Within {
            ratio: most,
            plus_ms,
        } => {
            let allowed = most * floor.median_ms + plus_ms;
            target(
                &format!(
                    "warm lsp/checkFile within {most}x the definitive floor + {plus_ms} ms ({label}, median; floor {:.2} ms, {ratio:.2}x)",
                    floor.median_ms
                ),
                serve.median_ms,
                "ms",
                allowed,
                serve.median_ms <= allowed,
            )
        }
        WarmLimit::Ratio(most) => target(
            &format!(
                "warm lsp/checkFile / definitive floor ({label}, medians {:.1} / {:.1} ms)",
                serve.median_ms, floor.median_ms
            ),
            ratio,
            "x",
            most,
            ratio <= most,
        ),
    }
}

/// Cold runs, squiggle check and the floor taking turns (which goes first alternates).
fn cold(
    server: &Server,
    squiggle: &Path,
    root: &Path,
    file: &Path,
    runs: usize,
) -> anyhow::Result<(Stats, Stats)> {
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    // A check on save builds: cold for it too, with no build left from the run before.
    let builds = matches!(server.signal, Signal::PullAndCheck { .. });
    let clear = || {
        if builds {
            let _ = std::fs::remove_dir_all(root.join("target"));
        }
    };
    let floor = || {
        clear();
        final_floor::cold(server.launch(), root, file)
    };
    let time_cold_check = |squiggle, root, file| {
        clear();
        time_cold_check(squiggle, root, file)
    };
    for n in 0..runs {
        if n % 2 == 0 {
            ours.push(time_cold_check(squiggle, root, file)?);
            theirs.push(floor()?);
        } else {
            theirs.push(floor()?);
            ours.push(time_cold_check(squiggle, root, file)?);
        }
    }
    Ok((Stats::of(&ours), Stats::of(&theirs)))
}

/// Warm runs on a running `squiggle serve` and a running floor, the same changed text to each,
/// taking turns.
fn warm(
    server: &Server,
    squiggle: &Path,
    root: &Path,
    file: &Path,
    runs: usize,
) -> anyhow::Result<(Stats, Stats)> {
    let text = std::fs::read_to_string(file)?;
    let mut peer = serve(squiggle, root)?;
    check(&mut peer, file, &text)?;
    let (mut floor, _) = FinalFloor::start_open(server.launch(), root, file, &text)?;
    let mut ours: Vec<Duration> = Vec::new();
    let mut theirs: Vec<Duration> = Vec::new();
    // A check on save reads the disk: squiggle's text is saved first (the floor saves its own).
    let saves = matches!(server.signal, Signal::PullAndCheck { .. });
    let check = |peer: &mut _, file: &Path, text: &str| {
        if saves {
            std::fs::write(file, text)?;
        }
        check(peer, file, text)
    };
    for i in 0..runs {
        let changed = variant(&text, i, server.comment);
        if i % 2 == 0 {
            ours.push(check(&mut peer, file, &changed)?);
            theirs.push(floor.change(&changed)?);
        } else {
            theirs.push(floor.change(&changed)?);
            ours.push(check(&mut peer, file, &changed)?);
        }
    }
    floor.stop();
    shutdown(peer)?;
    Ok((Stats::of(&ours), Stats::of(&theirs)))
}
