//! What a check runs to choose among a role's servers: the first whose command is found is
//! started directly, a fallback is looked at only when the servers before it are not found, and
//! no `--version` probe is on a check's path (issue 26).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{broken_shim, fake_lsp_bin, shim_calls, squiggle_within, FakeWorkspace};
use serde_json::Value;

/// A workspace whose `.fake` files go to the role `fake` (served by `primary`, the fake server
/// when None) with a fallback: a shim named like a server squiggle probes
/// (`typescript-language-server`, whose `--version` it knows) that logs how it is called.
fn workspace_with_fallback(primary: Option<&Path>) -> (FakeWorkspace, PathBuf) {
    let ws = FakeWorkspace::new();
    let command = primary.map_or_else(fake_lsp_bin, Path::to_path_buf);
    let shim = broken_shim(
        &ws.root.parent().unwrap().join("bin"),
        "typescript-language-server",
        "fallback: not a language server",
    );
    let config = format!(
        "settle_ms = 20\n\
         [servers.fake]\ncommand = {command:?}\nargs = []\nextensions = [\"fake\"]\n\
         env = {{ FAKE_LSP_PID_DIR = {pids:?} }}\n\
         [servers.fake-fallback]\ncommand = {shim:?}\nextensions = [\"fake\"]\nfallback_for = \"fake\"\n",
        command = command.display().to_string(),
        pids = ws.pids.display().to_string(),
        shim = shim.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws.write("a.fake", "ERROR broken\n");
    (ws, shim)
}

fn check_json(ws: &FakeWorkspace) -> (i32, Value) {
    let run = squiggle_within(
        &ws.root,
        &["check", "--format", "json", "a.fake"],
        &[],
        Duration::from_secs(30),
    );
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}\nstderr: {}", run.stdout, run.stderr));
    (run.code, json)
}

/// The ids of the servers a check's json result reports, wherever they are listed.
fn reported_servers(json: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    let mut stack = vec![json];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let (Some(Value::String(id)), true) = (map.get("id"), map.contains_key("status"))
                {
                    ids.push(id.clone());
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn a_check_never_runs_the_fallback_of_a_server_it_finds() {
    let (ws, shim) = workspace_with_fallback(None);

    let (code, json) = check_json(&ws);

    assert_eq!(code, 1, "the fake server's error: {json}");
    assert_eq!(reported_servers(&json), ["fake"], "{json}");
    assert_eq!(
        shim_calls(&shim),
        Vec::<String>::new(),
        "the fallback was neither probed nor started"
    );
}

#[test]
fn a_check_uses_the_fallback_when_the_first_server_is_not_found() {
    let missing = std::env::temp_dir().join("squiggle-no-such-dir/fake-lsp");
    let (ws, shim) = workspace_with_fallback(Some(&missing));

    let (_, json) = check_json(&ws);

    assert_eq!(reported_servers(&json), ["fake-fallback"], "{json}");
    let calls = shim_calls(&shim);
    assert!(
        !calls.is_empty() && calls.iter().all(|call| call != "--version"),
        "the fallback is started directly, not probed: {calls:?}"
    );
    let text = json.to_string();
    assert!(
        text.contains("fallback: not a language server"),
        "reported broken with its own output: {json}"
    );
}
