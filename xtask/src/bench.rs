//! `cargo xtask bench`: end-to-end benchmarks of squiggle against the floor (a minimal raw LSP
//! client on the same server, file and machine, in the same run), with a table on stdout and
//! `target/bench/report.json`. `--quick` runs fewer repetitions and smaller sizes.
//!
//! Cold and warm checks are measured against the definitive floor (`final_floor`: the raw
//! client's time to the server's final answer, no quiet time); the burst against the push floor
//! (`floor`: each change's first publish); the false-clean rate on real-size projects.

pub(crate) mod agent_loop;
mod answers;
mod catalog;
mod daemon;
mod false_clean;
mod final_floor;
pub(crate) mod fixture;
mod fleet;
mod floor;
mod load;
mod load_run;
mod own_text;
mod peer;
mod soak;
mod stats;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use catalog::{expected_text, on_path, real_projects, real_servers, typescript_7};
use final_floor::{Launch, Signal};
use load::{measure_load, Load};
use peer::Peer;
use stats::Stats;

/// How long any single request may take.
const LIMIT: Duration = Duration::from_secs(60);

/// How long the floor waits after the fake server's last publish for a version to know it was
/// the last (the time is taken at the publish, not after this wait): a thousand times its
/// round trip. squiggle's warm checks on it pause as long before each run, so that both sides
/// start each change from the same idle state.
const GENEROUS: Duration = Duration::from_millis(100);

/// The size of each text in the load run past the backlog bound: 1,000 of them are about 250
/// MiB for each server, past the 64 MiB squiggle lets wait for one server.
const BEYOND_PAD: usize = 256 * 1024;

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
    /// Changed-text checks in the soak run.
    soak_checks: usize,
}

/// Builds the release binaries of `packages`.
fn build_release(workspace: &Path, packages: &[&str]) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut build = Command::new(&cargo);
    build.args(["build", "--release", "--quiet"]);
    for package in packages {
        build.args(["--package", package]);
    }
    let status = build
        .current_dir(workspace)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("the release build failed");
    }
    Ok(())
}

/// Builds release binaries and runs the measurements with them.
pub fn run(workspace: &Path, quick: bool) -> anyhow::Result<()> {
    build_release(workspace, &["squiggle", "xtask", "squiggle-fake-lsp"])?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
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

/// Runs every scenario (with release binaries, built first) and reports; with `loop_seed`,
/// only the agent loop, its edits picked from that seed.
pub fn measure(
    workspace: &Path,
    quick: bool,
    only_load: bool,
    daemon_only: bool,
    fleet_only: bool,
    agent_loop: Option<(u64, agent_loop::Door)>,
    only_server: Option<&str>,
) -> anyhow::Result<()> {
    let plan = Plan {
        quick,
        runs: if quick { 20 } else { 100 },
        cold_runs: if quick { 5 } else { 15 },
        false_clean_runs: if quick { 3 } else { 20 },
        bursts: if quick { 9 } else { 101 },
        growth: vec![1, 10, 100, 1000],
        memory_docs: if quick { 100 } else { 1000 },
        soak_checks: if quick { 1000 } else { 10_000 },
    };
    // The binaries measured are the tree's as it is now, never an older build's.
    build_release(workspace, &["squiggle", "squiggle-fake-lsp"])?;
    let bin = workspace.join("target/release");
    let squiggle = bin.join("squiggle");
    let fake_lsp = bin.join("fake-lsp");
    let dir = workspace.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    // Children (squiggle and the floor's servers) find the installed servers on PATH.
    let path = crate::lsp_servers::path_with_servers(workspace)?;
    std::env::set_var("PATH", &path);
    let ruff = on_path(&path, "ruff");
    if fleet_only {
        return self::fleet_only(&plan, &squiggle, &fake_lsp, &dir);
    }
    if let Some((seed, door)) = agent_loop {
        return self::loop_only(&plan, (seed, door), workspace, &squiggle, &dir, only_server);
    }
    if only_load {
        return load_only(&plan, &squiggle, &fake_lsp, &dir, ruff);
    }
    if let Some(label) = only_server {
        // `bench-run --server LABEL`: one real server's cold and warm rows and false cleans.
        let (mut rows, mut targets, mut measures, mut notes) = Default::default();
        let mut results = Results {
            rows: &mut rows,
            targets: &mut targets,
            measures: &mut measures,
        };
        let only = |name: &str| name.starts_with(label);
        real_servers_and_projects(
            workspace,
            &squiggle,
            &dir,
            &plan,
            only,
            &mut results,
            &mut notes,
        )?;
        print_table(&rows, &targets, &measures, &notes);
        return Ok(());
    }

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
        program: fake_lsp.clone(),
        args: &[],
    };
    let one = fake.workspace(&dir.join("fake-1"), 1, 0)?;
    let file = fake.probe(&one);
    // Push only: its last publish for the version is its final answer.
    let fake_signal = Signal::LastPublish { generous: GENEROUS };
    let fake_floor = Launch {
        program: &fake.program,
        args: fake.args,
        language: fake.language,
        signal: fake_signal,
    };
    let cold_floor = repeat(plan.cold_runs, || {
        final_floor::cold(fake_floor, &one, &file)
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

    let warm_floor = time_warm_floor(fake_floor, &one, &file, plan.runs)?;
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
    // The daemon behind `squiggle check`, on the same fake server and file.
    daemon::measure(
        &fake,
        &squiggle,
        &dir,
        &plan,
        &cold_check,
        &warm_floor,
        &mut results,
    )?;
    fleet::measure(&fake, &squiggle, &dir, &plan, &mut results)?;
    if daemon_only {
        // `bench-run --daemon-only`: the fake server's cold and warm rows and the daemon.
        print_table(&rows, &targets, &measures, &notes);
        return Ok(());
    }
    real_servers_and_projects(
        workspace,
        &squiggle,
        &dir,
        &plan,
        |_| true,
        &mut results,
        &mut notes,
    )?;

    // Burst, growth and memory: on the fake server, then on ruff.
    let idle_ticks = measure_load(&fake, &plan, &squiggle, &dir, &mut results)?;
    // The load run (1,000 concurrent checks; again past the backlog bound) and the soak
    // (changed-text checks) on 4 fake servers; the load run on ruff too.
    load_run::measure(&fake, &squiggle, &dir, 0, &mut results)?;
    load_run::measure(&fake, &squiggle, &dir, BEYOND_PAD, &mut results)?;
    soak::measure(&fake, &squiggle, &dir, plan.soak_checks, &mut results)?;
    if let Some(ruff) = &ruff {
        let ruff = Load {
            label: "ruff",
            ext: "py",
            language: "python",
            program: ruff.clone(),
            args: &["server"],
        };
        measure_load(&ruff, &plan, &squiggle, &dir, &mut results)?;
        load_run::measure(&ruff, &squiggle, &dir, 0, &mut results)?;
    } else {
        notes.push("burst, growth, memory and the load run on ruff: not measured: ruff is not installed (cargo xtask install-servers)".to_string());
    }
    results.targets.push(target(
        "CPU ticks of an idle squiggle serve over 2 s",
        idle_ticks as f64,
        "ticks",
        0.0,
        idle_ticks == 0,
    ));

    report(&dir.join("report.json"), plan.quick, &results, &notes)
}

/// The real servers' cold and warm rows against their definitive floor, and the false cleans
/// of cold runs on the real-size projects, for the servers and projects `only` keeps.
fn real_servers_and_projects(
    workspace: &Path,
    squiggle: &Path,
    dir: &Path,
    plan: &Plan,
    only: impl Fn(&str) -> bool,
    results: &mut Results<'_>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let typescript_7 = typescript_7(workspace);
    let (servers, mut missing) = real_servers(&path, &typescript_7);
    notes.append(&mut missing);
    for server in servers.iter().filter(|server| only(server.label)) {
        let runs = (plan.cold_runs, (plan.runs / 4).max(5));
        answers::measure(server, workspace, squiggle, dir, runs, results)?;
    }

    // False cleans: cold runs on the real-size projects.
    let (projects, mut missing) = real_projects(&path, &typescript_7);
    notes.append(&mut missing);
    for project in projects.into_iter().filter(|project| only(project.label)) {
        let outcome =
            false_clean::measure(&project, workspace, squiggle, dir, plan.false_clean_runs)?;
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
    Ok(())
}

/// `bench-run --loop [--seed N] [--server LABEL]`: the agent loop on each real project (those
/// whose label starts with LABEL; 20 edits from `seed`, 5 with `--quick`), with the other-files
/// search and without it (the edited file alone, for comparison); the rows
/// and the targets go to target/bench/loop-report.json.
fn loop_only(
    plan: &Plan,
    (seed, door): (u64, agent_loop::Door),
    workspace: &Path,
    squiggle: &Path,
    dir: &Path,
    only: Option<&str>,
) -> anyhow::Result<()> {
    let edits = if plan.quick { 5 } else { 20 };
    let (mut projects, notes) = agent_loop::projects(workspace, dir);
    projects.retain(|project| only.is_none_or(|only| project.label.starts_with(only)));
    let mut rows = Vec::new();
    let mut targets = Vec::new();
    for project in &projects {
        // The loop's (with the search) median and p90, then the edited file's alone.
        let mut medians = [0.0; 2];
        let mut p90s = [0.0; 2];
        for dependents in [true, false] {
            let plan = agent_loop::Plan {
                count: edits,
                kinds: &agent_loop::KINDS,
                seed,
                dependents,
                door,
            };
            let tally = agent_loop::run(project, workspace, squiggle, dir, plan)?;
            let variant = match (dependents, door) {
                (true, agent_loop::Door::ClaudeCode) => "loop",
                (true, agent_loop::Door::NextAnswer) => "loop, next answer",
                (false, _) => "edited file only",
            };
            let row = tally.row(&project.label, variant);
            eprintln!("xtask: {row}");
            let median = row["hook_median_ms"].as_f64().unwrap_or_default();
            medians[usize::from(!dependents)] = median;
            p90s[usize::from(!dependents)] = row["hook_p90_ms"].as_f64().unwrap_or_default();
            if dependents {
                let failures = tally.failures();
                targets.push(target(
                    &format!("agent loop on {}: no false clean, false or stale error, 90% of broken files named", project.label),
                    failures.len() as f64,
                    "misses",
                    0.0,
                    failures.is_empty(),
                ));
            }
            rows.push(row);
        }
        targets.extend(loop_latency_targets(&project.label, medians, p90s));
    }
    let report = json!({"machine": machine(), "rows": rows, "targets": targets, "notes": notes});
    let out = dir.join("loop-report.json");
    std::fs::write(&out, serde_json::to_string_pretty(&report)?)?;
    for row in &rows {
        println!(
            "{:<36} {:<16} edits {:>2} hits {:>2} clean {:>2} partial {} false-clean {} false/stale {} not-checked {} stale-after-revert {} revert-not-checked {} broken {:>2} named {:>2} (later {}) missed-silently {} said-unchecked {:>2} blamed-wrongly {} median {:>7.1} ms p90 {:>7.1} ms later median {:>7.1} ms",
            row["project"].as_str().unwrap_or_default(),
            row["variant"].as_str().unwrap_or_default(),
            row["edits"], row["hits"], row["clean"], row["partial"], row["false_clean"],
            row["false_or_stale_errors"], row["not_checked"], row["stale_after_revert"], row["reverts_not_checked"],
            row["other_files_broken"], row["other_files_named"], row["other_files_named_later"], row["other_files_missed_silently"],
            row["edits_saying_importers_unchecked"], row["other_files_blamed_wrongly"],
            row["hook_median_ms"].as_f64().unwrap_or_default(),
            row["hook_p90_ms"].as_f64().unwrap_or_default(),
            row["later_hook_median_ms"].as_f64().unwrap_or_default(),
        );
    }
    for target in &targets {
        println!(
            "target: {} {}: {:.2} {} (limit {})",
            if target["met"].as_bool().unwrap_or_default() {
                "met"
            } else {
                "NOT MET"
            },
            target["target"].as_str().unwrap_or_default(),
            target["value"].as_f64().unwrap_or_default(),
            target["unit"].as_str().unwrap_or_default(),
            target["limit"],
        );
    }
    for note in &notes {
        println!("note: {note}");
    }
    println!("report: {}", out.display());
    Ok(())
}

/// The latency targets for the loop on `label`: the hook's median with the other-files search
/// at most 1.15 times the edited file's alone and its p90 at most 1.3 times (`medians`, `p90s`:
/// with the search, without), and under 1 s on the TypeScript and Python projects.
fn loop_latency_targets(label: &str, medians: [f64; 2], p90s: [f64; 2]) -> [Value; 3] {
    let ratio = match medians[1] > 0.0 {
        true => medians[0] / medians[1],
        false => f64::INFINITY,
    };
    let p90_ratio = match p90s[1] > 0.0 {
        true => p90s[0] / p90s[1],
        false => f64::INFINITY,
    };
    // rust-analyzer's answer is `cargo check`'s: no second bound under it.
    let p90_limit = match label.contains("rust-analyzer") {
        true => f64::INFINITY,
        false => 1000.0,
    };
    [
        target(
            &format!("agent loop on {label}: hook median at most 1.15x the edited file's alone"),
            ratio,
            "x",
            1.15,
            ratio <= 1.15,
        ),
        target(
            &format!("agent loop on {label}: hook p90 at most 1.3x the edited file's alone"),
            p90_ratio,
            "x",
            1.3,
            p90_ratio <= 1.3,
        ),
        target(
            &format!("agent loop on {label}: hook p90 under 1 s (TypeScript, Python)"),
            p90s[0],
            "ms",
            p90_limit,
            p90s[0] < p90_limit,
        ),
    ]
}

/// Prints the table of `results` and `notes`, and writes them with the machine to `out`.
fn report(out: &Path, quick: bool, results: &Results, notes: &[String]) -> anyhow::Result<()> {
    print_table(results.rows, results.targets, results.measures, notes);
    let report = json!({
        "machine": machine(),
        "quick": quick,
        "rows": results.rows,
        "targets": results.targets,
        "measures": results.measures,
        "notes": notes,
    });
    std::fs::write(out, serde_json::to_string_pretty(&report)?)?;
    println!("\nreport: {}", out.display());
    Ok(())
}

/// `bench-run --load-only`: the load run and the soak alone (on 4 fake servers; the load run on
/// 4 ruff too when installed), with the table, and `target/bench/load-report.json`.
fn load_only(
    plan: &Plan,
    squiggle: &Path,
    fake_lsp: &Path,
    dir: &Path,
    ruff: Option<std::path::PathBuf>,
) -> anyhow::Result<()> {
    let (mut rows, mut targets, mut measures) = (Vec::new(), Vec::new(), Vec::new());
    let mut results = Results {
        rows: &mut rows,
        targets: &mut targets,
        measures: &mut measures,
    };
    let fake = Load {
        label: "fake",
        ext: "fake",
        language: "fake",
        program: fake_lsp.to_path_buf(),
        args: &[],
    };
    load_run::measure(&fake, squiggle, dir, 0, &mut results)?;
    load_run::measure(&fake, squiggle, dir, BEYOND_PAD, &mut results)?;
    soak::measure(&fake, squiggle, dir, plan.soak_checks, &mut results)?;
    if let Some(program) = ruff {
        let ruff = Load {
            label: "ruff",
            ext: "py",
            language: "python",
            program,
            args: &["server"],
        };
        load_run::measure(&ruff, squiggle, dir, 0, &mut results)?;
    }
    report(&dir.join("load-report.json"), plan.quick, &results, &[])
}

/// `bench-run --fleet`: the fleet scenario alone (throwaway workspaces and worktrees through
/// the daemon, on the fake server), with the table, and `target/bench/fleet-report.json`.
fn fleet_only(plan: &Plan, squiggle: &Path, fake_lsp: &Path, dir: &Path) -> anyhow::Result<()> {
    let (mut rows, mut targets, mut measures) = (Vec::new(), Vec::new(), Vec::new());
    let mut results = Results {
        rows: &mut rows,
        targets: &mut targets,
        measures: &mut measures,
    };
    let fake = Load {
        label: "fake",
        ext: "fake",
        language: "fake",
        program: fake_lsp.to_path_buf(),
        args: &[],
    };
    fleet::measure(&fake, squiggle, dir, plan, &mut results)?;
    report(&dir.join("fleet-report.json"), plan.quick, &results, &[])
}

/// The rows, targets and other numbers of a run.
struct Results<'a> {
    rows: &'a mut Vec<Value>,
    targets: &'a mut Vec<Value>,
    measures: &'a mut Vec<Value>,
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

/// One cold (one-shot) `squiggle check`: from process start to the first byte of its output.
fn time_cold_check(squiggle: &Path, root: &Path, file: &Path) -> anyhow::Result<Duration> {
    use std::io::Read;
    let started = Instant::now();
    let mut child = Command::new(squiggle)
        .args(["check", "--no-daemon"])
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
    server: Launch<'_>,
    root: &Path,
    file: &Path,
    runs: usize,
) -> anyhow::Result<Stats> {
    let text = std::fs::read_to_string(file)?;
    let (mut floor, _) = final_floor::FinalFloor::start_open(server, root, file, &text)?;
    let timings = (0..runs)
        .map(|i| floor.change(&variant(&text, i, "#")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    floor.stop();
    Ok(Stats::of(&timings))
}

/// Warm checks through the embedding API: `Squiggle::check_file` in this process, on a
/// runtime like the binary's (two workers); each run appends a different line comment
/// (starting with `comment`), after `pause`.
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
            number(limit, 2),
            t["unit"].as_str().unwrap_or_default()
        );
    }
    println!("\nalso measured:");
    for m in measures {
        let value = m["value"].as_f64().unwrap_or(0.0);
        println!(
            "  {}: {} {}",
            m["measure"].as_str().unwrap_or_default(),
            number(value, 3),
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

/// A number as the table shows it: whole ones without decimals, others with `places`.
fn number(value: f64, places: usize) -> String {
    if value.fract() == 0.0 {
        format!("{value}")
    } else {
        format!("{value:.places$}")
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
