//! Issue 26, the per-user warm budget, through the daemon: with a count of 2 a third
//! workspace's check stops the least recently used idle daemon and never the one with a check
//! under way; a tiny memory budget stops every idle other daemon; worktree-like workspaces
//! checked in turn stay within the budget, each check answered; `squiggle daemon status` shows
//! each workspace's memory with its servers, its last use, and the total against the budget;
//! a server unused for a while is stopped while its daemon stays.

use std::time::Duration;

use crate::support::wait_until;
use serde_json::json;

use super::{assert_found, Daemons};

/// How long an eviction may take to show (it follows the check's answer).
const EVICTED_WITHIN: Duration = Duration::from_secs(15);

#[test]
fn with_a_count_of_two_a_third_workspace_stops_the_least_recently_used_idle_one() {
    let extra = "daemon_max_workspaces = 2";
    let a = Daemons::new(extra);
    // b's check lasts (its server publishes after 5 s): b is the least recently used by the
    // start of its check, but in use.
    let b = Daemons::scripted(extra, &json!({"publish_delay_ms": 5000}));
    let c = Daemons::new(extra);
    for d in [&a, &b, &c] {
        d.ws.write("x.fake", "ERROR one\n");
    }
    let runtime = a.runtime.clone();
    std::thread::scope(|scope| {
        let slow = scope.spawn(|| b.run_in(&runtime, &["check", "x.fake"]));
        assert!(
            wait_until(Duration::from_secs(20), || !b.live_servers().is_empty()),
            "b's check began; logs:\n{}",
            b.logs()
        );
        assert_found(&a.run(&["check", "x.fake"]), 1);
        assert!(!a.live_servers().is_empty());
        assert_found(&c.run_in(&runtime, &["check", "x.fake"]), 1);

        assert!(
            wait_until(EVICTED_WITHIN, || a.live_servers().is_empty()),
            "a, the least recently used idle workspace, was stopped; logs:\n{}{}",
            a.logs(),
            c.logs()
        );
        let slow = slow.join().unwrap();
        assert_found(&slow, 1);
    });
    assert!(!b.live_servers().is_empty(), "b, in use, was not stopped");
    assert!(
        !c.live_servers().is_empty(),
        "c, just used, was not stopped"
    );
    assert!(
        wait_until(EVICTED_WITHIN, || a.daemon_pids().len() == 2),
        "two daemons stay: {:?}",
        a.daemon_pids()
    );

    // The budget never fails a check: a's next one starts cold, and answers.
    assert_found(&a.run(&["check", "x.fake"]), 1);
    assert!(
        wait_until(EVICTED_WITHIN, || a.daemon_pids().len() == 2),
        "still two daemons: {:?}",
        a.daemon_pids()
    );
    assert!(!a.live_servers().is_empty(), "a, just used, is warm");
}

#[test]
fn a_tiny_memory_budget_stops_the_least_recently_used_idle_daemon() {
    let extra = "daemon_max_memory_mb = 1";
    let a = Daemons::new(extra);
    let b = Daemons::new(extra);
    a.ws.write("x.fake", "ERROR one\n");
    b.ws.write("x.fake", "ERROR one\n");
    assert_found(&a.run(&["check", "x.fake"]), 1);
    let a_daemon = a.daemon_pid();
    assert_found(&b.run_in(&a.runtime, &["check", "x.fake"]), 1);

    assert!(
        wait_until(EVICTED_WITHIN, || !crate::support::is_alive(a_daemon)),
        "a's daemon, idle and least recently used, was stopped; logs:\n{}{}",
        a.logs(),
        b.logs()
    );
    assert!(a.live_servers().is_empty(), "its servers went with it");
    assert!(!b.live_servers().is_empty(), "b, in use, stays warm");
    assert_eq!(a.daemon_pids().len(), 1);
}

#[test]
fn worktrees_checked_in_turn_stay_within_the_budget() {
    let extra = "daemon_max_workspaces = 2";
    let trees: Vec<Daemons> = (0..4).map(|_| Daemons::new(extra)).collect();
    let runtime = trees[0].runtime.clone();
    for tree in &trees {
        tree.ws.write("src.fake", "ok\nERROR two\n");
    }
    for round in 0..2 {
        for (i, tree) in trees.iter().enumerate() {
            let run = tree.run_in(&runtime, &["check", "src.fake"]);
            assert_found(&run, 2);
            assert!(
                !tree.live_servers().is_empty(),
                "round {round}: tree {i}, in use, is warm"
            );
            assert!(
                wait_until(EVICTED_WITHIN, || trees[0].daemon_pids().len() <= 2),
                "round {round}: at most two daemons after tree {i}: {:?}",
                trees[0].daemon_pids()
            );
        }
    }
    let warm: usize = trees
        .iter()
        .map(|tree| usize::from(!tree.live_servers().is_empty()))
        .sum();
    assert_eq!(warm, 2, "the two last used trees are warm");
}

#[test]
fn daemon_status_shows_memory_with_servers_last_use_and_the_budget() {
    let d = Daemons::new("daemon_max_workspaces = 3\ndaemon_max_memory_mb = 4096");
    d.ws.write("x.fake", "ERROR one\n");
    assert_found(&d.run(&["check", "x.fake"]), 1);
    let status = d.run(&["daemon", "status"]).stdout;
    assert!(status.contains(" with its servers)"), "{status}");
    assert!(status.contains("last check "), "{status}");
    assert!(status.contains(" ago"), "{status}");
    assert!(
        status.contains("warm: 1 of 3 workspaces, ") && status.contains(" of 4096.0 MiB"),
        "{status}"
    );
    // The daemon with its server holds more than the daemon alone.
    let line = status
        .lines()
        .find(|line| line.contains(" with its servers)"))
        .unwrap();
    let (before, after) = line.split_once(" MiB (").unwrap();
    let own: f64 = before.rsplit(' ').next().unwrap().parse().unwrap();
    let with_servers: f64 = after.split(' ').next().unwrap().parse().unwrap();
    assert!(with_servers > own, "{line}");
}

#[test]
fn a_server_unused_for_a_while_is_stopped_before_its_daemon() {
    let d = Daemons::new("daemon_server_idle_seconds = 1");
    d.ws.write("x.fake", "ERROR one\n");
    assert_found(&d.run(&["check", "x.fake"]), 1);
    let daemon = d.daemon_pid();
    let first = d.live_servers();
    assert_eq!(first.len(), 1);

    assert!(
        wait_until(EVICTED_WITHIN, || d.live_servers().is_empty()),
        "the unused server was stopped; logs:\n{}",
        d.logs()
    );
    assert_eq!(d.daemon_pid(), daemon, "its daemon stays");
    assert!(d.logs().contains("no check asked for it"), "{}", d.logs());

    // The next check starts it afresh and answers.
    assert_found(&d.run(&["check", "x.fake"]), 1);
    let second = d.live_servers();
    assert_eq!(second.len(), 1);
    assert_ne!(second, first, "a fresh server");
    assert_eq!(d.daemon_pid(), daemon);
}
