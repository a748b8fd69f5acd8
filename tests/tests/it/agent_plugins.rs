//! The Claude Code plugin (`plugins/squiggle`, listed by `.claude-plugin/marketplace.json`) and
//! the Gemini CLI extension (`gemini-extension.json`, `hooks/hooks.json`) against the real,
//! pinned hosts from npm (installed by `cargo xtask install-agent-hosts` into
//! `target/agent-hosts/`): each host validates and installs them in a throwaway HOME, and the
//! hook and MCP server it installed, read back from the installed files and run the way the host
//! runs them, give the diagnostics of a broken file in a fake-server workspace. A host that
//! cannot be installed fails its test with the reason; it is never skipped.

#![allow(clippy::unwrap_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use crate::support::{
    fake_lsp_bin, finish_within, repo_root, squiggle_bin, squiggle_dir, FakeWorkspace, Mcp, Run,
};
use serde_json::{json, Value};

/// How long installing a host from npm may take (a first, uncached install).
const INSTALL_LIMIT: Duration = Duration::from_secs(900);

/// How long one host command (validate, marketplace add, install) may take.
const HOST_LIMIT: Duration = Duration::from_secs(120);

/// How long one hook run may take.
const HOOK_LIMIT: Duration = Duration::from_secs(30);

/// The block the fake server's diagnostics for `x\nERROR broken <thing>\n` give an edit hook.
const ERRORS: &str =
    "LSP errors detected in this file, please fix:\na.fake:\n2:1 found ERROR: broken <thing> (E1)";

/// One install at a time: two tests installing into one folder would race.
static INSTALLING: Mutex<()> = Mutex::new(());

/// An installed agent host: its pinned version and its command.
struct AgentHost {
    version: String,
    command: PathBuf,
}

/// Installs the pinned host `name` (`claude-code`, `gemini-cli`) with xtask, or finds it
/// installed; panics with xtask's reason when it cannot be installed. xtask runs through Cargo
/// (`cargo xtask`), which builds it first when it is not current.
fn agent_host(name: &str) -> AgentHost {
    let _guard = INSTALLING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut child = Command::new(env!("CARGO"))
        .args(["xtask", "install-agent-hosts", name])
        .current_dir(repo_root())
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish_within(
        &mut child,
        &[],
        INSTALL_LIMIT,
        &format!("xtask install-agent-hosts {name}"),
    );
    assert_eq!(
        run.code, 0,
        "the agent host {name} could not be installed from npm (`cargo xtask install-agent-hosts {name}`), so its plugin cannot be tested:\n{}",
        run.stderr
    );
    let line = run
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("xtask did not report {name}: {}", run.stdout));
    let (version, command) = line.split_once(' ').unwrap();
    AgentHost {
        version: version.to_string(),
        command: PathBuf::from(command),
    }
}

/// A throwaway HOME for a host, with its XDG folders inside it.
struct Home {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = std::fs::canonicalize(dir.path()).unwrap();
        Self { _dir: dir, path }
    }

    /// The environment every process of a test runs with: this HOME, no account, no telemetry
    /// or update checks.
    fn apply(&self, command: &mut Command) {
        command
            .env("HOME", &self.path)
            .env("XDG_CONFIG_HOME", self.path.join(".config"))
            .env("XDG_CACHE_HOME", self.path.join(".cache"))
            .env("XDG_DATA_HOME", self.path.join(".local/share"))
            .env("XDG_STATE_HOME", self.path.join(".local/state"))
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("SQUIGGLE_LOG");
    }
}

/// Runs the host's command with `args` in `home`, with `env` on top; panics if it has not
/// finished within [`HOST_LIMIT`].
fn host(host: &AgentHost, home: &Home, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(&host.command);
    command.args(args).current_dir(&home.path);
    home.apply(&mut command);
    let mut child = command
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish_within(
        &mut child,
        &[],
        HOST_LIMIT,
        &format!("{:?} {args:?}", host.command),
    )
}

/// Like [`host`], and asserts it succeeded with no warning; returns its output.
fn host_ok(agent: &AgentHost, home: &Home, args: &[&str], env: &[(&str, &str)]) -> String {
    let run = host(agent, home, args, env);
    let output = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 0, "{args:?} failed:\n{output}");
    assert!(
        !output.to_lowercase().contains("warning") && !output.contains('⚠'),
        "{args:?} warned:\n{output}"
    );
    output
}

/// A workspace whose `.fake` files are served by the fake server; `a.fake` has an error.
fn workspace() -> FakeWorkspace {
    let ws = FakeWorkspace::new();
    let config = format!(
        "settle_ms = 20\n[servers.fake]\ncommand = {command:?}\nargs = []\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {pids:?} }}\n",
        command = fake_lsp_bin().display().to_string(),
        pids = ws.pids.display().to_string(),
    );
    ws.write("squiggle.toml", &config);
    ws.write("a.fake", "x\nERROR broken <thing>\n");
    ws
}

/// PATH with the squiggle binary under test first.
fn path_with_squiggle() -> OsString {
    let dir = squiggle_dir();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).unwrap()
}

/// PATH without any folder that holds a `squiggle`.
fn path_without_squiggle() -> OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<_> = std::env::split_paths(&rest)
        .filter(|dir| !dir.join("squiggle").exists())
        .collect();
    std::env::join_paths(dirs).unwrap()
}

/// Runs a hook `command` the way both hosts do (`bash -c`, in the project folder, the input on
/// stdin) with `env` on top; panics if it has not finished within [`HOOK_LIMIT`].
fn run_hook(
    command: &str,
    home: &Home,
    ws: &FakeWorkspace,
    path: &OsString,
    env: &[(&str, &Path)],
    input: &Value,
) -> Run {
    let mut process = Command::new("bash");
    process.args(["-c", command]).current_dir(&ws.root);
    home.apply(&mut process);
    let mut child = process
        .env("PATH", path)
        .env("SQUIGGLE_NO_DAEMON", "1")
        .env("XDG_CONFIG_HOME", ws.root.join(".no-user-config"))
        .envs(env.iter().map(|(key, value)| (*key, value.as_os_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish_within(
        &mut child,
        &serde_json::to_vec(input).unwrap(),
        HOOK_LIMIT,
        &format!("the hook `{command}`"),
    )
}

/// Asserts a hook run ended with exit 0 and `answer` as its one line of output.
fn assert_answer(run: &Run, answer: &Value) {
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert!(run.stdout.ends_with('\n'), "{}", run.stdout);
    let got: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(&got, answer, "stderr: {}", run.stderr);
}

/// A JSON file, parsed.
fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("{} is not JSON: {err}", path.display()))
}

/// The one hook command of `event` whose matcher names all of `tools`, in a hooks.json (but
/// the one that runs in the background, `--later`: see [`later_hook`]).
fn hook_command(hooks: &Value, event: &str, tools: &[&str]) -> String {
    let matching: Vec<Value> = (matching_hooks(hooks, event, tools).into_iter())
        .filter(|hook| {
            !hook["command"]
                .as_str()
                .unwrap_or_default()
                .ends_with(" --later")
        })
        .collect();
    assert_eq!(matching.len(), 1, "one {event} hook for {tools:?}: {hooks}");
    assert_eq!(matching[0]["type"], "command", "{hooks}");
    matching[0]["command"].as_str().unwrap().to_string()
}

/// The one `--later` hook of `event` whose matcher names all of `tools`, in a hooks.json.
fn later_hook(hooks: &Value, event: &str, tools: &[&str]) -> Value {
    let matching: Vec<Value> = (matching_hooks(hooks, event, tools).into_iter())
        .filter(|hook| {
            hook["command"]
                .as_str()
                .unwrap_or_default()
                .ends_with(" --later")
        })
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "one later {event} hook for {tools:?}: {hooks}"
    );
    matching[0].clone()
}

/// The hooks of `event` whose matcher names all of `tools`, in a hooks.json.
fn matching_hooks(hooks: &Value, event: &str, tools: &[&str]) -> Vec<Value> {
    let groups = hooks["hooks"][event]
        .as_array()
        .unwrap_or_else(|| panic!("no {event} hooks: {hooks}"));
    let matching: Vec<_> = groups
        .iter()
        .filter(|group| {
            let matcher: Vec<_> = group["matcher"]
                .as_str()
                .unwrap_or_default()
                .split('|')
                .collect();
            tools.iter().all(|tool| matcher.contains(tool))
        })
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .collect();
    matching
}

/// Starts an MCP server as a host's configuration of it names it, in the workspace, and asks
/// it for the workspace's diagnostics of `a.fake`.
fn mcp_diagnostics(
    command: &str,
    args: &[String],
    home: &Home,
    ws: &FakeWorkspace,
    path: &OsString,
) -> String {
    let mut process = Command::new(command);
    process.args(args).current_dir(&ws.root);
    home.apply(&mut process);
    process
        .env("PATH", path)
        .env("XDG_CONFIG_HOME", ws.root.join(".no-user-config"));
    let mut mcp = Mcp::spawn(process, HOOK_LIMIT);
    let result = mcp.call("lsp_diagnostics", json!({"file": "a.fake"}), HOOK_LIMIT);
    mcp.close(HOOK_LIMIT);
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn claude_code_installs_the_plugin_from_the_marketplace_and_its_hook_blocks_on_errors() {
    let claude = agent_host("claude-code");
    let home = Home::new();
    let version = host_ok(&claude, &home, &["--version"], &[]);
    assert!(version.starts_with(&claude.version), "{version}");
    let repo = repo_root();
    let plugin_dir = repo.join("plugins").join("squiggle");

    // Both manifests validate without a warning or advice.
    let manifest = repo.join(".claude-plugin").join("marketplace.json");
    let marketplace = host_ok(
        &claude,
        &home,
        &["plugin", "validate", manifest.to_str().unwrap()],
        &[],
    );
    assert!(marketplace.contains("Validation passed"), "{marketplace}");
    assert!(!marketplace.contains("Advice"), "{marketplace}");
    let plugin = host_ok(
        &claude,
        &home,
        &["plugin", "validate", plugin_dir.to_str().unwrap()],
        &[],
    );
    assert!(plugin.contains("Validation passed"), "{plugin}");
    assert!(!plugin.contains("Advice"), "{plugin}");
    assert!(
        plugin.contains("PostToolUse Write|Edit|MultiEdit"),
        "{plugin}"
    );
    assert!(plugin.contains("mcpServers: squiggle stdio"), "{plugin}");
    // The repository root as a whole passes too; its one warning is the Gemini CLI extension's
    // hooks/hooks.json (an AfterTool hook), which Claude Code reads as a plugin's and ignores.
    let run = host(
        &claude,
        &home,
        &["plugin", "validate", repo.to_str().unwrap()],
        &[],
    );
    let whole = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 0, "{whole}");
    assert!(
        whole.contains("Found 1 warning") && whole.contains("hooks.AfterTool: unknown hook event"),
        "{whole}"
    );
    assert!(!whole.contains("Advice"), "{whole}");

    // Added as a marketplace from this repository and installed from it, offline.
    host_ok(
        &claude,
        &home,
        &["plugin", "marketplace", "add", repo.to_str().unwrap()],
        &[],
    );
    let installed = host_ok(
        &claude,
        &home,
        &["plugin", "install", "squiggle@squiggle"],
        &[],
    );
    assert!(
        installed.contains("Successfully installed plugin: squiggle@squiggle"),
        "{installed}"
    );
    let details = host_ok(
        &claude,
        &home,
        &["plugin", "details", "squiggle@squiggle"],
        &[],
    );
    assert!(details.contains("Hooks (1)  PostToolUse"), "{details}");
    assert!(details.contains("MCP servers (1)  squiggle"), "{details}");

    // The installed plugin as Claude Code lists it: enabled, where it put its copy, and the MCP
    // server it read; the hook from that copy.
    let list = host_ok(&claude, &home, &["plugin", "list", "--json"], &[]);
    let list: Value = serde_json::from_str(&list).unwrap_or_else(|err| panic!("{err}: {list}"));
    let entry = list
        .as_array()
        .and_then(|plugins| {
            plugins
                .iter()
                .find(|plugin| plugin["id"] == "squiggle@squiggle")
        })
        .unwrap_or_else(|| panic!("squiggle@squiggle is not listed: {list}"));
    assert_eq!(entry["enabled"], true, "{entry}");
    let root = PathBuf::from(
        entry["installPath"]
            .as_str()
            .unwrap_or_else(|| panic!("{entry}")),
    );
    assert!(root.starts_with(&home.path), "{}", root.display());
    let hooks = read_json(&root.join("hooks/hooks.json"));
    assert_eq!(hooks, read_json(&plugin_dir.join("hooks/hooks.json")));
    let command = hook_command(&hooks, "PostToolUse", &["Write", "Edit", "MultiEdit"]);
    assert!(command.contains("${CLAUDE_PLUGIN_ROOT}"), "{command}");
    // The hook that goes on in the background and wakes the model when it finds something.
    let later = later_hook(&hooks, "PostToolUse", &["Write", "Edit", "MultiEdit"]);
    assert_eq!(later["type"], "command", "{later}");
    assert_eq!(later["asyncRewake"], true, "{later}");
    assert!(command.ends_with(" --with-later"), "{command}");
    assert_eq!(
        later["command"],
        command.replace(" --with-later", " --later"),
        "{later}"
    );

    let ws = workspace();
    let input = json!({
        "session_id": "abc123",
        "transcript_path": home.path.join(".claude/projects/p/abc123.jsonl"),
        "cwd": ws.root,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": ws.root.join("a.fake"), "old_string": "x", "new_string": "y"},
        "tool_response": {"filePath": ws.root.join("a.fake"), "success": true},
        "tool_use_id": "toolu_01"
    });
    let env = [
        ("CLAUDE_PLUGIN_ROOT", root.as_path()),
        ("CLAUDE_PROJECT_DIR", ws.root.as_path()),
    ];
    let block = json!({"decision": "block", "reason": ERRORS});

    // squiggle on PATH: the block comes out.
    let run = run_hook(&command, &home, &ws, &path_with_squiggle(), &env, &input);
    assert_answer(&run, &block);
    // The later hook has nothing to add (a.fake has no importers): it says nothing, exit 0.
    let later = later["command"].as_str().unwrap();
    let run = run_hook(later, &home, &ws, &path_with_squiggle(), &env, &input);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", ""),
        "{run:?}"
    );

    // No squiggle anywhere: one line on stderr, exit 0, nothing for Claude, the edit stands.
    let run = run_hook(&command, &home, &ws, &path_without_squiggle(), &env, &input);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, ""),
        "stderr: {}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("squiggle: not found"),
        "{}",
        run.stderr
    );

    // The binary put in the plugin's bin/ folder is found without PATH.
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::os::unix::fs::symlink(squiggle_bin(), root.join("bin/squiggle")).unwrap();
    let run = run_hook(&command, &home, &ws, &path_without_squiggle(), &env, &input);
    assert_answer(&run, &block);

    // The MCP server, as Claude Code listed it (it puts the plugin's root in for
    // `${CLAUDE_PLUGIN_ROOT}`), answers with the same diagnostics.
    let server = &entry["mcpServers"]["squiggle"];
    let mcp_command = server["command"]
        .as_str()
        .unwrap()
        .replace("${CLAUDE_PLUGIN_ROOT}", root.to_str().unwrap());
    let args: Vec<String> = serde_json::from_value(server["args"].clone()).unwrap();
    assert_eq!(args, ["mcp"]);
    let text = mcp_diagnostics(&mcp_command, &args, &home, &ws, &path_without_squiggle());
    assert_eq!(text, "a.fake:2:1: error[E1]: found ERROR: broken <thing>\n");
}

/// The files a clone of this repository holds (`gemini extensions install <repo url>` clones
/// it), copied from the working tree into `dest`: tracked files and new ones not ignored.
fn copy_as_cloned(dest: &Path) {
    let repo = repo_root();
    let output = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(output.status.success(), "git ls-files failed");
    for name in output
        .stdout
        .split(|&byte| byte == 0)
        .filter(|name| !name.is_empty())
    {
        let relative = Path::new(std::str::from_utf8(name).unwrap());
        let from = repo.join(relative);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let to = dest.join(relative);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
}

#[test]
fn gemini_cli_installs_the_extension_and_its_hook_adds_the_errors() {
    let gemini = agent_host("gemini-cli");
    let home = Home::new();
    let version = host_ok(&gemini, &home, &["--version"], &[]);
    assert_eq!(version.trim(), gemini.version);

    let source = tempfile::tempdir().unwrap();
    let source = std::fs::canonicalize(source.path()).unwrap();
    copy_as_cloned(&source);
    let validated = host_ok(
        &gemini,
        &home,
        &["extensions", "validate", source.to_str().unwrap()],
        &[],
    );
    assert!(validated.contains("successfully validated"), "{validated}");
    // Installing from a local path asks to trust the folder; the variable answers yes.
    let installed = host_ok(
        &gemini,
        &home,
        &[
            "extensions",
            "install",
            source.to_str().unwrap(),
            "--consent",
        ],
        &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
    );
    assert!(
        installed.contains("Extension \"squiggle\" installed successfully and enabled."),
        "{installed}"
    );
    let list = host_ok(&gemini, &home, &["extensions", "list"], &[]);
    assert!(
        list.contains("squiggle (0.1.0)") && list.contains("MCP servers:\n  squiggle"),
        "{list}"
    );

    // The installed copy, its hook and its MCP server, with `${extensionPath}` filled in as Gemini
    // CLI does.
    let root = home.path.join(".gemini/extensions/squiggle");
    let hydrate = |text: &str| text.replace("${extensionPath}", root.to_str().unwrap());
    let command = hydrate(&hook_command(
        &read_json(&root.join("hooks/hooks.json")),
        "AfterTool",
        &["write_file", "replace"],
    ));

    let ws = workspace();
    let input = json!({
        "session_id": "s1",
        "transcript_path": home.path.join(".gemini/tmp/p/chats/s1.json"),
        "cwd": ws.root,
        "hook_event_name": "AfterTool",
        "timestamp": "2026-11-23T13:00:00.000Z",
        "tool_name": "replace",
        "tool_input": {"file_path": ws.root.join("a.fake"), "old_string": "x", "new_string": "y"},
        "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": "", "error": null}
    });
    let env = [
        ("GEMINI_PROJECT_DIR", ws.root.as_path()),
        ("GEMINI_CWD", ws.root.as_path()),
    ];
    let context =
        json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": ERRORS}});
    let run = run_hook(&command, &home, &ws, &path_with_squiggle(), &env, &input);
    assert_answer(&run, &context);

    // No squiggle anywhere: one line on stderr, exit 0, nothing for Gemini.
    let run = run_hook(&command, &home, &ws, &path_without_squiggle(), &env, &input);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, ""),
        "stderr: {}",
        run.stderr
    );
    assert!(
        run.stderr.starts_with("squiggle: not found"),
        "{}",
        run.stderr
    );

    let server = &read_json(&root.join("gemini-extension.json"))["mcpServers"]["squiggle"];
    let mcp_command = hydrate(server["command"].as_str().unwrap());
    let args: Vec<String> = serde_json::from_value(server["args"].clone()).unwrap();
    assert_eq!(args, ["mcp"]);
    let text = mcp_diagnostics(&mcp_command, &args, &home, &ws, &path_with_squiggle());
    assert_eq!(text, "a.fake:2:1: error[E1]: found ERROR: broken <thing>\n");
}
