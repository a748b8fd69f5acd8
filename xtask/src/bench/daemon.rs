//! The daemon scenario: `squiggle check` of an edited file through a warm daemon against the
//! definitive warm floor, the first call (which starts the daemon) against a one-shot check,
//! the daemon's own memory and idle CPU with 4 servers and many open documents, and the
//! servers left after `squiggle daemon stop`.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::json;

use super::load::{cpu_ticks, proc_status, Load};
use super::stats::Stats;
use super::{row, target, Plan, Results};

/// How many files one `squiggle check` names when the memory scenario opens documents.
const CHUNK: usize = 200;
/// The pause before each warm check, so that the daemon and its server start each from idle
/// (and the daemon's disk watcher has seen the previous write).
const PAUSE: Duration = Duration::from_millis(300);

/// The daemons of the scenario: their own runtime and state folders.
pub(super) struct Daemons {
    squiggle: PathBuf,
    runtime: PathBuf,
    state: PathBuf,
}

impl Daemons {
    /// Folders under `dir`, with no daemon running in them.
    pub(super) fn new(squiggle: &Path, dir: &Path) -> anyhow::Result<Self> {
        let runtime = dir.join("daemon-run");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&runtime)?;
        let daemons = Daemons {
            squiggle: squiggle.to_path_buf(),
            runtime,
            state: dir.join("daemon-state"),
        };
        daemons.stop_all()?;
        Ok(daemons)
    }

    /// `squiggle ARGS` in `root`, with the daemon on and in these folders.
    pub(super) fn command(&self, root: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(&self.squiggle);
        command
            .args(args)
            .current_dir(root)
            .env("SQUIGGLE_NO_DAEMON", "0")
            .env("SQUIGGLE_RUNTIME_DIR", &self.runtime)
            .env("XDG_STATE_HOME", &self.state)
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// Stops every daemon and waits for it to be gone.
    pub(super) fn stop_all(&self) -> anyhow::Result<()> {
        let status = self
            .command(Path::new("/"), &["daemon", "stop", "--all"])
            .stdout(Stdio::null())
            .status()?;
        if !status.success() {
            bail!("squiggle daemon stop --all failed");
        }
        Ok(())
    }

    /// The pids of the running daemons, as `squiggle daemon status` lists them, with the pids
    /// of their servers.
    pub(super) fn pids(&self) -> anyhow::Result<(Vec<u32>, Vec<u32>)> {
        let out = self
            .command(Path::new("/"), &["daemon", "status"])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let pid_after = |line: &str, tag: &str| -> Option<u32> {
            let rest = &line[line.find(tag)? + tag.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        let mut daemons = Vec::new();
        let mut servers = Vec::new();
        for line in text.lines() {
            if let Some(pid) = line
                .trim()
                .strip_prefix("pid ")
                .and_then(|l| pid_after(l, ""))
            {
                daemons.push(pid);
            } else if let Some(pid) = pid_after(line, ", pid ") {
                servers.push(pid);
            }
        }
        Ok((daemons, servers))
    }

    /// One `squiggle check FILE...` through the daemon: the time to its first printed byte
    /// (or to its exit when it prints nothing).
    pub(super) fn check(&self, root: &Path, files: &[&Path]) -> anyhow::Result<Duration> {
        use std::io::Read;
        let started = Instant::now();
        let mut child = self
            .command(root, &["check"])
            .args(files)
            .stdout(Stdio::piped())
            .spawn()?;
        let mut first = [0u8; 1];
        let read = child.stdout.take().context("no stdout")?.read(&mut first)?;
        let took = started.elapsed();
        let status = child.wait()?;
        if read == 0 && status.code() != Some(0) {
            bail!("squiggle check printed nothing and failed ({status})");
        }
        Ok(took)
    }
}

/// Whether a process runs (a zombie does not count).
pub(super) fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}

/// Measures the daemon scenario on the fake server; `one_shot` is the one-shot cold check and
/// `warm_floor` the definitive warm floor, both on the same server and file.
pub fn measure(
    load: &Load,
    squiggle: &Path,
    dir: &Path,
    plan: &Plan,
    one_shot: &Stats,
    warm_floor: &Stats,
    results: &mut Results<'_>,
) -> anyhow::Result<()> {
    let daemons = Daemons::new(squiggle, dir)?;
    let root = load.workspace(&dir.join("daemon-1"), 1, 0)?;
    let probe = load.probe(&root);
    let text = std::fs::read_to_string(&probe)?;

    // The first call: no daemon runs, so it starts one and asks it.
    let mut first = Vec::new();
    for _ in 0..plan.cold_runs {
        daemons.stop_all()?;
        first.push(daemons.check(&root, &[&probe])?);
    }
    let first = Stats::of(&first);
    results.rows.push(row(
        "first",
        load.label,
        "check, daemon",
        &first,
        Some(one_shot),
    ));
    let extra = first.median_ms - one_shot.median_ms;
    results.targets.push(target(
        "first squiggle check through the daemon, over a one-shot check (median)",
        extra,
        "ms",
        50.0,
        extra <= 50.0,
    ));

    // Second and later: the file is edited on disk, then checked through the warm daemon.
    let mut warm = Vec::new();
    for i in 0..plan.runs {
        std::thread::sleep(PAUSE);
        std::fs::write(&probe, format!("{text}ERROR edit {i}\n"))?;
        warm.push(daemons.check(&root, &[&probe])?);
    }
    let warm = Stats::of(&warm);
    results.rows.push(row(
        "warm",
        load.label,
        "check, daemon",
        &warm,
        Some(warm_floor),
    ));
    let limit = 1.2 * warm_floor.median_ms + 15.0;
    results.targets.push(target(
        "later squiggle check of an edited file through the daemon (median; limit 1.2 x the warm floor + 15 ms)",
        warm.median_ms,
        "ms",
        limit,
        warm.median_ms <= limit,
    ));
    std::fs::write(&probe, &text)?;
    let (_, servers) = daemons.pids()?;
    daemons.stop_all()?;
    let left = servers.iter().filter(|pid| is_alive(**pid)).count();
    results.targets.push(target(
        "servers left after squiggle daemon stop",
        left as f64,
        "processes",
        0.0,
        left == 0 && !servers.is_empty(),
    ));

    // Memory and idle CPU of the daemon itself, with 4 servers and many open documents.
    let docs = plan.memory_docs;
    let many = load.workspace(&dir.join("daemon-memory"), 4, docs)?;
    // Every document stays open (the default keeps 200 per server).
    let config = std::fs::read_to_string(many.join("squiggle.toml"))?;
    super::fixture::write_config(&many, &format!("max_open_documents = {docs}\n{config}"))?;
    // One file per call, as hooks ask after each edit; then every file again in calls of
    // CHUNK files at once (a folder check), whose in-flight texts raise the peak.
    let files: Vec<PathBuf> = (0..docs).map(|n| load.file(&many, n)).collect();
    for file in &files {
        daemons.check(&many, &[file])?;
    }
    let (pids, servers) = daemons.pids()?;
    let [pid] = pids[..] else {
        bail!("expected one daemon, found {pids:?}");
    };
    let rss_mib =
        proc_status(pid, "VmHWM:").context("cannot read the daemon's RSS")? as f64 / 1024.0;
    for chunk in files.chunks(CHUNK) {
        let names: Vec<&Path> = chunk.iter().map(PathBuf::as_path).collect();
        daemons.check(&many, &names)?;
    }
    let peak_mib = proc_status(pid, "VmHWM:").unwrap_or(0) as f64 / 1024.0;
    let before = cpu_ticks(pid)?;
    std::thread::sleep(Duration::from_secs(2));
    let idle_ticks = cpu_ticks(pid)? - before;
    results.targets.push(target(
        &format!(
            "peak RSS of the daemon itself ({} x4, {docs} open documents, one per call)",
            load.label
        ),
        rss_mib,
        "MiB",
        30.0,
        rss_mib < 30.0,
    ));
    results.measures.push(json!({
        "measure": format!(
            "peak RSS of the daemon ({} x4, {docs} open documents, then {CHUNK} files per call)",
            load.label
        ),
        "value": peak_mib, "unit": "MiB",
    }));
    results.targets.push(target(
        "CPU ticks of an idle daemon over 2 s",
        idle_ticks as f64,
        "ticks",
        0.0,
        idle_ticks == 0,
    ));
    daemons.stop_all()?;
    let left = servers.iter().filter(|pid| is_alive(**pid)).count();
    results.targets.push(target(
        "servers left after squiggle daemon stop (4 servers)",
        left as f64,
        "processes",
        0.0,
        left == 0 && servers.len() == 4,
    ));
    Ok(())
}
