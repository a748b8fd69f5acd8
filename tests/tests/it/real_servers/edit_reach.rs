//! An edit that breaks the files importing the edited one: the feedback names the errors it
//! caused there, and only those, with the batch checker (`pyright --outputjson`) as the
//! oracle; through the Rust API on a warm runtime, and through `squiggle hook claude-code` on a
//! cold one that only has the host's copy of the file from before the edit.

use std::collections::BTreeSet;
use std::time::Duration;

use super::python_package::{pyright_errors, Error};
use crate::support::path_with_servers;
use crate::support::real_server::{PYRIGHT, TYPESCRIPT};
use serde_json::Value;
use squiggle_actors::Scope;

/// The errors of a feedback's other files, as the oracle names them.
fn others_of(feedback: &squiggle_actors::Feedback) -> BTreeSet<Error> {
    feedback
        .others
        .iter()
        .flat_map(|(file, diagnostics)| {
            diagnostics.iter().map(move |d| {
                let code = d.code.clone().unwrap_or_default();
                (file.clone(), u64::from(d.line), u64::from(d.column), code)
            })
        })
        .collect()
}

#[tokio::test]
async fn a_changed_signature_names_the_importers_it_broke_and_nothing_that_was_broken_before() {
    let (_held, squiggle, project) = PYRIGHT.on_fixture_patient("py-reach").await;
    let prices = project.join("shop/prices.py");
    let before = pyright_errors(&project);
    let opened = squiggle.check_file(&prices, None).await;
    assert!(opened.outcome().is_checked(), "{opened:?}");

    // A required parameter added: the callers in other files break.
    let original = std::fs::read_to_string(&prices).unwrap();
    let edited = original.replace(
        "amounts: list[float])",
        "amounts: list[float], currency: str)",
    );
    std::fs::write(&prices, &edited).unwrap();
    let after = pyright_errors(&project);
    let caused: BTreeSet<Error> = after.difference(&before).cloned().collect();
    assert!(
        caused.iter().any(|(file, ..)| file == "report.py")
            && caused.iter().any(|(file, ..)| file == "shop/cart.py"),
        "the oracle: {caused:?}"
    );
    let feedback = squiggle.feedback(&prices, None, Scope::Edit, None).await;
    assert_eq!(others_of(&feedback), caused, "{}", feedback.text);
    assert!(
        feedback
            .text
            .contains("LSP errors detected in other files:\nreport.py:\nNEW 7:15 "),
        "{}",
        feedback.text
    );
    // report.py's error from before the edit is not the edit's.
    assert!(!feedback.text.contains("[3:15]"), "{}", feedback.text);

    // Reverted: nothing is new anywhere.
    std::fs::write(&prices, &original).unwrap();
    let reverted = squiggle.feedback(&prices, None, Scope::Edit, None).await;
    assert_eq!(reverted.others, Default::default(), "{}", reverted.text);
    assert_eq!(reverted.text, "");
    squiggle.shutdown().await;
}

#[test]
fn a_hook_with_the_hosts_original_names_the_importer_an_edit_broke_on_a_cold_runtime() {
    let _turn = crate::support::real_servers_turn();
    TYPESCRIPT.require();
    let (_dir, project) = crate::support::fixture("ts-multi");
    // Time enough for a cold server on a busy machine: this is about what is found, not when.
    std::fs::write(
        project.join("squiggle.toml"),
        "dependent_files_wait_ms = 60000\n",
    )
    .unwrap();
    let types = project.join("src/types.ts");
    let original = std::fs::read_to_string(&types).unwrap();
    std::fs::write(&types, original.replace("age: number", "years: number")).unwrap();
    let input = serde_json::json!({
        "cwd": project,
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": types, "old_string": "age", "new_string": "years"},
        "tool_response": {"filePath": types, "originalFile": original},
    });
    let mut child = std::process::Command::new(crate::support::squiggle_bin())
        .args(["hook", "claude-code"])
        .current_dir(&project)
        .env("PATH", path_with_servers())
        .env("XDG_CONFIG_HOME", project.join(".no-user-config"))
        .env("SQUIGGLE_NO_DAEMON", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = crate::support::finish_within(
        &mut child,
        input.to_string().as_bytes(),
        Duration::from_secs(120),
        "hook",
    );
    let answer: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|err| panic!("{err}: stdout {:?} stderr {}", run.stdout, run.stderr));
    assert_eq!(answer["decision"], "block", "{answer}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.contains("LSP errors detected in other files:\nsrc/user.ts:\nNEW 4:34 Property 'age' does not exist on type 'User'."),
        "{reason}"
    );
    crate::support::assert_no_process_in(&project);
}
