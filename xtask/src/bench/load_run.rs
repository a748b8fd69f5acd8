//! The load run: 1,000 concurrent `squiggle/checkFile` requests over 100 files, each served by
//! 4 servers, through one `squiggle serve`, every text different. Each answer is judged against
//! its own text ([`own_text`]): answered (a final answer, its own text's diagnostics), not
//! checked and said so (counted by reason), wrong (a final answer with other diagnostics: must be
//! 0), or no answer at all. Then the recovery time (from the burst's last answer until a single
//! check is answered normally again), single checks before and after, and serve's peak RSS.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::{json, Value};

use super::load::{proc_status, Load};
use super::own_text::{judge, padded, text, Tally, Verdict};
use super::peer::Peer;
use super::stats::Stats;
use super::{check, row, serve, shutdown, target, Results, LIMIT};

/// The burst: this many checks at once, over this many files.
const CHECKS: usize = 1000;
const FILES: usize = 100;
/// Single checks before and after the burst.
const SINGLES: usize = 20;
/// How long the burst's answers may take in all before the rest count as unanswered.
const BURST_LIMIT: Duration = Duration::from_secs(180);
/// Texts of the single checks are numbered from here (the burst's are 0..CHECKS).
const SINGLE_TEXTS: usize = 1_000_000;

/// Runs the load run on 4 servers of one kind and adds its rows, targets and measures.
/// With `pad` > 0 every burst text is padded to about that many bytes (see [`padded`]), to
/// go past the per-server backlog bound.
pub fn measure(
    load: &Load,
    squiggle: &Path,
    dir: &Path,
    pad: usize,
    results: &mut Results<'_>,
) -> anyhow::Result<()> {
    let label = if pad == 0 {
        format!("{} x4", load.label)
    } else {
        format!("{} x4, {} KiB texts", load.label, pad >> 10)
    };
    let root = load.workspace(
        &dir.join(format!("{}-load-run-{}", load.label, pad >> 10)),
        4,
        FILES,
    )?;
    let files: Vec<_> = (0..FILES).map(|n| load.file(&root, n)).collect();
    let probe = load.probe(&root);
    let mut peer = serve(squiggle, &root)?;
    for file in files.iter().chain([&probe]) {
        check(&mut peer, file, &std::fs::read_to_string(file)?)?;
    }
    let mut next_single = SINGLE_TEXTS;
    let (before, _) = singles(&mut peer, load.ext, &probe, &mut next_single)?;
    if before.runs < SINGLES {
        bail!("single checks before the load run were not all answered normally");
    }

    // The burst: every request built first, then all sent, then every answer awaited.
    let requests: Vec<(i64, Value)> = (0..CHECKS)
        .map(|n| {
            let params = json!({"filePath": files[n % FILES], "text": padded(load.ext, n, pad)});
            peer.prepare("squiggle/checkFile", params)
        })
        .collect();
    let started = Instant::now();
    for (_, request) in &requests {
        peer.send(request)?;
    }
    let deadline = started + BURST_LIMIT;
    let mut tally = Tally::default();
    let mut latencies = Vec::new();
    let mut last = started;
    for (n, (id, _)) in requests.iter().enumerate() {
        match peer.answer(*id, deadline.saturating_duration_since(Instant::now())) {
            Ok((at, answer)) => {
                latencies.push(at.duration_since(started));
                last = last.max(at);
                tally.add(judge(load.ext, n, &answer));
            }
            Err(_) => tally.unanswered += 1,
        }
    }
    let burst = last.duration_since(started);

    // Recovery: single checks, one after another, until one is answered normally.
    let mut recovery = None;
    let mut tries = 0;
    while recovery.is_none() && last.elapsed() < LIMIT {
        tries += 1;
        let (_, verdict) = single(&mut peer, load.ext, &probe, next_single)?;
        next_single += 1;
        if verdict == (Verdict::Right { partial: false }) {
            recovery = Some(Instant::now().duration_since(last));
        }
    }
    let (after, abnormal_after) = singles(&mut peer, load.ext, &probe, &mut next_single)?;
    let peak_kib = proc_status(peer.pid(), "VmHWM:").unwrap_or(0);
    shutdown(peer)?;

    let summary = format!(
        "load run ({label}, {CHECKS} concurrent over {FILES} files): {} answered ({} with a server missing), {} not checked, {} wrong, {} errors, {} unanswered; burst {:.0} ms; recovery {}; peak RSS {:.1} MiB",
        tally.right,
        tally.partial,
        tally.not_checked_total(),
        tally.wrong.len(),
        tally.errors.len(),
        tally.unanswered,
        burst.as_secs_f64() * 1000.0,
        recovery.map_or("none within 60 s".to_string(), |r| format!("{:.2} ms", r.as_secs_f64() * 1000.0)),
        peak_kib as f64 / 1024.0
    );
    println!("{summary}");
    for (reason, count) in &tally.not_checked {
        println!("  not checked ({count}): {reason}");
    }
    for wrong in tally.wrong.iter().take(5) {
        println!("  WRONG: {wrong}");
    }
    for error in tally.errors.iter().take(5) {
        println!("  ERROR: {error}");
    }

    results
        .rows
        .push(row("load", &label, "single, before", &before, None));
    results.rows.push(row(
        "load",
        &label,
        &format!("{CHECKS} concurrent"),
        &Stats::of(&latencies),
        None,
    ));
    results
        .rows
        .push(row("load", &label, "single, after", &after, None));
    let mut wrong = target(
        &format!("load run ({label}): wrong answers (a final answer not matching its own text) of {CHECKS} concurrent checks over {FILES} files"),
        tally.wrong.len() as f64,
        &format!("of {CHECKS}"),
        0.0,
        tally.wrong.is_empty(),
    );
    wrong["answers"] = json!({
        "checks": CHECKS,
        "files": FILES,
        "servers": 4,
        "answered": tally.right,
        "answered_with_a_server_missing": tally.partial,
        "not_checked_by_reason": tally.not_checked,
        "wrong": tally.wrong.iter().take(20).collect::<Vec<_>>(),
        "errors": tally.errors.iter().take(20).collect::<Vec<_>>(),
        "unanswered": tally.unanswered,
        "burst_ms": burst.as_secs_f64() * 1000.0,
        "recovery_ms": recovery.map(|r| r.as_secs_f64() * 1000.0),
        "recovery_tries": tries,
        "singles_after_not_normal": abnormal_after.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>(),
        "peak_rss_mib": peak_kib as f64 / 1024.0,
        "summary": summary,
    });
    results.targets.push(wrong);
    results.targets.push(target(
        &format!(
            "load run ({label}): requests with no answer within {} s, or a JSON-RPC error",
            BURST_LIMIT.as_secs()
        ),
        (tally.unanswered + tally.errors.len()) as f64,
        &format!("of {CHECKS}"),
        0.0,
        tally.unanswered + tally.errors.len() == 0,
    ));
    let recovery_ms = recovery.map_or(f64::INFINITY, |r| r.as_secs_f64() * 1000.0);
    results.targets.push(target(
        &format!("load run ({label}): recovery, from the burst's last answer to a single check answered normally"),
        recovery_ms,
        "ms",
        LIMIT.as_secs_f64() * 1000.0,
        recovery.is_some(),
    ));
    let measures = [
        (
            "answered (final answer, its own text's diagnostics)",
            tally.right as f64,
            "checks",
        ),
        (
            "answered with a server missing (named)",
            tally.partial as f64,
            "checks",
        ),
        (
            "not checked, and said so",
            tally.not_checked_total() as f64,
            "checks",
        ),
        (
            "the burst, first request to last answer",
            burst.as_secs_f64() * 1000.0,
            "ms",
        ),
        (
            "peak RSS of squiggle serve",
            peak_kib as f64 / 1024.0,
            "MiB",
        ),
    ];
    for (what, value, unit) in measures {
        results.measures.push(json!({
            "measure": format!("load run ({label}): {what}"),
            "value": value,
            "unit": unit,
        }));
    }
    for (reason, count) in &tally.not_checked {
        results.measures.push(json!({
            "measure": format!("load run ({label}): not checked: {reason}"),
            "value": *count as f64,
            "unit": "checks",
        }));
    }
    Ok(())
}

/// One `squiggle/checkFile` of `probe` with text `n`: its time and verdict.
fn single(
    peer: &mut Peer,
    ext: &str,
    probe: &Path,
    n: usize,
) -> anyhow::Result<(Duration, Verdict)> {
    let started = Instant::now();
    let id = peer.request(
        "squiggle/checkFile",
        json!({"filePath": probe, "text": text(ext, n)}),
    )?;
    let (at, answer) = peer.answer(id, LIMIT)?;
    Ok((at.duration_since(started), judge(ext, n, &answer)))
}

/// [`SINGLES`] single checks: the times of those answered normally, and the other verdicts.
fn singles(
    peer: &mut Peer,
    ext: &str,
    probe: &Path,
    next: &mut usize,
) -> anyhow::Result<(Stats, Vec<Verdict>)> {
    let mut timings = Vec::new();
    let mut abnormal = Vec::new();
    for _ in 0..SINGLES {
        let (took, verdict) = single(peer, ext, probe, *next)?;
        *next += 1;
        if verdict == (Verdict::Right { partial: false }) {
            timings.push(took);
        } else {
            abnormal.push(verdict);
        }
    }
    Ok((Stats::of(&timings), abnormal))
}
