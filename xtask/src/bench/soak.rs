//! The soak run: 10,000 changed-text `squiggle/checkFile` requests (1,000 with `--quick`), 4 at
//! a time on 4 different files of 100, each served by 4 servers, through one `squiggle serve`.
//! It reports serve's RSS, open file descriptors and threads at the start (after one check of
//! every file) and the end, sampled every 1,000 checks, and judges every answer against its own
//! text ([`own_text`]). There is no growth target; RSS growth over 10 MiB is flagged as a miss.

use std::path::Path;

use anyhow::Context;
use serde_json::json;

use super::load::{proc_status, Load};
use super::own_text::{judge, text, Tally};
use super::peer::Peer;
use super::{check, serve, shutdown, target, Results, LIMIT};

const FILES: usize = 100;
/// Requests in flight at once (on different files).
const AT_ONCE: usize = 4;
/// Samples every this many checks.
const EVERY: usize = 1000;
/// RSS growth from start to end above which the run is flagged.
const GROWTH_FLAG_MIB: f64 = 10.0;

/// What serve holds at one moment.
#[derive(Debug, Clone, Copy)]
struct Sample {
    checks: usize,
    rss_kib: u64,
    fds: usize,
    threads: u64,
}

impl Sample {
    fn of(pid: u32, checks: usize) -> anyhow::Result<Self> {
        Ok(Self {
            checks,
            rss_kib: proc_status(pid, "VmRSS:").context("cannot read VmRSS")?,
            fds: std::fs::read_dir(format!("/proc/{pid}/fd"))?.count(),
            threads: proc_status(pid, "Threads:").context("cannot read Threads")?,
        })
    }

    fn json(&self) -> serde_json::Value {
        json!({"checks": self.checks, "rss_mib": self.rss_kib as f64 / 1024.0, "fds": self.fds, "threads": self.threads})
    }
}

/// Runs `checks` changed-text checks and adds the soak's targets and measures.
pub fn measure(
    load: &Load,
    squiggle: &Path,
    dir: &Path,
    checks: usize,
    results: &mut Results<'_>,
) -> anyhow::Result<()> {
    let label = format!("{} x4", load.label);
    let root = load.workspace(&dir.join(format!("{}-soak", load.label)), 4, FILES)?;
    let files: Vec<_> = (0..FILES).map(|n| load.file(&root, n)).collect();
    let mut peer = serve(squiggle, &root)?;
    for file in &files {
        check(&mut peer, file, &std::fs::read_to_string(file)?)?;
    }
    let pid = peer.pid();
    let mut samples = vec![Sample::of(pid, 0)?];
    let mut tally = Tally::default();
    let mut n = 0;
    while n < checks {
        let batch: Vec<usize> = (n..(n + AT_ONCE).min(checks)).collect();
        send_and_judge(&mut peer, load.ext, &files, &batch, &mut tally)?;
        n += batch.len();
        if n % EVERY == 0 || n == checks {
            samples.push(Sample::of(pid, n)?);
        }
    }
    let peak_kib = proc_status(pid, "VmHWM:").unwrap_or(0);
    shutdown(peer)?;

    let (start, end) = (samples[0], samples[samples.len() - 1]);
    let growth_mib = (end.rss_kib as f64 - start.rss_kib as f64) / 1024.0;
    let summary = format!(
        "soak ({label}, {checks} changed-text checks, {AT_ONCE} at a time over {FILES} files): RSS {:.1} -> {:.1} MiB ({growth_mib:+.1}), fds {} -> {}, threads {} -> {}; {} answered, {} not checked, {} wrong, {} errors",
        start.rss_kib as f64 / 1024.0,
        end.rss_kib as f64 / 1024.0,
        start.fds,
        end.fds,
        start.threads,
        end.threads,
        tally.right,
        tally.not_checked_total(),
        tally.wrong.len(),
        tally.errors.len(),
    );
    println!("{summary}");
    for (reason, count) in &tally.not_checked {
        println!("  not checked ({count}): {reason}");
    }
    for wrong in tally.wrong.iter().take(5) {
        println!("  WRONG: {wrong}");
    }

    let mut growth = target(
        &format!(
            "soak ({label}, {checks} changed-text checks): RSS of squiggle serve, end minus start"
        ),
        growth_mib,
        "MiB",
        GROWTH_FLAG_MIB,
        growth_mib <= GROWTH_FLAG_MIB,
    );
    growth["samples"] = json!(samples.iter().map(Sample::json).collect::<Vec<_>>());
    growth["peak_rss_mib"] = json!(peak_kib as f64 / 1024.0);
    growth["answers"] = json!({
        "answered": tally.right,
        "not_checked_by_reason": tally.not_checked,
        "wrong": tally.wrong.iter().take(20).collect::<Vec<_>>(),
        "errors": tally.errors.iter().take(20).collect::<Vec<_>>(),
        "summary": summary,
    });
    results.targets.push(growth);
    results.targets.push(target(
        &format!("soak ({label}): wrong answers or errors"),
        (tally.wrong.len() + tally.errors.len()) as f64,
        &format!("of {checks}"),
        0.0,
        tally.wrong.is_empty() && tally.errors.is_empty(),
    ));
    let measures = [
        ("RSS at the start", start.rss_kib as f64 / 1024.0, "MiB"),
        ("RSS at the end", end.rss_kib as f64 / 1024.0, "MiB"),
        ("open fds, start", start.fds as f64, "fds"),
        ("open fds, end", end.fds as f64, "fds"),
        ("threads, start", start.threads as f64, "threads"),
        ("threads, end", end.threads as f64, "threads"),
        ("not checked", tally.not_checked_total() as f64, "checks"),
    ];
    for (what, value, unit) in measures {
        results.measures.push(json!({
            "measure": format!("soak ({label}): {what}"),
            "value": value,
            "unit": unit,
        }));
    }
    Ok(())
}

/// Sends checks `batch` (text `n` on file `n % FILES`) at once and judges their answers.
fn send_and_judge(
    peer: &mut Peer,
    ext: &str,
    files: &[std::path::PathBuf],
    batch: &[usize],
    tally: &mut Tally,
) -> anyhow::Result<()> {
    let mut ids = Vec::new();
    for &n in batch {
        let params = json!({"filePath": files[n % FILES], "text": text(ext, n)});
        ids.push((n, peer.request("squiggle/checkFile", params)?));
    }
    for (n, id) in ids {
        match peer.answer(id, LIMIT) {
            Ok((_, answer)) => tally.add(judge(ext, n, &answer)),
            Err(_) => tally.unanswered += 1,
        }
    }
    Ok(())
}
