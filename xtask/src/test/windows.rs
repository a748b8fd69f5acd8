//! Windows in `cargo xtask test`: squiggle type-checked for both Windows targets, then built
//! for `x86_64-pc-windows-gnu` (MinGW-w64) with the fake server and run under Wine, through
//! the doors that need no real language server.
//!
//! No Windows target can be installed here: the standard library is built from the
//! toolchain's rust-src (`-Zbuild-std`), as for the macOS type-check. Wine runs the binaries
//! with Windows' own semantics for what squiggle relies on: paths with drive letters, `file:`
//! URIs, `.cmd` shims started through `cmd.exe`, Job Objects, `%APPDATA%`. What Wine cannot
//! show is said in docs/development.md.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

/// The Windows targets squiggle is type-checked for.
const TARGETS: [&str; 2] = ["x86_64-pc-windows-gnu", "x86_64-pc-windows-msvc"];
/// The target the Wine suite builds and runs.
const GNU: &str = "x86_64-pc-windows-gnu";
/// MinGW-w64's C compiler, which links the GNU target.
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
/// How long one case may take under Wine.
const CASE_LIMIT: Duration = Duration::from_secs(90);

/// Type-checks every crate squiggle ships for both Windows targets (the GNU target needs
/// MinGW-w64's `dlltool` even to type-check: see [`ensure_tools`]).
pub fn check(workspace: &Path, cargo: &str) -> anyhow::Result<()> {
    for target in TARGETS {
        eprintln!("xtask: type-checking squiggle for Windows ({target}, std built from rust-src)");
        let status = Command::new(cargo)
            .args(["check", "--quiet", "-Zbuild-std=std,panic_abort"])
            .args(["--target", target, "--package", "squiggle"])
            .args(["--package", "squiggle-fake-lsp", "--target-dir"])
            .arg(target_dir(workspace))
            .current_dir(workspace)
            .env("RUSTC_BOOTSTRAP", "1")
            .status()
            .context("cannot run cargo check")?;
        if !status.success() {
            bail!("squiggle does not type-check for Windows ({target}): {status}");
        }
    }
    Ok(())
}

/// Where the Windows builds go (later runs reuse them).
fn target_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("windows")
}

/// Builds squiggle and the fake server for Windows and runs the Wine cases; returns how many
/// passed (after [`ensure_tools`]).
pub fn wine_suite(workspace: &Path, cargo: &str) -> anyhow::Result<usize> {
    let bin = build(workspace, cargo)?;
    let wine = Wine::new(&target_dir(workspace).join("wineprefix"))?;
    let cases_dir = target_dir(workspace).join("cases");
    let _ = std::fs::remove_dir_all(&cases_dir);
    let mut passed = 0;
    for (name, case) in CASES {
        let dir = cases_dir.join(name);
        std::fs::create_dir_all(&dir)?;
        let result = case(&Case {
            wine: &wine,
            bin: &bin,
            root: &dir,
        })
        .and_then(|()| no_server_left(&format!("after {name}")));
        match result {
            Ok(()) => {
                eprintln!("xtask: wine: {name} ... ok");
                passed += 1;
            }
            Err(err) => {
                wine.stop();
                bail!("the Wine case {name} failed: {err:#}");
            }
        }
    }
    wine.stop();
    Ok(passed)
}

/// Installs MinGW-w64 and Wine from Debian's packages when either is missing (as root); where
/// they cannot be, this fails saying so.
pub fn ensure_tools() -> anyhow::Result<()> {
    if on_path(MINGW_GCC) && on_path("wine") {
        return Ok(());
    }
    eprintln!("xtask: installing MinGW-w64 and Wine (apt-get install mingw-w64 wine64)");
    let status = Command::new("apt-get")
        .args(["install", "--yes", "--quiet", "--no-install-recommends"])
        .args(["mingw-w64", "wine64", "wine"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null())
        .status()
        .context("cannot run apt-get (MinGW-w64 and Wine are needed for the Windows suite)")?;
    if !(status.success() && on_path(MINGW_GCC) && on_path("wine")) {
        bail!(
            "MinGW-w64 and Wine could not be installed ({status}); as root: apt-get install \
             mingw-w64 wine64"
        );
    }
    Ok(())
}

/// Whether `command` is a file in a `PATH` folder.
fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}

/// Builds `squiggle.exe` and `fake-lsp.exe`, with Wine 8's missing `bcryptprimitives.dll`
/// beside them; returns their folder.
fn build(workspace: &Path, cargo: &str) -> anyhow::Result<PathBuf> {
    eprintln!("xtask: building squiggle for Windows ({GNU}) to run it under Wine");
    let status = Command::new(cargo)
        .args(["build", "--quiet", "-Zbuild-std", "--target", GNU])
        .args(["--package", "squiggle", "--package", "squiggle-fake-lsp"])
        .arg("--target-dir")
        .arg(target_dir(workspace))
        .current_dir(workspace)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER", MINGW_GCC)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("squiggle does not build for Windows ({GNU}): {status}");
    }
    let bin = target_dir(workspace).join(GNU).join("debug");
    let shim = workspace.join("xtask/src/test/windows");
    let status = Command::new(MINGW_GCC)
        .args(["-shared", "-O2", "-o"])
        .arg(bin.join("bcryptprimitives.dll"))
        .arg(shim.join("bcryptprimitives.c"))
        .arg(shim.join("bcryptprimitives.def"))
        .arg("-lbcrypt")
        .status()
        .context("cannot run MinGW-w64's gcc")?;
    if !status.success() {
        bail!("cannot build the bcryptprimitives.dll stand-in: {status}");
    }
    Ok(bin)
}

/// Wine with its own prefix (a Windows user profile) inside the target folder.
struct Wine {
    prefix: PathBuf,
}

impl Wine {
    /// A prefix, made on first use.
    fn new(prefix: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(prefix)?;
        Ok(Self {
            prefix: prefix.to_path_buf(),
        })
    }

    /// `wine program args` in `cwd`, its stdin written and closed.
    fn command(&self, program: &Path, args: &[&str], cwd: &Path) -> Command {
        let mut command = Command::new("wine");
        command
            .arg(program)
            .args(args)
            .current_dir(cwd)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            // Non-ASCII arguments and output as UTF-8.
            .env("LANG", "C.UTF-8")
            // The Windows side has no daemon yet; the Linux environment's must not leak in.
            .env_remove("SQUIGGLE_LOG");
        command
    }

    /// Runs to the end within [`CASE_LIMIT`], with `stdin`.
    fn run(
        &self,
        program: &Path,
        args: &[&str],
        cwd: &Path,
        stdin: &[u8],
    ) -> anyhow::Result<Output> {
        let mut child = self
            .command(program, args, cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run wine")?;
        if let Some(mut input) = child.stdin.take() {
            input.write_all(stdin)?;
        }
        let deadline = Instant::now() + CASE_LIMIT;
        while child.try_wait()?.is_none() {
            if Instant::now() >= deadline {
                let _ = child.kill();
                bail!(
                    "{} {args:?} did not end within {CASE_LIMIT:?}",
                    program.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(child.wait_with_output()?)
    }

    /// Ends the prefix's wineserver and every Windows process in it.
    fn stop(&self) {
        let _ = Command::new("wineserver")
            .arg("-k")
            .env("WINEPREFIX", &self.prefix)
            .status();
    }
}

/// What a case has: Wine, the Windows binaries, and a fresh workspace folder.
struct Case<'a> {
    wine: &'a Wine,
    bin: &'a Path,
    root: &'a Path,
}

impl Case<'_> {
    /// A Linux path as Wine's Windows sees it (`Z:` is `/`).
    fn windows_path(path: &Path) -> String {
        format!("Z:{}", path.display()).replace('/', "\\")
    }

    /// Writes a file of the workspace.
    fn write(&self, relative: &str, text: &str) -> anyhow::Result<()> {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap_or(self.root))?;
        Ok(std::fs::write(path, text)?)
    }

    /// Writes `squiggle.toml` serving `.fake` files with `command` (a Windows path, or one
    /// relative to the workspace) run with `args`, and trusts it.
    fn configure(&self, command: &str, args: &[&str]) -> anyhow::Result<()> {
        self.write(
            "squiggle.toml",
            &format!(
                "settle_ms = 20\n[servers.fake]\ncommand = {command:?}\nargs = {args:?}\n\
                 extensions = [\"fake\"]\n"
            ),
        )?;
        let trust = self.squiggle(&["trust"], b"")?;
        if !trust.status.success() {
            bail!(
                "squiggle trust failed: {}",
                String::from_utf8_lossy(&trust.stderr)
            );
        }
        Ok(())
    }

    /// The fake server's Windows path.
    fn fake_server(&self) -> String {
        Self::windows_path(&self.bin.join("fake-lsp.exe"))
    }

    /// Runs `squiggle.exe args` in the workspace, with `--root` after the subcommand.
    fn squiggle(&self, args: &[&str], stdin: &[u8]) -> anyhow::Result<Output> {
        let root = Self::windows_path(self.root);
        let mut all: Vec<&str> = args.to_vec();
        if !matches!(args.first(), Some(&"hook")) {
            all.splice(1..1, ["--root", root.as_str()]);
        }
        self.wine
            .run(&self.bin.join("squiggle.exe"), &all, self.root, stdin)
    }
}

/// How a door's messages are delimited on stdin and stdout.
#[derive(Clone, Copy)]
enum Framing {
    /// `Content-Length` headers, as LSP (`squiggle serve`).
    Headers,
    /// One JSON message per line (MCP's stdio transport).
    Lines,
}

/// A `squiggle.exe` door talked to while it runs: messages in, messages out.
struct Session {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    framing: Framing,
    /// What it writes to stdout, message by message.
    messages: Receiver<Value>,
}

impl Session {
    /// Starts `squiggle.exe args --root <root>` in the case's workspace.
    fn start(case: &Case<'_>, args: &[&str], framing: Framing) -> anyhow::Result<Self> {
        let root = Case::windows_path(case.root);
        let mut all = args.to_vec();
        all.extend(["--root", root.as_str()]);
        let mut child = case
            .wine
            .command(&case.bin.join("squiggle.exe"), &all, case.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run wine")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (sender, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(body) = read_message(&mut reader, framing) {
                let Ok(message) = serde_json::from_slice(&body) else {
                    break;
                };
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            stdin: child.stdin.take(),
            child,
            framing,
            messages,
        })
    }

    /// Sends a request.
    fn request(&mut self, id: i64, method: &str, params: Value) -> anyhow::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    }

    /// Sends a message.
    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let body = message.to_string();
        let bytes = match self.framing {
            Framing::Headers => format!("Content-Length: {}\r\n\r\n{body}", body.len()),
            Framing::Lines => format!("{body}\n"),
        };
        let stdin = self.stdin.as_mut().context("stdin is closed")?;
        stdin.write_all(bytes.as_bytes())?;
        Ok(stdin.flush()?)
    }

    /// The answer to request `id`, past any other message, within [`CASE_LIMIT`].
    fn answer(&mut self, id: i64) -> anyhow::Result<Value> {
        let deadline = Instant::now() + CASE_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .with_context(|| format!("no answer to request {id} within {CASE_LIMIT:?}"))?;
            if message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }

    /// Closes stdin and waits for the exit, within [`CASE_LIMIT`].
    fn finish(mut self) -> anyhow::Result<ExitStatus> {
        drop(self.stdin.take());
        let deadline = Instant::now() + CASE_LIMIT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                bail!("squiggle.exe did not exit within {CASE_LIMIT:?} of its stdin closing");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The next message's body, or `None` at the end of the stream (or a broken frame).
fn read_message(reader: &mut impl BufRead, framing: Framing) -> Option<Vec<u8>> {
    let mut line = String::new();
    match framing {
        Framing::Lines => loop {
            line.clear();
            if reader.read_line(&mut line).ok()? == 0 {
                return None;
            }
            if !line.trim().is_empty() {
                return Some(line.into_bytes());
            }
        },
        Framing::Headers => {
            let mut length = None;
            loop {
                line.clear();
                if reader.read_line(&mut line).ok()? == 0 {
                    return None;
                }
                let header = line.trim_end();
                if header.is_empty() {
                    break;
                }
                if let Some(value) = header.strip_prefix("Content-Length:") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length?];
            reader.read_exact(&mut body).ok()?;
            Some(body)
        }
    }
}

/// A case: it fails with what it saw.
type CaseFn = fn(&Case<'_>) -> anyhow::Result<()>;

/// How many cases there are.
pub const CASE_COUNT: usize = CASES.len();

/// The cases, by name.
const CASES: [(&str, CaseFn); 8] = [
    (
        "check_reports_the_servers_error",
        check_reports_the_servers_error,
    ),
    (
        "a_path_with_spaces_and_non_ascii_letters",
        a_path_with_spaces_and_non_ascii_letters,
    ),
    (
        "a_server_started_through_a_cmd_shim",
        a_server_started_through_a_cmd_shim,
    ),
    (
        "a_crashing_server_leaves_the_file_not_checked",
        a_crashing_server_leaves_the_file_not_checked,
    ),
    (
        "the_claude_code_hook_shows_the_error",
        the_claude_code_hook_shows_the_error,
    ),
    (
        "serve_answers_for_every_spelling_of_the_path",
        serve_answers_for_every_spelling_of_the_path,
    ),
    ("an_mcp_client_gets_the_error", an_mcp_client_gets_the_error),
    (
        "a_killed_squiggle_leaves_no_server",
        a_killed_squiggle_leaves_no_server,
    ),
];

/// The line `squiggle check` prints for the default scenario's error in `file`.
fn error_line(file: &str) -> String {
    format!("{file}:2:3: error[E1]: found ERROR: broken <thing>\n")
}

/// The default scenario's file text: one error, one warning.
const BROKEN: &str = "x\n  ERROR broken <thing>\nWARNING meh\n";

/// Fails unless `output` exited `code` with `stdout`.
fn expect(output: &Output, code: i32, stdout: &str) -> anyhow::Result<()> {
    let seen = String::from_utf8_lossy(&output.stdout);
    if output.status.code() != Some(code) || seen != stdout {
        bail!(
            "expected exit {code} and {stdout:?}, saw {:?} and {seen:?}; stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

fn check_reports_the_servers_error(case: &Case<'_>) -> anyhow::Result<()> {
    case.configure(&case.fake_server(), &["--scenario", "default"])?;
    case.write("src/a.fake", BROKEN)?;
    let output = case.squiggle(&["check", "src/a.fake"], b"")?;
    expect(&output, 1, &error_line("src/a.fake"))
}

fn a_path_with_spaces_and_non_ascii_letters(case: &Case<'_>) -> anyhow::Result<()> {
    case.configure(&case.fake_server(), &["--scenario", "default"])?;
    let file = "src/dossier é/año b.fake";
    case.write(file, BROKEN)?;
    let output = case.squiggle(&["check", file], b"")?;
    expect(&output, 1, &error_line(file))
}

fn a_server_started_through_a_cmd_shim(case: &Case<'_>) -> anyhow::Result<()> {
    // As npm installs a server: `bin\fake.cmd` beside an extension-less launcher that Windows
    // cannot run; the configuration names neither extension.
    case.write("bin/fake", "#!/bin/sh\necho not for Windows\n")?;
    case.write(
        "bin/fake.cmd",
        &format!("@echo off\r\n\"{}\" %*\r\n", case.fake_server()),
    )?;
    case.configure("bin/fake", &["--scenario", "default"])?;
    case.write("a & b.fake", BROKEN)?;
    let output = case.squiggle(&["check", "a & b.fake"], b"")?;
    expect(&output, 1, &error_line("a & b.fake"))
}

fn a_crashing_server_leaves_the_file_not_checked(case: &Case<'_>) -> anyhow::Result<()> {
    case.configure(&case.fake_server(), &["--scenario", "crash-on-init"])?;
    case.write("a.fake", BROKEN)?;
    let output = case.squiggle(&["check", "a.fake"], b"")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.code() != Some(3) || !stdout.starts_with("a.fake: not checked: ") {
        bail!(
            "expected exit 3 and a not-checked line, saw {:?} and {stdout:?}",
            output.status.code()
        );
    }
    Ok(())
}

fn the_claude_code_hook_shows_the_error(case: &Case<'_>) -> anyhow::Result<()> {
    case.configure(&case.fake_server(), &["--scenario", "default"])?;
    case.write("src/a.fake", BROKEN)?;
    let root = Case::windows_path(case.root);
    let input = json!({
        "session_id": "s1",
        "cwd": root,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": format!("{root}\\src\\a.fake"), "content": BROKEN},
        "tool_response": {"filePath": format!("{root}\\src\\a.fake"), "success": true},
    });
    let output = case.squiggle(&["hook", "claude-code"], input.to_string().as_bytes())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.code() != Some(0) || !stdout.contains("found ERROR: broken <thing>") {
        bail!(
            "expected exit 0 and the error in the hook's answer, saw {:?} and {stdout:?}; \
             stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

fn serve_answers_for_every_spelling_of_the_path(case: &Case<'_>) -> anyhow::Result<()> {
    case.configure(&case.fake_server(), &["--scenario", "default"])?;
    case.write("src/a.fake", BROKEN)?;
    let mut serve = Session::start(case, &["serve"], Framing::Headers)?;
    // Relative, then absolute with a lower-case drive letter and forward slashes: one
    // document, named the same.
    let absolute = Case::windows_path(&case.root.join("src/a.fake"))
        .replacen("Z:", "z:", 1)
        .replace('\\', "/");
    for (id, path) in [(1, "src/a.fake".to_string()), (2, absolute)] {
        serve.request(id, "lsp/checkFile", json!({"filePath": path}))?;
        let answer = serve.answer(id)?;
        let first = &answer["result"][0];
        if first["file"] != "src/a.fake" || first["line"] != 2 || first["severity"] != "error" {
            bail!("lsp/checkFile of {path:?} answered {answer}");
        }
    }
    serve.request(3, "lsp/shutdown", json!({}))?;
    let answer = serve.answer(3)?;
    if answer["result"] != Value::Null {
        bail!("lsp/shutdown answered {answer}");
    }
    let status = serve.finish()?;
    if !status.success() {
        bail!("squiggle serve exited {status} after lsp/shutdown");
    }
    Ok(())
}

fn an_mcp_client_gets_the_error(case: &Case<'_>) -> anyhow::Result<()> {
    case.configure(&case.fake_server(), &["--scenario", "default"])?;
    case.write("src/a.fake", BROKEN)?;
    let mut mcp = Session::start(case, &["mcp"], Framing::Lines)?;
    let client = json!({"name": "wine-suite", "version": "0"});
    let params = json!({"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": client});
    mcp.request(1, "initialize", params)?;
    let init = mcp.answer(1)?;
    if !init["result"]["serverInfo"].is_object() {
        bail!("initialize answered {init}");
    }
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    let call = json!({"name": "lsp_diagnostics", "arguments": {"file": "src/a.fake"}});
    mcp.request(2, "tools/call", call)?;
    let answer = mcp.answer(2)?;
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    if !text.contains(&error_line("src/a.fake")) {
        bail!("lsp_diagnostics answered {answer}");
    }
    let status = mcp.finish()?;
    if !status.success() {
        bail!("squiggle mcp exited {status} when its stdin closed");
    }
    Ok(())
}

fn a_killed_squiggle_leaves_no_server(case: &Case<'_>) -> anyhow::Result<()> {
    // A server that never answers `initialize`, so squiggle waits on it until it is killed,
    // and that started a child of its own which reads nothing: only the Job Object ends that
    // one (the server itself could also end on its closed stdin).
    case.write(
        "server.json",
        r#"{"hang_on_initialize": true, "spawn_grandchild": true}"#,
    )?;
    let script = Case::windows_path(&case.root.join("server.json"));
    case.configure(&case.fake_server(), &["--script", &script])?;
    case.write("a.fake", BROKEN)?;
    let root = Case::windows_path(case.root);
    let mut child = case
        .wine
        .command(
            &case.bin.join("squiggle.exe"),
            &["check", "--root", &root, "a.fake"],
            case.root,
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot run wine")?;
    // The server and its child.
    let started = wait_for(Duration::from_secs(30), || {
        processes("fake-lsp.exe").len() == 2
    });
    let squiggle = processes("squiggle.exe");
    for pid in &squiggle {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
    if !started {
        bail!(
            "the server and its child never both ran: {:?}",
            processes("fake-lsp.exe")
        );
    }
    if squiggle.is_empty() {
        bail!("no squiggle.exe process to kill");
    }
    no_server_left("after squiggle.exe was killed")
}

/// Fails when a fake server still runs [`CASE_LIMIT`]-bounded moments after a case.
fn no_server_left(when: &str) -> anyhow::Result<()> {
    if !wait_for(Duration::from_secs(10), || {
        processes("fake-lsp.exe").is_empty()
    }) {
        bail!(
            "a fake server still runs {when}: {:?}",
            processes("fake-lsp.exe")
        );
    }
    Ok(())
}

/// Polls `done` every 50 ms until it holds or `limit` passes; whether it held.
fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The Linux pids of the Wine processes running `exe` (Wine shows a Windows process's
/// command line in `/proc`).
fn processes(exe: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            String::from_utf8_lossy(first).ends_with(exe)
        })
        .collect()
}
