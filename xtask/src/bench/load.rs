//! The load scenarios, on one kind of server (the fake server or ruff): the burst (64 concurrent
//! checks against the push floor's same burst, taking turns), growth (the warm check with up to
//! 1,000 documents open), memory (peak RSS of `squiggle serve`) and idle CPU.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::json;

use super::peer::Peer;
use super::stats::{self, Stats};
use super::{check, floor, row, serve, shutdown, target, variant, Plan, Results, LIMIT};

/// The burst: this many files, each changed this many times at once, 64 checks in all.
const FILES: usize = 16;
const ROUNDS: usize = 4;

/// A kind of server the load scenarios (burst, growth, memory) run on. Its workspaces hold files
/// `f0000.<ext>`, ... with ten errors each, and a probe `a.<ext>` with one.
pub struct Load {
    /// How the table names it.
    pub label: &'static str,
    /// The files' extension.
    pub ext: &'static str,
    /// Their LSP language id, for the floor.
    pub language: &'static str,
    /// The server's program and arguments.
    pub program: PathBuf,
    pub args: &'static [&'static str],
}

impl Load {
    /// A workspace with `files` files served by `servers` instances of the server, settle 0.
    pub fn workspace(&self, dir: &Path, servers: usize, files: usize) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let mut config = String::from(
            "settle_ms = 0\ndiagnostic_timeout_ms = 30000\nfirst_touch_timeout_ms = 30000\n",
        );
        // Only the numbered servers below: every built-in stays off.
        config.push_str(&super::fixture::turned_off(&super::fixture::builtins_but(
            "",
        )));
        let args: Vec<String> = self.args.iter().map(|a| a.to_string()).collect();
        for n in 0..servers {
            config.push_str(&format!(
                "[servers.{}{n}]\ncommand = {:?}\nargs = {args:?}\nextensions = [{:?}]\n",
                self.label,
                self.program.display().to_string(),
                self.ext
            ));
        }
        super::fixture::write_config(dir, &config)?;
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

    pub fn file(&self, root: &Path, n: usize) -> PathBuf {
        root.join(format!("f{n:04}.{}", self.ext))
    }

    pub fn probe(&self, root: &Path) -> PathBuf {
        root.join(format!("a.{}", self.ext))
    }
}

/// The burst, growth and memory scenarios on one kind of server; returns the CPU ticks an idle
/// `squiggle serve` used afterwards.
pub fn measure_load(
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

pub fn proc_status(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User + system CPU ticks a process has used.
pub fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
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
