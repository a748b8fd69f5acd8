//! The fleet scenario (issue 26): many workspaces through the daemon, as agents in throwaway
//! checkouts and worktrees make them. 30 throwaway 30-file fake-server workspaces checked one
//! after another, each deleted right after its check: the peak and final resident memory of
//! every squiggle daemon and server, and how many are left 10 s after the last deletion
//! (target 0). Then 4 worktree-like workspaces checked round-robin with a warm budget of 2
//! workspaces, and for comparison of 4: check latency and peak memory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::daemon::{is_alive, Daemons};
use super::load::{proc_status, Load};
use super::stats::Stats;
use super::{row, target, Plan, Results};

/// How many throwaway workspaces.
const THROWAWAY: usize = 30;
/// How many files each has.
const FILES: usize = 30;
/// How many worktree-like workspaces are checked round-robin.
const TREES: usize = 4;
/// How long after the last deletion the processes left are counted.
const SETTLE: Duration = Duration::from_secs(10);
/// How long the daemons may take to fit the budget after a check.
const FIT_LIMIT: Duration = Duration::from_secs(10);
/// How often the memory is sampled.
const SAMPLE: Duration = Duration::from_millis(100);

/// The running daemons of the `squiggle` binary and all their descendants (servers).
fn fleet(squiggle: &Path) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    let mut daemons = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return daemons;
    };
    let exe = squiggle.as_os_str().as_encoded_bytes();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(parent) = (stat.rsplit_once(')'))
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok())
        {
            parents.push((pid, parent));
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if args.first() == Some(&exe)
            && args.windows(2).any(|w| w[0] == b"daemon" && w[1] == b"run")
        {
            daemons.push(pid);
        }
    }
    let mut all = daemons.clone();
    let mut at = 0;
    while at < all.len() {
        let parent = all[at];
        all.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        at += 1;
    }
    all.retain(|pid| is_alive(*pid));
    all
}

/// The resident memory of processes, in MiB.
fn rss_mib(pids: &[u32]) -> f64 {
    let kib: u64 = pids.iter().filter_map(|p| proc_status(*p, "VmRSS:")).sum();
    kib as f64 / 1024.0
}

/// Samples the fleet's memory in the background until dropped; keeps the peak.
struct Sampler {
    peak_kib: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    fn start(squiggle: &Path) -> Self {
        let peak_kib = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (peak, done, squiggle) = (peak_kib.clone(), stop.clone(), squiggle.to_path_buf());
        let thread = std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let now = (rss_mib(&fleet(&squiggle)) * 1024.0) as u64;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(SAMPLE);
            }
        });
        Sampler {
            peak_kib,
            stop,
            thread: Some(thread),
        }
    }

    /// The peak so far, in MiB.
    fn peak_mib(&self) -> f64 {
        self.peak_kib.load(Ordering::SeqCst) as f64 / 1024.0
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Measures the fleet scenario on the fake server.
pub fn measure(
    load: &Load,
    squiggle: &Path,
    dir: &Path,
    plan: &Plan,
    results: &mut Results<'_>,
) -> anyhow::Result<()> {
    let daemons = Daemons::new(squiggle, dir)?;
    throwaway(load, squiggle, dir, &daemons, results)?;
    let rounds = if plan.quick { 5 } else { 20 };
    for budget in [2, TREES] {
        round_robin(load, squiggle, dir, &daemons, rounds, budget, results)?;
    }
    daemons.stop_all()
}

/// 30 throwaway workspaces, each checked through the daemon and deleted right after.
fn throwaway(
    load: &Load,
    squiggle: &Path,
    dir: &Path,
    daemons: &Daemons,
    results: &mut Results<'_>,
) -> anyhow::Result<()> {
    let base = dir.join("fleet-throwaway");
    let _ = std::fs::remove_dir_all(&base);
    let sampler = Sampler::start(squiggle);
    let mut checks = Vec::new();
    for n in 0..THROWAWAY {
        let root = load.workspace(&base.join(format!("ws-{n:02}")), 1, FILES)?;
        checks.push(daemons.check(&root, &[&load.probe(&root)])?);
        std::fs::remove_dir_all(&root)?;
    }
    let at_end = fleet(squiggle);
    let end_mib = rss_mib(&at_end);
    std::thread::sleep(SETTLE);
    let left = fleet(squiggle);
    let final_mib = rss_mib(&left);
    let peak = sampler.peak_mib().max(end_mib);
    drop(sampler);
    results.rows.push(row(
        "fleet",
        load.label,
        "throwaway check, daemon",
        &Stats::of(&checks),
        None,
    ));
    results.measures.push(json!({
        "measure": format!("peak RSS of all daemons and servers, {THROWAWAY} throwaway {FILES}-file workspaces checked and deleted in turn"),
        "value": peak, "unit": "MiB",
    }));
    results.measures.push(json!({
        "measure": format!("RSS of all daemons and servers right after the last deletion ({} processes)", at_end.len()),
        "value": end_mib, "unit": "MiB",
    }));
    results.measures.push(json!({
        "measure": format!("RSS of all daemons and servers {}s after the last deletion", SETTLE.as_secs()),
        "value": final_mib, "unit": "MiB",
    }));
    results.targets.push(target(
        &format!(
            "daemons and servers left {}s after the last of {THROWAWAY} throwaway workspaces was deleted",
            SETTLE.as_secs()
        ),
        left.len() as f64,
        "processes",
        0.0,
        left.is_empty(),
    ));
    Ok(())
}

/// `TREES` worktree-like workspaces checked round-robin (an edit, then a check) with a warm
/// budget of `budget` workspaces.
fn round_robin(
    load: &Load,
    squiggle: &Path,
    dir: &Path,
    daemons: &Daemons,
    rounds: usize,
    budget: usize,
    results: &mut Results<'_>,
) -> anyhow::Result<()> {
    daemons.stop_all()?;
    let base = dir.join(format!("fleet-trees-{budget}"));
    let _ = std::fs::remove_dir_all(&base);
    let mut trees: Vec<PathBuf> = Vec::new();
    for n in 0..TREES {
        let root = load.workspace(&base.join(format!("tree-{n}")), 1, FILES)?;
        let config = std::fs::read_to_string(root.join("squiggle.toml"))?;
        super::fixture::write_config(
            &root,
            &format!("daemon_max_workspaces = {budget}\n{config}"),
        )?;
        trees.push(root);
    }
    let sampler = Sampler::start(squiggle);
    let mut checks = Vec::new();
    // After each check, how long until the daemons fit the budget (the eviction follows the
    // check's answer, and a stopping daemon lets its servers shut down first).
    let mut to_fit = Vec::new();
    let mut over = 0;
    for round in 0..rounds {
        for root in &trees {
            let probe = load.probe(root);
            std::fs::write(&probe, format!("ERROR edit {round}\n"))?;
            let took = daemons.check(root, &[&probe])?;
            // The first round starts every daemon: not a later check.
            if round > 0 {
                checks.push(took);
            }
            let answered = Instant::now();
            loop {
                let (pids, _) = daemons.pids()?;
                if pids.len() <= budget {
                    to_fit.push(answered.elapsed());
                    break;
                }
                if answered.elapsed() > FIT_LIMIT {
                    over += 1;
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let peak = sampler.peak_mib();
    drop(sampler);
    let stats = Stats::of(&checks);
    results.rows.push(row(
        "fleet",
        load.label,
        &format!("{TREES} trees round-robin, budget {budget}"),
        &stats,
        None,
    ));
    results.measures.push(json!({
        "measure": format!("peak RSS of all daemons and servers, {TREES} trees round-robin, budget {budget}"),
        "value": peak, "unit": "MiB",
    }));
    let fit = Stats::of(&to_fit);
    for (which, value) in [("median", fit.median_ms), ("max", fit.max_ms)] {
        results.measures.push(json!({
            "measure": format!("time from a check's answer until the daemons fit the budget, {TREES} trees round-robin, budget {budget} ({which})"),
            "value": value, "unit": "ms",
        }));
    }
    results.targets.push(target(
        &format!(
            "checks after which the daemons did not fit the budget within {}s, {TREES} trees round-robin, budget {budget}",
            FIT_LIMIT.as_secs()
        ),
        over as f64,
        "checks",
        0.0,
        over == 0,
    ));
    daemons.stop_all()?;
    let _ = std::fs::remove_dir_all(&base);
    Ok(())
}
