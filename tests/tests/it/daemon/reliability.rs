//! Issue 25, round three, through the daemon: a crash loop ended by `squiggle restart`, a
//! server's unasked `workspace/applyEdit` refused during a check or hook, running out of file
//! descriptors without spinning or flooding the log, `daemon stop` finishing the checks in
//! flight, two environments on one workspace keeping a daemon each, and a file name that is
//! not UTF-8 checked by the daemon; and (issue 42 item 16) a check whose callers all hung up
//! cancelled, its connection freed; (item 11) another home folder's daemons neither listed nor
//! stopped.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{finish_within, is_alive, path_with_servers, squiggle_bin, wait_until};
use serde_json::json;

use super::{assert_found, Daemons, LIMIT};

#[test]
fn a_crash_looping_server_is_held_until_squiggle_restart_brings_it_back() {
    let d = Daemons::scripted(
        "restart_cooldown_ms = 100",
        &json!({"crash_on_text": "CRASH"}),
    );
    d.ws.write("a.fake", "CRASH\nERROR one\n");

    let first = d.run(&["check", "a.fake"]);
    assert_eq!(
        first.code, 3,
        "not checked: {}{}",
        first.stdout, first.stderr
    );
    let daemon = d.daemon_pid();
    // Restarted automatically once its cooldown passed, then broken again within a minute of
    // that restart by the next check: a crash loop, held.
    assert!(
        wait_until(Duration::from_secs(10), || d.ws.server_pids().len() == 2),
        "the server was restarted automatically once; logs:\n{}",
        d.logs()
    );
    let second = d.run(&["check", "a.fake"]);
    assert_eq!(second.code, 3, "{}{}", second.stdout, second.stderr);
    d.ws.write("a.fake", "ERROR one\n");
    let held = d.run(&["check", "a.fake"]);
    assert_eq!(held.code, 3, "{}{}", held.stdout, held.stderr);
    assert!(
        held.stdout.contains("run `squiggle restart fake`"),
        "the reason names the command: {}",
        held.stdout
    );
    assert_eq!(d.ws.server_pids().len(), 2, "no automatic restart");

    let unknown = d.run(&["restart", "nosuch"]);
    assert_eq!(unknown.code, 2, "{}{}", unknown.stdout, unknown.stderr);
    assert!(unknown.stderr.contains("nosuch"), "{}", unknown.stderr);

    // An explicit restart too waits out the cooldown (100 ms): until then it says so, with 1.
    let mut restart = d.run(&["restart", "fake"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while restart.code == 1 && Instant::now() < deadline {
        assert!(
            restart.stdout.contains("cooldown ends in"),
            "{}",
            restart.stdout
        );
        restart = d.run(&["restart", "fake"]);
    }
    assert_eq!(restart.code, 0, "{}{}", restart.stdout, restart.stderr);
    assert!(
        restart.stdout.contains("fake (.): active"),
        "{}",
        restart.stdout
    );
    assert_eq!(d.ws.server_pids().len(), 3, "restarted once more");
    assert_found(&d.run(&["check", "a.fake"]), 1);
    assert_eq!(d.daemon_pid(), daemon, "the same daemon, warm");

    // With no daemon running there is nothing to restart, and it says so.
    d.run(&["daemon", "stop"]);
    let none = d.run(&["restart"]);
    assert_eq!(none.code, 0, "{}", none.stderr);
    assert!(none.stdout.contains("no daemon runs"), "{}", none.stdout);
}

#[test]
fn an_unasked_apply_edit_changes_no_file_during_a_check_or_a_hook() {
    let edit = json!({"changes": {"$ROOT/a.fake": [{
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
        "newText": "EVIL!"}]}});
    let d = Daemons::scripted("", &json!({"apply_edit_on_open": edit}));
    let file = d.ws.write("a.fake", "ERROR one\n");
    let refused = || {
        d.ws.messages()
            .into_iter()
            .filter(|m| m["dir"] == "in" && m["result"]["applied"] == false)
            .collect::<Vec<_>>()
    };

    assert_found(&d.run(&["check", "a.fake"]), 1);
    assert!(
        wait_until(Duration::from_secs(10), || !refused().is_empty()),
        "the server got applied: false; messages: {:?}",
        d.ws.messages()
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "ERROR one\n");
    let reason = refused()[0]["result"]["failureReason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("not asked for"), "{reason}");

    // A hook (here one-shot, so that the server opens the file again) writes nothing either.
    let hook = d.hook(
        &d.ws.root,
        &file,
        &[("SQUIGGLE_NO_DAEMON", OsStr::new("1"))],
    );
    assert!(hook.stdout.contains("found ERROR: one"), "{}", hook.stdout);
    assert!(
        wait_until(Duration::from_secs(10), || refused().len() == 2),
        "the hook's server got applied: false too"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "ERROR one\n");
}

/// The CPU time a process used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = (stat.rsplit_once(')').map(|(_, rest)| rest))
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    // utime and stime are the 14th and 15th fields; the 3rd is the first after the name.
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    field(14).unwrap_or(0) + field(15).unwrap_or(0)
}

/// The daemon logs of a test, by path.
fn log_files(d: &Daemons) -> Vec<PathBuf> {
    (std::fs::read_dir(d.state.join("squiggle"))
        .unwrap()
        .flatten())
    .map(|entry| entry.path())
    .collect()
}

#[test]
fn out_of_file_descriptors_the_daemon_backs_off_keeps_its_log_small_and_recovers() {
    let d = Daemons::new("");
    d.ws.write("a.fake", "ERROR one\n");
    assert_found(&d.run(&["check", "a.fake"]), 1);
    let pid = d.daemon_pid();
    let socket = d.sockets().pop().unwrap();
    let logs = log_files(&d);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let log_len = || std::fs::metadata(&logs[0]).map(|m| m.len()).unwrap_or(0);

    // A few descriptors above what it holds now: it runs out after a dozen connections.
    let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64;
    let limit = libc::rlimit {
        rlim_cur: open + 12,
        rlim_max: open + 12,
    };
    // SAFETY: prlimit on a process of this user that this test started; no memory is shared.
    let set = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_NOFILE,
            &limit,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(set, 0, "prlimit: {}", std::io::Error::last_os_error());

    let before = log_len();
    let connections: Vec<_> = (0..300)
        .filter_map(|_| std::os::unix::net::UnixStream::connect(&socket).ok())
        .collect();
    assert!(connections.len() > 100, "{} connected", connections.len());
    let said = wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(&logs[0]).is_ok_and(|log| log.contains("accept failed"))
    });
    assert!(
        said,
        "the daemon ran out of descriptors; log:\n{}",
        d.logs()
    );

    // Measured over a window: how much it logs and how busy it is while out of descriptors.
    let (ticks, began) = (cpu_ticks(pid), Instant::now());
    let at_start = log_len();
    std::thread::sleep(Duration::from_secs(2));
    let window = began.elapsed().as_secs_f64();
    let busy = (cpu_ticks(pid) - ticks) as f64 / 100.0 / window;
    let grown = log_len() - at_start;
    eprintln!(
        "out of descriptors: log grew {} bytes in all, {grown} in {window:.1} s; CPU {:.0}%",
        log_len() - before,
        busy * 100.0
    );
    assert!(
        grown < 16 * 1024,
        "the log grew {grown} bytes in {window:.1} s"
    );
    assert!(busy < 0.2, "the daemon used {:.0}% CPU", busy * 100.0);

    drop(connections);
    assert_found(&d.run(&["check", "a.fake"]), 1);
    assert_eq!(d.daemon_pid(), pid, "the same daemon answered");
}

#[test]
fn daemon_stop_lets_the_checks_in_flight_finish() {
    let d = Daemons::scripted("", &json!({"publish_delay_ms": 1500}));
    d.ws.write("a.fake", "ERROR warm\n");
    assert_found(&d.run(&["check", "a.fake"]), 1);
    let daemon = d.daemon_pid();
    for i in 0..6 {
        d.ws.write(
            &format!("f{i}.fake"),
            &format!("{}ERROR in {i}\n", "ok\n".repeat(i)),
        );
    }
    let d = std::sync::Arc::new(d);
    let checks: Vec<_> = (0..6)
        .map(|i| {
            let d = d.clone();
            std::thread::spawn(move || d.run(&["check", &format!("f{i}.fake")]))
        })
        .collect();
    // Every check reached the server, which answers 1.5 s later.
    let opened = wait_until(LIMIT, || d.ws.received("textDocument/didOpen").len() == 7);
    assert!(opened, "all six checks reached the server");

    let stop = d.run(&["daemon", "stop"]);
    assert!(
        stop.stdout.contains("stopped the daemon"),
        "{}",
        stop.stdout
    );
    assert!(!is_alive(daemon));
    for (i, check) in checks.into_iter().enumerate() {
        let run = check.join().unwrap();
        assert_eq!(
            run.stdout,
            format!("f{i}.fake:{}:1: error[E1]: found ERROR: in {i}\n", i + 1),
            "stderr: {}",
            run.stderr
        );
    }
}

#[test]
fn two_environments_on_one_workspace_keep_a_daemon_each() {
    let d = Daemons::new("");
    d.ws.write("a.fake", "ERROR one\n");
    let mut other = path_with_servers();
    other.push(":/nonexistent-squiggle-test-path");
    let paths = [path_with_servers(), other];
    for _ in 0..3 {
        for path in &paths {
            let env = d.env(&d.runtime, &[("PATH", path.as_os_str())]);
            let run =
                crate::support::squiggle_within(&d.ws.root, &["check", "a.fake"], &env, LIMIT);
            assert_found(&run, 1);
        }
    }
    assert_eq!(d.daemon_pids().len(), 2, "one daemon per PATH");
    assert_eq!(
        d.ws.server_pids().len(),
        2,
        "each check found its environment's daemon warm"
    );
    // A changed configuration still retires the daemon of its environment.
    d.configure("max_total_lines = 40");
    assert_found(&d.run(&["check", "a.fake"]), 1);
    assert!(
        wait_until(Duration::from_secs(10), || d.daemon_pids().len() == 2),
        "the old configuration's daemon of this PATH retired"
    );
}

/// Runs `squiggle check` on one file name given as bytes, with the daemon on unless `one_shot`.
fn check_named(d: &Daemons, name: &OsStr, one_shot: bool) -> crate::support::Run {
    let mut child = start_check(d, name, one_shot);
    finish_within(&mut child, &[], LIMIT, "check of a non-UTF-8 name")
}

/// Starts `squiggle check <name>` in the workspace, with the daemon on unless `one_shot`.
fn start_check(d: &Daemons, name: &OsStr, one_shot: bool) -> std::process::Child {
    let no_daemon = OsStr::new(if one_shot { "1" } else { "0" });
    std::process::Command::new(squiggle_bin())
        .arg("check")
        .arg(name)
        .current_dir(&d.ws.root)
        .env("PATH", path_with_servers())
        .env("XDG_CONFIG_HOME", d.ws.root.join(".no-user-config"))
        .envs(d.env(&d.runtime, &[("SQUIGGLE_NO_DAEMON", no_daemon)]))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_file_name_that_is_not_utf8_is_checked_by_the_daemon() {
    let d = Daemons::new("");
    let name = OsStr::from_bytes(b"bad\xff.fake");
    std::fs::write(d.ws.root.join(name), "ERROR one\n").unwrap();

    let run = check_named(&d, name, false);
    assert!(
        !run.stderr.contains("checking in this process"),
        "{}",
        run.stderr
    );
    let status = d.run(&["daemon", "status"]).stdout;
    assert!(
        status.contains("1 checks"),
        "the daemon checked it: {status}"
    );
    // The daemon's answer is the one a check in this process gives.
    let one_shot = check_named(&d, name, true);
    assert_eq!((run.code, &run.stdout), (one_shot.code, &one_shot.stdout));
}

#[test]
fn a_check_whose_callers_hung_up_is_cancelled_and_frees_its_connection() {
    // The server answers a minute after each change, longer than this test waits.
    let d = Daemons::scripted(
        "diagnostic_timeout_ms = 120000",
        &json!({"publish_delay_ms": 60000}),
    );
    d.ws.write("a.fake", "ERROR one\n");
    let mut callers: Vec<_> = (0..3)
        .map(|_| start_check(&d, OsStr::new("a.fake"), false))
        .collect();
    let status = || d.run(&["daemon", "status"]).stdout;
    let under_way = wait_until(LIMIT, || status().contains("3 checks under way"));
    assert!(under_way, "the daemon took the three checks: {}", status());

    for caller in &mut callers {
        caller.kill().unwrap();
        caller.wait().unwrap();
    }
    let cancelled = wait_until(Duration::from_secs(10), || {
        !status().contains("checks under way")
    });
    assert!(cancelled, "no check is left under way: {}", status());
    assert_eq!(
        d.logs().matches("its caller hung up").count(),
        3,
        "{}",
        d.logs()
    );
    // The same daemon still answers, its checks all ended.
    let run = d.run(&["daemon", "status"]);
    assert!(run.stdout.contains("last check"), "{}", run.stdout);
}

/// Issue 42, item 11: with one runtime folder for the user (`XDG_RUNTIME_DIR`), the daemons of
/// another home folder are another environment's: `daemon status` lists only this home's, and
/// `daemon stop --all` stops only this home's.
#[test]
fn another_home_folders_daemons_are_neither_listed_nor_stopped() {
    use std::os::unix::fs::DirBuilderExt;
    let d = Daemons::new("");
    d.ws.write("a.fake", "ERROR one\n");
    let base = d.runtime.parent().unwrap().to_path_buf();
    let xdg = base.join("xdg");
    std::fs::DirBuilder::new().mode(0o700).create(&xdg).unwrap();
    let homes = [base.join("home-a"), base.join("home-b")];
    for home in &homes {
        std::fs::create_dir_all(home).unwrap();
    }
    let run = |home: &Path, args: &[&str]| {
        let env = [
            ("SQUIGGLE_LOG", OsStr::new("info")),
            ("SQUIGGLE_NO_DAEMON", OsStr::new("0")),
            ("XDG_RUNTIME_DIR", xdg.as_os_str()),
            ("XDG_STATE_HOME", d.state.as_os_str()),
            ("HOME", home.as_os_str()),
        ];
        crate::support::squiggle_within(&d.ws.root, args, &env, LIMIT)
    };
    let pids = |home: &Path| -> Vec<u32> {
        (run(home, &["daemon", "status"]).stdout.lines())
            .filter_map(|line| line.trim().strip_prefix("pid "))
            .filter_map(|rest| rest.split(',').next()?.parse().ok())
            .collect()
    };
    for home in &homes {
        assert_found(&run(home, &["check", "a.fake"]), 1);
    }
    let (a, b) = (pids(&homes[0]), pids(&homes[1]));
    assert_eq!((a.len(), b.len()), (1, 1), "one daemon listed in each home");
    assert_ne!(a, b);

    let stop = run(&homes[0], &["daemon", "stop", "--all"]);
    assert_eq!(stop.code, 0, "{stop:?}");
    assert!(
        wait_until(Duration::from_secs(10), || !is_alive(a[0])),
        "this home's daemon stopped"
    );
    assert!(is_alive(b[0]), "the other home's daemon runs on");
    let stop = run(&homes[1], &["daemon", "stop", "--all"]);
    assert_eq!(stop.code, 0, "{stop:?}");
}
