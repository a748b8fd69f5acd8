//! Shared helpers for squiggle's integration tests: the binaries under test, building
//! fake-server workspaces, reading what the fake server saw, and checking that no process was
//! left behind.
//!
//! # The binaries under test
//!
//! The tests run two binaries that Cargo builds for them: `squiggle-under-test` (squiggle's
//! `main`, from the `squiggle` library) and `fake-lsp-under-test` (the fake server's `main`,
//! from `squiggle-fake-lsp`), the `[[bin]]` targets of this package (tests/Cargo.toml). Cargo
//! builds a package's binaries before it builds and runs its integration tests, and gives the
//! tests their paths at compile time (`CARGO_BIN_EXE_<name>`), so plain `cargo test` always runs
//! the current code, in whatever target folder (`CARGO_TARGET_DIR`) and profile it builds; no
//! environment variable or earlier `cargo build` is needed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use squiggle_config::{Config, ServerSpec};

mod mcp_client;
pub mod real_server;
pub mod report;

pub use mcp_client::Mcp;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The squiggle binary under test (see the module docs).
pub fn squiggle_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_squiggle-under-test"))
}

/// The fake language server binary (see the module docs); it takes the fake server's
/// arguments (`--scenario NAME`, `--script FILE`) and nothing else.
pub fn fake_lsp_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fake-lsp-under-test"))
}

/// A folder that holds only `squiggle`, a link to [`squiggle_bin`]: for PATH, where hooks and
/// agent hosts find the command by its name. Made once per test run, under Cargo's folder for
/// integration tests' files (`CARGO_TARGET_TMPDIR`).
pub fn squiggle_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("squiggle-on-path");
        std::fs::create_dir_all(&dir).unwrap();
        // Linked under a name of this process's own, then renamed over `squiggle`: another test
        // run that makes the same link at the same time does not fail this one.
        let link = dir.join(format!("squiggle.{}", std::process::id()));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(squiggle_bin(), &link).unwrap();
        std::fs::rename(&link, dir.join("squiggle")).unwrap();
        dir
    })
    .clone()
}

/// The folders where `cargo xtask install-servers` puts real language servers (and where
/// `cargo xtask test` keeps the rust-analyzer it builds).
pub fn installed_server_dirs() -> Vec<PathBuf> {
    let dir = repo_root().join("target").join("lsp-servers");
    let mut dirs = vec![
        dir.join("node_modules").join(".bin"),
        dir.join("venv").join("bin"),
    ];
    dirs.extend(rust_analyzer_dir());
    dirs
}

/// The rust-analyzer version `cargo xtask test` builds (the same as xtask's).
const RUST_ANALYZER_VERSION: &str = "0.0.349";

/// Where `cargo xtask test` keeps the rust-analyzer it builds, outside `target/` so that a
/// clean checkout reuses it: `$XDG_CACHE_HOME/squiggle/rust-analyzer-<version>` (the same
/// folder as xtask's `rust_analyzer::dir`).
pub fn rust_analyzer_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(
        cache
            .join("squiggle")
            .join(format!("rust-analyzer-{RUST_ANALYZER_VERSION}")),
    )
}

/// The `node_modules` of the TypeScript 7 that `cargo xtask install-servers` installs apart (a
/// TypeScript 7 project links its own `node_modules` to it), or a panic saying how to get it.
pub fn typescript_7_modules() -> PathBuf {
    let modules = repo_root()
        .join("target/lsp-servers/typescript-7")
        .join("node_modules");
    assert!(
        modules.join(".bin").join("tsc").is_file(),
        "TypeScript 7 is not installed: run `cargo xtask install-servers`"
    );
    modules
}

/// PATH with the installed language servers in front.
pub fn path_with_servers() -> std::ffi::OsString {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let dirs = installed_server_dirs()
        .into_iter()
        .chain(std::env::split_paths(&current));
    std::env::join_paths(dirs).unwrap()
}

/// Where `command` is: in the first of `dirs` that holds it, else on PATH.
pub fn find_command(dirs: Vec<PathBuf>, command: &str) -> Option<PathBuf> {
    let current = std::env::var_os("PATH").unwrap_or_default();
    dirs.into_iter()
        .chain(std::env::split_paths(&current))
        .map(|dir| dir.join(command))
        .find(|path| path.is_file())
}

/// A real language server's executable, or a panic with its install hint.
pub fn require_server(command: &str, hint: &str) -> PathBuf {
    find_command(installed_server_dirs(), command).unwrap_or_else(|| {
        panic!("`{command}` is not installed: run `cargo xtask install-servers` ({hint})")
    })
}

/// The project configuration files squiggle reads, which run their servers once trusted.
const PROJECT_FILES: [&str; 3] = ["squiggle.toml", ".squiggle/config.toml", "opencode.json"];

/// Trusts the project configuration file `file` as it is now, for the user whose configuration
/// folder the test helpers give a run in `root` (`XDG_CONFIG_HOME=<root>/.no-user-config`), as
/// `squiggle trust` would.
pub fn trust_as_written(root: &Path, file: &Path) {
    let user_file = root.join(".no-user-config/squiggle/config.toml");
    let record = squiggle_config::TrustRecord::beside(&user_file).unwrap();
    record.trust(file, &std::fs::read(file).unwrap()).unwrap();
}

/// A temporary workspace whose `.fake` files are served by the fake language server.
#[derive(Debug)]
pub struct FakeWorkspace {
    dir: tempfile::TempDir,
    /// The resolved workspace root.
    pub root: PathBuf,
    /// Where the fake server logs every message (JSON lines).
    pub log: PathBuf,
    /// Where the fake server writes its pid files.
    pub pids: PathBuf,
}

impl FakeWorkspace {
    /// A new empty workspace.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        let log = dir.path().join("fake.log");
        let pids = dir.path().join("pids");
        std::fs::create_dir_all(&pids).unwrap();
        Self {
            dir,
            root,
            log,
            pids,
        }
    }

    /// Writes a file under the root (creating folders) and returns its path. A project
    /// configuration file is trusted as written (see [`trust_as_written`]): the tests that
    /// write one mean its servers to run.
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        if PROJECT_FILES.contains(&relative) {
            trust_as_written(&self.root, &path);
        }
        path
    }

    /// Writes a file under the root like [`FakeWorkspace::write`], trusting nothing.
    pub fn write_untrusted(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes a fake-server script (JSON) beside the workspace and returns its path.
    pub fn script(&self, script: &Value) -> PathBuf {
        let path = self.dir.path().join(format!("script-{}.json", unique()));
        std::fs::write(&path, script.to_string()).unwrap();
        path
    }

    /// The spec of a fake server named `id` that follows `script` (see the fake server's
    /// `Script`).
    pub fn scripted(&self, id: &str, script: &Value) -> ServerSpec {
        let path = self.script(script);
        self.server(id, &["--script", path.to_str().unwrap()])
    }

    /// The spec of a fake server named `id` that runs `args` (e.g. `--scenario crash-on-init`).
    pub fn server(&self, id: &str, args: &[&str]) -> ServerSpec {
        let mut env = BTreeMap::new();
        env.insert("FAKE_LSP_LOG".to_string(), self.log.display().to_string());
        env.insert(
            "FAKE_LSP_PID_DIR".to_string(),
            self.pids.display().to_string(),
        );
        ServerSpec {
            id: id.to_string(),
            command: fake_lsp_bin().display().to_string(),
            args: args.iter().copied().map(String::from).collect(),
            extensions: vec!["fake".to_string()],
            language_id: "fake".to_string(),
            root_markers: vec!["fake.toml".to_string()],
            env,
            install_hint: "cargo build -p squiggle-tests".to_string(),
            ..ServerSpec::default()
        }
    }

    /// `squiggle.toml` text: `settle_ms = 20` and a `[servers.fake]` serving `.fake` files with
    /// the fake server run with `args`, logging and writing its pid where this workspace reads
    /// them. A test appends its own sections.
    pub fn fake_toml(&self, args: &[&str]) -> String {
        format!(
            "settle_ms = 20\n[servers.fake]\ncommand = {:?}\nargs = {args:?}\nextensions = [\"fake\"]\nenv = {{ FAKE_LSP_PID_DIR = {:?}, FAKE_LSP_LOG = {:?} }}\n",
            fake_lsp_bin().display().to_string(),
            self.pids.display().to_string(),
            self.log.display().to_string(),
        )
    }

    /// Writes `squiggle.toml` with one fake server that follows `script` (see
    /// [`FakeWorkspace::fake_toml`]).
    pub fn write_scripted_toml(&self, script: &Value) {
        let script = self.script(script);
        let toml = self.fake_toml(&["--script", script.to_str().unwrap()]);
        self.write("squiggle.toml", &toml);
    }

    /// A configuration with only the given fake servers and short timeouts.
    pub fn config(&self, servers: Vec<ServerSpec>) -> Config {
        Config {
            servers: servers.into_iter().map(|s| (s.id.clone(), s)).collect(),
            diagnostic_timeout_ms: 5_000,
            first_touch_timeout_ms: 10_000,
            settle_ms: 50,
            ..Config::default()
        }
    }

    /// Starts a runtime on this workspace with one fake server, `fake`, playing the built-in
    /// `scenario` (see [`FakeWorkspace::start`]).
    pub async fn start_scenario(&self, scenario: &str) -> squiggle_actors::Squiggle {
        self.start(vec![self.server("fake", &["--scenario", scenario])])
            .await
    }

    /// Starts a runtime on this workspace with these servers (see [`FakeWorkspace::config`]).
    pub async fn start(&self, servers: Vec<ServerSpec>) -> squiggle_actors::Squiggle {
        squiggle_actors::Squiggle::start(&self.root, self.config(servers))
            .await
            .unwrap()
    }

    /// Every message the fake servers logged so far.
    pub fn messages(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// The messages with this method that the client sent to the servers.
    pub fn received(&self, method: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| m["dir"] == "in" && m["method"] == method)
            .collect()
    }

    /// The pids of the server processes started so far.
    pub fn server_pids(&self) -> Vec<u32> {
        self.pid_files("pid")
    }

    /// The pids of the grandchildren the servers spawned.
    pub fn grandchild_pids(&self) -> Vec<u32> {
        self.pid_files("grandchild")
    }

    fn pid_files(&self, extension: &str) -> Vec<u32> {
        let mut pids: Vec<u32> = std::fs::read_dir(&self.pids)
            .unwrap()
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                (path.extension()? == extension)
                    .then(|| path.file_stem()?.to_str()?.parse().ok())?
            })
            .collect();
        pids.sort_unstable();
        pids
    }
}

impl Default for FakeWorkspace {
    fn default() -> Self {
        Self::new()
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether a process is running (a zombie counts as gone).
pub fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        }
        Err(_) => false,
    }
}

/// Waits until `condition` holds, polling, for at most `limit`; returns whether it held.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (asynchronously, so the runtime goes on) until `condition` holds, for at most
/// `limit`; returns whether it held.
pub async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts that every pid is gone within a few seconds.
pub fn assert_all_gone(pids: &[u32], what: &str) {
    assert!(!pids.is_empty(), "expected some {what} pids to check");
    let gone = wait_until(Duration::from_secs(5), || {
        pids.iter().all(|pid| !is_alive(*pid))
    });
    let alive: Vec<u32> = pids.iter().copied().filter(|pid| is_alive(*pid)).collect();
    assert!(gone, "{what} still running: {alive:?}");
}

/// Copies a fixture project from `tests/fixtures/<name>` into a new temporary folder; returns
/// the folder (kept alive by the returned guard) and the copy's resolved path.
pub fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let target = std::fs::canonicalize(dir.path()).unwrap().join(name);
    copy_dir(
        &repo_root().join("tests").join("fixtures").join(name),
        &target,
    );
    (dir, target)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The pids of running processes whose working folder is `dir` or inside it.
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
                && is_alive(*pid)
        })
        .collect()
}

/// Asserts that no process runs inside `dir` within a few seconds, naming any that do.
pub fn assert_no_process_in(dir: &Path) {
    let gone = wait_until(Duration::from_secs(5), || processes_in(dir).is_empty());
    let left: Vec<String> = processes_in(dir)
        .into_iter()
        .map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            )
        })
        .collect();
    assert!(
        gone,
        "processes left running in {}: {left:#?}",
        dir.display()
    );
}

/// The output of one `squiggle` run.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the squiggle binary in `cwd` with `args`, real servers on PATH, one-shot (no daemon:
/// see [`NO_DAEMON`]).
pub fn squiggle(cwd: &Path, args: &[&str]) -> Run {
    let output = std::process::Command::new(squiggle_bin())
        .args(args)
        .current_dir(cwd)
        .env("PATH", path_with_servers())
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .env(NO_DAEMON.0, NO_DAEMON.1)
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `squiggle check` in tests runs one-shot, in its own process, as it did before the daemon:
/// the suites assert on the servers a check starts and leaves behind. The daemon's own tests
/// (tests/tests/it/daemon.rs) turn it back on with `SQUIGGLE_NO_DAEMON=0`.
pub const NO_DAEMON: (&str, &str) = ("SQUIGGLE_NO_DAEMON", "1");

/// Runs the squiggle binary in `cwd` with `args`, real servers on PATH, one-shot (see
/// [`NO_DAEMON`]), and `env` on top; if it has not finished within `limit`, kills it and
/// panics, so a hang fails the test.
pub fn squiggle_within(cwd: &Path, args: &[&str], env: &[(&str, &OsStr)], limit: Duration) -> Run {
    let mut child = std::process::Command::new(squiggle_bin())
        .args(args)
        .current_dir(cwd)
        .env("PATH", path_with_servers())
        .env("XDG_CONFIG_HOME", cwd.join(".no-user-config"))
        .env(NO_DAEMON.0, NO_DAEMON.1)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    finish_within(&mut child, &[], limit, &format!("squiggle {args:?}"))
}

/// Writes `stdin` to a child (when its stdin is piped) and closes it, and collects its output
/// and exit code; if it has not finished within `limit`, kills it and panics naming `what`.
pub fn finish_within(
    child: &mut std::process::Child,
    stdin: &[u8],
    limit: Duration,
    what: &str,
) -> Run {
    use std::io::{Read, Write};
    let writer = child.stdin.take().map(|mut input| {
        let bytes = stdin.to_vec();
        std::thread::spawn(move || {
            let _ = input.write_all(&bytes);
        })
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(writer) = writer {
        writer.join().unwrap();
    }
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Makes a FIFO (named pipe) at `path`.
pub fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a valid NUL-terminated path that outlives the call.
    let status = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
    assert_eq!(status, 0, "mkfifo {}", path.display());
}

/// Writes an executable `dir/name` that behaves like a broken shim (rustup's proxy without the
/// component): it appends its arguments as one line to `dir/name.calls`, prints `message` to
/// stderr and exits 1. Returns its path.
pub fn broken_shim(dir: &Path, name: &str, message: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    let calls = dir.join(format!("{name}.calls"));
    let said = dir.join(format!("{name}.message"));
    std::fs::write(&said, format!("{message}\n")).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\ncat '{}' >&2\nexit 1\n",
        calls.display(),
        said.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The argument lines a [`broken_shim`] was called with, one per run.
pub fn shim_calls(shim: &Path) -> Vec<String> {
    let calls = shim.with_file_name(format!(
        "{}.calls",
        shim.file_name().unwrap().to_string_lossy()
    ));
    std::fs::read_to_string(calls)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// Kills a process when dropped during a panic: a test that fails because the process hung
/// does not leave it running.
#[derive(Debug)]
pub struct KillIfPanicking(pub u32);

impl Drop for KillIfPanicking {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(self.0 as i32, libc::SIGKILL);
            }
        }
    }
}

/// A running `squiggle serve`, driven over its stdio with LSP framing.
#[derive(Debug)]
pub struct Serve {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    /// The bodies of the frames the service writes, as bytes.
    frames: std::sync::mpsc::Receiver<Vec<u8>>,
    /// Frames read while looking for another answer.
    unclaimed: Vec<Value>,
    /// What the service wrote to stderr, when it is kept.
    stderr: Option<std::sync::Arc<std::sync::Mutex<Vec<u8>>>>,
}

impl Serve {
    /// Starts `squiggle serve --root <root>` with extra environment variables.
    pub fn start(root: &Path, env: &[(&str, &str)]) -> Self {
        Self::spawn(root, env, false, |_| {})
    }

    /// Like [`Serve::start`], keeping what the service logs (see [`Serve::stderr`]).
    pub fn start_keeping_logs(root: &Path, env: &[(&str, &str)]) -> Self {
        Self::spawn(root, env, true, |_| {})
    }

    /// Starts the service as the integration contract's host does: with pipes on its file
    /// descriptors 3 (which it reads) and 4 (which it writes) for MCP; returns it with an MCP
    /// client on those pipes, past the handshake within `limit`.
    pub fn start_with_mcp_fds(root: &Path, limit: Duration) -> (Self, Mcp) {
        use std::os::fd::{AsRawFd, FromRawFd};
        use std::os::unix::process::CommandExt;
        let pipe = || {
            let mut fds = [0; 2];
            // SAFETY: pipe2 fills both with new descriptors, owned from here on.
            assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
            unsafe {
                (
                    std::fs::File::from_raw_fd(fds[0]),
                    std::fs::File::from_raw_fd(fds[1]),
                )
            }
        };
        let (server_reads, client_writes) = pipe();
        let (client_reads, server_writes) = pipe();
        let (read, write) = (server_reads.as_raw_fd(), server_writes.as_raw_fd());
        let serve = Self::spawn(root, &[], false, |command| {
            // SAFETY: only async-signal-safe calls between fork and exec. Both ends go above
            // 4 first so that neither dup2 overwrites the other.
            unsafe {
                command.pre_exec(move || {
                    let high_read = libc::fcntl(read, libc::F_DUPFD_CLOEXEC, 10);
                    let high_write = libc::fcntl(write, libc::F_DUPFD_CLOEXEC, 10);
                    if high_read < 0
                        || high_write < 0
                        || libc::dup2(high_read, 3) < 0
                        || libc::dup2(high_write, 4) < 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        });
        // The service's ends are its own now.
        drop((server_reads, server_writes));
        let mcp = Mcp::over(client_writes, client_reads, limit);
        (serve, mcp)
    }

    fn spawn(
        root: &Path,
        env: &[(&str, &str)],
        keep_logs: bool,
        configure: impl FnOnce(&mut std::process::Command),
    ) -> Self {
        use std::io::{BufRead, Read};
        let stderr = match keep_logs {
            true => std::process::Stdio::piped(),
            false => std::process::Stdio::inherit(),
        };
        let mut command = std::process::Command::new(squiggle_bin());
        command
            .args(["serve", "--root"])
            .arg(root)
            .env("PATH", path_with_servers())
            .env("XDG_CONFIG_HOME", root.join(".no-user-config"))
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(stderr);
        configure(&mut command);
        let mut child = command.spawn().unwrap();
        let logs = child.stderr.take().map(|mut pipe| {
            let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let kept = logs.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 1 << 16];
                while let Ok(n @ 1..) = pipe.read(&mut buf) {
                    kept.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            });
            logs
        });
        let stdin = child.stdin.take().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, frames) = std::sync::mpsc::channel();
        std::thread::spawn(move || loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if line == "\r\n" {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length.unwrap()];
            stdout.read_exact(&mut body).unwrap();
            if tx.send(body).is_err() {
                return;
            }
        });
        Self {
            child,
            stdin,
            frames,
            unclaimed: Vec::new(),
            stderr: logs,
        }
    }

    /// What the service logged so far (for a service started with
    /// [`Serve::start_keeping_logs`]).
    pub fn stderr(&self) -> String {
        let logs = self.stderr.as_ref().expect("started keeping logs");
        String::from_utf8_lossy(&logs.lock().unwrap()).into_owned()
    }

    /// Writes bytes to the service's stdin as they are, framed or not.
    pub fn write(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The process id of the service.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a raw body in a frame.
    pub fn send_raw(&mut self, body: &[u8]) {
        self.write(&squiggle_protocol::encode_frame(body));
    }

    /// Sends a JSON-RPC message.
    pub fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    /// Sends a request.
    pub fn request(&mut self, id: i64, method: &str, params: Value) {
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
    }

    /// The next frame the service writes, within `limit`.
    pub fn next(&self, limit: Duration) -> Value {
        serde_json::from_slice(&self.next_raw(limit)).unwrap()
    }

    /// The body of the next frame the service writes, as bytes, within `limit`.
    pub fn next_raw(&self, limit: Duration) -> Vec<u8> {
        self.frames
            .recv_timeout(limit)
            .expect("the service answered in time")
    }

    /// The frames read while looking for answers, and not claimed since.
    pub fn unclaimed(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.unclaimed)
    }

    /// The answer to request `id`, within `limit`; other frames read meanwhile are kept.
    pub fn answer(&mut self, id: impl Into<Value>, limit: Duration) -> Value {
        let id = id.into();
        if let Some(at) = self.unclaimed.iter().position(|frame| frame["id"] == id) {
            return self.unclaimed.remove(at);
        }
        let deadline = Instant::now() + limit;
        loop {
            let frame = self.next(deadline.saturating_duration_since(Instant::now()));
            if frame["id"] == id {
                return frame;
            }
            self.unclaimed.push(frame);
        }
    }

    /// Closes the service's stdin.
    pub fn close_stdin(self) -> std::process::Child {
        drop(self.stdin);
        self.child
    }

    /// Sends a signal to the service.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
    }

    /// Waits for the service to exit, within `limit`; returns its exit code (None: by signal).
    pub fn wait(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "the service did not exit in time"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Real language servers are heavy: on a small machine, several starting at once slow each other
/// past squiggle's deadlines (which squiggle then reports, rightly, as timed out). The tests that
/// start them take turns by holding this.
static REAL_SERVERS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Waits for the other real-server tests of this binary to finish (for a plain `#[test]`).
pub fn real_servers_turn() -> tokio::sync::MutexGuard<'static, ()> {
    REAL_SERVERS.blocking_lock()
}

/// [`real_servers_turn`] for an async test.
pub async fn real_servers_turn_async() -> tokio::sync::MutexGuard<'static, ()> {
    REAL_SERVERS.lock().await
}

/// A small seeded xorshift64* generator for the tests that try many random inputs: the same
/// seed gives the same inputs on every machine.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
