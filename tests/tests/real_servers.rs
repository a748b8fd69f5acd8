//! `squiggle check` against real language servers installed from the registries
//! (`cargo xtask install-servers`): exact positions, columns counted in characters.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use squiggle_tests::{assert_no_process_in, fixture, require_server, squiggle};

/// (file, line, column, code, source) of every diagnostic in a JSON report.
fn positions(report: &Value) -> Vec<(String, u64, u64, String, String)> {
    let mut found = Vec::new();
    for (file, list) in report["files"].as_object().unwrap() {
        for d in list.as_array().unwrap() {
            found.push((
                file.clone(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or_default().to_string(),
                d["source"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    found
}

fn tuple(
    file: &str,
    line: u64,
    column: u64,
    code: &str,
    source: &str,
) -> (String, u64, u64, String, String) {
    (
        file.to_string(),
        line,
        column,
        code.to_string(),
        source.to_string(),
    )
}

#[test]
fn pyright_and_ruff_report_exact_positions_in_a_python_project() {
    require_server("pyright-langserver", "npm install pyright");
    require_server("ruff", "pip install ruff");
    let (_dir, project) = fixture("python");

    let run = squiggle(
        &project,
        &[
            "check",
            "--root",
            ".",
            "--format",
            "json",
            "orders.py",
            "clean.py",
        ],
    );

    assert_eq!(run.code, 1, "diagnostics were found: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        positions(&report),
        vec![
            tuple("orders.py", 8, 33, "reportAssignmentType", "Pyright"),
            tuple("orders.py", 9, 27, "reportUndefinedVariable", "Pyright"),
            tuple("orders.py", 9, 27, "F821", "Ruff"),
        ]
    );
    assert_eq!(report["files"]["clean.py"], Value::Array(vec![]));
    let servers: Vec<(&str, &str)> = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(servers, vec![("pyright", "active"), ("ruff", "active")]);
    assert_eq!(report["timed_out"], Value::Array(vec![]));
    assert_no_process_in(&project);
}

#[test]
fn typescript_language_server_reports_exact_positions() {
    require_server(
        "typescript-language-server",
        "npm install typescript typescript-language-server",
    );
    let (_dir, project) = fixture("typescript");

    let run = squiggle(
        &project,
        &["check", "--root", ".", "--format", "json", "src/user.ts"],
    );

    assert_eq!(run.code, 1, "diagnostics were found: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        positions(&report),
        vec![
            tuple("src/user.ts", 6, 54, "2322", "typescript"),
            tuple("src/user.ts", 7, 15, "2339", "typescript"),
        ]
    );
    assert_no_process_in(&project);
}

#[test]
fn a_clean_file_exits_zero_in_text_format() {
    require_server("pyright-langserver", "npm install pyright");
    let (_dir, project) = fixture("python");

    let run = squiggle(&project, &["check", "--root", ".", "clean.py"]);

    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("no diagnostics"),
        "stderr: {}",
        run.stderr
    );
}

#[test]
#[ignore = "needs rust-analyzer (not in this toolchain): build one with ../shared/tools/build-rust-analyzer.sh; `cargo xtask test` runs this when one is on PATH"]
fn rust_analyzer_reports_exact_positions_in_a_crate() {
    require_server("rust-analyzer", "rustup component add rust-analyzer");
    let (_dir, project) = fixture("rust");

    let run = squiggle(
        &project,
        &["check", "--root", ".", "--format", "json", "src/main.rs"],
    );

    assert_eq!(run.code, 1, "diagnostics were found: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        positions(&report),
        vec![tuple("src/main.rs", 2, 42, "E0308", "rust-analyzer")]
    );
    assert_no_process_in(&project);
}

#[tokio::test]
async fn writing_a_typescript_interface_shows_the_break_in_an_already_checked_file() {
    let command = require_server(
        "typescript-language-server",
        "npm install typescript typescript-language-server",
    );
    let (_dir, project) = fixture("ts-multi");
    let mut config = squiggle_actors::Config::default();
    for spec in config.servers.values_mut() {
        spec.enabled = spec.id == "typescript";
    }
    config.servers.get_mut("typescript").unwrap().command = command.display().to_string();
    let squiggle = squiggle_actors::Squiggle::start(&project, config)
        .await
        .unwrap();

    let user = squiggle.check_file(project.join("src/user.ts"), None).await;
    assert_eq!(user.diagnostics, vec![], "user.ts is clean at first");
    let renamed = "export interface User {\n  name: string;\n  years: number;\n}\n";
    std::fs::write(project.join("src/types.ts"), renamed).unwrap();
    let feedback = squiggle
        .feedback(
            project.join("src/types.ts"),
            Some(renamed.to_string()),
            squiggle_actors::Scope::Write,
        )
        .await;
    squiggle.shutdown().await;

    assert_eq!(
        feedback.text,
        "\nLSP errors detected in other files:\n<diagnostics file=\"src/user.ts\">\n\
         ERROR [4:34] Property 'age' does not exist on type 'User'. (2339)\n</diagnostics>"
    );
    assert_no_process_in(&project);
}
