//! rust-analyzer on a real crate (tests/fixtures/real-rust: regex-syntax 0.8.11, 24 files), with
//! `cargo check` as the oracle: each kind of error an edit makes (an unknown name, mismatched
//! types, a missing trait, a borrow conflict: the last two only `cargo check` finds) is reported
//! at `cargo check`'s line and column with its code, cold and warm, through every door.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use crate::support::real_server::RUST_ANALYZER;
use crate::support::{
    fixture, real_servers_turn, real_servers_turn_async, squiggle_within, Mcp, Serve,
};
use serde_json::{json, Value};

/// The file the errors are made in: it type-checks, and is used across the crate.
const FILE: &str = "src/debug.rs";

/// The most one command may take (a cold start loads the crate, then runs `cargo check`).
const LIMIT: Duration = Duration::from_secs(180);

/// One error an edit makes: the text replaced, and where `cargo check` reports the error.
struct Seed {
    code: &'static str,
    find: &'static str,
    replace: &'static str,
    line: u64,
    column: u64,
}

const BYTES: &str = "        let mut bytes = [0u8; 10];\n";

const SEEDS: [Seed; 4] = [
    Seed {
        code: "E0425",
        find: "            len += 1;\n",
        replace: "            len += one;\n",
        line: 22,
        column: 20,
    },
    Seed {
        code: "E0308",
        find: BYTES,
        replace: "        let mut bytes = [0u8; 10];\n        let width: usize = self.0 == 1;\n",
        line: 15,
        column: 28,
    },
    Seed {
        code: "E0277",
        find: BYTES,
        replace: "        let mut bytes = [0u8; 10];\n        let total: usize = bytes.iter().sum();\n",
        line: 15,
        column: 41,
    },
    Seed {
        code: "E0502",
        find: BYTES,
        replace: "        let mut bytes = [0u8; 10];\n        let first = &bytes;\n        let rest = &mut bytes;\n        rest[0] = first[0];\n",
        line: 16,
        column: 20,
    },
];

/// An error's place and code.
type Place = (u64, u64, String);

impl Seed {
    /// The place `cargo check` should report.
    fn place(&self) -> Place {
        (self.line, self.column, self.code.to_string())
    }

    /// The file's text with this error in it.
    fn broken(&self, clean: &str) -> String {
        assert_eq!(clean.matches(self.find).count(), 1, "{}", self.code);
        clean.replacen(self.find, self.replace, 1)
    }
}

/// A fresh copy of the crate with the seed's error in [`FILE`]; its clean and broken texts.
fn seeded(seed: &Seed) -> (tempfile::TempDir, std::path::PathBuf, String, String) {
    let (dir, project) = fixture("real-rust");
    let clean = std::fs::read_to_string(project.join(FILE)).unwrap();
    let broken = seed.broken(&clean);
    std::fs::write(project.join(FILE), &broken).unwrap();
    (dir, project, clean, broken)
}

/// The errors `cargo check` reports in [`FILE`] (and no build left behind).
fn cargo_check(project: &Path) -> Vec<Place> {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["check", "--offline", "--message-format", "json", "--quiet"])
        .current_dir(project)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(project.join("target"));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-message" && m["message"]["level"] == "error")
        .filter_map(|m| {
            let span = m["message"]["spans"]
                .as_array()?
                .iter()
                .find(|s| s["is_primary"] == true && s["file_name"] == FILE)?
                .clone();
            let code = m["message"]["code"]["code"].as_str()?.to_string();
            Some((
                span["line_start"].as_u64()?,
                span["column_start"].as_u64()?,
                code,
            ))
        })
        .collect()
}

/// The errors of [`FILE`] in a `--format json` report, and rust-analyzer's basis.
fn found(report: &Value) -> (Vec<Place>, String) {
    let places = report["files"][FILE]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"))
        .iter()
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let basis = report["servers"][0]["basis"]
        .as_str()
        .unwrap_or("none")
        .to_string();
    (places, basis)
}

/// `squiggle check --format json FILE` with `env` on top, parsed.
fn check(project: &Path, env: &[(&str, &OsStr)]) -> Value {
    let run = squiggle_within(project, &["check", "--format", "json", FILE], env, LIMIT);
    serde_json::from_str(&run.stdout).unwrap_or_else(|err| panic!("{err}: {run:?}"))
}

#[test]
fn cargo_check_reports_each_seeded_error_where_the_tests_expect_it() {
    let _turn = real_servers_turn();
    let (_dir, project) = fixture("real-rust");
    assert_eq!(
        cargo_check(&project),
        vec![],
        "the crate builds as vendored"
    );
    for seed in &SEEDS {
        let (_dir, project, _, _) = seeded(seed);
        assert_eq!(cargo_check(&project), vec![seed.place()], "{}", seed.code);
    }
}

#[test]
fn every_cold_one_shot_check_reports_cargo_checks_error() {
    let _turn = real_servers_turn();
    RUST_ANALYZER.require();
    for seed in &SEEDS {
        let (_dir, project, _, _) = seeded(seed);
        for run in 1..=5 {
            // Cold for cargo too: no build left from the run before.
            let _ = std::fs::remove_dir_all(project.join("target"));
            let (places, basis) = found(&check(&project, &[]));
            assert_eq!(
                (places, basis.as_str()),
                (vec![seed.place()], "pull+flycheck"),
                "{} run {run}",
                seed.code
            );
        }
    }
}

#[test]
fn the_daemons_first_call_and_warm_edits_report_cargo_checks_error() {
    let _turn = real_servers_turn();
    RUST_ANALYZER.require();
    for seed in &SEEDS {
        let (_dir, project, clean, broken) = seeded(seed);
        let runtime = tempfile::tempdir().unwrap();
        let env: [(&str, &OsStr); 2] = [
            ("SQUIGGLE_NO_DAEMON", OsStr::new("0")),
            ("SQUIGGLE_RUNTIME_DIR", runtime.path().as_os_str()),
        ];
        let first = found(&check(&project, &env));
        assert_eq!(first.0, vec![seed.place()], "{} first call", seed.code);
        for edit in 1..=5 {
            std::fs::write(project.join(FILE), &clean).unwrap();
            let fixed = found(&check(&project, &env));
            assert_eq!(
                fixed,
                (vec![], "pull+flycheck".to_string()),
                "{} fixed {edit}",
                seed.code
            );
            std::fs::write(project.join(FILE), &broken).unwrap();
            let again = found(&check(&project, &env));
            let expected = (vec![seed.place()], "pull+flycheck".to_string());
            assert_eq!(again, expected, "{} broken {edit}", seed.code);
        }
        squiggle_within(&project, &["daemon", "stop"], &env, LIMIT);
    }
}

/// The borrow error: only `cargo check` finds it, so only a true wait for it reports it.
const BORROW: &Seed = &SEEDS[3];

#[test]
fn serve_reports_cargo_checks_error_cold_and_after_edits() {
    let _turn = real_servers_turn();
    RUST_ANALYZER.require();
    let (_dir, project, clean, broken) = seeded(BORROW);
    let mut serve = Serve::start(&project, &[]);
    let mut ask = |id: i64| {
        serve.request(id, "squiggle/checkFile", json!({"filePath": FILE}));
        let result = serve.answer(id, LIMIT)["result"].clone();
        let places: Vec<Place> = (result["diagnostics"].as_array().unwrap().iter())
            .map(|d| {
                (
                    d["line"].as_u64().unwrap(),
                    d["character"].as_u64().unwrap(),
                    d["code"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        (places, result["outcome"].as_str().unwrap().to_string())
    };
    assert_eq!(ask(1), (vec![BORROW.place()], "diagnostics".to_string()));
    std::fs::write(project.join(FILE), &clean).unwrap();
    assert_eq!(ask(2), (vec![], "clean".to_string()));
    std::fs::write(project.join(FILE), &broken).unwrap();
    assert_eq!(ask(3), (vec![BORROW.place()], "diagnostics".to_string()));
    drop(serve);
}

#[test]
fn mcp_lsp_diagnostics_reports_cargo_checks_error_cold_and_after_edits() {
    let _turn = real_servers_turn();
    RUST_ANALYZER.require();
    let (_dir, project, clean, broken) = seeded(BORROW);
    let mut mcp = Mcp::start(&project, LIMIT);
    let mut ask = || {
        let result = mcp.call("lsp_diagnostics", json!({"file": FILE}), LIMIT);
        result["content"][0]["text"].as_str().unwrap().to_string()
    };
    let error = format!("{FILE}:16:20: error[E0502]: cannot borrow `bytes` as mutable");
    assert!(ask().starts_with(&error), "cold");
    std::fs::write(project.join(FILE), &clean).unwrap();
    let fixed = ask();
    assert!(!fixed.contains("error"), "fixed: {fixed}");
    std::fs::write(project.join(FILE), &broken).unwrap();
    assert!(ask().starts_with(&error), "broken again");
    mcp.close(LIMIT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_api_reports_cargo_checks_error_and_says_what_cargo_did_not_see() {
    let _turn = real_servers_turn_async().await;
    let (_dir, project, clean, broken) = seeded(BORROW);
    let config = RUST_ANALYZER.alone();
    let squiggle = squiggle_actors::Squiggle::start(&project, config)
        .await
        .unwrap();
    // The API returns every severity; the errors are what `cargo check` fails on.
    let places = |result: &squiggle_actors::CheckResult| -> Vec<Place> {
        result
            .diagnostics
            .iter()
            .filter(|d| d.severity == squiggle_actors::Severity::Error)
            .map(|d| {
                (
                    d.line as u64,
                    d.column as u64,
                    d.code.clone().unwrap_or_default(),
                )
            })
            .collect()
    };
    let path = project.join(FILE);

    let cold = squiggle.check_file(&path, None).await;
    assert_eq!(places(&cold), vec![BORROW.place()], "{cold:?}");
    std::fs::write(&path, &clean).unwrap();
    let fixed = squiggle.check_file(&path, None).await;
    assert_eq!(places(&fixed), vec![], "{fixed:?}");
    // A text that is not on disk: cargo check cannot see it, and the answer says so.
    let unsaved = squiggle.check_file(&path, Some(broken.clone())).await;
    let reason = unsaved.servers[0].reason.clone().unwrap_or_default();
    assert!(reason.contains("did not see this text"), "{unsaved:?}");
    assert_eq!(
        unsaved.servers[0].basis,
        Some(squiggle_actors::Basis::Pull),
        "{unsaved:?}"
    );
    std::fs::write(&path, &broken).unwrap();
    let saved = squiggle.check_file(&path, None).await;
    assert_eq!(places(&saved), vec![BORROW.place()], "{saved:?}");
    squiggle.shutdown().await;
}
