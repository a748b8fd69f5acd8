//! `cargo xtask bench`: end-to-end benchmarks of squiggle against the floor (a minimal raw LSP
//! client on the same server, file and machine, in the same run), with a table on stdout and
//! `target/bench/report.json`. `--quick` runs fewer repetitions and smaller sizes.
//!
//! Cold and warm checks are measured against the definitive floor (`final_floor`: the raw
//! client's time to the server's final answer, no quiet time); the burst against the push floor
//! (`floor`: each change's first publish); the false-clean rate on real-size projects.

mod answers;
mod false_clean;
mod final_floor;
mod fixture;
mod floor;
mod peer;
mod stats;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use answers::{Server, WarmLimit};
use final_floor::Signal;
use peer::Peer;
use stats::Stats;

/// How long any single request may take.
const LIMIT: Duration = Duration::from_secs(60);

/// How long the floor waits after the fake server's last publish for a version to know it was
/// the last (the time is taken at the publish, not after this wait): a thousand times its
/// round trip. squiggle's warm checks on it pause as long before each run, so that both sides
/// start each change from the same idle state.
const GENEROUS: Duration = Duration::from_millis(100);

/// The burst: this many files, each changed this many times at once, 64 checks in all.
const FILES: usize = 16;
const ROUNDS: usize = 4;

/// Sizes and repetitions.
struct Plan {
    quick: bool,
    runs: usize,
    cold_runs: usize,
    /// Cold runs on each real-size project for the false-clean rate.
    false_clean_runs: usize,
    /// How many 64-request bursts.
    bursts: usize,
    growth: Vec<usize>,
    memory_docs: usize,
}

/// Builds release binaries and runs the measurements with them.
pub fn run(workspace: &Path, args: &[String]) -> anyhow::Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(&cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "--package",
            "squiggle",
            "--package",
            "xtask",
        ])
        .current_dir(workspace)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("the release build failed");
    }
    let xtask = workspace.join("target/release/xtask");
    let mut measure = Command::new(&xtask);
    measure.arg("bench-run").current_dir(workspace);
    if quick {
        measure.arg("--quick");
    }
    let status = measure.status().context("cannot run the release xtask")?;
    if !status.success() {
        bail!("the benchmarks failed");
    }
    if !quick {
        println!("\nmicro-benchmarks (divan): frame guard, conversion, merging, rendering");
        let status = Command::new(&cargo)
            .args([
                "bench",
                "--quiet",
                "--package",
                "squiggle-protocol",
                "--bench",
                "throughput",
            ])
            .current_dir(workspace)
            .status()?;
        if !status.success() {
            bail!("the micro-benchmarks failed");
        }
    }
    Ok(())
}

/// Runs every scenario (with release binaries) and reports.
pub fn measure(workspace: &Path, args: &[String]) -> anyhow::Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    let plan = Plan {
        quick,
        runs: if quick { 20 } else { 100 },
        cold_runs: if quick { 5 } else { 15 },
        false_clean_runs: if quick { 3 } else { 20 },
        bursts: if quick { 9 } else { 101 },
        growth: vec![1, 10, 100, 1000],
        memory_docs: if quick { 100 } else { 1000 },
    };
    let bin = workspace.join("target/release");
    let squiggle = bin.join("squiggle");
    let xtask = bin.join("xtask");
    let dir = workspace.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    // Children (squiggle and the floor's servers) find the installed servers on PATH.
    let path = crate::lsp_servers::path_with_servers(workspace)?;
    std::env::set_var("PATH", &path);
    let ruff = on_path(&path, "ruff");

    let mut rows: Vec<Value> = Vec::new();
    let mut targets: Vec<Value> = Vec::new();
    // Numbers worth reading that have no target.
    let mut measures: Vec<Value> = Vec::new();
    // What was not measured, and why.
    let mut notes: Vec<String> = Vec::new();

    // The fake server with no server-side delay: everything measured is squiggle (or the floor).
    let fake = Load {
        label: "fake",
        ext: "fake",
        language: "fake",
        program: xtask.clone(),
        args: &["fake-server"],
    };
    let one = fake.workspace(&dir.join("fake-1"), 1, 0)?;
    let file = fake.probe(&one);
    // Push only: its last publish for the version is its final answer.
    let fake_signal = Signal::LastPublish { generous: GENEROUS };
    let cold_floor = repeat(plan.cold_runs, || {
        final_floor::cold(
            &fake.program,
            fake.args,
            &one,
            &file,
            fake.language,
            fake_signal,
        )
    })?;
    let cold_check = repeat(plan.cold_runs, || time_cold_check(&squiggle, &one, &file))?;
    rows.push(row(
        "cold",
        "fake",
        "squiggle check",
        &cold_check,
        Some(&cold_floor),
    ));
    rows.push(row("cold", "fake", "floor", &cold_floor, None));

    let warm_floor = time_warm_floor(
        &fake.program,
        fake.args,
        &one,
        &file,
        fake.language,
        fake_signal,
        plan.runs,
    )?;
    let warm_api = time_warm_api(&one, &file, plan.runs, "#", GENEROUS)?;
    let warm_serve = time_warm_serve(&squiggle, &one, &file, plan.runs, GENEROUS)?;
    rows.push(row(
        "warm",
        "fake",
        "Squiggle API",
        &warm_api,
        Some(&warm_floor),
    ));
    rows.push(row(
        "warm",
        "fake",
        "squiggle serve",
        &warm_serve,
        Some(&warm_floor),
    ));
    rows.push(row("warm", "fake", "floor", &warm_floor, None));
    for (subject, warm) in [("Squiggle API", &warm_api), ("squiggle serve", &warm_serve)] {
        let overhead = warm.median_ms - warm_floor.median_ms;
        targets.push(target(
            &format!("warm overhead over the floor, {subject}, fake server, settle 0 (median)"),
            overhead,
            "ms",
            1.0,
            overhead < 1.0,
        ));
    }

    // Real servers, cold and warm, against their definitive floor.
    let mut results = Results {
        rows: &mut rows,
        targets: &mut targets,
        measures: &mut measures,
    };
    let (servers, mut missing) = real_servers(&path);
    notes.append(&mut missing);
    for server in &servers {
        let runs = (plan.cold_runs, (plan.runs / 4).max(5));
        answers::measure(server, workspace, &squiggle, &dir, runs, &mut results)?;
    }
    notes.push("tsc --lsp (TypeScript 7): not measured: no TypeScript 7 built-in yet".to_string());

    // False cleans: cold runs on the real-size projects.
    let (projects, mut missing) = real_projects(&path);
    notes.append(&mut missing);
    for project in projects {
        let outcome =
            false_clean::measure(&project, workspace, &squiggle, &dir, plan.false_clean_runs)?;
        results.rows.push(row(
            "cold",
            project.label,
            "check --format json",
            &outcome.timing,
            None,
        ));
        let mut missed = target(
            &format!(
                "false cleans: cold squiggle check runs without {} in {} ({})",
                expected_text(project.expected),
                project.file,
                project.label
            ),
            outcome.misses as f64,
            &format!("of {}", outcome.runs),
            0.0,
            outcome.misses == 0,
        );
        missed["missed_runs"] = json!(outcome.missed);
        missed["bases"] = json!(outcome.bases);
        results.targets.push(missed);
    }

    // Burst, growth and memory: on the fake server, then on ruff.
    let idle_ticks = measure_load(&fake, &plan, &squiggle, &dir, &mut results)?;
    if let Some(ruff) = &ruff {
        let ruff = Load {
            label: "ruff",
            ext: "py",
            language: "python",
            program: ruff.clone(),
            args: &["server"],
        };
        measure_load(&ruff, &plan, &squiggle, &dir, &mut results)?;
    } else {
        notes.push("burst, growth and memory on ruff: not measured: ruff is not installed (cargo xtask install-servers)".to_string());
    }
    targets.push(target(
        "CPU ticks of an idle squiggle serve over 2 s",
        idle_ticks as f64,
        "ticks",
        0.0,
        idle_ticks == 0,
    ));

    print_table(&rows, &targets, &measures, &notes);
    let report = json!({
        "machine": machine(),
        "quick": plan.quick,
        "rows": rows,
        "targets": targets,
        "measures": measures,
        "notes": notes,
    });
    let out = dir.join("report.json");
    std::fs::write(&out, serde_json::to_string_pretty(&report)?)?;
    println!("\nreport: {}", out.display());
    Ok(())
}

/// The rows, targets and other numbers of a run.
struct Results<'a> {
    rows: &'a mut Vec<Value>,
    targets: &'a mut Vec<Value>,
    measures: &'a mut Vec<Value>,
}

/// A kind of server the load scenarios (burst, growth, memory) run on. Its workspaces hold files
/// `f0000.<ext>`, ... with ten errors each, and a probe `a.<ext>` with one.
struct Load {
    /// How the table names it.
    label: &'static str,
    /// The files' extension.
    ext: &'static str,
    /// Their LSP language id, for the floor.
    language: &'static str,
    /// The server's program and arguments.
    program: PathBuf,
    args: &'static [&'static str],
}

impl Load {
    /// A workspace with `files` files served by `servers` instances of the server, settle 0.
    fn workspace(&self, dir: &Path, servers: usize, files: usize) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let mut config = String::from(
            "settle_ms = 0\ndiagnostic_timeout_ms = 30000\nfirst_touch_timeout_ms = 30000\n",
        );
        // Only the numbered servers below: the built-in ones for these files stay off.
        for builtin in ["pyright", "basedpyright", "ruff"] {
            config.push_str(&format!("[servers.{builtin}]\nenabled = false\n"));
        }
        let args: Vec<String> = self.args.iter().map(|a| a.to_string()).collect();
        for n in 0..servers {
            config.push_str(&format!(
                "[servers.{}{n}]\ncommand = {:?}\nargs = {args:?}\nextensions = [{:?}]\n",
                self.label,
                self.program.display().to_string(),
                self.ext
            ));
        }
        std::fs::write(dir.join("squiggle.toml"), config)?;
        std::fs::write(self.probe(dir), self.errors(1))?;
        let ten = self.errors(10);
        for n in 0..files {
            std::fs::write(self.file(dir, n), &ten)?;
        }
        Ok(std::fs::canonicalize(dir)?)
    }

    /// The text of a file with `count` errors.
    fn errors(&self, count: usize) -> String {
        (0..count)
            .map(|i| match self.ext {
                "py" => format!("print(undefined_{i})\n"),
                _ => format!("ERROR number {i}\n"),
            })
            .collect()
    }

    fn file(&self, root: &Path, n: usize) -> PathBuf {
        root.join(format!("f{n:04}.{}", self.ext))
    }

    fn probe(&self, root: &Path) -> PathBuf {
        root.join(format!("a.{}", self.ext))
    }
}

/// The burst, growth and memory scenarios on one kind of server; returns the CPU ticks an idle
/// `squiggle serve` used afterwards.
fn measure_load(
    load: &Load,
    plan: &Plan,
    squiggle: &Path,
    dir: &Path,
    results: &mut Results<'_>,
) -> anyhow::Result<u64> {
    let label = format!("{} x4", load.label);
    // Burst: 64 concurrent checks over 16 files and 4 servers, alternating with the floor's
    // same burst (both kept running), so that both see the machine in the same state.
    let four = load.workspace(&dir.join(format!("{}-4", load.label)), 4, FILES)?;
    let mut subject = ServeBurst::start(load, squiggle, &four)?;
    let single = subject.singles(plan.runs)?;
    let mut floor = floor::BurstFloor::start(
        &load.program,
        load.args,
        &four,
        &subject.files,
        load.language,
        4,
    )?;
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    // Burst 0 warms both up and is not counted.
    for n in 0..=plan.bursts {
        let text = |original: &str, round| burst_text(original, n, round);
        // Which side goes first alternates too.
        let (mine, floor_burst) = if n % 2 == 0 {
            (subject.burst(n)?, floor.burst(ROUNDS, text)?)
        } else {
            let floor_burst = floor.burst(ROUNDS, text)?;
            (subject.burst(n)?, floor_burst)
        };
        if n > 0 {
            ours.push(mine);
            theirs.push(floor_burst);
        }
    }
    floor.stop();
    let checks = (plan.bursts + 1) * ROUNDS * FILES;
    let cpu_ms_per_check = subject.cpu_ns as f64 / 1e6 / checks as f64;
    shutdown(subject.peer)?;
    let (burst_stats, floor_stats) = (Stats::of(&ours.concat()), Stats::of(&theirs.concat()));
    results
        .rows
        .push(row("burst", &label, "single check", &single, None));
    results.rows.push(row(
        "burst",
        &label,
        "64 concurrent",
        &burst_stats,
        Some(&floor_stats),
    ));
    results.rows.push(row(
        "burst",
        &label,
        "floor, same burst",
        &floor_stats,
        None,
    ));
    // Beyond server time: how much longer than the floor's slowest request the slowest request
    // of a burst waited, paired burst by burst, the median over the bursts, in single-check
    // times.
    let slowest = |burst: &Vec<Duration>| burst.iter().max().copied().unwrap_or_default();
    let per_burst: Vec<f64> = ours
        .iter()
        .zip(&theirs)
        .map(|(mine, floor)| (slowest(mine).as_secs_f64() - slowest(floor).as_secs_f64()) * 1000.0)
        .collect();
    let beyond_ms = stats::median(&per_burst);
    let beyond = beyond_ms / single.median_ms.max(0.001);
    let mut burst_target = target(
        &format!(
            "burst ({label}): slowest request beyond server time, in single-check times ({beyond_ms:+.2} ms, median of {} paired bursts)",
            plan.bursts
        ),
        beyond,
        "x",
        2.0,
        beyond <= 2.0,
    );
    burst_target["beyond_ms_per_burst"] = json!(per_burst);
    results.targets.push(burst_target);
    results.measures.push(json!({
        "measure": format!("CPU time of squiggle serve (all threads) per check in the bursts ({label})"),
        "value": cpu_ms_per_check,
        "unit": "ms",
    }));

    // Growth: open documents and 10 diagnostics each in the store.
    let most = *plan.growth.iter().max().unwrap_or(&1);
    let many = load.workspace(&dir.join(format!("{}-growth", load.label)), 1, most)?;
    let growth = growth(load, squiggle, &many, &plan.growth, plan.runs)?;
    let points: Vec<(f64, f64)> = growth
        .iter()
        .map(|(docs, stats)| (*docs as f64, stats.median_ms))
        .collect();
    let slope = stats::slope(&points) * 1000.0;
    for (docs, stats) in &growth {
        results.rows.push(row(
            "growth",
            &format!("{} {docs} docs, {} diags", load.label, docs * 10),
            "warm check",
            stats,
            None,
        ));
    }
    results.targets.push(target(
        &format!(
            "growth slope of the warm check ({}; ms per 1,000 open documents)",
            load.label
        ),
        slope,
        "ms",
        1.0,
        slope < 1.0,
    ));

    // Memory (and idle CPU) of `squiggle serve` itself, with 4 servers and many documents.
    let memory_ws = load.workspace(
        &dir.join(format!("{}-memory", load.label)),
        4,
        plan.memory_docs,
    )?;
    let (rss_kib, idle_ticks) = memory_and_idle(load, squiggle, &memory_ws, plan.memory_docs)?;
    let rss_mib = rss_kib as f64 / 1024.0;
    results.targets.push(target(
        &format!(
            "peak RSS of squiggle serve ({label}, {} open documents)",
            plan.memory_docs
        ),
        rss_mib,
        "MiB",
        30.0,
        rss_mib < 30.0,
    ));
    Ok(idle_ticks)
}

/// Runs a measurement `runs` times.
fn repeat(
    runs: usize,
    mut once: impl FnMut() -> anyhow::Result<Duration>,
) -> anyhow::Result<Stats> {
    let timings = (0..runs)
        .map(|_| once())
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Stats::of(&timings))
}

/// The first `name` on `path`.
fn on_path(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The real servers measured cold and warm against their definitive floor, and a note for each
/// one that is not installed (or does not work).
fn real_servers(path: &std::ffi::OsStr) -> (Vec<Server>, Vec<String>) {
    let mut servers = Vec::new();
    let mut notes = Vec::new();
    let wanted = [
        ("pyright-langserver", "pyright", &["--stdio"][..], "python"),
        ("ruff", "ruff", &["server"][..], "python"),
        (
            "typescript-language-server",
            "typescript",
            &["--stdio"][..],
            "typescript",
        ),
    ];
    for (command, label, args, language) in wanted {
        let Some(program) = on_path(path, command) else {
            notes.push(format!(
                "{label}: not measured: {command} is not installed (cargo xtask install-servers)"
            ));
            continue;
        };
        let python = language == "python";
        servers.push(Server {
            label,
            program,
            args,
            language,
            signal: if python {
                Signal::Pull
            } else {
                Signal::Tsserver
            },
            fixture: if python { "python" } else { "typescript" },
            file: if python { "orders.py" } else { "src/user.ts" },
            comment: if python { "#" } else { "//" },
            others: match label {
                "pyright" => &["basedpyright", "ruff"],
                "ruff" => &["basedpyright", "pyright"],
                _ => &["eslint"],
            },
            api: label == "ruff",
            warm_limit: if python {
                WarmLimit::Within {
                    ratio: 1.2,
                    plus_ms: 2.0,
                }
            } else {
                WarmLimit::Ratio(2.0)
            },
            // The cold target is pyright's; the others are reported.
            cold_limit: (label == "pyright").then_some(1.1),
        });
    }
    // rust-analyzer only when one really runs (a rustup proxy without the component does not).
    let works = on_path(path, "rust-analyzer").is_some_and(|program| {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    });
    match on_path(path, "rust-analyzer") {
        Some(program) if works => servers.push(Server {
            label: "rust-analyzer",
            program,
            args: &[],
            language: "rust",
            // It publishes in stages with no end signal: its last publish, found generously.
            signal: Signal::LastPublish {
                generous: Duration::from_secs(2),
            },
            fixture: "rust",
            file: "src/main.rs",
            comment: "//",
            others: &[],
            api: false,
            warm_limit: WarmLimit::Ratio(2.0),
            cold_limit: None,
        }),
        _ => notes.push(
            "rust-analyzer: not measured: `rust-analyzer --version` does not succeed on PATH"
                .to_string(),
        ),
    }
    (servers, notes)
}

/// The real-size projects of the false-clean rate, and a note for each one whose servers are
/// not installed.
fn real_projects(path: &std::ffi::OsStr) -> (Vec<false_clean::Project>, Vec<String>) {
    let projects = [
        (
            false_clean::Project {
                label: "typescript, real-ts",
                fixture: "real-ts",
                file: "src/TaskEither.ts",
                expected: &[(255, 32, "2552")],
            },
            &["typescript-language-server"][..],
        ),
        (
            false_clean::Project {
                label: "pyright+ruff, real-py",
                fixture: "real-py",
                file: "isort/api.py",
                expected: &[(98, 5, "reportUndefinedVariable"), (98, 5, "F821")],
            },
            &["pyright-langserver", "ruff"][..],
        ),
    ];
    let mut found = Vec::new();
    let mut notes = Vec::new();
    for (project, commands) in projects {
        match commands.iter().find(|c| on_path(path, c).is_none()) {
            None => found.push(project),
            Some(command) => notes.push(format!(
                "false cleans on {}: not measured: {command} is not installed",
                project.fixture
            )),
        }
    }
    (found, notes)
}

/// How a target names the expected diagnostics: `2552 at 255:32`.
fn expected_text(expected: &[(u64, u64, &str)]) -> String {
    expected
        .iter()
        .map(|(line, column, code)| format!("{code} at {line}:{column}"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// One cold `squiggle check`: from process start to the first byte of its output.
fn time_cold_check(squiggle: &Path, root: &Path, file: &Path) -> anyhow::Result<Duration> {
    use std::io::Read;
    let started = Instant::now();
    let mut child = Command::new(squiggle)
        .arg("check")
        .arg(file)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut first = [0u8; 1];
    let read = child.stdout.take().context("no stdout")?.read(&mut first)?;
    let took = started.elapsed();
    child.wait()?;
    if read == 0 {
        bail!("squiggle check printed nothing for {}", file.display());
    }
    Ok(took)
}

/// The definitive floor's warm round trips: didChange to the final answer.
fn time_warm_floor(
    program: &Path,
    args: &[&str],
    root: &Path,
    file: &Path,
    language_id: &str,
    signal: Signal,
    runs: usize,
) -> anyhow::Result<Stats> {
    let text = std::fs::read_to_string(file)?;
    let mut floor = final_floor::FinalFloor::start(program, args, root, signal)?;
    floor.open(file, language_id, &text)?;
    let timings = (0..runs)
        .map(|i| floor.change(&variant(&text, i, "#")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    floor.stop();
    Ok(Stats::of(&timings))
}

/// Warm checks through the embedding API: `Squiggle::check_file` in this process, on a
/// runtime like the binary's (two workers).
/// Each run appends a different line comment (starting with `comment`), after `pause`.
fn time_warm_api(
    root: &Path,
    file: &Path,
    runs: usize,
    comment: &str,
    pause: Duration,
) -> anyhow::Result<Stats> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let config = squiggle_config::Config::load(root, None)?;
        let squiggle = squiggle_actors::Squiggle::start(root, config).await?;
        let text = std::fs::read_to_string(file)?;
        squiggle.check_file(file, Some(text.clone())).await;
        let mut timings = Vec::new();
        for i in 0..runs {
            tokio::time::sleep(pause).await;
            let started = Instant::now();
            let result = squiggle
                .check_file(file, Some(variant(&text, i, comment)))
                .await;
            timings.push(started.elapsed());
            if result.diagnostics.is_empty() || !result.timed_out.is_empty() {
                bail!("a warm check through the API found nothing: {result:?}");
            }
        }
        squiggle.shutdown().await;
        Ok(Stats::of(&timings))
    })
}

/// A text that differs from run to run (so that every check is a real change): a line comment
/// starting with `comment` appended.
fn variant(text: &str, i: usize, comment: &str) -> String {
    format!("{text}\n{comment} {i}\n")
}

/// Starts `squiggle serve` and waits for lsp/ready.
fn serve(squiggle: &Path, root: &Path) -> anyhow::Result<Peer> {
    let root_arg = root.display().to_string();
    let peer = Peer::spawn(squiggle, &["serve", "--root", &root_arg], root, &[])?;
    let (_, ready) = peer.next(LIMIT)?;
    if ready["method"] != "lsp/ready" {
        bail!("squiggle serve did not start with lsp/ready: {ready}");
    }
    Ok(peer)
}

/// One checkFile round trip.
fn check(peer: &mut Peer, file: &Path, text: &str) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let id = peer.request("lsp/checkFile", json!({"filePath": file, "text": text}))?;
    let (at, answer) = peer.answer(id, LIMIT)?;
    if answer.get("error").is_some_and(|e| !e.is_null()) {
        bail!("checkFile failed: {answer}");
    }
    Ok(at.duration_since(started))
}

/// Warm checks on a running `squiggle serve`, each after `pause`.
fn time_warm_serve(
    squiggle: &Path,
    root: &Path,
    file: &Path,
    runs: usize,
    pause: Duration,
) -> anyhow::Result<Stats> {
    let text = std::fs::read_to_string(file)?;
    let mut peer = serve(squiggle, root)?;
    check(&mut peer, file, &text)?;
    let timings = (0..runs)
        .map(|i| {
            std::thread::sleep(pause);
            check(&mut peer, file, &variant(&text, i, "#"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    shutdown(peer)?;
    Ok(Stats::of(&timings))
}

fn shutdown(mut peer: Peer) -> anyhow::Result<()> {
    let id = peer.request("lsp/shutdown", json!({}))?;
    peer.answer(id, LIMIT)?;
    peer.kill();
    Ok(())
}

/// `squiggle serve` with 16 files open on 4 servers, for the burst scenario.
struct ServeBurst {
    peer: Peer,
    files: Vec<PathBuf>,
    /// The files' original text (they all hold the same).
    text: String,
    /// The CPU time `squiggle serve` (all its threads) spent in the bursts so far, in ns.
    cpu_ns: u64,
}

impl ServeBurst {
    /// Starts `squiggle serve` and checks each file once.
    fn start(load: &Load, squiggle: &Path, root: &Path) -> anyhow::Result<Self> {
        let files: Vec<PathBuf> = (0..FILES).map(|n| load.file(root, n)).collect();
        let mut peer = serve(squiggle, root)?;
        for file in &files {
            check(&mut peer, file, &std::fs::read_to_string(file)?)?;
        }
        let text = std::fs::read_to_string(&files[0])?;
        Ok(Self {
            peer,
            files,
            text,
            cpu_ns: 0,
        })
    }

    /// Single checks of one file, one at a time.
    fn singles(&mut self, runs: usize) -> anyhow::Result<Stats> {
        let single = (0..runs)
            .map(|i| check(&mut self.peer, &self.files[0], &variant(&self.text, i, "#")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Stats::of(&single))
    }

    /// One burst: [`ROUNDS`] rounds of concurrent checks over the files, round `r` sending
    /// `burst_text(text, n, r)`; each request's latency from the start of the burst (as the
    /// floor times its own).
    fn burst(&mut self, n: usize) -> anyhow::Result<Vec<Duration>> {
        let mut requests = Vec::new();
        for round in 0..ROUNDS {
            let text = burst_text(&self.text, n, round);
            for file in &self.files {
                let params = json!({"filePath": file, "text": text});
                requests.push(self.peer.prepare("lsp/checkFile", params));
            }
        }
        let cpu_before = cpu_ns(self.peer.pid())?;
        let started = Instant::now();
        for (_, request) in &requests {
            self.peer.send(request)?;
        }
        let mut latencies = Vec::new();
        for (id, _) in requests {
            let (at, _) = self.peer.answer(id, LIMIT)?;
            latencies.push(at.duration_since(started));
        }
        self.cpu_ns += cpu_ns(self.peer.pid())?.saturating_sub(cpu_before);
        Ok(latencies)
    }
}

/// The text of round `round` of burst `n` (unique across the run, so every change is real).
fn burst_text(text: &str, n: usize, round: usize) -> String {
    variant(text, 1000 + 4 * n + round, "#")
}

/// The CPU time, in nanoseconds, all threads of a process have run (from their schedstat).
fn cpu_ns(pid: u32) -> anyhow::Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let schedstat = std::fs::read_to_string(task?.path().join("schedstat")).unwrap_or_default();
        total += schedstat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Ok(total)
}

/// The warm check time of one file with 1, 10, 100, ... documents open.
fn growth(
    load: &Load,
    squiggle: &Path,
    root: &Path,
    levels: &[usize],
    runs: usize,
) -> anyhow::Result<Vec<(usize, Stats)>> {
    let mut peer = serve(squiggle, root)?;
    let probe = load.probe(root);
    let text = std::fs::read_to_string(&probe)?;
    check(&mut peer, &probe, &text)?;
    let mut open = 0;
    let mut results = Vec::new();
    for &level in levels {
        while open < level {
            let file = load.file(root, open);
            check(&mut peer, &file, &std::fs::read_to_string(&file)?)?;
            open += 1;
        }
        let timings = (0..runs)
            .map(|i| check(&mut peer, &probe, &variant(&text, i, "#")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        results.push((level, Stats::of(&timings)));
    }
    shutdown(peer)?;
    Ok(results)
}

/// Peak RSS (KiB) of `squiggle serve` with `docs` documents open on 4 servers, and the CPU
/// ticks it uses in 2 s of idling afterwards.
fn memory_and_idle(
    load: &Load,
    squiggle: &Path,
    root: &Path,
    docs: usize,
) -> anyhow::Result<(u64, u64)> {
    let mut peer = serve(squiggle, root)?;
    for n in 0..docs {
        let file = load.file(root, n);
        check(&mut peer, &file, &std::fs::read_to_string(&file)?)?;
    }
    let pid = peer.pid();
    let rss = proc_status(pid, "VmHWM:").context("cannot read the peak RSS")?;
    let before = cpu_ticks(pid)?;
    std::thread::sleep(Duration::from_secs(2));
    let idle = cpu_ticks(pid)? - before;
    shutdown(peer)?;
    Ok((rss, idle))
}

fn proc_status(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User + system CPU ticks a process has used.
fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .context("bad stat")?
        .1
        .split_whitespace()
        .collect();
    let (utime, stime): (u64, u64) = (fields[11].parse()?, fields[12].parse()?);
    Ok(utime + stime)
}

fn row(scenario: &str, server: &str, subject: &str, stats: &Stats, floor: Option<&Stats>) -> Value {
    json!({
        "scenario": scenario, "server": server, "subject": subject, "stats": stats,
        "vs_floor": floor.map(|f| json!({"ratio": stats.median_ms / f.median_ms.max(0.001), "overhead_ms": stats.median_ms - f.median_ms})),
    })
}

fn target(name: &str, value: f64, unit: &str, limit: f64, met: bool) -> Value {
    json!({"target": name, "value": value, "unit": unit, "limit": limit, "met": met})
}

fn print_table(rows: &[Value], targets: &[Value], measures: &[Value], notes: &[String]) {
    println!(
        "{:<8} {:<28} {:<20} {:>5} {:>10} {:>10} {:>10} {:>14}",
        "scenario", "server", "subject", "runs", "median ms", "p90 ms", "max ms", "vs floor"
    );
    for r in rows {
        let s = &r["stats"];
        let vs = r["vs_floor"]
            .as_object()
            .map(|f| {
                format!(
                    "{:.2}x {:+.2}ms",
                    f["ratio"].as_f64().unwrap_or(0.0),
                    f["overhead_ms"].as_f64().unwrap_or(0.0)
                )
            })
            .unwrap_or_default();
        println!(
            "{:<8} {:<28} {:<20} {:>5} {:>10.2} {:>10.2} {:>10.2} {:>14}",
            r["scenario"].as_str().unwrap_or_default(),
            r["server"].as_str().unwrap_or_default(),
            r["subject"].as_str().unwrap_or_default(),
            s["runs"],
            s["median_ms"].as_f64().unwrap_or(0.0),
            s["p90_ms"].as_f64().unwrap_or(0.0),
            s["max_ms"].as_f64().unwrap_or(0.0),
            vs
        );
    }
    println!("\ntargets:");
    for t in targets {
        let limit = t["limit"].as_f64().unwrap_or(0.0);
        println!(
            "  [{}] {}: {:.2} {} (limit {} {})",
            if t["met"].as_bool().unwrap_or(false) {
                "met"
            } else {
                "MISSED"
            },
            t["target"].as_str().unwrap_or_default(),
            t["value"].as_f64().unwrap_or(0.0),
            t["unit"].as_str().unwrap_or_default(),
            if limit.fract() == 0.0 {
                format!("{limit}")
            } else {
                format!("{limit:.2}")
            },
            t["unit"].as_str().unwrap_or_default()
        );
    }
    println!("\nalso measured:");
    for m in measures {
        println!(
            "  {}: {:.3} {}",
            m["measure"].as_str().unwrap_or_default(),
            m["value"].as_f64().unwrap_or(0.0),
            m["unit"].as_str().unwrap_or_default()
        );
    }
    if !notes.is_empty() {
        println!("\nnot measured:");
        for note in notes {
            println!("  {note}");
        }
    }
}

/// What the numbers were measured on.
fn machine() -> Value {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_default();
    let memory_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0);
    json!({"cpus": cpus, "model": model, "memory_gib": memory_kib / 1024 / 1024, "os": std::env::consts::OS})
}
